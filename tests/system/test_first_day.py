"""A sysadmin's first day, on a real systemd: reset that resets, a status that tells the truth, a unit that
does not wait for a network it does not need."""

from __future__ import annotations

import json

import pytest

from tests.system.harness import (
    Q7,
    GuardBox,
    add_model,
    event_names,
    flag,
    kinds,
    settle,
    start,
    wait_for,
    wait_healthy,
)

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


FLAGS = {"gpu_memory_utilization": 0.9, "max_model_len": 8192}


def _doctor(gbox: GuardBox) -> dict[str, dict[str, str]]:
    out = gbox.guard("doctor", "--config", gbox.config_path, "--json", "--no-vllm-check", check=False).stdout
    return {f["ref"]: f for f in json.loads(out)["findings"]}


def test_a_probe_helper_that_cannot_read_the_config_is_named_before_and_at_the_start(gbox: GuardBox) -> None:
    # the unit runs as an account of its own; its ExecStartPost= probe reads the guard's config as that account
    gbox.box.run("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "vllmtest")
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags=FLAGS,
        user="vllmtest",
        group="vllmtest",
        probe={"exec_start_post": True},
    )
    start(gbox, [target], start_units=False)
    (gbox.host_dir / "config.toml").chmod(0o600)  # only root reads it: the guard does, the unit's user does not

    check = gbox.guard("run", "--check", "--config", gbox.config_path, check=False)
    assert check.returncode == 1, check.stderr
    assert "error[unreadable-by-unit-user]" in check.stderr and "'vllmtest' cannot read the config" in check.stderr
    assert "chmod o+r" in check.stderr
    assert _doctor(gbox)["unreadable-by-unit-user"]["status"] == "fail"

    gbox.box.systemctl("start", "--no-block", f"{UNIT}.service")
    gave_up = wait_for(gbox, UNIT, "gave_up", timeout=90)
    failure = gbox.events(UNIT, "failure_detected")[0]
    assert failure["VLLM_GUARD_KIND"] == "bad_arguments", failure
    assert "readable by that user" in failure["VLLM_GUARD_HINT"], failure
    assert "remedy_applied" not in event_names(gbox, UNIT)
    restarts = gbox.unit_state(UNIT)["NRestarts"]
    settle(6)  # three RestartSec: no blind retries
    assert gbox.unit_state(UNIT)["NRestarts"] == restarts
    assert "readable by that user" in gave_up["VLLM_GUARD_REASON"], gave_up  # the hint, in the give-up too

    (gbox.host_dir / "config.toml").chmod(0o644)  # fixed as the hint says
    fixed = gbox.guard("run", "--check", "--config", gbox.config_path, check=False)
    assert "unreadable-by-unit-user" not in fixed.stderr, fixed.stderr
    gbox.guard("reset", "--config", gbox.config_path, UNIT, "--restart", timeout=60)
    wait_healthy(gbox, UNIT, timeout=90)


def test_a_base_flag_edited_then_install_is_said_and_the_guard_starts_over_from_it(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    start(gbox, [gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=FLAGS)])
    wait_healthy(gbox, UNIT, timeout=60)
    assert _doctor(gbox)["env"]["status"] == "ok"

    config = gbox.host_dir / "config.toml"
    config.write_text(config.read_text().replace("max_model_len = 8192", "max_model_len = 4096"))
    installed = gbox.guard("install", "--config", gbox.config_path).stdout
    assert f"kept /var/lib/vllm-guard/{UNIT}.env" in installed, installed
    assert (
        "starts over from them once it reloads (systemctl reload vllm-guard)" in installed
        and "--reset-flags" in installed
    )
    # doctor no longer blames the guard for what a person changed
    found = _doctor(gbox)
    assert "env-changed" not in found
    assert found["env-base-changed"]["status"] == "warn"
    assert "systemctl reload vllm-guard" in found["env-base-changed"]["hint"]

    gbox.box.systemctl("reload", "vllm-guard.service", timeout=60)
    reset = wait_for(gbox, UNIT, "reset", timeout=30)
    assert reset["VLLM_GUARD_REASON"] == "base config changed", reset
    assert flag(gbox, UNIT, "max-model-len") == "4096"
    assert _doctor(gbox)["env"]["status"] == "ok"
    gbox.box.systemctl("restart", f"{UNIT}.service", timeout=60)
    wait_healthy(gbox, UNIT, n=2, timeout=60)
    assert "--max-model-len=4096" in gbox.events(UNIT, "verified_healthy")[1]["VLLM_GUARD_FLAGS_AFTER"]


