"""The probe sequence against canned vLLM answers (httpx.MockTransport): every outcome, and the wait."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx
import pytest

from vllm_guard.app.probe import probe_once, wait_until_answers
from vllm_guard.core.config import Target
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.probe import ProbeStep, TransportError

pytestmark = pytest.mark.unit

TARGET = Target(model="/models/qwen", served_model_name="qwen", host="0.0.0.0", port=8000)
DEAD_BODY = json.dumps(
    {
        "error": {
            "message": "EngineCore encountered an issue. See stack trace (above) for the root cause.",
            "type": "EngineDeadError",
            "code": 500,
        }
    }
)


def models_body(ident: str = "qwen", root: str = "/models/qwen") -> dict[str, object]:
    return {"object": "list", "data": [{"id": ident, "object": "model", "root": root, "owned_by": "vllm"}]}


def chat_body(*contents: str) -> dict[str, object]:
    return {
        "object": "chat.completion",
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": c}, "finish_reason": "stop"}
            for i, c in enumerate(contents)
        ],
    }


Answer = httpx.Response | type[Exception] | Exception


@dataclass
class FakeVllm:
    """A canned vLLM: per path, a list of answers (the last one repeats), or an exception to raise."""

    health: list[Answer] = field(default_factory=lambda: [httpx.Response(200)])
    models: list[Answer] = field(default_factory=lambda: [httpx.Response(200, json=models_body())])
    chat: list[Answer] = field(default_factory=lambda: [httpx.Response(200, json=chat_body("ok"))])
    key: str | None = None
    seen: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        wrong_key = request.headers.get("authorization") != f"Bearer {self.key}"
        if self.key is not None and request.url.path.startswith("/v1") and wrong_key:
            return httpx.Response(401, json={"error": "Unauthorized"})
        answers = {"/health": self.health, "/v1/models": self.models, "/v1/chat/completions": self.chat}.get(
            request.url.path
        )
        if answers is None:
            return httpx.Response(404, json={"detail": "Not Found"})
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, type) and issubclass(answer, Exception):
            raise answer("canned failure", request=request)  # type: ignore[call-arg]
        if isinstance(answer, Exception):
            raise answer
        return answer

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def paths(self) -> list[str]:
        return [r.url.path for r in self.seen]


@pytest.mark.parametrize(
    ("fake", "step", "kind", "status", "transport_error", "detail"),
    [
        (FakeVllm(), ProbeStep.DONE, None, 200, None, "qwen answered from /models/qwen"),
        (FakeVllm(models=[httpx.ConnectError]), ProbeStep.MODELS, None, None, TransportError.REFUSED, "cannot connect"),
        (
            FakeVllm(models=[httpx.ReadTimeout]),
            ProbeStep.MODELS,
            FailureKind.ENGINE_DEAD,
            None,
            TransportError.TIMEOUT,
            "no answer in time",
        ),
        (
            FakeVllm(chat=[httpx.ReadTimeout]),
            ProbeStep.CHAT,
            FailureKind.ENGINE_DEAD,
            None,
            TransportError.TIMEOUT,
            "ReadTimeout",
        ),
        (
            FakeVllm(chat=[httpx.RemoteProtocolError]),
            ProbeStep.CHAT,
            FailureKind.ENGINE_DEAD,
            None,
            TransportError.DROPPED,
            "closed the connection",
        ),
        (
            FakeVllm(chat=[httpx.Response(500, text="Internal Server Error")]),
            ProbeStep.CHAT,
            FailureKind.ENGINE_DEAD,
            500,
            None,
            "HTTP 500",
        ),
        (
            FakeVllm(chat=[httpx.Response(500, text=DEAD_BODY)]),
            ProbeStep.CHAT,
            FailureKind.ENGINE_DEAD,
            500,
            None,
            "EngineDeadError",
        ),
        (
            FakeVllm(models=[httpx.Response(500, text="boom")]),
            ProbeStep.MODELS,
            FailureKind.ENGINE_DEAD,
            500,
            None,
            "HTTP 500: boom",
        ),
        (
            FakeVllm(models=[httpx.Response(200, json=models_body(root="/models/old"))]),
            ProbeStep.MODELS,
            None,
            200,
            None,
            "'/models/old', not the configured '/models/qwen'",
        ),
        (
            FakeVllm(models=[httpx.Response(200, json=models_body(ident="Qwen2.5-7B"))]),
            ProbeStep.MODELS,
            None,
            200,
            None,
            "'qwen' is not listed (listed: 'Qwen2.5-7B')",
        ),
        (
            FakeVllm(chat=[httpx.Response(200, json=chat_body(""))]),
            ProbeStep.CHAT,
            None,
            200,
            None,
            "the answer is empty",
        ),
        (
            FakeVllm(chat=[httpx.Response(200, json=chat_body())]),
            ProbeStep.CHAT,
            None,
            200,
            None,
            "exactly one choice, got 0",
        ),
        (
            FakeVllm(chat=[httpx.Response(200, json=chat_body("a", "b"))]),
            ProbeStep.CHAT,
            None,
            200,
            None,
            "exactly one choice, got 2",
        ),
        (FakeVllm(key="right"), ProbeStep.MODELS, None, 401, None, "refused the API key"),
    ],
    ids=[
        "ok",
        "refused",
        "models-timeout",
        "chat-timeout",
        "chat-dropped",
        "chat-500",
        "engine-dead",
        "models-500",
        "wrong-root",
        "name-missing",
        "empty-answer",
        "zero-choices",
        "two-choices",
        "bad-api-key",
    ],
)
def test_probe_once_outcomes(
    fake: FakeVllm,
    step: ProbeStep,
    kind: FailureKind | None,
    status: int | None,
    transport_error: TransportError | None,
    detail: str,
) -> None:
    result = probe_once(TARGET, "wrong" if fake.key else None, transport=fake.transport)
    assert result.ok is (step is ProbeStep.DONE)
    assert result.step is step
    assert result.kind is kind
    assert result.status_code == status
    assert result.transport_error is transport_error
    assert detail in result.detail
    # /v1/models is asked first; the chat only when the models answer passed
    assert fake.paths()[0] == "/v1/models"
    assert ("/v1/chat/completions" in fake.paths()) is (step in (ProbeStep.CHAT, ProbeStep.DONE))


def test_a_passing_probe_sends_the_configured_request() -> None:
    fake = FakeVllm(key="s3cret")
    target = TARGET.model_copy(update={"probe": TARGET.probe.model_copy(update={"prompt": "Say hi", "max_tokens": 3})})
    result = probe_once(target, "s3cret", transport=fake.transport)
    assert result.ok, result.detail
    assert result.answer == "ok"
    assert result.model_root == "/models/qwen"
    chat = fake.seen[-1]
    # 0.0.0.0 is reached through the loopback address
    assert str(chat.url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert chat.headers["authorization"] == "Bearer s3cret"
    body = json.loads(chat.content)
    assert body == {
        "model": "qwen",
        "messages": [{"role": "user", "content": "Say hi"}],
        "max_tokens": 3,
        "temperature": 0,
        "n": 1,
        "stream": False,
    }


def test_no_authorization_header_without_a_key() -> None:
    fake = FakeVllm()
    assert probe_once(TARGET, None, transport=fake.transport).ok
    assert all("authorization" not in r.headers for r in fake.seen)


def test_model_path_overrides_the_configured_model() -> None:
    """After a switch to a fallback model, the fallback's folder is the one that must be served."""
    fake = FakeVllm(models=[httpx.Response(200, json=models_body(root="/models/qwen-awq"))])
    assert probe_once(TARGET, None, transport=fake.transport, model_path="/models/qwen-awq").ok
    wrong = probe_once(TARGET, None, transport=fake.transport)
    assert not wrong.ok and wrong.model_root == "/models/qwen-awq"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s


