"""Shared fixtures: a fake root with a model folder, and a helper that runs the CLI in-process."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from vllm_guard.cli import main

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    def run(*argv: str | Path) -> CliResult:
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def fake_root(tmp_path: Path) -> Path:
    """A root with /models/tiny (a model folder with config.json) and /etc/vllm-guard."""
    root = tmp_path / "root"
    (root / "etc/vllm-guard").mkdir(parents=True)
    shutil.copytree(DATA / "models/tiny-qwen2", root / "models/tiny")
    return root


def write_config(root: Path, text: str, name: str = "config.toml") -> Path:
    path = root / "etc/vllm-guard" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


TIERS = ("unit", "journal", "system", "acceptance")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test belongs to exactly one tier: an unmarked test would be skipped silently by `-m`."""
    bad = [item.nodeid for item in items if sum(1 for t in TIERS if item.get_closest_marker(t)) != 1]
    if bad:
        raise pytest.UsageError(
            "tests without exactly one tier marker (unit/journal/system/acceptance): " + ", ".join(bad[:10])
        )