def test_metrics_without_node_exporters_folder_is_caught_before_the_start_and_said_loudly(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=FLAGS)
    gbox.write_config({"metrics": True}, [target])
    assert not gbox.box.exists("/var/lib/prometheus/node-exporter")

    check = gbox.guard("run", "--check", "--config", gbox.config_path, check=False)
    assert check.returncode == 1 and "error[metrics-folder-missing]" in check.stderr, check.stderr
    assert "install prometheus-node-exporter" in check.stderr
    assert _doctor(gbox)["metrics-folder-missing"]["status"] == "fail"

    start(gbox, [target], guard={"metrics": True})  # started anyway: the guard runs, and says it loudly
    wait_healthy(gbox, UNIT, timeout=60)

    def warned() -> list[dict[str, object]] | None:
        said = [e for e in gbox.box.journal("_SYSTEMD_UNIT=vllm-guard.service") if "cannot write metrics" in str(e)]
        return said or None

    line = gbox.box.wait_until("the metrics warning", warned, timeout=30)[0]
    assert line["PRIORITY"] == "4", line  # warning, not info
    assert "does not exist: install prometheus-node-exporter" in str(line["MESSAGE"]), line


def test_the_small_things_a_new_sysadmin_meets(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    kv = {"gpu_memory_utilization": 0.7, "max_model_len": 32768}  # the KV cache holds 30240 tokens: healed once
    start(gbox, [gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=kv)])
    wait_healthy(gbox, UNIT, timeout=60)

    # a person's restart is told apart from a failure in the history
    gbox.box.systemctl("restart", f"{UNIT}.service", timeout=60)
    wait_healthy(gbox, UNIT, n=2, timeout=60)
    history = gbox.guard("history", "--config", gbox.config_path, UNIT).stdout
    assert "kv_cache_insufficient" in history and "stopped by a person" in history, history
    assert "none (unknown)" not in history

    # classify over the unit's journal and a file that is not there: the verdict of the one it can read, exit 66
    dump = gbox.box.run("journalctl", "--no-pager", "-o", "cat", "-u", f"{UNIT}.service").stdout
    gbox.box.write("/root/vllm-emu.log", dump)
    out = gbox.guard("classify", "/root/vllm-emu.log", "/root/not-there.log", check=False)
    assert out.returncode == 66, out
    assert "kv_cache_insufficient" in out.stdout and "not-there.log" in out.stderr

    # a mistyped key and a quoted port are named with what to do; the man page, not a README, is pointed to
    config = gbox.host_dir / "config.toml"
    good = config.read_text()
    config.write_text(good.replace("max_model_len", "max_model_lenght"))
    check = gbox.guard("run", "--check", "--config", gbox.config_path, check=False)
    assert check.returncode == 78 and "did you mean 'max_model_len'" in check.stderr, check.stderr
    assert "man vllm-guard" in check.stderr and "README" not in check.stderr
    config.write_text(good.replace(f"port = {PORT}", f'port = "{PORT}"'))
    check = gbox.guard("run", "--check", "--config", gbox.config_path, check=False)
    assert check.returncode == 78 and "port" in check.stderr, check.stderr
    config.write_text(good)

    # `plan --gpu auto` where no GPU can be read: 69 (unavailable), not a usage error
    no_gpu = gbox.box.run(
        gbox.python,
        "-m",
        "vllm_guard",
        "plan",
        "--model",
        model,
        "--gpu",
        "auto",
        check=False,
        env={"PYTHONPATH": str(gbox.repo / "src")},
    )
    assert no_gpu.returncode == 69, no_gpu.stdout + no_gpu.stderr
    assert "hint:" in no_gpu.stderr
