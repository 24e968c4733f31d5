"""The Ansible role in deploy/ansible against this checkout's command line: every `vllm-guard` command it runs
parses with today's verbs and options, and every handler it notifies exists.

(The role itself runs in the system tier: tests/system/test_fleet_ansible.py.)
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
from pathlib import Path

import pytest

from vllm_guard.cli import build_parser

pytestmark = pytest.mark.unit

ROLE = Path(__file__).resolve().parents[2] / "deploy/ansible/roles/vllm_guard"
GUARD = "/usr/bin/vllm-guard"


def _value(word: str) -> str:
    """A Jinja expression stands for a value of the option before it (1 parses as a number and as a word)."""
    word = word.strip().strip('"').strip("'")
    return "1" if "{{" in word else word.replace("%s", "/tmp/config.toml")


def command_lines() -> list[tuple[str, list[str]]]:
    """(file:line, argv after vllm-guard) for each vllm-guard command in the role's tasks."""
    found: list[tuple[str, list[str]]] = []
    for path in sorted((ROLE / "tasks").glob("*.yml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            where = f"{path.name}:{i + 1}"
            literal = re.search(r"\[('/usr/bin/vllm-guard'[^\]]*)\]", line)
            if literal:  # argv: "{{ ['/usr/bin/vllm-guard', 'doctor', '--json'] + more }}"
                found.append((where, list(ast.literal_eval(f"[{literal.group(1)}]"))[1:]))
            elif re.match(rf"\s*- {GUARD}\s*$", line):  # argv as a YAML list, one word per line
                indent = line.index("-")
                words = []
                for nxt in lines[i + 1 :]:
                    if not nxt.strip().startswith("- ") or nxt.index("-") != indent:
                        break
                    words.append(_value(nxt.strip()[2:]))
                found.append((where, words))
            elif f"{GUARD} " in line:  # a command line in one string (command:, validate:)
                found.append((where, [_value(w) for w in shlex.split(line.split(GUARD, 1)[1])]))
    return found


def test_the_role_runs_the_verbs_it_should() -> None:
    verbs = {argv[0] for _, argv in command_lines()}
    assert verbs == {"run", "render", "install", "doctor", "plan", "probe"}, command_lines()


@pytest.mark.parametrize(("where", "argv"), command_lines(), ids=lambda v: v if isinstance(v, str) else None)
def test_each_command_of_the_role_parses(where: str, argv: list[str]) -> None:
    parser = build_parser([argv[0]])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub.choices[argv[0]].allow_abbrev = False  # the role must spell each option out
    try:
        parser.parse_args(argv)
    except SystemExit as err:  # argparse said why on stderr
        pytest.fail(f"{where}: `vllm-guard {' '.join(argv)}` does not parse (exit {err.code})")


def test_the_config_is_checked_by_the_verb_a_reload_runs() -> None:
    """`validate:` runs the same check as `systemctl reload vllm-guard` (ExecReload=), on the new file."""
    (validate,) = [argv for _, argv in command_lines() if argv[:2] == ["run", "--check"]]
    assert validate == ["run", "--check", "--config-only", "--config", "/tmp/config.toml"]
    unit = (ROLE.parents[3] / "units/vllm-guard.service").read_text(encoding="utf-8")
    assert "ExecReload=/usr/bin/vllm-guard run --check --config-only\n" in unit


def test_every_notified_handler_exists() -> None:
    handlers = (ROLE / "handlers/main.yml").read_text(encoding="utf-8")
    known = set(re.findall(r"^\s+listen: (.+)$", handlers, re.M)) | set(re.findall(r"^- name: (.+)$", handlers, re.M))
    notified = set()
    for path in (ROLE / "tasks").glob("*.yml"):
        notified |= set(re.findall(r"^\s+notify: (.+)$", path.read_text(encoding="utf-8"), re.M))
    assert notified and notified <= known, notified - known
