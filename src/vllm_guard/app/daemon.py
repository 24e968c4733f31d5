"""The daemon: one loop over the journal's descriptor, a wake-up pipe and timers.

Each turn: read a bounded batch of journal entries, feed them to the attempt tracker, act on what it
reports (classify a failed attempt, decide, record the intent, rewrite the env file, talk to systemd),
collect finished probes, run due timers (VRAM wait, liveness probes, memory pressure, watchdog), save the
state when it changed. Probes run in worker threads because they wait on the network; everything they
report is handled here, in the loop.

The daemon is the last of four layers, one file each: ``guard_core`` (state, events, env files, the files a
target waits for), ``remedy_executor`` (decide on a failure, then plan, apply and finish the step exactly
once), ``probe_supervisor`` (start and liveness probes, dead engines) and this loop (journal, timers,
signals, the notify protocol, reload).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

from vllm_guard import __version__
from vllm_guard.adapters.modelfs import load_model_info
from vllm_guard.adapters.notify import watchdog_interval_s
from vllm_guard.app.config_load import load_config
from vllm_guard.app.gpus import Gpu
from vllm_guard.app.guard_core import (
    CLASSIFY_GRACE_S,
    CURSOR_SAVE_S,
    FAST_POLL_S,
    FILES_POLL_S,
    IDLE_WAKE_S,
    MAX_ENTRIES_PER_TURN,
    PRESSURE_REPEAT_S,
    VRAM_POLL_S,
    Deps,
    LiveUnit,
    Systemctl,
)
from vllm_guard.app.probe_supervisor import ProbeSupervisor
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
from vllm_guard.core.events import EventKind
from vllm_guard.core.evidence import GpuSeen, Observed, oom_unplaced, weigh
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import Basis, Confidence, FailureKind
from vllm_guard.core.policy import Action
from vllm_guard.core.preflight import check_cpu, check_gpu
from vllm_guard.core.pressure import judge_pressure
from vllm_guard.core.state import AttemptRecord, TargetState, base_current, base_hash
from vllm_guard.core.where import begin_after_move, known_good_key, visible_indices
from vllm_guard.errors import GuardError

# Before READY=1 the guard acts on the journal's backlog for at most this long (the unit's TimeoutStartSec= is
# 90 s): a vLLM start that waits for the guard then reads the flags its failures called for.
CATCH_UP_S = 30.0

MIB = 1 << 20
METRICS_REFRESH_S = 60.0  # the metrics file is rewritten at least this often (its timestamp is a heartbeat)

__all__ = ["Daemon", "Deps", "Systemctl"]


class Daemon(ProbeSupervisor):
    """The loop: the journal, timers, signals, the notify protocol and reloads."""

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
            if ts.pending is None and (t.preflight or self.loaded.config.guard.preflight) == "fit":
                self.preflight(t, ts)
        for unit in list(self.state.targets):
            if self.target_of(unit) is None:
                del self.state.targets[unit]
                self.dirty = True

    def preflight(self, t: Target, ts: TargetState) -> None:
        """Before a first start on the base flags (after an install, a config change, a move where no flags were
        verified), check them with the planner and start from a shorter max_model_len when they cannot fit."""
        if ts.current is None or ts.current != base_current(t):
            return  # flags the guard chose already (a remedy, the last-known-good): they answer to real starts
        if self.active_state(t) in ("active", "activating", "reloading", "deactivating"):
            return  # it runs (or starts) on these flags already: its own outcome will tell
        gpus = None if t.device == "cpu" else self.deps.gpus()
        where = self.deps.where(t, gpus)
        if known_good_key(ts.current.model, where) in ts.known_good:
            return  # verified here before
        try:
            info = load_model_info(self.paths.under(ts.current.model.lstrip("/")))
        except (GuardError, OSError, ValueError) as err:
            self.emit(EventKind.PREFLIGHT, f"{t.unit_file}: preflight skipped: {err}", t, REASON=str(err))
            return
        if t.device == "cpu":
            space = ts.current.flags.cpu_kvcache_space_gib
            raw = t.environment.get("VLLM_CPU_KVCACHE_SPACE", "")
            if space is None and raw.strip().isdigit():
                space = int(raw)
            fit = check_cpu(t, ts.current, info, space)
        else:
            wanted = visible_indices(t.environment)
            seen = {g.index: g.cuda_total_mib * MIB for g in gpus or []}
            sizes = [seen[i] for i in wanted if i in seen] if wanted is not None else list(seen.values())
            names = {g.index: g.name for g in gpus or []}
            order = [i for i in wanted if i in names] if wanted is not None else list(names)
            sampler = self.deps.flashinfer(t, where.vllm)
            by_index = {g.index: g for g in gpus or []}
            ranks = [by_index[i] for i in order[: ts.current.flags.tensor_parallel_size]]
            fit = check_gpu(
                t,
                ts.current,
                info,
                sizes,
                vllm_version=where.vllm,
                flashinfer_sampler=sampler,
                gpu_name=names[order[0]] if order else None,  # vLLM reads the first visible device's name
                held_by_others=max((sum(h.used_mib for h in g.holders) * MIB for g in ranks), default=0),
            )
        before = ts.current
        if fit.current is None:
            self.emit(EventKind.PREFLIGHT, f"{t.unit_file}: preflight: {fit.reason}", t, REASON=fit.reason)
            return
        ts.current = fit.current
        self.write_env(t, fit.current)
        ts.log_env(self.now(), fit.current)
        self.dirty = True
        self.emit(
            EventKind.PREFLIGHT,
            f"{t.unit_file}: preflight lowered max_model_len {before.flags.max_model_len or 'unset'} -> "
            f"{fit.current.flags.max_model_len}",
            t,
            REASON=fit.reason,
            CHANGE=f"max_model_len {before.flags.max_model_len or 'unset'} -> {fit.current.flags.max_model_len}",
            FLAGS_BEFORE=before.flags.describe(),
            FLAGS_AFTER=fit.current.flags.describe(),
            ENV_FILE=str(self.paths.env_file_on_host(t.unit)),
        )

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

    def on_started(self, target: Target, ts: TargetState, live: LiveUnit, ev: AttemptStarted) -> None:
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
        self, target: Target, ts: TargetState, live: LiveUnit, attempt: Attempt, verdict: Failure | None = None
    ) -> None:
        if attempt.invocation_id in ts.handled:
            return
        self._note_platform(ts, attempt.lines)
        failure = verdict if verdict is not None else classify(attempt.lines, attempt.outcome())
        failure = self.weigh_observed(target, ts, live, attempt, failure)
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
        ran = self.ran_with(ts, attempt.lines, rec.started)
        if ran is not None:
            rec.ran_model, rec.ran_flags = ran
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
        self.report_failure(
            target,
            ts,
            failure,
            attempt.invocation_id,
            f"{target.unit_file}: attempt failed: {failure.kind.value} ({failure.phase.value})"
            + (f": {failure.evidence[0]}" if failure.evidence else ""),
            list(failure.evidence[:5]),
        )
        self.remedy(target, ts, failure, attempt.invocation_id, exited_cleanly=clean_exit)

    def weigh_observed(
        self, target: Target, ts: TargetState, live: LiveUnit, attempt: Attempt, failure: Failure
    ) -> Failure:
        """A weak verdict weighed against what the guard saw of the attempt (core/evidence.py); the GPUs and
        the kernel's log are read only when a rule could use them."""
        kv = failure.kind is FailureKind.KV_CACHE_INSUFFICIENT
        if failure.confidence is not Confidence.LOW and not kv:
            return failure
        inv = attempt.invocation_id
        verified = ts.last_verified
        passed = live.verified_invocation == inv or (verified is not None and verified.invocation_id == inv)
        ready_s = verified.time_to_ready_s if verified is not None and verified.invocation_id != inv else None
        lived = (attempt.ended_us - attempt.started_us) / 1e6 if attempt.ended_us is not None else None
        oom = oom_unplaced(failure)
        gpus: list[GpuSeen] | None = None
        if (oom or kv) and not passed:
            mine = set(attempt.pids)
            read = self.deps.gpus()
            wanted = visible_indices(target.environment)  # the unit's GPUs only: another GPU's holders are no cause
            if read:
                gpus = [
                    GpuSeen(
                        g.cuda_total_mib,
                        g.free_mib,
                        tuple((h.pid, h.command, h.used_mib) for h in g.holders if h.pid not in mine),
                    )
                    for g in read
                    if wanted is None or g.index in wanted
                ]
        kill = failure.kind is FailureKind.HOST_OOM_KILLED
        cur = ts.current or base_current(target)
        seen = Observed(
            probe_passed=passed,
            lived_s=lived,
            healthy_ready_s=ready_s,
            gpus=gpus,
            util=cur.flags.gpu_memory_utilization,
            kernel_log_visible=self.deps.kernel_log() if kill and not attempt.kernel_oom else None,
            kernel_oom=attempt.kernel_oom,
            memory_pressure=self.pressure_warning.get(target.unit, False)
            or self._pressure_high_since.get(target.unit) is not None,
        )
        return weigh(failure, seen)

    def on_amended(self, target: Target, ts: TargetState, live: LiveUnit, attempt: Attempt) -> None:
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
            if warn != was:
                self._metrics_due = True
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
            self.live.setdefault(t.unit, LiveUnit())
        self.reconcile()
        self.emit(EventKind.CONFIG_RELOADED, "configuration reloaded")
        units = [t.unit_file for t in self.targets]
        if set(units) != set(self.tracker.units):
            self._open_journal(fresh_tracker=True)

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
                    below_base_since=ts.below_base_since(base_current(t)),
                )
            )
        pressure = [
            PressureSample("host_memory", active, unit=f"{unit}.service")
            for unit, active in self.pressure_warning.items()
        ]
        path = self.paths.under(g.metrics_path.lstrip("/"))
        self._metrics_at, self._metrics_due = time.monotonic(), False
        try:
            write_textfile(path, MetricsSnapshot(up=up, written_at=self.now(), targets=targets, pressure=pressure))
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

    def take_journal(self) -> int:
        """Read one bounded batch of journal entries and act on what they report; how many there were."""
        self.follower.wait(0)
        entries = self.follower.read(MAX_ENTRIES_PER_TURN)
        for ev in self.tracker.feed_all(entries) if entries else ():
            try:
                self.on_event(ev)
            except Exception as err:  # one bad entry never kills the loop
                print(f"vllm-guard: error handling {type(ev).__name__}: {err!r}", file=sys.stderr)
        # after the events: a start in this batch cleared its unit's lines (on_started), and the lines of the
        # batch that belong to it must outlive that; lines of an earlier start of the unit are not its evidence
        for entry in entries:
            if entry.source == "unit":
                target = self.target_of(entry.unit)
                if target is not None:
                    live = self.live[target.unit]
                    if entry.invocation_id is None or live.invocation in (None, entry.invocation_id):
                        live.lines.append(entry.message)
        return len(entries)

    def catch_up(self, limit_s: float = CATCH_UP_S) -> None:
        """Before READY=1: act on what the journal holds since the last cursor (the failures of starts made
        while the guard was down). A vLLM start waiting for the guard (its unit is After=vllm-guard.service)
        then reads the env file the guard has already rewritten, not the one the failure ran on."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if not self.take_journal() and self.follower.caught_up:
                break
        if self.held:
            self.flush_held(force=True)
        if self.dirty:
            self.save()

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
        self.catch_up()
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
            entries = self.take_journal()
            if entries and not self.dirty and time.monotonic() - self._saved_at >= CURSOR_SAVE_S:
                self.dirty = True
            if self.held:
                self.flush_held()
            self.collect_probes()
            if self.dirty:
                self.save()
                self.write_metrics()
            elif self._metrics_due or time.monotonic() - self._metrics_at >= METRICS_REFRESH_S:
                self.write_metrics()  # a heartbeat, or a pressure warning that came or went
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
            self._adopt_from_disk()
