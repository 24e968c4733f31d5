"""`vllm-guard run --check`: the set-up mistakes of a first start, found before it (fake root, real users)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, write_config

pytestmark = pytest.mark.unit


def _python(root: Path) -> str:
    python = root / "opt/vllm/bin/python3"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    return "/opt/vllm/bin/python3"


def _config(
    root: Path, extra: str = "", *, command: str | None = None, user: str = "root", group: str = "root"
) -> Path:
    cmd = command or _python(root)
    return write_config(
        root,
        f'[[target]]\nmodel = "/models/tiny"\nuser = "{user}"\ngroup = "{group}"\n'
        f'command = ["{cmd}", "-m", "vllm.entrypoints.openai.api_server"]\n{extra}',
    )


def test_a_sound_set_up_passes(fake_root: Path, cli: Callable[..., CliResult]) -> None:
    _config(fake_root)
    res = cli("run", "--check", "--root", fake_root)
    assert res.code == 0, res.err
    assert "set-up ok" in res.out


@pytest.mark.parametrize(
    ("setup", "ref", "says"),
    [
        (lambda r: _config(r, command="/opt/nowhere/bin/python3"), "command-missing", "`command =`"),
        (lambda r: _config(r, user="no-such-user-here"), "user-missing", "useradd"),
        (lambda r: _config(r, group="no-such-group-here"), "group-missing", "groupadd"),
        (
            lambda r: _config(r, "[target.probe]\nexec_start_post = true\n", user="nobody").chmod(0o600),
            "unreadable-by-unit-user",
            "chmod o+r",
        ),
        (lambda r: (r / "models/tiny").chmod(0o700) or _config(r, user="nobody"), "unreadable-by-unit-user", "o+rx"),
        (lambda r: _config(r, "[guard]\nmetrics = true\n"), "metrics-folder-missing", "prometheus-node-exporter"),
    ],
    ids=["command", "user", "group", "config-unreadable", "model-unreadable", "metrics-folder"],
)
def test_each_set_up_mistake_is_named_with_what_to_do(
    setup: Callable[[Path], object], ref: str, says: str, fake_root: Path, cli: Callable[..., CliResult]
) -> None:
    if ref == "unreadable-by-unit-user":
        pytest.importorskip("pwd").getpwnam("nobody")
    setup(fake_root)
    res = cli("run", "--check", "--root", fake_root)
    assert res.code == 1, (res.out, res.err)
    assert f"error[{ref}]" in res.err and says in res.err
    assert "Traceback" not in res.err
    # --config-only (what `systemctl reload` runs) looks at the files alone
    assert cli("run", "--check", "--config-only", "--root", fake_root).code == 0
