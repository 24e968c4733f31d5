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


def _corpus_log(tmp_path: Path, relative: str) -> Path:
    """A corpus log without its header (source and notes), as a person would pass it."""
    from tests.corpus import lines_of

    path = tmp_path / Path(relative).name
    path.write_text("\n".join(lines_of(DATA / "logs" / relative)) + "\n", encoding="utf-8")
    return path


def test_plan_calibrated_from_a_failed_start_keeps_the_negative_reserve(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # Qwen2.5-7B on an 8 GB RTX 4060 at util 0.70, vLLM V0: "the rest of the memory reserved for KV Cache is
    # -1.05GiB", "# cuda blocks: 0" (https://github.com/vllm-project/vllm/issues/13882)
    log = _corpus_log(tmp_path, "kv_cache_insufficient/vllm-13882-rtx4060-negative-kv-cuda-blocks-0.log")
    r = cli("plan", "--model", Q7, "--gpu", "8GiB", "--max-model-len", "4096", "--calibrate-from", log, "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["calibrated_from"] == str(log)
    assert any("-1.05 GiB from 'KV cache GiB figure' (line 4)" in n for n in out["notes"]), out["notes"]
    # 1.05 GiB short at 0.70 of 8 GiB, and 4096 tokens of 56 KiB more: util 0.70 + 1.27 / 8
    assert out["util_for_max_model_len"] == pytest.approx(0.86, abs=0.011)
    assert out["flags"]["max_model_len"] == 4096 and out["flags"]["gpu_memory_utilization"] == 0.9


def test_plan_calibrated_from_a_v1_failed_start_uses_vllms_own_estimate(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # vLLM 0.32 on the CPU backend: "the estimated maximum model length is 32640" (a capture on this project's
    # host, tests/data/logs; its model has 16 layers x 8 KV heads x 64: 32 KiB per token)
    log = _corpus_log(tmp_path, "kv_cache_insufficient/vllm-cpu-max-model-len.log")
    long_tiny = tmp_path / "tiny-qwen2-long"
    long_tiny.mkdir()
    cfg = json.loads((DATA / "models/tiny-qwen2/config.json").read_text())
    cfg.update(num_hidden_layers=16, num_key_value_heads=8, num_attention_heads=8, head_dim=64)
    cfg.update(max_position_embeddings=131072)
    (long_tiny / "config.json").write_text(json.dumps(cfg))
    r = cli("plan", "--model", long_tiny, "--gpu", "8GiB", "--util", "0.5", "--calibrate-from", log, "--json")
    assert r.code in (0, 1), r.err
    out = json.loads(r.out)
    notes = out["notes"]
    assert any("32,640 tokens from 'the estimated maximum model length is N'" in n for n in notes), notes
    assert any("vLLM's CPU backend" in n for n in notes) and not any("is the log from this model" in n for n in notes)
    assert any("gpu_memory_utilization the start ran with: 0.50 assumed" in n for n in notes)
    assert out["max_model_len_at_util"] == pytest.approx(32640, abs=16)  # vLLM's own estimate, to a block
    # the same log against the 2-layer tiny model: vLLM's 32 KiB per token is not its 1 KiB
    other = json.loads(
        cli("plan", "--model", DATA / "models/tiny-qwen2", "--gpu", "8GiB", "--calibrate-from", log, "--json").out
    )
    assert any("is the log from this model, with these flags?" in n for n in other["notes"])


def test_plan_calibration_error_says_what_it_looked_for(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = _corpus_log(tmp_path, "kv_cache_insufficient/vllm-10439-qwen05b-docker-no-available-memory.log")
    r = cli("plan", "--model", Q7, "--gpu", "24GiB", "--calibrate-from", log)
    assert r.code == 65 and "log-no-memory-lines" in r.err and "Traceback" not in r.err
    assert "'GPU KV cache size: N tokens'" in r.err and "'the estimated maximum model length is N'" in r.err
    assert "No available memory for the cache blocks' without a figure" in r.err


def test_plan_calibration_flags_a_log_of_another_model(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    # Qwen3-0.6B's start (112 KiB of KV per token: 18.67 GiB for 174,800 tokens) is no log of Qwen2.5-7B (56 KiB)
    log = _corpus_log(tmp_path, "none/vllm-21443-v1-startup-single-gpu.log")
    out = json.loads(cli("plan", "--model", Q7, "--gpu", "24GiB", "--calibrate-from", log, "--json").out)
    assert any("is the log from this model, with these flags?" in n for n in out["notes"]), out["notes"]


def test_plan_prints_the_edge_and_the_band(cli: Callable[..., CliResult]) -> None:
    # Qwen2.5-72B on 2 x 80 GiB at util 0.95: the KV cache holds more than the model's 32768 tokens, but not
    # 10% more, so the recommendation stays under the edge less the band
    argv = ("plan", "--model", DATA / "models/Qwen2.5-72B-Instruct", "--gpu", "80GiB,80GiB", "--tp", "2")
    out = json.loads(cli(*argv, "--json").out)
    edge = out["edge"]
    assert edge["max_model_len"] == out["max_model_len_at_util"] == 32768 and edge["limited_by"] == "context"
    assert edge["band"] == 0.10 and "bench/RESULTS-planner.md" in edge["band_source"]
    assert out["flags"]["max_model_len"] <= edge["safe_max_model_len"] < edge["max_model_len"]
    assert out["kv_tokens"] >= out["flags"]["max_model_len"] * 1.10
    # the budget at the requested length as well as at the one it re-planned to
    asked = out["requested"]
    assert asked["max_model_len"] == 32768 and asked["replanned"] is True and asked["fits_with_band"] is False
    assert asked["kv_tokens_needed_with_band"] == 36045 > asked["kv_tokens"]
    assert asked["budget"][0]["item"].startswith("GPU memory") and out["budget"]
    text = cli(*argv).out
    assert "edge at util 0.95: max_model_len 32768 (the model's context; the KV cache holds" in text
    assert f"the longest the planner can promise is {edge['safe_max_model_len']}" in text
    assert "at the requested max_model_len 32768: the KV cache holds" in text


def test_a_calibrated_plan_uses_the_calibrated_band(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = _corpus_log(tmp_path, "kv_cache_insufficient/vllm-13882-rtx4060-negative-kv-cuda-blocks-0.log")
    out = json.loads(cli("plan", "--model", Q7, "--gpu", "8GiB", "--calibrate-from", log, "--json").out)
    assert out["edge"]["band"] == 0.06 and "calibrated" in out["edge"]["band_source"]
    assert out["flags"]["max_model_len"] <= out["edge"]["safe_max_model_len"]
    assert out["kv_tokens"] >= out["flags"]["max_model_len"] * 1.06
