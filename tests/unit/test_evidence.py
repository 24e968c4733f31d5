"""A weak verdict weighed against what the guard saw of the attempt (core/evidence.py), alone and in the daemon:
a probe that passed, how long it lived against a healthy start, who held the GPUs, the kernel's log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.unit.test_daemon_apply import NOW, FakeSystemctl, attempt, env_of
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.app.gpus import Gpu, Holder
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import Attempt, AttemptEnded
from vllm_guard.core.classify import classify
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.evidence import GpuSeen, Observed, unsure, weigh
from vllm_guard.core.failure import Failure, SystemdOutcome
from vllm_guard.core.kinds import Basis, Confidence, FailureKind, Phase
from vllm_guard.core.state import Verified

pytestmark = pytest.mark.unit

K = FailureKind
# A device OOM printed with nothing around it that says when it happened (PyTorch's allocator message,
# c10/cuda/CUDACachingAllocator.cpp, as torch 2.x prints it)
BARE_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "23.57 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.40 GiB memory in use.",
)
EXITED = SystemdOutcome(result="exit-code", exit_status=1)
KILLED = SystemdOutcome(result="signal", signal="KILL")


def bare_oom() -> Failure:
    f = classify(list(BARE_OOM), EXITED)
    assert (f.kind, f.phase, f.confidence) == (K.CUDA_OOM_RUNTIME, Phase.UNKNOWN, Confidence.LOW)
    return f


def bare_kill() -> Failure:
    f = classify(["INFO 11-30 05:00:00 [api_server.py:1] vLLM API server version 0.8.5"], KILLED)
    assert (f.kind, f.confidence) == (K.HOST_OOM_KILLED, Confidence.LOW)
    return f


# -- the rules, alone --


def test_a_passed_probe_places_an_unplaced_oom_in_serving() -> None:
    f = weigh(bare_oom(), Observed(probe_passed=True, lived_s=3600, healthy_ready_s=60))
    assert (f.kind, f.phase, f.confidence, f.basis) == (
        K.CUDA_OOM_RUNTIME,
        Phase.SERVE,
        Confidence.MEDIUM,
        Basis.OBSERVED,
    )
    assert "probe" in f.observed[-1]
    assert f.numbers == bare_oom().numbers and f.evidence == bare_oom().evidence  # the log's facts are kept


def test_dying_sooner_than_a_healthy_start_is_ready_reads_as_a_start_up_oom() -> None:
    f = weigh(bare_oom(), Observed(lived_s=20, healthy_ready_s=60))
    assert (f.kind, f.phase, f.confidence) == (K.CUDA_OOM_PROFILE, Phase.UNKNOWN, Confidence.LOW)
    assert "20 s" in f.observed[-1] and "60 s" in f.observed[-1]


@pytest.mark.parametrize(
    ("lived", "ready"),
    [(55.0, 60.0), (120.0, 60.0), (20.0, None), (None, 60.0)],
    ids=["within-the-margin", "lived-longer", "no-healthy-start", "no-end-time"],
)
def test_timing_that_does_not_clearly_say_start_up_changes_nothing(lived: float | None, ready: float | None) -> None:
    f = weigh(bare_oom(), Observed(lived_s=lived, healthy_ready_s=ready))
    assert (f.kind, f.phase, f.confidence, f.basis) == (K.CUDA_OOM_RUNTIME, Phase.UNKNOWN, Confidence.LOW, Basis.BARE)
    assert f.observed and "no probe had passed" in f.observed[-1]


def test_gpu_memory_held_by_listed_processes_makes_an_unplaced_oom_a_wait() -> None:
    gpu = GpuSeen(total_mib=24000, free_mib=4000, others=((4242, "stray.py", 18000),))
    f = weigh(bare_oom(), Observed(gpus=[gpu], util=0.9, lived_s=20, healthy_ready_s=60))
    assert (f.kind, f.confidence, f.basis) == (K.VRAM_HELD, Confidence.LOW, Basis.OBSERVED)
    assert "stray.py (PID 4242, 18000 MiB)" in f.observed[-1]
    assert "another process" in f.hint


@pytest.mark.parametrize(
    "gpu",
    [
        GpuSeen(24000, 23000, ((4242, "stray.py", 500),)),  # vLLM's share is free: the others are not why
        GpuSeen(24000, 4000, ()),  # in use, but no process listed: not enough to blame another process
        GpuSeen(24000, 1000, ((4242, "stray.py", 1000),)),  # short, but the listed holder does not explain it
    ],
    ids=["share-free", "nothing-listed", "holder-too-small"],
)
def test_gpu_memory_the_others_do_not_explain_is_no_wait(gpu: GpuSeen) -> None:
    f = weigh(bare_oom(), Observed(gpus=[gpu], util=0.9))
    assert f.kind is K.CUDA_OOM_RUNTIME


def test_a_probe_that_passed_outweighs_the_gpu_view() -> None:
    gpu = GpuSeen(total_mib=24000, free_mib=4000, others=((4242, "stray.py", 18000),))
    assert weigh(bare_oom(), Observed(probe_passed=True, gpus=[gpu], util=0.9)).phase is Phase.SERVE


def test_a_bare_sigkill_the_kernel_claimed_is_a_host_oom_for_sure() -> None:
    f = weigh(bare_kill(), Observed(kernel_oom=True, kernel_log_visible=True))
    assert (f.kind, f.confidence, f.basis) == (K.HOST_OOM_KILLED, Confidence.HIGH, Basis.OBSERVED)


def test_a_bare_sigkill_no_oom_killer_claimed_is_retried_without_lowering_anything() -> None:
    f = weigh(bare_kill(), Observed(kernel_log_visible=True))
    assert (f.kind, f.confidence) == (K.UNKNOWN_FAILURE, Confidence.LOW)
    assert "no memory flag is lowered" in f.observed[-1]
    assert "journalctl" in f.hint


@pytest.mark.parametrize(
    ("seen", "says"),
    [
        (Observed(kernel_log_visible=True, memory_pressure=True), "under pressure"),
        (Observed(kernel_log_visible=False), "cannot be read"),
        (Observed(kernel_log_visible=None), "cannot be read"),
    ],
    ids=["pressure", "no-kernel-log", "kernel-log-unknown"],
)
def test_a_bare_sigkill_stays_a_host_oom_when_the_absence_of_a_kernel_line_proves_nothing(
    seen: Observed, says: str
) -> None:
    f = weigh(bare_kill(), seen)
    assert (f.kind, f.confidence, f.basis) == (K.HOST_OOM_KILLED, Confidence.LOW, Basis.BARE)
    assert says in f.observed[-1]


def test_a_strong_verdict_is_never_touched() -> None:
    gpu = GpuSeen(total_mib=24000, free_mib=100, others=((1, "x", 23000),))
    seen = Observed(probe_passed=True, lived_s=1, healthy_ready_s=60, gpus=[gpu], util=0.9, kernel_log_visible=True)
    placed = Failure(K.CUDA_OOM_PROFILE, Phase.PROFILE, confidence=Confidence.MEDIUM, basis=Basis.MILESTONE)
    assert weigh(placed, seen) is placed
    load = Failure(K.MODEL_LOAD_ERROR, Phase.LOAD, confidence=Confidence.HIGH, basis=Basis.MESSAGE)
    assert weigh(load, seen) is load
    kv = Failure(K.KV_CACHE_INSUFFICIENT, Phase.PROFILE, confidence=Confidence.HIGH, basis=Basis.MESSAGE)
    free = GpuSeen(total_mib=24000, free_mib=23000, others=((1, "x", 500),))  # vLLM's share was free
    assert weigh(kv, replace(seen, gpus=[free])) is kv
    assert weigh(kv, replace(seen, gpus=None)) is kv


def test_a_kv_cache_with_no_room_while_others_held_vllms_share_is_a_wait() -> None:
    # vLLM 0.6.4 and V1 0.7-0.9.1 count total - free after their profile as their own use: a second instance's
    # memory leaves "No available memory for the cache blocks", which no shorter max_model_len answers
    kv = Failure(K.KV_CACHE_INSUFFICIENT, Phase.PROFILE, confidence=Confidence.HIGH, basis=Basis.MESSAGE)
    gpu = GpuSeen(total_mib=81000, free_mib=12000, others=((4242, "vllm serve Qwen2.5-72B", 68000),))
    f = weigh(kv, Observed(gpus=[gpu], util=0.2))
    assert (f.kind, f.confidence, f.basis) == (K.VRAM_HELD, Confidence.LOW, Basis.OBSERVED)
    assert "KV cache had no room" in f.observed[-1] and "vllm serve Qwen2.5-72B (PID 4242, 68000 MiB)" in f.observed[-1]
    assert "another process" in f.hint and "names no other process" in unsure(f)


def test_unsure_names_what_the_guard_does_not_know() -> None:
    assert unsure(Failure(K.KV_CACHE_INSUFFICIENT)) == ""
    assert "loading, profiling or serving" in unsure(bare_oom())
    assert "SIGKILL" in unsure(bare_kill())
    assert "same flags" in unsure(weigh(bare_kill(), Observed(kernel_log_visible=True)))
    held = weigh(bare_oom(), Observed(gpus=[GpuSeen(24000, 4000, ((7, "x", 18000),))], util=0.9))
    assert "waits" in unsure(held)
    assert "observed" in unsure(weigh(bare_oom(), Observed(probe_passed=True)))
    cut = Failure(K.CUDA_OOM_LOAD, Phase.LOAD, confidence=Confidence.LOW, basis=Basis.FRAME)
    assert "stops before its error, in load" in unsure(cut)


def test_observed_notes_survive_the_state_file() -> None:
    f = weigh(bare_oom(), Observed(probe_passed=True))
    assert Failure.from_dict(f.to_dict()) == f
    assert "observed" not in bare_oom().to_dict()  # `classify --json` is unchanged for the classifier's own verdicts


# -- in the daemon --


@pytest.fixture
def root(fake_root: Path) -> Path:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "max_num_seqs = 64\ngpu_memory_utilization = 0.9\n"
        "[target.floors]\nmax_model_len = 256\n",
    )
    return fake_root


def guard(root: Path, events: list[Event], gpus: list[Gpu] | None = None, kernel: bool | None = False) -> Daemon:
    deps = Deps(
        systemctl=FakeSystemctl(),
        send=events.append,
        clock=lambda: NOW,
        gpus=lambda: gpus,
        notifier=Notifier(address=""),
        kernel_log=lambda: kernel,
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    return d


def args(root: Path) -> str:
    return env_of(root)["VLLM_GUARD_ARGS"]


def detected(events: list[Event]) -> Event:
    return next(e for e in events if e.kind is EventKind.FAILURE_DETECTED)


def healthy_before(d: Daemon, ready_s: float) -> None:
    ts = d.ts(d.targets[0])
    ts.last_verified = Verified(at=NOW - 3600, invocation_id="inv-0", time_to_ready_s=ready_s, model="m", flags="f")


def test_the_daemon_places_a_bare_oom_of_a_verified_attempt_in_serving(root: Path) -> None:
    events: list[Event] = []
    d = guard(root, events)
    live = d.live[d.targets[0].unit]
    live.verified_invocation = "inv-1"  # its start probe passed
    d.on_event(AttemptEnded(attempt(BARE_OOM, "inv-1")))
    d.flush_held(force=True)
    ev = detected(events)
    assert (ev.fields["KIND"], ev.fields["PHASE"], ev.fields["BASIS"]) == ("cuda_oom_runtime", "serve", "observed")
    assert "probe" in ev.fields["OBSERVED"] and ev.fields["UNSURE"]
    assert "--max-num-seqs=32" in args(root)  # the serving ladder: fewer sequences


def test_the_daemon_reads_a_bare_oom_that_died_early_as_start_up(root: Path) -> None:
    events: list[Event] = []
    d = guard(root, events)
    healthy_before(d, ready_s=60.0)  # the attempt lived 5 s
    d.on_event(AttemptEnded(attempt(BARE_OOM, "inv-1")))
    d.flush_held(force=True)
    ev = detected(events)
    assert (ev.fields["KIND"], ev.fields["CONFIDENCE"]) == ("cuda_oom_profile", "low")
    assert "before a healthy start is ready" in ev.fields["OBSERVED"]
    assert "changes ladder" in ev.fields["UNSURE"]
    # the start-up ladder: a smaller share of the GPU (2 GiB of 23.57 failed, +0.01: 0.10), not fewer sequences
    assert "--gpu-memory-utilization=0.8 " in args(root) and "--max-num-seqs=64" in args(root)


def test_the_daemon_waits_instead_of_degrading_when_others_hold_the_gpu(root: Path) -> None:
    events: list[Event] = []
    mine = Holder(100, "python3", 20000)  # the attempt's own process, if NVML still lists it: not another
    stray = Holder(4242, "stray.py", 18000)
    d = guard(root, events, gpus=[Gpu(0, "NVIDIA L4", 24000, 4000, (mine, stray))])
    a = attempt(BARE_OOM, "inv-1")
    a = Attempt(**{**a.__dict__, "pids": (100,)})
    before = env_of(root)
    d.on_event(AttemptEnded(a))
    d.flush_held(force=True)
    assert detected(events).fields["KIND"] == "vram_held"
    assert "stray.py" in detected(events).fields["OBSERVED"] and "python3" not in detected(events).fields["OBSERVED"]
    assert events[-1].kind is EventKind.WAITING_FOR_VRAM
    assert env_of(root) == before  # nothing lowered


def test_the_daemon_retries_a_sigkill_no_oom_killer_claimed_unchanged(root: Path) -> None:
    events: list[Event] = []
    d = guard(root, events, kernel=True)
    a = attempt(("INFO 11-30 05:00:00 [api_server.py:1] vLLM API server version 0.8.5",), "inv-1")
    a = Attempt(**{**a.__dict__, "result": "signal", "exit_status": None, "signal": "KILL"})
    before = env_of(root)
    d.on_event(AttemptEnded(a))
    d.flush_held(force=True)
    assert detected(events).fields["KIND"] == "unknown_failure"
    assert env_of(root) == before
    assert d.ts(d.targets[0]).remedies[-1].action == "let_retry"


def test_the_daemon_lowers_host_memory_for_a_sigkill_when_it_cannot_read_the_kernel_log(root: Path) -> None:
    events: list[Event] = []
    d = guard(root, events, kernel=False)
    a = attempt(("INFO 11-30 05:00:00 [api_server.py:1] vLLM API server version 0.8.5",), "inv-1")
    a = Attempt(**{**a.__dict__, "result": "signal", "exit_status": None, "signal": "KILL"})
    d.on_event(AttemptEnded(a))
    d.flush_held(force=True)
    ev = detected(events)
    assert ev.fields["KIND"] == "host_oom_killed" and "cannot be read" in ev.fields["OBSERVED"]
    assert "--max-num-seqs=32" in args(root)


def test_a_kv_failure_while_another_process_held_the_units_gpu_waits(root: Path) -> None:
    from tests.unit.test_daemon_apply import KV_LINES

    stray = Holder(4242, "vllm serve other", 18000)
    events: list[Event] = []
    d = guard(root, events, gpus=[Gpu(0, "NVIDIA L4", 24000, 4000, (stray,))])
    before = env_of(root)
    d.on_event(AttemptEnded(attempt(KV_LINES, "inv-1")))
    d.flush_held(force=True)
    assert detected(events).fields["KIND"] == "vram_held" and "vllm serve other" in detected(events).fields["OBSERVED"]
    assert env_of(root) == before  # nothing lowered: the memory is another process's


def test_a_process_on_a_gpu_the_unit_does_not_use_is_no_cause(root: Path) -> None:
    from tests.unit.test_daemon_apply import KV_LINES

    write_config(
        root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\nenvironment = { CUDA_VISIBLE_DEVICES = "1" }\n'
        "[target.flags]\nmax_model_len = 4096\nmax_num_seqs = 64\ngpu_memory_utilization = 0.9\n"
        "[target.floors]\nmax_model_len = 256\n",
    )
    stray = Holder(4242, "vllm serve other", 18000)
    events: list[Event] = []
    d = guard(root, events, gpus=[Gpu(0, "NVIDIA L4", 24000, 4000, (stray,)), Gpu(1, "NVIDIA L4", 24000, 23500, ())])
    d.on_event(AttemptEnded(attempt(KV_LINES, "inv-1")))
    d.flush_held(force=True)
    assert detected(events).fields["KIND"] == "kv_cache_insufficient"
    assert "--max-model-len=4096" not in args(root)  # the KV ladder lowered it


def test_a_strong_verdict_reads_neither_the_gpus_nor_the_kernel_log(root: Path) -> None:
    from tests.unit.test_daemon_apply import BAD_ARG_LINES

    events: list[Event] = []
    calls: list[str] = []
    deps = Deps(
        systemctl=FakeSystemctl(),
        send=events.append,
        clock=lambda: NOW,
        gpus=lambda: calls.append("gpus") or None,  # type: ignore[func-returns-value]
        notifier=Notifier(address=""),
        kernel_log=lambda: calls.append("kernel") or None,  # type: ignore[func-returns-value]
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    calls.clear()
    d.on_event(AttemptEnded(attempt(BAD_ARG_LINES, "inv-1")))
    d.flush_held(force=True)
    assert calls == []
    assert detected(events).fields["UNSURE"] == "" and detected(events).fields["OBSERVED"] == ""


def test_a_kernel_oom_line_that_comes_late_turns_the_plain_retry_into_a_host_memory_remedy(root: Path) -> None:
    from vllm_guard.core.attempt import AttemptAmended

    events: list[Event] = []
    d = guard(root, events, kernel=True)
    lines = ("INFO 11-30 05:00:00 [api_server.py:1] vLLM API server version 0.8.5",)
    a = Attempt(**{**attempt(lines, "inv-1").__dict__, "result": "signal", "exit_status": None, "signal": "KILL"})
    d.on_event(AttemptEnded(a))
    d.flush_held(force=True)
    assert "--max-num-seqs=64" in args(root)  # a SIGKILL no OOM killer claimed (yet): retried unchanged
    # the kernel's line (mm/oom_kill.c's format) is read after the verdict
    oom = (
        "Out of memory: Killed process 100 (python3) total-vm:81234567kB, anon-rss:61234567kB, file-rss:0kB, "
        "shmem-rss:0kB, UID:0 pgtables:123456kB oom_score_adj:0"
    )
    late = Attempt(**{**a.__dict__, "lines": (*lines, oom), "kernel_oom": True})
    d.on_event(AttemptAmended(late))
    kinds = [e.fields["KIND"] for e in events if e.kind is EventKind.FAILURE_DETECTED]
    assert kinds == ["unknown_failure", "host_oom_killed"]
    assert "--max-num-seqs=32" in args(root)
    assert [r.action for r in d.ts(d.targets[0]).remedies] == ["change_flags"]  # the plain retry was taken back


def test_an_oom_placed_only_by_the_allocators_figures_yields_to_a_passed_probe() -> None:
    placed = Failure(K.CUDA_OOM_LOAD, Phase.LOAD, confidence=Confidence.LOW, basis=Basis.ALLOCATOR)
    served = weigh(placed, Observed(probe_passed=True))
    assert (served.kind, served.phase) == (K.CUDA_OOM_RUNTIME, Phase.SERVE)
    # dying before a healthy start is ready says nothing more than the figures did: loading stays
    early = weigh(placed, Observed(lived_s=10.0, healthy_ready_s=100.0))
    assert (early.kind, early.phase) == (K.CUDA_OOM_LOAD, Phase.LOAD)
    assert "allocator" in unsure(early)
    # the same verdict from a frame is not weak and is left alone
    framed = Failure(K.CUDA_OOM_LOAD, Phase.LOAD, confidence=Confidence.HIGH, basis=Basis.FRAME)
    assert weigh(framed, Observed(probe_passed=True)) == framed
