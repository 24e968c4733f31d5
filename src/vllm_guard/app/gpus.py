"""The GPU view the daemon needs while waiting for held VRAM: total, free, and who holds it.

Reads NVML through ``vllm_guard.adapters.nvml``, which reads the emulated GPU file instead
(``VLLM_GUARD_FAKE_GPUS``, used where no GPU exists, e.g. the system tests) so that the daemon, ``doctor`` and
``plan`` see the same GPUs with or without one.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Holder:
    pid: int
    command: str
    used_mib: int


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    total_mib: int  # NVML's total: it names the hardware
    free_mib: int
    holders: tuple[Holder, ...] = field(default_factory=tuple)
    reserved_mib: int = 0  # what the driver keeps (NVML's reserved)

    @property
    def cuda_total_mib(self) -> int:
        """The total CUDA reports, and vLLM sizes ``gpu_memory_utilization`` on: NVML's less the reserved part."""
        return self.total_mib - self.reserved_mib


def read_gpus() -> list[Gpu] | None:
    """Every visible GPU, or None when none can be read (no driver, no NVML, an unreadable emulated file)."""
    from vllm_guard.adapters import nvml

    report = nvml.read_gpus()
    if not report.devices:
        return None
    mib = 1024 * 1024
    return [
        Gpu(
            d.index,
            d.name,
            d.total // mib,
            d.free // mib,
            tuple(Holder(p.pid, p.command, p.used_mib or 0) for p in d.processes),
            d.reserved // mib,
        )
        for d in report.devices
    ]


def why_no_gpus() -> str:
    """Why ``read_gpus`` saw no GPU: NVML's own error (a driver/library mismatch, no /dev/nvidiactl ...), or why
    the emulated GPU file cannot be read."""
    from vllm_guard.adapters import nvml

    return nvml.read_gpus().error or "NVML lists no GPU"


def describe_holders(gpus: list[Gpu]) -> str:
    parts = [f"pid {h.pid} {h.command} {h.used_mib} MiB on GPU {g.index}" for g in gpus for h in g.holders]
    return "; ".join(parts) if parts else "no process listed"
