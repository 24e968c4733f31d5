"""`vllm-guard plan` on the command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def test_plan_on_the_emulated_gpu(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the daemon, doctor and plan read the same emulated GPU file where no GPU exists
    gpus = tmp_path / "gpus.json"
    gpus.write_text(json.dumps({"gpus": [{"name": "emulated", "total_mib": 24576, "unlisted_mib": 2048}]}))
    monkeypatch.setenv(nvml.FAKE_ENV, str(gpus))
    out = json.loads(cli("plan", "--model", Q7, "--json").out)
    device = out["gpus"]["devices"][0]
    assert device["name"] == "emulated" and device["total_bytes"] == 24 << 30 and device["free_bytes"] == 22 << 30


def test_plan_counts_what_other_processes_hold_where_the_release_does(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # V0 0.6.4 counts total - free after its profile as its own use: a 2 GiB holder on the GPU is a budget row and
    # 2 GiB less KV cache; 0.10.1 measures from a snapshot taken while it was already held
    gpus = tmp_path / "gpus.json"
    holder = {"pid": 4242, "used_mib": 2048, "command": "python3 other.py"}
    gpus.write_text(json.dumps({"gpus": [{"name": "emulated", "total_mib": 49152, "processes": [holder]}]}))
    monkeypatch.setenv(nvml.FAKE_ENV, str(gpus))

    def plan(version: str) -> dict[str, Any]:
        r = cli("plan", "--model", Q7, "--util", "0.5", "--vllm-version", version, "--json")
        assert r.code in (0, 1), r.err
        return dict(json.loads(r.out))

    def kv(out: dict[str, Any]) -> int:
        return int(out["kv_tokens"])

    old = plan("0.6.4")
    assert any(row["item"] == "- held by other processes" for row in old["budget"])
    gpus.write_text(json.dumps({"gpus": [{"name": "emulated", "total_mib": 49152}]}))
    assert abs(kv(plan("0.6.4")) - kv(old) - (2 << 30) / old["kv_bytes_per_token"]) <= 16  # whole blocks
    new = plan("0.10.1")
    gpus.write_text(json.dumps({"gpus": [{"name": "emulated", "total_mib": 49152, "processes": [holder]}]}))
    assert kv(plan("0.10.1")) == kv(new)


def test_plan_takes_what_is_listed_to_be_the_running_units_own(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, fake_root: Path
) -> None:
    # while the config's vLLM unit runs, the process NVML lists on its GPU is that vLLM: not another's memory
    from vllm_guard.app import doctor as doctor_app

    gpus = fake_root / "gpus.json"
    holder = {"pid": 4242, "used_mib": 2048, "command": "python3 -m vllm.entrypoints.openai.api_server"}
    gpus.write_text(json.dumps({"gpus": [{"name": "emulated", "total_mib": 49152, "processes": [holder]}]}))
    monkeypatch.setenv(nvml.FAKE_ENV, str(gpus))
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\n')

    def rows(running: bool) -> tuple[list[str], list[str]]:
        monkeypatch.setattr(doctor_app, "unit_running", lambda unit: running)
        r = cli("plan", "--root", fake_root, "--model", Q7, "--vllm-version", "0.6.4", "--json")
        out = json.loads(r.out)
        return [row["item"] for row in out["budget"]], list(out["notes"])

    items, notes = rows(False)
    assert "- held by other processes" in items
    items, notes = rows(True)
    assert "- held by other processes" not in items and any("is running" in n for n in notes)


def test_plan_takes_vllm_batch_defaults_by_the_gpu_name(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # vLLM 0.9.0+ keeps the small batch defaults on an A100 ("a100" not in device_name, vllm/engine/arg_utils.py):
    # the name NVML gives is used; a size alone plans the larger batch and says what the name would change
    def plan(*argv: str) -> tuple[dict[str, Any], CliResult]:
        r = cli("plan", "--model", Q7, "--util", "0.9", "--vllm-version", "0.10.1", "--json", *argv)
        assert r.code == 0, r.err
        return json.loads(r.out), r

    def activation(out: dict[str, Any]) -> str:
        return str(next(row["item"] for row in out["budget"] if "activation peak" in row["item"]))

    by_size, _ = plan("--gpu", "79.15GiB")
    assert "(8192 tokens, 1024 seqs)" in activation(by_size)
    assert any("--gpu-name" in n for n in by_size["notes"])
    named, _ = plan("--gpu", "79.15GiB", "--gpu-name", "NVIDIA A100-SXM4-80GB")
    assert "(2048 tokens, 256 seqs)" in activation(named) and not any("--gpu-name" in n for n in named["notes"])
    assert named["kv_tokens"] > by_size["kv_tokens"]
    gpus = tmp_path / "gpus.json"
    gpus.write_text(json.dumps({"gpus": [{"name": "NVIDIA A100-SXM4-80GB", "total_mib": 81050}]}))
    monkeypatch.setenv(nvml.FAKE_ENV, str(gpus))
    seen, _ = plan()
    assert "(2048 tokens, 256 seqs)" in activation(seen)


def test_plan_refuses_a_model_whose_kv_cache_it_does_not_model(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    # a hybrid of linear attention and attention (Qwen3-Next's keys): vLLM keeps a state per sequence for three
    # layers in four; a plan from the full-attention model would be several times off, so none is made
    cfg = json.loads((DATA / "models/Qwen2.5-7B-Instruct/config.json").read_text())
    cfg.update(model_type="qwen3_next", full_attention_interval=4)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    r = cli("plan", "--model", tmp_path, "--gpu", "80GiB")
    assert r.code == 69 and "plan-model-not-modelled" in r.err and "full_attention_interval" in r.err
    assert "GPU KV cache size" in r.err  # what to do instead


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


def test_a_card_named_by_its_size_is_planned_on_what_cuda_reports_of_it(cli: Callable[..., CliResult]) -> None:
    # vLLM sizes util on cudaMemGetInfo's total, which leaves out what the driver keeps (23.64 GiB on a "24 GB"
    # RTX 4090): a card named "24GB" is planned on about that, a size in GiB exactly as given
    def plan(*extra: str) -> dict[str, Any]:
        r = cli("plan", "--model", Q7, "--util", "0.9", "--json", *extra)
        assert r.code == 0, r.err
        return dict(json.loads(r.out))

    card, exact, cuda = plan("--gpu", "24GB"), plan("--gpu", "24GiB"), plan("--gpu", "23.52GiB")
    device = card["gpus"]["devices"][0]
    assert device["total_bytes"] == 24 << 30 and 0.4 * (1 << 30) < device["reserved_bytes"] < 0.55 * (1 << 30)
    assert device["cuda_total_bytes"] == device["total_bytes"] - device["reserved_bytes"]
    assert any("CUDA reports about 23.52 GiB of a 24GB card" in n for n in card["notes"]), card["notes"]
    assert abs(card["kv_tokens"] - cuda["kv_tokens"]) <= 16 < exact["kv_tokens"] - card["kv_tokens"]
    assert exact["gpus"]["devices"][0]["reserved_bytes"] == 0
    # ECC is on by default on the data-centre GDDR cards: an L4 sold as 24 GB shows CUDA about 22 GiB
    l4 = plan("--gpu", "24GB", "--gpu-name", "NVIDIA L4")
    assert any("ECC, on by default on the NVIDIA L4, keeps 1/16" in n for n in l4["notes"]), l4["notes"]
    assert 21.9 < l4["gpus"]["devices"][0]["cuda_total_bytes"] / (1 << 30) < 22.2
    assert l4["kv_tokens"] < card["kv_tokens"]
    # a fraction is not a card's size: taken as what CUDA reports
    assert plan("--gpu", "23.52GB")["gpus"]["devices"][0]["reserved_bytes"] == 0


def test_plan_on_a_gpu_takes_off_what_the_driver_keeps(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # NVML's total counts the driver's reserved memory; CUDA's does not, and vLLM plans on CUDA's
    gpus = tmp_path / "gpus.json"
    monkeypatch.setenv(nvml.FAKE_ENV, str(gpus))

    def plan(reserved: int) -> dict[str, Any]:
        gpus.write_text(json.dumps({"gpus": [{"name": "emulated", "total_mib": 24564, "reserved_mib": reserved}]}))
        r = cli("plan", "--model", Q7, "--util", "0.9", "--json")
        assert r.code == 0, r.err
        return dict(json.loads(r.out))

    kept, none = plan(354), plan(0)
    assert kept["gpus"]["devices"][0]["cuda_total_bytes"] == (24564 - 354) << 20
    per_token = kept["kv_bytes_per_token"]
    assert abs((none["kv_tokens"] - kept["kv_tokens"]) * per_token - 0.9 * (354 << 20)) <= 16 * per_token


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


def test_the_calibrated_band_needs_a_log_from_the_planned_card_and_another_setup_is_not_carried(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # the same V0 start (case 3 of bench/RESULTS-planner.md: a 23.57 GiB card) planned for its own card, for a
    # 32 GiB card (its corrections are not carried: across setups they did worse than none on published pairs),
    # and without the line that says which card it ran on (V1 logs print none)
    both = tmp_path / "v0.log"
    both.write_text(
        "INFO worker.py:249] the current vLLM instance can use total_gpu_memory (23.57GiB) x "
        "gpu_memory_utilization (0.90) = 21.21GiB\n"
        "INFO executor_base.py:111] # GPU blocks: 6749, # CPU blocks: 4681\n"
    )
    bare = tmp_path / "bare.log"
    bare.write_text("INFO executor_base.py:111] # GPU blocks: 6749, # CPU blocks: 4681\n")

    def edge(log: Path, gpu: str) -> tuple[float, list[str]]:
        argv = ("--model", Q7, "--util", "0.9", "--engine", "v0", "--calibrate-from", log, "--json")
        out = json.loads(cli("plan", "--gpu", gpu, *argv).out)
        assert out["flags"]["max_model_len"] <= out["edge"]["safe_max_model_len"]
        return out["edge"]["band"], out["notes"]

    band, notes = edge(both, "24GiB")
    assert band == 0.06 and not any("the error band stays" in n for n in notes), notes
    band, notes = edge(both, "32GiB")
    assert band == 0.10 and any(n.startswith("not calibrated on") and "another card (23.57 GiB" in n for n in notes)
    band, notes = edge(bare, "24GiB")
    assert band == 0.10 and any("does not print its GPU's total: the error band stays 10%" in n for n in notes)
    # another release than the log's: not carried either
    versioned = tmp_path / "versioned.log"
    versioned.write_text(
        "INFO 12-22 10:55:01 api_server.py:585] vLLM API server version 0.6.4.post1\n" + both.read_text()
    )
    argv = ("--model", Q7, "--util", "0.9", "--engine", "v0", "--calibrate-from", versioned, "--json")
    other = json.loads(cli("plan", "--gpu", "24GiB", "--vllm-version", "0.6.3", *argv).out)
    plain = json.loads(cli("plan", "--gpu", "24GiB", "--vllm-version", "0.6.3", *argv[:-3], "--json").out)
    assert other["edge"]["band"] == 0.10 and other["calibrated_from"] is None
    assert other["kv_tokens"] == plain["kv_tokens"]  # the plan from config.json
    assert any("vLLM 0.6.4.post1 (planned 0.6.3)" in n for n in other["notes"]), other["notes"]
    same = json.loads(cli("plan", "--gpu", "24GiB", "--vllm-version", "0.6.4.post1", *argv).out)
    assert same["edge"]["band"] == 0.06 and same["calibrated_from"] == str(versioned)


# --- the flags vLLM sizes memory by -----------------------------------------------------------------------


def _plan_json(cli: Callable[..., CliResult], *argv: str | Path) -> dict[str, Any]:
    r = cli("plan", "--model", Q7, "--gpu", "24GiB", *argv, "--json")
    assert r.code in (0, 1), r.err
    out: dict[str, Any] = json.loads(r.out)
    return out


def _row(out: dict[str, Any], prefix: str) -> dict[str, str]:
    return next(row for row in out["budget"] if row["item"].startswith(prefix))


def _gib(row: dict[str, str]) -> float:
    return float(row["value"].split()[0])


def test_enforce_eager_takes_the_cuda_graph_memory_off(cli: Callable[..., CliResult]) -> None:
    graphs = _plan_json(cli, "--estimate-cudagraphs")
    eager = _plan_json(cli, "--estimate-cudagraphs", "--enforce-eager")
    assert _gib(_row(graphs, "- CUDA graphs")) == pytest.approx(0.60, abs=0.01)
    assert (
        _row(eager, "- CUDA graphs")["source"] == "none captured: --enforce-eager"
        and _gib(_row(eager, "- CUDA graphs")) == 0
    )
    assert _gib(_row(eager, "= KV cache")) == pytest.approx(_gib(_row(graphs, "= KV cache")) + 0.60, abs=0.011)
    assert eager["kv_tokens"] > graphs["kv_tokens"] and eager["flags"]["enforce_eager"] is True
    assert "enforce_eager" not in graphs["flags"]


def test_max_num_batched_tokens_sizes_the_activation_peak(cli: Callable[..., CliResult]) -> None:
    small = _plan_json(cli, "--max-num-batched-tokens", "8192")
    big = _plan_json(cli, "--max-num-batched-tokens", "16384")
    # each profiled token costs (2 x 3584 + 3 x 18944) x 2 bytes = 128,000 bytes for Qwen2.5-7B; from 8192 tokens
    # the forward pass outweighs the dummy sampler run of 256 rows that follows it (about 0.57 GiB)
    grown = _gib(_row(big, "- activation peak")) - _gib(_row(small, "- activation peak"))
    assert grown == pytest.approx((16384 - 8192) * 128_000 / (1 << 30), abs=0.011)
    assert _row(big, "- activation peak")["item"].startswith("- activation peak (16384 tokens")
    assert big["kv_tokens"] < small["kv_tokens"] and big["flags"]["max_num_batched_tokens"] == 16384


def test_max_num_seqs_sizes_the_sampler_and_is_kept_as_asked(cli: Callable[..., CliResult]) -> None:
    few = _plan_json(cli, "--max-num-seqs", "8", "--max-num-batched-tokens", "2048")
    many = _plan_json(cli, "--max-num-seqs", "1024", "--max-num-batched-tokens", "2048")
    # no release named: the current releases' fused sampler, 14 bytes per logit. 8 rows: the forward pass of 2048
    # tokens (2048 x 128,000 B) is the peak; 1024 rows: the hidden states (2048 + 2 x 1024) x 3584 x 2 and the
    # sampler's 1024 x 152064 x 14 bytes
    assert _gib(_row(few, "- activation peak")) == pytest.approx(2048 * 128_000 / (1 << 30), abs=0.006)
    many_bytes = (2048 + 2048) * 3584 * 2 + 1024 * 152064 * 14
    assert _gib(_row(many, "- activation peak")) == pytest.approx(many_bytes / (1 << 30), abs=0.006)
    assert few["flags"]["max_num_seqs"] == 8 and many["flags"]["max_num_seqs"] == 1024


def test_block_size_makes_whole_blocks(cli: Callable[..., CliResult]) -> None:
    out = _plan_json(cli, "--block-size", "128")
    assert out["kv_tokens"] % 128 == 0 and out["flags"]["block_size"] == 128
    assert _row(out, "KV capacity")["source"].endswith("blocks of 128")
    default = _plan_json(cli)
    assert "block_size" not in default["flags"] and default["kv_tokens"] - out["kv_tokens"] < 128


def test_pipeline_parallelism_splits_layers_and_weights(cli: Callable[..., CliResult]) -> None:
    one = _plan_json(cli)
    two = _plan_json(cli, "--pp", "2")
    assert two["pp"] == 2 and two["flags"]["pipeline_parallel_size"] == 2
    assert two["kv_bytes_per_token_per_gpu"] == one["kv_bytes_per_token_per_gpu"] // 2  # 14 of 28 layers
    # the fullest stage: half the layers and one of the two 1.01 GiB embeddings (152064 x 3584 x 2 bytes)
    assert _gib(_row(two, "- model weights")) == pytest.approx((14.19 - 2 * 1.015) / 2 + 1.015, abs=0.02)
    assert len(two["gpus"]["devices"]) >= 1 and "PP stage" in _row(two, "- model weights")["source"]
    r = cli("plan", "--model", Q7, "--gpu", "24GiB,24GiB,24GiB", "--tp", "2", "--pp", "2")
    assert r.code == 64 and "--tp 2 x --pp 2 needs 4 GPUs; 3 given or visible" in r.err


def test_weights_row_names_its_source(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    import struct

    assert _row(_plan_json(cli), "- model weights")["source"].startswith("estimate from config.json")
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text((DATA / "models/tiny-qwen2/config.json").read_text())
    header = json.dumps({"w": {"dtype": "BF16", "shape": [1024, 256], "data_offsets": [0, 524288]}}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 524288)
    out = json.loads(cli("plan", "--model", folder, "--gpu", "8GiB", "--json").out)
    assert _row(out, "- model weights")["source"] == "safetensors headers (exact tensor bytes) / TP"
    assert out["weights_source"] == _row(out, "- model weights")["source"] and out["weights_bytes"] == 524288


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--max-num-seqs", "0"], "--max-num-seqs must be at least 1, not 0"),
        (["--max-num-batched-tokens", "-5"], "--max-num-batched-tokens must be at least 1, not -5"),
        (["--pp", "0"], "--pp must be at least 1, not 0"),
        (["--max-model-len", "0"], "--max-model-len must be at least 1, not 0"),
        (
            ["--max-num-seqs", "512", "--max-num-batched-tokens", "256"],
            "max_num_batched_tokens (256) must be at least max_num_seqs (512), as vLLM checks",
        ),
        (
            ["--pp", "3", "--gpu", "24GiB,24GiB,24GiB"],
            "--pp 3 does not divide the model's 28 layers (vLLM refuses it: total number of hidden layers must be "
            "divisible by pipeline parallel size): use one of 1, 2, 4, 7",
        ),
        (
            ["--engine", "v0", "--max-num-batched-tokens", "4096", "--max-model-len", "8192"],
            "max_num_batched_tokens (4096) is smaller than max_model_len (8192): vLLM's V0 engine without chunked "
            "prefill refuses it",
        ),
    ],
)
def test_plan_flag_errors_say_what_vllm_would(cli: Callable[..., CliResult], argv: list[str], needle: str) -> None:
    r = cli("plan", "--model", Q7, "--gpu", "24GiB", *argv)
    assert r.code == 64 and needle in r.err and "Traceback" not in r.err, r.err


def test_block_size_takes_only_what_vllm_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    from vllm_guard.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["plan", "--model", str(Q7), "--gpu", "24GiB", "--block-size", "12"])
    assert exc.value.code == 64 and "invalid choice: 12" in capsys.readouterr().err


def test_the_flags_come_from_the_config_when_not_given(cli: Callable[..., CliResult], fake_root: Path) -> None:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\n[target.flags]\nmax_num_seqs = 12\nmax_num_batched_tokens = 4096\n'
        "enforce_eager = true\n",
    )
    out = json.loads(cli("plan", "--root", fake_root, "--gpu", "8GiB", "--estimate-cudagraphs", "--json").out)
    assert out["flags"]["max_num_seqs"] == 12 and out["flags"]["max_num_batched_tokens"] == 4096
    assert out["flags"]["enforce_eager"] is True and _row(out, "- CUDA graphs")["source"].endswith("--enforce-eager")
    # an option wins over the config
    out2 = json.loads(cli("plan", "--root", fake_root, "--gpu", "8GiB", "--max-num-seqs", "3", "--json").out)
    assert out2["flags"]["max_num_seqs"] == 3


def test_a_targets_stated_release_reaches_the_plan(cli: Callable[..., CliResult], fake_root: Path) -> None:
    # a container's vLLM: its command is the runtime, no python to ask; the target's vllm_version says which release
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\ncommand = ["/usr/bin/podman", "run", "vllm/vllm-openai:v0.6.3"]\n'
        'vllm_version = "0.6.3"\n',
    )
    out = json.loads(cli("plan", "--root", fake_root, "--gpu", "8GiB", "--json").out)
    assert out["vllm_version"] == "0.6.3" and out["vllm_version_source"] == "the target's vllm_version"
    assert out["engine"] == "v0" and out["accounting"]["name"] == "since-init"
    # an option wins over the config
    out2 = json.loads(cli("plan", "--root", fake_root, "--gpu", "8GiB", "--vllm-version", "0.11.0", "--json").out)
    assert out2["vllm_version"] == "0.11.0" and out2["vllm_version_source"] == "--vllm-version"
