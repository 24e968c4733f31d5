"""The command line: --help for the tool and every verb, one exit-code table, usage errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import CliResult
from vllm_guard.cli import VERBS, main
from vllm_guard.exitcodes import ExitCode

pytestmark = pytest.mark.unit


def test_top_level_help_lists_every_verb_and_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for verb in VERBS:
        assert verb in out
    for code in ExitCode:
        assert f"{code.value:>3}  {code.name.lower()}" in out


def test_a_package_does_not_offer_the_demo_and_says_why_when_asked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Installed from a package there is no emulator: `demo` is not listed, and run anyway it says what to do."""
    import vllm_guard.app.demo
    import vllm_guard.cli

    monkeypatch.setattr(vllm_guard.cli, "source_checkout", lambda: None)
    monkeypatch.setattr(vllm_guard.app.demo, "source_checkout", lambda: None)
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("    ")]
    assert "demo" not in listed and "status" in listed
    assert main(["demo"]) == ExitCode.UNAVAILABLE
    err = capsys.readouterr().err
    assert "installed from a package" in err and "clone the repository" in err


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verb_has_help(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([verb, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: vllm-guard {verb}")
    assert len(out.splitlines()) > 3


def test_no_verb_prints_help_and_exits_64(cli: Callable[..., CliResult]) -> None:
    assert cli().code == ExitCode.USAGE


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["render", "--no-such-option"])
    assert exc.value.code == ExitCode.USAGE
    assert "unrecognized arguments" in capsys.readouterr().err


def test_read_only_verbs_have_json(capsys: pytest.CaptureFixture[str]) -> None:
    for verb in ("render", "classify", "status", "history", "doctor", "plan", "probe", "swap"):
        with pytest.raises(SystemExit):
            main([verb, "--help"])
        assert "--json" in capsys.readouterr().out, verb
