"""Hybrid models: vLLM's V1 hybrid KV cache manager, as the planner models it (planner.kv_groups).

The figures each test checks were printed by real vLLM starts, quoted with their source; the planner gets vLLM's
own "Available KV cache memory" there, so these tests check the grouping and the printed figures, not the memory
budget above them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from vllm_guard.core.modelinfo import model_info_from_config, weights_from_headers
from vllm_guard.core.planner import GiB, PlannerParams, budget, first_fit, kv_groups

pytestmark = pytest.mark.unit

# Qwen/Qwen3-Next-80B-A3B-Instruct's config.json (the keys the planner reads)
QWEN3_NEXT: dict[str, Any] = {
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "num_hidden_layers": 48,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "full_attention_interval": 4,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "intermediate_size": 5120,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "vocab_size": 151936,
    "max_position_embeddings": 262144,
    "torch_dtype": "bfloat16",
}

# openai/gpt-oss-120b's config.json (the keys the planner reads): 36 layers, sliding and full attention in turn
GPT_OSS_120B: dict[str, Any] = {
    "architectures": ["GptOssForCausalLM"],
    "model_type": "gpt_oss",
    "num_hidden_layers": 36,
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
    "sliding_window": 128,
    "intermediate_size": 2880,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "vocab_size": 201088,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


def _printed(config: dict[str, Any], version: str, tp: int, dtype: str, available_gib: float, length: int) -> Any:
    info = model_info_from_config(config)
    groups = kv_groups(info, dtype, tp=tp, params=PlannerParams(engine="v1", vllm_version=version), batched_tokens=8192)
    assert groups is not None
    blocks = int(available_gib * GiB) // groups.block_bytes
    return groups, groups.reported_tokens(blocks, length), blocks / groups.blocks_per_request(length)


def test_qwen3_next_on_two_h200s() -> None:
    # https://github.com/search?q=%22GPU+KV+cache+size%3A+973%2C760+tokens%22&type=code (a terminal capture of
    # `python -m vllm.entrypoints.openai.api_server --model .../Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 2`):
    #   INFO 10-23 15:10:22 [config.py:390] Setting attention block size to 544 tokens to ensure that attention page
    #   size is >= mamba page size.
    #   (Worker_TP0 pid=1806413) INFO 10-23 15:14:30 [gpu_worker.py:298] Available KV cache memory: 44.59 GiB
    #   (EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1028] GPU KV cache size: 973,760 tokens
    #   (EngineCore_DP0 pid=1805889) INFO 10-23 15:14:30 [kv_cache_utils.py:1032] Maximum concurrency for 262,144
    #   tokens per request: 14.77x
    groups, tokens, conc = _printed(QWEN3_NEXT, "0.10.2", 2, "auto", 44.59, 262144)
    assert (groups.block_size, groups.groups, groups.group_size) == (544, 4, 12)
    assert abs(tokens - 973_760) <= 544  # 44.59 GiB is printed to 0.01 GiB
    assert conc == pytest.approx(14.77, abs=0.01)


def test_qwen3_next_4_bit_with_an_fp8_cache_on_two_l40s() -> None:
    # https://github.com/search?q=%22GPU+KV+cache+size%3A+767%2C552+tokens%22&type=code (docker-compose logs of
    # vLLM 0.13.0, --kv-cache-dtype fp8, --max-model-len 32768, TP 2):
    #   (APIServer pid=1) INFO 02-12 19:46:31 [config.py:439] Setting attention block size to 1072 tokens to ensure
    #   that attention page size is >= mamba page size.
    #   (Worker_TP0 pid=306) INFO 02-12 19:50:09 [gpu_worker.py:375] Available KV cache memory: 17.58 GiB
    #   (EngineCore_DP0 pid=241) INFO 02-12 19:50:09 [kv_cache_utils.py:1291] GPU KV cache size: 767,552 tokens
    #   (EngineCore_DP0 pid=241) INFO 02-12 19:50:09 [kv_cache_utils.py:1296] Maximum concurrency for 32,768 tokens
    #   per request: 84.29x
    groups, tokens, conc = _printed(QWEN3_NEXT, "0.13.0", 2, "fp8", 17.58, 32768)
    assert groups.block_size == 1072  # the recurrent state stays in bf16: its page is twice the fp8 attention's
    assert abs(tokens - 767_552) <= 1072
    assert conc == pytest.approx(84.29, abs=0.05)


def test_gpt_oss_120b_on_one_h100() -> None:
    # https://blog.huikang.dev/2025/12/28/vllm-logs.html (vLLM 0.11.2, gpu_memory_utilization 0.96,
    # max_model_len 98304):
    #   (EngineCore_DP0 pid=289) INFO 11-28 11:58:41 [gpu_worker.py:359] Available KV cache memory: 8.99 GiB
    #   (EngineCore_DP0 pid=289) INFO 11-28 11:58:41 [kv_cache_utils.py:1229] GPU KV cache size: 130,960 tokens
    #   (EngineCore_DP0 pid=289) INFO 11-28 11:58:41 [kv_cache_utils.py:1234] Maximum concurrency for 98,304
    #   tokens per request: 2.46x
    groups, tokens, conc = _printed(GPT_OSS_120B, "0.11.2", 1, "auto", 8.99, 98304)
    assert (groups.block_size, groups.groups) == (16, 2)
    assert abs(tokens - 130_960) <= 80  # 0.005 GiB of print rounding is 9 blocks of the pool, 4.5 per group
    assert conc == pytest.approx(2.46, abs=0.01)


def test_the_printed_figure_changed_meaning_in_0_21_but_not_the_longest_request() -> None:
    # up to 0.20 vLLM prints the blocks shared among its groups; from 0.21 concurrency x max_model_len. The
    # longest request the cache holds is the same in both: what max_model_len is checked against
    info = model_info_from_config(QWEN3_NEXT)

    def at(version: str) -> Any:
        p = PlannerParams(engine="v1", vllm_version=version, max_num_batched_tokens=8192)
        return budget(info, int(139.8 * GiB), 0.9, tp=2, max_model_len=262144, params=p)

    old, new = at("0.20.0"), at("0.21.0")
    assert old.kv_bytes == new.kv_bytes
    assert old.kv_tokens < new.kv_tokens == int(new.concurrency_at(262144) * 262144)
    assert old.longest_request == new.longest_request > 3 * old.kv_tokens  # 4 groups share the blocks
    # a sliding-window request keeps its window and the batches in flight, a linear-attention one its states
    assert old.longest_request < old.blocks * old.block_size


def test_a_plan_for_a_hybrid_model_is_made_on_the_longest_request() -> None:
    info = model_info_from_config(QWEN3_NEXT)
    p = PlannerParams(engine="v1", vllm_version="0.11.0")
    plan = first_fit(info, [int(139.8 * GiB)] * 2, tp=2, params=p)
    assert plan.fits and plan.max_model_len == 262144
    # counting every layer as full attention would have held 4x fewer tokens per request
    assert plan.budget.longest_request > 3 * plan.budget.kv_tokens
    # V0 and V1 before 0.9.2 treat sliding-window layers as full ones: no groups
    gpt = model_info_from_config(GPT_OSS_120B)
    assert kv_groups(gpt, params=PlannerParams(engine="v1", vllm_version="0.9.0")) is None
    assert kv_groups(gpt, params=PlannerParams(engine="v0")) is None


def test_plan_plans_a_hybrid_model(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    model = tmp_path / "Qwen3-Next-80B-A3B-Instruct"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN3_NEXT))
    r = cli("plan", "--model", model, "--gpu", "80GiB", "--tp", "4", "--vllm-version", "0.11.0", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["hybrid"] == "12 full-attention + 36 linear-attention (Gated DeltaNet) layers"
    assert out["longest_request"] > out["kv_tokens"] > 0
    assert any(row["item"] == "longest request" for row in out["budget"])


def test_a_hybrids_start_log_calibrates_on_its_gib_figure() -> None:
    # the token figure of a hybrid is not tokens x bytes per token: from 0.21 it is concurrency x max_model_len
    from vllm_guard.core.planner import Reported, reported_kv_bytes

    info = model_info_from_config(QWEN3_NEXT)
    common = {"gpu_bytes": int(139.8 * GiB), "util": 0.9, "tp": 2}
    with_gib = Reported(**common, kv_tokens=1_741_753, kv_cache_bytes=int(44.59 * GiB), vllm_version="0.22.0")
    assert reported_kv_bytes(info, with_gib) == int(44.59 * GiB)
    assert reported_kv_bytes(info, Reported(**common, kv_tokens=1_741_753, vllm_version="0.22.0")) is None
    # up to 0.20 the figure is the blocks shared among the groups: the pool's bytes follow
    shared = reported_kv_bytes(info, Reported(**common, kv_tokens=973_760, vllm_version="0.10.2"))
    assert shared is not None and abs(shared - 44.59 * GiB) < 0.03 * GiB  # to the groups x one block


def test_a_quantization_the_planner_does_not_know_is_said(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    # gpt-oss's MXFP4 checkpoint from its config.json alone: the weights are estimated at 16 bits, and the plan says so
    model = tmp_path / "gpt-oss-120b"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({**GPT_OSS_120B, "quantization_config": {"quant_method": "mxfp4"}}))
    out = json.loads(cli("plan", "--model", model, "--gpu", "80GiB", "--json").out)
    assert any("quantization (mxfp4) is not modelled" in n for n in out["notes"]), out["notes"]


def test_qwen3_next_weights_as_vllm_loads_them() -> None:
    # vLLM builds a Gated DeltaNet layer in place of attention in three layers of four, and gives the full-attention
    # layers a gated query projection twice as wide (vllm/model_executor/models/qwen3_next.py). The same start as
    # test_qwen3_next_on_two_h200s printed, per rank of TP 2:
    #   (Worker_TP0 pid=1806413) INFO 10-23 15:14:18 [gpu_model_runner.py:2392] Model loading took 74.2812 GiB and
    #   215.831224 seconds
    info = model_info_from_config(QWEN3_NEXT)
    assert info.attn_output_gate and info.hybrid is not None and info.hybrid.linear == 36
    per_rank = info.estimated_weight_bytes() / 2 / GiB
    assert abs(per_rank - 74.2812) < 0.2, per_rank  # counted as 48 attention layers it was 73.6
    # a GDN layer: q, k, v, z (2 x 2048 + 2 x 4096 wide), b and a (32 each), the conv over q, k and v (8192 x 4),
    # A_log and dt_bias, the gated norm (128) and the output projection (4096 -> 2048)
    h = 2048
    assert info._gated_delta_net_params() == h * 12288 + h * 64 + 8192 * 4 + 64 + 128 + 4096 * h


# The text and vision geometry of a Qwen3.5 dense checkpoint of 27B (Qwen3_5ForConditionalGeneration: the config
# nests text_config and vision_config; 64 layers, every fourth full attention; the keys the planner reads)
QWEN35_27B: dict[str, Any] = {
    "architectures": ["Qwen3_5ForConditionalGeneration"],
    "model_type": "qwen3_5",
    "tie_word_embeddings": False,
    "text_config": {
        "model_type": "qwen3_5_text",
        "attn_output_gate": True,
        "dtype": "bfloat16",
        "head_dim": 256,
        "hidden_size": 5120,
        "intermediate_size": 17408,
        "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 16,
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 48,
        "linear_value_head_dim": 128,
        "mamba_ssm_dtype": "float32",
        "max_position_embeddings": 262144,
        "num_attention_heads": 24,
        "num_hidden_layers": 64,
        "num_key_value_heads": 4,
        "vocab_size": 248320,
    },
    "vision_config": {
        "model_type": "qwen3_5_vision",
        "depth": 27,
        "hidden_size": 1152,
        "intermediate_size": 4304,
        "num_heads": 16,
        "in_channels": 3,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "out_hidden_size": 5120,
        "num_position_embeddings": 2304,
    },
}


def test_qwen3_5_is_read_as_vllm_builds_it() -> None:
    # vllm/model_executor/models/qwen3_5.py: Qwen3.5 decoder layers are Qwen3-Next's (GDN or gated attention, a
    # dense MLP), its vision tower and processor Qwen3-VL's, and its loader skips the checkpoint's "mtp." layer
    info = model_info_from_config(QWEN35_27B)
    assert info.hybrid is not None and (info.hybrid.full, info.hybrid.linear) == (16, 48)
    assert info.attn_output_gate and info.vision is not None and info.vision.kind == "qwen3_vl"
    h, layers = 5120, 64
    full_attn = h * 6144 * 2 + 2 * h * 1024 + 6144 * h + 6144 + 2 * 1024
    mlp = 3 * h * 17408
    gdn = info._gated_delta_net_params()
    assert info.param_count() == 16 * full_attn + 48 * gdn + layers * (mlp + 2 * h) + 2 * 248320 * h + h
    assert 26.8e9 < info.param_count() < 27.0e9
    headers = [
        (
            "a.safetensors",
            100,
            {
                "model.language_model.w": {"dtype": "BF16", "shape": [10], "data_offsets": [0, 1000]},
                "model.visual.w": {"dtype": "BF16", "shape": [2], "data_offsets": [1000, 1300]},
                "mtp.w": {"dtype": "BF16", "shape": [3], "data_offsets": [1300, 1800]},
            },
        )
    ]
    with_w = info.with_weights(weights_from_headers(headers))
    assert with_w.estimated_weight_bytes() == 1300  # the MTP layer is loaded only by a draft model
    assert with_w.vision_weight_bytes() == 300


def test_qwen3_5_keeps_its_recurrent_state_in_float32() -> None:
    # Qwen3.5's config.json sets mamba_ssm_dtype float32, which vLLM takes as --mamba-ssm-cache-dtype from 0.16
    # (vllm-project/vllm#34489): the recurrent state in float32, the conv state in the model's dtype. A start of
    # kaitchup/Qwen3.5-27B-autoround-W4A16 on vLLM 0.19.1, TP 1, bf16, an lm-eval run quoted in a committed agent
    # transcript (https://github.com/search?q=%22kaitchup%2FQwen3.5-27B-autoround-W4A16%22&type=code):
    #   INFO 04-25 03:28:52 [config.py:281] Setting attention block size to 784 tokens to ensure that attention
    #   page size is >= mamba page size.
    #   INFO 04-25 03:28:52 [config.py:312] Padding mamba page size by 0.13% to ensure that mamba page size and
    #   attention page size are exactly equal.
    info = model_info_from_config(QWEN35_27B)
    assert info.hybrid is not None and info.hybrid.ssm_state_bytes == 4
    groups = kv_groups(info, "auto", tp=1, params=PlannerParams(engine="v1", vllm_version="0.19.1"))
    assert groups is not None and groups.block_size == 784
    state = 3 * (2 * 16 * 128 + 48 * 128) * 2 + 48 * 128 * 128 * 4  # conv (bf16) + recurrent (fp32)
    assert round(100 * (groups.page - state) / state, 2) == 0.13
    # in bf16 the state would fit blocks of 400 tokens
    bf16 = {**QWEN35_27B, "text_config": {**QWEN35_27B["text_config"], "mamba_ssm_dtype": "bfloat16"}}
    half = kv_groups(
        model_info_from_config(bf16), "auto", tp=1, params=PlannerParams(engine="v1", vllm_version="0.19.1")
    )
    assert half is not None and half.block_size == 400


def test_a_plan_for_a_hybrid_model_keeps_max_num_seqs_within_its_state_blocks() -> None:
    # from 0.19 vLLM refuses max_num_seqs above the state blocks ("max_num_seqs (1024) exceeds available Mamba
    # cache blocks (856)": vllm-project/recipes#551, Qwen3.6-27B-FP8 on one H100): the plan keeps below them
    from vllm_guard.core.planner import state_block_seqs

    info = model_info_from_config(QWEN35_27B)
    p = PlannerParams(engine="v1", vllm_version="0.26.0")
    plan = first_fit(info, [int(79.19 * GiB)], max_model_len=32768, params=p, margin=0.10)
    assert plan.fits
    cap = state_block_seqs(info, plan.budget, p, 0.10)
    assert cap is not None and plan.max_num_seqs <= cap < plan.budget.blocks
    assert any("state" in n and "refuses" in n for n in plan.notes), plan.notes
    # a model of full-attention layers only has no such limit
    assert state_block_seqs(model_info_from_config(QWEN3_NEXT | {"full_attention_interval": 1}), plan.budget, p) is None


def test_preflight_starts_a_hybrid_model_with_fewer_sequences_than_its_state_blocks() -> None:
    from vllm_guard.core.config import Flags, Target
    from vllm_guard.core.preflight import check_gpu
    from vllm_guard.core.state import base_current

    info = model_info_from_config(QWEN35_27B)
    t = Target(model="/models/q35", flags=Flags(max_model_len=32768, max_num_seqs=1024))
    fit = check_gpu(t, base_current(t), info, [int(79.19 * GiB)], vllm_version="0.26.0")
    assert fit.current is not None and fit.current.flags.max_model_len == 32768
    assert fit.current.flags.max_num_seqs is not None and fit.current.flags.max_num_seqs < 400
    assert "state blocks" in fit.reason
    # a release before 0.19 capped its CUDA graphs instead of refusing: the flags stay
    assert check_gpu(t, base_current(t), info, [int(79.19 * GiB)], vllm_version="0.18.0").current is None
    # few enough sequences: nothing to do
    few = Target(model="/models/q35", flags=Flags(max_model_len=32768, max_num_seqs=64))
    assert check_gpu(few, base_current(few), info, [int(79.19 * GiB)], vllm_version="0.26.0").current is None


def test_preflight_predicts_nothing_under_speculative_decoding() -> None:
    # the draft (a model, or the checkpoint's MTP layers the served model skips) is not counted: no prediction
    from vllm_guard.core.config import Flags, Target
    from vllm_guard.core.preflight import check_gpu
    from vllm_guard.core.state import base_current

    info = model_info_from_config(QWEN35_27B)
    spec = Target(
        model="/models/q35",
        flags=Flags(max_model_len=262144, max_num_seqs=1024),
        extra_args=['--speculative-config={"method": "qwen3_next_mtp", "num_speculative_tokens": 2}'],
    )
    fit = check_gpu(spec, base_current(spec), info, [int(79.19 * GiB)], vllm_version="0.26.0")
    assert fit.current is None and "speculative decoding" in fit.reason


def test_qwen3_5_on_0_19_prints_the_blocks_shared_among_its_groups() -> None:
    # https://github.com/vllm-project/vllm/issues/40691 ("The KV cache size log is wrong for Qwen3.5", vLLM 0.19.0,
    # Qwen3.5-27B, --max-model-len 32768 --max-num-seqs 16):
    #   INFO [kv_cache_utils.py:1319] GPU KV cache size: 290,864 tokens
    #   INFO [kv_cache_utils.py:1324] Maximum concurrency for 32,768 tokens per request: 33.04x
    # The two figures pin the pool whatever the card: 290,864 is 371 blocks of 784 (one group's share of four), and
    # 33.04 requests of 42 full-attention blocks and one state block in each of the three linear groups.
    info = model_info_from_config(QWEN35_27B)
    groups = kv_groups(info, "auto", tp=1, params=PlannerParams(engine="v1", vllm_version="0.19.0"))
    assert groups is not None and (groups.block_size, groups.groups) == (784, 4)
    assert groups.blocks_per_request(32768) == 42 + 3
    pools = [n for n in range(1400, 1600) if groups.reported_tokens(n, 32768) == 290_864]
    assert pools == [1484, 1485, 1486, 1487]
    assert round(1487 / groups.blocks_per_request(32768), 2) == 33.04  # the pool both figures allow
