"""The journal: follow what the vLLM units, PID 1 and the kernel say, and send the guard's events.

``JournalFollower`` reads through python-systemd's ``systemd.journal.Reader`` with journal matches, so
the reader never decodes unrelated entries::

    follower = JournalFollower(["vllm-qwen.service"], cursor=saved_cursor)
    tracker = AttemptTracker(["vllm-qwen.service"])
    while running:
        if follower.wait(1.0):                       # or poll follower.fileno() in your own loop
            for event in tracker.feed_all(follower.read()):
                ...
        save(follower.cursor, tracker.snapshot())    # resume later without losing or repeating an entry

The descriptor ``fileno()`` stays the same for the follower's whole life (an epoll set holding the
journal's inotify descriptor), also when the journal is reopened after an INVALIDATE (rotation,
vacuum, files added or removed).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from systemd import journal

from vllm_guard.core.attempt import (
    Entry,
    is_kernel_line_of_interest,
    kernel_line_pid,
    kernel_line_unit,
    unit_line_pids,
)
from vllm_guard.core.events import Event

# Fields of an entry kept in ``Entry.fields`` (the rest is not needed to tell attempts apart).
KEPT_FIELDS: Final = (
    "MESSAGE_ID",
    "PRIORITY",
    "SYSLOG_IDENTIFIER",
    "_TRANSPORT",
    "_COMM",
    "EXIT_CODE",
    "EXIT_STATUS",
    "UNIT_RESULT",
    "N_RESTARTS",
    "JOB_TYPE",
    "JOB_RESULT",
    "JOB_ID",
)
# Entries looked at per read() for each one it may hand out: bounds the work of a read() through
# kernel lines and other entries that the matches let through but the guard does not need.
READ_BUDGET_FACTOR: Final = 4
# PIDs remembered to name the unit of a kernel line (a few restarts' worth of vLLM processes).
PID_OWNERS_MAX: Final = 1024
# When the journal's descriptor is not reliable (journal on a network file system), sd-journal asks
# to be polled at least this often; 250 ms is what journalctl uses for --follow in that case.
UNRELIABLE_POLL_S: Final = 0.25

_RawEntry = dict[str, Any]


def _text(value: Any) -> str:
    if isinstance(value, list):  # a field repeated in one entry: keep the last
        value = value[-1]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


class JournalFollower:
    """Follows the journal entries about some units from a cursor, a bounded batch per ``read()``.

    Where to begin: ``cursor`` (the entry after it), else ``since_now`` (entries written from now on),
    else the oldest entry. Which journal: the local system journal, or the files in ``path`` (a
    directory; files added or removed there are seen), or exactly ``files`` (new files are not).
    """

    def __init__(
        self,
        units: Sequence[str],
        *,
        cursor: str | None = None,
        path: Path | None = None,
        files: Sequence[Path] | None = None,
        since_now: bool = False,
    ) -> None:
        if not units:
            raise ValueError("JournalFollower needs at least one unit")
        self._units = tuple(units)
        self._unit_bytes = {u.encode(): u for u in self._units}
        self._path = path
        self._files = tuple(files) if files else None
        self._cursor = cursor
        self._since_now = since_now and cursor is None
        self._dedupe = False  # after a seek to the cursor: skip the entry the cursor names
        self._invalidated = False
        self._pid_owner: OrderedDict[int, str] = OrderedDict()
        self._epoll = select.epoll()
        # Readable while a read() stopped at its budget before the end: the same poll wakes the caller.
        self._more = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._epoll.register(self._more, select.EPOLLIN)
        self._caught_up = True
        self._set_caught_up(False)  # nothing read yet: there may be entries
        self._reader: Any = None
        self._journal_fd = -1
        self.reopens = 0  # how many times the journal was reopened after INVALIDATE
        self._open()

    # -- public --

    @property
    def cursor(self) -> str | None:
        """The cursor of the last entry read (handed out, or looked at and found unrelated)."""
        return self._cursor

    @property
    def caught_up(self) -> bool:
        """True when the last ``read()`` reached the end of the journal."""
        return self._caught_up

    def fileno(self) -> int:
        """A descriptor to poll for readability; stable across reopens."""
        return self._epoll.fileno()

    def wait(self, timeout_s: float) -> bool:
        """Block until the journal changed or ``timeout_s`` passed; True when there may be new entries."""
        if not self._caught_up:
            return True  # the last read() stopped at its budget
        if not self._reader.reliable_fd():
            timeout_s = min(timeout_s, UNRELIABLE_POLL_S)
        self._epoll.poll(max(timeout_s, 0.0))
        state = self._reader.process()
        if state == journal.INVALIDATE:
            self._invalidated = True
        return bool(state != journal.NOP)

    def read(self, max_entries: int = 1000) -> list[Entry]:
        """Up to ``max_entries`` new entries, decoded, after looking at no more than ``max_entries * 4``.

        ``caught_up`` tells whether it reached the end; when it did not, ``fileno()`` stays readable and
        ``wait()`` returns at once, so a loop that waits before each read never stalls.
        """
        if self._reader.process() == journal.INVALIDATE or self._invalidated:
            self._reopen()
        out: list[Entry] = []
        reader = self._reader
        budget = max_entries * READ_BUDGET_FACTOR
        caught_up = False
        while len(out) < max_entries:
            if budget <= 0:
                break
            budget -= 1
            if not reader._next():
                caught_up = True
                break
            if self._dedupe and self._already_seen(reader):
                continue
            self._cursor = reader._get_cursor()
            entry = self._decode(reader)
            if entry is not None:
                out.append(entry)
        self._set_caught_up(caught_up)
        return out

    def _set_caught_up(self, caught_up: bool) -> None:
        if caught_up == self._caught_up:
            return
        self._caught_up = caught_up
        if caught_up:
            with contextlib.suppress(BlockingIOError):
                os.eventfd_read(self._more)
        else:
            os.eventfd_write(self._more, 1)

    def close(self) -> None:
        if self._epoll.closed:
            return
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._epoll.close()
        os.close(self._more)

    def __enter__(self) -> JournalFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- opening and positioning --

    def _open(self) -> None:
        if self._files is not None:
            reader = journal.Reader(files=[str(f) for f in self._files])
        elif self._path is not None:
            reader = journal.Reader(path=str(self._path))
        else:
            reader = journal.Reader(flags=journal.LOCAL_ONLY | journal.SYSTEM)
        self._add_matches(reader)
        if self._cursor is not None:
            reader.seek_cursor(self._cursor)
            self._dedupe = True
        elif self._since_now:
            reader.seek_tail()
            if reader._previous():
                self._cursor = reader._get_cursor()
            else:
                # Nothing matches yet: a seek to the tail would stay unresolved until the first read and then
                # skip what the unit wrote in between (a start that fails in its first 0.1 s). From the head,
                # every entry that matches is one written from now on.
                reader.seek_head()
            self._since_now = False
            self._dedupe = False
        else:
            reader.seek_head()
        fd = reader.fileno()  # sets up the inotify watches before the first read
        events = reader.get_events()
        self._epoll.register(fd, events)
        self._reader = reader
        self._journal_fd = fd
        self._invalidated = False

    def _reopen(self) -> None:
        if self._reader is not None:
            self._epoll.unregister(self._journal_fd)
            self._reader.close()
            self._reader = None
        self.reopens += 1
        self._open()

    def _add_matches(self, reader: Any) -> None:
        # (_SYSTEMD_UNIT=a OR ...) OR ((UNIT=a OR ...) AND _PID=1) OR _TRANSPORT=kernel,
        # the same terms journalctl -u uses, plus the kernel for its OOM lines.
        for unit in self._units:
            reader.add_match(_SYSTEMD_UNIT=unit)
        reader.add_disjunction()
        for unit in self._units:
            reader.add_match(UNIT=unit)
        reader.add_match(_PID="1")
        reader.add_disjunction()
        reader.add_match(_TRANSPORT="kernel")

    def _already_seen(self, reader: Any) -> bool:
        """Right after a seek to the cursor: is the reader on an entry handed out before?"""
        assert self._cursor is not None
        if reader.test_cursor(self._cursor):
            return True  # the entry the cursor names; the next one is new
        self._dedupe = False
        # The cursor's entry is gone (vacuumed) or the seek landed elsewhere: skip what the
        # sequence numbers of the same journal show as older.
        last = _seqnum(self._cursor)
        here = _seqnum(reader._get_cursor())
        if last and here and last[0] == here[0] and here[1] <= last[1]:
            self._dedupe = True
            return True
        return False

    # -- decoding --

    def _decode(self, reader: Any) -> Entry | None:
        raw: _RawEntry = reader._get_all()
        transport = raw.get("_TRANSPORT")
        message = _text(raw.get("MESSAGE", b""))
        if transport == b"kernel":
            if not is_kernel_line_of_interest(message):
                return None
            unit = kernel_line_unit(message)
            if unit not in self._units:
                pid = kernel_line_pid(message)
                unit = self._pid_owner.get(pid, "") if pid is not None else ""
            return self._entry(reader, raw, "kernel", unit or "", None, message)
        pid_raw = raw.get("_PID")
        unit_raw = raw.get("UNIT")
        if pid_raw == b"1" and unit_raw in self._unit_bytes:
            inv = raw.get("INVOCATION_ID")
            return self._entry(reader, raw, "pid1", self._unit_bytes[unit_raw], inv, message)
        own = raw.get("_SYSTEMD_UNIT")
        if own in self._unit_bytes:
            unit = self._unit_bytes[own]
            entry = self._entry(reader, raw, "unit", unit, raw.get("_SYSTEMD_INVOCATION_ID"), message)
            for pid in unit_line_pids(entry.pid, message):
                self._remember(pid, unit)
            return entry
        return None

    def _entry(self, reader: Any, raw: _RawEntry, source: str, unit: str, inv: Any, message: str) -> Entry:
        pid_raw = raw.get("_PID")
        pid_text = _text(pid_raw) if pid_raw is not None else ""
        boot = raw.get("_BOOT_ID")
        return Entry(
            cursor=self._cursor or reader._get_cursor(),
            realtime_us=reader._get_realtime(),
            monotonic_us=reader._get_monotonic()[0],
            boot_id=_text(boot) if boot is not None else None,
            source=source,
            unit=unit,
            invocation_id=_text(inv) if inv else None,
            pid=int(pid_text) if pid_text.isdigit() else None,
            message=message,
            fields={k: _text(raw[k]) for k in KEPT_FIELDS if k in raw},
        )

    def _remember(self, pid: int, unit: str) -> None:
        owners = self._pid_owner
        if owners.get(pid) == unit:
            owners.move_to_end(pid)
            return
        owners[pid] = unit
        owners.move_to_end(pid)
        while len(owners) > PID_OWNERS_MAX:
            owners.popitem(last=False)


def _seqnum(cursor: str) -> tuple[str, int] | None:
    """(seqnum id, seqnum) from a cursor ``s=...;i=...;b=...``; None when it has none."""
    parts = dict(p.split("=", 1) for p in cursor.split(";") if "=" in p)
    try:
        return parts["s"], int(parts["i"], 16)
    except (KeyError, ValueError):
        return None


Sender = Callable[..., object]


_kernel_seen = False


def kernel_log_visible() -> bool | None:
    """Whether the local journal holds kernel messages of this boot: journald reads /dev/kmsg on a host, not
    in most containers. Where it does not, a missing kernel OOM line proves nothing. None: unreadable."""
    global _kernel_seen
    if _kernel_seen:
        return True
    try:
        reader = journal.Reader(flags=journal.LOCAL_ONLY | journal.SYSTEM)
    except OSError:
        return None
    try:
        reader.this_boot()
        reader.add_match(_TRANSPORT="kernel")
        reader.seek_head()
        _kernel_seen = bool(reader.get_next())
    except OSError:
        return None
    finally:
        reader.close()
    return _kernel_seen


def send_event(event: Event, *, sender: Sender | None = None) -> bool:
    """Write one guard event to the journal; False when journald could not take it."""
    send = sender if sender is not None else journal.send
    try:
        send(event.message, **event.journal_fields())
    except OSError:
        return False
    return True


# -- the guard's events in a folder of journal files (a collector's, as systemd-journal-remote writes it)

# systemd-journal-remote names each sender's file remote-HOST.journal (archived: remote-HOST@....journal,
# a damaged one set aside: ...journal~), HOST being the sender's name or address.
_REMOTE_FILE = re.compile(r"^remote-(?P<host>.+?)(?:@[^@]*)?\.journal~?$")
_EVENT_PREFIX = "VLLM_GUARD_"


@dataclass(frozen=True)
class GuardEntry:
    """One guard event read from a journal file: when, which host, and its ``VLLM_GUARD_*`` fields."""

    at: float  # seconds since the epoch (the entry's realtime stamp)
    host: str  # _HOSTNAME, else the HOST of the file's remote-HOST name, else ""
    file_host: str  # the HOST of the file's remote-HOST name ("" for another name)
    event: str  # VLLM_GUARD_EVENT (failure_detected, remedy_applied, ...)
    unit: str  # VLLM_GUARD_UNIT ("" for events about the guard itself)
    message: str
    fields: dict[str, str]  # the VLLM_GUARD_* fields without the prefix
    pid: str = ""

    def matches_host(self, host: str) -> bool:
        """Whether this entry is of ``host``: its _HOSTNAME or the name in its file's name."""
        return host in (self.host, self.file_host)


