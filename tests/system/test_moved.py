"""A unit that moves to another GPU begins from the flags known for that GPU, on a real systemd.

The GPU is the emulated one (``VLLM_GUARD_FAKE_GPUS``): the guard reads it as it reads NVML, and the
vLLM emulator sizes its KV cache by it. Swapping the file between guard starts is a card swap.
"""

from __future__ import annotations

import pytest

from tests.system.harness import Q7, GuardBox, add_model, kinds, start, wait_for, wait_healthy
from vllm_guard.app import sandbox

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
PORT = 8000
KV_FLAGS = {"gpu_memory_utilization": 0.7, "max_model_len": 32768}  # fails on 24 GiB (estimate 30240), fits 48


def _swap_gpu(gb: GuardBox, total_mib: int) -> None:
    """Both units down (the unit first, so the guard sees it stopped), the card swapped, the guard up."""
    gb.box.systemctl("stop", f"{UNIT}.service", timeout=60)
    gb.box.systemctl("stop", sandbox.GUARD_UNIT, timeout=60)
    gb.write_gpus(sandbox.fake_gpus(total_mib=total_mib))
    gb.start_guard()


def test_a_gpu_swap_begins_from_the_base_flags_and_a_swap_back_from_the_flags_verified_there(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    start(gbox, [gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=KV_FLAGS)])
    wait_healthy(gbox, UNIT, timeout=90)
    assert "--max-model-len=28720" in gbox.flags(UNIT)  # healed on the 24 GiB card

    # a 48 GiB card: nothing is known there, so the base flags; they fit, and the first start serves
    _swap_gpu(gbox, 49152)
    reset = wait_for(gbox, UNIT, "reset")
    assert "Emulated 24 GiB 24576MiB -> Emulated 48 GiB 49152MiB" in reset["VLLM_GUARD_REASON"]
    assert "--max-model-len=32768" in gbox.flags(UNIT)
    gbox.box.systemctl("start", "--no-block", f"{UNIT}.service")
    healthy = wait_healthy(gbox, UNIT, n=2, timeout=90)
    assert "--max-model-len=32768" in healthy["VLLM_GUARD_FLAGS_AFTER"]

    # back on the 24 GiB card: straight to the flags verified there, without a failing start first
    _swap_gpu(gbox, 24576)
    reset = wait_for(gbox, UNIT, "reset", n=2)
    assert "last-known-good" in reset["VLLM_GUARD_REASON"]
    assert "--max-model-len=28720" in gbox.flags(UNIT)
    gbox.box.systemctl("start", "--no-block", f"{UNIT}.service")
    wait_healthy(gbox, UNIT, n=3, timeout=90)

    assert kinds(gbox, UNIT) == ["kv_cache_insufficient"]  # the one failure, on the first card
    assert gbox.starts(UNIT) == 4
    assert gbox.chat(PORT, "qwen") == 200
