"""A sysadmin's first day, on a real systemd: reset that resets, a status that tells the truth, a unit that
does not wait for a network it does not need."""

from __future__ import annotations

import json

import pytest

from tests.system.harness import Q7, GuardBox, add_model, kinds, start, wait_for, wait_healthy

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
PORT = 8000


def test_reset_clears_the_budget_so_the_guard_heals_again(gbox: GuardBox) -> None:
    # Every start dies of a CUDA OOM at its 2nd request while max_num_seqs > 16; a budget of one remedy
    # is spent by the first (64 -> 32), and the second OOM gives up.
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192, "max_num_seqs": 64},
        env={"VLLM_EMU_MODE": "oom_under_load", "VLLM_EMU_FAIL_AT_REQUEST": "2", "VLLM_EMU_SEQS_LIMIT": "16"},
        budget={"max_remedies": 1},
    )
    start(gbox, [target])
    for n in (1, 2):
        wait_healthy(gbox, UNIT, n=n, timeout=60)
        gbox.chat(PORT, "qwen")
        gbox.chat(PORT, "qwen")
    gave_up = wait_for(gbox, UNIT, "gave_up", timeout=60)
    assert "budget spent" in gave_up["VLLM_GUARD_REASON"]
    assert len(gbox.events(UNIT, "remedy_applied")) == 1

    reset = gbox.guard("reset", "--config", gbox.config_path, UNIT, "--restart", timeout=60)
    assert "budget cleared (1 remedy" in reset.stdout and "'gave up' mark is gone" in reset.stdout
    wait_healthy(gbox, UNIT, n=3, timeout=60)
    gbox.chat(PORT, "qwen")
    gbox.chat(PORT, "qwen")
    second = wait_for(gbox, UNIT, "remedy_applied", n=2, timeout=60)  # it heals again instead of giving up
    assert "max_num_seqs 64 -> 32" in second["VLLM_GUARD_CHANGE"], second
    assert len(gbox.events(UNIT, "gave_up")) == 1
    history = gbox.guard("history", "--config", gbox.config_path, UNIT).stdout
    assert "cuda_oom_runtime" in history


def test_status_tells_systemds_view_and_survives_a_broken_config(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags={"max_model_len": 8192})
    start(gbox, [target])
    wait_healthy(gbox, UNIT, timeout=60)

    status = json.loads(gbox.guard("status", "--config", gbox.config_path, "--json").stdout)
    unit = status["targets"][0]
    assert unit["state"] == "healthy" and unit["systemd"]["ActiveState"] == "active"
    assert status["guard"]["ActiveState"] == "active"
    # and what the running server itself says it serves
    assert unit["serving"] == {"url": f"http://127.0.0.1:{PORT}/v1/models", "root": model, "problem": None}
    text = gbox.guard("status", "--config", gbox.config_path).stdout
    assert f"/v1/models: serves the weights in {model}" in text

    good = (gbox.host_dir / "config.toml").read_text()
    (gbox.host_dir / "config.toml").write_text(good.replace("max_model_len", "max_modle_len"))
    text = gbox.guard("status", "--config", gbox.config_path, check=False)
    assert text.returncode == 0, text.stderr
    assert "the config is invalid" in text.stdout and "max_modle_len" in text.stdout
    assert "vllm-emu.service: healthy" in text.stdout

    gbox.box.systemctl("stop", "vllm-guard.service", timeout=60)
    text = gbox.guard("status", "--config", gbox.config_path, check=False).stdout
    assert "vllm-guard.service is inactive: nothing is being guarded" in text


def test_the_vllm_unit_needs_no_online_network_but_its_model_mounts(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    start(gbox, [gbox.emulator_target(unit=UNIT, model=model, port=PORT)], start_units=False)
    shown = gbox.box.show(f"{UNIT}.service", "After", "Wants", "RequiresMountsFor")
    assert "network-online.target" not in shown["After"] + shown["Wants"], shown
    assert model in shown["RequiresMountsFor"].split(), shown
    assert kinds(gbox, UNIT) == []
