"""The remedy executor, called as the daemon calls it: the events it sends (their messages and fields), what it
asks systemd for and when, what it records, the VRAM wait's edges, the engine that exited 0 or died, and the
facts it hands the policy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import write_config
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.app.gpus import Gpu, Holder
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import Attempt
from vllm_guard.core.config import Flags, Target
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import FailureKind, Phase
from vllm_guard.core.state import AttemptRecord, Current, Remedy, TargetState
from vllm_guard.core.systemd_escape import parse_env_file
from vllm_guard.errors import GuardError

pytestmark = pytest.mark.unit

NOW = 1_800_000_000.0
UNIT = "vllm-qwen.service"
K = FailureKind
BLIND = "NVML: Driver/library version mismatch"
KV_1024 = Failure(K.KV_CACHE_INSUFFICIENT, Phase.PROFILE, {"max_model_len": 4096, "estimated_max_model_len": 1024})
KV_REASON = (
    "vLLM estimated that the KV cache holds 1024 tokens; kv_headroom leaves 5% of it beyond one full-length request"
)
CONFIG = (
    '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
    "[target.floors]\nmax_model_len = 256\n[guard]\nvram_wait_timeout_s = 60\n"
)


class Systemctl:
    """systemctl as the guard uses it: `show` answers only for the unit asked and only the properties asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.invocation = "inv-1"
        self.stop_error: Exception | None = None
        self.before_stop: Callable[[], None] | None = None

    def show(self, unit: str, *props: str) -> dict[str, str]:
        return {"InvocationID": self.invocation} if unit == UNIT and "InvocationID" in props else {}

    def stop(self, unit: str) -> None:
        if self.before_stop is not None:
            self.before_stop()
        self.calls.append(("stop", unit))
        if self.stop_error is not None:
            raise self.stop_error

    def start(self, unit: str) -> None:
        self.calls.append(("start", unit))

    def restart(self, unit: str) -> None:
        self.calls.append(("restart", unit))

    def reset_failed(self, unit: str) -> None:
        self.calls.append(("reset-failed", unit))


class Guard:
    """A daemon on a fake root with a settable clock and GPU view, and what it sent."""

    def __init__(self, root: Path, gpus: list[Gpu] | None = None) -> None:
        self.root, self.sc, self.events, self.clock = root, Systemctl(), [], {"now": NOW}
        self.gpus: list[Gpu] | None = gpus
        deps = Deps(
            systemctl=self.sc,
            send=self.events.append,
            clock=lambda: self.clock["now"],
            gpus=lambda: self.gpus,
            why_no_gpus=lambda: BLIND,
            notifier=Notifier(address=""),
        )
        self.d = Daemon(Paths(root), None, deps)
        self.d.reconcile()
        self.target: Target = self.d.targets[0]
        self.ts: TargetState = self.d.state.targets["vllm-qwen"]

    def remedy(self, failure: Failure, inv: str = "inv-1", **kw: bool) -> None:
        self.d.remedy(self.target, self.ts, failure, inv, **kw)

    def env(self) -> dict[str, str]:
        return parse_env_file((self.root / "var/lib/vllm-guard/vllm-qwen.env").read_text())

    def last(self, kind: EventKind) -> Event:
        return [e for e in self.events if e.kind is kind][-1]


@pytest.fixture
def g(fake_root: Path) -> Guard:
    write_config(fake_root, CONFIG)
    return Guard(fake_root)


def flags(**changes: object) -> str:
    return Flags.model_validate({"max_model_len": 4096, **changes}).describe()


def spend_budget(ts: TargetState) -> None:
    ts.remedies = [
        Remedy(at=NOW - i, kind="kv_cache_insufficient", action="change_flags", change="c", reason="r")
        for i in range(6)
    ]


# -- the events: what each action sends, word for word


