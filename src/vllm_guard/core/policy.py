"""The remediation policy: (target, its state, a failure, the time) -> a decision, explained in words.

Pure and deterministic: the same inputs give the same decision. Each kind has its ladder:

==========================  =================================================================================
kind                        ladder (each failure moves one rung; floors and the budget always hold)
==========================  =================================================================================
kv_cache_insufficient       max_model_len -> kv_headroom (5 %) below vLLM's own estimate, else below the KV
                            capacity it printed, else one step down (x0.5); never under the floor
cuda_oom_profile            util down by the allocation that failed (+0.01, at least 0.02); then
                            --enforce-eager; then further util steps
cuda_oom_runtime            max_num_seqs x0.5; then max_num_batched_tokens x0.5; then util steps
cuda_oom_load               next fallback model (quantized build); none left: give up and say what works
host_oom_killed             swap_space x0.5 (to 0), cpu_offload_gb to 0, on the CPU backend the KV space
                            (VLLM_CPU_KVCACHE_SPACE x0.5, or util x0.75), then max_num_seqs x0.5
vram_held                   never degrade: wait (with a timeout) until the GPU memory is back
bad_arguments, model_load_  no flag change, stop restarting, say what to fix
error, gpu_driver_error
port_in_use, distributed_   let systemd retry within the budget, with the hint
error, shm_exhausted,
engine_dead, unknown
==========================  =================================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from vllm_guard.core.config import Flags, Target
from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import FailureKind, Phase
from vllm_guard.core.state import AttemptRecord, Current, TargetState

# Util steps: real reports show a boundary of one or two hundredths (0.98 crashes, 0.97 boots), so the
# smallest step is 0.02; a step covers the failed allocation when the log says how large it was.
MIN_UTIL_STEP = 0.02
DEFAULT_UTIL_STEP = 0.03  # when the log gives no allocation size
UTIL_MARGIN = 0.01
DEFAULT_MAX_NUM_SEQS = 256  # vLLM's default max_num_seqs (EngineArgs / SchedulerConfig)
DEFAULT_MAX_BATCHED_TOKENS = 8192  # vLLM V1's default for the OpenAI server on data-center GPUs
MIN_BATCHED_TOKENS = 512  # below this prefill throughput collapses
CPU_KV_MIN_GIB = 1  # VLLM_CPU_KVCACHE_SPACE is whole GiB (vLLM 0.32 parses it with int())


class Action(StrEnum):
    CHANGE_FLAGS = "change_flags"
    SWITCH_MODEL = "switch_model"
    WAIT_FOR_VRAM = "wait_for_vram"
    LET_RETRY = "let_retry"
    GIVE_UP = "give_up"
    NOTHING = "none"


@dataclass(frozen=True)
class Facts:
    """What the daemon knows beyond the log: measured or read, passed in (the core reads nothing)."""

    platform: str | None = None  # "cpu" for the CPU backend; "cuda" or None otherwise
    model_max_len: int | None = None  # the model's own context (config.json)
    unmoved: str | None = None  # the last flag change did not move the failure (see ``unmoved``): how it stayed


def unmoved(attempts: list[AttemptRecord]) -> str | None:
    """Whether the last remedy changed nothing: the failure after it is the one before it, word for word.

    The same kind, the same phase and the same failed allocation (or, without one, the same first line of
    evidence) on both sides of a flag change mean the change did not touch what ran out. A failure that moved
    (another phase, another allocation) is progress on its ladder. Returns how it stayed, or None.
    """
    # an attempt that ran on flags already stepped past ("superseded") says nothing about the step
    failed = [a for a in attempts if a.kind != FailureKind.NONE.value and a.action != "superseded"]
    if len(failed) < 2:
        return None
    before, now = failed[-2], failed[-1]
    if before.action not in (Action.CHANGE_FLAGS.value, Action.SWITCH_MODEL.value):
        return None
    if before.ran_flags is not None and (before.ran_model, before.ran_flags) == (now.ran_model, now.ran_flags):
        return None  # both ran on the same flags: the change has not been tried yet
    if (before.kind, before.phase) != (now.kind, now.phase):
        return None
    alloc_before, alloc_now = before.numbers.get("alloc_bytes"), now.numbers.get("alloc_bytes")
    if alloc_before is not None or alloc_now is not None:
        if alloc_before != alloc_now:
            return None
        size = f"{float(alloc_now or 0) / 2**20:.0f} MiB"
        return f"the same {now.kind} ({now.phase}) failing to allocate the same {size}"
    if before.evidence[:1] != now.evidence[:1] or not now.evidence:
        return None
    return f"the same {now.kind} ({now.phase}): {now.evidence[0][:120]}"


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str
    change: str = ""
    current: Current | None = None  # the new model/flags to write; None: leave the env file
    rung: str | None = None

    @property
    def changes_flags(self) -> bool:
        return self.current is not None


def _fmt(v: float | int | None) -> str:
    if v is None:
        return "unset"
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".")
    return str(v)


KV_ROUND = 16  # vLLM's default KV block size (tokens): a length set below an estimate is rounded down to it


def _headroom(tokens: int, headroom: float) -> int:
    """A max_model_len ``headroom`` below a KV figure, rounded down to whole blocks (never above the figure)."""
    if headroom <= 0:
        return tokens
    return max(KV_ROUND, int(tokens * (1 - headroom)) // KV_ROUND * KV_ROUND)


def _headroom_words(headroom: float) -> str:
    if headroom <= 0:
        return ""
    return f"; kv_headroom leaves {headroom:.0%} of it beyond one full-length request"


def _failed_allocation(failure: Failure) -> tuple[float, float] | None:
    """The allocation a device OOM failed on and the GPU's total, in GiB; None where the message lacks either."""
    alloc = failure.numbers.get("alloc_bytes")
    total = failure.numbers.get("gpu_total_gib")
    if isinstance(alloc, (int, float)) and isinstance(total, (int, float)) and total > 0:
        return float(alloc) / 1024**3, float(total)
    return None


