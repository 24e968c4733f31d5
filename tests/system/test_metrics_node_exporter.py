"""The textfile as a real node_exporter reads it (Debian's prometheus-node-exporter; skipped without it)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.unit.test_metrics import SNAP
from vllm_guard.adapters.metrics import write_textfile

pytestmark = pytest.mark.system

EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")


@pytest.mark.skipif(EXPORTER is None, reason="prometheus-node-exporter is not installed")
def test_node_exporter_reads_the_textfile_without_errors(tmp_path: Path) -> None:
    assert EXPORTER is not None
    write_textfile(tmp_path / "vllm_guard.prom", SNAP)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            EXPORTER,
            "--collector.disable-defaults",
            "--collector.textfile",
            f"--collector.textfile.directory={tmp_path}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        text = ""
        for _ in range(50):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                    text = resp.read().decode()
                break
            except OSError:
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(10)
    assert "node_textfile_scrape_error 0" in text
    assert "vllm_guard_up 1" in text
    assert 'vllm_guard_remedies_total{kind="kv_cache_insufficient",unit="vllm-qwen"} 2' in text
