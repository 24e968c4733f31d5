"""`vllm-guard probe`: config, env file, API key, exit codes and the --json shape."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CliResult, write_config
from tests.unit.test_probe_http import DEAD_BODY, FakeVllm, chat_body, models_body
from vllm_guard.adapters import http as http_adapter
from vllm_guard.app import probe as app_probe
from vllm_guard.core.systemd_escape import env_file_value

pytestmark = pytest.mark.unit

CONFIG = """
[[target]]
unit = "vllm-qwen"
model = "/models/tiny"
served_model_name = "tiny"
host = "0.0.0.0"
port = 8011
startup_timeout_s = 30
"""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeVllm:
    """Every client the probe makes talks to this canned server."""
    server = FakeVllm(models=[httpx.Response(200, json=models_body("tiny", "/models/tiny"))])

    def make_client(base_url: str, **kw: Any) -> httpx.Client:
        kw["transport"] = server.transport
        return http_adapter.make_client(base_url, **kw)

    monkeypatch.setattr(app_probe, "make_client", make_client)
    monkeypatch.setattr(app_probe, "HEALTH_INTERVAL_S", 0.01)
    monkeypatch.delenv("MAINPID", raising=False)
    return server


def test_probe_ok_text(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, CONFIG)
    r = cli("probe", "--root", fake_root, "vllm-qwen")
    assert r.code == 0, r.err
    assert r.out.startswith("vllm-qwen: ok: the model answered 'ok'")
    assert r.err == ""
    assert str(fake.seen[0].url) == "http://127.0.0.1:8011/v1/models"


def test_probe_json_has_schema_and_the_result(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, CONFIG)
    r = cli("probe", "--root", fake_root, "--json", "vllm-qwen.service")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["schema"] == 1
    assert out["unit"] == "vllm-qwen"
    assert out["ok"] is True
    assert out["step"] == "done"
    assert out["answer"] == "ok"
    assert out["model_root"] == out["model_path"] == "/models/tiny"
    assert out["kind"] is None


def test_the_model_path_comes_from_the_guards_env_file(
    fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]
) -> None:
    write_config(fake_root, CONFIG)
    env = fake_root / "var/lib/vllm-guard/vllm-qwen.env"
    env.parent.mkdir(parents=True)
    env.write_text(f'VLLM_GUARD_MODEL={env_file_value("/models/tiny-awq")}\nVLLM_GUARD_ARGS="--enforce-eager"\n')
    r = cli("probe", "--root", fake_root, "--json", "vllm-qwen")
    assert r.code == 1
    out = json.loads(r.out)
    assert out["model_path"] == "/models/tiny-awq"
    assert out["step"] == "models"
    assert "not the configured '/models/tiny-awq'" in out["detail"]
    assert r.err.count("\n") == 1 and "failed at models" in r.err


def test_engine_dead_exits_1_with_one_line(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, CONFIG)
    fake.chat = [httpx.Response(500, text=DEAD_BODY)]
    r = cli("probe", "--root", fake_root, "vllm-qwen")
    assert r.code == 1
    assert r.out == ""
    assert r.err.startswith("vllm-guard: probe vllm-qwen: failed at chat (http://127.0.0.1:8011/v1/chat/completions):")
    assert "EngineDeadError" in r.err
    assert r.err.count("\n") == 1


def test_the_api_key_file_is_sent(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    (fake_root / "etc/vllm-guard/api-key").write_text("k3y\n")
    write_config(fake_root, CONFIG + 'api_key_file = "/etc/vllm-guard/api-key"\n')
    fake.key = "k3y"
    assert cli("probe", "--root", fake_root, "vllm-qwen").code == 0
    fake.key = "other"
    r = cli("probe", "--root", fake_root, "vllm-qwen")
    assert r.code == 1 and "HTTP 401" in r.err


def test_wait_until_the_health_answers(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, CONFIG)
    fake.health = [httpx.ConnectError, httpx.Response(503), httpx.Response(200)]
    r = cli("probe", "--root", fake_root, "--wait", "--json", "vllm-qwen")
    assert r.code == 0, r.err
    assert fake.paths() == ["/health"] * 3 + ["/v1/models", "/v1/chat/completions"]


def test_wait_gives_up_after_timeout(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, CONFIG)
    fake.health = [httpx.ConnectError]
    r = cli("probe", "--root", fake_root, "--wait", "--timeout", "0.2", "vllm-qwen")
    assert r.code == 1
    assert "failed at health" in r.err and "no healthy answer within 0.2 s" in r.err


def test_wait_stops_when_the_main_process_is_gone(
    fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(fake_root, CONFIG)
    fake.health = [httpx.ConnectError]
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    monkeypatch.setenv("MAINPID", str(gone.pid))
    r = cli("probe", "--root", fake_root, "--wait", "vllm-qwen")
    assert r.code == 1
    assert "the server process is gone" in r.err
    assert len(fake.seen) == 0  # it did not even ask


def test_main_pid_option_with_a_live_process(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    import os

    write_config(fake_root, CONFIG)
    r = cli("probe", "--root", fake_root, "--wait", "--main-pid", os.getpid(), "vllm-qwen")
    assert r.code == 0, r.err


def test_unknown_unit_is_a_usage_error(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, CONFIG)
    r = cli("probe", "--root", fake_root, "vllm-other")
    assert r.code == 64
    assert "error[unknown-unit]" in r.err and "vllm-qwen" in r.err


def test_missing_config_exits_78(fake: FakeVllm, tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    r = cli("probe", "--root", tmp_path, "vllm-qwen")
    assert r.code == 78


def test_chat_answer_shapes_reach_the_json(fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, CONFIG)
    fake.chat = [httpx.Response(200, json=chat_body("a", "b"))]
    out = json.loads(cli("probe", "--root", fake_root, "--json", "vllm-qwen").out)
    assert out["ok"] is False and out["step"] == "chat" and out["status_code"] == 200


@pytest.mark.parametrize(("argv", "expected"), [((), 20.0), (("--timeout", "7"), 7.0)])
def test_wait_ends_before_systemds_start_timeout(
    argv: tuple[str, ...],
    expected: float,
    fake: FakeVllm,
    fake_root: Path,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """startup_timeout_s is also the unit's TimeoutStartSec=: the probe reports 10 s before systemd kills it."""
    write_config(fake_root, CONFIG)  # startup_timeout_s = 30
    seen: list[float] = []
    real = app_probe.wait_until_answers

    def spy(*a: Any, **kw: Any) -> Any:
        seen.append(kw["timeout_s"])
        return real(*a, **kw)

    monkeypatch.setattr(app_probe, "wait_until_answers", spy)
    assert cli("probe", "--root", fake_root, "--wait", *argv, "vllm-qwen").code == 0
    assert seen == [expected]


def test_under_systemd_the_units_environment_gives_model_and_key(
    fake: FakeVllm, fake_root: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ExecStartPost= runs as the unit's user with the unit's environment; the 0600 files need not be read."""
    import os

    write_config(fake_root, CONFIG + 'api_key_file = "/etc/vllm-guard/missing-key"\n')
    env = fake_root / "var/lib/vllm-guard/vllm-qwen.env"
    env.parent.mkdir(parents=True)
    env.write_text('VLLM_GUARD_MODEL="/models/stale"\n')
    fake.key = "from-env"
    monkeypatch.setenv("MAINPID", str(os.getpid()))
    monkeypatch.setenv("VLLM_GUARD_MODEL", "/models/tiny")
    monkeypatch.setenv("VLLM_API_KEY", "from-env")
    r = cli("probe", "--root", fake_root, "--wait", "--json", "vllm-qwen")
    assert r.code == 0, r.err
    assert json.loads(r.out)["model_path"] == "/models/tiny"
    # outside systemd (no MAINPID) the files are read: the key file is missing
    monkeypatch.delenv("MAINPID")
    r = cli("probe", "--root", fake_root, "vllm-qwen")
    assert r.code == 66 and "error[api-key-unreadable]" in r.err
