"""The classifier's verdict on one attempt: a ``Failure``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vllm_guard.core.kinds import Basis, Confidence, FailureKind, Phase

# The keys of ``Failure.numbers`` (a contract: policy, state, events and `classify --json` use them).
# Not every failure carries every key; only what the log printed.
NUMBER_KEYS = {
    "max_model_len": "max seq len vLLM was asked to serve (tokens)",
    "estimated_max_model_len": "vLLM's own estimate of the largest max_model_len that fits (tokens)",
    "kv_capacity_tokens": "tokens the KV cache can hold, as vLLM printed",
    "kv_needed_gib": "KV cache GiB needed for one request at max_model_len",
    "kv_available_gib": "KV cache GiB available",
    "max_num_seqs": "max_num_seqs vLLM ran with, as it printed it",
    "max_num_seqs_fit": "the most sequences a hybrid model's state blocks hold (vLLM's Mamba cache blocks)",
    "alloc_bytes": "bytes the failed CUDA allocation tried to get",
    "gpu_total_gib": "GPU total memory (GiB)",
    "gpu_free_gib": "GPU free memory (GiB) at the failure or at start-up",
    "util_requested": "the --gpu-memory-utilization asked for",
    "port": "TCP port that was in use",
    "killed_pid": "PID killed by the kernel OOM killer",
    "exit_status": "the main process's exit status",
    "signal": "the signal number that ended the main process",
}


@dataclass(frozen=True)
class SystemdOutcome:
    """What systemd said about how one start ended (where known)."""

    result: str | None = None  # systemd's Result=: exit-code, signal, oom-kill, timeout, core-dump, success
    exit_status: int | None = None  # EXIT_STATUS= of the main process, when it exited
    signal: str | None = None  # e.g. "KILL", when it was killed


@dataclass(frozen=True)
class Failure:
    """Why one attempt failed, with the numbers and lines that show it."""

    kind: FailureKind
    phase: Phase = Phase.UNKNOWN
    numbers: Mapping[str, float | int | str] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    hint: str = ""
    confidence: Confidence = Confidence.HIGH
    basis: Basis = Basis.MESSAGE
    observed: tuple[str, ...] = ()  # what the guard saw beyond the lines, and what it left unsure (evidence.py)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "phase": self.phase.value,
            "numbers": dict(self.numbers),
            "evidence": list(self.evidence),
            "hint": self.hint,
            "confidence": self.confidence.value,
            "basis": self.basis.value,
        }
        if self.observed:
            out["observed"] = list(self.observed)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Failure:
        return cls(
            kind=FailureKind(data["kind"]),
            phase=Phase(data.get("phase", "unknown")),
            numbers=dict(data.get("numbers", {})),
            evidence=tuple(data.get("evidence", ())),
            hint=str(data.get("hint", "")),
            confidence=Confidence(data.get("confidence", "high")),
            basis=Basis(data.get("basis", "message")),
            observed=tuple(data.get("observed", ())),
        )


NO_FAILURE = Failure(kind=FailureKind.NONE, basis=Basis.CLEAN)
