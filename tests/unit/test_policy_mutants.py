"""The remediation policy, rung by rung: the whole decision (action, the words that explain it, the change, the
flags it writes, the rung), the edges of each rule in the ladder table of ``core/policy.py``, and how
``unmoved`` tells a failure that did not move from one that did."""

from __future__ import annotations

import pytest

from vllm_guard.core.config import Fallback, Flags, Floors, Target
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import FailureKind, Phase
from vllm_guard.core.policy import Action, Decision, Facts, decide, unmoved
from vllm_guard.core.state import AttemptRecord, Current, TargetState

pytestmark = pytest.mark.unit

K = FailureKind
NOW = 1_800_000_000.0
GIB = 1024**3

OOM_KILLED = "the kernel OOM killer ended vLLM: host memory ran out. Check swap and RAM with `vllm-guard doctor`."
SERVING = "CUDA ran out of memory while serving: fewer sequences in flight need fewer activations"
PROFILING = "CUDA ran out of memory while profiling / capturing CUDA graphs / warming up"
HEADROOM_5 = "; kv_headroom leaves 5% of it beyond one full-length request"


def tgt(
    model: str = "/m/q",
    floors: Floors | None = None,
    fallback: list[Fallback] | None = None,
    kv_headroom: float = 0.05,
    **flags: object,
) -> Target:
    base: dict[str, object] = {"gpu_memory_utilization": 0.9, "max_model_len": 32768, "max_num_seqs": 64}
    base.update(flags)
    return Target(
        model=model,
        flags=Flags.model_validate(base),
        floors=floors or Floors(),
        fallback=fallback or [],
        kv_headroom=kv_headroom,
    )


def run(
    t: Target,
    kind: FailureKind,
    numbers: dict[str, float | int] | None = None,
    *,
    rungs: int = 0,
    facts: Facts | None = None,
    current: Current | None = None,
) -> Decision:
    cur = current or Current(model=t.model, flags=t.flags)
    state = TargetState(current=cur, rungs={kind.value: rungs} if rungs else {})
    return decide(t, state, Failure(kind, Phase.UNKNOWN, numbers or {}), NOW, facts or Facts())


def changed(t: Target, rung: str, reason: str, change: str, **flags: object) -> Decision:
    """The decision that writes the target's flags with ``flags`` changed, and nothing else."""
    new = Flags.model_validate({**t.flags.model_dump(), **flags})
    return Decision(Action.CHANGE_FLAGS, reason, change, Current(model=t.model, flags=new), rung)


# -- kv_cache_insufficient: to vLLM's estimate less kv_headroom, else its capacity, else x0.5; never under the floor


def test_kv_goes_kv_headroom_below_vllms_estimate_in_whole_blocks_and_says_so() -> None:
    t = tgt()
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"max_model_len": 32768, "estimated_max_model_len": 16000})
    assert d == changed(
        t,
        "max_model_len",
        "vLLM estimated that the KV cache holds 16000 tokens" + HEADROOM_5,
        "max_model_len 32768 -> 15200",  # 16000 x 0.95, a whole number of 16-token blocks
        max_model_len=15200,
    )


def test_kv_without_headroom_takes_vllms_estimate_exactly_even_off_a_block_boundary() -> None:
    t = tgt(kv_headroom=0)
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"estimated_max_model_len": 16001})
    assert d == changed(
        t,
        "max_model_len",
        "vLLM estimated that the KV cache holds 16001 tokens",  # no headroom: no words about it
        "max_model_len 32768 -> 16001",
        max_model_len=16001,
    )


def test_kv_goes_below_the_capacity_vllm_printed_when_it_gives_no_estimate() -> None:
    t = tgt()
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"kv_capacity_tokens": 20000})
    assert d == changed(
        t,
        "max_model_len",
        "vLLM printed a KV cache capacity of 20000 tokens" + HEADROOM_5,
        "max_model_len 32768 -> 18992",  # 19000 rounded down to 16-token blocks
        max_model_len=18992,
    )