def test_a_flag_change_is_announced_with_the_flags_before_and_after_and_the_env_file(g: Guard) -> None:
    g.remedy(KV_1024)
    ev = g.last(EventKind.REMEDY_APPLIED)
    assert ev.message == f"{UNIT}: max_model_len 4096 -> 960 ({KV_REASON})"
    assert ev.fields == {
        "KIND": "kv_cache_insufficient",
        "REASON": KV_REASON,
        "CHANGE": "max_model_len 4096 -> 960",
        "FLAGS_BEFORE": flags(),
        "FLAGS_AFTER": flags(max_model_len=960),
        "INVOCATION_ID": "inv-1",
        "ENV_FILE": "/var/lib/vllm-guard/vllm-qwen.env",
        "UNIT": UNIT,
    }
    assert "--max-model-len=960" in g.env()["VLLM_GUARD_ARGS"].split()


def test_a_give_up_is_announced_stops_the_unit_and_changes_no_flag(g: Guard) -> None:
    g.remedy(Failure(K.BAD_ARGUMENTS, hint="Fix the flag."), "inv-7")
    ev = g.last(EventKind.GAVE_UP)
    reason = "bad_arguments: a flag change or a restart cannot fix this. Fix the flag."
    assert ev.message == f"{UNIT}: stopped restarting: {reason}"
    assert ev.fields == {
        "KIND": "bad_arguments",
        "REASON": reason,
        "CHANGE": "no more restarts",
        "FLAGS_BEFORE": flags(),
        "FLAGS_AFTER": flags(),
        "INVOCATION_ID": "inv-7",
        "UNIT": UNIT,
    }
    assert g.sc.calls == [("stop", UNIT)]
    assert g.ts.gave_up is not None and g.ts.last_failure is None


def test_the_stop_is_on_disk_as_the_guards_own_before_systemd_is_asked(g: Guard) -> None:
    seen: list[bool] = []
    state_file = g.root / "var/lib/vllm-guard/state.json"
    g.sc.before_stop = lambda: seen.append(json.loads(state_file.read_text())["targets"]["vllm-qwen"]["guard_stopped"])
    g.remedy(Failure(K.BAD_ARGUMENTS))
    assert seen == [True] and g.ts.guard_stopped  # so the stop is not taken for a person's


def test_a_vram_wait_with_a_gpu_view_names_the_holders_and_holds_the_restart(fake_root: Path) -> None:
    write_config(fake_root, CONFIG)
    g = Guard(fake_root, [Gpu(0, "NVIDIA L4", 23034, 10752, (Holder(4242, "stray.py", 12288),))])
    g.remedy(Failure(K.VRAM_HELD))
    ev = g.last(EventKind.WAITING_FOR_VRAM)
    reason = (
        "another process holds GPU memory; lowering flags would only hide that, so wait for it; "
        "held by: pid 4242 stray.py 12288 MiB on GPU 0"
    )
    assert ev.message == f"{UNIT}: {reason}"
    assert ev.fields["CHANGE"] == "restart held until VRAM is free"
    assert ev.fields["HOLDERS"] == "pid 4242 stray.py 12288 MiB on GPU 0" and ev.fields["UNIT"] == UNIT
    assert g.sc.calls == [("stop", UNIT)] and g.ts.waiting_vram_since == NOW


def test_a_remedy_other_than_a_vram_wait_records_no_holders(g: Guard) -> None:
    g.remedy(KV_1024)
    assert g.ts.remedies[-1].holders == ""
    assert "HOLDERS" not in g.last(EventKind.REMEDY_APPLIED).fields


def test_a_transient_failure_is_left_to_systemd_with_the_same_flags(g: Guard) -> None:
    before = g.env()
    g.remedy(Failure(K.PORT_IN_USE), "inv-3")
    r = g.ts.remedies[-1]
    assert (r.action, r.change) == ("let_retry", "systemd retries with the same flags")
    assert g.sc.calls == [] and g.env() == before and "inv-3" in g.ts.handled


