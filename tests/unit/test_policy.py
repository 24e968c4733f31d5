"""The remediation policy: a table per kind, and properties that must hold for any input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_guard.core.config import Fallback, Flags, Floors, Target
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import FailureKind, Phase
from vllm_guard.core.policy import Action, Facts, decide, unmoved
from vllm_guard.core.state import AttemptRecord, Current, Remedy, TargetState

pytestmark = pytest.mark.unit

K = FailureKind
NOW = 1_800_000_000.0


def target(**flags: object) -> Target:
    base = {"gpu_memory_utilization": 0.9, "max_model_len": 131072, "max_num_seqs": 64}
    base.update(flags)
    return Target(model="/models/q", flags=Flags.model_validate(base))


def f(kind: FailureKind, **numbers: float | int) -> Failure:
    return Failure(kind, Phase.UNKNOWN, numbers)


# (case, target, state rungs, failure, expected action, expected change words)
TABLE = [
    (
        "kv: to vLLM's estimate",
        target(),
        {},
        f(K.KV_CACHE_INSUFFICIENT, max_model_len=131072, estimated_max_model_len=32640),
        Action.CHANGE_FLAGS,
        "max_model_len 131072 -> 31008",  # 5 % below it (kv_headroom), in whole 16-token blocks
    ),
    (
        "kv: exactly vLLM's estimate with no headroom",
        Target(model="/models/q", kv_headroom=0, flags=Flags(max_model_len=131072)),
        {},
        f(K.KV_CACHE_INSUFFICIENT, max_model_len=131072, estimated_max_model_len=32640),
        Action.CHANGE_FLAGS,
        "max_model_len 131072 -> 32640",
    ),
    (
        "kv: to the V0 capacity",
        target(),
        {},
        f(K.KV_CACHE_INSUFFICIENT, max_model_len=131072, kv_capacity_tokens=50000),
        Action.CHANGE_FLAGS,
        "max_model_len 131072 -> 47488",
    ),
    (
        "kv: no figure, half",
        target(),
        {},
        f(K.KV_CACHE_INSUFFICIENT),
        Action.CHANGE_FLAGS,
        "max_model_len 131072 -> 65536",
    ),
    (
        "kv: never under the floor",
        target(),
        {},
        f(K.KV_CACHE_INSUFFICIENT, estimated_max_model_len=100),
        Action.CHANGE_FLAGS,
        "max_model_len 131072 -> 2048",
    ),
    (
        "kv: at the floor gives up",
        target(max_model_len=2048),
        {},
        f(K.KV_CACHE_INSUFFICIENT, estimated_max_model_len=100),
        Action.GIVE_UP,
        "",
    ),
    (
        "profile oom: small util step",
        target(),
        {},
        f(K.CUDA_OOM_PROFILE),
        Action.CHANGE_FLAGS,
        "gpu_memory_utilization 0.9 -> 0.87",
    ),
    (
        "profile oom: step covers the allocation",
        target(),
        {},
        f(K.CUDA_OOM_PROFILE, alloc_bytes=4 * 1024**3, gpu_total_gib=80.0),
        Action.CHANGE_FLAGS,
        "gpu_memory_utilization 0.9 -> 0.84",
    ),
    (
        "profile oom: second time eager",
        target(),
        {"cuda_oom_profile": 1},
        f(K.CUDA_OOM_PROFILE),
        Action.CHANGE_FLAGS,
        "enforce_eager off -> on",
    ),
    (
        "profile oom: third time util again",
        target(enforce_eager=True),
        {"cuda_oom_profile": 2},
        f(K.CUDA_OOM_PROFILE),
        Action.CHANGE_FLAGS,
        "gpu_memory_utilization 0.9 -> 0.87",
    ),
    ("runtime oom: seqs first", target(), {}, f(K.CUDA_OOM_RUNTIME), Action.CHANGE_FLAGS, "max_num_seqs 64 -> 32"),
    (
        "runtime oom: unset seqs from vLLM's default",
        target(max_num_seqs=None),
        {},
        f(K.CUDA_OOM_RUNTIME),
        Action.CHANGE_FLAGS,
        "max_num_seqs unset (256) -> 128",
    ),
    (
        "runtime oom: then batched tokens",
        target(max_num_seqs=4, max_model_len=2048),
        {},
        f(K.CUDA_OOM_RUNTIME),
        Action.CHANGE_FLAGS,
        "max_num_batched_tokens unset (8192) -> 4096",
    ),
    (
        "runtime oom: batched tokens never below max_model_len (vLLM refuses it)",
        target(max_num_seqs=4, max_model_len=6144),
        {},
        f(K.CUDA_OOM_RUNTIME),
        Action.CHANGE_FLAGS,
        "max_num_batched_tokens unset (8192) -> 6144",
    ),
    (
        "runtime oom: util when batched tokens are at max_model_len",
        target(max_num_seqs=4, max_model_len=8192),
        {},
        f(K.CUDA_OOM_RUNTIME),
        Action.CHANGE_FLAGS,
        "gpu_memory_utilization 0.9 ->",
    ),
    ("load oom without fallback gives up", target(), {}, f(K.CUDA_OOM_LOAD), Action.GIVE_UP, ""),
    (
        "host oom: swap space first",
        target(swap_space=4),
        {},
        f(K.HOST_OOM_KILLED),
        Action.CHANGE_FLAGS,
        "swap_space 4 -> 2",
    ),
    (
        "host oom: then cpu offload",
        target(cpu_offload_gb=8),
        {},
        f(K.HOST_OOM_KILLED),
        Action.CHANGE_FLAGS,
        "cpu_offload_gb 8 -> 0",
    ),
    ("host oom: then seqs", target(), {}, f(K.HOST_OOM_KILLED), Action.CHANGE_FLAGS, "max_num_seqs 64 -> 32"),
    ("vram held waits", target(), {}, f(K.VRAM_HELD), Action.WAIT_FOR_VRAM, ""),
    ("bad arguments gives up", target(), {}, f(K.BAD_ARGUMENTS), Action.GIVE_UP, ""),
    ("model load error gives up", target(), {}, f(K.MODEL_LOAD_ERROR), Action.GIVE_UP, ""),
    ("driver error gives up", target(), {}, f(K.GPU_DRIVER_ERROR), Action.GIVE_UP, ""),
    ("port in use retries", target(), {}, f(K.PORT_IN_USE), Action.LET_RETRY, ""),
    ("nccl retries", target(), {}, f(K.DISTRIBUTED_ERROR), Action.LET_RETRY, ""),
    ("shm retries", target(), {}, f(K.SHM_EXHAUSTED), Action.LET_RETRY, ""),
    ("engine dead retries", target(), {}, f(K.ENGINE_DEAD), Action.LET_RETRY, ""),
    ("unknown retries", target(), {}, f(K.UNKNOWN_FAILURE), Action.LET_RETRY, ""),
    ("none does nothing", target(), {}, f(K.NONE), Action.NOTHING, ""),
]


@pytest.mark.parametrize(("case", "t", "rungs", "failure", "action", "change"), TABLE, ids=[r[0] for r in TABLE])
def test_policy_table(
    case: str, t: Target, rungs: dict[str, int], failure: Failure, action: Action, change: str
) -> None:
    state = TargetState(current=Current(model=t.model, flags=t.flags), rungs=rungs)
    d = decide(t, state, failure, NOW)
    assert d.action is action, d.reason
    assert change in d.change
    assert d.reason


def test_load_oom_switches_to_the_next_fallback_then_gives_up() -> None:
    t = Target(
        model="/m/bf16",
        fallback=[Fallback(model="/m/awq", quantization="awq"), Fallback(model="/m/gptq", quantization="gptq")],
    )
    st0 = TargetState(current=Current(model=t.model, flags=t.flags))
    d1 = decide(t, st0, f(K.CUDA_OOM_LOAD), NOW)
    assert d1.action is Action.SWITCH_MODEL and d1.current is not None
    assert d1.current.model == "/m/awq" and d1.current.flags.quantization == "awq" and d1.current.fallback_index == 0
    d2 = decide(t, TargetState(current=d1.current), f(K.CUDA_OOM_LOAD), NOW)
    assert d2.current is not None and d2.current.model == "/m/gptq"
    d3 = decide(t, TargetState(current=d2.current), f(K.CUDA_OOM_LOAD), NOW)
    assert d3.action is Action.GIVE_UP and "tensor_parallel_size" in d3.reason


def test_cpu_backend_host_oom_lowers_kv_space() -> None:
    t = target(cpu_kvcache_space_gib=4.0)
    d = decide(
        t, TargetState(current=Current(model=t.model, flags=t.flags)), f(K.HOST_OOM_KILLED), NOW, Facts(platform="cpu")
    )
    assert d.current is not None and d.current.flags.cpu_kvcache_space_gib == 2.0


def test_budget_exhausted_gives_up() -> None:
    t = target()
    spent = [
        Remedy(at=NOW - 10 * i, kind="kv_cache_insufficient", action="change_flags", change="x", reason="y")
        for i in range(t.budget.max_remedies)
    ]
    d = decide(t, TargetState(remedies=spent), f(K.KV_CACHE_INSUFFICIENT, estimated_max_model_len=4096), NOW)
    assert d.action is Action.GIVE_UP and "budget" in d.reason
    # remedies older than the window do not count
    old = [r.model_copy(update={"at": NOW - t.budget.window_s - 1}) for r in spent]
    assert (
        decide(t, TargetState(remedies=old), f(K.KV_CACHE_INSUFFICIENT, estimated_max_model_len=4096), NOW).action
        is Action.CHANGE_FLAGS
    )


# -- properties --

kinds = st.sampled_from(list(FailureKind))
numbers = st.fixed_dictionaries(
    {},
    optional={
        "max_model_len": st.integers(16, 1_000_000),
        "estimated_max_model_len": st.integers(0, 1_000_000),
        "kv_capacity_tokens": st.integers(0, 1_000_000),
        "alloc_bytes": st.integers(0, 200 * 1024**3),
        "gpu_total_gib": st.floats(1, 200),
    },
)
flag_sets = st.builds(
    lambda util, mml, seqs, eager, swap: Flags(
        gpu_memory_utilization=util, max_model_len=mml, max_num_seqs=seqs, enforce_eager=eager, swap_space=swap
    ),
    st.floats(0.05, 1.0),
    st.none() | st.integers(16, 1_000_000),
    st.none() | st.integers(1, 2048),
    st.booleans(),
    st.none() | st.floats(0, 64),
)
floors = st.builds(
    Floors,
    gpu_memory_utilization=st.none() | st.floats(0.05, 0.5),
    max_model_len=st.none() | st.integers(16, 4096),
    max_num_seqs=st.none() | st.integers(1, 16),
)


def _target(flags: Flags, fl: Floors) -> Target | None:
    try:
        return Target(model="/m", flags=flags, floors=fl)
    except ValueError:
        return None  # a floor above its base is refused by the config itself


@settings(max_examples=400, deadline=None)
@given(
    flags=flag_sets,
    fl=floors,
    kind=kinds,
    nums=numbers,
    rungs=st.integers(0, 5),
    platform=st.sampled_from([None, "cpu"]),
)
def test_floors_never_crossed_and_non_memory_kinds_never_change_flags(
    flags: Flags, fl: Floors, kind: FailureKind, nums: dict[str, float], rungs: int, platform: str | None
) -> None:
    t = _target(flags, fl)
    if t is None:
        return
    state = TargetState(current=Current(model="/m", flags=flags), rungs={kind.value: rungs})
    d = decide(t, state, Failure(kind, Phase.UNKNOWN, nums), NOW, Facts(platform=platform))
    if not kind.is_memory:
        assert d.current is None
        assert d.action in (Action.GIVE_UP, Action.LET_RETRY, Action.WAIT_FOR_VRAM, Action.NOTHING)
    if d.current is not None:
        new = d.current.flags
        assert new.gpu_memory_utilization >= min(t.floor("gpu_memory_utilization"), flags.gpu_memory_utilization) - 1e-9
        if new.max_model_len is not None and new.max_model_len != flags.max_model_len:
            assert new.max_model_len >= t.floor("max_model_len")
        if new.max_num_seqs is not None and new.max_num_seqs != flags.max_num_seqs:
            assert new.max_num_seqs >= t.floor("max_num_seqs")
        # a remedy only ever lowers memory use
        assert new.gpu_memory_utilization <= flags.gpu_memory_utilization
        assert new != flags


@settings(max_examples=200, deadline=None)
@given(kind=kinds, nums=numbers, n=st.integers(0, 20), flags=flag_sets)
def test_budget_never_exceeded_and_decisions_are_deterministic(
    kind: FailureKind, nums: dict[str, float], n: int, flags: Flags
) -> None:
    t = _target(flags, Floors())
    if t is None:
        return
    remedies = [Remedy(at=NOW - i, kind=kind.value, action="change_flags", change="c", reason="r") for i in range(n)]
    state = TargetState(current=Current(model="/m", flags=flags), remedies=remedies)
    failure = Failure(kind, Phase.UNKNOWN, nums)
    d1 = decide(t, state, failure, NOW)
    d2 = decide(t, state.model_copy(deep=True), failure, NOW)
    assert d1 == d2
    if n >= t.budget.max_remedies and kind is not FailureKind.NONE:
        assert d1.action is Action.GIVE_UP


# --- remedies that check their own effect --------------------------------------------------------------


def _rec(inv: str, kind: str, phase: str, alloc: int | None, action: str | None) -> AttemptRecord:
    numbers = {"alloc_bytes": alloc} if alloc is not None else {}
    return AttemptRecord(invocation_id=inv, kind=kind, phase=phase, numbers=numbers, evidence=["e"], action=action)


def test_the_same_failure_after_a_change_did_not_move() -> None:
    before = _rec("a", "cuda_oom_profile", "unknown", 2**30, "change_flags")
    assert unmoved([before, _rec("b", "cuda_oom_profile", "unknown", 2**30, None)]) is not None
    # a smaller allocation, another phase, or no change in between: it moved (or nothing was tried)
    assert unmoved([before, _rec("b", "cuda_oom_profile", "unknown", 2**29, None)]) is None
    assert unmoved([before, _rec("b", "cuda_oom_profile", "profile", 2**30, None)]) is None
    let_retry = _rec("a", "cuda_oom_profile", "unknown", 2**30, "let_retry")
    assert unmoved([let_retry, _rec("b", "cuda_oom_profile", "unknown", 2**30, None)]) is None


OOM_NO_PHASE = Failure(FailureKind.CUDA_OOM_PROFILE, Phase.UNKNOWN, {"alloc_bytes": 2**30, "gpu_total_gib": 24.0})


def test_an_unmoved_oom_of_unknown_phase_tries_the_fallback_build() -> None:
    target = Target(model="/m/big", fallback=[Fallback(model="/m/big-awq", quantization="awq")])
    facts = Facts(unmoved="the same cuda_oom_profile (unknown) failing to allocate the same 1024 MiB")
    d = decide(target, TargetState(), OOM_NO_PHASE, 0.0, facts)
    assert d.action is Action.SWITCH_MODEL and d.current is not None and d.current.model == "/m/big-awq"
    assert d.reason.startswith("the last change did not move the failure")


def test_without_a_fallback_it_shortens_max_model_len_instead_of_another_util_step() -> None:
    target = Target(model="/m/big", flags=Flags(max_model_len=32768))
    d = decide(target, TargetState(), OOM_NO_PHASE, 0.0, Facts(unmoved="the same ..."))
    assert d.current is not None and d.current.flags.max_model_len == 16384
    assert d.current.flags.gpu_memory_utilization == target.flags.gpu_memory_utilization


def test_an_oom_whose_phase_is_known_stays_on_its_ladder() -> None:
    target = Target(model="/m/big", fallback=[Fallback(model="/m/big-awq")])
    known = Failure(FailureKind.CUDA_OOM_PROFILE, Phase.PROFILE, {"alloc_bytes": 2**30, "gpu_total_gib": 24.0})
    d = decide(target, TargetState(), known, 0.0, Facts(unmoved="the same ..."))
    assert d.action is Action.CHANGE_FLAGS and d.rung in ("util", "eager")


@settings(max_examples=200, deadline=None)
@given(
    alloc=st.integers(min_value=2**20, max_value=2**34),
    fallbacks=st.integers(min_value=0, max_value=2),
    max_len=st.sampled_from([None, 4096, 32768]),
    kind=st.sampled_from([FailureKind.CUDA_OOM_PROFILE, FailureKind.CUDA_OOM_RUNTIME]),
)
def test_an_unmoved_failure_never_takes_the_same_ladder_twice(
    alloc: int, fallbacks: int, max_len: int | None, kind: FailureKind
) -> None:
    # replay: the same OOM of unknown phase, word for word, after every remedy; the guard must not take the
    # step that did not move it again, and floors and the budget still hold
    target = Target(
        model="/m/big",
        flags=Flags(max_model_len=max_len),
        fallback=[Fallback(model=f"/m/fb{i}") for i in range(fallbacks)],
    )
    state = TargetState()
    failure = Failure(kind, Phase.UNKNOWN, {"alloc_bytes": alloc, "gpu_total_gib": 24.0})
    records: list[AttemptRecord] = []
    rungs: list[str | None] = []
    for i in range(target.budget.max_remedies + 2):
        records.append(_rec(str(i), failure.kind.value, failure.phase.value, alloc, None))
        d = decide(target, state, failure, float(i), Facts(unmoved=unmoved(records)))
        records[-1].action = d.action.value
        if d.current is None:
            break
        assert d.current.flags.gpu_memory_utilization >= target.floor("gpu_memory_utilization")
        state.current = d.current
        state.rungs[failure.kind.value] = state.rungs.get(failure.kind.value, 0) + 1
        state.add_remedy(Remedy(at=float(i), kind=failure.kind.value, action=d.action.value, reason="", change=""))
        rungs.append(d.rung)
    first = {FailureKind.CUDA_OOM_PROFILE: ("util", "eager"), FailureKind.CUDA_OOM_RUNTIME: ("max_num_seqs",)}
    assert not rungs or rungs[0] in first[kind]  # the first step follows the guess
    assert not set(first[kind]) & set(rungs[1:]), rungs  # that ladder did not move it: never again
    assert len(rungs) <= target.budget.max_remedies


@settings(max_examples=300, deadline=None)
@given(
    est=st.integers(1, 1_000_000),
    base=st.integers(16, 1_000_000),
    headroom=st.floats(0, 0.5),
    floor=st.none() | st.integers(16, 4096),
)
def test_the_kv_remedy_stays_at_or_below_vllms_estimate_and_leaves_the_headroom_asked(
    est: int, base: int, headroom: float, floor: int | None
) -> None:
    try:
        t = Target(
            model="/m", kv_headroom=headroom, flags=Flags(max_model_len=base), floors=Floors(max_model_len=floor)
        )
    except ValueError:
        return  # a floor above its base is refused by the config itself
    d = decide(t, TargetState(), f(K.KV_CACHE_INSUFFICIENT, estimated_max_model_len=est), NOW)
    lowest = t.floor("max_model_len")
    if d.action is not Action.CHANGE_FLAGS:
        return
    new = d.current.flags.max_model_len if d.current else None
    assert new is not None and lowest <= new < base
    if new > lowest:  # the floor, where it is higher, wins over the estimate
        assert new <= est * (1 - headroom) + 1e-6 and (headroom == 0 or new % 16 == 0)
        assert est * (1 - headroom) - new < 16 or new == lowest


_NUMERIC = ("gpu_memory_utilization", "max_model_len", "max_num_seqs", "max_num_batched_tokens", "swap_space")


@settings(max_examples=400, deadline=None)
@given(flags=flag_sets, kind=kinds, nums=numbers, model_len=st.none() | st.integers(16, 1_000_000))
def test_a_remedy_never_raises_a_flag_nor_leaves_batched_tokens_under_max_model_len(
    flags: Flags, kind: FailureKind, nums: dict[str, float], model_len: int | None
) -> None:
    t = _target(flags, Floors())
    if t is None:
        return
    d = decide(t, TargetState(), Failure(kind, Phase.UNKNOWN, nums), NOW, Facts(model_max_len=model_len))
    if d.current is None or d.current.model != t.model:
        return
    new = d.current.flags
    for name in _NUMERIC:
        before, after = getattr(flags, name), getattr(new, name)
        if after is None or after == before:
            continue
        if before is not None:
            assert after <= before, (name, before, after)
        elif name == "max_model_len":  # unset ran at the model's context (or the length vLLM said it tried)
            ref = nums.get("max_model_len", model_len)
            assert ref is not None and after < ref, (after, nums, model_len)
    if new.max_num_batched_tokens is not None and new.max_num_batched_tokens != flags.max_num_batched_tokens:
        assert new.max_model_len is None or new.max_num_batched_tokens >= new.max_model_len


def test_a_hybrid_models_state_blocks_lower_max_num_seqs_not_the_length() -> None:
    # vLLM asks for max_num_seqs <= its state blocks; a shorter max_model_len would not add blocks
    t = Target(model="/models/q", flags=Flags(max_model_len=131072))  # max_num_seqs left to vLLM (1024 there)
    failure = f(K.KV_CACHE_INSUFFICIENT, max_num_seqs=1024, max_num_seqs_fit=600)
    d = decide(t, TargetState(current=Current(model=t.model, flags=t.flags)), failure, NOW)
    assert d.action is Action.CHANGE_FLAGS and d.current is not None
    assert d.current.flags.max_num_seqs == 600 and d.current.flags.max_model_len == 131072
    assert "max_num_seqs unset (1024) -> 600" in d.change
    # at the floor (4) there is nothing left to lower: it gives up, with vLLM's other way out in the reason
    low = target(max_num_seqs=4)
    at_floor = f(K.KV_CACHE_INSUFFICIENT, max_num_seqs=4, max_num_seqs_fit=2)
    stuck = decide(low, TargetState(current=Current(model=low.model, flags=low.flags)), at_floor, NOW)
    assert stuck.action is Action.GIVE_UP and "floor" in stuck.reason


OVERSIZED = Failure(FailureKind.CUDA_OOM_PROFILE, Phase.PROFILE, {"alloc_bytes": 256 * 2**30, "gpu_total_gib": 23.5})


def test_an_allocation_larger_than_the_gpu_lowers_what_it_grows_with_never_the_util() -> None:
    # "Tried to allocate 256.00 GiB" on a 23.5 GiB card: no gpu_memory_utilization holds it
    target = Target(model="/m/q", flags=Flags(max_model_len=32768, max_num_seqs=64))
    d = decide(target, TargetState(), OVERSIZED, 0.0)
    assert d.action is Action.CHANGE_FLAGS and d.current is not None
    assert d.current.flags.max_model_len == 16384  # batched tokens cannot go below max_model_len
    assert d.current.flags.gpu_memory_utilization == target.flags.gpu_memory_utilization
    assert "larger than the whole GPU" in d.reason and "256.00 GiB" in d.reason
    # with room under max_model_len, the tokens of a step first
    short = Target(model="/m/q", flags=Flags(max_model_len=4096))
    d = decide(short, TargetState(), OVERSIZED, 0.0)
    assert d.current is not None and d.current.flags.max_num_batched_tokens == 4096
    # the same allocation after that step: the step is not taken again
    state = TargetState(
        remedies=[
            Remedy(
                at=0.0,
                kind="cuda_oom_profile",
                action="change_flags",
                change="max_num_batched_tokens unset (8192) -> 4096",
                reason="",
            )
        ]
    )
    d = decide(short, state, OVERSIZED, 0.0, Facts(unmoved="the same cuda_oom_profile (profile) ..."))
    assert d.current is not None and d.current.flags.max_model_len == 2048


def test_an_allocation_larger_than_the_gpu_with_every_flag_at_its_floor_gives_up() -> None:
    target = Target(
        model="/m/q",
        flags=Flags(max_model_len=512, max_num_seqs=1, max_num_batched_tokens=512),
        floors=Floors(max_model_len=512, max_num_seqs=1),
    )
    d = decide(target, TargetState(), OVERSIZED, 0.0)
    assert d.action is Action.GIVE_UP and "larger than the whole GPU" in d.reason
