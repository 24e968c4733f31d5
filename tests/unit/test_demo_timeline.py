"""The demo's timeline reports the flags each start ran with, whatever the env file says when it reads the line."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from vllm_guard.app.demo import Timeline
from vllm_guard.app.sandbox import GuardBox

pytestmark = pytest.mark.unit

UNIT = "vllm-qwen"


@dataclass
class _Box:
    """Stands in for the container: an env file whose flags the guard rewrites."""

    args: list[str] = field(default_factory=lambda: ["--gpu-memory-utilization=0.7", "--max-model-len=32768"])

    def flags(self, unit: str) -> list[str]:
        assert unit == UNIT
        return list(self.args)


def _started() -> dict[str, Any]:
    return {"_PID": "1", "UNIT": f"{UNIT}.service", "MESSAGE": f"Started {UNIT}.service - vLLM."}


def _remedy(after: str) -> dict[str, Any]:
    return {
        "VLLM_GUARD_EVENT": "remedy_applied",
        "VLLM_GUARD_UNIT": f"{UNIT}.service",
        "VLLM_GUARD_CHANGE": "max_model_len 32768 -> 30240",
        "VLLM_GUARD_FLAGS_BEFORE": "--gpu-memory-utilization=0.7 --max-model-len=32768",
        "VLLM_GUARD_FLAGS_AFTER": after,
        "MESSAGE": "remedy",
    }


def test_a_start_read_after_the_guard_rewrote_the_flags_still_shows_the_flags_it_ran_with() -> None:
    box = _Box()
    out = io.StringIO()
    timeline = Timeline(cast(GuardBox, box), UNIT, out)
    # The guard has already failed attempt 1 and written the next flags before the timeline polls.
    box.args = ["--gpu-memory-utilization=0.7", "--max-model-len=30240"]
    after = " ".join(box.args)

    for entry in (_started(), _remedy(after), _started()):
        timeline.entry(entry)

    lines = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines[0] == (
        "attempt 1: systemd started vllm-qwen.service  flags: --gpu-memory-utilization=0.7 --max-model-len=32768"
    )
    assert "       flags after:  --gpu-memory-utilization=0.7 --max-model-len=30240" in lines
    assert lines[-1] == f"attempt 2: systemd started vllm-qwen.service  flags: {after}"
    assert timeline.attempts == 2