def test_an_estimate_of_zero_is_no_figure_so_the_capacity_is_used() -> None:
    d = run(tgt(), K.KV_CACHE_INSUFFICIENT, {"estimated_max_model_len": 0, "kv_capacity_tokens": 20000})
    assert d.change == "max_model_len 32768 -> 18992"


def test_a_capacity_of_zero_is_no_figure_so_the_length_halves() -> None:
    t = tgt()
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"kv_capacity_tokens": 0})
    assert d == changed(
        t,
        "max_model_len",
        "no KV figure in the log: one step down (x0.5)",
        "max_model_len 32768 -> 16384",
        max_model_len=16384,
    )


def test_any_positive_estimate_is_a_figure_and_the_floor_holds_under_it() -> None:
    d = run(tgt(), K.KV_CACHE_INSUFFICIENT, {"estimated_max_model_len": 1, "kv_capacity_tokens": 20000})
    assert d.change == "max_model_len 32768 -> 2048"  # the estimate wins over the capacity, the floor over both


def test_any_positive_capacity_is_a_figure_and_the_floor_holds_under_it() -> None:
    d = run(tgt(), K.KV_CACHE_INSUFFICIENT, {"kv_capacity_tokens": 1})
    assert d.change == "max_model_len 32768 -> 2048"  # below one token is under the default floor 2048


def test_with_max_model_len_unset_the_length_vllm_said_it_tried_is_halved() -> None:
    t = tgt(max_model_len=None)
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"max_model_len": 40000}, facts=Facts(model_max_len=32768))
    assert d == changed(
        t,
        "max_model_len",
        "no KV figure in the log: one step down (x0.5)",
        "max_model_len 40000 -> 20000",
        max_model_len=20000,
    )


def test_with_max_model_len_unset_and_no_length_in_the_log_the_models_context_is_halved() -> None:
    t = tgt(max_model_len=None)
    d = run(t, K.KV_CACHE_INSUFFICIENT, facts=Facts(model_max_len=32768))
    assert d.change == "max_model_len 32768 -> 16384"
    assert d.current is not None and d.current.flags.max_model_len == 16384


def test_a_length_in_the_log_that_is_not_a_whole_number_is_not_taken_as_the_starting_length() -> None:
    # only an integer max_model_len from the log says what the attempt ran with; else the model's context does
    t = tgt(max_model_len=None)
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"max_model_len": 40000.0}, facts=Facts(model_max_len=32768))
    assert d.current is not None and d.current.flags.max_model_len == 16384
    assert d.change == "max_model_len unset -> 16384"  # no integer length known to start from


def test_with_no_length_known_at_all_the_kv_failure_is_given_up_on() -> None:
    d = run(tgt(max_model_len=None), K.KV_CACHE_INSUFFICIENT)
    assert d.action is Action.GIVE_UP
    assert d.reason == "kv_cache_insufficient: every flag the guard may lower is at its floor."


def test_on_the_cpu_backend_the_kv_failure_still_lowers_max_model_len_first() -> None:
    t = tgt(cpu_kvcache_space_gib=8)
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"estimated_max_model_len": 16000}, facts=Facts(platform="cpu"))
    assert d.rung == "max_model_len" and d.change == "max_model_len 32768 -> 15200"


def test_on_the_cpu_backend_a_kv_failure_at_the_length_floor_lowers_the_host_kv_space() -> None:
    t = tgt(max_model_len=2048, cpu_kvcache_space_gib=8)
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"estimated_max_model_len": 100}, facts=Facts(platform="cpu"))
    assert d == changed(
        t,
        "cpu_kv_space",
        "max_model_len is at its floor On the CPU backend the KV cache lives in host memory.",
        "cpu_kvcache_space_gib 8 -> 4",
        cpu_kvcache_space_gib=4,
    )


