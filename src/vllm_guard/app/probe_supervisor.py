"""Probe supervision: the start probe after each start, the liveness probe while active, a dead engine.

Probes run in worker threads (they wait on the network); ``collect_probes`` hands their results to
``on_probe`` in the loop's thread, which verifies a start (``verified_healthy``), counts liveness failures
and restarts a dead or hung engine through the remedy executor (within the budget).
"""

from __future__ import annotations

from vllm_guard.app.config_load import read_api_key
from vllm_guard.app.guard_core import LiveUnit
from vllm_guard.app.remedy_executor import RemedyExecutor
from vllm_guard.core.classify import classify
from vllm_guard.core.config import Target
from vllm_guard.core.events import EventKind
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.probe import Liveness, ProbeResult, evidence_from_lines
from vllm_guard.core.state import AttemptRecord, TargetState, Verified, base_current
from vllm_guard.core.where import known_good_key


class ProbeSupervisor(RemedyExecutor):
    """Start and liveness probes, and what their results mean."""

    def start_probe(self, target: Target, ts: TargetState, live: LiveUnit, *, kind: str) -> None:
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

    def on_probe(self, target: Target, ts: TargetState, live: LiveUnit, result: ProbeResult) -> None:
        now = self.now()
        live.last_probe_ok = result.ok
        self.dirty = True
        if result.ok:
            if live.probe_kind == "start" and live.verified_invocation != live.invocation:
                live.verified_invocation = live.invocation
                evidence = evidence_from_lines(list(live.lines))
                ttr = now - live.started_at if live.started_at else None
                cur = ts.current or base_current(target)
                ran = self.ran_with(ts, live.lines, live.started_at)
                if ran is not None and ran != (cur.model, cur.flags.describe()):
                    self._verified_on_older_flags(target, ts, live, ran[0], ran[1], ttr, now)
                    live.liveness = Liveness(target.probe.failures_allowed)
                    live.next_live_probe = now + target.probe.interval_s
                    return
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

    def _verified_on_older_flags(
        self, target: Target, ts: TargetState, live: LiveUnit, model: str, flags: str, ttr: float | None, now: float
    ) -> None:
        """The start answered, but it ran on flags the guard has stepped past since (it was down, or systemd
        restarted before the step): verified on those, and nothing is filed as a good start of the new ones."""
        cur = ts.current or base_current(target)
        ts.last_verified = Verified(
            at=now, invocation_id=live.invocation, time_to_ready_s=ttr, model=model, flags=flags, evidence={}
        )
        self.dirty = True
        self.emit(
            EventKind.VERIFIED_HEALTHY,
            f"{target.unit_file}: verified healthy: {target.name} answered a chat request with {flags}, the flags "
            f"this start read; its next start uses {cur.flags.describe()}",
            target,
            INVOCATION_ID=live.invocation or "",
            FLAGS_AFTER=flags,
            TIME_TO_READY_S=f"{ttr:.1f}" if ttr is not None else "",
        )

    def _engine_dead(self, target: Target, ts: TargetState, live: LiveUnit, why: str) -> None:
        live.next_live_probe = None
        if self.active_state(target) in ("deactivating", "inactive", "failed"):
            # A stop is under way (a person's `systemctl stop`, or systemd ending the process on its own): vLLM
            # closes its port first and then waits for the requests in flight, so probes fail while it drains.
            # A restart now would cancel that stop job; how the attempt ended is read from the journal instead.
            return
        # the engine's last words, as far as the journal has handed them over: a death from memory is that failure
        died = classify(list(live.lines))
        if died.kind.is_memory:
            self._engine_died_of_memory(target, ts, live, died, why)
            return
        failure = Failure(FailureKind.ENGINE_DEAD, evidence=(why,), hint="the engine is dead or hung: restart it")
        ts.last_failure = AttemptRecord(
            invocation_id=live.invocation or "", kind="engine_dead", phase="serve", evidence=[why], hint=failure.hint
        )
        self.bring_back(
            target, ts, live.invocation, why, message=f"engine_dead: {why}", restart=True, PHASE="serve", EVIDENCE=why
        )

    def _engine_died_of_memory(self, target: Target, ts: TargetState, live: LiveUnit, died: Failure, why: str) -> None:
        """A probe found the engine dead and its log says it ran out of memory: the failure it is, remedied as
        one (new flags need a restart, as the server is still up), not a restart on the same flags."""
        inv = live.invocation or ""
        evidence = [*died.evidence[:4], why]
        ts.last_failure = AttemptRecord(
            invocation_id=inv,
            kind=died.kind.value,
            phase=died.phase.value,
            numbers=dict(died.numbers),
            evidence=evidence,
            hint=died.hint,
        )
        ts.remember_attempt(ts.last_failure)
        self.dirty = True
        self.report_failure(
            target,
            ts,
            died,
            inv,
            f"{target.unit_file}: engine died: {died.kind.value} ({died.phase.value})"
            + (f": {died.evidence[0]}" if died.evidence else "")
            + f" ({why})",
            evidence,
        )
        self.remedy(target, ts, died, live.invocation, still_running=True)

    def _step_back_due(self, t: Target, ts: TargetState, live: LiveUnit, now: float) -> bool:
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
