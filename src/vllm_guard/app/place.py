"""Where a target's vLLM runs now: its GPUs (or the CPU), the vLLM its python has installed, and whether that vLLM
samples on FlashInfer."""

from __future__ import annotations

import shutil
from pathlib import Path

from vllm_guard.adapters import host
from vllm_guard.app.gpus import Gpu
from vllm_guard.core.config import Target
from vllm_guard.core.where import GpuModel, Where, hardware_of


def python_of(target: Target) -> str | None:
    """The python the unit runs: the command's own when it is `python -m vllm...`, the interpreter of the
    `vllm` script's #! line for `vllm serve`; None when neither can be told."""
    first = target.command[0]
    name = Path(first).name
    if name.startswith("python"):
        return first
    if name != "vllm":
        return None
    script = first if "/" in first else shutil.which(first)
    if script is None:
        return None
    try:
        with open(script, "rb") as f:
            line = f.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    words = line.removeprefix("#!").split()
    if not line.startswith("#!") or not words:
        return None
    if Path(words[0]).name == "env" and len(words) > 1:
        return words[-1]  # #!/usr/bin/env python3
    return words[0]


def vllm_release(target: Target) -> tuple[str | None, str]:
    """The vLLM release the target runs and where that was read: the version installed for its python (~0.2 s to
    ask), else the target's vllm_version (a container's vLLM); (None, "") when neither tells."""
    python = python_of(target)
    installed = host.installed_vllm_version(python) if python else None
    if installed is not None:
        return installed, "the target's python"
    if target.vllm_version is not None:
        return target.vllm_version, "the target's vllm_version"
    return None, ""


def where_now(target: Target, gpus: list[Gpu] | None) -> Where:
    """The target's place now; the vLLM version costs a python start (~0.2 s)."""
    hardware = hardware_of(target, [(g.index, GpuModel(g.name, g.total_mib)) for g in gpus] if gpus else None)
    return Where(hardware, vllm_release(target)[0])


def flashinfer_of(target: Target, vllm_version: str | None) -> bool | None:
    """Whether the target's vLLM samples top-k/top-p on FlashInfer: installed for its python (~0.2 s to ask), and
    its environment's VLLM_USE_FLASHINFER_SAMPLER, read by the installed release's rule; None when that cannot
    tell (``planner.flashinfer_sampler_of``)."""
    from vllm_guard.core.planner import flashinfer_sampler_of

    python = python_of(target)
    if python is None:
        return None
    env = target.environment.get("VLLM_USE_FLASHINFER_SAMPLER")
    return flashinfer_sampler_of(vllm_version, host.installed_flashinfer(python), env)
