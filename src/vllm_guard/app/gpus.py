"""The GPU view the daemon needs while waiting for held VRAM: total, free, and who holds it.

Reads NVML through ``vllm_guard.adapters.nvml`` when that module offers ``read_gpus``; the fake GPU file
(``VLLM_GUARD_FAKE_GPUS``, used where no GPU exists, e.g. the system tests) is read here directly so the
daemon's logic is exercised the same way with or without a GPU.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

FAKE_ENV = "VLLM_GUARD_FAKE_GPUS"


@dataclass(frozen=True)
class Holder:
    pid: int
    command: str
    used_mib: int


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    total_mib: int
    free_mib: int
    holders: tuple[Holder, ...] = field(default_factory=tuple)


def _from_fake(path: Path) -> list[Gpu] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    out = []
    for i, g in enumerate(data.get("gpus", [])):
        procs = tuple(
            Holder(int(p.get("pid", 0)), str(p.get("command", "?")), int(p.get("used_mib", 0)))
            for p in g.get("processes", [])
        )
        total = int(g.get("total_mib", 0))
        used = sum(h.used_mib for h in procs) + int(g.get("unlisted_mib", 0))  # as NVML: in use, no process listed
        out.append(Gpu(int(g.get("index", i)), str(g.get("name", "emulated")), total, max(0, total - used), procs))
    return out


def read_gpus() -> list[Gpu] | None:
    """Every visible GPU, or None when none can be read (no driver, no NVML)."""
    fake = os.environ.get(FAKE_ENV)
    if fake:
        return _from_fake(Path(fake))
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
        )
        for d in report.devices
    ]


def why_no_gpus() -> str:
    """Why ``read_gpus`` saw no GPU: NVML's own error (a driver/library mismatch, no /dev/nvidiactl ...)."""
    fake = os.environ.get(FAKE_ENV)
    if fake:
        return f"the GPU file {fake} cannot be read"
    from vllm_guard.adapters import nvml

    return nvml.read_gpus().error or "NVML lists no GPU"


def describe_holders(gpus: list[Gpu]) -> str:
    parts = [f"pid {h.pid} {h.command} {h.used_mib} MiB on GPU {g.index}" for g in gpus for h in g.holders]
    return "; ".join(parts) if parts else "no process listed"