def test_on_a_gpu_a_kv_failure_at_the_length_floor_is_given_up_on_with_the_hint() -> None:
    t = tgt(max_model_len=2048)
    state = TargetState(current=Current(model=t.model, flags=t.flags))
    failure = Failure(K.KV_CACHE_INSUFFICIENT, Phase.UNKNOWN, {"estimated_max_model_len": 100}, hint="Add a GPU.")
    d = decide(t, state, failure, NOW, Facts(platform="cuda"))
    assert d == Decision(
        Action.GIVE_UP, "kv_cache_insufficient: every flag the guard may lower is at its floor. Add a GPU."
    )


# -- cuda_oom_profile: util down by the failed allocation (+0.01, at least 0.02); then eager; then util steps


def test_a_profile_oom_without_a_size_takes_the_default_util_step() -> None:
    t = tgt()
    d = run(t, K.CUDA_OOM_PROFILE)
    assert d == changed(t, "util", PROFILING, "gpu_memory_utilization 0.9 -> 0.87", gpu_memory_utilization=0.87)


def test_the_util_step_covers_the_allocation_plus_a_hundredth_rounded_up() -> None:
    # 4.008 GiB of 80 GiB is 5.01 %; with the 1 % margin 6.01 %, rounded up to the next hundredth: 0.07
    d = run(tgt(), K.CUDA_OOM_PROFILE, {"alloc_bytes": int(4.008 * GIB), "gpu_total_gib": 80.0})
    assert d.change == "gpu_memory_utilization 0.9 -> 0.83"


def test_the_util_step_is_never_under_two_hundredths() -> None:
    d = run(tgt(), K.CUDA_OOM_PROFILE, {"alloc_bytes": 100 * 2**20, "gpu_total_gib": 80.0})
    assert d.change == "gpu_memory_utilization 0.9 -> 0.88"


def test_a_large_allocation_takes_a_large_util_step() -> None:
    # half the card plus the margin: 0.51
    t = tgt(floors=Floors(gpu_memory_utilization=0.1))
    d = run(t, K.CUDA_OOM_PROFILE, {"alloc_bytes": 12 * GIB, "gpu_total_gib": 24.0})
    assert d.change == "gpu_memory_utilization 0.9 -> 0.39"


