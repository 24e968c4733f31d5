"""Log-line prefixes: strip what journalctl, docker, kubectl and vLLM put before a message.

The classifier matches on substrings, so it works with or without prefixes; stripping is for
evidence a person reads and for rules anchored at the start of a message (argparse errors,
exception lines of a traceback).

ANSI colour codes are dropped first. Prefixes handled, outermost first (each may or may not be there)::

    2024-05-01T10:00:00.123456789Z                     kubectl logs --timestamps, docker logs -t
    Nov 30 05:00:00 host python3[123]:                 journalctl -o short
    2024-05-01T10:00:00+0000 host python3[123]:        journalctl -o short-iso
    vllm-1  |                                          docker compose logs
    (EngineCore_DP0 pid=123)  (VllmWorker rank=0 pid=9)  (APIServer pid=1)  (RayWorkerWrapper pid=7)
    [rank0]:                                           torch.distributed's per-rank prefix
    [2026-01-26T17:25:37Z]                             a bracketed timestamp (CI logs)
    INFO 11-30 05:00:00 [core.py:123]                  vLLM's logger (V1 style)
    INFO 06-20 16:09:23 llm_engine.py:164]             vLLM's logger (V0 style)
    ERROR 2026-04-25 10:01:17.340 [connector.py:246]   the same with the year (vllm-ascend)
"""

from __future__ import annotations

import re

_PREFIXES = (
    # A bracketed timestamp: "[2026-01-26T17:25:37Z] " (CI systems, some log shippers)
    r"\[\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]\s+",
    # RFC 3339 timestamp (kubectl --timestamps, docker -t, journalctl -o short-iso). Only journalctl's form,
    # with a numeric offset, goes on with "host ident[pid]: " (after kubectl's "Z" comes the message, which
    # may well read "Processed prompts: ...").
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"(?:[+-]\d\d:?\d\d\s+(?:[^\s:]+ [\w.@/:-]+(?:\[\d+\])?: )?|Z?\s+)",
    # journalctl -o short: "Nov 30 05:00:00 host ident[pid]: "
    r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ [^\s:\[]+(?:\[\d+\])?: ",
    # docker compose: "service-1  | "
    r"[\w.-]+\s+\| ",
    # vLLM / Ray process prefix: "(EngineCore_DP0 pid=1)", "(VllmWorker rank=0 pid=2)", "(pid=3)"
    r"\([^()]*\bpid=\d+[^()]*\)\s+",
    # torch.distributed: "[rank0]: "
    r"\[rank\d+\]:\s?",
    # vLLM logger: "INFO 11-30 05:00:00 [core.py:123] " or "INFO 06-20 16:09:23 llm_engine.py:164] "
    r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"(?:\[[^\]]*\] ?|[\w.]+:\d+\] )",
)
_PREFIX_RE = re.compile("(?:" + "|".join(_PREFIXES) + ")")
# ANSI colour codes, raw (ESC), as pasted ("^[") or as rsyslog escapes them ("#033").
_ANSI_RE = re.compile(r"(?:\x1b|\^\[|#033)\[[0-9;]*m")
_MAX_PREFIXES = 8  # no real line stacks more than about five prefixes


def strip_prefixes(line: str) -> str:
    """The message of one log line without the prefixes the tools in the module docstring add."""
    text = line.rstrip("\r\n")
    if "[" in text and ("\x1b" in text or "^[" in text or "#033" in text):
        text = _ANSI_RE.sub("", text)
    for _ in range(_MAX_PREFIXES):
        m = _PREFIX_RE.match(text)
        if m is None or m.end() == 0:
            break
        text = text[m.end() :]
    return text.strip()
