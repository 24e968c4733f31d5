"""The exact text of a real torch.OutOfMemoryError, captured on an NVIDIA H200 (tests/data/gpu/).

torch 2.11 words the allocator's error as 2.2-2.9 did, with a new documentation link, and names other
processes ("Process 435 has 518.00 MiB memory in use") under expandable segments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_guard.core.classify import classify
from vllm_guard.core.kinds import Confidence, FailureKind, Phase

pytestmark = pytest.mark.unit

CAPTURE = json.loads((Path(__file__).resolve().parents[1] / "data" / "gpu" / "h200-torch-2.11.json").read_text())
SHAPES = [(mode, shape, body["message"]) for mode, shapes in CAPTURE["oom"].items() for shape, body in shapes.items()]


@pytest.mark.parametrize(("mode", "shape", "message"), SHAPES, ids=[f"{m}-{s}" for m, s, _ in SHAPES])
def test_a_bare_real_oom_is_a_device_oom_of_unknown_phase_with_low_confidence(
    mode: str, shape: str, message: str
) -> None:
    failure = classify([f"torch.OutOfMemoryError: {message}"])
    assert failure.kind is FailureKind.CUDA_OOM_RUNTIME  # the likeliest for a bare OOM, as a guess
    assert failure.phase is Phase.UNKNOWN
    assert failure.confidence is Confidence.LOW
    assert failure.numbers["gpu_total_gib"] == pytest.approx(139.80, abs=0.01)
    assert failure.numbers["alloc_bytes"] > 0


def test_the_real_oom_placed_by_a_frame_is_sure_of_its_phase() -> None:
    message = CAPTURE["oom"]["default"]["after_most_taken"]["message"]
    lines = [
        "Traceback (most recent call last):",
        '  File "/opt/vllm/vllm/v1/worker/gpu_model_runner.py", line 3322, in load_model',
        "    self.model = model_loader.load_model(",
        f"torch.OutOfMemoryError: {message}",
    ]
    failure = classify(lines)
    assert (failure.kind, failure.phase, failure.confidence) == (FailureKind.CUDA_OOM_LOAD, Phase.LOAD, Confidence.HIGH)
    assert failure.numbers["gpu_free_gib"] == pytest.approx(13.93, abs=0.01)
