"""Failures that flags cannot fix: the guard changes no flag, stops what cannot recover, waits out what will."""

from __future__ import annotations

import pytest

from tests.system.harness import (
    Q7,
    GuardBox,
    add_model,
    event_names,
    kinds,
    settle,
    start,
    wait_for,
    wait_healthy,
)

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
PORT = 8000
FLAGS = {"gpu_memory_utilization": 0.9, "max_model_len": 8192}


def test_bad_arguments_no_flag_change_and_no_restart_loop(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=FLAGS, extra_args=["--no-such-flag"])
    start(gbox, [target])
    before = gbox.flags(UNIT)

    wait_for(gbox, UNIT, "gave_up")
    starts = gbox.starts(UNIT)
    settle(8)  # four RestartSec

    assert kinds(gbox, UNIT)[0] == "bad_arguments"
    assert gbox.flags(UNIT) == before
    assert "remedy_applied" not in event_names(gbox, UNIT)
    assert gbox.starts(UNIT) == starts <= 2
    assert gbox.unit_state(UNIT)["ActiveState"] in ("inactive", "failed")


def test_port_in_use_is_transient_and_heals_once_freed(gbox: GuardBox) -> None:
    # Something else listens on the port first (a transient unit inside the container).
    gbox.box.run(
        "systemd-run",
        "--unit=squatter",
        "/usr/bin/python3",
        "-m",
        "http.server",
        "--bind",
        "127.0.0.1",
        str(PORT),
    )
    gbox.box.wait_until("the squatter to listen", lambda: gbox.http(PORT, "/") == 200, 20)
    model = add_model(gbox, "qwen", Q7)
    # A longer start-limit window than the test's default: the port stays taken for a few restarts.
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=FLAGS, start_limit_burst=10)
    start(gbox, [target])
    before = gbox.flags(UNIT)

    failure = wait_for(gbox, UNIT, "failure_detected")
    assert failure.get("VLLM_GUARD_KIND") == "port_in_use"
    gbox.box.systemctl("stop", "squatter.service")

    wait_healthy(gbox, UNIT, timeout=90)

    assert gbox.flags(UNIT) == before
    assert set(kinds(gbox, UNIT)) == {"port_in_use"}
    assert "remedy_applied" not in event_names(gbox, UNIT)
    assert "gave_up" not in event_names(gbox, UNIT)
    assert gbox.chat(PORT, "qwen") == 200


def test_a_unit_user_that_does_not_exist_is_named_and_not_retried(gbox: GuardBox) -> None:
    # systemd itself refuses the start (status=217/USER): no vLLM line at all, only PID 1's words
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=FLAGS, user="no-such-user-here")
    start(gbox, [target])

    gave_up = wait_for(gbox, UNIT, "gave_up")
    assert kinds(gbox, UNIT)[0] == "bad_arguments"
    failure = gbox.events(UNIT, "failure_detected")[0]
    assert "User=" in failure["VLLM_GUARD_HINT"], failure
    assert "vLLM rejected an argument" not in failure["VLLM_GUARD_HINT"]
    starts = gbox.unit_state(UNIT)["NRestarts"]
    settle(6)  # three RestartSec: nothing restarts it
    assert gbox.unit_state(UNIT)["NRestarts"] == starts
    assert "useradd" in gave_up["VLLM_GUARD_REASON"] and "User=" in gave_up["VLLM_GUARD_REASON"], gave_up
    # and `vllm-guard run --check` would have said so before the first start
    check = gbox.guard("run", "--check", "--config", gbox.config_path, check=False)
    assert check.returncode == 1 and "error[user-missing]" in check.stderr