def journal_files(folder: Path) -> list[Path]:
    """The journal files in ``folder`` and in its sub-folders one level down (/var/log/journal/MACHINE-ID/)."""
    found = [p for p in folder.iterdir() if p.is_file() and _is_journal_file(p.name)]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        with contextlib.suppress(OSError):
            found += [p for p in sub.iterdir() if p.is_file() and _is_journal_file(p.name)]
    return sorted(found)


def _is_journal_file(name: str) -> bool:
    return name.endswith((".journal", ".journal~"))


def file_host(path: Path) -> str:
    """HOST of a file named remote-HOST.journal (or an archived remote-HOST@....journal); "" otherwise."""
    m = _REMOTE_FILE.match(path.name)
    return m.group("host") if m else ""


def read_guard_events(
    folder: Path,
    *,
    unit: str | None = None,
    host: str | None = None,
    files: Sequence[Path] | None = None,
    on_error: Callable[[Path, OSError], None] | None = None,
) -> list[GuardEntry]:
    """Every guard event in the journal files of ``folder`` (``unit``: of that vLLM unit only; ``host``: of that
    host only, by _HOSTNAME or the file's name), oldest first. The files of one sender are read together, so
    sd-journal interleaves them; the senders' entries are then merged by time.

    A file that cannot be opened (damaged, not a journal, unreadable) raises OSError, or with ``on_error`` is
    handed to it and left out, as journalctl -D leaves such files out."""
    by_host: dict[str, list[Path]] = {}
    for path in files if files is not None else journal_files(folder):
        by_host.setdefault(file_host(path), []).append(path)
    out: list[GuardEntry] = []
    for named, paths in sorted(by_host.items()):
        try:
            reader = journal.Reader(files=[str(p) for p in paths])
        except OSError:
            if on_error is None:
                raise
            paths = _openable(paths, on_error)
            if not paths:
                continue
            reader = journal.Reader(files=[str(p) for p in paths])
        try:
            reader.add_match(SYSLOG_IDENTIFIER="vllm-guard")
            if unit is not None:
                reader.add_match(VLLM_GUARD_UNIT=unit)
            reader.seek_head()
            while reader._next():
                raw: _RawEntry = reader._get_all()
                event = raw.get("VLLM_GUARD_EVENT")
                if event is None:
                    continue  # a line the guard's process printed, not one of its events
                fields = {k[len(_EVENT_PREFIX) :]: _text(v) for k, v in raw.items() if k.startswith(_EVENT_PREFIX)}
                hostname = _text(raw["_HOSTNAME"]) if "_HOSTNAME" in raw else ""
                entry = GuardEntry(
                    at=reader._get_realtime() / 1e6,
                    host=hostname or named,
                    file_host=named,
                    event=_text(event),
                    unit=fields.get("UNIT", ""),
                    message=_text(raw.get("MESSAGE", b"")),
                    fields=fields,
                    pid=_text(raw["_PID"]) if "_PID" in raw else "",
                )
                if host is None or entry.matches_host(host):
                    out.append(entry)
        finally:
            reader.close()
    out.sort(key=lambda e: e.at)
    return out


def _openable(paths: Sequence[Path], on_error: Callable[[Path, OSError], None]) -> list[Path]:
    """The files sd-journal opens one by one; the others are handed to ``on_error``."""
    good = []
    for path in paths:
        try:
            journal.Reader(files=[str(path)]).close()
        except OSError as err:
            on_error(path, err)
            continue
        good.append(path)
    return good
