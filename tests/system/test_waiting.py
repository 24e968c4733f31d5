"""A target whose model folder is not there yet (a network mount late in boot, a disk back after an outage):
the guard waits for it and guards the other targets meanwhile, on a real systemd."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests.system.harness import (
    EMULATOR_MODELS,
    Q7,
    GuardBox,
    add_model,
    event_names,
    flag,
    settle,
    start,
    wait_for,
    wait_healthy,
)

pytestmark = pytest.mark.system

FLAGS = {"gpu_memory_utilization": 0.9, "max_model_len": 8192}


def test_a_target_whose_model_comes_20_s_late_waits_while_the_other_is_guarded(gbox: GuardBox) -> None:
    here = add_model(gbox, "qwen", Q7)
    late = gbox.inside("models/late")  # nothing there yet
    # the first target's KV cache is too small: proof that it is guarded while the other one waits
    served = gbox.emulator_target(
        unit="vllm-a", model=here, port=8000, flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768}
    )
    waiting = gbox.emulator_target(unit="vllm-b", model=late, port=8001, flags=FLAGS, served_model_name="qwen")
    t0 = time.monotonic()
    start(gbox, [served, waiting])  # install and the guard accept it: no config error, no exit 78

    said = wait_for(gbox, "vllm-b", "target_waiting", timeout=30)
    assert said["VLLM_GUARD_REASON"] == f"{late} does not exist", said
    assert said["PRIORITY"] == "4"
    status = json.loads(gbox.guard("status", "--config", gbox.config_path, "--json").stdout)
    states = {t["unit"]: t["state"] for t in status["targets"]}
    assert states["vllm-b.service"] == f"waiting for its files ({late} does not exist)", states

    healed = wait_healthy(gbox, "vllm-a", timeout=60)  # guarded meanwhile: healed and verified
    assert "--max-model-len=28720" in healed["VLLM_GUARD_FLAGS_AFTER"]
    # the waiting unit's start failed on the missing folder: stopped, not retried, not given up on
    stopped = gbox.box.wait_until(
        "vllm-b stopped", lambda: gbox.unit_state("vllm-b")["ActiveState"] in ("inactive", "failed") or None, 30
    )
    assert stopped
    starts = gbox.starts("vllm-b")
    assert starts <= 1
    assert "gave_up" not in event_names(gbox, "vllm-b") and "remedy_applied" not in event_names(gbox, "vllm-b")

    time.sleep(max(0.0, 20 - (time.monotonic() - t0)))
    assert gbox.starts("vllm-b") == starts  # no blind restarts while it waited
    shutil.copytree(EMULATOR_MODELS / Q7, gbox.host_dir / "models" / "late")  # the mount appears

    ready = wait_for(gbox, "vllm-b", "target_ready", timeout=30)
    assert "started it" in ready["MESSAGE"], ready
    wait_healthy(gbox, "vllm-b", timeout=60)
    assert gbox.chat(8001, "qwen") == 200
    assert flag(gbox, "vllm-b", "max-model-len") == "8192"  # the flags it was configured with
    assert gbox.chat(8000, "qwen") == 200


def test_a_model_folder_that_goes_away_makes_the_target_wait_and_it_serves_once_back(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    start(gbox, [gbox.emulator_target(unit="vllm-emu", model=model, port=8000, flags=FLAGS)], start_units=False)
    (gbox.host_dir / "models" / "qwen").rename(gbox.host_dir / "models" / "qwen-away")  # the disk is gone
    gbox.box.systemctl("start", "--no-block", "vllm-emu.service")

    wait_for(gbox, "vllm-emu", "target_waiting", timeout=30)
    settle(6)  # three RestartSec: nothing restarts it into the missing folder
    assert gbox.starts("vllm-emu") == 1
    assert "gave_up" not in event_names(gbox, "vllm-emu")

    (gbox.host_dir / "models" / "qwen-away").rename(gbox.host_dir / "models" / "qwen")
    wait_for(gbox, "vllm-emu", "target_ready", timeout=30)
    wait_healthy(gbox, "vllm-emu", timeout=60)
    assert gbox.starts("vllm-emu") == 2
