"""Thin test helpers over ``vllm_guard.app.sandbox`` for the system (and acceptance) tiers.

Stable API (the acceptance tests import it):

- ``REPO``: the source checkout; ``EMULATOR_MODELS``: config.json-only model folders for the emulator.
- ``requires_sandbox()``: a pytest skip reason when this host cannot boot the throwaway systemd, else None.
- fixture ``gbox`` (from tests/system/conftest.py): a ``GuardBox`` booted for the test; the container's
  journal is attached to the report of a failed test. ``@pytest.mark.sandbox(memory_limit_mib=N)``
  gives the container a memory cgroup (bound writable at ``sandbox.INSIDE_MEMCG``) for real OOM kills.
  Another tier reuses both with ``from tests.system.conftest import gbox, pytest_configure,
  pytest_runtest_makereport  # noqa: F401`` in its conftest.py.
- ``GuardBox`` (vllm_guard.app.sandbox): ``emulator_target(...)`` builds a ``[[target]]`` for the
  emulator; for real vLLM build the dict yourself (``command``, ``model``, ``user = "root"``, ...).
  ``events(unit, event)``, ``unit_state``, ``starts``, ``flags``, ``env_file``, ``chat``, ``http``,
  ``box.run``/``box.journal``/``box.write`` reach inside.
- ``add_model(gb, name, source)``: copy a model folder into the test folder; returns its path inside.
- ``start(gb, targets, guard=..., start_units=True, with_guard=True)``: write the config, ``vllm-guard
  install`` it, install and start the real ``vllm-guard.service``, start the vLLM units.
- ``wait_healthy(gb, unit, n=1)``: wait for the n-th ``verified_healthy`` event of the unit.
- ``event_names(gb, unit)``, ``kinds(gb, unit)``, ``flag(gb, unit, name)``: what to assert on.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from vllm_guard.app import sandbox
from vllm_guard.app.sandbox import GuardBox

REPO = Path(__file__).resolve().parents[2]
EMULATOR_MODELS = REPO / "tests" / "emulator" / "models"
Q7 = "qwen2.5-7b-instruct"  # 14.2 GiB of bf16 weights: fits an emulated 24 GiB GPU
Q14 = "qwen2.5-14b-instruct"  # 27.5 GiB of bf16 weights: does not
Q14_AWQ = "qwen2.5-14b-instruct-awq"  # 9.1 GiB in AWQ 4-bit: the fallback that fits


def requires_sandbox() -> str | None:
    """Why the sandbox cannot run here (a skip reason), or None."""
    if os.geteuid() != 0:
        return "system tests boot systemd-nspawn containers: run as root (sudo ./scripts/test)"
    if shutil.which("systemd-nspawn") is None:
        return "systemd-nspawn is missing (apt-get install systemd-container; ./scripts/setup does it)"
    if not Path("/usr/bin/python3").exists():
        return "the containers run /usr/bin/python3, which is missing"
    return None


def add_model(gb: GuardBox, name: str, source: str = Q7) -> str:
    """Copy an emulator model folder into the test folder under ``name``; its path inside the container."""
    dest = gb.host_dir / "models" / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(EMULATOR_MODELS / source, dest)
    return gb.inside(f"models/{name}")


def start(
    gb: GuardBox,
    targets: Sequence[Mapping[str, Any]],
    *,
    guard: Mapping[str, Any] | None = None,
    start_units: bool = True,
    with_guard: bool = True,
) -> None:
    """Config, ``vllm-guard install``, the real vllm-guard.service (started), then the vLLM units."""
    if with_guard and importlib.util.find_spec("vllm_guard.app.daemon") is None:
        pytest.skip("this version has no daemon (vllm_guard.app.daemon): `vllm-guard run` is not built yet")
    gb.write_config(guard or {"vram_wait_timeout_s": 120}, targets)
    gb.install()
    if with_guard:
        gb.install_guard_unit()
        gb.start_guard()
    if start_units:
        for t in targets:
            gb.box.systemctl("start", "--no-block", f"{t['unit']}.service")


def wait_healthy(gb: GuardBox, unit: str, n: int = 1, timeout: float = 60.0) -> dict[str, Any]:
    """The n-th verified_healthy event of the unit (waits for it)."""

    def nth() -> dict[str, Any] | None:
        got = gb.events(unit, "verified_healthy")
        return got[n - 1] if len(got) >= n else None

    return gb.box.wait_until(f"verified_healthy #{n} of {unit}", nth, timeout)


def wait_for(gb: GuardBox, unit: str, event: str, n: int = 1, timeout: float = 60.0) -> dict[str, Any]:
    def nth() -> dict[str, Any] | None:
        got = gb.events(unit, event)
        return got[n - 1] if len(got) >= n else None

    return gb.box.wait_until(f"{event} #{n} of {unit}", nth, timeout)


def wait_state(gb: GuardBox, unit: str, timeout: float = 60.0, **want: str) -> dict[str, str]:
    def match() -> dict[str, str] | None:
        st = gb.unit_state(unit)
        return st if all(st.get(k) == v for k, v in want.items()) else None

    return gb.box.wait_until(f"{unit} to reach {want}", match, timeout)


def event_names(gb: GuardBox, unit: str) -> list[str]:
    return [str(e["VLLM_GUARD_EVENT"]) for e in gb.events(unit)]


def kinds(gb: GuardBox, unit: str) -> list[str]:
    """The failure kinds the guard reported for the unit, in order."""
    return [str(e.get("VLLM_GUARD_KIND", "")) for e in gb.events(unit, "failure_detected")]


def flag(gb: GuardBox, unit: str, name: str) -> str | None:
    """The value of ``--name=value`` (or True-ish "" for a bare flag) in the unit's env file, or None."""
    for word in gb.flags(unit):
        key, sep, value = word.partition("=")
        if key == f"--{name}":
            return value if sep else ""
    return None


def settle(seconds: float) -> None:
    """Let systemd and the guard act (used only to prove that nothing more happens)."""
    time.sleep(seconds)


__all__ = [
    "EMULATOR_MODELS",
    "Q7",
    "Q14",
    "Q14_AWQ",
    "REPO",
    "GuardBox",
    "add_model",
    "event_names",
    "flag",
    "kinds",
    "requires_sandbox",
    "sandbox",
    "settle",
    "start",
    "wait_for",
    "wait_healthy",
    "wait_state",
]
