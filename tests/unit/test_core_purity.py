"""The core is pure: no adapter, OS, network or file I/O import, and no open()/Path I/O calls."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

CORE = Path(__file__).resolve().parents[2] / "src/vllm_guard/core"
FORBIDDEN_MODULES = {
    "os",
    "subprocess",
    "socket",
    "shutil",
    "tempfile",
    "pathlib",
    "io",
    "glob",
    "select",
    "signal",
    "time",
    "datetime",
    "random",
    "threading",
    "multiprocessing",
    "asyncio",
    "urllib",
    "http",
    "systemd",
    "pynvml",
    "httpx",
    "psutil",
    "requests",
    "vllm_guard.adapters",
    "vllm_guard.app",
}
FORBIDDEN_CALLS = {
    "open",
    "read_text",
    "write_text",
    "read_bytes",
    "write_bytes",
    "iterdir",
    "glob",
    "exists",
    "is_file",
    "is_dir",
    "mkdir",
    "unlink",
    "stat",
    "system",
    "popen",
    "now",
    "time",
}


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            if any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
                found.append(f"{path.name}:{node.lineno} imports {name}")
        if isinstance(node, ast.Call):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if called in FORBIDDEN_CALLS:
                found.append(f"{path.name}:{node.lineno} calls {called}()")
    return found


def test_core_modules_do_no_io() -> None:
    files = sorted(CORE.glob("*.py"))
    assert len(files) >= 5
    problems = [v for f in files for v in _violations(f)]
    assert problems == []


def test_the_purity_check_would_catch_an_adapter_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom vllm_guard.adapters.journal import x\nopen('f')\n")
    assert len(_violations(bad)) == 3
