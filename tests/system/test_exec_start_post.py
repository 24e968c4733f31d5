"""`vllm-guard probe --wait` as the vLLM unit's ExecStartPost=: the unit stays `activating` until the model
answers a chat request, so units ordered after it only start once it really serves."""

from __future__ import annotations

import time

import pytest

from tests.system.harness import Q7, GuardBox, add_model, start

pytestmark = pytest.mark.system

UNIT = "vllm-post"
PORT = 8000
LOAD_S = 12  # the emulator "loads weights" this long before it serves


def test_unit_is_activating_until_the_chat_probe_passes(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192},
        env={"VLLM_EMU_LOAD_S": str(LOAD_S)},
        probe={"exec_start_post": True},
    )
    start(gbox, [target], start_units=False)
    unit_text = gbox.box.read(f"/etc/systemd/system/{UNIT}.service")
    assert "\nExecStartPost=" in unit_text and " probe --wait " in unit_text
    t0 = time.monotonic()
    gbox.box.systemctl("start", "--no-block", f"{UNIT}.service")

    seen = []
    while time.monotonic() - t0 < LOAD_S - 4:
        st = gbox.unit_state(UNIT)
        seen.append((st.get("ActiveState"), st.get("SubState")))
        # until the start job runs the unit may still read inactive; once it runs, never active yet
        assert st.get("ActiveState") in ("activating", "inactive"), st
        assert gbox.chat(PORT, "qwen", timeout=2) != 200  # the model does not answer yet
        time.sleep(1)
    assert ("activating", "start-post") in seen, seen

    def active() -> bool | None:
        return gbox.unit_state(UNIT).get("ActiveState") == "active" or None

    gbox.box.wait_until("the unit to become active", active, timeout=60)
    assert time.monotonic() - t0 >= LOAD_S  # not before the weights were loaded
    assert gbox.chat(PORT, "qwen") == 200  # active means: the model answers
    assert gbox.starts(UNIT) == 1
