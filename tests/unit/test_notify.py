"""sd_notify datagrams on a real AF_UNIX socket: the Notifier, and the daemon's READY/STATUS/WATCHDOG."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_config
from vllm_guard.adapters.notify import Notifier

pytestmark = pytest.mark.unit


def _listen(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.2)
    return sock


def _drain(sock: socket.socket, until: float, want: str) -> list[str]:
    got: list[str] = []
    while time.monotonic() < until:
        try:
            got.append(sock.recv(4096).decode())
        except TimeoutError:
            continue
        if any(want in g for g in got):
            break
    return got


def test_notifier_sends_datagrams(tmp_path: Path) -> None:
    sock = _listen(tmp_path / "notify")
    n = Notifier(str(tmp_path / "notify"))
    assert n.ready("up") and n.status("busy") and n.watchdog()
    assert [sock.recv(4096).decode() for _ in range(3)] == ["READY=1\nSTATUS=up", "STATUS=busy", "WATCHDOG=1"]


def test_notifier_is_silent_without_a_socket() -> None:
    assert Notifier("").send("READY=1") is False


def test_daemon_sends_ready_status_watchdog_and_stopping(fake_root: Path, tmp_path: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    sock_path = tmp_path / "notify"
    sock = _listen(sock_path)
    env = {**os.environ, "NOTIFY_SOCKET": str(sock_path), "WATCHDOG_USEC": "400000", "INVOCATION_ID": "test"}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vllm_guard", "run", "--root", str(fake_root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        got = _drain(sock, time.monotonic() + 30, "READY=1")
        assert any(g.startswith("READY=1") for g in got), (got, proc.poll())
        assert any("STATUS=vllm-qwen: watching" in g for g in got)
        got += _drain(sock, time.monotonic() + 5, "WATCHDOG=1")
        assert "WATCHDOG=1" in got  # sent from the loop, every half WatchdogSec
        proc.send_signal(signal.SIGTERM)
        got += _drain(sock, time.monotonic() + 10, "STOPPING=1")
        assert any(g.startswith("STOPPING=1") for g in got)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # the state file was written atomically and is readable
    assert '"schema": 1' in (fake_root / "var/lib/vllm-guard/state.json").read_text()
