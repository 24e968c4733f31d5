"""Journal-tier fixtures: real journal files made from export-format scripts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.journal.export import JournalScript, write_journal


@pytest.fixture
def script() -> JournalScript:
    return JournalScript()


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    d = tmp_path / "journal"
    d.mkdir()
    return d


@pytest.fixture
def build(journal_dir: Path) -> Callable[..., Path]:
    """build(script, start=0, stop=None, name="system.journal"): write those entries into a journal file."""

    def run(s: JournalScript, start: int = 0, stop: int | None = None, name: str = "system.journal") -> Path:
        return write_journal(s.export(start, stop), journal_dir / name)

    return run
