"""After a verified start: a dead engine, a hang, an exit 0 after the engine died, a person's stop."""

from __future__ import annotations

import pytest

from tests.system.harness import (
    Q7,
    GuardBox,
    add_model,
    event_names,
    settle,
    start,
    wait_for,
    wait_healthy,
    wait_state,
)

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
PORT = 8000
FLAGS = {"gpu_memory_utilization": 0.9, "max_model_len": 8192}


def _faulty(gb: GuardBox, mode: str) -> dict[str, object]:
    """A target whose engine fails (once: a marker file) at the 2nd chat request."""
    model = add_model(gb, "qwen", Q7)
    env = {
        "VLLM_EMU_MODE": mode,
        "VLLM_EMU_FAIL_AT_REQUEST": "2",
        "VLLM_EMU_FAULT_ONCE": gb.inside("fault-fired"),
    }
    return gb.emulator_target(unit=UNIT, model=model, port=PORT, flags=FLAGS, env=env)


def test_engine_dead_after_ready_is_restarted_by_liveness(gbox: GuardBox) -> None:
    start(gbox, [_faulty(gbox, "engine_dead")])
    wait_healthy(gbox, UNIT)
    before = gbox.flags(UNIT)

    assert gbox.chat(PORT, "qwen") in (200, 500)  # the 2nd request kills the engine; the API stays up
    assert (gbox.host_dir / "fault-fired").exists()
    restarted = wait_for(gbox, UNIT, "restarted_unit", timeout=90)
    wait_healthy(gbox, UNIT, n=2, timeout=90)

    assert "probe_failed" in event_names(gbox, UNIT)
    assert restarted["VLLM_GUARD_KIND"] == "engine_dead", restarted
    assert gbox.flags(UNIT) == before
    assert gbox.starts(UNIT) == 2
    assert gbox.chat(PORT, "qwen") == 200


def test_hang_is_restarted_by_liveness(gbox: GuardBox) -> None:
    start(gbox, [_faulty(gbox, "hang")])
    wait_healthy(gbox, UNIT)
    before = gbox.flags(UNIT)

    assert gbox.chat(PORT, "qwen", timeout=2) == 0  # no answer: the server hangs
    wait_for(gbox, UNIT, "restarted_unit", timeout=90)
    wait_healthy(gbox, UNIT, n=2, timeout=90)

    assert "probe_failed" in event_names(gbox, UNIT)
    assert gbox.flags(UNIT) == before
    assert gbox.starts(UNIT) == 2
    assert gbox.chat(PORT, "qwen") == 200


def test_exit_0_after_engine_death_is_restarted(gbox: GuardBox) -> None:
    # vLLM's API server can exit 0 once its engine died; Restart=on-failure alone would not restart it.
    start(gbox, [_faulty(gbox, "exit0_after_engine_dead")])
    wait_healthy(gbox, UNIT)

    gbox.chat(PORT, "qwen")
    wait_healthy(gbox, UNIT, n=2, timeout=90)

    # the guard brought it back (a dead engine found by the probe: restart; the exit 0 first: start)
    restarted = gbox.events(UNIT, "restarted_unit")
    assert len(restarted) == 1 and restarted[0]["VLLM_GUARD_KIND"] == "engine_dead", restarted
    assert gbox.starts(UNIT) == 2
    assert gbox.chat(PORT, "qwen") == 200


def test_a_persons_systemctl_stop_is_respected(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    start(gbox, [gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=FLAGS)])
    wait_healthy(gbox, UNIT)

    gbox.box.systemctl("stop", f"{UNIT}.service")
    wait_state(gbox, UNIT, ActiveState="inactive")
    settle(12)  # two liveness periods and several RestartSec

    assert gbox.unit_state(UNIT)["ActiveState"] == "inactive"
    names = event_names(gbox, UNIT)
    assert "restarted_unit" not in names
    assert "failure_detected" not in names
    assert gbox.starts(UNIT) == 1
