"""Processes of this host, by PID."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie waiting to be reaped counts as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # no procfs: trust kill(0)
    # "PID (comm) STATE ...": comm may hold spaces and parentheses, so split after the last ")"
    state = stat.rpartition(")")[2].split()[:1]
    return state != ["Z"]
