"""The guard under stress: SIGKILLed mid-remedy, the unit's start limit, journal rotation, hostile paths."""

from __future__ import annotations

import json

import pytest

from tests.system.harness import (
    Q7,
    GuardBox,
    add_model,
    kinds,
    start,
    wait_for,
    wait_healthy,
)

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
PORT = 8000
KV_FLAGS = {"gpu_memory_utilization": 0.7, "max_model_len": 32768}  # fails; the estimate is 30240


def test_guard_sigkilled_mid_remedy_finishes_the_step_exactly_once(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    # RestartSec 6: the guard is killed between the failure and systemd's restart.
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=KV_FLAGS, restart_sec=6)
    start(gbox, [target])

    wait_for(gbox, UNIT, "failure_detected")
    gbox.box.systemctl("kill", "--kill-whom=main", "--signal=SIGKILL", "vllm-guard.service")

    wait_healthy(gbox, UNIT, timeout=120)

    guard = gbox.box.show("vllm-guard.service", "NRestarts", "ActiveState")
    assert guard["NRestarts"] == "1"
    assert guard["ActiveState"] == "active"
    assert len(gbox.events(UNIT, "remedy_applied")) == 1
    assert gbox.flags(UNIT).count("--max-model-len=28720") == 1
    assert set(kinds(gbox, UNIT)) == {"kv_cache_insufficient"}
    assert gbox.chat(PORT, "qwen") == 200


def test_start_limit_hit_guard_resets_and_starts_while_it_has_a_step(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    # StartLimitBurst=1: systemd refuses the automatic restart ("Start request repeated too quickly").
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=KV_FLAGS, start_limit_burst=1)
    start(gbox, [target])

    wait_healthy(gbox, UNIT, timeout=90)

    log = "\n".join(str(e.get("MESSAGE", "")) for e in gbox.box.journal("UNIT=vllm-emu.service", "_PID=1"))
    assert "Start request repeated too quickly" in log, log  # systemd refused the restart (its result stays exit-code)
    assert kinds(gbox, UNIT)[0] == "kv_cache_insufficient"
    assert "--max-model-len=28720" in gbox.flags(UNIT)
    assert gbox.starts(UNIT) == 2
    assert gbox.chat(PORT, "qwen") == 200


def test_journal_rotation_during_a_run(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT, model=model, port=PORT, flags=KV_FLAGS, env={"VLLM_EMU_LOAD_S": "3"}, restart_sec=3
    )
    start(gbox, [target])

    gbox.box.run("journalctl", "--rotate")  # while the first attempt loads its weights
    wait_for(gbox, UNIT, "failure_detected")
    gbox.box.run("journalctl", "--rotate")  # between the failure and the restart
    wait_healthy(gbox, UNIT, timeout=90)

    assert kinds(gbox, UNIT) == ["kv_cache_insufficient"]
    assert len(gbox.events(UNIT, "remedy_applied")) == 1
    assert "--max-model-len=28720" in gbox.flags(UNIT)
    assert gbox.starts(UNIT) == 2


def test_model_path_with_spaces_percent_dollar_and_quotes_reaches_argv_unchanged(gbox: GuardBox) -> None:
    name = """my model 100% $HOME ${X} "double" 'single' back\\slash"""
    model = add_model(gbox, name, Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"max_model_len": 8192},
        env={"VLLM_EMU_ARGV_FILE": gbox.inside("argv.json")},
    )
    start(gbox, [target])

    wait_healthy(gbox, UNIT)

    argv = json.loads((gbox.host_dir / "argv.json").read_text())
    assert argv[argv.index("--model") + 1] == model
    assert argv[argv.index("--served-model-name") + 1] == name
    assert gbox.chat(PORT, name) == 200
    assert gbox.starts(UNIT) == 1
