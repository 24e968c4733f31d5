"""Planner math against published Qwen configs on 24, 48, 80 and 141 GiB GPUs."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_guard.adapters.modelfs import load_model_info
from vllm_guard.core.calibrate import read_vllm_log
from vllm_guard.core.modelinfo import ModelInfo, model_info_from_config
from vllm_guard.core.planner import (
    CALIBRATED_MARGIN,
    KV_MARGIN,
    GiB,
    PlannerParams,
    Reported,
    activation_bytes,
    budget,
    calibrate,
    first_fit,
    kv_bytes_per_token,
    kv_tokens_at,
    max_model_len_at,
    parse_size,
    util_for,
    weights_per_gpu,
)

pytestmark = pytest.mark.unit

MODELS = Path(__file__).resolve().parents[1] / "data/models"


def model(name: str) -> ModelInfo:
    return load_model_info(MODELS / name)


# 2 (K and V) x layers x KV heads x head_dim x 2 bytes (BF16), computed by hand from each config.json
KV_PER_TOKEN = {
    "Qwen2.5-7B-Instruct": 2 * 28 * 4 * 128 * 2,  # 57344 B = 56 KiB
    "Qwen2.5-14B-Instruct": 2 * 48 * 8 * 128 * 2,  # 192 KiB
    "Qwen2.5-32B-Instruct": 2 * 64 * 8 * 128 * 2,  # 256 KiB
    "Qwen2.5-72B-Instruct": 2 * 80 * 8 * 128 * 2,  # 320 KiB
    "Qwen3-8B": 2 * 36 * 8 * 128 * 2,  # 144 KiB
    "Qwen3-32B": 2 * 64 * 8 * 128 * 2,  # 256 KiB
    "Qwen3-30B-A3B": 2 * 48 * 4 * 128 * 2,  # 96 KiB
}


@pytest.mark.parametrize("name", sorted(KV_PER_TOKEN))
def test_kv_bytes_per_token(name: str) -> None:
    info = model(name)
    assert kv_bytes_per_token(info, "auto") == KV_PER_TOKEN[name]
    assert kv_bytes_per_token(info, "fp8") == KV_PER_TOKEN[name] // 2  # FP8 KV halves it
    # TP splits the KV heads; past the head count they are replicated (vLLM: max(1, heads // tp))
    assert kv_bytes_per_token(info, "auto", tp=2) == KV_PER_TOKEN[name] // 2
    assert kv_bytes_per_token(info, "auto", tp=info.kv_heads * 2) == KV_PER_TOKEN[name] // info.kv_heads


def test_mla_latent_is_not_split_by_tp() -> None:
    # DeepSeek-V2-Lite: 27 layers, kv_lora_rank 512 + qk_rope_head_dim 64 = 576 values per token and layer
    info = model_info_from_config(
        {
            "num_hidden_layers": 27,
            "hidden_size": 2048,
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "kv_lora_rank": 512,
            "qk_rope_head_dim": 64,
            "max_position_embeddings": 163840,
            "vocab_size": 102400,
        }
    )
    assert kv_bytes_per_token(info, "auto") == 27 * 576 * 2
    assert kv_bytes_per_token(info, "auto", tp=4) == 27 * 576 * 2
    assert kv_bytes_per_token(info, "fp8_ds_mla") == 27 * 656  # FlashMLA's padded FP8 entry


# Does the first-fit plan fit? Rows: model, GPU GiB; columns: TP 1, 2, 4 (BF16 KV).
# By hand: BF16 weights are 2 bytes x parameters (7B 14.2, 14B 27.5, 32B 61.0, 72B 135.4, Qwen3-8B
# 15.3, Qwen3-32B 61.1 GiB); a plan fits when weights/TP leave room for at least 2K tokens of KV
# below 0.95 of the GPU.
FITS = {
    ("Qwen2.5-7B-Instruct", 24): (True, True, True),
    ("Qwen2.5-7B-Instruct", 141): (True, True, True),
    ("Qwen2.5-14B-Instruct", 24): (False, True, True),
    ("Qwen2.5-14B-Instruct", 48): (True, True, True),
    ("Qwen2.5-32B-Instruct", 24): (False, False, True),
    ("Qwen2.5-32B-Instruct", 48): (False, True, True),
    ("Qwen2.5-32B-Instruct", 80): (True, True, True),
    ("Qwen2.5-72B-Instruct", 48): (False, False, True),
    ("Qwen2.5-72B-Instruct", 80): (False, True, True),
    ("Qwen2.5-72B-Instruct", 141): (False, True, True),
    ("Qwen3-8B", 24): (True, True, True),
    ("Qwen3-32B", 24): (False, False, True),
    ("Qwen3-32B", 80): (True, True, True),
}


@pytest.mark.parametrize(("name", "gib"), sorted(FITS))
@pytest.mark.parametrize("kv", ["auto", "fp8"])
def test_first_fit_table(name: str, gib: int, kv: str) -> None:
    info = model(name)
    for tp, expected in zip((1, 2, 4), FITS[(name, gib)], strict=True):
        plan = first_fit(info, [gib * GiB] * tp, tp, kv_cache_dtype=kv)
        assert plan.fits is expected, (name, gib, tp, kv, plan.notes)
        if plan.fits:
            # the plan keeps its promise: vLLM's KV cache holds max_model_len with the 10% margin
            assert plan.budget.kv_tokens >= plan.max_model_len * 1.1 - 16
            assert 0.5 <= plan.util <= 0.95
            assert plan.max_model_len <= info.max_context


@pytest.mark.parametrize("name", ["Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct", "Qwen3-8B", "Qwen3-32B"])
@pytest.mark.parametrize("gib", [24, 48, 80, 141])
def test_budget_adds_up_and_fp8_doubles_the_tokens(name: str, gib: int) -> None:
    info = model(name)
    b = budget(info, gib * GiB, 0.9)
    assert b.requested == int(gib * GiB * 0.9)
    assert b.kv_bytes == b.requested - b.weights - b.activation - b.non_torch - b.cudagraphs - b.extra
    if b.kv_bytes > 0:
        assert b.kv_tokens * b.kv_per_token <= b.kv_bytes < (b.kv_tokens + 16) * b.kv_per_token
        b8 = budget(info, gib * GiB, 0.9, kv_cache_dtype="fp8")
        assert b8.kv_tokens == pytest.approx(2 * b.kv_tokens, abs=32)
    else:
        assert b.kv_tokens == 0


def test_smallest_gpu_decides_under_tp() -> None:
    info = model("Qwen2.5-32B-Instruct")
    mixed = first_fit(info, [80 * GiB, 48 * GiB], 2)
    small = first_fit(info, [48 * GiB, 48 * GiB], 2)
    assert mixed.budget == small.budget and mixed.max_model_len == small.max_model_len
    assert any("smallest" in n for n in mixed.notes)


def test_tp_gives_each_gpu_less_weight_and_more_kv() -> None:
    info = model("Qwen2.5-14B-Instruct")
    one = budget(info, 48 * GiB, 0.9, tp=1)
    two = budget(info, 48 * GiB, 0.9, tp=2)
    assert two.weights == pytest.approx(one.weights / 2, abs=1)
    assert two.kv_tokens > 2 * one.kv_tokens


def test_activation_grows_with_max_num_batched_tokens() -> None:
    info = model("Qwen2.5-7B-Instruct")
    p = PlannerParams()
    small = activation_bytes(info, 8192, 256, 1, p)
    big = activation_bytes(info, 16384, 256, 1, p)
    # each profiled token costs (2 x hidden + 3 x intermediate) x 2 bytes: 128,000 B for Qwen2.5-7B; from 8192
    # tokens on the forward pass outweighs V1's dummy sampler run of 256 rows, (8192 + 512) x 3584 x 2 +
    # 256 x 152064 x 14 = 607,387,648 B against 1,048,576,000
    assert big - small == pytest.approx((16384 - 8192) * 2 * (2 * 3584 + 3 * 18944), rel=1e-6)
    # at 2048 tokens the sampler run is the peak, and more tokens only add their hidden states to it
    assert activation_bytes(info, 2048, 256, 1, p) == (2048 + 512) * 3584 * 2 + 256 * 152064 * 14
    at8k = kv_tokens_at(info, 24 * GiB, 0.9, params=replace(p, max_num_batched_tokens=8192))
    at2k = kv_tokens_at(info, 24 * GiB, 0.9, params=replace(p, max_num_batched_tokens=2048))
    assert at8k < at2k


def test_v0_longer_context_can_leave_more_kv_room() -> None:
    # V0 switched chunked prefill on above 32K, so the profile run shrinks from 32768 tokens to 2048
    info = model("Qwen3-8B")
    v0 = PlannerParams(engine="v0")
    at_32k = kv_tokens_at(info, 24 * GiB, 0.9, max_model_len=32768, params=v0)
    at_40k = kv_tokens_at(info, 24 * GiB, 0.9, max_model_len=40960, params=v0)
    assert at_40k > at_32k
    # under V1 the profile run does not depend on max_model_len
    assert kv_tokens_at(info, 24 * GiB, 0.9, max_model_len=32768) == kv_tokens_at(
        info, 24 * GiB, 0.9, max_model_len=40960
    )


@pytest.mark.parametrize("engine", ["v1", "v0"])
@pytest.mark.parametrize(
    ("name", "gib", "util"),
    [
        ("Qwen2.5-7B-Instruct", 24, 0.9),
        ("Qwen2.5-32B-Instruct", 80, 0.85),
        ("Qwen3-8B", 24, 0.8),
        ("Qwen3-32B", 80, 0.92),
    ],
)
def test_max_model_len_at_is_the_largest_that_fits(engine: str, name: str, gib: int, util: float) -> None:
    info = model(name)
    p = PlannerParams(engine=engine)  # type: ignore[arg-type]
    n = max_model_len_at(info, gib * GiB, util, params=p)
    assert n > 0
    assert kv_tokens_at(info, gib * GiB, util, max_model_len=n, params=p) >= n
    if n < info.max_context:
        assert kv_tokens_at(info, gib * GiB, util, max_model_len=n + 1, params=p) < n + 1


@pytest.mark.parametrize(
    ("name", "gib", "length"),
    [("Qwen2.5-7B-Instruct", 24, 32768), ("Qwen3-32B", 80, 40960), ("Qwen2.5-72B-Instruct", 141, 32768)],
)
def test_util_for_is_the_smallest_util_that_holds_the_context(name: str, gib: int, length: int) -> None:
    info = model(name)
    u = util_for(info, gib * GiB, length)
    assert kv_tokens_at(info, gib * GiB, u, max_model_len=length) >= length
    assert kv_tokens_at(info, gib * GiB, round(u - 0.01, 2), max_model_len=length) < length


def test_weights_that_do_not_fit_say_so() -> None:
    plan = first_fit(model("Qwen2.5-72B-Instruct"), [80 * GiB], 1)
    assert not plan.fits
    assert any("quantized" in n for n in plan.notes)


def test_a_context_that_does_not_fit_is_shortened() -> None:
    plan = first_fit(model("Qwen2.5-72B-Instruct"), [79 * GiB, 79 * GiB], 2)
    assert plan.fits and plan.util == 0.95 and plan.max_model_len < 32768
    assert any("lowered" in n for n in plan.notes)


def test_free_memory_caps_the_util() -> None:
    info = model("Qwen2.5-7B-Instruct")
    plan = first_fit(info, [24 * GiB], 1, free=[int(20 * GiB)])
    assert plan.util <= 0.82
    assert any("other processes" in n for n in plan.notes)


def test_cudagraph_estimate_is_subtracted() -> None:
    info = model("Qwen3-8B")
    plain = budget(info, 80 * GiB, 0.9, params=PlannerParams(estimate_cudagraphs=False))
    with_graphs = budget(info, 80 * GiB, 0.9, params=PlannerParams(estimate_cudagraphs=True))
    assert plain.kv_bytes - with_graphs.kv_bytes == PlannerParams().cudagraph_bytes
    eager = budget(info, 80 * GiB, 0.9, params=PlannerParams(estimate_cudagraphs=True, enforce_eager=True))
    assert eager.kv_bytes == plain.kv_bytes


@pytest.mark.parametrize(
    ("version", "engine", "eager", "counted"),
    [
        ("0.19.0", "v1", False, False),  # vllm/envs.py: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "0"
        ("0.20.0", "v1", False, True),  # its default "1" from 0.20.0
        ("0.31.0", "v1", False, True),
        (None, "v1", False, True),  # release not known: the current releases
        ("0.31.0", "v1", True, False),  # --enforce-eager: no graphs captured
        ("0.6.6", "v0", False, False),
    ],
)
def test_cudagraph_estimate_by_release(version: str | None, engine: str, eager: bool, counted: bool) -> None:
    from vllm_guard.core.planner import cudagraphs_estimated

    p = PlannerParams(engine=engine, vllm_version=version, enforce_eager=eager)  # type: ignore[arg-type]
    assert cudagraphs_estimated(p) is counted
    assert budget(model("Qwen3-8B"), 80 * GiB, 0.9, params=p).graphs == (
        "eager" if eager else "estimate" if counted else "off"
    )


def test_the_units_environment_turns_the_estimate_on_or_off() -> None:
    from vllm_guard.core.planner import estimate_cudagraphs_of

    def env(value: str) -> dict[str, str]:
        return {"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": value}

    assert estimate_cudagraphs_of("0.24.0", env("0")) is False and estimate_cudagraphs_of("0.19.0", env("1")) is True
    assert estimate_cudagraphs_of(None, env("1")) is True and estimate_cudagraphs_of("0.24.0", {}) is None
    assert estimate_cudagraphs_of("0.11.0", env("1")) is None  # a release that does not read it
    assert estimate_cudagraphs_of("0.24.0", env("yes")) is None


def test_calibration_reproduces_what_vllm_reported() -> None:
    info = model("Qwen2.5-7B-Instruct")
    reported = Reported(gpu_bytes=int(23.55 * GiB), util=0.9, kv_tokens=86_000, weights_bytes=int(14.25 * GiB))
    p = calibrate(info, reported)
    assert p.weights_bytes == int(14.25 * GiB)
    again = kv_tokens_at(info, reported.gpu_bytes, 0.9, params=p)
    assert again == pytest.approx(86_000, abs=16)
    # and the calibration carries to another util: one more 0.05 of the GPU is that many more tokens
    more = kv_tokens_at(info, reported.gpu_bytes, 0.95, params=p)
    assert more - again == pytest.approx(0.05 * 23.55 * GiB / KV_PER_TOKEN["Qwen2.5-7B-Instruct"], rel=0.01)


def test_calibration_of_parts() -> None:
    info = model("Qwen2.5-7B-Instruct")
    reported = Reported(gpu_bytes=80 * GiB, util=0.9, activation_bytes=int(1.0 * GiB), non_torch_bytes=int(0.2 * GiB))
    p = calibrate(info, reported)
    b = budget(info, 80 * GiB, 0.9, params=p)
    assert b.activation == pytest.approx(1.0 * GiB, rel=0.001)
    assert b.non_torch == int(0.2 * GiB)


def test_plan_table_and_flags() -> None:
    plan = first_fit(model("Qwen3-8B"), [24 * GiB], 1, kv_cache_dtype="fp8")
    items = [r[0] for r in plan.table()]
    assert items[0].startswith("GPU memory") and "KV capacity" in items and "max_model_len" in items
    assert all(r[2] for r in plan.table())  # every row says where its number comes from
    assert plan.flags()["kv_cache_dtype"] == "fp8" and "tensor_parallel_size" not in plan.flags()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24GiB", 24 * GiB),
        ("24G", 24 * GiB),
        ("80GB", 80 * 10**9),
        ("512MiB", 512 << 20),
        ("1.5TiB", int(1.5 * 2**40)),
        ("1000", 1000),
        ("141 GiB", 141 * GiB),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "big", "24 XB", "-3G"])
def test_parse_size_refuses(bad: str) -> None:
    with pytest.raises(ValueError, match="not a size"):
        parse_size(bad)


# Real vLLM lines. Source: https://github.com/kubernetes-sigs/gateway-api-inference-extension/pull/550
# (Llama-2-7b on an 80 GB GPU, vLLM 0.8 V0).
V0_LINES = """\
INFO 03-21 20:15:45 [worker.py:267] the current vLLM instance can use total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90) = 71.27GiB
INFO 03-21 20:15:45 [worker.py:267] model weights take 12.55GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak memory takes 2.38GiB; the rest of the memory reserved for KV Cache is 56.18GiB.
INFO 03-21 20:15:46 [executor_base.py:111] # cuda blocks: 7191, # CPU blocks: 512
"""
# Source: https://github.com/vllm-project/vllm/issues/21348 (Qwen3-235B-A22B-FP8, 4x H100, V1)
V1_LINES = """\
Available KV cache memory: 8.11 GiB
GPU KV cache size: 178,880 tokens
"""
# Source: https://github.com/vllm-project/vllm/issues/13061 (vLLM 0.7: the "GB" is GiB)
V0_GB_LINE = "INFO 02-11 07:40:45 model_runner.py:1115] Loading model weights took 13.9476 GB"


def test_reported_from_a_v0_log() -> None:
    r = read_vllm_log(V0_LINES).reported(gpu_bytes=24 * GiB, util=0.5)
    assert r.gpu_bytes == round(79.19 * GiB) and r.util == 0.90  # the log's own figures win
    assert r.weights_bytes == round(12.55 * GiB) and r.activation_bytes == round(2.38 * GiB)
    assert r.non_torch_bytes == round(0.16 * GiB) and r.kv_cache_bytes == round(56.18 * GiB)
    assert r.kv_tokens == 7191 * 16 and r.engine == "v0"
    assert r.max_model_len is None
    engine_line = (
        "INFO llm_engine.py:234] Initializing a V0 LLM engine (v0.8.1) with config: model='m', max_seq_len=4096, x=1"
    )
    r2 = read_vllm_log(engine_line + "\n" + V0_LINES).reported(gpu_bytes=0, util=0.9)
    assert r2.max_model_len == 4096


def test_reported_from_a_v1_log_needs_the_gpu_from_elsewhere() -> None:
    reading = read_vllm_log(V1_LINES)
    assert reading.total_bytes is None and reading.util is None
    r = reading.reported(gpu_bytes=round(79.19 * GiB), util=0.9, tp=4)
    assert r.kv_tokens == 178_880 and r.kv_cache_bytes == round(8.11 * GiB) and r.tp == 4
    assert r.gpu_bytes == round(79.19 * GiB) and r.util == 0.9


def test_v0_gb_are_gib() -> None:
    assert not read_vllm_log(V0_GB_LINE).found  # weights alone are no KV figure
    blocks_line = V0_LINES.splitlines()[-1]  # "# cuda blocks: 7191, # CPU blocks: 512"
    reading = read_vllm_log(V0_GB_LINE + "\n" + blocks_line)
    assert reading.weights_bytes == round(13.9476 * GiB) and reading.kv_tokens == 7191 * 16


def test_calibrating_from_a_log_reproduces_vllm() -> None:
    llama2_7b = model_info_from_config(
        {
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 32,
            "intermediate_size": 11008,
            "vocab_size": 32000,
            "max_position_embeddings": 4096,
            "torch_dtype": "float16",
        }
    )
    r = read_vllm_log(V0_LINES).reported(gpu_bytes=0, util=0.9, max_model_len=4096)
    p = calibrate(llama2_7b, r, PlannerParams(engine="v0"))
    assert kv_tokens_at(llama2_7b, r.gpu_bytes, 0.9, max_model_len=4096, params=p) == pytest.approx(7191 * 16, abs=16)


# --- the safety rule: never above the edge the error band allows ------------------------------------------

_SAFETY_MODELS = [
    "Qwen2.5-7B-Instruct",
    "Qwen2.5-14B-Instruct",
    "Qwen2.5-32B-Instruct",
    "Qwen2.5-72B-Instruct",
    "Qwen3-8B",
    "Qwen3-30B-A3B",
]


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(_SAFETY_MODELS),
    # GPUs from just over the weights per GPU to well above them: the tight cases, where lengths are lowered
    room=st.floats(min_value=1.02, max_value=3.0),
    tp=st.sampled_from([1, 2, 4]),
    pp=st.sampled_from([1, 2]),
    kv=st.sampled_from(["auto", "fp8"]),
    engine=st.sampled_from(["v1", "v0"]),
    asked=st.one_of(st.none(), st.integers(min_value=2048, max_value=131072)),
    util=st.one_of(st.none(), st.sampled_from([0.7, 0.85, 0.9, 0.97])),
    margin=st.sampled_from([KV_MARGIN, CALIBRATED_MARGIN]),
    batched=st.sampled_from([None, None, 4096, 16384]),
)
def test_the_recommended_length_never_passes_the_edge_less_the_band(
    name: str,
    room: float,
    tp: int,
    pp: int,
    kv: str,
    engine: str,
    asked: int | None,
    util: float | None,
    margin: float,
    batched: int | None,
) -> None:
    info = model(name)
    gpu = int(info.estimated_weight_bytes() / (tp * pp) * room)
    p = PlannerParams(engine=engine, max_num_batched_tokens=batched)  # type: ignore[arg-type]
    plan = first_fit(
        info, [gpu] * (tp * pp), tp, pp=pp, max_model_len=asked, kv_cache_dtype=kv, util=util, params=p, margin=margin
    )
    assert plan.band == margin and 0 <= plan.safe_edge <= plan.edge <= info.max_context
    assert plan.max_model_len <= plan.safe_edge
    if plan.max_model_len > 0:
        held = kv_tokens_at(
            info, gpu, plan.util, tp, pp=pp, max_model_len=plan.max_model_len, kv_cache_dtype=kv, params=p
        )
        # the KV cache holds it with the band to spare (whole tokens: 3200 x 1.1 is 3520, not 3520.0000000000005)
        assert held >= math.ceil(plan.max_model_len * (1 + margin) - 1e-9)
    if plan.fits:
        assert plan.max_model_len >= 2048
    assert plan.requested_max_model_len == min(asked or info.max_context, info.max_context)
    assert plan.requested_budget is not None
    if plan.max_model_len == plan.requested_max_model_len:
        assert plan.requested_budget == plan.budget


def test_safe_edge_is_the_edge_less_the_band_under_v1() -> None:
    info = model("Qwen2.5-72B-Instruct")
    gpu = 80 * GiB  # the KV cache holds the model's 32768 tokens, but not 10% more
    plan = first_fit(info, [gpu] * 2, 2)
    # V1: the KV cache does not depend on max_model_len, so the edge less the band is capacity / 1.10
    capacity = kv_tokens_at(info, gpu, plan.util, 2)
    assert plan.edge == min(capacity, info.max_context)
    assert plan.safe_edge == min(int(capacity / 1.10), info.max_context)
    assert plan.max_model_len == plan.safe_edge // 1024 * 1024 < plan.requested_max_model_len == 32768
    assert plan.requested_budget is not None and plan.requested_budget.kv_tokens == capacity


def test_a_plan_that_does_not_fit_recommends_no_length() -> None:
    plan = first_fit(model("Qwen2.5-72B-Instruct"), [24 * GiB], 1)
    assert not plan.fits and plan.edge == plan.safe_edge == plan.max_model_len == 0
    assert "max_model_len" not in plan.flags()


def test_pipeline_parallelism_in_the_budget() -> None:
    info = model("Qwen2.5-72B-Instruct")  # 80 layers
    assert kv_bytes_per_token(info, tp=2, pp=4) == KV_PER_TOKEN["Qwen2.5-72B-Instruct"] // 8  # 20 layers, 4 heads
    whole = weights_per_gpu(info, 2)
    staged = weights_per_gpu(info, 2, pp=4)
    embed = 152064 * 8192 * 2  # one embedding (the LM head is the other), BF16
    assert staged == pytest.approx(((whole * 2 - 2 * embed) / 4 + embed) / 2, rel=1e-6)
    # the plan uses TP x PP GPUs and says so in its flags; the smallest of all of them decides
    plan = first_fit(info, [80 * GiB] * 3 + [48 * GiB], 2, pp=2)
    assert plan.flags()["pipeline_parallel_size"] == 2 and plan.budget.gpu_bytes == 48 * GiB
    assert any("smallest" in n for n in plan.notes)


def test_calibrating_a_pipeline_parallel_start() -> None:
    info = model("Qwen2.5-72B-Instruct")
    reported = Reported(gpu_bytes=80 * GiB, util=0.9, tp=2, pp=2, kv_tokens=120_000)
    p = calibrate(info, reported)
    assert kv_tokens_at(info, 80 * GiB, 0.9, 2, pp=2, params=p) == pytest.approx(120_000, abs=16)
    assert p.measured == ()  # only the KV figure: every part is still the planner's estimate
