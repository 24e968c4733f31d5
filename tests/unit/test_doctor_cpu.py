"""Doctor on vLLM's CPU backend (device = "cpu"): no GPU needed, the KV cache checked against host RAM."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from tests.unit.test_doctor import build_root, healthy, healthy_target, refs
from vllm_guard.core.doctor import Facts, Finding, TargetFacts, exit_code, judge
from vllm_guard.core.modelinfo import model_info_from_config
from vllm_guard.exitcodes import ExitCode

pytestmark = pytest.mark.unit

GiB = 1 << 30
# The acceptance tier's "long" tiny Qwen2: 16 layers, 8 KV heads, head_dim 64, bfloat16: 32 KiB of KV per token.
LONG = model_info_from_config(
    {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 512,
        "intermediate_size": 512,
        "num_hidden_layers": 16,
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
        "vocab_size": 1024,
        "torch_dtype": "bfloat16",
    }
)


def cpu_target(**kw: Any) -> TargetFacts:
    base: dict[str, Any] = {"device": "cpu", "model_info": LONG, "max_model_len": 131072, "cpu_kv_gib": 1}
    return healthy_target(**(base | kw))


def no_gpu(*targets: TargetFacts, **kw: Any) -> Facts:
    return healthy(gpus=(), gpu_error="no NVIDIA GPU visible: NVML did not start", targets=targets, **kw)


def one(findings: list[Finding], ref: str) -> Finding:
    hit = [f for f in findings if f.ref == ref]
    assert len(hit) == 1, (ref, refs(findings))
    return hit[0]


def test_cpu_targets_need_no_gpu() -> None:
    findings = judge(no_gpu(cpu_target(max_model_len=32640)))
    assert "gpu-none" not in refs(findings)
    assert one(findings, "gpu-not-needed").status == "ok"
    assert one(findings, "model-fits").status == "ok"


def test_one_gpu_target_still_needs_the_gpu() -> None:
    findings = judge(no_gpu(cpu_target(max_model_len=32640), healthy_target(unit="q-gpu", port=8001)))
    assert one(findings, "gpu-none").status == "fail"
    assert "gpu-not-needed" not in refs(findings)


def test_a_gpu_target_with_a_cpu_kv_size_is_told_about_device_cpu() -> None:
    findings = judge(no_gpu(healthy_target(cpu_kv_gib=4)))
    assert 'set device = "cpu"' in one(findings, "gpu-none").hint
    plain = judge(no_gpu(healthy_target()))
    assert "device" not in one(plain, "gpu-none").hint


def test_kv_too_small_names_the_length_real_vllm_estimates_and_the_space_that_fits() -> None:
    # Real vLLM 0.32 (tests/acceptance/test_real_vllm.py): VLLM_CPU_KVCACHE_SPACE=1 and this model give
    # "the estimated maximum model length is 32640".
    f = one(judge(no_gpu(cpu_target())), "model-kv-too-small")
    assert f.status == "fail"
    assert "32640 tokens" in f.measured and "32 KiB per token" in f.measured
    assert "lower max_model_len to 32640" in f.hint
    assert "cpu_kvcache_space_gib = 5" in f.hint  # 131072 tokens + the null block need just over 4 GiB


@pytest.mark.parametrize(("length", "ref"), [(32640, "model-fits"), (32641, "model-kv-too-small")])
def test_the_boundary_is_whole_blocks_less_the_null_block(length: int, ref: str) -> None:
    assert ref in refs(judge(no_gpu(cpu_target(max_model_len=length))))


def test_the_suggested_space_is_enough_and_one_less_is_not() -> None:
    assert "model-fits" in refs(judge(no_gpu(cpu_target(cpu_kv_gib=5))))
    assert "model-kv-too-small" in refs(judge(no_gpu(cpu_target(cpu_kv_gib=4))))


def test_an_explicit_kv_cache_above_available_ram_fails_like_vllm_does() -> None:
    facts = no_gpu(cpu_target(cpu_kv_gib=60), mem_available=40 * GiB)
    f = one(judge(facts), "cpu-kv-above-available")
    assert f.status == "fail" and "VLLM_CPU_KVCACHE_SPACE=60" in f.measured
    running = no_gpu(cpu_target(cpu_kv_gib=60, unit_active=True), mem_available=40 * GiB)
    assert "cpu-kv-above-available" not in refs(judge(running))  # its own cache is what is in use


def test_auto_sizing_uses_util_as_a_fraction_of_host_ram() -> None:
    # no VLLM_CPU_KVCACHE_SPACE: vLLM reserves util x RAM and fails when less than that is available
    facts = no_gpu(cpu_target(cpu_kv_gib=None, max_model_len=4096), mem_available=20 * GiB)
    findings = judge(facts)
    f = one(findings, "cpu-util-above-available")
    assert f.status == "fail" and "0.30" in f.hint  # 20 of 64 GiB available
    roomy = judge(no_gpu(cpu_target(cpu_kv_gib=None, max_model_len=131072)))
    fits = one(roomy, "model-fits")
    assert "util 0.9 x RAM" in fits.measured  # 0.9 x 64 GiB less weights and process: far above 4 GiB


def test_auto_sizing_follows_numa_node_0_where_the_host_has_numa() -> None:
    # vLLM's CPU worker multiplies util by its NUMA node's memory, not the host's: 12 of 64 GiB here
    node = {"node_total": 12 * GiB, "node_available": 8 * GiB}
    f = one(judge(no_gpu(cpu_target(cpu_kv_gib=None, max_model_len=4096), **node)), "cpu-util-above-available")
    assert "NUMA node 0" in f.title and "0.65" in f.hint  # 8 of 12 GiB available
    fits = one(judge(no_gpu(cpu_target(cpu_kv_gib=None, max_model_len=4096, util=0.5), **node)), "model-fits")
    assert "util 0.5 x NUMA node 0" in fits.measured


def test_node_memory_is_read_as_vllm_reads_it(tmp_path: Path) -> None:
    from vllm_guard.adapters.host import read_node_memory

    assert read_node_memory(tmp_path) is None  # no NUMA: the host's numbers are used
    node = tmp_path / "sys/devices/system/node/node0"
    node.mkdir(parents=True)
    (node / "meminfo").write_text(
        "Node 0 MemTotal:       12413144 kB\nNode 0 MemFree:         8779132 kB\nNode 0 MemUsed:         3634012 kB\n"
        "Node 0 Active(file):     100000 kB\nNode 0 Inactive(file):   200000 kB\nNode 0 SReclaimable:     50000 kB\n"
    )
    assert read_node_memory(tmp_path) == (12413144 * 1024, (8779132 + 100000 + 200000 + 50000) * 1024)


def test_host_ram_counts_the_weights_and_the_kv_cache_on_cpu() -> None:
    facts = no_gpu(cpu_target(cpu_kv_gib=40, max_model_len=4096), mem_available=44 * GiB, swap_free=0)
    f = one(judge(facts), "host-ram-short")
    assert "KV cache 40.0 GiB" in f.measured and "weights" in f.measured
    assert exit_code(judge(facts)) == ExitCode.FAIL


def test_doctor_verb_on_a_cpu_host(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verb reads device and the KV size from the config; GPUs or not, a CPU target needs none."""
    monkeypatch.delenv("VLLM_GUARD_FAKE_GPUS", raising=False)
    build_root(tmp_path)
    config = tmp_path / "etc/vllm-guard/config.toml"
    text = config.read_text().replace("port = 8000\n", 'port = 8000\ndevice = "cpu"\n', 1)
    config.write_text(text + "[target.flags]\ncpu_kvcache_space_gib = 1\nmax_model_len = 4096\n")

    r = cli("doctor", "--root", tmp_path, "--json", "--no-vllm-check")

    found = {f["ref"]: f for f in json.loads(r.out)["findings"]}
    assert "gpu-none" not in found and found["gpu-not-needed"]["status"] == "ok", found
    assert found["model-fits"]["status"] == "ok" and "VLLM_CPU_KVCACHE_SPACE=1" in found["model-fits"]["measured"]


def test_the_kv_size_may_come_from_the_units_environment() -> None:
    from vllm_guard.app.doctor import _cpu_kv_gib
    from vllm_guard.core.config import Target

    assert _cpu_kv_gib(Target(model="/m", device="cpu", environment={"VLLM_CPU_KVCACHE_SPACE": "2"})) == 2
    assert _cpu_kv_gib(Target(model="/m", device="cpu", flags={"cpu_kvcache_space_gib": 3})) == 3
    assert _cpu_kv_gib(Target(model="/m", device="cpu")) is None


def test_an_unknown_device_is_refused_by_name(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    build_root(tmp_path, install=False)
    config = tmp_path / "etc/vllm-guard/config.toml"
    config.write_text(config.read_text().replace("port = 8000\n", 'port = 8000\ndevice = "tpu"\n', 1))
    r = cli("render", "--root", tmp_path)
    assert r.code == 78
    assert "device" in r.err and "config.toml" in r.err and "Traceback" not in r.err