# -- what the executor records


def test_each_remedy_moves_its_kind_one_rung_so_the_second_profile_oom_turns_graphs_off(g: Guard) -> None:
    oom = Failure(K.CUDA_OOM_PROFILE, Phase.PROFILE)
    g.remedy(oom, "inv-1")
    g.remedy(oom, "inv-2")
    g.remedy(oom, "inv-3")
    assert [r.change.split(" (")[0] for r in g.ts.remedies] == [
        "gpu_memory_utilization 0.9 -> 0.87",
        "enforce_eager off -> on",
        "gpu_memory_utilization 0.87 -> 0.84",
    ]
    assert g.ts.rungs == {"cuda_oom_profile": 3}


def test_the_last_failure_records_what_was_done_about_it(g: Guard) -> None:
    g.ts.last_failure = AttemptRecord(invocation_id="inv-1", kind="kv_cache_insufficient")
    g.remedy(KV_1024)
    assert g.ts.last_failure.action == "change_flags"


def test_an_attempt_that_did_not_fail_is_only_marked_handled(g: Guard) -> None:
    g.d.dirty = False
    g.remedy(Failure(K.NONE), "inv-5")
    assert "inv-5" in g.ts.handled and g.d.dirty  # saved at the next save
    assert g.events == [] and g.ts.remedies == [] and g.sc.calls == []


def test_a_failure_handed_over_without_saying_how_it_exited_is_not_started_by_the_guard(g: Guard) -> None:
    g.remedy(KV_1024, "inv-9")  # an invocation the guard has no record of
    assert g.sc.calls == []  # systemd's Restart= brings it back
    assert g.ts.remedies[-1].change == "max_model_len 4096 -> 960"


def test_a_flag_change_after_a_clean_exit_starts_the_unit_and_says_why(g: Guard) -> None:
    g.remedy(KV_1024, exited_cleanly=True)
    assert g.ts.remedies[-1].change == (
        "max_model_len 4096 -> 960; started it (it had exited with status 0, which Restart=on-failure ignores)"
    )
    assert g.sc.calls == [("start", UNIT)]


def test_a_plan_without_a_change_or_holders_records_them_empty(g: Guard) -> None:
    g.d.plan(g.target, g.ts, invocation_id=None, kind="engine_dead", action="restart", reason="r", restart_unit=True)
    assert (g.ts.remedies[-1].change, g.ts.remedies[-1].holders) == ("", "")


def test_a_plan_for_a_target_with_no_current_flags_yet_has_empty_before_and_after(g: Guard) -> None:
    g.ts.current = None
    g.d.plan(g.target, g.ts, invocation_id="inv-1", kind="bad_arguments", action="give_up", reason="r", change="c")
    ev = g.last(EventKind.GAVE_UP)
    assert (ev.fields["FLAGS_BEFORE"], ev.fields["FLAGS_AFTER"]) == ("", "")


# -- stepping back, and attempts that ran on flags already stepped past


def test_a_failed_step_back_returns_to_the_last_known_good_flags_at_once(g: Guard) -> None:
    back = Current(model="/models/tiny", flags=Flags(max_model_len=2048))
    g.ts.step_back_from = back
    g.remedy(Failure(K.CUDA_OOM_PROFILE, Phase.PROFILE), "inv-4")
    r = g.ts.remedies[-1]
    assert r.reason == "stepping back toward the base flags failed; returning to the last known-good flags"
    assert r.change == f"back to {back.flags.describe()}" and r.invocation_id == "inv-4"
    assert "--max-model-len=2048" in g.env()["VLLM_GUARD_ARGS"].split()
    assert "inv-4" in g.ts.handled and g.ts.step_back_from is None