def test_wait_tolerates_refused_and_503_while_loading() -> None:
    clock = FakeClock()
    fake = FakeVllm(
        health=[httpx.ConnectError, httpx.ConnectError, httpx.Response(503), httpx.Response(200)],
    )
    result = wait_until_answers(TARGET, None, timeout_s=60, clock=clock, sleep=clock.sleep, transport=fake.transport)
    assert result.ok, result.detail
    assert fake.paths() == ["/health"] * 4 + ["/v1/models", "/v1/chat/completions"]
    assert clock.sleeps == [1.0, 1.0, 1.0]
    assert result.elapsed_s == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("health", "kind", "transport_error", "detail"),
    [
        ([httpx.ConnectError], None, TransportError.REFUSED, "no healthy answer within 10 s (last: cannot connect"),
        (
            [httpx.Response(503)],
            FailureKind.ENGINE_DEAD,
            None,
            "(last: HTTP 503: the server says its engine is not healthy)",
        ),
        ([httpx.ReadTimeout], None, TransportError.TIMEOUT, "(last: no answer in time"),
    ],
)
def test_wait_gives_up_at_the_timeout(
    health: list[Answer], kind: FailureKind | None, transport_error: TransportError | None, detail: str
) -> None:
    clock = FakeClock()
    fake = FakeVllm(health=health)
    result = wait_until_answers(TARGET, None, timeout_s=10, clock=clock, sleep=clock.sleep, transport=fake.transport)
    assert not result.ok
    assert result.step is ProbeStep.HEALTH
    assert result.kind is kind
    assert result.transport_error is transport_error
    assert detail in result.detail
    assert 10 <= result.elapsed_s <= 11
    assert "/v1/models" not in fake.paths()


def test_wait_stops_at_once_when_the_process_is_gone() -> None:
    clock = FakeClock()
    fake = FakeVllm(health=[httpx.ConnectError])
    alive = iter([True, True, False])
    result = wait_until_answers(
        TARGET,
        None,
        timeout_s=600,
        clock=clock,
        sleep=clock.sleep,
        transport=fake.transport,
        stop=lambda: not next(alive),
    )
    assert not result.ok
    assert "the server process is gone" in result.detail
    assert result.elapsed_s == pytest.approx(2.0)
    assert len(fake.seen) == 2


def test_wait_then_reports_the_failing_step() -> None:
    clock = FakeClock()
    fake = FakeVllm(chat=[httpx.Response(500, text=DEAD_BODY)])
    result = wait_until_answers(TARGET, None, timeout_s=60, clock=clock, sleep=clock.sleep, transport=fake.transport)
    assert not result.ok
    assert result.step is ProbeStep.CHAT
    assert result.kind is FailureKind.ENGINE_DEAD
    assert result.model_root == "/models/qwen"


def test_the_probe_request_timeout_is_bounded_by_the_time_left() -> None:
    seen: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"]["read"])
        if request.url.path == "/health":
            return httpx.Response(200)
        if request.url.path == "/v1/models":
            return httpx.Response(200, json=models_body())
        return httpx.Response(200, json=chat_body("ok"))

    clock = FakeClock()
    result = wait_until_answers(
        TARGET, None, timeout_s=20, clock=clock, sleep=clock.sleep, transport=httpx.MockTransport(handler)
    )
    assert result.ok
    # /health: 5 s; the probe: min(probe.timeout_s 60, 20 s left)
    assert seen == [5.0, 20.0, 20.0]