def test_any_positive_gpu_total_sizes_the_step() -> None:
    d = run(tgt(), K.CUDA_OOM_PROFILE, {"alloc_bytes": GIB // 10, "gpu_total_gib": 1.0})
    assert d.change == "gpu_memory_utilization 0.9 -> 0.79"  # 10 % of the card plus the margin


def test_a_gpu_total_of_zero_gives_the_default_step() -> None:
    d = run(tgt(), K.CUDA_OOM_PROFILE, {"alloc_bytes": GIB, "gpu_total_gib": 0.0})
    assert d.change == "gpu_memory_utilization 0.9 -> 0.87"


def test_util_moves_in_hundredths_from_any_base() -> None:
    d = run(tgt(gpu_memory_utilization=0.905), K.CUDA_OOM_PROFILE)
    assert d.current is not None
    assert d.current.flags.gpu_memory_utilization == 0.88  # 0.875, kept to hundredths


def test_the_second_profile_oom_turns_cuda_graphs_off() -> None:
    t = tgt()
    d = run(t, K.CUDA_OOM_PROFILE, rungs=1)
    assert d == changed(
        t,
        "eager",
        PROFILING,
        "enforce_eager off -> on (no CUDA graphs: their capture memory is freed)",
        enforce_eager=True,
    )


def test_the_second_profile_oom_with_graphs_already_off_steps_util() -> None:
    t = tgt(enforce_eager=True)
    d = run(t, K.CUDA_OOM_PROFILE, rungs=1)
    assert d == changed(t, "util", PROFILING, "gpu_memory_utilization 0.9 -> 0.87", gpu_memory_utilization=0.87)


def test_a_profile_oom_with_util_at_its_floor_turns_cuda_graphs_off() -> None:
    t = tgt(gpu_memory_utilization=0.5)
    d = run(t, K.CUDA_OOM_PROFILE)
    assert d == changed(
        t,
        "eager",
        PROFILING,
        "enforce_eager off -> on (no CUDA graphs: their capture memory is freed)",
        enforce_eager=True,
    )


def test_a_profile_oom_with_nothing_left_to_lower_gives_up() -> None:
    d = run(tgt(gpu_memory_utilization=0.5, enforce_eager=True), K.CUDA_OOM_PROFILE, rungs=2)
    assert d == Decision(Action.GIVE_UP, "cuda_oom_profile: every flag the guard may lower is at its floor.")


# -- cuda_oom_runtime: max_num_seqs x0.5; then max_num_batched_tokens x0.5; then util steps


def test_a_runtime_oom_halves_max_num_seqs() -> None:
    t = tgt()
    assert run(t, K.CUDA_OOM_RUNTIME) == changed(t, "max_num_seqs", SERVING, "max_num_seqs 64 -> 32", max_num_seqs=32)


def test_a_runtime_oom_with_seqs_at_the_floor_halves_a_set_max_num_batched_tokens() -> None:
    t = tgt(max_num_seqs=4, max_model_len=2048, max_num_batched_tokens=4096)
    d = run(t, K.CUDA_OOM_RUNTIME)
    assert d == changed(
        t,
        "max_num_batched_tokens",
        SERVING,
        "max_num_batched_tokens 4096 -> 2048",
        max_num_batched_tokens=2048,
    )


def test_unset_max_num_batched_tokens_halves_from_vllms_default_to_a_whole_number() -> None:
    t = tgt(max_num_seqs=4, max_model_len=2048)
    d = run(t, K.CUDA_OOM_RUNTIME)
    assert d == changed(
        t,
        "max_num_batched_tokens",
        SERVING,
        "max_num_batched_tokens unset (8192) -> 4096",
        max_num_batched_tokens=4096,
    )


def test_max_num_batched_tokens_never_goes_under_512() -> None:
    t = tgt(max_num_seqs=4, max_model_len=None, max_num_batched_tokens=600)
    d = run(t, K.CUDA_OOM_RUNTIME)
    assert d.change == "max_num_batched_tokens 600 -> 512"


def test_a_runtime_oom_with_seqs_and_batched_tokens_at_their_floors_steps_util() -> None:
    t = tgt(max_num_seqs=4, max_model_len=2048, max_num_batched_tokens=512)
    d = run(t, K.CUDA_OOM_RUNTIME)
    assert d == changed(t, "util", SERVING, "gpu_memory_utilization 0.9 -> 0.87", gpu_memory_utilization=0.87)


# -- cuda_oom_load: the next fallback build; none left: give up and say what works


def test_a_load_oom_switches_to_the_fallback_with_its_quantization_and_length() -> None:
    fb = Fallback(model="/m/awq", quantization="awq", max_model_len=16384)
    t = tgt(model="/m/bf16", fallback=[fb])
    d = run(t, K.CUDA_OOM_LOAD)
    flags = Flags.model_validate({**t.flags.model_dump(), "quantization": "awq", "max_model_len": 16384})
    assert d == Decision(
        Action.SWITCH_MODEL,
        "the weights do not fit in GPU memory: no flag can fix that, so use the next fallback build",
        "model /m/bf16 -> /m/awq (quantization awq)",
        Current(model="/m/awq", fallback_index=0, flags=flags),
        "fallback",
    )


def test_a_fallback_without_quantization_or_length_keeps_the_current_length() -> None:
    t = tgt(model="/m/bf16", fallback=[Fallback(model="/m/smaller")])
    d = run(t, K.CUDA_OOM_LOAD)
    assert d.change == "model /m/bf16 -> /m/smaller"
    assert d.current is not None and d.current.flags.max_model_len == 32768
    assert d.current.flags.quantization is None


def test_a_flag_change_on_a_fallback_build_stays_on_that_build() -> None:
    t = tgt(model="/m/bf16", fallback=[Fallback(model="/m/awq"), Fallback(model="/m/gptq")])
    on_awq = Current(model="/m/awq", fallback_index=0, flags=t.flags)
    d = run(t, K.KV_CACHE_INSUFFICIENT, {"estimated_max_model_len": 16000}, current=on_awq)
    assert d.current is not None
    assert (d.current.model, d.current.fallback_index, d.current.flags.max_model_len) == ("/m/awq", 0, 15200)
    # so the next load OOM moves on to the second fallback, not back to the first
    nxt = decide(t, TargetState(current=d.current), Failure(K.CUDA_OOM_LOAD), NOW)
    assert nxt.current is not None and (nxt.current.model, nxt.current.fallback_index) == ("/m/gptq", 1)


def test_a_load_oom_with_no_fallback_left_names_the_ways_out() -> None:
    d = run(tgt(tensor_parallel_size=2), K.CUDA_OOM_LOAD)
    assert d == Decision(
        Action.GIVE_UP,
        "the weights do not fit in GPU memory and no fallback model is left: add a quantized build (AWQ, GPTQ or "
        "FP8) as [[target.fallback]], or spread the model over more GPUs (tensor_parallel_size > 2)",
    )


# -- host_oom_killed: swap_space x0.5 (to 0), cpu_offload_gb to 0, the CPU backend's KV space, then max_num_seqs


@pytest.mark.parametrize(("swap", "after", "words"), [(4, 2, "4 -> 2"), (2, 1, "2 -> 1"), (1, 0, "1 -> 0")])
def test_a_host_oom_halves_swap_space_down_to_zero(swap: float, after: float, words: str) -> None:
    t = tgt(swap_space=swap)
    assert run(t, K.HOST_OOM_KILLED) == changed(
        t, "swap_space", OOM_KILLED, f"swap_space {words} GiB (pinned host memory per GPU)", swap_space=after
    )


def test_a_host_oom_with_swap_space_at_zero_moves_to_the_next_rung() -> None:
    t = tgt(swap_space=0)
    assert run(t, K.HOST_OOM_KILLED) == changed(t, "max_num_seqs", OOM_KILLED, "max_num_seqs 64 -> 32", max_num_seqs=32)


@pytest.mark.parametrize(("offload", "words"), [(8, "8"), (1, "1"), (0.5, "0.5")])
def test_a_host_oom_drops_cpu_offload_to_zero(offload: float, words: str) -> None:
    t = tgt(cpu_offload_gb=offload)
    assert run(t, K.HOST_OOM_KILLED) == changed(
        t,
        "cpu_offload_gb",
        OOM_KILLED,
        f"cpu_offload_gb {words} -> 0 (offloaded weights live in host memory)",
        cpu_offload_gb=0.0,
    )


def test_a_host_oom_with_no_cpu_offload_moves_to_the_next_rung() -> None:
    assert run(tgt(cpu_offload_gb=0), K.HOST_OOM_KILLED).rung == "max_num_seqs"


def test_a_host_oom_on_the_cpu_backend_halves_the_kv_space_in_whole_gib() -> None:
    t = tgt(cpu_kvcache_space_gib=5)
    assert run(t, K.HOST_OOM_KILLED, facts=Facts(platform="cpu")) == changed(
        t,
        "cpu_kv_space",
        OOM_KILLED + " On the CPU backend the KV cache lives in host memory.",
        "cpu_kvcache_space_gib 5 -> 2",
        cpu_kvcache_space_gib=2,
    )


def test_a_host_oom_on_the_cpu_backend_with_one_gib_of_kv_space_moves_to_the_next_rung() -> None:
    t = tgt(cpu_kvcache_space_gib=1)
    d = run(t, K.HOST_OOM_KILLED, facts=Facts(platform="cpu"))
    assert d == changed(t, "max_num_seqs", OOM_KILLED, "max_num_seqs 64 -> 32", max_num_seqs=32)


@pytest.mark.parametrize(("util", "after"), [(0.8, 0.6), (0.9, 0.67)])
def test_a_host_oom_on_the_cpu_backend_without_kv_space_takes_a_quarter_off_util(util: float, after: float) -> None:
    # util sizes the KV cache in host memory there: x0.75, the step kept to hundredths (0.9 x 0.25 -> 0.23)
    t = tgt(gpu_memory_utilization=util)
    assert run(t, K.HOST_OOM_KILLED, facts=Facts(platform="cpu")) == changed(
        t,
        "util",
        OOM_KILLED + " On the CPU backend util sizes the KV cache in host memory.",
        f"gpu_memory_utilization {util} -> {after}",
        gpu_memory_utilization=after,
    )


def test_a_host_oom_on_the_cpu_backend_with_util_at_its_floor_moves_to_the_next_rung() -> None:
    t = tgt(gpu_memory_utilization=0.5)
    d = run(t, K.HOST_OOM_KILLED, facts=Facts(platform="cpu"))
    assert d == changed(t, "max_num_seqs", OOM_KILLED, "max_num_seqs 64 -> 32", max_num_seqs=32)


# -- the kinds that never change a flag


def test_held_vram_is_waited_for_and_the_reason_says_why_flags_stay() -> None:
    assert run(tgt(), K.VRAM_HELD) == Decision(
        Action.WAIT_FOR_VRAM,
        "another process holds GPU memory; lowering flags would only hide that, so wait for it",
    )


def test_an_attempt_that_did_not_fail_needs_nothing() -> None:
    assert run(tgt(), K.NONE) == Decision(Action.NOTHING, "the attempt did not fail")


# -- an OOM of unknown phase whose last step did not move it: another ladder


HOW = "the same cuda_oom_profile (unknown) failing to allocate the same 1024 MiB"
ANOTHER = f"the last change did not move the failure ({HOW}): trying another ladder"


def unmoved_oom(t: Target, kind: FailureKind = K.CUDA_OOM_PROFILE) -> Decision:
    return run(t, kind, {"alloc_bytes": GIB, "gpu_total_gib": 24.0}, facts=Facts(unmoved=HOW))


def test_an_unmoved_profile_oom_with_nothing_else_to_try_lowers_max_num_seqs() -> None:
    t = tgt(max_model_len=None)
    assert unmoved_oom(t) == changed(
        t, "max_num_seqs", ANOTHER + "; fewer sequences in flight", "max_num_seqs 64 -> 32", max_num_seqs=32
    )


def test_an_unmoved_runtime_oom_with_nothing_else_to_try_lowers_util() -> None:
    t = tgt(max_model_len=None)
    assert unmoved_oom(t, K.CUDA_OOM_RUNTIME) == changed(
        t,
        "util",
        ANOTHER + "; a smaller share of GPU memory",
        "gpu_memory_utilization 0.9 -> 0.84",  # 1 GiB of 24 GiB is 4.2 %, plus the margin, rounded up: 0.06
        gpu_memory_utilization=0.84,
    )


def test_an_unmoved_oom_tries_the_fallback_build_first_and_says_why() -> None:
    t = tgt(fallback=[Fallback(model="/m/awq")])
    d = unmoved_oom(t)
    assert d.action is Action.SWITCH_MODEL and d.rung == "fallback"
    assert d.reason == ANOTHER + "; the weights themselves may not fit, so the fallback build"


def test_an_unmoved_oom_without_a_fallback_halves_max_model_len_and_says_why() -> None:
    t = tgt()
    assert unmoved_oom(t) == changed(
        t,
        "max_model_len",
        ANOTHER + "; a shorter max_model_len",
        "max_model_len 32768 -> 16384",
        max_model_len=16384,
    )


def test_an_unmoved_oom_with_every_other_ladder_at_its_floor_gives_up_and_says_why() -> None:
    t = tgt(max_model_len=None, max_num_seqs=4)
    assert unmoved_oom(t) == Decision(
        Action.GIVE_UP,
        f"the last change did not move the failure ({HOW}), and no other ladder is left above its floor: "
        "stepping further down the same one would only repeat it.",
    )


# -- unmoved: the failure after a flag change is the one before it, word for word


def rec(
    inv: str,
    *,
    kind: str = "cuda_oom_profile",
    alloc: int | None = None,
    evidence: list[str] | None = None,
    action: str | None = None,
    ran_flags: str | None = None,
) -> AttemptRecord:
    return AttemptRecord(
        invocation_id=inv,
        kind=kind,
        phase="unknown",
        numbers={"alloc_bytes": alloc} if alloc is not None else {},
        evidence=["torch.OutOfMemoryError: CUDA out of memory."] if evidence is None else evidence,
        action=action,
        ran_flags=ran_flags,
    )


def test_unmoved_names_the_kind_the_phase_and_the_allocation_in_mib() -> None:
    got = unmoved([rec("a", alloc=GIB, action="change_flags"), rec("b", alloc=GIB)])
    assert got == "the same cuda_oom_profile (unknown) failing to allocate the same 1024 MiB"
    big = 20 * GIB + 512 * 2**20
    assert unmoved([rec("a", alloc=big, action="change_flags"), rec("b", alloc=big)]) == (
        "the same cuda_oom_profile (unknown) failing to allocate the same 20992 MiB"
    )


def test_an_allocation_on_one_side_only_is_a_failure_that_moved() -> None:
    assert unmoved([rec("a", alloc=GIB, action="change_flags"), rec("b")]) is None
    assert unmoved([rec("a", action="change_flags"), rec("b", alloc=GIB)]) is None


def test_a_change_that_both_attempts_ran_on_is_not_judged_yet() -> None:
    same = "--gpu-memory-utilization=0.87"
    assert (
        unmoved([rec("a", alloc=GIB, action="change_flags", ran_flags=same), rec("b", alloc=GIB, ran_flags=same)])
        is None
    )
    moved_flags = [
        rec("a", alloc=GIB, action="change_flags", ran_flags="--gpu-memory-utilization=0.9"),
        rec("b", alloc=GIB, ran_flags=same),
    ]
    assert unmoved(moved_flags) == HOW


def test_superseded_attempts_and_clean_ones_in_between_are_not_compared() -> None:
    before, now = rec("a", alloc=GIB, action="change_flags"), rec("c", alloc=GIB)
    superseded = rec("b", alloc=2 * GIB, action="superseded")
    clean = rec("s", kind="none", evidence=[])
    assert unmoved([before, superseded, now]) == HOW
    assert unmoved([before, clean, now]) == HOW


def test_only_the_last_two_failures_are_compared() -> None:
    first = rec("a", alloc=2 * GIB, action="change_flags")
    second = rec("b", alloc=GIB, action="change_flags")
    assert unmoved([first, second, rec("c", alloc=GIB // 2)]) is None  # the last step moved it
    assert unmoved([first, second, rec("c", alloc=GIB)]) == HOW


def test_without_an_allocation_the_first_line_of_evidence_decides() -> None:
    two = ["torch.OutOfMemoryError: CUDA out of memory.", "  File x.py, line 1"]
    other = ["torch.OutOfMemoryError: CUDA out of memory. (again)", "  File x.py, line 1"]
    before = rec("a", evidence=two, action="change_flags")
    assert unmoved([before, rec("b", evidence=list(two))]) == (
        "the same cuda_oom_profile (unknown): torch.OutOfMemoryError: CUDA out of memory."
    )
    assert unmoved([before, rec("b", evidence=other)]) is None
    assert unmoved([rec("a", evidence=[], action="change_flags"), rec("b", evidence=[])]) is None


def test_the_evidence_quoted_is_cut_at_120_characters() -> None:
    line = "x" * 200
    got = unmoved([rec("a", evidence=[line], action="change_flags"), rec("b", evidence=[line])])
    assert got == "the same cuda_oom_profile (unknown): " + "x" * 120
