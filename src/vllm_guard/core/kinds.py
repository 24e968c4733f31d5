"""Failure kinds and phases: the contract vocabulary of the classifier, policy, events and CLI."""

from __future__ import annotations

from enum import StrEnum


class FailureKind(StrEnum):
    """Why one start of a vLLM unit failed. The string values are a public contract."""

    KV_CACHE_INSUFFICIENT = "kv_cache_insufficient"
    CUDA_OOM_LOAD = "cuda_oom_load"
    CUDA_OOM_PROFILE = "cuda_oom_profile"
    CUDA_OOM_RUNTIME = "cuda_oom_runtime"
    HOST_OOM_KILLED = "host_oom_killed"
    VRAM_HELD = "vram_held"
    SHM_EXHAUSTED = "shm_exhausted"
    DISTRIBUTED_ERROR = "distributed_error"
    MODEL_LOAD_ERROR = "model_load_error"
    BAD_ARGUMENTS = "bad_arguments"
    PORT_IN_USE = "port_in_use"
    ENGINE_DEAD = "engine_dead"
    GPU_DRIVER_ERROR = "gpu_driver_error"
    UNKNOWN_FAILURE = "unknown_failure"
    NONE = "none"

    @property
    def is_memory(self) -> bool:
        """Memory failures are the ones a flag change can answer."""
        return self in MEMORY_KINDS

    @property
    def is_permanent(self) -> bool:
        """Failures that no restart can fix: stop restarting and tell a person."""
        return self in PERMANENT_KINDS

    @property
    def is_transient(self) -> bool:
        """Failures that a plain restart may fix (within the budget)."""
        return self in TRANSIENT_KINDS


MEMORY_KINDS = frozenset(
    {
        FailureKind.KV_CACHE_INSUFFICIENT,
        FailureKind.CUDA_OOM_LOAD,
        FailureKind.CUDA_OOM_PROFILE,
        FailureKind.CUDA_OOM_RUNTIME,
        FailureKind.HOST_OOM_KILLED,
    }
)
PERMANENT_KINDS = frozenset({FailureKind.BAD_ARGUMENTS, FailureKind.MODEL_LOAD_ERROR, FailureKind.GPU_DRIVER_ERROR})
TRANSIENT_KINDS = frozenset(
    {
        FailureKind.PORT_IN_USE,
        FailureKind.DISTRIBUTED_ERROR,
        FailureKind.SHM_EXHAUSTED,
        FailureKind.ENGINE_DEAD,
        FailureKind.UNKNOWN_FAILURE,
    }
)


class Phase(StrEnum):
    """Where in vLLM's life the failure happened."""

    LOAD = "load"  # loading weights
    PROFILE = "profile"  # memory profiling, KV cache allocation, CUDA-graph capture, warm-up
    SERVE = "serve"  # after the API server was ready
    UNKNOWN = "unknown"


class Confidence(StrEnum):
    """How strong the evidence behind a verdict is: the daemon acts on a low one with care."""

    HIGH = "high"  # a root-cause message, or a device OOM placed by its traceback
    MEDIUM = "medium"  # placed by a start-up milestone only, or a report that names no root cause
    LOW = "low"  # nothing but a bare error, a bare SIGKILL, or a device OOM with no clue to its phase


class Basis(StrEnum):
    """What a verdict rests on."""

    MESSAGE = "message"  # a message that names the cause
    FRAME = "frame"  # a traceback frame (or a worker's method name) placed it
    MILESTONE = "milestone"  # the last start-up milestone before it placed it
    ALLOCATOR = "allocator"  # a device OOM's own figures of the allocator placed it (no frame, no milestone)
    OBSERVED = "observed"  # what the guard saw beyond the lines revised a weak verdict (core/evidence.py)
    BARE = "bare"  # a bare error: an exit status, a signal, an uncaught exception, a wrapper
    CLEAN = "clean"  # no failure found
