"""Whether this vllm-guard runs from a source checkout (which holds the vLLM emulator) or from a package."""

from __future__ import annotations

from pathlib import Path


def source_checkout() -> Path | None:
    """The top of the source checkout this package runs from (it holds tests/emulator), or None."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "tests" / "emulator" / "vllm_emulator.py").is_file() and (parent / "units").is_dir():
            return parent
    return None
