"""The one exit-code table of the CLI (sysexits.h where one fits)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # success; doctor: every finding ok
    WARN = 1  # doctor: warnings only; classify: a failure was found; probe: the model did not answer
    FAIL = 2  # doctor: at least one failure
    USAGE = 64  # EX_USAGE: bad command line
    DATAERR = 65  # EX_DATAERR: input that cannot be parsed (a log, a model folder)
    NOINPUT = 66  # EX_NOINPUT: an input file is missing or unreadable
    UNAVAILABLE = 69  # EX_UNAVAILABLE: a needed service (systemd, journal) is not there
    SOFTWARE = 70  # EX_SOFTWARE: a bug in vllm-guard
    OSERR = 71  # EX_OSERR: the OS refused (fork, socket, mount)
    CANTCREAT = 73  # EX_CANTCREAT: cannot write an output file
    NOPERM = 77  # EX_NOPERM: needs root
    CONFIG = 78  # EX_CONFIG: invalid configuration; vllm-guard.service has RestartPreventExitStatus=78
    INTERRUPTED = 130  # SIGINT


EXIT_CODE_TABLE = "\n".join(f"  {c.value:>3}  {c.name.lower()}" for c in ExitCode)
