"""`vllm-guard classify` on what journalctl itself prints of a real journal, in each of its output formats.

Corpus logs (tests/data/logs) are written as a vLLM unit's output into real journal files
(systemd-journal-remote), printed back by the real journalctl with ``-o short``, ``short-full``,
``short-iso-precise``, ``short-monotonic``, ``short-unix``, ``with-unit``, ``cat`` and ``json``, and read by
the CLI: each format must give the verdict the plain lines give.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.corpus import load
from tests.journal.export import JournalScript, new_invocation, requires_journal_remote
from vllm_guard.cli import main
from vllm_guard.core.classify import classify

pytestmark = [pytest.mark.journal, requires_journal_remote]

UNIT = "vllm-qwen.service"
FORMATS = ("short", "short-full", "short-iso-precise", "short-monotonic", "short-unix", "with-unit", "cat", "json")


def _sample() -> list[tuple[str, list[str]]]:
    """The first two files of each kind whose lines the export format can carry (no NUL, no lone CR, none over the
    4096 bytes journalctl -o json prints in full without --all)."""
    by_kind: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    for case in load():
        lines = [line for line in case.path.read_text(errors="replace").splitlines() if not line.startswith("# ")]
        if any("\x00" in line or "\r" in line or len(line.encode()) > 4096 for line in lines) or (
            len(by_kind[case.kind.value]) >= 2
        ):
            continue
        by_kind[case.kind.value].append((case.name, lines))
    return [item for items in by_kind.values() for item in items]


SAMPLE = _sample()


@pytest.mark.skipif(shutil.which("journalctl") is None, reason="journalctl is missing")
@pytest.mark.parametrize(("name", "lines"), SAMPLE, ids=[name for name, _ in SAMPLE])
def test_every_journalctl_format_gives_the_verdict_of_the_plain_lines(
    name: str,
    lines: list[str],
    build: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    want = classify(lines).kind.value
    # journald records the host; an entry without one (a journal from another source) is printed without it
    for host in ("gpu-host", None):
        script = JournalScript()
        script.lines(UNIT, new_invocation(), 4242, [line if line else " " for line in lines])
        if host:
            for entry in script.entries:
                entry["_HOSTNAME"] = host
        journal = build(script, name=f"{host or 'nohost'}.journal")
        for fmt in FORMATS:
            printed = subprocess.run(
                ["journalctl", "--file", str(journal), "--no-pager", "-o", fmt, "--utc"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            if fmt == "json":  # one object a line, the text under MESSAGE
                assert all(json.loads(line)["MESSAGE"] is not None for line in printed.splitlines())
            log = tmp_path / f"{host}-{fmt}.log"
            log.write_text(printed)
            main(["classify", "--json", str(log)])
            got = json.loads(capsys.readouterr().out)["kind"]
            assert got == want, f"{name} as journalctl -o {fmt} (host {host}): {got}, not {want}"
