"""What the guard saw of an attempt beyond its lines, weighed against a weak verdict.

The classifier reads an attempt's lines. The daemon knows more: whether a probe of that attempt passed,
how long the attempt lived against how long the last healthy start took to become ready, which processes
held GPU memory right after it ended, whether the kernel logged an OOM kill of one of its processes and
whether host memory was under pressure. ``weigh`` revises a verdict with these facts, only where the
verdict is weak (confidence low: a device OOM with no clue to its phase, a bare SIGKILL). A verdict that
rests on a root-cause message, a traceback or a milestone is never touched. A device OOM that only the
allocator's figures placed in loading (basis ``allocator``) is weighed as one of unknown phase by rules 1 and 3;
rule 2 adds nothing to it (it is already a start-up reading).

The rules, each a fact about how vLLM and the kernel behave rather than about one log's wording:

1. **A probe of this attempt passed**: the server answered a chat completion, so it was serving when
   it failed. A device OOM of unknown phase is a runtime OOM (phase ``serve``, confidence medium).
2. **It died sooner than a healthy start becomes ready**, and no probe passed: it was still starting
   (loading, profiling, capturing graphs), so a device OOM of unknown phase is read as a start-up OOM
   (``cuda_oom_profile``). The phase stays ``unknown`` and the confidence low: timing does not tell
   loading from profiling, and the policy moves to another ladder if the step does not move the failure.
3. **Other processes hold the GPU memory** right after the failure (NVML lists them; the attempt's own
   processes are gone), so much that what is free is less than vLLM's share: a device OOM of unknown
   phase is ``vram_held`` (confidence low). Waiting for the memory is the careful action; lowering
   flags would hide the other process. Memory in use by processes NVML does not list is not enough.
4. **The KV cache had no room, and other processes held vLLM's share** right after the failure (as in 3). The
   releases that take total - free after their profile as their own use (0.2.5-0.3.0, V0 0.6.4, V1 0.7-0.9.1)
   count another process's memory against the KV cache, so its message ("No available memory for the cache
   blocks", "... larger than the maximum number of tokens that can be stored in KV cache") is the symptom and the
   other process the cause; later releases refuse at start when vLLM's share is not free, so such a failure there
   means the other process grew meanwhile. Either way a shorter ``max_model_len`` would not bring the memory back:
   ``vram_held`` (confidence low), whatever the confidence of the KV verdict.
5. **A bare SIGKILL that no OOM killer claimed**: the kernel's log can be read and it has no OOM kill of
   the attempt's processes, systemd did not report ``oom-kill``, and host memory was not under pressure.
   Then something else killed it (a person, a watchdog, a script), and the careful action is a plain
   retry rather than lowering memory flags: ``unknown_failure`` (confidence low). Under memory pressure
   (a user-space OOM killer such as earlyoom logs nothing in the kernel) it stays ``host_oom_killed``.

Every revision (and every fact that left the verdict as it was) is said in ``Failure.observed``, so the
event names what the guard used and what it stayed unsure of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import Basis, Confidence, FailureKind, Phase

K = FailureKind
# A healthy start's time to ready includes the probe's own latency: only an attempt that died clearly
# sooner is taken to have died in start-up.
STARTUP_MARGIN = 0.9


@dataclass(frozen=True)
class GpuSeen:
    """One GPU as NVML showed it right after the attempt ended."""

    total_mib: int
    free_mib: int
    others: tuple[tuple[int, str, int], ...] = ()  # (pid, command, MiB) of listed processes not of the attempt


@dataclass(frozen=True)
class Observed:
    """The facts about one attempt that are not in its lines (None: not known)."""

    probe_passed: bool = False  # a start or liveness probe of this attempt succeeded
    lived_s: float | None = None  # seconds from its start to its end
    healthy_ready_s: float | None = None  # the last verified start's seconds from start to ready
    gpus: Sequence[GpuSeen] | None = None  # None: no GPU view (no NVML, or not read)
    util: float | None = None  # the --gpu-memory-utilization the attempt ran with
    kernel_log_visible: bool | None = None  # the journal holds kernel messages at all (None: not known)
    kernel_oom: bool = False  # the kernel logged an OOM kill of one of the attempt's processes
    memory_pressure: bool = False  # the guard saw host memory under pressure near the end


def oom_unplaced(f: Failure) -> bool:
    """A device OOM no frame or milestone placed: its phase unknown, or read only from the allocator's figures."""
    if f.basis is Basis.ALLOCATOR:
        return f.kind is K.CUDA_OOM_LOAD
    return f.kind in (K.CUDA_OOM_RUNTIME, K.CUDA_OOM_PROFILE) and f.phase is Phase.UNKNOWN


def _bare_kill(f: Failure) -> bool:
    return f.kind is K.HOST_OOM_KILLED and f.confidence is Confidence.LOW


def _revise(
    f: Failure, kind: FailureKind, phase: Phase, confidence: Confidence, note: str, hint: str | None = None
) -> Failure:
    return replace(
        f,
        kind=kind,
        phase=phase,
        confidence=confidence,
        basis=Basis.OBSERVED,
        hint=f.hint if hint is None else hint,
        observed=(*f.observed, note),
    )


