"""`vllm-guard classify FILE... [--json]`: read vLLM logs and say why each start failed.

Each FILE is a plain-text log (``journalctl -o cat``, ``docker logs``, a paste from an issue; any
line prefix) or a structured export, one JSON record a line (``journalctl -o json``, docker's json-file
logs, a log shipper's records: the text of their message field is read); ``-`` reads standard input.
A log copied from a web page or a forum reads as the process printed it, and lines a terminal or an editor broke
at its width are joined again (``core/logline.py``, ``as_printed``).
With ``--json``, one object per file per line::

    {"schema": 1, "file": "vllm.log", "kind": "kv_cache_insufficient", "phase": "profile",
     "numbers": {"max_model_len": 131072, ...}, "evidence": ["ValueError: To serve ..."],
     "hint": "lower --max-model-len to 32640 or less ..."}

A leading block of ``# `` comment lines (a saved excerpt's source and notes) is skipped. A log with no failure
that ends while the weights were still loading says so in the text output: a paste cut short, or a process that
died without a word there (its end is then in the journal or the kernel's log).
Exit status: 0 when every file shows no failure, 1 when one does, 66 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from vllm_guard.cli import add_common
from vllm_guard.consts import JSON_SCHEMA
from vllm_guard.core.classify import classify, unfinished_start
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.logline import unpack_records
from vllm_guard.errors import InputError
from vllm_guard.exitcodes import ExitCode

HELP = "read vLLM logs and say why each start failed"
DESCRIPTION = (
    "Read vLLM logs (journalctl -o cat or -o json, docker logs, pasted text; any line prefix) and say why the "
    "start failed: the failure kind, the phase, the numbers vLLM printed, the evidence and a hint. "
    "Exit 0 when no file shows a failure, 1 when one does, 66 when a file cannot be read."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)  # --root/--config are accepted for symmetry; classify reads no config
    p.add_argument("files", nargs="+", metavar="FILE", help="log file to read; - reads standard input")


def _without_header(lines: list[str]) -> list[str]:
    """Drop a leading block of ``# `` comment lines (how saved excerpts name their source)."""
    start = 0
    while start < len(lines) and (lines[start].startswith("# ") or lines[start] == "#"):
        start += 1
    return lines[start:]


def _read(name: str) -> list[str]:
    if name == "-":
        return unpack_records(_without_header(sys.stdin.read().splitlines()))
    try:
        data = Path(name).read_bytes()
    except OSError as err:
        raise InputError(
            "unreadable-log",
            f"cannot read log file {name}: {err.strerror or err}",
            "check the path and its permissions (journalctl -u UNIT -o cat > FILE makes one)",
            exit_code=ExitCode.NOINPUT,
        ) from None
    # Logs are UTF-8 in practice; a stray byte must not stop the reading.
    return unpack_records(_without_header(data.decode("utf-8", errors="replace").splitlines()))


_BASIS_WORDS = {
    "message": "a message that names the cause",
    "frame": "placed by a traceback frame",
    "milestone": "placed by a start-up milestone",
    "allocator": "placed only by the allocator's figures in the OOM message",
    "bare": "nothing but a bare error",
    "observed": "what the guard saw of the attempt beyond its lines",
}


def _text(name: str, failure: Failure, lines: Sequence[str]) -> str:
    label = "<stdin>" if name == "-" else name
    if failure.kind is FailureKind.NONE:
        cut = unfinished_start(lines)
        if cut is not None:
            # a start that neither served nor failed in these lines: a paste cut short, or a process that died
            # without a word (a SIGKILL's trace is in the journal or the kernel's log, not here)
            return (
                f"{label}: none (no failure found; the log ends while vLLM was still starting, in its {cut.value} "
                "phase: if the process ended there, what ended it is not in these lines)"
            )
        return f"{label}: none (no failure found)"
    out = [
        f"{label}: {failure.kind.value} (phase: {failure.phase.value}, "
        f"confidence: {failure.confidence.value}: {_BASIS_WORDS.get(failure.basis.value, failure.basis.value)})"
    ]
    if failure.numbers:
        out.append("  numbers: " + ", ".join(f"{k}={v}" for k, v in failure.numbers.items()))
    for line in failure.evidence:
        out.append(f"  > {line}")
    if failure.hint:
        out.append(f"  hint: {failure.hint}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    # An unreadable file is named on stderr and costs the exit status; it hides nobody else's verdict.
    found = False
    unreadable: InputError | None = None
    for name in args.files:
        try:
            lines = _read(name)
        except InputError as err:
            print(err.render(), file=sys.stderr, flush=True)
            unreadable = unreadable or err
            continue
        failure = classify(lines)
        found = found or failure.kind is not FailureKind.NONE
        if args.json:
            print(json.dumps({"schema": JSON_SCHEMA, "file": name, **failure.to_dict()}), flush=True)
        else:
            print(_text(name, failure, lines), flush=True)
    if unreadable is not None:
        return int(unreadable.exit_code)
    return int(ExitCode.WARN if found else ExitCode.OK)