def _ran_on_older_flags(g: Guard, inv: str) -> AttemptRecord:
    g.remedy(KV_1024, "inv-1")  # the step: max_model_len 4096 -> 960
    old = AttemptRecord(invocation_id=inv, kind="kv_cache_insufficient", ran_model="/models/tiny", ran_flags=flags())
    g.ts.remember_attempt(old)
    return old


def test_a_clean_exit_of_an_attempt_on_older_flags_is_started_on_the_current_ones(g: Guard) -> None:
    old = _ran_on_older_flags(g, "inv-b")
    g.ts.last_failure = old
    g.remedy(KV_1024, "inv-b", exited_cleanly=True)
    r = g.ts.remedies[-1]
    assert (r.action, r.change, r.invocation_id) == ("start", "started it on the current flags", "inv-b")
    assert r.reason == f"the failed attempt ran on flags the guard has stepped past ({flags()})"
    assert old.action == "superseded" and "inv-b" in g.ts.handled
    assert g.sc.calls == [("start", UNIT)] and len(g.ts.remedies) == 2


def test_without_a_failure_record_the_flags_it_ran_on_are_unknown(g: Guard) -> None:
    _ran_on_older_flags(g, "inv-b")
    g.ts.last_failure = None
    g.remedy(KV_1024, "inv-b", exited_cleanly=True)
    assert g.ts.remedies[-1].reason == "the failed attempt ran on flags the guard has stepped past (unknown)"


def test_a_failure_on_older_flags_that_systemd_restarts_itself_is_only_marked_handled(g: Guard) -> None:
    _ran_on_older_flags(g, "inv-b")
    g.d.dirty = False
    g.remedy(KV_1024, "inv-b")
    assert "inv-b" in g.ts.handled and g.d.dirty and len(g.ts.remedies) == 1 and g.sc.calls == []


# -- the facts the policy is given


def test_on_the_cpu_backend_a_host_oom_lowers_util_which_sizes_the_kv_cache_there(g: Guard) -> None:
    g.ts.platform = "cpu"
    g.remedy(Failure(K.HOST_OOM_KILLED))
    assert g.ts.remedies[-1].change == "gpu_memory_utilization 0.9 -> 0.67"


