"""`vllm-guard demo`, the README's main job: a crash-looping unit turned healthy, with a readable timeline."""

from __future__ import annotations

import io
import time

import pytest

from tests.system.harness import requires_sandbox
from vllm_guard.app import demo

pytestmark = pytest.mark.system


def test_demo_heals_the_crash_looping_unit_and_prints_the_timeline() -> None:
    reason = requires_sandbox()
    if reason:
        pytest.skip(reason)
    out = io.StringIO()
    t0 = time.monotonic()

    code = demo.run_demo(out=out)

    text = out.getvalue()
    assert code == 0, text
    assert time.monotonic() - t0 < 180  # the README promises under 3 minutes on 2 cores
    assert (
        "attempt 1: systemd started vllm-qwen.service  flags: --gpu-memory-utilization=0.7 --max-model-len=32768"
        in text
    )
    assert "guard: attempt failed: kv_cache_insufficient" in text
    assert "flags after:  --gpu-memory-utilization=0.7 --max-model-len=28720" in text
    assert "attempt 2: systemd started" in text
    assert "guard: probe: /health, /v1/models and a chat request answered" in text
    assert "got HTTP 200" in text
