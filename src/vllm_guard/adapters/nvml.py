"""GPUs through NVML (nvidia-ml-py): memory per device, who holds it, the driver version.

No NVIDIA driver, no library, no device: a ``GpuReport`` with no devices and the reason, never a crash.
``FakeGpus`` stands in for GPUs the host does not have (``--gpu 24GiB``). Where no GPU exists (the system
tests, a demo), ``VLLM_GUARD_FAKE_GPUS`` names a JSON file of emulated GPUs, read in place of NVML by every
command and the daemon alike: ``{"gpus": [{"name", "total_mib", "reserved_mib", "unlisted_mib", "processes":
[{"pid", "command", "used_mib"}]}]}``.

The driver keeps part of each GPU's memory for itself (NVML's "reserved", 0.3-0.9 GiB on current cards):
CUDA's ``cudaMemGetInfo``, and with it vLLM's ``total_gpu_memory``, reports the total less that part.
``GpuDevice.cuda_total`` is that figure, the one every memory budget is planned on; ``total`` stays NVML's,
which names the hardware.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MiB = 1 << 20
FAKE_ENV = "VLLM_GUARD_FAKE_GPUS"


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
    used: int  # allocated, not counting what the driver keeps (``reserved``) where NVML tells them apart
    processes: tuple[GpuProcess, ...] = ()
    reserved: int = 0  # kept by the driver; 0 where NVML does not say (drivers before R510)

    @property
    def cuda_total(self) -> int:
        """The memory CUDA reports as the device's total (``cudaMemGetInfo``): what vLLM plans with."""
        return self.total - self.reserved

    @property
    def held_by_processes(self) -> int:
        """What the listed processes hold on it, as far as the driver says (bytes)."""
        return sum(p.used_bytes or 0 for p in self.processes)


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
                    "reserved_bytes": d.reserved,
                    "cuda_total_bytes": d.cuda_total,
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


def read_emulated(path: str) -> GpuReport:
    """The emulated GPUs of a ``VLLM_GUARD_FAKE_GPUS`` file. Memory in use by no listed process is
    ``unlisted_mib``, as NVML shows what other containers hold."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        devices = []
        for i, g in enumerate(data.get("gpus", [])):
            procs = tuple(
                GpuProcess(int(p.get("pid", 0)), int(p.get("used_mib", 0)) * MiB, str(p.get("command", "?")))
                for p in g.get("processes", [])
            )
            total = int(g.get("total_mib", 0)) * MiB
            reserved = min(total, max(0, int(g.get("reserved_mib", 0))) * MiB)
            used = min(total - reserved, sum(p.used_bytes or 0 for p in procs) + int(g.get("unlisted_mib", 0)) * MiB)
            name = str(g.get("name", "emulated"))
            devices.append(
                GpuDevice(int(g.get("index", i)), name, total, total - reserved - used, used, procs, reserved)
            )
    except (OSError, ValueError, TypeError, AttributeError) as err:
        return GpuReport(error=f"the GPU file {path} ({FAKE_ENV}) cannot be read: {err}")
    if not devices:
        return GpuReport(error=f"the GPU file {path} ({FAKE_ENV}) lists no GPU")
    return GpuReport(devices=tuple(devices), driver_version=f"emulated ({FAKE_ENV})")


def _memory(pynvml: Any, handle: Any) -> tuple[Any, int]:
    """The device's memory and what the driver keeps of it. NVML's second memory query (R510 drivers on) tells
    the reserved part apart; the first counts it as used, and then nothing is taken off the total."""
    v2 = getattr(pynvml, "nvmlMemory_v2", None)
    if v2 is not None:
        try:
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle, version=v2)
            reserved = int(getattr(mem, "reserved", 0) or 0)
            if 0 <= reserved < int(mem.total):
                return mem, reserved
        except Exception:  # an older driver: the function or the version is not supported
            pass
    return pynvml.nvmlDeviceGetMemoryInfo(handle), 0


def read_gpus() -> GpuReport:
    """Every visible NVIDIA GPU with its memory and the processes holding it (the emulated ones when
    ``VLLM_GUARD_FAKE_GPUS`` is set)."""
    fake = os.environ.get(FAKE_ENV)
    if fake:
        return read_emulated(fake)
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
            mem, reserved = _memory(pynvml, h)
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
                    reserved=reserved,
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
    """GPUs of the given sizes, all memory free: planning for hardware this host does not have. ``reserved``: what
    the driver keeps of each (``planner.gpu_card`` estimates it for a card named by its size), none if not given."""

    sizes: Sequence[int] = field(default_factory=list)
    reserved: Sequence[int] = field(default_factory=list)

    def read(self) -> GpuReport:
        kept = list(self.reserved) + [0] * max(0, len(self.sizes) - len(self.reserved))
        return GpuReport(
            devices=tuple(
                GpuDevice(index=i, name=f"planned GPU {i}", total=s, free=s - r, used=0, reserved=r)
                for i, (s, r) in enumerate(zip(self.sizes, kept, strict=False))
            ),
            driver_version=None,
            fake=True,
        )