def test_with_max_model_len_unset_a_kv_failure_halves_the_models_own_context(fake_root: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    g = Guard(fake_root)
    g.remedy(Failure(K.KV_CACHE_INSUFFICIENT))  # no figure in the log; config.json says 4096
    assert g.ts.remedies[-1].change == "max_model_len 4096 -> 2048"


def test_an_oom_that_the_last_step_did_not_move_takes_another_ladder(g: Guard) -> None:
    same = {"alloc_bytes": 2**30, "gpu_total_gib": 24.0}
    for inv, action in (("inv-1", "change_flags"), ("inv-2", None)):
        g.ts.remember_attempt(
            AttemptRecord(invocation_id=inv, kind="cuda_oom_profile", phase="unknown", numbers=same, action=action)
        )
    g.remedy(Failure(K.CUDA_OOM_PROFILE, Phase.UNKNOWN, same), "inv-2")
    r = g.ts.remedies[-1]
    assert r.change == "max_model_len 4096 -> 2048"
    assert r.reason.startswith("the last change did not move the failure (the same cuda_oom_profile (unknown)")


# -- an engine that exited 0 or died: brought back within the budget


def _clean(lines: tuple[str, ...] = ("INFO:     Shutting down",)) -> Attempt:
    return Attempt(
        unit=UNIT,
        invocation_id="inv-1",
        started_us=int(NOW * 1e6) - 5_000_000,
        lines=lines,
        main_pid=100,
        ended_us=int(NOW * 1e6),
        result="success",
        exit_status=0,
        signal=None,
        restart_scheduled=False,
    )


def test_a_clean_exit_nobody_asked_for_is_reported_and_started_again(g: Guard) -> None:
    g.d.on_clean_exit(g.target, g.ts, _clean(), Failure(K.NONE))
    why = "vLLM exited with status 0 without being asked to stop"
    detected = g.last(EventKind.FAILURE_DETECTED)
    assert detected.message == f"{UNIT}: {why}"
    assert detected.fields == {"KIND": "engine_dead", "INVOCATION_ID": "inv-1", "HINT": why, "UNIT": UNIT}
    started = g.last(EventKind.RESTARTED_UNIT)
    assert started.message == f"{UNIT}: started it again: {why}"
    r = g.ts.remedies[-1]
    assert (r.kind, r.action, r.change, r.reason) == ("engine_dead", "start", "started it again", why)
    assert g.sc.calls == [("start", UNIT)] and "inv-1" in g.ts.handled


@pytest.mark.parametrize(
    ("lines", "kind"),
    [
        (("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",), K.NONE),
        (("INFO:     Shutting down",), K.ENGINE_DEAD),
    ],
    ids=["engine-dead-error-line", "engine-dead-verdict"],
)
def test_a_clean_exit_after_the_engine_died_says_so(g: Guard, lines: tuple[str, ...], kind: FailureKind) -> None:
    g.d.on_clean_exit(g.target, g.ts, _clean(lines), Failure(kind))
    assert g.ts.remedies[-1].reason == "vLLM exited with status 0 without being asked to stop after its engine died"


def test_only_an_engine_dead_error_in_the_last_200_lines_counts(g: Guard) -> None:
    dead = "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue."
    later = tuple(f"INFO:     line {i}" for i in range(199))
    g.d.on_clean_exit(g.target, g.ts, _clean((dead, *later)), Failure(K.NONE))
    assert g.ts.remedies[-1].reason.endswith("after its engine died")
    g.d.on_clean_exit(g.target, g.ts, _clean((dead, "INFO:     one more", *later)), Failure(K.NONE))
    assert g.ts.remedies[-1].reason == "vLLM exited with status 0 without being asked to stop"


def test_a_clean_exit_with_the_budget_spent_is_given_up_on_without_a_stop(g: Guard) -> None:
    spend_budget(g.ts)
    g.d.on_clean_exit(g.target, g.ts, _clean(), Failure(K.NONE))
    r = g.ts.remedies[-1]
    assert (r.action, r.change, r.invocation_id) == ("give_up", "no more restarts", "inv-1")
    assert r.reason == "vLLM exited with status 0 without being asked to stop; budget spent (6 remedies)"
    assert g.sc.calls == []  # it is down already
    assert [e.kind for e in g.events] == [EventKind.GAVE_UP]


def test_a_dead_engine_still_running_is_restarted_once_and_stopped_when_the_budget_is_spent(g: Guard) -> None:
    g.d.bring_back(g.target, g.ts, "inv-1", "chat failed", message="engine_dead: chat failed", restart=True)
    r = g.ts.remedies[-1]
    assert (r.action, r.change) == ("restart", "restarted the unit")
    assert g.last(EventKind.RESTARTED_UNIT).message == f"{UNIT}: restarted the unit: chat failed"
    assert g.sc.calls == [("restart", UNIT)]
    spend_budget(g.ts)
    g.d.bring_back(g.target, g.ts, "inv-1", "chat failed", message="engine_dead: chat failed", restart=True)
    assert g.ts.remedies[-1].action == "give_up" and g.sc.calls[-1] == ("stop", UNIT)


def test_a_restart_already_done_by_systemd_is_not_done_again(g: Guard) -> None:
    g.sc.invocation = "inv-2"  # the unit runs another invocation than the one that died
    g.d.bring_back(g.target, g.ts, "inv-1", "chat failed", message="engine_dead: chat failed", restart=True)
    assert g.sc.calls == [] and g.ts.remedies[-1].action == "restart"


def test_a_dead_engine_of_an_unknown_invocation_is_reported_with_an_empty_id(g: Guard) -> None:
    g.d.bring_back(g.target, g.ts, None, "chat failed", message="engine_dead: chat failed", restart=True)
    assert g.last(EventKind.FAILURE_DETECTED).fields["INVOCATION_ID"] == ""
    assert g.sc.calls == [("restart", UNIT)]  # no invocation to compare: restart


# -- systemd's start limit


def test_at_the_start_limit_a_new_step_gets_its_start_in_words(g: Guard) -> None:
    g.remedy(KV_1024)
    g.d.on_start_limit(g.target, g.ts)
    ev = g.last(EventKind.RESTARTED_UNIT)
    reason = "systemd hit the unit's start limit while the guard still had a step to try"
    assert ev.message == f"{UNIT}: reset-failed and started it: {reason}"
    assert (ev.fields["CHANGE"], ev.fields["REASON"]) == ("reset-failed and started it", reason)
    assert g.sc.calls == [("reset-failed", UNIT), ("start", UNIT)]


def test_after_the_guard_gave_up_systemds_start_limit_stands(g: Guard) -> None:
    g.remedy(KV_1024)
    g.ts.gave_up = Remedy(at=NOW - 100, kind="bad_arguments", action="give_up", change="c", reason="r")
    g.d.on_start_limit(g.target, g.ts)
    assert g.sc.calls == []


# -- the wait for VRAM someone else holds


def _waiting(fake_root: Path, gpus: list[Gpu] | None) -> Guard:
    write_config(fake_root, CONFIG)
    g = Guard(fake_root, gpus)
    g.remedy(Failure(K.VRAM_HELD))
    g.sc.calls.clear()
    return g


def card(free_mib: int, total_mib: int = 20000) -> list[Gpu]:
    return [Gpu(0, "NVIDIA L4", total_mib, free_mib, ())]


def test_the_unit_is_started_once_util_of_the_card_plus_the_margin_is_free(fake_root: Path) -> None:
    g = _waiting(fake_root, card(0))
    g.gpus = card(18000 + 255)  # util 0.9 of 20000 MiB is 18000 MiB; the margin is 256 MiB
    g.d.check_vram(g.target, g.ts)
    assert g.sc.calls == []
    g.gpus = card(18000 + 256)
    g.d.check_vram(g.target, g.ts)
    assert g.sc.calls == [("start", UNIT)] and g.ts.waiting_vram_since is None
    ev = g.last(EventKind.RESTARTED_UNIT)
    assert ev.message == f"{UNIT}: started it: GPU memory is back (18256 MiB free, 18000 MiB needed)"
    assert ev.fields["CHANGE"] == "started it" and ev.fields["UNIT"] == UNIT and "INVOCATION_ID" not in ev.fields


def test_the_memory_needed_is_that_of_the_current_flags(fake_root: Path) -> None:
    g = _waiting(fake_root, card(0))
    g.ts.current = Current(model="/models/tiny", flags=Flags(gpu_memory_utilization=0.6, max_model_len=4096))
    g.gpus = card(12000 + 256)
    g.d.check_vram(g.target, g.ts)
    assert g.sc.calls == [("start", UNIT)]


def test_with_no_current_flags_the_memory_needed_is_that_of_the_base_flags(fake_root: Path) -> None:
    g = _waiting(fake_root, card(0))
    g.ts.current = None
    g.gpus = card(18000 + 255)
    g.d.check_vram(g.target, g.ts)
    assert g.sc.calls == []
    g.gpus = card(18000 + 256)
    g.d.check_vram(g.target, g.ts)
    assert g.sc.calls == [("start", UNIT)]


def test_the_wait_ends_when_vram_wait_timeout_s_has_passed_to_the_second(fake_root: Path) -> None:
    g = _waiting(fake_root, card(0))
    g.clock["now"] = NOW + 59
    g.d.check_vram(g.target, g.ts)
    assert EventKind.GAVE_UP not in [e.kind for e in g.events]
    g.clock["now"] = NOW + 60
    g.d.check_vram(g.target, g.ts)
    r = g.ts.remedies[-1]
    assert (r.action, r.change) == ("give_up", "no more restarts")
    assert r.reason == (
        f"GPU memory still held after 60 s by: no process listed; stop those processes, then `systemctl start {UNIT}`"
    )


def test_a_blind_wait_that_times_out_says_the_holders_are_unknown_and_why(fake_root: Path) -> None:
    g = _waiting(fake_root, None)
    g.clock["now"] = NOW + 60
    g.d.check_vram(g.target, g.ts)
    r = g.ts.remedies[-1]
    assert r.action == "give_up"
    assert r.reason.startswith(f"GPU memory still held after 60 s by: unknown: the GPUs cannot be seen ({BLIND});")


def test_blind_retries_are_counted_and_each_is_due_only_once(fake_root: Path) -> None:
    g = _waiting(fake_root, None)
    assert g.ts.vram_blind_since == NOW and g.ts.vram_retry_at == NOW + 10
    g.clock["now"] = NOW + 10
    g.d.check_vram(g.target, g.ts)
    ev = g.last(EventKind.RESTARTED_UNIT)
    assert ev.fields["CHANGE"] == "started it with the same flags"
    assert ev.fields["REASON"] == f"the GPUs cannot be seen ({BLIND}): unchanged retry #1 after 10 s of waiting"
    assert g.ts.vram_retry_at is None and g.sc.calls == [("start", UNIT)]
    g.d.check_vram(g.target, g.ts)  # the retry is spent: nothing until the next failure
    assert g.sc.calls == [("start", UNIT)]
    # it fails the same way again: the blind wait keeps its first moment, the next retry is #2
    g.clock["now"] = NOW + 15
    g.remedy(Failure(K.VRAM_HELD), "inv-2")
    assert g.ts.vram_blind_since == NOW and g.ts.vram_retry_at == NOW + 15 + 20
    g.clock["now"] = NOW + 35
    g.d.check_vram(g.target, g.ts)
    assert "unchanged retry #2 after 35 s of waiting" in g.last(EventKind.RESTARTED_UNIT).fields["REASON"]


def test_once_the_gpus_can_be_seen_free_memory_decides_not_the_blind_retry_timer(fake_root: Path) -> None:
    g = _waiting(fake_root, None)
    g.gpus = card(1000)  # visible again, and still held
    g.clock["now"] = NOW + 10  # the blind retry would be due now
    g.d.check_vram(g.target, g.ts)
    assert g.sc.calls == []


# -- a start whose files are missing: stopped until they are there, whatever systemctl says


@pytest.mark.parametrize(
    "error", [GuardError("systemctl", "systemctl stop failed"), OSError("no bus")], ids=["guard-error", "os-error"]
)
def test_a_stop_that_fails_while_waiting_for_files_is_not_fatal(fake_root: Path, error: Exception) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/later"\nuser = "root"\n')
    g = Guard(fake_root)
    g.sc.stop_error = error
    rec = AttemptRecord(invocation_id="inv-1", kind="model_load_error")
    g.d._wait_for_files(g.target, g.ts, rec, "inv-1")
    assert g.sc.calls == [("stop", UNIT)] and rec.action == "waiting"
    assert "inv-1" in g.ts.handled and g.ts.guard_stopped and g.ts.waiting_stopped


def test_while_waiting_for_files_a_state_that_could_not_be_saved_stays_marked_for_saving(fake_root: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/later"\nuser = "root"\n')
    g = Guard(fake_root)

    def fail(_: object) -> None:
        raise OSError("disk full")

    g.d.store.save = fail  # type: ignore[method-assign]
    with pytest.raises(OSError, match="disk full"):
        g.d._wait_for_files(g.target, g.ts, AttemptRecord(invocation_id="inv-1"), "inv-1")
    assert g.d.dirty is True
