"""Log-line prefixes: strip what journalctl, docker, kubectl and vLLM put before a message.

The classifier matches on substrings, so it works with or without prefixes; stripping is for
evidence a person reads and for rules anchored at the start of a message (argparse errors,
exception lines of a traceback).

ANSI colour codes are dropped first, also where a paste lost their ESC ("[36m(pid=1)[0m"). Prefixes
handled, outermost first (each may or may not be there)::

    2024-05-01T10:00:00.123456789Z                     kubectl logs --timestamps, docker logs -t
    2024-05-01 10:00:00.123 UTC                        a console or an export that names the zone
    <14>1 2024-05-01T10:00:00Z host vllm 42 - -        a syslog collector (RFC 5424; "<14>" alone before RFC 3164)
         42<TAB>                                     cat -n's line number
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
    |                                                  an exception group's margin (Python's traceback module)
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
    r"(?:[+-]\d\d:?\d\d\s+(?:(?:[^\s:]+ [\w.@/:-]+(?:\[\d+\])?|[\w.@/-]+\[\d+\]):(?: |$))?|(?:Z| UTC| GMT)?(?:\s+|$))",
    # a syslog record forwarded to a collector: its priority ("<14>"), and RFC 5424's version, time, host, app,
    # process id, message id and structured data ("<14>1 2024-05-01T10:00:00Z gpu-host vllm 4242 - - ")
    r"<\d{1,3}>(?:1 \S+ \S+ \S+ \S+ \S+ (?:-|\[[^\]]*\])+ )?",
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
    # a line number and a tab (cat -n, an editor's copy with its numbers)
    r"\d{1,7}\t",
    # a Markdown quote, "> " (nested: "> > ")
    r">+ ?",
    # the margin Python's traceback module draws around an exception group's members (3.11+, and the exceptiongroup
    # backport: anyio's and starlette's task groups): "  | Traceback ...", "  |   File ...", "    | AssertionError"
    r"\s*\|(?: |$)",
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
# zero-width spaces, Markdown's backslash escapes ("INFO 04-24 10:21:03 \[core.py:12\]", "\_init\_kv") and links
# ("File [~/x/cache_engine.py:64](http://host/lab/tree/x/cache_engine.py#line=63), in CacheEngine._allocate_kv_cache").
# A log vLLM printed has none of them.
_ENTITY_RE = re.compile(r"&(?:quot|amp|lt|gt|apos|nbsp|#\d{1,5}|#[xX][0-9a-fA-F]{1,4});")
_MARKDOWN_LINK_RE = re.compile(r"\[([^\[\]]+)\]\((?:https?|file)://[^)\s]*\)")  # JupyterLab's links to a frame's file
_MARKDOWN_ESCAPE_RE = re.compile(r"\\([\[\]_*`#<>|])")
_TYPOGRAPHY = {
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
_TYPOGRAPHY_RE = re.compile("[" + "".join(_TYPOGRAPHY) + "]")


def as_printed_line(line: str) -> str:
    """One line as the process printed it (see above)."""
    if "&" in line:
        line = _ENTITY_RE.sub(lambda m: html.unescape(m.group(0)), line)
    if not line.isascii() and _TYPOGRAPHY_RE.search(line):
        line = _TYPOGRAPHY_RE.sub(lambda m: _TYPOGRAPHY[m.group(0)], line)
    if "\\" in line:
        line = _MARKDOWN_ESCAPE_RE.sub(r"\1", line)
    if "](" in line:
        line = _MARKDOWN_LINK_RE.sub(r"\1", line)
    return line


def as_printed(lines: Sequence[str]) -> Sequence[str]:
    """The log as the process printed it, where a web page or a Markdown renderer changed it on its way to a
    paste (see above), without the blank line a page put after every line, and with the lines a terminal
    broke at its width joined again; ``lines`` itself when nothing was changed."""
    out: list[str] | None = None
    for index, line in enumerate(lines):
        if "&" in line or "\\" in line or "](" in line or not line.isascii():
            fixed = as_printed_line(line)
            if fixed != line:
                if out is None:
                    out = list(lines)
                out[index] = fixed
    seq: Sequence[str] = lines if out is None else out
    if _double_spaced(seq):
        seq = [line for line in seq if line.strip()]
    return _unwrapped(_without_own_prefix(seq))


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


# A paste from a terminal that broke each long line at its width (a console, tmux's or screen's copy mode): the
# line that filled the width goes on in the next one, which starts anywhere in a word. The lines that fill
# the widest width are not a log's own unless the next line begins what a log's line begins with.
_MIN_WRAP_WIDTH = 60
_RECORD_START_RE = re.compile(
    r"(?:\s\s|\t|$|Traceback|During handling|The above exception"
    r"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b"  # a logger's level
    r"|\d{4}-\d\d-\d\d|\d\d-\d\d \d\d:|[A-Z][a-z]{2} [ \d]\d \d\d:"  # a time stamp
    r"|\([^()\s]*(?: [^()\s]+)*? ?pid=\d+\)"  # vLLM's and Ray's process prefixes
    r"|[\[│]|[\w.-]+:\d+:\d+ \["  # a tag, a pager's frame, NCCL's "host:pid:tid [dev]"
    r"|[\w.]+(?:Error|Exception|Warning|Interrupt|Exit)\b)"  # an exception
)
_MAX_WRAP_WIDTH = 512  # no terminal is wider
_TRIMMED = 2  # the spaces a paste may trim from the end of a terminal's piece


def _unwrapped(lines: Sequence[str]) -> Sequence[str]:
    width = max((len(line) for line in lines), default=0)
    if not _MIN_WRAP_WIDTH <= width <= _MAX_WRAP_WIDTH:
        return lines
    # A terminal breaks a line at the width itself (a paste may then trim the spaces a piece ended with); a renderer
    # or an editor breaks it before the word that would cross the width.
    cut: list[int] = []  # lines that reach the width, but for trimmed spaces, and go on in the next
    before_a_word: list[int] = []  # lines the next one's first word would have taken past the width
    full = near = 0  # the lines that could be such pieces, whether or not the next line goes on
    for i in range(len(lines) - 1):
        n = len(lines[i])
        if n >= width - _TRIMMED:
            full += 1
            if _goes_on(lines, i):
                cut.append(i)
        elif 2 * n >= width and n + 1 + len(lines[i + 1].split(" ", 1)[0]) > width:
            near += 1
            if _goes_on(lines, i):
                before_a_word.append(i)
    # a piece that lost its trailing space, or a line that goes on with one space first, was broken where no renderer
    # breaks: at the width, by a terminal
    terminal = any(len(lines[i]) < width or lines[i + 1][:1] == " " != lines[i + 1][1:2] for i in cut)
    if not before_a_word and len(cut) < 3 and not terminal:
        return lines  # two lines that fill the width: a terminal's or a renderer's break, no telling which
    hard = 2 * len(before_a_word) < len(cut)
    breaks = cut if hard else cut + before_a_word
    if len({lines[i] for i in breaks}) < 2:
        return lines  # one line again and again: a log's own line repeated, not the pieces of longer ones
    # every line but the last goes on in the next: one message broken (two lines alone may as well be two
    # messages); else most of the lines that could be pieces must go on
    if len(breaks) < len(lines) - 1 and 2 * len(breaks) < (full if hard else full + near):
        return lines
    out: list[str] = []
    joining = False
    for index, line in enumerate(lines):
        if not joining:
            out.append(line)
        elif hard:  # the spaces the paste trimmed back, if any: up to the next multiple of the width
            out[-1] += " " * (-len(out[-1]) % width) + line
        else:
            out[-1] += line if out[-1].endswith(" ") else " " + line
        joining = index in breaks
    return out


def _goes_on(lines: Sequence[str], index: int) -> bool:
    """Whether line ``index + 1`` goes on with line ``index`` rather than beginning a line of the log's own: it
    does not begin as log lines begin (a level, a time, a traceback's parts, any prefix this module strips), nor
    as the line before it began (a prefix of a kind it does not know, repeated)."""
    line, nxt = lines[index], lines[index + 1]
    if _RECORD_START_RE.match(nxt) or (nxt[:1] == " " and line[-1:] == " "):
        return False
    # the same start as the line before: a prefix of the log's own ("<font ...>", "- **"); words that merely
    # begin alike are not one
    same = 8 if nxt[:1].isalnum() else 3
    if len(nxt) >= same and nxt[:same] == line[:same]:
        return False
    return not _known_prefix_at(nxt, 0)


# A prefix of a kind the table above does not know, put before every line by whatever shipped the log ("node-7 ::
# vllm >> ", "12:00:01.123 W0 ", an editor's line numbers): the same characters, or the same shape with other
# numbers, before every line of text.
_DIGIT_RUN_RE = re.compile(r"\d+")
_PREFIX_SPAN = 64  # a shipper's prefix is shorter than this
_SEPARATORS = " \t|:>]"
_LABEL_RE = re.compile(r"[A-Za-z]+: ?")
_FRAME_SIDES = "│┃║|"


def _shape(line: str) -> str:
    return _DIGIT_RUN_RE.sub("0", line[:_PREFIX_SPAN])


def _shape_re(shape: str) -> re.Pattern[str]:
    return re.compile("".join(r"\d+" if ch == "0" else re.escape(ch) for ch in shape))


def _known_prefix_at(line: str, index: int) -> bool:
    rest = line[index:]
    return len(strip_prefixes(rest)) < len(rest.strip())


def _without_own_prefix(lines: Sequence[str]) -> Sequence[str]:
    texts = (line for line in lines if line.strip())  # read lazily: most logs show at once they have none
    first = next(texts, "")
    if not first or _known_prefix_at(first, 0):
        return lines  # a prefix the table knows is left to it (vLLM's logger, a journal's, docker compose's)
    common = _shape(first)
    count = 1
    for line in texts:
        count += 1
        shape = _shape(line)
        n = 0
        while n < len(common) and n < len(shape) and common[n] == shape[n]:
            n += 1
        common = common[:n]
        if len(common) < 2:
            return lines
    ends = [k + 1 for k, ch in enumerate(common) if ch in _SEPARATORS and k >= 1]
    if count < 3 or not ends:
        return lines
    cut = ends[-1]  # the prefix ends at a separator, never inside a word
    for k in ends:  # up to where one the table knows begins ("│ " before "INFO 03-21 20:15:44 [worker.py:267] ")
        m = _shape_re(common[:k]).match(first)
        if m is not None and _known_prefix_at(first, m.end()):
            cut = k
            break
    prefix = common[:cut]
    if not prefix.strip() or _LABEL_RE.fullmatch(prefix):
        return lines  # "ERROR: " before every line is a message's own word
    rx = _shape_re(prefix)
    # a pane's or a pager's frame closes every line too ("│ INFO ... │"): its right side goes with its left
    bar = prefix.rstrip()[-1:]
    framed = bar in _FRAME_SIDES and all(line.rstrip().endswith(bar) for line in lines if line.strip())
    out = []
    for line in lines:
        m = rx.match(line)
        text = line[m.end() :] if m is not None else line
        out.append(text.rstrip()[:-1].rstrip() if framed and text.strip() else text)
    return out
