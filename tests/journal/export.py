"""Build journal export-format streams from a script of entries, and real journal files from them.

The PID 1 messages copy what systemd 252 writes (MESSAGE text, MESSAGE_ID, INVOCATION_ID, JOB_TYPE,
JOB_RESULT, EXIT_CODE, EXIT_STATUS, UNIT_RESULT, N_RESTARTS), as recorded from a real PID 1 booted with
systemd-nspawn on a Debian 12 host; the unit's own lines carry _SYSTEMD_UNIT and
_SYSTEMD_INVOCATION_ID like journald's stdout transport does.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

JOURNAL_REMOTE = Path("/lib/systemd/systemd-journal-remote")

BOOT_ID = "5c4a9f0e3d7b4e1fa2c86b0d9e1f3a27"
# 2026-11-30 05:27:43 UTC in µs, the realtime base of every script
START_US = 1_796_016_463_497_565

MID_STARTING = "7d4958e842da4a758f6c1cdc7b36dcc5"
MID_STARTED = "39f53479d3a045ac8e11786248231fbf"
MID_START_FAILED = "be02cf6855d2428ba40df7e9d022f03d"
MID_STOPPING = "de5b426a63be47a7b6ac3eaac82e2f6f"
MID_STOPPED = "9d1aaa27d60140bd96365438aad20286"
MID_RESTART = "5eb03494b6584870a536b337290809b3"
MID_SUCCESS = "7ad2d189f7e94e70a38c781354912448"
MID_FAILED = "d9b373ed55a64feb8242e02dbe79a49c"
MID_EXIT = "98e322203f7a4ed290d09fe03c09fe15"

SIGNALS = {9: "KILL", 15: "TERM", 6: "ABRT", 11: "SEGV"}


def new_invocation() -> str:
    return uuid.uuid4().hex


@dataclass
class JournalScript:
    """Entries in journal order with growing timestamps; ``export()`` gives the export format."""

    boot_id: str = BOOT_ID
    now_us: int = START_US
    entries: list[dict[str, str]] = field(default_factory=list)
    job_id: int = 100
    step_us: int = 1000

    def _add(self, fields: dict[str, str], dt_us: int | None) -> dict[str, str]:
        self.now_us += self.step_us if dt_us is None else dt_us
        entry = {
            "__REALTIME_TIMESTAMP": str(self.now_us),
            "__MONOTONIC_TIMESTAMP": str(self.now_us - START_US + 275_000_000),
            "_BOOT_ID": self.boot_id,
            **fields,
        }
        self.entries.append(entry)
        return entry

    # -- the unit's own output --

    def line(self, unit: str, inv: str | None, pid: int, message: str, dt_us: int | None = None) -> None:
        fields = {
            "_TRANSPORT": "stdout",
            "PRIORITY": "6",
            "SYSLOG_IDENTIFIER": "python3",
            "_PID": str(pid),
            "_COMM": "python3",
            "_SYSTEMD_UNIT": unit,
            "_SYSTEMD_SLICE": "system.slice",
            "_SYSTEMD_CGROUP": f"/system.slice/{unit}",
            "MESSAGE": message,
        }
        if inv:
            fields["_SYSTEMD_INVOCATION_ID"] = inv
        self._add(fields, dt_us)

    def lines(self, unit: str, inv: str | None, pid: int, messages: list[str]) -> None:
        for message in messages:
            self.line(unit, inv, pid, message)

    # -- PID 1 about a unit --

    def pid1(
        self, unit: str, inv: str | None, message: str, mid: str | None, dt_us: int | None = None, **extra: str
    ) -> None:
        fields = {
            "_TRANSPORT": "journal",
            "PRIORITY": "6",
            "SYSLOG_IDENTIFIER": "systemd",
            "_PID": "1",
            "_COMM": "systemd",
            "_SYSTEMD_UNIT": "init.scope",
            "_SYSTEMD_CGROUP": "/init.scope",
            "UNIT": unit,
            "MESSAGE": message,
            **extra,
        }
        if mid:
            fields["MESSAGE_ID"] = mid
        if inv:
            fields["INVOCATION_ID"] = inv
        self._add(fields, dt_us)

    def started(self, unit: str, inv: str, description: str = "vLLM server") -> None:
        self.job_id += 57
        self.pid1(
            unit, inv, f"Started {unit} - {description}.", MID_STARTED,
            JOB_TYPE="start", JOB_RESULT="done", JOB_ID=str(self.job_id),
        )  # fmt: skip

    def main_exited(self, unit: str, inv: str, *, status: int, killed: bool = False) -> None:
        if killed:
            text = f"{unit}: Main process exited, code=killed, status={status}/{SIGNALS[status]}"
            self.pid1(unit, inv, text, MID_EXIT, EXIT_CODE="killed", EXIT_STATUS=str(status), PRIORITY="4")
        else:
            text = f"{unit}: Main process exited, code=exited, status={status}/FAILURE"
            self.pid1(unit, inv, text, MID_EXIT, EXIT_CODE="exited", EXIT_STATUS=str(status), PRIORITY="5")

    def failed(self, unit: str, inv: str, result: str) -> None:
        self.pid1(unit, inv, f"{unit}: Failed with result '{result}'.", MID_FAILED, UNIT_RESULT=result, PRIORITY="4")

    def restart_scheduled(self, unit: str, inv: str, counter: int, dt_us: int = 5_000_000) -> None:
        text = f"{unit}: Scheduled restart job, restart counter is at {counter}."
        self.pid1(unit, inv, text, MID_RESTART, dt_us=dt_us, N_RESTARTS=str(counter))
        self.job_id += 57
        self.pid1(
            unit, inv, f"Stopped {unit} - vLLM server.", MID_STOPPED,
            JOB_TYPE="restart", JOB_RESULT="done", JOB_ID=str(self.job_id),
        )  # fmt: skip

    def stopping(self, unit: str, inv: str) -> None:
        self.job_id += 57
        self.pid1(
            unit, inv, f"Stopping {unit} - vLLM server...", MID_STOPPING, JOB_TYPE="stop", JOB_ID=str(self.job_id)
        )

    def deactivated(self, unit: str, inv: str) -> None:
        self.pid1(unit, inv, f"{unit}: Deactivated successfully.", MID_SUCCESS)

    def stopped(self, unit: str, inv: str) -> None:
        self.pid1(
            unit, inv, f"Stopped {unit} - vLLM server.", MID_STOPPED,
            JOB_TYPE="stop", JOB_RESULT="done", JOB_ID=str(self.job_id),
        )  # fmt: skip

    def start_limit_hit(self, unit: str, inv: str) -> None:
        self.pid1(unit, inv, f"{unit}: Start request repeated too quickly.", None, PRIORITY="4")

    # -- the kernel --

    def kernel(self, message: str, priority: str = "3") -> None:
        self._add(
            {
                "_TRANSPORT": "kernel",
                "PRIORITY": priority,
                "SYSLOG_FACILITY": "0",
                "SYSLOG_IDENTIFIER": "kernel",
                "MESSAGE": message,
            },
            None,
        )

    # -- other things on the host --

    def other(self, unit: str, message: str) -> None:
        self._add(
            {
                "_TRANSPORT": "syslog",
                "_PID": "812",
                "_SYSTEMD_UNIT": unit,
                "SYSLOG_IDENTIFIER": "cron",
                "MESSAGE": message,
            },
            None,
        )

    def export(self, start: int = 0, stop: int | None = None) -> bytes:
        out = []
        for entry in self.entries[start:stop]:
            for key, value in entry.items():
                if "\n" in value:
                    raise ValueError("export helper writes text fields only")
                out.append(f"{key}={value}\n")
            out.append("\n")
        return "".join(out).encode()


def have_journal_remote() -> bool:
    return JOURNAL_REMOTE.exists() or shutil.which("systemd-journal-remote") is not None


requires_journal_remote = pytest.mark.skipif(
    not have_journal_remote(),
    reason="systemd-journal-remote is missing (Debian: apt-get install systemd-journal-remote)",
)


def write_journal(export: bytes, output: Path) -> Path:
    """Write (or append) entries into a real journal file with systemd-journal-remote."""
    tool = str(JOURNAL_REMOTE) if JOURNAL_REMOTE.exists() else "systemd-journal-remote"
    output.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([tool, "-o", str(output), "-"], input=export, check=True, capture_output=True, timeout=60)
    return output
