"""GPUs through NVML (nvidia-ml-py): memory per device, who holds it, the driver version.

No NVIDIA driver, no library, no device: a ``GpuReport`` with no devices and the reason, never a crash.
``FakeGpus`` stands in for GPUs the host does not have (``--gpu 24GiB``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MiB = 1 << 20


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    used_bytes: int | None  # None: the driver does not say (e.g. inside some containers)
    command: str  # the command line through psutil, or "?" when the process is not visible here

    @property
    def used_mib(self) -> int | None:
        return None if self.used_bytes is None else self.used_bytes // MiB


@dataclass(frozen=True)
class GpuDevice:
    index: int
    name: str
    total: int
    free: int
    used: int
    processes: tuple[GpuProcess, ...] = ()


@dataclass(frozen=True)
class GpuReport:
    devices: tuple[GpuDevice, ...] = ()
    driver_version: str | None = None
    error: str | None = None  # why there are no devices
    fake: bool = False

    @property
    def visible(self) -> bool:
        return bool(self.devices)

    def as_json(self) -> dict[str, Any]:
        return {
            "driver_version": self.driver_version,
            "error": self.error,
            "fake": self.fake,
            "devices": [
                {
                    "index": d.index,
                    "name": d.name,
                    "total_bytes": d.total,
                    "free_bytes": d.free,
                    "used_bytes": d.used,
                    "processes": [{"pid": p.pid, "used_mib": p.used_mib, "command": p.command} for p in d.processes],
                }
                for d in self.devices
            ],
        }


NO_GPU = "no NVIDIA GPU visible"


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _command(pid: int) -> str:
    try:
        import psutil

        proc = psutil.Process(pid)
        cmd = proc.cmdline()
        return " ".join(cmd) if cmd else proc.name()
    except Exception:  # the process may be gone or in another PID namespace
        return "?"


def read_gpus() -> GpuReport:
    """Every visible NVIDIA GPU with its memory and the processes holding it."""
    try:
        import pynvml
    except ImportError:
        return GpuReport(error=f"{NO_GPU}: the NVML Python binding (nvidia-ml-py) is not installed")
    try:
        pynvml.nvmlInit()
    except Exception as err:  # pynvml.NVMLError and OSError when libnvidia-ml.so is missing
        return GpuReport(
            error=f"{NO_GPU}: NVML did not start ({_text(err) or type(err).__name__}); is the NVIDIA driver loaded?"
        )
    try:
        try:
            driver = _text(pynvml.nvmlSystemGetDriverVersion())
        except Exception:
            driver = None
        count = pynvml.nvmlDeviceGetCount()
        devices = []
        for i in range(count):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            procs: list[GpuProcess] = []
            seen: set[int] = set()
            for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
                try:
                    running = getattr(pynvml, getter)(h)
                except Exception:
                    continue
                for p in running:
                    if p.pid in seen:
                        continue
                    seen.add(p.pid)
                    used = getattr(p, "usedGpuMemory", None)
                    procs.append(
                        GpuProcess(
                            pid=int(p.pid),
                            used_bytes=int(used) if isinstance(used, int) else None,
                            command=_command(int(p.pid)),
                        )
                    )
            devices.append(
                GpuDevice(
                    index=i,
                    name=_text(pynvml.nvmlDeviceGetName(h)),
                    total=int(mem.total),
                    free=int(mem.free),
                    used=int(mem.used),
                    processes=tuple(procs),
                )
            )
        if not devices:
            return GpuReport(driver_version=driver, error=f"{NO_GPU}: the driver reports 0 devices")
        return GpuReport(devices=tuple(devices), driver_version=driver)
    except Exception as err:
        return GpuReport(error=f"{NO_GPU}: NVML failed ({_text(err)})")
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


@dataclass(frozen=True)
class FakeGpus:
    """GPUs of the given sizes, all memory free: planning for hardware this host does not have."""

    sizes: Sequence[int] = field(default_factory=list)

    def read(self) -> GpuReport:
        return GpuReport(
            devices=tuple(
                GpuDevice(index=i, name=f"planned GPU {i}", total=s, free=s, used=0) for i, s in enumerate(self.sizes)
            ),
            driver_version=None,
            fake=True,
        )
