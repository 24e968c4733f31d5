"""`vllm-guard plan` on the command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import DATA, CliResult, write_config
from vllm_guard.adapters import nvml

pytestmark = pytest.mark.unit

Q7 = DATA / "models/Qwen2.5-7B-Instruct"


def test_plan_json_for_a_planned_gpu(cli: Callable[..., CliResult]) -> None:
    r = cli("plan", "--model", Q7, "--gpu", "24GiB", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["schema"] == 1 and out["fits"] is True
    assert out["kv_bytes_per_token"] == 57344
    assert out["gpus"]["fake"] is True and out["gpus"]["devices"][0]["total_bytes"] == 24 << 30
    assert out["flags"]["max_model_len"] == 32768
    assert all(row["source"] for row in out["budget"])


def test_plan_text_shows_the_budget(cli: Callable[..., CliResult]) -> None:
    r = cli("plan", "--model", DATA / "models/Qwen2.5-72B-Instruct", "--gpu", "80GiB,80GiB", "--tp", "2")
    assert r.code == 0, r.err
    assert "= KV cache" in r.out and "first fit (fits)" in r.out and "--tensor-parallel-size=2" in r.out


def test_plan_that_does_not_fit_exits_1(cli: Callable[..., CliResult]) -> None:
    r = cli("plan", "--model", DATA / "models/Qwen2.5-72B-Instruct", "--gpu", "24GiB")
    assert r.code == 1
    assert "DOES NOT FIT" in r.out and "quantized" in r.out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--gpu", "lots"], "not a size"),
        (["--gpu", "24GiB", "--tp", "0"], "--tp"),
        (["--gpu", "24GiB", "--util", "1.5"], "--util"),
        (["--gpu", "24GiB,24GiB", "--tp", "4"], "needs 4 GPUs"),
    ],
)
def test_plan_usage_errors(cli: Callable[..., CliResult], argv: list[str], needle: str) -> None:
    r = cli("plan", "--model", Q7, *argv)
    assert r.code == 64 and needle in r.err


def test_plan_without_a_gpu_says_so(cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvml, "read_gpus", lambda: nvml.GpuReport(error=f"{nvml.NO_GPU}: test"))
    r = cli("plan", "--model", Q7)
    assert r.code == 69  # EX_UNAVAILABLE: nothing to plan for, not a misuse of the command
    assert "no NVIDIA GPU visible" in r.err and "--gpu" in r.err


def test_plan_without_a_gpu_points_a_cpu_target_to_doctor(
    cli: Callable[..., CliResult], fake_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nvml, "read_gpus", lambda: nvml.GpuReport(error=f"{nvml.NO_GPU}: test"))
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\ndevice = "cpu"\n')
    r = cli("plan", "--root", fake_root)
    assert r.code == 69
    assert "CPU backend" in r.err and "vllm-guard doctor" in r.err and "Traceback" not in r.err


def test_plan_reads_the_target_from_the_config(cli: Callable[..., CliResult], fake_root: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\n[target.flags]\nkv_cache_dtype = "fp8"\n')
    r = cli("plan", "--root", fake_root, "--gpu", "8GiB", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    # tiny-qwen2: 2 layers x 2 KV heads x head_dim 64, FP8 -> 2 x 2 x 2 x 64 x 1 bytes
    assert out["kv_bytes_per_token"] == 512 and out["flags"]["kv_cache_dtype"] == "fp8"


def test_plan_on_a_broken_model_folder(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    r = cli("plan", "--model", tmp_path, "--gpu", "24GiB")
    assert r.code == 65 and "model-config-incomplete" in r.err


def test_plan_calibrated_from_a_real_start(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    # Qwen2.5-7B on a 24 GB card, vLLM V0 (public log quoted in bench/RESULTS-planner.md, case 3):
    # 6749 blocks at util 0.90. Calibrated, the planner reproduces vLLM's own capacity.
    log = tmp_path / "start.log"
    log.write_text(
        "the current vLLM instance can use total_gpu_memory (23.57GiB) x 0.90 = 21.21GiB\n"
        "INFO executor_base.py:111] # GPU blocks: 6749, # CPU blocks: 4681\n"
    )
    r = cli(
        "plan",
        "--model",
        Q7,
        "--gpu",
        "23.57GiB",
        "--util",
        "0.9",
        "--max-model-len",
        "8192",
        "--engine",
        "v0",
        "--calibrate-from",
        log,
        "--json",
    )
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["calibrated_from"] == str(log)
    assert out["kv_tokens"] == pytest.approx(6749 * 16, abs=16)


def test_plan_calibration_needs_memory_lines(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = tmp_path / "start.log"
    log.write_text("INFO nothing about memory here\n")
    r = cli("plan", "--model", Q7, "--gpu", "24GiB", "--calibrate-from", log)
    assert r.code == 65 and "log-no-memory-lines" in r.err


def test_a_gpu_sold_as_gb_is_planned_in_gib_and_says_so(cli: Callable[..., CliResult]) -> None:
    r = cli("plan", "--model", Q7, "--gpu", "24GB", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["gpus"]["devices"][0]["total_bytes"] == 24 << 30  # not 24 x 10**9 (22.35 GiB)
    assert "--gpu 24GB read as 24GiB: GPU memory is sold in binary units" in out["notes"]
    assert json.loads(cli("plan", "--model", Q7, "--gpu", "24GiB", "--json").out)["notes"] == []


def test_an_explicit_util_above_the_planners_own_cap_is_planned_as_asked(cli: Callable[..., CliResult]) -> None:
    out = json.loads(cli("plan", "--model", Q7, "--gpu", "24GiB", "--util", "0.97", "--json").out)
    assert out["flags"]["gpu_memory_utilization"] == 0.97
    assert any("util 0.97 as asked, above 0.95" in n for n in out["notes"]), out["notes"]
    util_rows = [row for row in out["budget"] if "0.97" in str(row["value"])]
    assert util_rows, out["budget"]


def test_plan_refuses_what_vllm_refuses(cli: Callable[..., CliResult], capsys: pytest.CaptureFixture[str]) -> None:
    r = cli("plan", "--model", Q7, "--gpu", "24GiB,24GiB,24GiB", "--tp", "3")
    assert r.code == 64, (r.code, r.out, r.err)
    assert "--tp 3 does not divide the model's 28 attention heads" in r.err and "use one of 1, 2, 4, 7" in r.err
    from vllm_guard.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["plan", "--model", str(Q7), "--gpu", "24GiB", "--kv-cache-dtype", "fp9"])
    assert exc.value.code == 64
    assert "invalid choice: 'fp9'" in capsys.readouterr().err
