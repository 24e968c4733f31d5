"""System tier: a real systemd per test (systemd-nspawn), the guard as a real unit, the vLLM emulator."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.system.harness import REPO, requires_sandbox
from vllm_guard.app.sandbox import GuardBox, guard_box

JOURNAL_LINES = 400  # the tail of the container's journal attached to a failed test's report


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sandbox(memory_limit_mib=None): options of the test's container (a memory cgroup for OOM kills)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        gb = getattr(item, "funcargs", {}).get("gbox")
        if isinstance(gb, GuardBox):
            try:
                text = gb.box.journal_text(JOURNAL_LINES)
            except Exception as err:  # the container may be gone: say so instead of hiding the failure
                text = f"(could not read the container's journal: {err!r})"
            report.sections.append((f"container journal ({gb.box.name}, last {JOURNAL_LINES} lines)", text))


@pytest.fixture(scope="session")
def built_deb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The .deb, built once per test session (the package tests and the first-day walk share it)."""
    from tests.system.packages import build, build_deps_missing

    reason = build_deps_missing()
    if reason:
        pytest.skip(reason)
    return build("deb", tmp_path_factory.mktemp("deb"))


@pytest.fixture
def gbox(request: pytest.FixtureRequest) -> Iterator[GuardBox]:
    reason = requires_sandbox()
    if reason:
        pytest.skip(reason)
    marker = request.node.get_closest_marker("sandbox")
    limit_mib = marker.kwargs.get("memory_limit_mib") if marker else None
    digest = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:6]
    name = f"vg-{request.node.name[5:17].replace('_', '-').strip('-')}-{digest}-{os.getpid() % 10000}"
    with guard_box(name, repo=REPO, memory_limit_bytes=None if limit_mib is None else int(limit_mib) << 20) as gb:
        yield gb
