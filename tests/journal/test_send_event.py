"""send_event: the guard's events as journal fields, through an injected sender."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.journal
pytest.importorskip("systemd.journal", reason="python-systemd (systemd-python) is not installed")

from vllm_guard.adapters.journal import send_event  # noqa: E402
from vllm_guard.core.events import Event, EventKind  # noqa: E402


def test_event_fields_reach_the_sender() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    def sender(message: str, **fields: Any) -> None:
        sent.append((message, fields))

    event = Event(EventKind.FAILURE_DETECTED, "vllm-qwen.service: KV cache too small",
                  {"UNIT": "vllm-qwen.service", "KIND": "kv_cache_insufficient"})  # fmt: skip
    assert send_event(event, sender=sender) is True
    ((message, fields),) = sent
    assert message == "vllm-qwen.service: KV cache too small"
    assert fields["MESSAGE_ID"] == EventKind.FAILURE_DETECTED.message_id
    assert fields["SYSLOG_IDENTIFIER"] == "vllm-guard"
    assert fields["PRIORITY"] == "4"
    assert fields["VLLM_GUARD_UNIT"] == "vllm-qwen.service"
    assert fields["VLLM_GUARD_KIND"] == "kv_cache_insufficient"


def test_a_journald_that_refuses_does_not_raise() -> None:
    def sender(message: str, **fields: Any) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    assert send_event(Event(EventKind.GUARD_STARTED, "started"), sender=sender) is False


def test_the_default_sender_is_python_systemds_send(monkeypatch: pytest.MonkeyPatch) -> None:
    from systemd import journal

    calls: list[str] = []
    monkeypatch.setattr(journal, "send", lambda message, **fields: calls.append(message))
    assert send_event(Event(EventKind.GUARD_STARTED, "started")) is True
    assert calls == ["started"]
