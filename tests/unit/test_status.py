"""`vllm-guard status`: what systemd says, what the server runs with, and an invalid config that is said."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.conftest import CliResult, write_config
from vllm_guard.app.probe import models_view
from vllm_guard.app.report import format_status, target_status
from vllm_guard.app.statefile import StateStore
from vllm_guard.consts import Paths
from vllm_guard.core.config import Config, Target
from vllm_guard.core.state import Remedy, State, TargetState, Verified, base_current

pytestmark = pytest.mark.unit

TARGET = Target(model="/models/tiny")
CONFIG = Config(target=[TARGET])


def _state(**ts: object) -> State:
    return State(targets={"vllm-qwen": TargetState(current=base_current(TARGET), **ts)})


GAVE_UP = Remedy(at=10.0, kind="cuda_oom_load", action="give_up", reason="no fallback", change="none")


@pytest.mark.parametrize(
    ("ts", "systemd", "word"),
    [
        ({}, {"ActiveState": "inactive"}, "not started"),
        ({}, {"ActiveState": "activating"}, "starting"),
        ({"gave_up": GAVE_UP}, {"ActiveState": "failed"}, "gave_up"),
        ({"gave_up": GAVE_UP}, {"ActiveState": "activating"}, "retrying after the guard gave up"),
        ({"last_verified": Verified(at=5.0, model="/models/tiny", flags="x")}, {"ActiveState": "inactive"}, "stopped"),
        ({}, {}, "unknown"),
    ],
)
def test_the_state_word_follows_what_systemd_says(ts: dict[str, object], systemd: dict[str, str], word: str) -> None:
    data = target_status(CONFIG, _state(**ts), systemd={"vllm-qwen.service": systemd})
    assert data["targets"][0]["state"] == word


def test_the_flags_the_server_runs_with_are_told_apart_from_the_env_file() -> None:
    verified = Verified(at=5.0, model="/models/tiny", flags="--gpu-memory-utilization=0.8")
    data = target_status(
        CONFIG, _state(last_verified=verified), systemd={"vllm-qwen.service": {"ActiveState": "active"}}
    )
    assert data["targets"][0]["running_flags"] == "--gpu-memory-utilization=0.8"
    assert "running with: --gpu-memory-utilization=0.8" in format_status(data)


def _models(status: int, body: object) -> httpx.MockTransport:
    return httpx.MockTransport(lambda req: httpx.Response(status, json=body))


def test_status_tells_what_the_running_server_serves() -> None:
    served = {"object": "list", "data": [{"id": "tiny", "root": "/models/tiny"}]}
    view = models_view(TARGET, "/models/tiny", None, transport=_models(200, served))
    assert view == {"url": "http://127.0.0.1:8000/v1/models", "root": "/models/tiny", "problem": None}
    data = target_status(
        CONFIG, _state(), systemd={"vllm-qwen.service": {"ActiveState": "active"}}, serving={"vllm-qwen.service": view}
    )
    assert "  /v1/models: serves the weights in /models/tiny" in format_status(data).splitlines()

    other = {"object": "list", "data": [{"id": "tiny", "root": "/models/tiny-awq"}]}
    view = models_view(TARGET, "/models/tiny", None, transport=_models(200, other))
    assert view["root"] == "/models/tiny-awq" and "not the configured '/models/tiny'" in str(view["problem"])
    view = models_view(TARGET, "/models/tiny", None, transport=_models(401, {"error": {"message": "Unauthorized"}}))
    assert "API key" in str(view["problem"])

    def refused(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=req)

    view = models_view(TARGET, "/models/tiny", None, transport=httpx.MockTransport(refused))
    data = target_status(CONFIG, _state(), serving={"vllm-qwen.service": view})
    assert "  /v1/models: cannot connect: Connection refused (http://127.0.0.1:8000/v1/models)" in format_status(data)


def test_a_guard_that_is_not_running_is_said_first() -> None:
    data = target_status(CONFIG, _state(), systemd={"vllm-guard.service": {"ActiveState": "inactive"}})
    assert format_status(data).startswith("vllm-guard.service is inactive: nothing is being guarded")


def test_status_with_an_invalid_config_says_so_and_reports_the_state(
    fake_root: Path, cli: Callable[..., CliResult]
) -> None:
    paths = Paths(fake_root)
    paths.state_file.parent.mkdir(parents=True, exist_ok=True)
    store = StateStore(paths.state_file)
    with store.locked():
        store.save(_state(gave_up=GAVE_UP))
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nport = "8000"\n')
    res = cli("status", "--root", fake_root)
    assert res.code == 0, res.err
    assert "the config is invalid" in res.out and "target[0].port" in res.out
    assert "vllm-qwen.service: gave_up" in res.out
    data = json.loads(cli("status", "--root", fake_root, "--json").out)
    assert data["config_error"] and data["targets"][0]["unit"] == "vllm-qwen.service"


def test_history_tells_a_persons_restart_from_a_failure() -> None:
    from vllm_guard.app.report import format_history, target_history
    from vllm_guard.core.state import AttemptRecord

    ts = TargetState()
    ts.remember_attempt(
        AttemptRecord(invocation_id="aaaa1111", ended=1.0, result="success", action="stopped_by_person")
    )
    ts.remember_attempt(AttemptRecord(invocation_id="bbbb2222", ended=2.0, result="exit-code", kind="port_in_use"))
    text = format_history(target_history(State(targets={"vllm-qwen": ts}), "vllm-qwen"))
    assert "attempt aaaa1111: stopped by a person (result success)" in text
    assert "none (unknown)" not in text
    assert "attempt bbbb2222: port_in_use" in text


def test_a_target_waiting_for_its_model_says_so_and_why() -> None:
    data = target_status(CONFIG, _state(waiting="/models/tiny does not exist"), systemd={})
    assert data["targets"][0]["state"] == "waiting for its files (/models/tiny does not exist)"
    assert "vllm-qwen.service: waiting for its files (/models/tiny does not exist)" in format_status(data)
