"""systemd could not execute the unit's command (203/EXEC): a wrong path, never a memory failure."""

from __future__ import annotations

import pytest

from vllm_guard.core.classify import classify
from vllm_guard.core.failure import SystemdOutcome
from vllm_guard.core.kinds import FailureKind

pytestmark = pytest.mark.unit

# Captured from systemd 252 (Debian 12) in the system tests' container, with an ExecStartPost= naming a
# program that does not exist; the wording is systemd's (src/core/execute.c).
EXEC_FAILED = [
    "vllm-post.service: Failed to locate executable /usr/bin/vllm-guard: No such file or directory",
    "vllm-post.service: Failed at step EXEC spawning /usr/bin/vllm-guard: No such file or directory",
    "vllm-post.service: Control process exited, code=exited, status=203/EXEC",
    "vllm-post.service: Failed with result 'exit-code'.",
]


def test_exec_failure_is_bad_arguments() -> None:
    f = classify(EXEC_FAILED, SystemdOutcome(result="exit-code", exit_status=203))
    assert f.kind is FailureKind.BAD_ARGUMENTS
    assert any("203/EXEC" in e or "EXEC spawning" in e for e in f.evidence)


def test_exit_status_203_alone_is_not_memory() -> None:
    f = classify(EXEC_FAILED[2:], SystemdOutcome(result="exit-code", exit_status=203))
    assert f.kind is FailureKind.BAD_ARGUMENTS