def _util_step(failure: Failure) -> float:
    sizes = _failed_allocation(failure)
    if sizes is not None:
        asked, total = sizes
        return max(MIN_UTIL_STEP, math.ceil((asked / total + UTIL_MARGIN) * 100 - 1e-6) / 100)
    return DEFAULT_UTIL_STEP


def _larger_than_the_gpu(failure: Failure) -> str | None:
    """A device OOM that asked for more than the GPU's whole memory ("Tried to allocate 256.00 GiB" on a 24 GiB
    card): the sizes, in words; None otherwise (or where the message does not give both)."""
    sizes = _failed_allocation(failure)
    if sizes is None or sizes[0] <= sizes[1]:
        return None
    return f"{sizes[0]:.2f} GiB asked of a {sizes[1]:.2f} GiB GPU"


def _with(cur: Current, **changes: object) -> Current:
    flags = cur.flags.model_copy(update=changes)
    return Current(model=cur.model, fallback_index=cur.fallback_index, flags=Flags.model_validate(flags.model_dump()))


class _Ladder:
    """Builds a decision from one rung; returns None when the rung cannot move (at its floor)."""

    def __init__(self, target: Target, cur: Current, failure: Failure, facts: Facts) -> None:
        self.t, self.cur, self.f, self.facts = target, cur, failure, facts

    def util_down(self, step: float, why: str) -> Decision | None:
        old = self.cur.flags.gpu_memory_utilization
        floor = self.t.floor("gpu_memory_utilization")
        new = round(old - step, 2)
        if new < floor:
            new = floor
        if new >= old:
            return None
        return Decision(
            Action.CHANGE_FLAGS,
            reason=why,
            change=f"gpu_memory_utilization {_fmt(old)} -> {_fmt(new)}",
            current=_with(self.cur, gpu_memory_utilization=new),
            rung="util",
        )

    def eager(self, why: str) -> Decision | None:
        if self.cur.flags.enforce_eager:
            return None
        return Decision(
            Action.CHANGE_FLAGS,
            reason=why,
            change="enforce_eager off -> on (no CUDA graphs: their capture memory is freed)",
            current=_with(self.cur, enforce_eager=True),
            rung="eager",
        )

    def max_len_to(self, new: int, why: str) -> Decision | None:
        old = self.cur.flags.max_model_len
        floor = int(self.t.floor("max_model_len"))
        reference = old if old is not None else self.f.numbers.get("max_model_len", self.facts.model_max_len)
        new = max(floor, int(new))
        if not isinstance(reference, (int, float)) or new >= reference:
            return None  # never above what the attempt ran with; unknown: no "lower" value can be told
        return Decision(
            Action.CHANGE_FLAGS,
            reason=why,
            change=f"max_model_len {_fmt(reference if isinstance(reference, int) else old)} -> {new}",
            current=_with(self.cur, max_model_len=new),
            rung="max_model_len",
        )

    def seqs_down(self, why: str) -> Decision | None:
        old = self.cur.flags.max_num_seqs
        return self.seqs_to((old if old is not None else DEFAULT_MAX_NUM_SEQS) // 2, why)

    def seqs_to(self, new: int, why: str, asked: int | None = None) -> Decision | None:
        """max_num_seqs down to ``new`` (never below the floor); ``asked``: the value vLLM said it ran with, where
        the unit leaves the flag to vLLM's default."""
        old = self.cur.flags.max_num_seqs
        start = old if old is not None else (asked or DEFAULT_MAX_NUM_SEQS)
        floor = int(self.t.floor("max_num_seqs"))
        new = max(floor, int(new))
        if new >= start:
            return None
        return Decision(
            Action.CHANGE_FLAGS,
            reason=why,
            change=f"max_num_seqs {_fmt(old) if old is not None else f'unset ({start})'} -> {new}",
            current=_with(self.cur, max_num_seqs=new),
            rung="max_num_seqs",
        )

    def batched_down(self, why: str) -> Decision | None:
        old = self.cur.flags.max_num_batched_tokens
        start = old if old is not None else DEFAULT_MAX_BATCHED_TOKENS
        # never below max_model_len: vLLM (V0, and V1 without chunked prefill) refuses that
        new = max(MIN_BATCHED_TOKENS, start // 2, self.cur.flags.max_model_len or 0)
        if new >= start:
            return None
        return Decision(
            Action.CHANGE_FLAGS,
            reason=why,
            change=f"max_num_batched_tokens {_fmt(old) if old is not None else f'unset ({start})'} -> {new}",
            current=_with(self.cur, max_num_batched_tokens=new),
            rung="max_num_batched_tokens",
        )

    def host_memory_down(self, why: str) -> Decision | None:
        fl = self.cur.flags
        if fl.swap_space is not None and fl.swap_space > 0:
            new = 0.0 if fl.swap_space <= 1 else math.floor(fl.swap_space / 2)
            return Decision(
                Action.CHANGE_FLAGS,
                reason=why,
                change=f"swap_space {_fmt(fl.swap_space)} -> {_fmt(new)} GiB (pinned host memory per GPU)",
                current=_with(self.cur, swap_space=new),
                rung="swap_space",
            )
        if fl.cpu_offload_gb is not None and fl.cpu_offload_gb > 0:
            return Decision(
                Action.CHANGE_FLAGS,
                reason=why,
                change=f"cpu_offload_gb {_fmt(fl.cpu_offload_gb)} -> 0 (offloaded weights live in host memory)",
                current=_with(self.cur, cpu_offload_gb=0.0),
                rung="cpu_offload_gb",
            )
        if self.facts.platform == "cpu":
            if fl.cpu_kvcache_space_gib is not None:
                new_kv = max(CPU_KV_MIN_GIB, fl.cpu_kvcache_space_gib // 2)
                if new_kv < fl.cpu_kvcache_space_gib:
                    return Decision(
                        Action.CHANGE_FLAGS,
                        reason=why + " On the CPU backend the KV cache lives in host memory.",
                        change=f"cpu_kvcache_space_gib {_fmt(fl.cpu_kvcache_space_gib)} -> {_fmt(new_kv)}",
                        current=_with(self.cur, cpu_kvcache_space_gib=new_kv),
                        rung="cpu_kv_space",
                    )
            else:
                step = round(fl.gpu_memory_utilization * 0.25, 2)
                d = self.util_down(step, why + " On the CPU backend util sizes the KV cache in host memory.")
                if d is not None:
                    return d
        return self.seqs_down(why)


def _first(*options: Decision | None) -> Decision | None:
    return next((d for d in options if d is not None), None)


def _switch_to_fallback(target: Target, cur: Current, why: str) -> Decision | None:
    nxt = 0 if cur.fallback_index is None else cur.fallback_index + 1
    if nxt >= len(target.fallback):
        return None
    fb = target.fallback[nxt]
    flags = cur.flags.model_copy(
        update={"quantization": fb.quantization, "max_model_len": fb.max_model_len or cur.flags.max_model_len}
    )
    return Decision(
        Action.SWITCH_MODEL,
        reason=why,
        change=f"model {cur.model} -> {fb.model}" + (f" (quantization {fb.quantization})" if fb.quantization else ""),
        current=Current(model=fb.model, fallback_index=nxt, flags=Flags.model_validate(flags.model_dump())),
        rung="fallback",
    )


def _next_ladder(target: Target, cur: Current, ladder: _Ladder, how: str, kind: FailureKind) -> Decision | None:
    """An OOM of unknown phase that a step did not move: the weights themselves (a fallback build), else what
    every request costs (max_model_len), else the ladder of the other phase (never the one that did not move)."""
    why = f"the last change did not move the failure ({how}): trying another ladder"
    length = cur.flags.max_model_len
    other = (
        ladder.seqs_down(why + "; fewer sequences in flight")
        if kind is FailureKind.CUDA_OOM_PROFILE
        else ladder.util_down(_util_step(ladder.f), why + "; a smaller share of GPU memory")
    )
    return _first(
        _switch_to_fallback(target, cur, why + "; the weights themselves may not fit, so the fallback build"),
        ladder.max_len_to(length // 2, why + "; a shorter max_model_len") if length else None,
        other,
    )


def decide(target: Target, state: TargetState, failure: Failure, now: float, facts: Facts = Facts()) -> Decision:
    """What to do about one failed attempt."""
    kind = failure.kind
    cur = state.current or Current(model=target.model, flags=target.flags)

    if kind is FailureKind.NONE:
        return Decision(Action.NOTHING, reason="the attempt did not fail")

    if kind.is_permanent:
        return Decision(
            Action.GIVE_UP,
            reason=f"{kind.value}: a flag change or a restart cannot fix this. {failure.hint}".strip(),
        )

    used = state.remedies_since(now - target.budget.window_s)
    if used >= target.budget.max_remedies:
        return Decision(
            Action.GIVE_UP,
            reason=(
                f"budget spent: {used} remedies in the last {target.budget.window_s} s "
                f"(max {target.budget.max_remedies}); the last failure was {kind.value}. {failure.hint}"
            ).strip(),
        )

    if kind is FailureKind.VRAM_HELD:
        return Decision(
            Action.WAIT_FOR_VRAM,
            reason="another process holds GPU memory; lowering flags would only hide that, so wait for it",
        )

    if kind.is_transient:
        return Decision(
            Action.LET_RETRY,
            reason=f"{kind.value} is usually transient: systemd retries with the same flags. {failure.hint}".strip(),
        )

    ladder = _Ladder(target, cur, failure, facts)
    n = state.rungs.get(kind.value, 0)
    decision: Decision | None = None

    oom = kind in (FailureKind.CUDA_OOM_PROFILE, FailureKind.CUDA_OOM_RUNTIME)
    if oom and (whole := _larger_than_the_gpu(failure)) is not None:
        # No share of the GPU holds one allocation larger than the GPU: lowering gpu_memory_utilization cannot help;
        # what the allocation grows with (the tokens of a step, a sequence's length, the sequences at once) can. A
        # step that left the same allocation is not taken again.
        why = f"one allocation ({whole}) is larger than the whole GPU: no share of its memory can hold it"
        tried = state.remedies[-1].change.split(" ", 1)[0] if facts.unmoved and state.remedies else ""
        length = cur.flags.max_model_len
        rungs = [
            ("max_num_batched_tokens", ladder.batched_down(why + "; fewer tokens per step")),
            ("max_model_len", ladder.max_len_to(length // 2, why + "; a shorter max_model_len") if length else None),
            ("max_num_seqs", ladder.seqs_down(why + "; fewer sequences in flight")),
        ]
        decision = _first(*(rung for flag, rung in rungs if flag != tried))
        if decision is None:
            return Decision(
                Action.GIVE_UP,
                reason=f"{why}, and the flags it grows with are at their floors. {failure.hint}".strip(),
            )
        return decision

    if facts.unmoved and oom and failure.phase is Phase.UNKNOWN:
        # The phase was a guess, and the step taken for that guess did not move the failure: take the next
        # plausible ladder instead of the next rung of the same one.
        decision = _next_ladder(target, cur, ladder, facts.unmoved, kind)
        if decision is not None:
            return decision
        return Decision(
            Action.GIVE_UP,
            reason=f"the last change did not move the failure ({facts.unmoved}), and no other ladder is left above "
            f"its floor: stepping further down the same one would only repeat it. {failure.hint}".strip(),
        )

    if kind is FailureKind.KV_CACHE_INSUFFICIENT and isinstance(failure.numbers.get("max_num_seqs_fit"), int):
        # a hybrid model's state blocks: one per sequence in flight, fewer than max_num_seqs. A shorter
        # max_model_len would not add blocks; fewer sequences is what vLLM asks for
        fit = int(failure.numbers["max_num_seqs_fit"])
        asked = failure.numbers.get("max_num_seqs")
        decision = ladder.seqs_to(
            fit,
            f"vLLM has {fit} state blocks for the linear-attention layers, one per sequence in flight",
            asked=asked if isinstance(asked, int) else None,
        )
    elif kind is FailureKind.KV_CACHE_INSUFFICIENT:
        est = failure.numbers.get("estimated_max_model_len")
        cap = failure.numbers.get("kv_capacity_tokens")
        asked = failure.numbers.get("max_model_len")
        if isinstance(est, (int, float)) and est > 0:
            decision = ladder.max_len_to(
                _headroom(int(est), target.kv_headroom),
                f"vLLM estimated that the KV cache holds {int(est)} tokens{_headroom_words(target.kv_headroom)}",
            )
        elif isinstance(cap, (int, float)) and cap > 0:
            decision = ladder.max_len_to(
                _headroom(int(cap), target.kv_headroom),
                f"vLLM printed a KV cache capacity of {int(cap)} tokens{_headroom_words(target.kv_headroom)}",
            )
        else:
            ref = cur.flags.max_model_len or (asked if isinstance(asked, int) else None) or facts.model_max_len
            if ref is not None:
                decision = ladder.max_len_to(int(ref) // 2, "no KV figure in the log: one step down (x0.5)")
        if decision is None and facts.platform == "cpu":
            decision = ladder.host_memory_down("max_model_len is at its floor")
    elif kind is FailureKind.CUDA_OOM_PROFILE:
        step = _util_step(failure)
        why = "CUDA ran out of memory while profiling / capturing CUDA graphs / warming up"
        if n == 1:
            decision = _first(ladder.eager(why), ladder.util_down(step, why))
        else:
            decision = _first(ladder.util_down(step, why), ladder.eager(why))
    elif kind is FailureKind.CUDA_OOM_RUNTIME:
        why = "CUDA ran out of memory while serving: fewer sequences in flight need fewer activations"
        decision = _first(ladder.seqs_down(why), ladder.batched_down(why), ladder.util_down(_util_step(failure), why))
    elif kind is FailureKind.CUDA_OOM_LOAD:
        decision = _switch_to_fallback(
            target, cur, "the weights do not fit in GPU memory: no flag can fix that, so use the next fallback build"
        )
        if decision is None:
            tp = cur.flags.tensor_parallel_size
            return Decision(
                Action.GIVE_UP,
                reason=(
                    "the weights do not fit in GPU memory and no fallback model is left: add a quantized build "
                    "(AWQ, GPTQ or FP8) as [[target.fallback]], or spread the model over more GPUs "
                    f"(tensor_parallel_size > {tp})"
                ),
            )
    elif kind is FailureKind.HOST_OOM_KILLED:
        decision = ladder.host_memory_down(
            "the kernel OOM killer ended vLLM: host memory ran out. Check swap and RAM with `vllm-guard doctor`."
        )

    if decision is None:
        return Decision(
            Action.GIVE_UP,
            reason=f"{kind.value}: every flag the guard may lower is at its floor. {failure.hint}".strip(),
        )
    return decision
