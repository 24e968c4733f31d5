"""The comparison's baseline: the same KV-cache failure under plain systemd, without the guard."""

from __future__ import annotations

import pytest

from tests.system.harness import Q7, GuardBox, add_model, start, wait_state

pytestmark = pytest.mark.system

UNIT = "vllm-emu"


def test_plain_systemd_gives_up_after_start_limit_burst_and_never_serves(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768},
        restart_sec=1,
        start_limit_burst=3,
    )
    start(gbox, [target], with_guard=False)

    wait_state(gbox, UNIT, timeout=60, ActiveState="failed")
    pid1 = "\n".join(str(e.get("MESSAGE", "")) for e in gbox.box.journal(f"UNIT={UNIT}.service", "_PID=1"))

    assert "Start request repeated too quickly" in pid1
    assert gbox.starts(UNIT) == 3
    assert "Application startup complete" not in gbox.unit_log(UNIT)
    assert gbox.flags(UNIT) == ["--gpu-memory-utilization=0.7", "--max-model-len=32768"]
    assert gbox.events(UNIT) == []
