"""systemctl: the only way the guard changes units (it never kills vLLM itself)."""

from __future__ import annotations

import shutil
import subprocess

from vllm_guard.errors import GuardError
from vllm_guard.exitcodes import ExitCode

TIMEOUT_S = 30.0  # a systemctl call that takes longer than this is stuck (PID 1 busy or gone)


def _systemctl() -> str:
    found = shutil.which("systemctl")
    if found is None:
        raise GuardError(
            "no-systemctl", "systemctl is not installed", "vllm-guard needs systemd", exit_code=ExitCode.UNAVAILABLE
        )
    return found


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [_systemctl(), *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise GuardError(
            "systemctl-timeout",
            f"`{' '.join(cmd)}` did not answer in {TIMEOUT_S:.0f} s",
            "check that systemd is running",
            exit_code=ExitCode.UNAVAILABLE,
        ) from None
    if check and proc.returncode != 0:
        raise GuardError(
            "systemctl-failed",
            f"`{' '.join(cmd)}` failed ({proc.returncode}): {proc.stderr.strip()}",
            "check `systemctl status` and the journal",
            exit_code=ExitCode.UNAVAILABLE,
        )
    return proc


def daemon_reload() -> None:
    run("daemon-reload")


def show(unit: str, *props: str) -> dict[str, str]:
    proc = run("show", unit, "-p", ",".join(props), check=False)
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


def stop(unit: str) -> None:
    run("stop", "--no-block", unit)


def start(unit: str) -> None:
    run("start", "--no-block", unit)


def restart(unit: str) -> None:
    run("restart", "--no-block", unit)


def reset_failed(unit: str) -> None:
    run("reset-failed", unit, check=False)
