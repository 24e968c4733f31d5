"""vllm-guard(8) and the bash completion are kept in step with the command line and the config models.

The verbs and options come from ``vllm_guard.cli.build_parser()``, the config keys from the pydantic
models, the exit codes from ``ExitCode``: adding any of them without documenting it fails here.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unit.test_packaging import config_keys
from vllm_guard.cli import VERBS, build_parser
from vllm_guard.exitcodes import ExitCode

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
MAN = REPO / "packaging/man/vllm-guard.8"
COMPLETION = REPO / "packaging/bash-completion/vllm-guard"


def verb_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def options_of(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions if not isinstance(a, argparse._HelpAction) for s in a.option_strings}


def positionals_of(p: argparse.ArgumentParser) -> list[str]:
    return [(a.metavar or a.dest).upper() for a in p._actions if not a.option_strings]


def plain(roff: str) -> str:
    """The roff source with its escapes undone, enough to find option names and keys."""
    return roff.replace("\\-", "-").replace("\\(dq", '"').replace("\\ ", " ")


def sections(level: str) -> dict[str, str]:
    """Text of each .SH (level "SH") or .SS section, by its title."""
    text = plain(MAN.read_text(encoding="utf-8"))
    parts = re.split(rf"^\.{level} (.*)$", text, flags=re.M)
    out: dict[str, str] = {}
    for i in range(1, len(parts) - 1, 2):
        title = parts[i].strip().strip('"')
        body = parts[i + 1]
        if level == "SS":  # a subsection ends at the next section too
            body = re.split(r"^\.SH ", body, flags=re.M)[0]
        out[title] = body
    return out


def verb_sections() -> dict[str, tuple[str, str]]:
    """verb -> (synopsis title, body) of its COMMANDS subsection."""
    commands = sections("SH")["COMMANDS"]
    parts = re.split(r"^\.SS (.*)$", commands, flags=re.M)
    out = {}
    for i in range(1, len(parts) - 1, 2):
        title = parts[i].strip().strip('"')
        m = re.match(r"vllm-guard (\w+)\b", title)
        assert m, f"a COMMANDS subsection that is not a verb: {title}"
        out[m.group(1)] = (title, parts[i + 1])
    return out


def described_options(body: str) -> set[str]:
    """Options given a .TP paragraph of their own (the line after .TP names them)."""
    return set(re.findall(r"^\.TP\n\.BI? (--[a-z0-9-]+)", body, flags=re.M))


def test_man_page_has_one_section_per_verb() -> None:
    assert list(verb_sections()) == list(VERBS)


@pytest.mark.parametrize("verb", list(VERBS))
def test_man_page_synopsis_lists_exactly_the_options_of_the_verb(verb: str) -> None:
    title, _ = verb_sections()[verb]
    in_synopsis = set(re.findall(r"(?<![\w-])(--[a-z0-9-]+|-[a-zA-Z])\b", title))
    assert in_synopsis == options_of(verb_parsers()[verb]), title
    for name in positionals_of(verb_parsers()[verb]):
        assert name in title, f"{verb}: the positional {name} is missing from {title!r}"


@pytest.mark.parametrize("verb", list(VERBS))
def test_man_page_describes_every_option_of_the_verb(verb: str) -> None:
    _, body = verb_sections()[verb]
    common = described_options(sections("SH")["COMMON OPTIONS"])
    options = options_of(verb_parsers()[verb])
    missing = {o for o in options if o.startswith("--")} - described_options(body) - common
    assert not missing, f"vllm-guard {verb}: no .TP paragraph for {sorted(missing)} in {MAN.name}"
    stale = described_options(body) - options
    assert not stale, f"vllm-guard {verb}: {MAN.name} describes options the verb does not have: {sorted(stale)}"


def test_common_options_are_real() -> None:
    everywhere = set.union(*(options_of(p) for p in verb_parsers().values())) | {"--version"}
    assert described_options(sections("SH")["COMMON OPTIONS"]) <= everywhere


@pytest.mark.parametrize(("table", "key"), list(config_keys()), ids=lambda v: str(v))
def test_man_page_documents_every_config_key(table: str, key: str) -> None:
    subsections = sections("SS")
    title = {"guard": "[guard]", "target": "[[target]]", "target.fallback": "[[target.fallback]]"}.get(
        table, f"[{table}]"
    )
    assert title in subsections, f"no .SS {title} in {MAN.name}"
    body = subsections[title]
    assert re.search(rf"^\.(?:B|BR) .*\b{key}\b", body, flags=re.M), f"{table}.{key} is not in {title}"


@pytest.mark.parametrize("code", list(ExitCode), ids=lambda c: c.name.lower())
def test_man_page_lists_every_exit_code(code: ExitCode) -> None:
    assert re.search(rf"^\.TP\n\.B {code.value}$", sections("SH")["EXIT STATUS"], flags=re.M)


@pytest.mark.skipif(shutil.which("groff") is None and shutil.which("man") is None, reason="no groff/man")
def test_man_page_renders_without_warnings() -> None:
    argv = ["groff", "-man", "-Tutf8", "-ww", "-z", str(MAN)] if shutil.which("groff") else ["man", "-l", str(MAN)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr


# -- bash completion


def completion_cases() -> dict[str, set[str]]:
    text = COMPLETION.read_text(encoding="utf-8")
    body = re.search(r'case "\$verb" in\n(.*?)\n\s*esac', text, flags=re.S)
    assert body is not None
    return {
        m.group(1): set(m.group(2).split()) for m in re.finditer(r'^\s*([a-z]+)\) opts="([^"]*)"', body.group(1), re.M)
    }


def test_completion_knows_every_verb() -> None:
    text = COMPLETION.read_text(encoding="utf-8")
    verbs = re.search(r'local verbs="([^"]*)"', text)
    assert verbs is not None and verbs.group(1).split() == list(VERBS)
    assert set(completion_cases()) == set(VERBS)


@pytest.mark.parametrize("verb", list(VERBS))
def test_completion_offers_exactly_the_options_of_the_verb(verb: str) -> None:
    assert completion_cases()[verb] == {o for o in options_of(verb_parsers()[verb]) if o.startswith("--")}


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_completion_is_valid_bash() -> None:
    subprocess.run(["bash", "-n", str(COMPLETION)], check=True)


# (what was typed, the words bash offers)
COMPLETIONS: list[tuple[list[str], list[str]]] = [
    (["vllm-guard", "s"], ["status", "swap"]),
    (["vllm-guard", "plan", "--en"], ["--enforce-eager", "--engine"]),
    (["vllm-guard", "plan", "--engine", ""], ["v1", "v0"]),
    (["vllm-guard", "demo", "-"], ["--timeout", "--real-vllm", "--help"]),
    (["vllm-guard", "--json", "st"], ["status"]),
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize(("typed", "offered"), COMPLETIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_completion_offers(typed: list[str], offered: list[str]) -> None:
    script = (
        f"source {COMPLETION}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in typed)}); COMP_CWORD={len(typed) - 1}\n"
        '_vllm_guard; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == offered
