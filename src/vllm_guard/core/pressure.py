"""Host memory pressure: is the machine about to thrash or call the OOM killer?

Pure. The daemon samples ``/proc/vmstat`` (pswpin/pswpout: pages swapped in/out since boot),
``/proc/pressure/memory`` (PSI, kernels >= 4.20 with CONFIG_PSI), ``/proc/meminfo`` and the vLLM
unit's cgroup memory (``vllm_guard.adapters.host.read_memory_sample``) every
``guard.pressure_interval_s``, and passes two consecutive samples here with how long pressure has
already been high. The answer is a ``PressureVerdict``: ``ok`` or ``warn`` with the numbers and a hint.

    >>> a = MemorySample(t=0.0, pswpin=0, pswpout=0, mem_total=64 << 30, mem_available=32 << 30)
    >>> b = MemorySample(t=5.0, pswpin=0, pswpout=0, mem_total=64 << 30, mem_available=32 << 30)
    >>> judge_pressure(a, b).level
    'ok'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MiB = 1 << 20


@dataclass(frozen=True)
class MemorySample:
    """One reading of the host's memory state at monotonic time ``t`` (seconds)."""

    t: float
    pswpin: int  # pages swapped in since boot (/proc/vmstat)
    pswpout: int  # pages swapped out since boot
    mem_total: int  # bytes (/proc/meminfo MemTotal)
    mem_available: int  # bytes (MemAvailable)
    swap_total: int = 0
    swap_free: int = 0
    psi_some_avg10: float | None = None  # % of the last 10 s some task stalled on memory; None: no PSI
    psi_full_avg10: float | None = None  # % of the last 10 s all non-idle tasks stalled on memory
    unit_memory: int | None = None  # bytes charged to the vLLM unit's cgroup (memory.current)
    page_size: int = 4096  # pswpin/pswpout count pages; 4 KiB on x86-64 and most arm64 kernels


@dataclass(frozen=True)
class PressureThresholds:
    """When the guard warns. Each number says where it comes from."""

    # Swap thrash: pages moving *both* ways at once. 10 MiB/s each way is ~2500 pages/s of 4 KiB,
    # far above the occasional swap-out of idle pages (vmstat si/so near 0 on a healthy host) and
    # well below what a disk can do, so a model server spending it is paging its working set.
    swap_in_mib_s: float = 10.0
    swap_out_mib_s: float = 10.0
    # PSI: systemd-oomd kills at 60% "full" pressure held for 30 s (ManagedOOMMemoryPressureLimit=60%,
    # DefaultMemoryPressureDurationSec=30s in oomd.conf(5)); the guard warns well before: "some" at
    # 20% or "full" at 10% for 30 s.
    psi_some_pct: float = 20.0
    psi_full_pct: float = 10.0
    sustained_s: float = 30.0
    # MemAvailable under 10% of RAM: earlyoom's default point of action (-m 10, earlyoom(1)); the
    # kernel's OOM killer comes later, so this is the last comfortable moment to say something.
    available_pct: float = 10.0


@dataclass(frozen=True)
class PressureVerdict:
    level: Literal["ok", "warn"]
    reasons: tuple[str, ...]
    hint: str
    swap_in_mib_s: float
    swap_out_mib_s: float
    psi_some_avg10: float | None
    psi_full_avg10: float | None
    mem_available: int
    mem_total: int
    unit_memory: int | None
    high_since: float | None  # when pressure became high (pass it back in on the next call)

    def numbers(self) -> dict[str, float | int | None]:
        """Flat numbers for the warning event's fields and the metrics."""
        return {
            "swap_in_mib_s": round(self.swap_in_mib_s, 2),
            "swap_out_mib_s": round(self.swap_out_mib_s, 2),
            "psi_some_avg10": self.psi_some_avg10,
            "psi_full_avg10": self.psi_full_avg10,
            "mem_available_bytes": self.mem_available,
            "mem_total_bytes": self.mem_total,
            "unit_memory_bytes": self.unit_memory,
        }

    def message(self) -> str:
        if self.level == "ok":
            return "host memory pressure is normal"
        return "host memory pressure: " + "; ".join(self.reasons)


HINT = (
    "vLLM is close to a host OOM kill: lower --swap-space / --cpu-offload-gb / --max-num-seqs of the "
    "vLLM unit, stop other memory users, or add RAM; check swap with `vllm-guard doctor` "
    "(swappiness 10, swap on an SSD)"
)


def judge_pressure(
    prev: MemorySample,
    cur: MemorySample,
    thresholds: PressureThresholds | None = None,
    high_since: float | None = None,
) -> PressureVerdict:
    """Compare two samples; ``high_since`` is the time PSI first went over its limit (or None)."""
    th = thresholds or PressureThresholds()
    dt = cur.t - prev.t
    if dt <= 0:
        swap_in = swap_out = 0.0
    else:
        # counters reset only at boot; a negative delta means a reboot between samples
        swap_in = max(0, cur.pswpin - prev.pswpin) * cur.page_size / MiB / dt
        swap_out = max(0, cur.pswpout - prev.pswpout) * cur.page_size / MiB / dt
    reasons: list[str] = []
    if swap_in >= th.swap_in_mib_s and swap_out >= th.swap_out_mib_s:
        reasons.append(f"swap is thrashing: {swap_in:.1f} MiB/s in and {swap_out:.1f} MiB/s out")
    psi_high = (cur.psi_some_avg10 is not None and cur.psi_some_avg10 >= th.psi_some_pct) or (
        cur.psi_full_avg10 is not None and cur.psi_full_avg10 >= th.psi_full_pct
    )
    if psi_high:
        since = high_since if high_since is not None else cur.t
        if cur.t - since >= th.sustained_s:
            reasons.append(
                f"memory pressure (PSI) some {cur.psi_some_avg10 or 0:.1f}% full {cur.psi_full_avg10 or 0:.1f}% "
                f"for {cur.t - since:.0f} s"
            )
    else:
        since = None
    if cur.mem_total > 0 and cur.mem_available * 100 < th.available_pct * cur.mem_total:
        reasons.append(
            f"only {cur.mem_available / MiB:.0f} MiB of {cur.mem_total / MiB:.0f} MiB RAM available "
            f"({cur.mem_available * 100 / cur.mem_total:.1f}%)"
        )
    if reasons and cur.unit_memory is not None:
        reasons.append(f"the vLLM unit uses {cur.unit_memory / MiB:.0f} MiB")
    return PressureVerdict(
        level="warn" if reasons else "ok",
        reasons=tuple(reasons),
        hint=HINT if reasons else "",
        swap_in_mib_s=swap_in,
        swap_out_mib_s=swap_out,
        psi_some_avg10=cur.psi_some_avg10,
        psi_full_avg10=cur.psi_full_avg10,
        mem_available=cur.mem_available,
        mem_total=cur.mem_total,
        unit_memory=cur.unit_memory,
        high_since=since,
    )