def _held_by_others(gpus: Sequence[GpuSeen], util: float) -> tuple[int, str] | None:
    """(MiB held, who) when listed processes hold so much that vLLM's share is not free on some GPU."""
    for g in gpus:
        held = sum(mib for _, _, mib in g.others)
        if held <= 0 or g.total_mib <= 0:
            continue
        share = util * g.total_mib
        if g.free_mib < share <= g.free_mib + held:  # short of vLLM's share, and the others are why
            who = ", ".join(f"{cmd} (PID {pid}, {mib} MiB)" for pid, cmd, mib in g.others[:4])
            return held, who
    return None


HELD_HINT = "another process holds GPU memory vLLM needs: stop it, or give vLLM a GPU of its own"


def _wait_for_held(f: Failure, seen: Observed, phase: Phase, note: str) -> Failure | None:
    """``vram_held`` (low confidence) when listed processes held vLLM's share right after the failure; ``note``
    names them through ``{mib}`` and ``{who}``. None when the GPU view does not show that."""
    if not seen.gpus or seen.util is None:
        return None
    held = _held_by_others(seen.gpus, seen.util)
    if held is None:
        return None
    mib, who = held
    return _revise(f, K.VRAM_HELD, phase, Confidence.LOW, note.format(mib=mib, who=who), hint=HELD_HINT)


def weigh(failure: Failure, seen: Observed) -> Failure:
    """The verdict revised by what the guard saw (see the module docstring); a strong verdict as it is, but for
    a KV cache with no room while other processes held vLLM's share."""
    f = failure
    if f.kind is K.KV_CACHE_INSUFFICIENT:
        waited = _wait_for_held(
            f,
            seen,
            f.phase,
            "the KV cache had no room, and right after the failure other processes held {mib} MiB of "
            "GPU memory, more than was left of vLLM's share: {who}",
        )
        if waited is not None:
            return waited
    if f.confidence is not Confidence.LOW:
        return f
    if oom_unplaced(f):
        if seen.probe_passed:
            return _revise(
                f,
                K.CUDA_OOM_RUNTIME,
                Phase.SERVE,
                Confidence.MEDIUM,
                "a probe of this attempt had passed: it was serving when it ran out of memory",
            )
        waited = _wait_for_held(
            f, seen, Phase.UNKNOWN, "right after the failure other processes held {mib} MiB of GPU memory: {who}"
        )
        if waited is not None:
            return waited
        if (
            f.phase is Phase.UNKNOWN
            and seen.lived_s is not None
            and seen.healthy_ready_s is not None
            and seen.lived_s < STARTUP_MARGIN * seen.healthy_ready_s
        ):
            return _revise(
                f,
                K.CUDA_OOM_PROFILE,
                Phase.UNKNOWN,
                Confidence.LOW,
                f"it died {seen.lived_s:.0f} s after its start, before a healthy start is ready "
                f"({seen.healthy_ready_s:.0f} s): read as a start-up OOM; timing does not tell loading from profiling",
            )
        return replace(
            f,
            observed=(
                *f.observed,
                "no probe had passed and no healthy start's timing or GPU view places it",
            ),
        )
    if _bare_kill(f):
        if seen.kernel_oom:
            return _revise(
                f, K.HOST_OOM_KILLED, f.phase, Confidence.HIGH, "the kernel logged an OOM kill of its process"
            )
        if seen.memory_pressure:
            return replace(
                f,
                observed=(
                    *f.observed,
                    "host memory was under pressure; no kernel OOM line (a user-space OOM killer logs none)",
                ),
            )
        if seen.kernel_log_visible:
            return _revise(
                f,
                K.UNKNOWN_FAILURE,
                f.phase,
                Confidence.LOW,
                "SIGKILL, but the kernel logged no OOM kill of its processes and host memory was not under "
                "pressure: something else killed it, so no memory flag is lowered",
                hint="vLLM was killed with SIGKILL by something other than an OOM killer: a person, a watchdog or "
                "a script; see `journalctl -b` around that time",
            )
        return replace(f, observed=(*f.observed, "the kernel's log cannot be read here to confirm an OOM kill"))
    return f


def unsure(failure: Failure) -> str:
    """What the guard is unsure of about a verdict, in words for the event; empty when it is sure."""
    if failure.confidence is Confidence.HIGH:
        return ""
    f = failure
    if f.kind is K.VRAM_HELD and f.basis is Basis.OBSERVED:
        return (
            "the log names no other process; other processes held GPU memory right after the failure, so the guard "
            "waits for it"
        )
    if oom_unplaced(f) and f.basis is Basis.ALLOCATOR:
        return (
            "no frame or milestone places the OOM: read as loading because the allocator's own figures show its "
            "allocations filling the GPU with nothing freed, as loading the weights does"
        )
    if oom_unplaced(f):
        return (
            "the log does not say whether the OOM came while loading, profiling or serving: the guard acts on "
            f"{f.kind.value} and changes ladder if the next start fails the same way"
        )
    if f.kind.is_memory and f.basis is Basis.FRAME and f.confidence is Confidence.LOW:
        return (
            f"the traceback stops before its error, in {f.phase.value}: read as a device OOM there; the guard acts on "
            f"{f.kind.value} and changes ladder if the next start fails the same way"
        )
    if f.kind is K.HOST_OOM_KILLED:
        return "only a SIGKILL, with no OOM line: read as host memory running out"
    if f.kind is K.UNKNOWN_FAILURE:
        return "no cause in the log: systemd retries with the same flags"
    if f.confidence is Confidence.MEDIUM:
        return f"placed by {f.basis.value} evidence, not by a message naming the cause"
    return f"weak evidence ({f.basis.value})"
