"""Log-line prefixes: strip what journalctl, docker, kubectl and vLLM put before a message.

The classifier matches on substrings, so it works with or without prefixes; stripping is for
evidence a person reads and for rules anchored at the start of a message (argparse errors,
exception lines of a traceback).

ANSI colour codes are dropped first, also where a paste lost their ESC ("[36m(pid=1)[0m"). Prefixes
handled, outermost first (each may or may not be there)::

    2024-05-01T10:00:00.123456789Z                     kubectl logs --timestamps, docker logs -t
    Nov 30 05:00:00 host python3[123]:                 journalctl -o short (and short-precise)
    2024-05-01T10:00:00+0000 host python3[123]:        journalctl -o short-iso (and short-iso-precise)
    Mon 2024-05-01 10:00:00 UTC host python3[123]:     journalctl -o short-full
    [  123.456789] host python3[123]:                  journalctl -o short-monotonic
    1714557600.123456 host python3[123]:               journalctl -o short-unix
    stderr F                                           the CRI log format of a node's container logs
                                                       (after its RFC 3339 timestamp)
    4:47PM DBG GRPC(qwen-127.0.0.1:38441): stderr      LocalAI, which runs vLLM as a child
    ERROR:root:                                        Python's logging.basicConfig() default format
    - vllm - ERROR -                                   logging's "%(asctime)s - %(name)s - %(levelname)s - "
    vllm-1  |                                          docker compose logs
    >                                                  a Markdown quote (a paste quoted in a reply)
    (EngineCore_DP0 pid=123)  (VllmWorker rank=0 pid=9)  (APIServer pid=1)  (RayWorkerWrapper pid=7)
    [rank0]:                                           torch.distributed's per-rank prefix
    [2026-01-26T17:25:37Z]                             a bracketed timestamp (CI logs)
    [Stage-0] [Worker_TP3 pid=540]                     a launcher's tags, where vLLM's logger prefix follows
    INFO 11-30 05:00:00 [core.py:123]                  vLLM's logger (V1 style)
    INFO 06-20 16:09:23 llm_engine.py:164]             vLLM's logger (V0 style)
    ERROR 2026-04-25 10:01:17.340 [connector.py:246]   the same with the year (vllm-ascend)
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence

_VLLM_LOGGER = (
    r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"(?:\[[^\]]*\] ?|[\w.]+:\d+\] )"
)
_PREFIXES = (
    # (the commonest first: each alternative is tried in turn, and none matches where these two do)
    # vLLM / Ray process prefix: "(EngineCore_DP0 pid=1)", "(VllmWorker rank=0 pid=2)", "(pid=3)"
    r"\([^()]*\bpid=\d+[^()]*\)\s+",
    # vLLM logger: "INFO 11-30 05:00:00 [core.py:123] " or "INFO 06-20 16:09:23 llm_engine.py:164] "
    _VLLM_LOGGER,
    # A bracketed timestamp: "[2026-01-26T17:25:37Z] " (CI systems, some log shippers)
    r"\[\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]\s+",
    # RFC 3339 timestamp (kubectl --timestamps, docker -t, journalctl -o short-iso). Only journalctl's form,
    # with a numeric offset, goes on with "host ident[pid]: " (after kubectl's "Z" comes the message, which
    # may well read "Processed prompts: ...").
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"(?:[+-]\d\d:?\d\d\s+(?:(?:[^\s:]+ [\w.@/:-]+(?:\[\d+\])?|[\w.@/-]+\[\d+\]):(?: |$))?|Z?(?:\s+|$))",
    # (journalctl leaves the host out of an entry that has none: "Nov 30 05:00:00 ident[pid]: ")
    # journalctl -o short: "Nov 30 05:00:00 host ident[pid]: "; -o short-full: "Mon 2024-05-01 10:00:00 UTC host
    # ident[pid]: "; -o short-monotonic: "[  123.456789] host ident[pid]: "; -o short-unix: "1714557600.123456 host
    # ident[pid]: "
    r"(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?"
    r"|[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+"
    r"|\[ *\d+\.\d+\]"
    r"|\d{9,11}\.\d+)"
    r" (?:\S+ [^\s:\[]+(?:\[\d+\])?|[^\s:\[]+\[\d+\]):(?: |$)",
    # the CRI log format (a node's /var/log/containers/*.log, shipped by fluent-bit or promtail as it is):
    # "<RFC 3339 time> stderr F <message>", P for a partial line
    r"(?:stdout|stderr) [FP] ",
    # LocalAI's backend output: "4:47PM DBG GRPC(model-127.0.0.1:38441): stderr "
    r"(?:\d{1,2}:\d\d[AP]M [A-Z]{3} )?GRPC\([^()]*\): std(?:err|out) ",
    # a wrapper's Python logging: "ERROR:root:" (basicConfig's default), "- vllm - ERROR - " (after the time)
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.-]+:",
    r"- [\w.-]+ - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - ",
    # a Markdown quote, "> " (nested: "> > ")
    r">+ ?",
    # docker compose: "service-1  | "
    r"[\w.-]+\s+\| ",
    # torch.distributed: "[rank0]: "
    r"\[rank\d+\]:\s?",
    # a tag in brackets or parentheses before a space: a launcher's stage or worker ("[Stage-0] ", "(raylet) "),
    # glog's "[W622 01:26:22.765816358 ProcessGroupNCCL.cpp:1575] ", ninja's "[1/3] "
    r"\[[^\[\]'\"]{1,80}\]\s+",  # (no quotes: a list's repr, "['Qwen2ForCausalLM'] ...", is text)
    r"\([\w.:@-]{1,40}\)\s+",
)
_PREFIX_RE = re.compile("(?:" + "|".join(_PREFIXES) + ")")
# A launcher's or a shipper's own tags before vLLM's logger prefix, in brackets or parentheses ("[Worker_TP3
# pid=540] ", "[Stage-0] ", "[2026-09-09 23:58:37.427][sv-882d...-0-1] "): whatever they say, they end where vLLM's
# prefix begins
_LOGGER_AFTER_TAGS_RE = re.compile(r"(?:\[[^\[\]]{1,120}\]|\([^()]{1,120}\)|\s)+(?=" + _VLLM_LOGGER + ")")
# ANSI colour codes, raw (ESC), as pasted ("^[") or as rsyslog escapes them ("#033"); a paste that lost the ESC
# leaves "[36m" ... "[0m", taken where the reset code "[0m" is on the line.
_ANSI_RE = re.compile(r"(?:\x1b|\^\[|#033)\[[0-9;]*m")
_BARE_ANSI_RE = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")
_MAX_PREFIXES = 8  # no real line stacks more than about five prefixes


def strip_prefixes(line: str) -> str:
    """The message of one log line without the prefixes the tools in the module docstring add."""
    text = line.rstrip("\r\n").lstrip()  # a Markdown code block's indent: no prefix starts with a space
    if "[" in text and ("\x1b" in text or "^[" in text or "#033" in text):
        text = _ANSI_RE.sub("", text)
    if "[0m" in text:
        text = _BARE_ANSI_RE.sub("", text)
    for _ in range(_MAX_PREFIXES):
        m = _PREFIX_RE.match(text)
        if m is None and text[:1] in "[(":
            m = _LOGGER_AFTER_TAGS_RE.match(text)
        if m is None or m.end() == 0:
            break
        text = text[m.end() :]
    return text.strip()


# Structured exports keep one record per line, its text in a field: journalctl -o json ("MESSAGE", a list of
# bytes where the text is not valid UTF-8), docker's json-file driver and Fluentd ("log", ending in "\n"), most
# log shippers and cloud exports ("message", "msg", "textPayload").
_MESSAGE_FIELDS = ("MESSAGE", "log", "message", "msg", "textPayload")


def _message_field(record: object) -> str | None:
    if not isinstance(record, dict):
        return None
    for key in _MESSAGE_FIELDS:
        value = record.get(key)
        if value is None and key in record:
            return ""  # journalctl -o json prints a field over 4096 bytes as null (unless --all)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
            return bytes(value).decode("utf-8", errors="replace")
    return None


def unpack_records(lines: Iterable[str]) -> list[str]:
    """The log's lines with each JSON record (a line holding one object with a message field) replaced by the
    lines of its message; any other line as it is."""
    out: list[str] = []
    for line in lines:
        text = line.strip()
        if text.startswith("{") and text.endswith("}"):
            try:
                message = _message_field(json.loads(text))
            except ValueError:
                message = None
            if message is not None:
                out.extend(message.rstrip("\n").split("\n") if message else [""])
                continue
        out.append(line)
    return out


# What a web page, a forum or a Markdown renderer does to a log it shows, undone: HTML character references
# ("&quot;" for a quote, "&lt;" for "<", "&#39;"), typographic quotes for straight ones, non-breaking and
# zero-width spaces, and Markdown's backslash escapes ("INFO 04-24 10:21:03 \[core.py:12\]", "\_init\_kv").
# A log vLLM printed has none of them.
_ENTITY_RE = re.compile(r"&(?:quot|amp|lt|gt|apos|nbsp|#\d{1,5}|#[xX][0-9a-fA-F]{1,4});")
_MARKDOWN_ESCAPE_RE = re.compile(r"\\([\[\]_*`#<>|])")
_TYPOGRAPHY = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00a0": " ",
        "\u202f": " ",
        "\u200b": "",
        "\ufeff": "",
    }
)


def as_printed_line(line: str) -> str:
    """One line as the process printed it (see above)."""
    if "&" in line:
        line = _ENTITY_RE.sub(lambda m: html.unescape(m.group(0)), line)
    if not line.isascii():
        line = line.translate(_TYPOGRAPHY)
    if "\\" in line:
        line = _MARKDOWN_ESCAPE_RE.sub(r"\1", line)
    return line


def as_printed(lines: Sequence[str]) -> Sequence[str]:
    """The log as the process printed it, where a web page or a Markdown renderer changed it on its way to a
    paste (see above), and without the blank line a page put after every line; ``lines`` itself when nothing
    was changed."""
    out: list[str] | None = None
    for index, line in enumerate(lines):
        if "&" in line or "\\" in line or not line.isascii():
            fixed = as_printed_line(line)
            if fixed != line:
                if out is None:
                    out = list(lines)
                out[index] = fixed
    seq: Sequence[str] = lines if out is None else out
    if _double_spaced(seq):
        return [line for line in seq if line.strip()]
    return seq


def _double_spaced(lines: Sequence[str]) -> bool:
    """Every line of text stands between blank lines (a page that made each line a paragraph): a process's
    own output has runs of lines (a traceback, a start-up) that no blank line parts."""
    if len(lines) < 8:
        return False
    text = 0
    for index, line in enumerate(lines):
        if line.strip():
            text += 1
            if index + 1 < len(lines) and lines[index + 1].strip():
                return False
    return text >= 4
