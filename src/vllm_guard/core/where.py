"""Where a vLLM unit runs: its hardware and its vLLM version, the key of its last-known-good flags.

Flags that fit one GPU and one vLLM release say little about another: a bigger card needs no lowered
context, a new release may profile memory differently. After each verified start the guard files the
flags under (model, hardware, vLLM version); when the guard starts and finds the unit moved to other
hardware or another vLLM, it begins from the flags filed for the new place, or from the base flags
when none are.

Pure: the daemon reads the GPUs and the installed vLLM version and passes them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vllm_guard.core.config import Target
from vllm_guard.core.state import Current, base_current

UNKNOWN = "?"


@dataclass(frozen=True)
class GpuModel:
    """What identifies a GPU for this purpose: its name and its memory (ECC on or off changes it)."""

    name: str
    total_mib: int


@dataclass(frozen=True)
class Where:
    hardware: str | None  # "cpu", "NVIDIA L40S 46068MiB" (x2 under TP), None: unknown now
    vllm: str | None  # the installed vLLM's version, None: unknown

    def key(self) -> str:
        return f"{self.hardware or UNKNOWN}|{self.vllm or UNKNOWN}"

    @classmethod
    def parse(cls, key: str) -> Where:
        hardware, _, vllm = key.partition("|")
        return cls(None if hardware in ("", UNKNOWN) else hardware, None if vllm in ("", UNKNOWN) else vllm)

    def describe(self) -> str:
        return f"{self.hardware or 'unknown hardware'}, vLLM {self.vllm or 'unknown'}"


def visible_indices(environment: Mapping[str, str]) -> list[int] | None:
    """CUDA_VISIBLE_DEVICES as GPU indices; None when unset or not plain indices (then: all, in order)."""
    raw = environment.get("CUDA_VISIBLE_DEVICES")
    if raw is None:
        return None
    words = [w.strip() for w in raw.split(",") if w.strip()]
    return [int(w) for w in words] if words and all(w.isdigit() for w in words) else None


def hardware_of(target: Target, gpus: Sequence[tuple[int, GpuModel]] | None) -> str | None:
    """The hardware the target's vLLM uses: "cpu", or its first tensor_parallel_size GPUs; None: unknown."""
    if target.device == "cpu":
        return "cpu"
    if not gpus:
        return None
    chosen = [g for _, g in gpus]
    wanted = visible_indices(target.environment)
    if wanted is not None:
        by_index = dict(gpus)
        if any(i not in by_index for i in wanted):
            return None
        chosen = [by_index[i] for i in wanted]
    used = chosen[: target.flags.tensor_parallel_size]
    if len(used) < target.flags.tensor_parallel_size:
        return None
    names = [f"{g.name} {g.total_mib}MiB" for g in used]
    if len(set(names)) == 1:
        return names[0] if len(names) == 1 else f"{names[0]} x{len(names)}"
    return " + ".join(names)


def changes(before: Where, now: Where) -> list[str]:
    """What differs between two places, counting only what is known at both."""
    out = []
    if before.hardware and now.hardware and before.hardware != now.hardware:
        out.append(f"hardware {before.hardware} -> {now.hardware}")
    if before.vllm and now.vllm and before.vllm != now.vllm:
        out.append(f"vLLM {before.vllm} -> {now.vllm}")
    return out


def known_good_key(model: str, where: Where) -> str:
    return f"{model}|{where.key()}"


@dataclass(frozen=True)
class Move:
    """The flags to begin from after a move, and why."""

    current: Current
    reason: str
    from_known_good: bool


def begin_after_move(
    target: Target, known_good: Mapping[str, Current], flags_where: str | None, now: Where
) -> Move | None:
    """None when the unit has not moved (or either place is unknown); else where to begin.

    The target's own model first, then its fallbacks in order: the first with flags filed for the new
    place wins; with none, the base flags (the admin's wish; the guard lowers them again if they fail).
    """
    if flags_where is None:
        return None
    moved = changes(Where.parse(flags_where), now)
    if not moved:
        return None
    why = "; ".join(moved)
    for model in [target.model, *(f.model for f in target.fallback)]:
        found = known_good.get(known_good_key(model, now))
        if found is not None:
            return Move(found, f"{why}: the last-known-good flags for {now.describe()}", True)
    return Move(base_current(target), f"{why}: no flags known for {now.describe()}; starting from the base", False)
