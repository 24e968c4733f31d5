"""The sealed part of the planner's published cases: starts of vLLM gathered after the held-out part was seen.

The held-out part of bench/planner_cases.py stopped being blind once a term derived from vLLM's source (the dummy
sampler's memory) was added after its errors had been looked at. These cases were gathered on
``SEALED_DATE`` from sources used by no other case, written here and committed before the planner was run on any
of them (the commit that adds a case carries no change to src/). They set no constant of the planner. A case
moved out after its error was seen goes to ``MOVED`` with the reason; then the part's figure is no longer blind,
and the bench says so.

Same format and care as bench/planner_cases.py: vLLM's own lines quoted verbatim in ``quote``, the GPU, util,
flags, model and vLLM version as the source states them, and the source's address.
"""

from __future__ import annotations

from planner_cases import (
    AWQ_4BIT,
    HF,
    LLAMA2_7B,
    LLAMA31_8B,
    LLAMA32_3B,
    QWEN3_06B,
    QWEN25_05B,
    QWEN25_3B,
    QWEN25_15B_INSTRUCT,
    SEARCH,
    Case,
    cfg,
    shape,
)
from planner_cases_fifth import FIFTH_BATCH, FIFTH_DATE, LEFT_OUT_FIFTH
from planner_cases_fourth import FOURTH_BATCH, FOURTH_DATE, LEFT_OUT_FOURTH
from planner_cases_third import LEFT_OUT_THIRD, THIRD_BATCH, THIRD_DATE

SEALED_DATE = "2026-12-01"
# Cases moved between parts after their error was seen: name -> reason. Empty: none was moved.
MOVED: dict[str, str] = {}
# Facts added to a case after its error was seen (the first run's figures are in bench/RESULTS-planner.md):
# source -> what was added and where it is stated. The part's figure is then no longer blind, and the bench says so.
CORRECTED: dict[str, str] = {
    "dennislee22/vLLM-benchmarking": "which sampler path each start took, as its log prints it: 'Using FlashInfer "
    "for top-p & top-k sampling.' (the four single-node starts) or 'FlashInfer is not available. Falling back to "
    "the PyTorch-native implementation of top-p & top-k sampling.' (the two-node Ray start): params "
    "flashinfer_sampler True/False, the planner's input for what a host's install does",
}

# Rules of the planner (each from vLLM's source, no constant fitted) added after a batch's run, with the sealed cases
# whose error or log prompted them: rule -> case names. A batch holding such a case is no longer blind, and the bench
# says so; the batches' blind figures are in bench/RESULTS-planner.md.
RULES_AFTER: dict[str, tuple[str, ...]] = {
    "Mixtral-style MoE configs: experts as wide as intermediate_size (core/modelinfo.py)": (
        "granite-3.0-3b-a800m-instruct (MoE), L40S, util 0.90, V1 0.7.3, len 4096",
    ),
    "V0's profile sampler sorts one row per dummy sequence (planner.v0_sampler_path), in place of two fitted float32 "
    "copies": (
        "Phi-4 AutoRound GPTQ 4-bit, 80GB card (79.25 GiB), util 0.15, V0 0.6.5, len 2048",
        "Qwen2.5-3B-Instruct fp16, Colab Tesla T4 (14.56 GiB), util 0.90, V0 0.6.6.post1, eager, len 4096",
    ),
    "V1's batch defaults by the GPU's name and release (planner.large_batch_gpu): an A100 keeps the small ones from "
    "0.9.0": (
        "Qwen2-7B-Instruct, A100 80GB, util 0.25, V1 0.10.1.1, len 16384",
        "Llama-2-7b-hf, A100 80GB PCIe, util 0.90, V1 0.19.0, len 2048",
    ),
}

# --- dennislee22/vLLM-benchmarking: committed start-up logs, Qwen2-7B-Instruct, vLLM 0.10.1.1 (V1) ---------------
DL = "https://github.com/dennislee22/vLLM-benchmarking/blob/b474d1e053c35c9aef8c02aae4efbc0d8675f033/"
DL_SOURCE = "dennislee22/vLLM-benchmarking"
DL_VERSION = "0.10.1.1 ('vLLM API server version 0.10.1.1', 'Initializing a V1 LLM engine (v0.10.1.1)')"
DL_MODEL_SOURCE = (
    "tests/data/models/Qwen2.5-7B-Instruct (Qwen2-7B-Instruct has the same shape: 28 layers, 3584 hidden, 28 heads, "
    "4 KV heads, 18944 intermediate, vocab 152064, 32768 positions; both load as 'Model loading took 14.2488 GiB')"
)
A100_80 = (
    "A100 80GB; total not printed in these logs: 79.15 GiB, the A100-80GB total of vllm-project/vllm#2031 (as "
    "planner_cases uses for that card)"
)
A100_40 = (
    "A100 40GB (the log file's name: 2gpuA10040GB); total not printed. 39.56 GiB as vLLM printed it for a Colab "
    "A100 40GB (planner_cases, Phi-4-mini case: total_gpu_memory (39.56GiB)); A100 40GB totals of 39.39-39.59 GiB "
    "are seen, so at util 0.5 the budget is uncertain by ~0.1 GiB"
)
QWEN2_7B = cfg("Qwen2.5-7B-Instruct")

# --- other sources ---------------------------------------------------------------------------------------------
PHI4_GPTQ = {  # kaitchup/Phi-4-AutoRound-GPTQ-4bit: microsoft/phi-4's shape, 4-bit GPTQ weights
    "architectures": ["Phi3ForCausalLM"],
    "model_type": "phi3",
    "num_hidden_layers": 40,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 10,
    "intermediate_size": 17920,
    "vocab_size": 100352,
    "max_position_embeddings": 16384,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True},
}
GRANITE_30_3B_A800M = {  # ibm-granite/granite-3.0-3b-a800m-instruct
    "architectures": ["GraniteMoeForCausalLM"],
    "model_type": "granitemoe",
    "num_hidden_layers": 32,
    "hidden_size": 1536,
    "num_attention_heads": 24,
    "num_key_value_heads": 8,
    "intermediate_size": 512,
    "num_local_experts": 40,
    "num_experts_per_tok": 8,
    "vocab_size": 49155,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
L40S_TOTAL = "L40S total as vLLM prints it in vllm#15815 (total_gpu_memory (44.42GiB)), as planner_cases uses"

# --- model shapes --------------------------------------------------------------------------------------------------

QWEN3_17B = {  # Qwen/Qwen3-1.7B
    "architectures": ["Qwen3ForCausalLM"],
    "num_hidden_layers": 28,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 6144,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
QWEN3_17B_SOURCE = (
    HF.format("Qwen/Qwen3-1.7B") + " (a public copy quoted in a test fixture, '_name_or_path': 'Qwen/Qwen3-1.7B', "
    "agrees: hidden 2048, intermediate 6144, 16 heads, 8 KV heads, 28 layers, head_dim 128, vocab 151936, tied "
    "embeddings; max_position_embeddings 40960 as every Qwen3 dense config; find it with "
    + SEARCH.format("%22test_inspect_qwen3_checkpoint_recognizes_1_7b_tied_embeddings%22")
    + ")"
)
QWEN3_8B_AWQ = cfg("Qwen3-8B", torch_dtype="float16", quantization_config=AWQ_4BIT)  # Qwen/Qwen3-8B-AWQ
QWEN25_15B_INSTRUCT_AWQ = shape(  # Qwen/Qwen2.5-1.5B-Instruct-AWQ
    QWEN25_15B_INSTRUCT, torch_dtype="float16", quantization_config=AWQ_4BIT
)
LLAMA3_70B_AWQ = {  # TechxGenus/Meta-Llama-3-70B-Instruct-AWQ (Meta-Llama-3-70B-Instruct shape, 4-bit AWQ)
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
    "quantization_config": AWQ_4BIT,
}

# --- GPU totals ----------------------------------------------------------------------------------------------------

RTX5090_TOTAL = (
    "RTX 5090 total as torch reports it: 'GPU 0 has a total capacity of 31.36 GiB' (the most common figure in "
    "public OOM messages; 31.34, 31.37 and 31.39 GiB are also seen, so +-0.03 GiB, i.e. +-0.03 GiB of budget at 0.9)"
)
RTX5060TI_TOTAL = (
    "RTX 5060 Ti 16GB total as torch reports it, 'GPU 0 has a total capacity of 15.48 GiB' (several public notes, "
    "one saying 'RTX 5060 Ti (15.48 GiB usable)'; a Vast.ai 2x 5060 Ti log also prints 'per-GPU total: 15.48 GiB'). "
    "Consistent with this source's own nvidia-smi: 16,311 MiB total, 15 MiB used, 15,834 MiB free (16311-462)"
)
H200_TOTAL = (
    "H200 141GB total as torch reports it: 'GPU 0 has a total capacity of 139.80 GiB' (most public OOM messages; "
    "139.81 and 139.72 also seen); not printed by this source, which names the card only as 'H200'"
)
V100_32_TOTAL = (
    "V100 32GB total as vLLM printed it in planner_cases (total_gpu_memory 31.74GiB); the source's config.py "
    "names a V100 (80 SMs, 6 MB L2) and the log shows a compute capability below 8.0; the 32 GB size is implied by "
    "14.25 GiB of weights plus 13.1 GiB of KV cache at util 0.9"
)
A100_40_TOTAL = (
    "A100-SXM4-40GB total as torch reports it, 39.49 GiB ('NVIDIA A100-SXM4-40GB (39.49 GiB usable)' and "
    "'(39.49 GB)' in several public notes; 39.4-39.6 also seen, so +-0.1 GiB); this source shows nvidia-smi "
    "40960MiB total and 39062MiB used after the start"
)
T4_SOURCE = "printed by the notebook with torch: 'GPU 0: Tesla T4; free=14.46 GiB / total=14.56 GiB'"

# --- sources ---------------------------------------------------------------------------------------------------------

WHET_URL = SEARCH.format("%22GPU+KV+cache+size%3A+226%2C800+tokens%22")
SOROUSH = "https://github.com/SoroushVahidi/llm-serving-heuristic-evolution/blob/{}/experiments/real_vllm_mechanism_validation_v1/"
SOROUSH_SOURCE = "SoroushVahidi/llm-serving-heuristic-evolution"
SOROUSH_MODEL_SOURCE = (
    HF.format("Qwen/Qwen2.5-0.5B-Instruct") + " (the source's own summary of its config: 'Qwen2, 24 layers, hidden "
    "size 896, 14 attention heads, 2 KV heads, bf16, max position embeddings 32,768'; same shape as Qwen2.5-0.5B)"
)
AVATAR = "https://github.com/kishuxz/multimodal-avatar/blob/{}/"
AVATAR_SOURCE = "kishuxz/multimodal-avatar"
AVATAR_VERSION = "0.19.1 ('version 0.19.1' banner, 'Initializing a V1 LLM engine (v0.19.1)')"
AVATAR_GPU = (
    "NVIDIA H200 (docs/decisions.md, 'H200 environment rebuild: forced down to vLLM 0.19.1'; driver 570.124.06)"
)
AVATAR_NOTE = (
    "Committed startup-only server log (results/h200/), copied by scripts/sweep.sh right after the server was ready "
    "and cold. docs/decisions.md quotes this fp16 arm's 'Available KV cache memory: 120.53 GiB' and 'GPU KV cache "
    "size: 4,513,888 tokens' 'at --gpu-memory-utilization 0.9' on the H200 pod. vLLM 0.19.1 computes a CUDA-graph "
    "estimate but does not yet subtract it (it prints the util that would keep the KV size once it does). Prefix "
    "caching off, chunked prefill on with the printed max_num_batched_tokens=8192, cudagraph FULL_AND_PIECEWISE up "
    "to 512. The log also prints 'Overriding num_gpu_blocks=0 with num_gpu_blocks_override=512' during the graph "
    "profile (a dummy pool, not the final one)."
)

# --- model shapes ------------------------------------------------------------------------------------------------

QWEN3_4B = {  # Qwen/Qwen3-4B
    "architectures": ["Qwen3ForCausalLM"],
    "num_hidden_layers": 36,
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 9728,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
RHO_1B = {  # realtreetune/rho-1b-sft-GSM8K: microsoft/rho-math-1b-v0.1 (a TinyLlama-1.1B continual pre-train), SFT'd
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 22,
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "intermediate_size": 5632,
    "vocab_size": 32000,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

# --- sources -----------------------------------------------------------------------------------------------------

DQ = "https://github.com/jackypanster/deploy-qwen/blob/134cc5283593077495136b3e236bff6d2bea164d/"
LG = "https://github.com/Q07K/langgraph-mcp-example/blob/afb94e85926fc0afaff5d7893d37bfb090a79951/"
RG = "https://github.com/eformat/ragit-dev/blob/86cfcd6d42cfe98573b31b0ea956ec8c55a4b56f/"
GC = "https://github.com/suesie/grpocredit/blob/88b0022f5291931bec979e59cbcc4d53aec31dcc/"

FIRST_BATCH: list[Case] = [
    Case(
        "Qwen2-7B-Instruct, A100 80GB, util 0.25, V1 0.10.1.1, len 16384",
        DL + "log/vllm-7B-1gpuA10080GB-0.25GRAM.log",
        QWEN2_7B,
        79.15,
        0.25,
        93872,
        max_model_len=16384,
        batched_tokens=2048,
        max_num_seqs=256,
        note="vLLM 0.9.2+ keeps its small batch defaults on an A100 (max_num_batched_tokens 2048, printed; "
        "max_num_seqs 256). Test 4 of the README; prefix caching on (V1 default)",
        part="sealed",
        vllm="0.10.1.1",
        source=DL_SOURCE,
        log="dennislee22 7B 1xA100-80GB util 0.25",
        params={"flashinfer_sampler": True},
        quote=(
            "(APIServer pid=1671) INFO 09-04 01:02:21 [utils.py:326] non-default args: {'model_tag': "
            "'Qwen2-7B-Instruct', 'port': 8081, 'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384, "
            "'gpu_memory_utilization': 0.25}",
            "(APIServer pid=1671) INFO 09-04 01:02:38 [scheduler.py:222] Chunked prefill is enabled with "
            "max_num_batched_tokens=2048.",
            "(EngineCore_0 pid=1812) INFO 09-04 01:03:03 [gpu_model_runner.py:2007] Model loading took 14.2488 GiB "
            "and 4.422213 seconds",
            "(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [gpu_worker.py:276] Available KV cache memory: 5.01 GiB",
            "(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [kv_cache_utils.py:849] GPU KV cache size: 93,872 tokens",
            "(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [kv_cache_utils.py:853] Maximum concurrency for 16,384 "
            "tokens per request: 5.73x",
            "(EngineCore_0 pid=1812) INFO 09-04 01:04:32 [gpu_model_runner.py:2708] Graph capturing finished in 3 "
            "secs, took 0.50 GiB",
            "num_gpu_blocks is: 5867",
        ),
        reported="tokens",
        gpu="NVIDIA A100 80GB (README: 'tested on a system equipped with NVIDIA A100 80GB GPU'; file name 1gpuA10080GB)",
        gpu_source=A100_80,
        version=DL_VERSION,
        flags="vllm serve Qwen2-7B-Instruct --port 8081 --max-model-len 16384 --gpu-memory-utilization 0.25 "
        "(dtype bfloat16, enforce_eager False, kv_cache_dtype auto, as the engine config prints)",
        model_source=DL_MODEL_SOURCE,
    ),
    Case(
        "Qwen2-7B-Instruct, A100 80GB, util 0.50, V1 0.10.1.1, len 16384",
        DL + "log/vllm-7B-1gpuA10080GB-0.5GRAM.log",
        QWEN2_7B,
        79.15,
        0.50,
        464848,
        max_model_len=16384,
        batched_tokens=2048,
        max_num_seqs=256,
        note="vLLM 0.9.2+ keeps its small batch defaults on an A100 (max_num_batched_tokens 2048, printed; "
        "max_num_seqs 256). Test 5 of the README; prefix caching on (V1 default)",
        part="sealed",
        vllm="0.10.1.1",
        source=DL_SOURCE,
        log="dennislee22 7B 1xA100-80GB util 0.5",
        params={"flashinfer_sampler": True},
        quote=(
            "(APIServer pid=2739) INFO 09-04 01:28:28 [utils.py:326] non-default args: {'model_tag': "
            "'Qwen2-7B-Instruct', 'port': 8081, 'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384, "
            "'gpu_memory_utilization': 0.5}",
            "(APIServer pid=2739) INFO 09-04 01:28:44 [scheduler.py:222] Chunked prefill is enabled with "
            "max_num_batched_tokens=2048.",
            "(EngineCore_0 pid=2881) INFO 09-04 01:29:05 [gpu_model_runner.py:2007] Model loading took 14.2488 GiB "
            "and 2.993822 seconds",
            "(EngineCore_0 pid=2881) INFO 09-04 01:29:25 [gpu_worker.py:276] Available KV cache memory: 24.83 GiB",
            "(EngineCore_0 pid=2881) INFO 09-04 01:29:26 [kv_cache_utils.py:849] GPU KV cache size: 464,848 tokens",
            "(EngineCore_0 pid=2881) INFO 09-04 01:29:26 [kv_cache_utils.py:853] Maximum concurrency for 16,384 "
            "tokens per request: 28.37x",
            "(EngineCore_0 pid=2881) INFO 09-04 01:29:29 [gpu_model_runner.py:2708] Graph capturing finished in 3 "
            "secs, took 0.50 GiB",
            "num_gpu_blocks is: 29053",
        ),
        reported="tokens",
        gpu="NVIDIA A100 80GB (file name 1gpuA10080GB)",
        gpu_source=A100_80,
        version=DL_VERSION,
        flags="vllm serve Qwen2-7B-Instruct --port 8081 --max-model-len 16384 --gpu-memory-utilization 0.5",
        model_source=DL_MODEL_SOURCE,
    ),
    Case(
        "Qwen2-7B-Instruct, 2x A100 80GB, util 0.25, TP2, V1 0.10.1.1, len 16384",
        DL + "log/vllm-7B-2gpuA10080GB-0.25GRAM-same-node.log",
        QWEN2_7B,
        79.15,
        0.25,
        450192,
        tp=2,
        max_model_len=16384,
        batched_tokens=2048,
        max_num_seqs=256,
        note="vLLM 0.9.2+ keeps its small batch defaults on an A100 (max_num_batched_tokens 2048, printed; "
        "max_num_seqs 256). Test 2 of the README; one node, multiproc TP workers, custom all-reduce disabled (no P2P); tokens are "
        "per TP worker (28137 blocks x 16)",
        part="sealed",
        vllm="0.10.1.1",
        source=DL_SOURCE,
        log="dennislee22 7B 2xA100-80GB TP2 util 0.25",
        params={"flashinfer_sampler": True},
        quote=(
            "(APIServer pid=1217) INFO 09-03 00:35:55 [utils.py:326] non-default args: {'model_tag': "
            "'Qwen2-7B-Instruct', 'port': 8081, 'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384, "
            "'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.25}",
            "(VllmWorker TP0 pid=1430) INFO 09-03 00:39:33 [gpu_model_runner.py:2007] Model loading took 7.1217 GiB "
            "and 168.264821 seconds",
            "(VllmWorker TP0 pid=1430) INFO 09-03 00:40:53 [gpu_worker.py:276] Available KV cache memory: 12.02 GiB",
            "(VllmWorker TP1 pid=1431) INFO 09-03 00:40:55 [gpu_worker.py:276] Available KV cache memory: 12.02 GiB",
            "(EngineCore_0 pid=1358) INFO 09-03 00:40:55 [kv_cache_utils.py:849] GPU KV cache size: 450,192 tokens",
            "(EngineCore_0 pid=1358) INFO 09-03 00:40:55 [kv_cache_utils.py:853] Maximum concurrency for 16,384 "
            "tokens per request: 27.48x",
            "(VllmWorker TP0 pid=1430) INFO 09-03 00:41:00 [gpu_model_runner.py:2708] Graph capturing finished in 4 "
            "secs, took 0.65 GiB",
            "(APIServer pid=1217) INFO 09-03 00:41:00 [loggers.py:142] Engine 000: vllm cache_config_info with "
            "initialization after num_gpu_blocks is: 28137",
        ),
        reported="tokens",
        gpu="2x NVIDIA A100 80GB, same node (file name 2gpuA10080GB ... same-node)",
        gpu_source=A100_80,
        version=DL_VERSION,
        flags="vllm serve Qwen2-7B-Instruct --port 8081 --max-model-len 16384 --tensor-parallel-size 2 "
        "--gpu-memory-utilization 0.25",
        model_source=DL_MODEL_SOURCE,
    ),
    Case(
        "Qwen2-7B-Instruct, 2x A100 80GB, util 0.50, TP2, V1 0.10.1.1, len 16384",
        DL + "log/vllm-7B-2gpuA10080GB-0.5GRAM-same-node.log",
        QWEN2_7B,
        79.15,
        0.50,
        1192160,
        tp=2,
        max_model_len=16384,
        batched_tokens=2048,
        max_num_seqs=256,
        note="vLLM 0.9.2+ keeps its small batch defaults on an A100 (max_num_batched_tokens 2048, printed; "
        "max_num_seqs 256). Test 3 of the README; one node, multiproc TP workers, custom all-reduce disabled (no P2P); tokens are "
        "per TP worker (74510 blocks x 16)",
        part="sealed",
        vllm="0.10.1.1",
        source=DL_SOURCE,
        log="dennislee22 7B 2xA100-80GB TP2 util 0.5",
        params={"flashinfer_sampler": True},
        quote=(
            "(APIServer pid=3761) INFO 09-03 02:11:14 [utils.py:326] non-default args: {'model_tag': "
            "'Qwen2-7B-Instruct', 'port': 8081, 'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384, "
            "'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.5}",
            "(VllmWorker TP0 pid=3974) INFO 09-03 02:12:04 [gpu_model_runner.py:2007] Model loading took 7.1217 GiB "
            "and 2.887189 seconds",
            "(VllmWorker TP0 pid=3974) INFO 09-03 02:12:25 [gpu_worker.py:276] Available KV cache memory: 31.83 GiB",
            "(EngineCore_0 pid=3902) INFO 09-03 02:12:26 [kv_cache_utils.py:849] GPU KV cache size: 1,192,160 tokens",
            "(EngineCore_0 pid=3902) INFO 09-03 02:12:26 [kv_cache_utils.py:853] Maximum concurrency for 16,384 "
            "tokens per request: 72.76x",
            "(VllmWorker TP0 pid=3974) INFO 09-03 02:12:30 [gpu_model_runner.py:2708] Graph capturing finished in 4 "
            "secs, took 0.65 GiB",
            "num_gpu_blocks is: 74510",
        ),
        reported="tokens",
        gpu="2x NVIDIA A100 80GB, same node",
        gpu_source=A100_80,
        version=DL_VERSION,
        flags="vllm serve Qwen2-7B-Instruct --port 8081 --max-model-len 16384 --tensor-parallel-size 2 "
        "--gpu-memory-utilization 0.5",
        model_source=DL_MODEL_SOURCE,
    ),
    Case(
        "Qwen2-7B-Instruct, 2x A100 40GB on two nodes (Ray), util 0.50, TP2, V1 0.10.1.1, len 16384",
        DL + "log/vllm-7B-2gpuA10040GB-0.5GRAM-diff-nodes.log",
        QWEN2_7B,
        39.56,
        0.50,
        412944,
        tp=2,
        max_model_len=16384,
        batched_tokens=2048,
        max_num_seqs=256,
        note="vLLM 0.9.2+ keeps its small batch defaults on an A100 (max_num_batched_tokens 2048, printed; "
        "max_num_seqs 256). Test 1 of the README; TP across two nodes over Ray (custom all-reduce off; FlashInfer sampler absent, "
        "PyTorch-native top-p/top-k); GPU total assumed, see gpu_source; tokens per TP worker (25809 blocks x 16)",
        part="sealed",
        vllm="0.10.1.1",
        source=DL_SOURCE,
        log="dennislee22 7B 2xA100-40GB TP2 Ray util 0.5",
        params={"flashinfer_sampler": False},
        quote=(
            "(APIServer pid=121) INFO 09-03 04:36:09 [utils.py:326] non-default args: {'model_tag': "
            "'Qwen2-7B-Instruct', 'port': 8081, 'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384, "
            "'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.5}",
            "(EngineCore_0 pid=1257) (RayWorkerWrapper pid=1384) INFO 09-03 04:41:48 [gpu_model_runner.py:2007] "
            "Model loading took 7.1217 GiB and 198.942282 seconds",
            "(EngineCore_0 pid=1257) (RayWorkerWrapper pid=1384) INFO 09-03 04:42:46 [gpu_worker.py:276] Available "
            "KV cache memory: 11.03 GiB",
            "(EngineCore_0 pid=1257) INFO 09-03 04:42:46 [kv_cache_utils.py:849] GPU KV cache size: 412,944 tokens",
            "(EngineCore_0 pid=1257) INFO 09-03 04:42:46 [kv_cache_utils.py:853] Maximum concurrency for 16,384 "
            "tokens per request: 25.20x",
            "(EngineCore_0 pid=1257) (RayWorkerWrapper pid=1384) INFO 09-03 04:42:58 [gpu_model_runner.py:2708] "
            "Graph capturing finished in 11 secs, took 1.00 GiB",
            "num_gpu_blocks is: 25809",
        ),
        reported="tokens",
        gpu="2x NVIDIA A100 40GB, one per node (file name 2gpuA10040GB ... diff-nodes)",
        gpu_source=A100_40,
        version=DL_VERSION,
        flags="vllm serve Qwen2-7B-Instruct --port 8081 --max-model-len 16384 --tensor-parallel-size 2 "
        "--gpu-memory-utilization 0.5 (Ray cluster, ray_distributed_executor)",
        model_source=DL_MODEL_SOURCE,
    ),
    Case(
        "Phi-4 AutoRound GPTQ 4-bit, 80GB card (79.25 GiB), util 0.15, V0 0.6.5, len 2048",
        "https://github.com/xinyuwei-david/david-share/blob/master/Deep-Learning/Phi4/readme.md",
        PHI4_GPTQ,
        79.25,
        0.15,
        715 * 16,
        max_model_len=2048,
        engine="v0",
        note="KV tokens = 715 blocks x 16. The log is in a stored version of the readme (the stored commit "
        "0dec901ada99 lacks it); also findable with "
        + SEARCH.format("%22%23+GPU+blocks%3A+715%2C+%23+CPU+blocks%3A+1310%22"),
        part="sealed",
        vllm="0.6.5",
        source="xinyuwei-david/david-share Phi4",
        log="david-share Phi-4 GPTQ util 0.15",
        quote=(
            "INFO 12-22 10:55:31 gptq_marlin.py:200] Using MarlinLinearKernel for GPTQMarlinLinearMethod",
            "INFO 12-22 10:55:34 model_runner.py:1097] Loading model weights took 8.5107 GB",
            "INFO 12-22 10:55:34 worker.py:241] the current vLLM instance can use total_gpu_memory (79.25GiB) x "
            "gpu_memory_utilization (0.15) = 11.89GiB",
            "INFO 12-22 10:55:34 worker.py:241] model weights take 8.51GiB; non_torch_memory takes 0.26GiB; PyTorch "
            "activation peak memory takes 0.94GiB; the rest of the memory reserved for KV Cache is 2.18GiB.",
            "INFO 12-22 10:55:35 gpu_executor.py:76] # GPU blocks: 715, # CPU blocks: 1310",
            "INFO 12-22 10:55:35 gpu_executor.py:80] Maximum concurrency for 2048 tokens per request: 5.59x",
            "INFO 12-22 10:55:51 model_runner.py:1527] Graph capturing finished in 13 secs, took 0.27 GiB",
        ),
        reported="blocks",
        gpu="not named; total_gpu_memory 79.25GiB (an 80 GB card)",
        gpu_source="printed in the log (total_gpu_memory (79.25GiB))",
        version="V0 0.6.5-0.6.6 (worker.py:241 and gpu_executor.py:76/80 as in a 0.6.6.post1 log; dated 12-22, "
        "Dec 2024, before 0.6.6's release on Dec 27): 0.6.5 taken",
        flags="LLM(model='kaitchup/Phi-4-AutoRound-GPTQ-4bit', max_model_len=2048, gpu_memory_utilization=0.15, "
        "trust_remote_code=True), then llm.chat on 7 prompts",
        model_source="microsoft/phi-4 shape (" + HF.format("microsoft/phi-4") + "; a public copy of its values: "
        "model_type phi3, 5120 hidden, 40 layers, 40 heads, 10 KV heads, 17920 intermediate, vocab 100352, "
        "16384 positions); quantization_config from the model name and vLLM's GPTQ Marlin line (4-bit GPTQ); "
        "group_size 128 / sym are AutoRound's defaults, not read from the checkpoint's config.json",
    ),
    Case(
        "granite-3.0-3b-a800m-instruct (MoE), L40S, util 0.90, V1 0.7.3, len 4096",
        "https://github.com/dumb0002/production-stack/blob/c5cf57706db28f03feffa986681b32c6010cf339/"
        "perf-test/server-startup/README.md",
        GRANITE_30_3B_A800M,
        44.42,
        0.90,
        33660 * 16,
        max_model_len=4096,
        batched_tokens=2048,
        note="KV tokens = 33660 blocks x 16. The README shows this start in two snippets (15:00:40-15:00:42 args; "
        "15:01:07-15:01:59 weights, KV, graphs) of one date; the first snippet's pod name reads 'granite-3-0-2b-"
        "instruct', but the weights (6.1501 GB) and the fused-MoE config E=40,N=512 fit granite-3.0-3b-a800m",
        part="sealed",
        vllm="0.7.3",
        source="dumb0002/production-stack",
        log="production-stack server-startup granite-3.0-3b-a800m",
        quote=(
            "INFO 02-13 15:00:42 api_server.py:840] vLLM API server version 0.7.3",
            "WARNING 02-13 15:00:42 arg_utils.py:1326] Setting max_num_batched_tokens to 2048 for OPENAI_API_SERVER "
            "usage context.",
            "INFO 02-13 15:01:07 gpu_model_runner.py:872] Loading model weights took 6.1501 GB",
            "WARNING 02-13 15:01:39 fused_moe.py:806] Using default MoE config. Performance might be sub-optimal! "
            "Config file not found at /usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/"
            "configs/E=40,N=512,device_name=NVIDIA_L40S.json",
            "INFO 02-13 15:01:40 kv_cache_utils.py:407] # GPU blocks: 33660",
            "INFO 02-13 15:01:40 kv_cache_utils.py:410] Maximum concurrency for 4096 tokens per request: 131.48x",
            "INFO 02-13 15:01:59 gpu_model_runner.py:1043] Graph capturing finished in 18 secs, took 0.62 GiB",
        ),
        reported="blocks",
        gpu="NVIDIA L40S (device_name=NVIDIA_L40S in the fused-MoE line)",
        gpu_source=L40S_TOTAL,
        version="0.7.3 printed; V1 engine (gpu_model_runner.py / kv_cache_utils.py lines, torch.compile)",
        flags="vllm serve ibm-granite/granite-3.0-3b-a800m-instruct (args: gpu_memory_utilization=0.9, "
        "max_model_len=None, tensor_parallel_size=1, dtype auto, enforce_eager False, block_size None)",
        model_source=HF.format("ibm-granite/granite-3.0-3b-a800m-instruct") + " (values as the 3.1 copy in public "
        "code: 1536 hidden, 32 layers, 24 heads, 8 KV heads, 512 expert intermediate, 40 experts, 8 per token, vocab "
        "49155, tied; 3.0 has 4096 positions, which the log's 'Maximum concurrency for 4096' confirms)",
    ),
    Case(
        "Qwen3-1.7B, RTX 5090, util 0.90, V1 0.26.0, len 34816, max_num_seqs 64",
        WHET_URL,
        QWEN3_17B,
        31.36,
        0.90,
        226800,
        max_model_len=34816,
        max_num_seqs=64,
        estimate_cudagraphs=True,
        note="Activity log '005 - P3: seed harvest + seed register corpus' of a project whose machines are "
        "'turing' (RTX 5090 32 GB, driver 595.71.05, activity 000 'turing reset + two-machine survey') and 'spark' "
        "(DGX Spark); its activity 001 pins 'vllm | 0.26.0' on both machines, and activity 005 itself says 'vLLM "
        "0.26.0 supports return_token_ids'. The server is the only GPU job on turing while it runs (the runbook "
        "moves scoring to spark because it 'cannot share turing's GPU with the resident vLLM server at "
        "--gpu-memory-utilization 0.90'). The KV figure is quoted in the author's prose (bold), not as a raw log "
        "line. Repository not identified by name in the index; the URL searches the exact sentence. CUDA graphs on "
        "(no --enforce-eager), so vLLM >= 0.21 subtracts its CUDA-graph estimate.",
        part="sealed",
        vllm="0.26.0",
        source="code: whetstone activity log (turing RTX 5090, Qwen3-1.7B)",
        log="whetstone 005 Qwen3-1.7B turing server",
        quote=(
            "Reported **GPU KV cache size: 226,800 tokens**, max concurrency 6.51\u00d7 at full\n34,816-token requests.",
        ),
        reported="tokens",
        gpu="RTX 5090 32 GB ('turing', activity 000: 'RTX 5090, **32 GB VRAM**, driver 595.71.05')",
        gpu_source=RTX5090_TOTAL,
        version="0.26.0 (activity 001's verified stack 'vllm | **0.26.0**'; activity 005: 'vLLM 0.26.0 supports "
        "return_token_ids')",
        flags="vllm serve Qwen/Qwen3-1.7B --port 8000 --max-model-len 34816 --max-num-seqs 64 "
        "--gpu-memory-utilization 0.90",
        model_source=QWEN3_17B_SOURCE,
    ),
    Case(
        "Qwen3-8B-AWQ, Tesla T4 (14.56 GiB), util 0.78, V1 0.20.0, len 4096, eager, max_num_seqs 8",
        SEARCH.format("%22GPU+KV+cache+size%3A+34%2C848+tokens%22"),
        QWEN3_8B_AWQ,
        14.56,
        0.78,
        34848,
        max_model_len=4096,
        max_num_seqs=8,
        batched_tokens=8192,
        enforce_eager=True,
        note="A Markdown summary of a Kaggle notebook's executed outputs (court_llm_descriptor_qwen3_8b_awq.ipynb, "
        "Swiss court descriptor extraction); the log lines are quoted in backticks inside the summary, not as a "
        "raw log. Kaggle dual T4 with CUDA_VISIBLE_DEVICES=0 (gpu_mode='single', tensor_parallel_size=1). Executed "
        "Config overrides: gpu_memory_utilization=0.78, max_num_seqs=8, enforce_eager=True, quantization="
        "'awq_marlin', force_triton_attention=True (TRITON_ATTN); max_model_len=4096 from the Config dataclass and "
        "'Using max model len 4096'. Weights from Kaggle's qwen-lm/qwen-3/transformers/8b-awq (the Qwen3-8B-AWQ "
        "checkpoint, 'Checkpoint size: 5.68 GiB'), dtype printed as torch.float16. LLM class, so the printed "
        "max_num_batched_tokens=8192 is the offline default of that release. Repository not identified in the "
        "index; the URL searches the KV line.",
        part="sealed",
        vllm="0.20.0",
        source="code: Swiss court LLM descriptor notebook summary (Kaggle T4)",
        log="court_llm_descriptor_qwen3_8b_awq Kaggle T4",
        quote=(
            "Using max model len 4096",
            "Chunked prefill is enabled with max_num_batched_tokens=8192.",
            "Enforce eager set, disabling torch.compile and CUDAGraphs.",
            "Initializing a V1 LLM engine (v0.20.0)",
            "Model loading took 5.71 GiB memory and 57.270029 seconds",
            "Available KV cache memory: 4.79 GiB",
            "GPU KV cache size: 34,848 tokens",
            "Maximum concurrency for 4,096 tokens per request: 8.51x",
        ),
        reported="tokens",
        gpu="Tesla T4 (Kaggle, one of two; 'GPU 0: Tesla T4; free=14.46 GiB / total=14.56 GiB')",
        gpu_source=T4_SOURCE,
        version="0.20.0 ('Initializing a V1 LLM engine (v0.20.0)')",
        flags="vllm.LLM(model=<Kaggle Qwen3-8B-AWQ>, quantization='awq_marlin', tensor_parallel_size=1, "
        "gpu_memory_utilization=0.78, max_model_len=4096, max_num_seqs=8, enforce_eager=True, "
        "disable_custom_all_reduce=True), VLLM_ATTENTION_BACKEND=TRITON_ATTN",
        model_source=HF.format("Qwen/Qwen3-8B-AWQ")
        + " (tests/data/models/Qwen3-8B shape with float16 and 4-bit AWQ, as QWEN3_14B_AWQ)",
    ),
    Case(
        "Qwen2.5-0.5B-Instruct, RTX 5060 Ti (15.48 GiB), util 0.35, V1 0.27.1, len 4096, eager, no chunked prefill",
        SOROUSH.format("2345cfa064c6d799b47bfc512bdb1b33b33d2992") + "gpu_memory_probe.json",
        QWEN25_05B,
        15.48,
        0.35,
        364592,
        max_model_len=4096,
        max_num_seqs=4,
        batched_tokens=4096,
        enforce_eager=True,
        note="'real_vllm_runtime_probe_v1' report (2026-08-24) and its JSON artifacts: the chunked-prefill-disabled "
        "server (--no-enable-chunked-prefill --max-num-batched-tokens 4096, prefix caching off, block 16, eager). "
        "gpu_memory_probe.json records 'nvidia_smi_used_mib_during_server': 5603. The figures are the report's "
        "lower-case transcription of the server log ('available kv cache memory', 'model load'), not raw lines. "
        "Flags from probe_config.json @80707c6 and prefill_decode_local_v1/server_configs.json. "
        "VLLM_USE_FLASHINFER_SAMPLER=0.",
        part="sealed",
        vllm="0.27.1",
        source=SOROUSH_SOURCE,
        log="SoroushVahidi probe chunked-prefill disabled",
        quote=(
            "model load: 0.93 GiB",
            "available KV cache memory: 4.17 GiB",
            "GPU KV cache size: 364,592 tokens",
            "maximum concurrency for 4,096 tokens/request: 89.01x",
            '"kv_cache_tokens": 364592',
        ),
        reported="tokens",
        gpu="NVIDIA GeForce RTX 5060 Ti (report: 'VRAM | 16,311 MiB', compute capability 12.0, driver 580.173.02)",
        gpu_source=RTX5060TI_TOTAL,
        version="0.27.1 (report's installed-versions table: 'vLLM | 0.27.1', PyTorch 2.13.0+cu130)",
        flags="vllm serve <Qwen2.5-0.5B-Instruct snapshot> --served-model-name qwen05b-local --host 127.0.0.1 "
        "--port 8051 --gpu-memory-utilization 0.35 --max-model-len 4096 --max-num-seqs 4 "
        "--max-num-batched-tokens 4096 --block-size 16 --no-enable-prefix-caching --enforce-eager "
        "--no-enable-chunked-prefill",
        model_source=SOROUSH_MODEL_SOURCE,
    ),
    Case(
        "Qwen2.5-0.5B-Instruct, RTX 5060 Ti (15.48 GiB), util 0.35, V1 0.27.1, len 4096, eager, batched 512",
        SOROUSH.format("2345cfa064c6d799b47bfc512bdb1b33b33d2992") + "gpu_memory_probe.json",
        QWEN25_05B,
        15.48,
        0.35,
        375200,
        max_model_len=4096,
        max_num_seqs=4,
        batched_tokens=512,
        enforce_eager=True,
        note="Same report, the chunked-prefill-enabled server (--enable-chunked-prefill --max-num-batched-tokens "
        "512); everything else as the disabled-mode start. vLLM logged 'Chunked prefill is enabled with "
        "max_num_batched_tokens=512'. 'nvidia_smi_used_mib_during_server': 5743. The pair differs only in the "
        "batch budget (4096 vs 512 tokens): 0.12 GiB more KV at 512.",
        part="sealed",
        vllm="0.27.1",
        source=SOROUSH_SOURCE,
        log="SoroushVahidi probe chunked-prefill enabled",
        quote=(
            "Chunked prefill is enabled with max_num_batched_tokens=512",
            "model load: 0.93 GiB",
            "available KV cache memory: 4.29 GiB",
            "GPU KV cache size: 375,200 tokens",
            "maximum concurrency for 4,096 tokens/request: 91.60x",
            '"kv_cache_tokens": 375200',
        ),
        reported="tokens",
        gpu="NVIDIA GeForce RTX 5060 Ti (report: 'VRAM | 16,311 MiB')",
        gpu_source=RTX5060TI_TOTAL,
        version="0.27.1 (report's installed-versions table)",
        flags="vllm serve <Qwen2.5-0.5B-Instruct snapshot> --served-model-name qwen05b-local --host 127.0.0.1 "
        "--port 8052 --gpu-memory-utilization 0.35 --max-model-len 4096 --max-num-seqs 4 "
        "--max-num-batched-tokens 512 --block-size 16 --no-enable-prefix-caching --enforce-eager "
        "--enable-chunked-prefill",
        model_source=SOROUSH_MODEL_SOURCE,
    ),
    Case(
        "Qwen2.5-1.5B-Instruct, H200 (139.80 GiB), util 0.90 (default), V1 0.19.1, len 32768 (default)",
        AVATAR.format("531cd9fbe6916675e6e170677fb345878c2b4c71") + "results/h200/server_log_fp16_pcoff.txt",
        QWEN25_15B_INSTRUCT,
        139.80,
        0.90,
        4513888,
        max_model_len=32768,
        batched_tokens=8192,
        note=AVATAR_NOTE + " The same figures are printed by two more starts of this configuration in the "
        "repository (server_log_fp16_pcoff.txt @6d7a928, 20:15; server_log_perplexity_fp16.txt @3c85a15, 21:14).",
        part="sealed",
        vllm="0.19.1",
        source=AVATAR_SOURCE,
        log="multimodal-avatar H200 fp16 pcoff 08-07 19:24",
        quote=(
            "(APIServer pid=7468) INFO 08-07 19:24:43 [utils.py:233] non-default args: {'model_tag': "
            "'Qwen/Qwen2.5-1.5B-Instruct', 'host': '0.0.0.0', 'model': 'Qwen/Qwen2.5-1.5B-Instruct', "
            "'enable_prefix_caching': False}",
            "(APIServer pid=7468) INFO 08-07 19:24:43 [model.py:1678] Using max model len 32768",
            "(APIServer pid=7468) INFO 08-07 19:24:43 [scheduler.py:238] Chunked prefill is enabled with "
            "max_num_batched_tokens=8192.",
            "(EngineCore pid=7693) INFO 08-07 19:24:56 [gpu_model_runner.py:4820] Model loading took 2.89 GiB memory "
            "and 3.847991 seconds",
            "(EngineCore pid=7693) INFO 08-07 19:24:59 [monitor.py:76] Initial profiling/warmup run took 0.10 s",
            "(EngineCore pid=7693) INFO 08-07 19:25:06 [gpu_model_runner.py:5955] Estimated CUDA graph memory: 0.49 "
            "GiB total",
            "(EngineCore pid=7693) INFO 08-07 19:25:06 [gpu_worker.py:436] Available KV cache memory: 120.53 GiB",
            "(EngineCore pid=7693) INFO 08-07 19:25:06 [gpu_worker.py:470] In v0.19, CUDA graph memory profiling "
            "will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts "
            "for CUDA graph memory during KV cache allocation. To try it now, set "
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9000 to 0.9035 "
            "to maintain the same effective KV cache size.",
            "(EngineCore pid=7693) INFO 08-07 19:25:06 [kv_cache_utils.py:1319] GPU KV cache size: 4,513,888 tokens",
            "(EngineCore pid=7693) INFO 08-07 19:25:06 [kv_cache_utils.py:1324] Maximum concurrency for 32,768 "
            "tokens per request: 137.75x",
            "(EngineCore pid=7693) INFO 08-07 19:25:10 [gpu_model_runner.py:6046] Graph capturing finished in 3 "
            "secs, took 0.68 GiB",
        ),
        reported="tokens",
        gpu=AVATAR_GPU,
        gpu_source=H200_TOTAL,
        version=AVATAR_VERSION,
        flags="vllm serve Qwen/Qwen2.5-1.5B-Instruct --host 0.0.0.0 --no-enable-prefix-caching",
        model_source=HF.format("Qwen/Qwen2.5-1.5B-Instruct")
        + " (Qwen2.5-Math-1.5B shape: 28 layers, 1536 hidden, 12 heads, 2 KV heads, 8960 intermediate, tied; "
        "max_position_embeddings 32768 as the log's 'Using max model len 32768')",
    ),
    Case(
        "Qwen2.5-1.5B-Instruct-AWQ, H200 (139.80 GiB), util 0.90 (default), V1 0.19.1, len 32768 (default)",
        AVATAR.format("531cd9fbe6916675e6e170677fb345878c2b4c71") + "results/h200/server_log_awq.txt",
        QWEN25_15B_INSTRUCT_AWQ,
        139.80,
        0.90,
        4579824,
        max_model_len=32768,
        batched_tokens=8192,
        note=AVATAR_NOTE + " AWQ arm: awq_marlin (MacheteLinearKernel), dtype float16.",
        part="sealed",
        vllm="0.19.1",
        source=AVATAR_SOURCE,
        log="multimodal-avatar H200 awq 08-07 19:27",
        quote=(
            "(APIServer pid=8945) INFO 08-07 19:27:12 [utils.py:233] non-default args: {'model_tag': "
            "'Qwen/Qwen2.5-1.5B-Instruct-AWQ', 'host': '0.0.0.0', 'model': 'Qwen/Qwen2.5-1.5B-Instruct-AWQ', "
            "'enable_prefix_caching': False}",
            "(APIServer pid=8945) INFO 08-07 19:27:12 [awq_marlin.py:245] The model is convertible to awq_marlin "
            "during runtime. Using awq_marlin kernel.",
            "(EngineCore pid=9154) INFO 08-07 19:27:25 [gpu_model_runner.py:4820] Model loading took 1.13 GiB memory "
            "and 3.072082 seconds",
            "(EngineCore pid=9154) INFO 08-07 19:27:30 [gpu_model_runner.py:5955] Estimated CUDA graph memory: 0.59 "
            "GiB total",
            "(EngineCore pid=9154) INFO 08-07 19:27:30 [gpu_worker.py:436] Available KV cache memory: 122.29 GiB",
            "(EngineCore pid=9154) INFO 08-07 19:27:30 [kv_cache_utils.py:1319] GPU KV cache size: 4,579,824 tokens",
            "(EngineCore pid=9154) INFO 08-07 19:27:30 [kv_cache_utils.py:1324] Maximum concurrency for 32,768 "
            "tokens per request: 139.77x",
            "(EngineCore pid=9154) INFO 08-07 19:27:32 [gpu_model_runner.py:6046] Graph capturing finished in 2 "
            "secs, took 0.67 GiB",
        ),
        reported="tokens",
        gpu=AVATAR_GPU,
        gpu_source=H200_TOTAL,
        version=AVATAR_VERSION,
        flags="vllm serve Qwen/Qwen2.5-1.5B-Instruct-AWQ --host 0.0.0.0 --no-enable-prefix-caching",
        model_source=HF.format("Qwen/Qwen2.5-1.5B-Instruct-AWQ")
        + " (Qwen2.5-1.5B-Instruct shape, float16, 4-bit AWQ group 128; values not re-read from a copy of this "
        "file: the log confirms Qwen2ForCausalLM, float16, awq)",
    ),
    Case(
        "Qwen2.5-1.5B-Instruct --quantization fp8, H200 (139.80 GiB), util 0.90 (default), V1 0.19.1, len 32768",
        AVATAR.format("83173fc91c09749d66dd40180f33d4216a89251e") + "results/h200/server_log_fp8.txt",
        shape(QWEN25_15B_INSTRUCT, quantization_config={"quant_method": "fp8"}),
        139.80,
        0.90,
        4559616,
        max_model_len=32768,
        batched_tokens=8192,
        note=AVATAR_NOTE + " FP8 arm: the bf16 checkpoint quantised online by --quantization fp8 "
        "('Selected CutlassFP8ScaledMMLinearKernel for Fp8OnlineLinearMethod'); the Hub config.json has no "
        "quantization_config, the one in this case's model dict stands for the flag.",
        part="sealed",
        vllm="0.19.1",
        source=AVATAR_SOURCE,
        log="multimodal-avatar H200 fp8 08-07 19:28",
        quote=(
            "(APIServer pid=9658) INFO 08-07 19:28:24 [utils.py:233] non-default args: {'model_tag': "
            "'Qwen/Qwen2.5-1.5B-Instruct', 'host': '0.0.0.0', 'model': 'Qwen/Qwen2.5-1.5B-Instruct', "
            "'quantization': 'fp8', 'enable_prefix_caching': False}",
            "(EngineCore pid=9873) INFO 08-07 19:28:34 [__init__.py:261] Selected CutlassFP8ScaledMMLinearKernel for "
            "Fp8OnlineLinearMethod",
            "(EngineCore pid=9873) INFO 08-07 19:28:36 [gpu_model_runner.py:4820] Model loading took 1.67 GiB memory "
            "and 1.626075 seconds",
            "(EngineCore pid=9873) INFO 08-07 19:28:41 [gpu_model_runner.py:5955] Estimated CUDA graph memory: 0.59 "
            "GiB total",
            "(EngineCore pid=9873) INFO 08-07 19:28:41 [gpu_worker.py:436] Available KV cache memory: 121.76 GiB",
            "(EngineCore pid=9873) INFO 08-07 19:28:41 [kv_cache_utils.py:1319] GPU KV cache size: 4,559,616 tokens",
            "(EngineCore pid=9873) INFO 08-07 19:28:41 [kv_cache_utils.py:1324] Maximum concurrency for 32,768 "
            "tokens per request: 139.15x",
            "(EngineCore pid=9873) INFO 08-07 19:28:44 [gpu_model_runner.py:6046] Graph capturing finished in 2 "
            "secs, took 0.65 GiB",
        ),
        reported="tokens",
        gpu=AVATAR_GPU,
        gpu_source=H200_TOTAL,
        version=AVATAR_VERSION,
        flags="vllm serve Qwen/Qwen2.5-1.5B-Instruct --host 0.0.0.0 --quantization fp8 --no-enable-prefix-caching",
        model_source=HF.format("Qwen/Qwen2.5-1.5B-Instruct")
        + " with quantization_config standing for --quantization fp8",
    ),
    Case(
        "Qwen2.5-7B-Instruct fp16, V100 32GB, util 0.90 (default), V1 0.18.0, len 32768 (default), eager, LLM class",
        "https://github.com/wangpeiwen/gpu-util-interference/blob/5c553eac65004fb4e79b631498c8744f740dd92f/"
        "mlwd/sensitivity/data_bak.md",
        cfg("Qwen2.5-7B-Instruct", torch_dtype="float16"),
        31.74,
        0.90,
        245360,
        max_model_len=32768,
        batched_tokens=8192,
        enforce_eager=True,
        note="Terminal capture of 'python3 -m mlwd.collect_all --model /data/Qwen/Qwen2.5-7B-Instruct --stage "
        "sensitivity' (an interference-sensitivity study). The LLM is built in-process with dtype float16 and "
        "enforce_eager; no gpu_memory_utilization among the non-default args, so the 0.9 default. The stress "
        "kernels run only after the model is loaded ('[Sensitivity] Model loaded.' precedes them). Prefix caching "
        "on (default). TRITON_ATTN backend (FA2 needs compute capability 8).",
        part="sealed",
        vllm="0.18.0",
        source="wangpeiwen/gpu-util-interference",
        log="gpu-util-interference Qwen2.5-7B V100 03-27 12:18",
        quote=(
            "INFO 03-27 12:18:25 [utils.py:233] non-default args: {'trust_remote_code': True, 'dtype': 'float16', "
            "'disable_log_stats': True, 'enforce_eager': True, 'model': '/data/Qwen/Qwen2.5-7B-Instruct'}",
            "INFO 03-27 12:18:25 [model.py:1582] Using max model len 32768",
            "INFO 03-27 12:18:25 [scheduler.py:231] Chunked prefill is enabled with max_num_batched_tokens=8192.",
            "(EngineCore pid=9011) ERROR 03-27 12:18:33 [fa_utils.py:145] Cannot use FA version 2 is not supported "
            "due to FA2 is only supported on devices with compute capability >= 8",
            "(EngineCore pid=9011) INFO 03-27 12:24:19 [gpu_model_runner.py:4566] Model loading took 14.25 GiB memory "
            "and 345.277135 seconds",
            "(EngineCore pid=9011) INFO 03-27 12:24:24 [gpu_worker.py:456] Available KV cache memory: 13.1 GiB",
            "(EngineCore pid=9011) INFO 03-27 12:24:24 [kv_cache_utils.py:1316] GPU KV cache size: 245,360 tokens",
            "(EngineCore pid=9011) INFO 03-27 12:24:24 [kv_cache_utils.py:1321] Maximum concurrency for 32,768 "
            "tokens per request: 7.49x",
        ),
        reported="tokens",
        gpu="V100 (mlwd/config.py: 'V100 hardware parameters', 80 SMs, 6 MB L2, CUDA arch 70); 32 GB implied",
        gpu_source=V100_32_TOTAL,
        version="0.18.0 ('Initializing a V1 LLM engine (v0.18.0)')",
        flags="vllm.LLM(model='/data/Qwen/Qwen2.5-7B-Instruct', trust_remote_code=True, dtype='float16', "
        "disable_log_stats=True, enforce_eager=True)",
        model_source="tests/data/models/Qwen2.5-7B-Instruct with torch_dtype float16 (the log: 'Casting "
        "torch.bfloat16 to torch.float16')",
    ),
    Case(
        "Qwen3-8B, A100-SXM4-40GB, util 0.90 (default), V1 0.9.2, len 40960 (default)",
        "https://github.com/dariustanrd/tokenkaki/blob/091ae4c3ad123fffbff2f32eaf688bcb5a5d73ef/blogposts/content/"
        "1_vllm/yy-mm-dd-behind-the-api-1-vllm-draft.md",
        cfg("Qwen3-8B"),
        39.49,
        0.90,
        136080,
        max_model_len=40960,
        batched_tokens=2048,
        note="Draft blog post 'behind the API 1: vLLM': one A100 of a DGX (CUDA_VISIBLE_DEVICES=4), the server's "
        "startup log and the nvidia-smi table after it (GPU 4: 39062MiB / 40960MiB, the vLLM process 39052MiB). "
        "Prefix caching on (default). 'num_gpu_blocks is: 8505' = 136,080 / 16.",
        part="sealed",
        vllm="0.9.2",
        source="dariustanrd/tokenkaki",
        log="tokenkaki Qwen3-8B A100-40GB 06-10 10:57",
        quote=(
            "INFO 06-10 10:57:31 [api_server.py:1395] vLLM API server version 0.9.2",
            "INFO 06-10 10:57:31 [cli_args.py:325] non-default args: {'host': '172.17.0.1', 'port': 8001, 'model': "
            "'Qwen/Qwen3-8B', 'served_model_name': ['Qwen/Qwen3-8B']}",
            "INFO 06-10 10:57:39 [config.py:1472] Using max model len 40960",
            "INFO 06-10 10:57:39 [config.py:2285] Chunked prefill is enabled with max_num_batched_tokens=2048.",
            "INFO 06-10 10:57:57 [gpu_model_runner.py:1801] Model loading took 15.2683 GiB and 3.617503 seconds",
            "INFO 06-10 10:58:13 [gpu_worker.py:232] Available KV cache memory: 18.69 GiB",
            "INFO 06-10 10:58:14 [kv_cache_utils.py:716] GPU KV cache size: 136,080 tokens",
            "INFO 06-10 10:58:14 [kv_cache_utils.py:720] Maximum concurrency for 40,960 tokens per request: 3.32x",
            "INFO 06-10 10:58:37 [gpu_model_runner.py:2326] Graph capturing finished in 23 secs, took 2.24 GiB",
            "INFO 06-10 10:58:38 [loggers.py:137] Engine 000: vllm cache_config_info with initialization after "
            "num_gpu_blocks is: 8505",
            "|   4  NVIDIA A100-SXM4-40GB          On  | 00000000:C2:00.0 Off |                    0 |",
            "| N/A   32C    P0              56W / 275W |  39062MiB / 40960MiB |      0%      Default |",
        ),
        reported="tokens",
        gpu="NVIDIA A100-SXM4-40GB (nvidia-smi 40960MiB; driver 535.247.01)",
        gpu_source=A100_40_TOTAL,
        version="0.9.2 ('vLLM API server version 0.9.2', 'Initializing a V1 LLM engine (v0.9.2)')",
        flags="vllm serve Qwen/Qwen3-8B --host 172.17.0.1 --port 8001 --served-model-name Qwen/Qwen3-8B "
        "(via run-openai-server.sh, 'extra args: <none>')",
        model_source="tests/data/models/Qwen3-8B",
    ),
    Case(
        "Meta-Llama-3-70B-Instruct-AWQ, 2x L40S, util 0.90 (default), TP2, V1 0.16.0, len 8192 (default)",
        SEARCH.format("%22GPU+KV+cache+size%3A+132%2C128+tokens%22"),
        LLAMA3_70B_AWQ,
        44.42,
        0.90,
        132128,
        tp=2,
        max_model_len=8192,
        batched_tokens=2048,
        note="Lab note 'Lab 1 - vLLM OpenAI Server: Llama 3 70B Instruct (AWQ) on NVIDIA L40S (TP=2)': podman, "
        "docker.io/vllm/vllm-openai:latest, two GPUs passed in (--device nvidia.com/gpu=0, =1). Defaults apart "
        "from TP: util 0.9, max_model_len from the config (8192), prefix caching on, CUDA graphs on "
        "(FULL_AND_PIECEWISE). 'Available KV cache memory' is rank 0's. Repository not identified in the index; "
        "the URL searches the KV line.",
        part="sealed",
        vllm="0.16.0",
        source="code: Lab 1 Llama 3 70B AWQ on L40S TP2 (rteixeira, shockwave)",
        log="Llama-3-70B-AWQ 2xL40S TP2 02-27 20:31",
        quote=(
            "(APIServer pid=46) INFO 02-27 20:31:36 [utils.py:223] non-default args: {'model_tag': "
            "'/mnt/shockwave/soundwave/models/llama3-70b-awq', 'api_server_count': 1, 'port': 8002, 'model': "
            "'/mnt/shockwave/soundwave/models/llama3-70b-awq', 'tensor_parallel_size': 2}",
            "(APIServer pid=46) INFO 02-27 20:31:43 [model.py:1549] Using max model len 8192",
            "(APIServer pid=46) INFO 02-27 20:31:44 [awq_marlin.py:162] The model is convertible to awq_marlin during "
            "runtime. Using awq_marlin kernel.",
            "(APIServer pid=46) INFO 02-27 20:31:44 [scheduler.py:224] Chunked prefill is enabled with "
            "max_num_batched_tokens=2048.",
            "(Worker_TP0 pid=512) INFO 02-27 20:32:31 [gpu_model_runner.py:4221] Model loading took 18.55 GiB memory "
            "and 31.238919 seconds",
            "(Worker_TP0 pid=512) INFO 02-27 20:33:05 [gpu_worker.py:373] Available KV cache memory: 20.16 GiB",
            "(EngineCore_DP0 pid=314) INFO 02-27 20:33:05 [kv_cache_utils.py:1307] GPU KV cache size: 132,128 tokens",
            "(EngineCore_DP0 pid=314) INFO 02-27 20:33:05 [kv_cache_utils.py:1312] Maximum concurrency for 8,192 "
            "tokens per request: 16.13x",
            "(Worker_TP0 pid=512) INFO 02-27 20:33:15 [gpu_model_runner.py:5246] Graph capturing finished in 10 secs, "
            "took 1.22 GiB",
        ),
        reported="tokens",
        gpu="2x NVIDIA L40S (the lab's title; 'SymmMemCommunicator: Device capability 8.9 not supported')",
        gpu_source=L40S_TOTAL,
        version="0.16.0 ('version 0.16.0' banner, 'Initializing a V1 LLM engine (v0.16.0)')",
        flags="vllm serve /mnt/shockwave/soundwave/models/llama3-70b-awq --port 8002 --tensor-parallel-size 2",
        model_source=HF.format("TechxGenus/Meta-Llama-3-70B-Instruct-AWQ")
        + " (Meta-Llama-3-70B-Instruct shape, float16, 4-bit AWQ group 128; not re-read from a copy of this file: "
        "the log confirms LlamaForCausalLM, float16, awq, max len 8192)",
    ),
    Case(
        "Qwen3-30B-A3B (MoE), 4x RTX 2080 Ti 22GB (21.66 GiB), util 0.93, TP4, V0 0.8.5, fp16, len 32768, block 32",
        DQ + "logs/deploy-32k-startup.log",
        cfg("Qwen3-30B-A3B", torch_dtype="float16"),
        21.66,
        0.93,
        5867 * 32,
        tp=4,
        max_model_len=32768,
        engine="v0",
        batched_tokens=4096,
        block_size=32,
        note="KV tokens = 5867 blocks x 32 (per TP worker). V0 because the GPUs are Turing ('Compute Capability < 8.0 "
        "is not supported by the V1 Engine. Falling back to V0.'); XFormers backend. Chunked prefill on with "
        "max_num_batched_tokens 4096; custom all-reduce disabled; fp16 cast from bf16. The driver rank's profile shows "
        "1.40 GiB activation peak, the other three ranks 0.25 GiB (and 5.47 GiB KV each); vLLM takes the minimum "
        "over ranks (the driver's 4.30 GiB). The repository's blog posts also quote a 131K/YaRN start whose lines "
        "are not self-consistent (left out below)",
        part="sealed",
        vllm="0.8.5",
        source="jackypanster/deploy-qwen",
        log="deploy-qwen deploy-32k-startup.log",
        quote=(
            "INFO 06-03 19:56:36 [api_server.py:1043] vLLM API server version 0.8.5",
            "WARNING 06-03 19:56:36 [config.py:2972] Casting torch.bfloat16 to torch.float16.",
            "WARNING 06-03 19:56:45 [arg_utils.py:1658] Compute Capability < 8.0 is not supported by the V1 Engine. "
            "Falling back to V0. ",
            "INFO 06-03 19:56:45 [config.py:2003] Chunked prefill is enabled with max_num_batched_tokens=4096.",
            "INFO 06-03 19:57:21 [model_runner.py:1140] Model loading took 14.2464 GiB and 19.249308 seconds",
            "WARNING 06-03 19:57:26 [fused_moe.py:668] Using default MoE config. Performance might be sub-optimal! "
            "Config file not found at /usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/"
            "configs/E=128,N=192,device_name=NVIDIA_GeForce_RTX_2080_Ti.json",
            "INFO 06-03 19:57:28 [worker.py:287] Memory profiling takes 5.99 seconds",
            "INFO 06-03 19:57:28 [worker.py:287] the current vLLM instance can use total_gpu_memory (21.66GiB) x "
            "gpu_memory_utilization (0.93) = 20.15GiB",
            "INFO 06-03 19:57:28 [worker.py:287] model weights take 14.25GiB; non_torch_memory takes 0.20GiB; PyTorch "
            "activation peak memory takes 1.40GiB; the rest of the memory reserved for KV Cache is 4.30GiB.",
            "(VllmWorkerProcess pid=193) INFO 06-03 19:57:28 [worker.py:287] model weights take 14.25GiB; "
            "non_torch_memory takes 0.19GiB; PyTorch activation peak memory takes 0.25GiB; the rest of the memory "
            "reserved for KV Cache is 5.47GiB.",
            "INFO 06-03 19:57:28 [executor_base.py:112] # cuda blocks: 5867, # CPU blocks: 21845",
            "INFO 06-03 19:57:28 [executor_base.py:117] Maximum concurrency for 32768 tokens per request: 5.73x",
            "INFO 06-03 19:58:17 [model_runner.py:1592] Graph capturing finished in 32 secs, took 0.97 GiB",
        ),
        reported="blocks",
        gpu="4x NVIDIA GeForce RTX 2080 Ti with 22 GB (device_name=NVIDIA_GeForce_RTX_2080_Ti; README: '4x NVIDIA "
        "GPUs (22GB VRAM each, 88GB total)')",
        gpu_source="printed in the log (total_gpu_memory (21.66GiB))",
        version="0.8.5 printed ('vLLM API server version 0.8.5', 'Initializing a V0 LLM engine (v0.8.5)'); image "
        "vllm/vllm-openai:v0.8.5",
        flags="deploy-32k.sh: vllm/vllm-openai:v0.8.5 --model /qwen/qwen3-30b-a3b --served-model-name coder "
        "--tensor-parallel-size 4 --dtype half --max-model-len 32768 --max-num-batched-tokens 4096 "
        "--gpu-memory-utilization 0.93 --block-size 32 --enable-chunked-prefill --swap-space 16 "
        "--tokenizer-pool-size 56 --disable-custom-all-reduce (args line agrees; max_num_seqs None -> 256)",
        model_source="tests/data/models/Qwen3-30B-A3B (" + HF.format("Qwen/Qwen3-30B-A3B") + "); weights 14.2464 GiB "
        "per rank and fused-MoE N=192 (=768/4) agree",
    ),
    Case(
        "Qwen3-4B, RTX 2060 12GB (12.00 GiB, Docker on Windows), util 0.95, V0 0.8.4, fp16, len 10000, max_num_seqs 1",
        LG + "README.md",
        shape(QWEN3_4B, torch_dtype="float16"),
        12.00,
        0.95,
        1394 * 16,
        max_model_len=10000,
        engine="v0",
        max_num_seqs=1,
        note="KV tokens = 1394 blocks x 16. V0: Turing GPU (V1 needs compute capability 8.0) and the log's "
        "worker.py/executor_base.py lines. max_model_len '10k' (vLLM parses it as 10000: 'Maximum concurrency for "
        "10000 tokens'); chunked prefill off (len <= 32K), so the profile run is one 10000-token sequence. GPU total "
        "12.00 GiB exactly is what the card reports under the Windows driver (561.09) via Docker/WSL2",
        part="sealed",
        vllm="0.8.4",
        source="Q07K/langgraph-mcp-example",
        log="langgraph-mcp-example README Qwen3-4B RTX 2060",
        quote=(
            "INFO 05-21 18:17:01 [model_runner.py:1146] Model loading took 7.5552 GiB and 30.643008 seconds",
            "INFO 05-21 18:17:06 [worker.py:267] Memory profiling takes 5.29 seconds",
            "INFO 05-21 18:17:06 [worker.py:267] the current vLLM instance can use total_gpu_memory (12.00GiB) x "
            "gpu_memory_utilization (0.95) = 11.40GiB",
            "INFO 05-21 18:17:06 [worker.py:267] model weights take 7.56GiB; non_torch_memory takes 0.04GiB; PyTorch "
            "activation peak memory takes 0.74GiB; the rest of the memory reserved for KV Cache is 3.06GiB.",
            "INFO 05-21 18:17:06 [executor_base.py:112] # cuda blocks: 1394, # CPU blocks: 1820",
            "INFO 05-21 18:17:06 [executor_base.py:117] Maximum concurrency for 10000 tokens per request: 2.23x",
        ),
        reported="blocks",
        gpu="NVIDIA GeForce RTX 2060 12GB (README 'Local Run' environment: driver 561.09, CUDA 12.6)",
        gpu_source="printed in the log (total_gpu_memory (12.00GiB))",
        version="0.8.4: llm/pyproject.toml pins vllm==0.8.4 and llm/uv.lock (and app/llm/uv.lock of commit 5f1a6a7, "
        "2025-05-22, the day after the log) lock vllm 0.8.4",
        flags="docker run ... -e dtype=float16 -e max_num_seqs=1 -e max_model_len=10k qwen3-4b:v1.0.0; entrypoint: "
        "vllm serve ./Qwen/Qwen3-4B --enable-auto-tool-choice --tool-call-parser hermes --gpu-memory-utilization "
        "0.95 --dtype $dtype --max-num-seqs $max_num_seqs --max-model-len $max_model_len",
        model_source=HF.format("Qwen/Qwen3-4B") + " (public copies of its values: 36 layers, 2560 hidden, 32 heads, "
        "8 KV heads, head_dim 128, 9728 intermediate, vocab 151936, tied); weights 7.5552 GiB agree",
    ),
    Case(
        "Llama-3.2-3B-Instruct GGUF Q8_0, RTX 4070 Laptop 8GB (7.65 GiB), util 0.90, V0 0.8.2, eager, len 10000",
        RG + "docs/2-local-rag/2-local-rag-langchain.md",
        shape(LLAMA32_3B, quantization_config={"quant_method": "gguf", "bits": 8}),
        7.65,
        0.90,
        1395 * 16,
        max_model_len=10000,
        engine="v0",
        enforce_eager=True,
        outside="GGUF weights: the planner does not model GGUF quantization (a GGUF file has no config.json)",
        note="KV tokens = 1395 blocks x 16. GGUF checkpoint (lmstudio-community/Llama-3.2-3B-Instruct-GGUF, file "
        "Llama-3.2-3B-Instruct-Q8_0.gguf): vLLM runs GGUF on V0 only; weights 3.26 GiB as loaded (Q8_0 is 8.5 "
        "bits per weight incl. block scales; the quantization_config here is a stand-in, GGUF files have no "
        "config.json). Same lines in the repository's llamaindex page (one start)",
        part="sealed",
        vllm="0.8.2",
        source="eformat/ragit-dev",
        log="ragit-dev local-rag Llama-3.2-3B GGUF",
        quote=(
            "INFO 03-29 15:52:45 [model_runner.py:1146] Model loading took 3.2637 GB and 18.052839 seconds",
            "INFO 03-29 15:53:07 [worker.py:267] Memory profiling takes 21.11 seconds",
            "INFO 03-29 15:53:07 [worker.py:267] the current vLLM instance can use total_gpu_memory (7.65GiB) x "
            "gpu_memory_utilization (0.90) = 6.89GiB",
            "INFO 03-29 15:53:07 [worker.py:267] model weights take 3.26GiB; non_torch_memory takes 0.02GiB; PyTorch "
            "activation peak memory takes 1.22GiB; the rest of the memory reserved for KV Cache is 2.38GiB.",
            "INFO 03-29 15:53:07 [executor_base.py:111] # cuda blocks: 1395, # CPU blocks: 2340",
            "INFO 03-29 15:53:07 [executor_base.py:116] Maximum concurrency for 10000 tokens per request: 2.23x",
        ),
        reported="blocks",
        gpu="NVIDIA GeForce RTX 4070 Laptop, 8GB ('i have a NVIDIA GeForce RTX 4070 - 8GB VRAM on this laptop')",
        gpu_source="printed in the log (total_gpu_memory (7.65GiB))",
        version="0.8.2: the page's requirements.txt (docs/2-local-rag/local-rag-langchain/requirements.txt) pins "
        "vllm==0.8.2; page committed 2025-03-29, same day as the log",
        flags="python -m vllm.entrypoints.openai.api_server --model ~/rag-langchain/Llama-3.2-3B-Instruct-Q8_0.gguf "
        "--served-model-name Llama-3.2-3B-Instruct-Q8_0.gguf --quantization gguf --enforce-eager --port 8080 "
        "--max-model-len=10000",
        model_source=HF.format("meta-llama/Llama-3.2-3B-Instruct") + " (planner_cases LLAMA32_3B; the GGUF carries "
        "the same shape), GGUF Q8_0 weights",
    ),
    Case(
        "rho-1b-sft-GSM8K (TinyLlama 1.1B shape), H200 (139.80 GiB), util 0.90, V0 0.6.4.post1, len 2048",
        GC + "experiment_report_0427.md",
        RHO_1B,
        139.80,
        0.90,
        365549 * 16,
        max_model_len=2048,
        engine="v0",
        note="KV tokens = 365549 blocks x 16. LLM(...) rollout engine of an RL-credit project's oracle smoke test; no "
        "trainer on the GPU at start-up (initial_memory_usage 2.71 GiB = weights 2.05 + CUDA context). Prefix "
        "caching on, chunked prefill off, seed 42, swap 4 GiB; six identical starts in the report (one log here). "
        "Shape check: 122.71 GiB / (22 layers x 4 KV heads x 64 x 2 x 2 B) / 16 = 365,542 blocks",
        part="sealed",
        vllm="0.6.4.post1",
        source="suesie/grpocredit",
        log="grpocredit experiment_report_0427 rho-1b H200",
        quote=(
            "INFO 04-28 04:07:48 llm_engine.py:249] Initializing an LLM engine (v0.6.4.post1) with config: "
            "model='realtreetune/rho-1b-sft-GSM8K', ... dtype=torch.bfloat16, max_seq_len=2048, ... "
            "tensor_parallel_size=1, ... enforce_eager=False, kv_cache_dtype=auto, ... enable_prefix_caching=True",
            "INFO 04-28 04:07:51 model_runner.py:1077] Loading model weights took 2.0512 GB",
            "INFO 04-28 04:07:51 worker.py:232] Memory profiling results: total_gpu_memory=139.80GiB "
            "initial_memory_usage=2.71GiB peak_torch_memory=2.38GiB memory_usage_post_profile=2.81GiB "
            "non_torch_memory=0.73GiB kv_cache_size=122.71GiB gpu_memory_utilization=0.90",
            "INFO 04-28 04:07:52 gpu_executor.py:113] # GPU blocks: 365549, # CPU blocks: 11915",
            "INFO 04-28 04:07:52 gpu_executor.py:117] Maximum concurrency for 2048 tokens per request: 2855.85x",
            "INFO 04-28 04:08:02 model_runner.py:1518] Graph capturing finished in 8 secs, took 0.16 GiB",
        ),
        reported="blocks",
        gpu="NVIDIA H200 141GB (report: 'one 140 GB H200', host h200-066-044)",
        gpu_source="printed in the log (total_gpu_memory=139.80GiB)",
        version="0.6.4.post1 printed (and grpocredit-server2-pip-freeze.txt: vllm==0.6.4.post1, torch 2.5.1+cu124)",
        flags="vllm.LLM(model='realtreetune/rho-1b-sft-GSM8K', dtype='bfloat16', trust_remote_code=True, "
        "tensor_parallel_size=1, gpu_memory_utilization=0.9, swap_space=4, enable_prefix_caching=True, seed=42) "
        "(src/grpocredit/rollout/vllm_runner.py with configs/base_qwen_math.yaml + configs/oracle/rho1b_sft_gsm8k.yaml)",
        model_source=HF.format("microsoft/rho-math-1b-v0.1") + " shape (TinyLlama-1.1B: 22 layers, 2048 hidden, 32 "
        "heads, 4 KV heads, 5632 intermediate, vocab 32000, 2048 positions, untied; values as public TinyLlama "
        "config copies); weights 2.0512 GB and the KV arithmetic above agree",
    ),
]

# --- the second batch: gathered the same day, committed after the first batch's run (and after the planner
# changes that run led to: FlashInfer's sampler path, Mixtral-style experts), before the planner ran on them ---------

# --- GPU totals ----------------------------------------------------------------------------------------------------

RTX4090_TOTAL = (
    "RTX 4090 total as torch reports it (23.64 GiB), as planner_cases uses for vllm#13061; not printed by this source "
    "(SETUP_NOTES: 'RTX 4090 x 4 (each 24 GB)')"
)
R3_RTX5090_TOTAL = (
    "RTX 5090 total as torch reports it: 'GPU 0 has a total capacity of 31.36 GiB' (the most common figure in "
    "public OOM messages; 31.34-31.39 GiB also seen, so +-0.03 GiB), as v1_e uses; this source's nvidia-smi shows "
    "32,607 MiB per card"
)
PRO6000_TOTAL = (
    "RTX PRO 6000 Blackwell 96GB total as torch reports it: 'GPU 0 has a total capacity of 94.97 GiB' (many public "
    "OOM messages; one note on an sm120 96G card: 'GPU 0 has a total capacity of 94.97 GiB', find it with "
    + SEARCH.format("%22total+capacity+of+94.97+GiB%22")
    + "); consistent with this source's nvidia-smi '91,524 MiB / 97,887' (97,887 MiB less the ~640 MiB the driver "
    "keeps = 97,248 MiB = 94.97 GiB); not printed by the source"
)

A100_80_PCIE_TOTAL = (
    "A100 80GB PCIe total as torch reports it, ~79.17 GiB (public printouts of torch device properties for this card: "
    "'GPU 0: NVIDIA A100 80GB PCIe (79.17 GB)', '79.2 GiB usable'; 79.1-79.35 also seen, so +-0.1 GiB, i.e. +-0.09 "
    "GiB of budget at 0.9); not printed by this source"
)

L4_GCP_TOTAL = (
    "printed by vLLM in the same log: 'Free memory on device (21.84/22.03 GiB) on startup. Desired GPU memory "
    "utilization is (0.92, 20.27 GiB)' (a GCP L4; planner_cases' other L4 figure, 22.17 GiB from a torch OOM "
    "message, is 0.14 GiB higher)"
)
LLMR = "https://github.com/zahran001/LLMRouter/blob/{}/"
LLMR_SOURCE = "zahran001/LLMRouter"
LLMR_NOTE = (
    "Committed vLLM server log of a router project's baseline GPU session on one GCP L4 (BASELINE.md: '1x L4, "
    "meta-llama/Llama-3.2-3B-Instruct'), launched by scripts/gpu_session/setup_and_launch_vllm.sh with "
    "VLLM_USE_FLASHINFER_SAMPLER=0 (flashinfer uninstalled). No gpu_memory_utilization among the non-default args: "
    "the 0.27.1 default, which vLLM itself prints as 0.92. FLASH_ATTN (FA2), V2 model runner. "
    "max_num_batched_tokens not printed; the release's default for a <70 GiB card (compile_ranges_endpoints [2048]). "
)

RTX3090_TOTAL = (
    "printed by the source for this host: 'torch.cuda.get_device_properties(0).total_memory = 25,296,044,032 bytes' "
    "(23.56 GiB; nvidia-smi 24576 MiB)"
)
AGS = "https://github.com/booth-algo/agentic-serve/blob/00e1e913315acdc89734da72295108ef51ec3809/"
AGS_3090 = AGS + "profile_data/engine_logs/3090_Llama-3.1-8B_multi_pool_evidence.txt"
AGS_SOURCE = "booth-algo/agentic-serve"
AGS_NOTE = (
    "A serving-simulator project's engine-log evidence file ('3090 Llama-3.1-8B tp2/tp4 vLLM GT-class KV pool "
    "evidence', 2026-06-11): one fresh server start per line at the benchmark's flags on an idle 8x RTX 3090 host "
    "('GPUs verified 0 compute apps before each launch'), killed after the pool line; lines quoted verbatim from "
    "the named log files. Defaults otherwise: max_num_batched_tokens 2048 / max_num_seqs 256 (the source cites "
    "get_batch_defaults for a <70 GiB card), prefix caching on (0.19 default), CUDA graphs on, bf16. "
)
AGS_FLAGS = (
    "python -m vllm.entrypoints.openai.api_server --model /home/kevinlau/models/Llama-3.1-8B-Instruct "
    "--tensor-parallel-size {tp} --max-model-len 32768 --gpu-memory-utilization 0.85 --port {port}"
)

R3_A100_40_TOTAL = (
    "A100-SXM4-40GB total as torch reports it, 39.49 GiB +-0.1 (39.39-39.59 GiB seen in public logs, e.g. "
    "planner_cases' Colab 'total_gpu_memory (39.56GiB)'), as v1_e uses; not printed by this source (GCP "
    "a2-highgpu-1g, one A100 40GB)"
)

H100_TOTAL = (
    "H100 80GB HBM3 total as vLLM/torch prints it, 79.18 GiB (the llm-d planner results in planner_cases; 79.19 GiB "
    "in gateway-api-inference-extension#550), as vl_c uses; not printed by this source"
)

# --- sources ---------------------------------------------------------------------------------------------------------

KTH = "https://github.com/kthxo/distserving/blob/{}/"
KTH_SOURCE = "kthxo/distserving"
KTH_VERSION = (
    "0.24.0 (SETUP_NOTES 'vLLM | 0.24.0 (uv pip install vllm --torch-backend=auto)', torch 2.11.0+cu130; the later "
    "logs repeat 'vLLM 0.24.0 / torch 2.11.0+cu130' for each server; kv_cache_utils.py:2146 cited for the KV line)"
)
KTH_NOTE = (
    "Research notes (Korean) of a ThunderAgent reproduction: the KV figures are quoted from the vLLM start log in the "
    "author's prose and tables (backticked), not as a raw log file. estimate_cudagraphs set because CUDA graphs are on "
    "and releases from 0.21 subtract the CUDA-graph estimate by default (as v1_e treats 0.26.0). "
)
QWEN3_8B_ENV = "VLLM_ATTENTION_BACKEND=FLASH_ATTN VLLM_USE_FLASHINFER_SAMPLER=0"

# --- model shapes (values of the published config.json; model_source says where a public copy was read) ----------


TT = "https://github.com/TickerTaka/TickerTaka-backend/blob/001c701a580272588855d0ced6b6f7a05e0e8502/"

SECOND_BATCH: list[Case] = [
    Case(
        "Qwen3-8B, RTX 4090 (23.64 GiB), util 0.92, V1 0.24.0, len 32768",
        KTH.format("33447b7ccdfa72909a2ba693f67de2a622251272") + "logs/2026-07-02_EXPERIMENT_LOG_yunuikang.md",
        cfg("Qwen3-8B"),
        23.64,
        0.92,
        43888,
        max_model_len=32768,
        batched_tokens=2048,
        estimate_cudagraphs=True,
        note=KTH_NOTE + "Server mango1 (4x RTX 4090, driver 595.71.05). The same figure is reported for at least three "
        "starts of this command: the characterization run (section 10 of the 2026-07-02 log), the Phase A smoke on "
        "GPU0 after the driver was restored ('GPU KV cache size: 43,888 tokens (exactly as the section 10 4090 "
        "value)', logs/2026-07-03_EXPERIMENT_LOG_hetero), and both Phase D backends on GPU0 and GPU1 via "
        "scripts/_serve_vllm_yunuikang.sh ('both GPU KV cache size: 43,888 tokens'). Doubt: section 2 of the same "
        "2026-07-02 log gives an earlier two-backend figure for the same flags, 'num_gpu_blocks 2312 x block 16 = "
        "36,992 tokens' per backend, 0.95 GiB lower, the same gap as this source's cold first 5090 start (see "
        "LEFT_OUT); the repeated figure is used. SETUP_NOTES problem 2 (default util 0.9, default len 40960) "
        "paraphrases a refused start: KV needs ~5.62 GiB, only ~4.61 GiB free, 'estimated max length ~33568' "
        "(0.02 x 23.64 = 0.47 GiB below the 6.03 GiB here). Prefix caching on (default), CUDA graphs on. "
        "max_num_batched_tokens 2048 / max_num_seqs 256 are the release's defaults for a <70 GiB card, which the "
        "source confirms by calling EngineArgs.get_batch_defaults on the 4090. 43,888 x 144 KiB = 6.03 GiB.",
        part="sealed",
        vllm="0.24.0",
        source=KTH_SOURCE,
        log="distserving Qwen3-8B RTX 4090 util 0.92",
        quote=(
            "Available KV cache memory: 6.03 GiB",
            "GPU KV cache size: 43,888 tokens",
            "Maximum concurrency ... 1.34x",
        ),
        reported="tokens",
        gpu="NVIDIA RTX 4090 24GB (mango1, one of four; SETUP_NOTES 'RTX 4090 x 4 (each 24 GB), driver 595.71.05')",
        gpu_source=RTX4090_TOTAL,
        version=KTH_VERSION,
        flags="CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen3-8B --port 8000 --max-model-len 32768 "
        "--gpu-memory-utilization 0.92, with " + QWEN3_8B_ENV,
        model_source="tests/data/models/Qwen3-8B (the source: 'KV bytes/token = 2 x 36 layers x 8 KV heads x 128 "
        "head_dim x 2B(bf16) = 147,456 B')",
    ),
    Case(
        "Qwen3-8B, RTX 5090 (31.36 GiB), util 0.92, V1 0.24.0, len 32768",
        KTH.format("202f49b910b6245975271f06d033cd8c18dea4a3") + "logs/2026-07-19_STEPS_RESULTS_yunuikang.md",
        cfg("Qwen3-8B"),
        31.36,
        0.92,
        95936,
        max_model_len=32768,
        batched_tokens=2048,
        estimate_cudagraphs=True,
        note=KTH_NOTE + "Server goguma, 2x RTX 5090 idle ('0%, no processes'), driver 580.82.07 / CUDA 13.0, vLLM "
        "0.24.0, torch 2.11.0+cu130, GPU0. The value every restart of this command printed on 2026-07-19: STEP 3 "
        "('vLLM Qwen3-8B start (GPU0, C_total=95,936 at runtime)'), STEP 4/5 ('C_total | 95,936 tokens | vLLM start "
        "log (after CUDA graph cache)'); scripts/sweep_pilot_yunuikang.py restarts vLLM before every sweep point with "
        "the command below, pins EXPECTED_C_TOTAL = 95936 and warns when /metrics differs. The day's FIRST start "
        "(STEP 1, same flags without --host) printed 'GPU KV cache size: 89,040 tokens' with 'Model loading took 15.27 "
        "GiB'; the author ascribes the 6,896-token (0.95 GiB) gap to the compile / CUDA-graph cache being cold. The "
        "4090 start of this source shows the same gap (an early 36,992 vs the repeated 43,888 tokens), so the "
        "repeated warm-cache figure is used here; the cold first start is listed in LEFT_OUT. nvidia-smi while "
        "serving (first start): 29,914 MiB / 32,607 MiB. max_num_batched_tokens 2048 / max_num_seqs 256 stated by "
        "the source (defaults under 70 GiB). Prefix caching on, CUDA graphs on. 95,936 x 144 KiB = 13.18 GiB.",
        part="sealed",
        vllm="0.24.0",
        source=KTH_SOURCE,
        log="distserving Qwen3-8B RTX 5090 util 0.92 (warm-cache restarts, 95,936)",
        quote=(
            "vLLM Qwen3-8B start (GPU0, C_total=95,936 at runtime)",
            "C_total | 95,936 tokens | vLLM start log (after CUDA graph cache)",
            "EXPECTED_C_TOTAL = 95936",
        ),
        reported="tokens",
        gpu="NVIDIA GeForce RTX 5090 (goguma, '2xRTX5090, each 32,607 MiB', sm_120)",
        gpu_source=R3_RTX5090_TOTAL,
        version=KTH_VERSION + "; STEP 1's environment table: 'vLLM | 0.24.0 | vllm.__version__'",
        flags="CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen3-8B --host 0.0.0.0 --port 8100 --max-model-len 32768 "
        "--gpu-memory-utilization 0.92 (scripts/sweep_pilot_yunuikang.py @2180ce9c), with " + QWEN3_8B_ENV,
        model_source="tests/data/models/Qwen3-8B",
    ),
    Case(
        "Qwen3-32B, RTX PRO 6000 Blackwell 96GB (94.97 GiB), util 0.92, V1 0.24.0, len 32768",
        KTH.format("202f49b910b6245975271f06d033cd8c18dea4a3") + "logs/2026-07-17_P2_SCIENCE_RESULTS_yunuikang.md",
        cfg("Qwen3-32B"),
        94.97,
        0.92,
        100544,
        max_model_len=32768,
        batched_tokens=8192,
        estimate_cudagraphs=True,
        note=KTH_NOTE + "'Deployment A'' (section C-1, 2026-07-20): single-GPU Qwen3-32B on GPU1 of nutella1 (a "
        "Pro6000 96GB; GPU0 is a Pro5000 48G, CUDA_DEVICE_ORDER=PCI_BUS_ID pinned so device 1 is the 96GB card), "
        "GPU1 idle before the start ('GPU1 idle (2MiB)'), GPU2 used by another user. vLLM 0.24.0, driver 590.48.01 / "
        "CUDA 13.1 (TP2 log of the same server). 100,544 x 256 KiB = 24.55 GiB. max_num_batched_tokens 8192 "
        "stated for this server's deployments ('device mem>=70GiB so vLLM default max_num_batched_tokens=8192 "
        "(startup log)'). No VLLM_ATTENTION_BACKEND override in this script. Prefix caching on, CUDA graphs on "
        "('CUDA graph capture complete').",
        part="sealed",
        vllm="0.24.0",
        source=KTH_SOURCE,
        log="distserving Qwen3-32B Pro6000 TP1 util 0.92 (Deployment A')",
        quote=(
            "Available KV cache memory | 24.55 GiB",
            "C_total (fixed) | 100,544 tokens (kv_cache_utils.py:2146)",
            "Max concurrency @32,768 tok/req | 3.07x",
            "GPU1 usage | 91,524 MiB / 97,887",
        ),
        reported="tokens",
        gpu="NVIDIA RTX PRO 6000 Blackwell 96GB (nutella1 GPU1; nvidia-smi 97,887 MiB)",
        gpu_source=PRO6000_TOTAL,
        version=KTH_VERSION,
        flags="CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1 vllm serve Qwen/Qwen3-32B --tensor-parallel-size 1 "
        "--host 0.0.0.0 --port 8000 --max-model-len 32768 --gpu-memory-utilization 0.92 "
        "(scripts/_serve_vllm_gpu1_yunuikang.sh), VLLM_USE_FLASHINFER_SAMPLER=0",
        model_source="tests/data/models/Qwen3-32B",
    ),
    Case(
        "Qwen3-32B, 2x RTX PRO 6000 Blackwell 96GB, TP2, util 0.92, V1 0.24.0, len 32768",
        KTH.format("1ee14d8677376c6935e14694df0cafd3ce2d5114") + "logs/2026-07-16_TP2_RESULTS_yunuikang.md",
        cfg("Qwen3-32B"),
        94.97,
        0.92,
        456944,
        tp=2,
        max_model_len=32768,
        batched_tokens=8192,
        estimate_cudagraphs=True,
        note=KTH_NOTE + "'Deployment A' (P0-2, 2026-07-16): GPU1+GPU2 of nutella1, both 96GB Pro6000 (P0-6b checks "
        "the mapping: Worker_TP0 and Worker_TP1 on the two 96GB cards, CUDA_DEVICE_ORDER=PCI_BUS_ID; GPUs idle, "
        "2 MiB, before the start). Non-eager: 'CUDA graphs (FULL) 51 captured (8s, 0.81 GiB)'; custom + PyNCCL "
        "all-reduce (no NVLink), FLASH_ATTN v2. The KV figure is quoted as vLLM's cache_config_info "
        "(block_size 16 x num_gpu_blocks 28,559); a restart (P1-0) printed 456,928 tokens. 456,944 x 128 KiB per "
        "rank = 55.78 GiB per card. max_num_batched_tokens 8192 'startup log measured' (P2 log, A-4).",
        part="sealed",
        vllm="0.24.0",
        source=KTH_SOURCE,
        log="distserving Qwen3-32B 2x Pro6000 TP2 util 0.92 (Deployment A, first start)",
        quote=(
            "vLLM cache_config_info = block_size=16 x num_gpu_blocks=28,559 = C_total 456,944 tokens",
            "32k-max-context max concurrency 13.94x",
        ),
        reported="tokens",
        gpu="2x NVIDIA RTX PRO 6000 Blackwell 96GB (nutella1 GPU1+2; nvidia-smi 93,250 MiB used on each while serving)",
        gpu_source=PRO6000_TOTAL,
        version=KTH_VERSION + "; P0-1: 'vLLM 0.24.0 / torch 2.11.0+cu130, driver 590.48.01 / CUDA 13.1, Blackwell "
        "sm_120'",
        flags="CUDA_VISIBLE_DEVICES=1,2 vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 32768 "
        "--gpu-memory-utilization 0.92 --port 8000 (scripts/_serve_vllm_tp2_yunuikang.sh, also --host 0.0.0.0), "
        "VLLM_USE_FLASHINFER_SAMPLER=0",
        model_source="tests/data/models/Qwen3-32B",
    ),
    Case(
        "Llama-2-7b-hf, A100 80GB PCIe, util 0.90, V1 0.19.0, len 2048",
        "https://github.com/inspektor-gadget/ig-gpu-instructions/blob/741efa793d11c86c07067e6f1a9cbdb9e848e68f/"
        "use-cases/vllm-gpu-memory-oom.md",
        LLAMA2_7B,
        79.17,
        0.90,
        119536,
        max_model_len=2048,
        note="A GPU-memory flamegraph use case (inspektor-gadget ig-gpu profiler): 'Profile 1: Unquantized Model "
        "(Healthy Baseline)', the log lines abridged by the author (no timestamps). Setup: 'GPU: NVIDIA A100 80GB "
        "PCIe', 'vLLM: v0.19.0'. The profiler (a malloc allocation profiler) runs beside vLLM; it is not a GPU "
        "tenant. CUDA graphs on ('Graph capturing finished in 5 secs, took 0.46 GiB'), prefix caching on, "
        "max_num_batched_tokens not printed (the release's default for an 80 GB card). 119,536 = 7,471 blocks x 16 "
        "= 58.37 GiB / 512 KiB per token. The same document's Qwen3.5-35B-A3B-FP8 runs are a hybrid model (left "
        "out).",
        part="sealed",
        vllm="0.19.0",
        source="inspektor-gadget/ig-gpu-instructions",
        log="ig-gpu vllm-gpu-memory-oom Llama-2-7b A100 util 0.90",
        quote=(
            "Model loading took 12.55 GiB memory",
            "Available KV cache memory: 58.37 GiB",
            "GPU KV cache size: 119,536 tokens",
            "Graph capturing finished in 5 secs, took 0.46 GiB",
        ),
        reported="tokens",
        gpu="NVIDIA A100 80GB PCIe",
        gpu_source=A100_80_PCIE_TOTAL,
        version="0.19.0 (the document's Setup: 'vLLM: v0.19.0')",
        flags="vllm serve NousResearch/Llama-2-7b-hf --max-model-len 2048 --gpu-memory-utilization 0.90",
        model_source=HF.format("NousResearch/Llama-2-7b-hf") + " (a copy of meta-llama/Llama-2-7b-hf; planner_cases "
        "LLAMA2_7B, float16)",
    ),
    Case(
        "Llama-3.2-3B-Instruct, L4 (22.03 GiB), util 0.92 (default), V1 0.27.1, len 20000",
        LLMR.format("02935a7eb7b5ff4c75ad381ffbe54fb2054f7953")
        + "benchmarks/evidence/week2/first_session/session_logs/vllm.log",
        LLAMA32_3B,
        22.03,
        0.92,
        117392,
        max_model_len=20000,
        batched_tokens=2048,
        estimate_cudagraphs=True,
        note=LLMR_NOTE + "First session (08-18): CUDA graphs on (FULL_AND_PIECEWISE, 51 + 35 captured), prefix caching "
        "on (default). 117,392 x 112 KiB = 12.54 GiB.",
        part="sealed",
        vllm="0.27.1",
        source=LLMR_SOURCE,
        log="LLMRouter week2 first_session vllm.log 08-18 18:49",
        quote=(
            "(APIServer pid=4962) INFO 08-18 18:49:44 [api_utils.py:273] non-default args: {'model_tag': "
            "'meta-llama/Llama-3.2-3B-Instruct', 'model': 'meta-llama/Llama-3.2-3B-Instruct', 'max_model_len': 20000}",
            "(EngineCore pid=5064) INFO 08-18 18:50:57 [model_runner.py:329] Model loading took 6.04 GiB and "
            "48.270039 seconds",
            "(EngineCore pid=5064) INFO 08-18 18:51:23 [gpu_worker.py:563] Available KV cache memory: 12.54 GiB",
            "(EngineCore pid=5064) INFO 08-18 18:51:23 [kv_cache_utils.py:2235] GPU KV cache size: 117,392 tokens",
            "(EngineCore pid=5064) INFO 08-18 18:51:23 [kv_cache_utils.py:2236] Maximum concurrency for 20,000 tokens "
            "per request: 5.87x",
            "(EngineCore pid=5064) INFO 08-18 18:51:30 [model_runner.py:791] Graph capturing finished in 6 secs, took "
            "0.49 GiB",
            "(EngineCore pid=5064) INFO 08-18 18:51:30 [gpu_worker.py:789] Free memory on device (21.84/22.03 GiB) on "
            "startup. Desired GPU memory utilization is (0.92, 20.27 GiB). Actual usage is 6.98 GiB for consumed "
            "memory (weights + non-torch), 0.75 GiB for peak activation, and 0.49 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=12784249140` (11.91 GiB) to fit into requested "
            "memory, or `--kv-cache-memory=14473557504` (13.48 GiB) to fully utilize gpu memory. Current kv cache "
            "memory in use is 12.54 GiB.",
        ),
        reported="tokens",
        gpu="NVIDIA L4 (GCP instance; BASELINE.md '1x L4')",
        gpu_source=L4_GCP_TOTAL,
        version="0.27.1 ('version 0.27.1' banner, 'Initializing a V1 LLM engine (v0.27.1)')",
        flags="VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve meta-llama/Llama-3.2-3B-Instruct --port 8000 "
        "--max-model-len 20000",
        model_source=HF.format("meta-llama/Llama-3.2-3B-Instruct") + " (planner_cases LLAMA32_3B; the repository's "
        "own hash-verified copy quotes 28 layers, 24 heads, 8 KV heads, head_dim 128, hidden 3072, bfloat16)",
    ),
    Case(
        "Llama-3.2-3B-Instruct, L4 (22.03 GiB), util 0.92 (default), V1 0.27.1, len 20000, eager, no prefix caching",
        LLMR.format("49830fb44e6e14d93a5ec6f210ed9fdf87715aa6") + "benchmarks/evidence/week2/session_2/vllm.log",
        LLAMA32_3B,
        22.03,
        0.92,
        129888,
        max_model_len=20000,
        batched_tokens=2048,
        enforce_eager=True,
        note=LLMR_NOTE + "Session 2 (08-23), a fresh instance: --enforce-eager and --no-enable-prefix-caching. "
        "129,888 x 112 KiB = 13.87 GiB. A different start and instance from the first-session case.",
        part="sealed",
        vllm="0.27.1",
        source=LLMR_SOURCE,
        log="LLMRouter week2 session_2 vllm.log 08-23 07:25",
        quote=(
            "(APIServer pid=3199) INFO 08-23 07:25:16 [api_utils.py:273] non-default args: {'model_tag': "
            "'meta-llama/Llama-3.2-3B-Instruct', 'model': 'meta-llama/Llama-3.2-3B-Instruct', 'max_model_len': 20000, "
            "'enforce_eager': True, 'enable_prefix_caching': False}",
            "(EngineCore pid=3295) INFO 08-23 07:26:28 [model_runner.py:329] Model loading took 6.04 GiB and "
            "47.837123 seconds",
            "(EngineCore pid=3295) INFO 08-23 07:26:32 [gpu_worker.py:563] Available KV cache memory: 13.87 GiB",
            "(EngineCore pid=3295) INFO 08-23 07:26:32 [kv_cache_utils.py:2235] GPU KV cache size: 129,888 tokens",
            "(EngineCore pid=3295) INFO 08-23 07:26:32 [kv_cache_utils.py:2236] Maximum concurrency for 20,000 tokens "
            "per request: 6.49x",
            "(EngineCore pid=3295) INFO 08-23 07:26:32 [gpu_worker.py:789] Free memory on device (21.84/22.03 GiB) on "
            "startup. Desired GPU memory utilization is (0.92, 20.27 GiB). Actual usage is 6.27 GiB for consumed "
            "memory (weights + non-torch), 0.13 GiB for peak activation, and 0.0 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=14740775220` (13.73 GiB) to fit into requested "
            "memory, or `--kv-cache-memory=16430083584` (15.3 GiB) to fully utilize gpu memory. Current kv cache "
            "memory in use is 13.87 GiB.",
        ),
        reported="tokens",
        gpu="NVIDIA L4 (GCP instance; BASELINE.md '1x L4')",
        gpu_source=L4_GCP_TOTAL,
        version="0.27.1 ('version 0.27.1' banner, 'Initializing a V1 LLM engine (v0.27.1)')",
        flags="VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve meta-llama/Llama-3.2-3B-Instruct --port 8000 --enforce-eager "
        "--no-enable-prefix-caching --max-model-len 20000",
        model_source=HF.format("meta-llama/Llama-3.2-3B-Instruct") + " (planner_cases LLAMA32_3B)",
    ),
    Case(
        "Qwen3-0.6B, A100 80GB PCIe, util 0.20, V1 0.26.0, len 512, eager, batched 256, max_num_seqs 2",
        "https://github.com/qcrs/llm-kv-lab/blob/a0380595fa50f47936a9d255a23fda96bf0191c5/00-docs/source-reading/"
        "vllm/experiments/05-e5-prefix-cache-reuse.md",
        QWEN3_06B,
        79.17,
        0.20,
        136736,
        max_model_len=512,
        batched_tokens=256,
        max_num_seqs=2,
        enforce_eager=True,
        note="A source-reading lab's experiment E5 (prefix-cache reuse, marked 'PASS / Frozen'): offline vllm.LLM in one "
        "process, V1 engine with the V2 model runner (VLLM_USE_V2_MODEL_RUNNER=1 in the lab's E1 setup), FlashAttention "
        "2, async scheduling. The vLLM is the lab's own checkout of 0.26.0 (third_party/vllm) with print-only trace "
        "hooks (QCACHE_BRIDGE_TRACE) that do not allocate GPU memory. The KV line is given once for the E5 "
        "configuration, which was run with enable_prefix_caching False and True (A/B) and otherwise identical. "
        "'CUDA visible devices: 1' (one A100 of the box); whether another process shared that card is not stated. "
        "136,736 x 112 KiB = 14.6 GiB; 136,736 / 512 = 267.06.",
        part="sealed",
        vllm="0.26.0",
        source="qcrs/llm-kv-lab",
        log="llm-kv-lab E5 Qwen3-0.6B A100 util 0.2",
        quote=(
            "GPU KV cache size: 136,736 tokens",
            "Maximum concurrency for 512 tokens/request: 267.06x",
        ),
        reported="tokens",
        gpu="NVIDIA A100 80GB PCIe ('GPU: NVIDIA A100 80GB PCIe', 'CUDA visible devices: 1', TP=1)",
        gpu_source=A100_80_PCIE_TOTAL,
        version="0.26.0 ('vLLM : 0.26.0', PyTorch 2.11.0+cu129; the lab's pinned source checkout)",
        flags="vllm.LLM(model='/data/models/Qwen3-0.6B', block_size=16, max_model_len=512, max_num_batched_tokens=256, "
        "max_num_seqs=2, gpu_memory_utilization=0.2, enforce_eager=True, enable_prefix_caching=False/True)",
        model_source=HF.format("Qwen/Qwen3-0.6B")
        + " (planner_cases QWEN3_06B; a local copy '/data/models/Qwen3-0.6B')",
    ),
    Case(
        "Llama-3.1-8B-Instruct, 2x RTX 3090, TP2, util 0.85, V1 0.19.0, len 32768",
        AGS_3090,
        LLAMA31_8B,
        23.56,
        0.85,
        195520,
        tp=2,
        max_model_len=32768,
        batched_tokens=2048,
        estimate_cudagraphs=False,
        note=AGS_NOTE
        + "S4 capture, log 3090:/home/kevinlau/m3090_run/l13/vllm_gtflags_tp2.log, without the CUDA-graph estimate env var. 195,520 x 64 KiB per rank = 11.93 GiB per card.",
        part="sealed",
        vllm="0.19.0",
        source=AGS_SOURCE,
        log="agentic-serve 3090 tp2 S4 vllm_gtflags_tp2.log 06-11 21:12",
        quote=(
            "(Worker_TP0 pid=591412) INFO 06-11 21:12:55 [gpu_worker.py:436] Available KV cache memory: 11.93 GiB",
            "(EngineCore pid=591192) INFO 06-11 21:12:55 [kv_cache_utils.py:1319] GPU KV cache size: 195,520 tokens",
            "(EngineCore pid=591192) INFO 06-11 21:12:55 [kv_cache_utils.py:1324] Maximum concurrency for 32,768 tokens per request: 5.97x",
        ),
        reported="tokens",
        gpu="2x NVIDIA GeForce RTX 3090 24GB (nvidia-smi '0, NVIDIA GeForce RTX 3090, 24576 MiB')",
        gpu_source=RTX3090_TOTAL,
        version="0.19.0 (the host's installed engine; 'vllm 0.19.0 (the GT engine version)')",
        flags=AGS_FLAGS.format(tp=2, port=8791),
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct")
        + " (planner_cases LLAMA31_8B; the source: 'Llama-3.1-8B "
        "131,072 B/token total')",
    ),
    Case(
        "Llama-3.1-8B-Instruct, 4x RTX 3090, TP4, util 0.85, V1 0.19.0, len 32768",
        AGS_3090,
        LLAMA31_8B,
        23.56,
        0.85,
        513120,
        tp=4,
        max_model_len=32768,
        batched_tokens=2048,
        estimate_cudagraphs=False,
        note=AGS_NOTE
        + "S4 capture, log 3090:/home/kevinlau/m3090_run/l13/vllm_gtflags_tp4.log (a first attempt aborted on leaked tp2 workers; retried on a re-verified clean host), without the CUDA-graph estimate env var. 513,120 x 32 KiB per rank = 15.66 GiB per card.",
        part="sealed",
        vllm="0.19.0",
        source=AGS_SOURCE,
        log="agentic-serve 3090 tp4 S4 vllm_gtflags_tp4.log 06-11 21:22",
        quote=(
            "(Worker_TP0 pid=594615) INFO 06-11 21:22:45 [gpu_worker.py:436] Available KV cache memory: 15.66 GiB",
            "(EngineCore pid=594389) INFO 06-11 21:22:45 [kv_cache_utils.py:1319] GPU KV cache size: 513,120 tokens",
            "(EngineCore pid=594389) INFO 06-11 21:22:45 [kv_cache_utils.py:1324] Maximum concurrency for 32,768 tokens per request: 15.66x",
        ),
        reported="tokens",
        gpu="4x NVIDIA GeForce RTX 3090 24GB (nvidia-smi '0, NVIDIA GeForce RTX 3090, 24576 MiB')",
        gpu_source=RTX3090_TOTAL,
        version="0.19.0 (the host's installed engine; 'vllm 0.19.0 (the GT engine version)')",
        flags=AGS_FLAGS.format(tp=4, port=8792),
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct")
        + " (planner_cases LLAMA31_8B; the source: 'Llama-3.1-8B "
        "131,072 B/token total')",
    ),
    Case(
        "Llama-3.1-8B-Instruct, 2x RTX 3090, TP2, util 0.85, V1 0.19.0, len 32768, CUDA-graph estimate on",
        AGS_3090,
        LLAMA31_8B,
        23.56,
        0.85,
        175808,
        tp=2,
        max_model_len=32768,
        batched_tokens=2048,
        estimate_cudagraphs=True,
        note=AGS_NOTE
        + "Round-2 (S7) capture with the benchmark launcher's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, log 3090:/home/kevinlau/m3090_run/l13/s7/vllm_s7_tp2.log; vLLM logged that 0.8500 'is equivalent to --gpu-memory-utilization=0.7989 [tp2] without CUDA graph memory profiling'. Port not restated for S7 (the S4 one is shown in flags).",
        part="sealed",
        vllm="0.19.0",
        source=AGS_SOURCE,
        log="agentic-serve 3090 tp2 S7 vllm_s7_tp2.log 06-11 23:52",
        quote=(
            "(Worker_TP0 pid=636978) INFO 06-11 23:52:40 [gpu_worker.py:436] Available KV cache memory: 10.73 GiB",
            "(EngineCore pid=636705) INFO 06-11 23:52:40 [kv_cache_utils.py:1319] GPU KV cache size: 175,808 tokens",
        ),
        reported="tokens",
        gpu="2x NVIDIA GeForce RTX 3090 24GB (nvidia-smi '0, NVIDIA GeForce RTX 3090, 24576 MiB')",
        gpu_source=RTX3090_TOTAL,
        version="0.19.0 (the host's installed engine; 'vllm 0.19.0 (the GT engine version)')",
        flags="VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 " + AGS_FLAGS.format(tp=2, port=8791),
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct")
        + " (planner_cases LLAMA31_8B; the source: 'Llama-3.1-8B "
        "131,072 B/token total')",
    ),
    Case(
        "Llama-3.1-8B-Instruct, 4x RTX 3090, TP4, util 0.85, V1 0.19.0, len 32768, CUDA-graph estimate on",
        AGS_3090,
        LLAMA31_8B,
        23.56,
        0.85,
        477856,
        tp=4,
        max_model_len=32768,
        batched_tokens=2048,
        estimate_cudagraphs=True,
        note=AGS_NOTE
        + "Round-2 (S7) capture with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, log 3090:/home/kevinlau/m3090_run/l13/s7/vllm_s7_tp4.log; vLLM logged 0.8500 as equivalent to 0.8043 [tp4] without CUDA graph memory profiling. Port not restated for S7.",
        part="sealed",
        vllm="0.19.0",
        source=AGS_SOURCE,
        log="agentic-serve 3090 tp4 S7 vllm_s7_tp4.log 06-11 23:34",
        quote=(
            "(Worker_TP0 pid=627509) INFO 06-11 23:34:25 [gpu_worker.py:436] Available KV cache memory: 14.58 GiB",
            "(EngineCore pid=627193) INFO 06-11 23:34:25 [kv_cache_utils.py:1319] GPU KV cache size: 477,856 tokens",
        ),
        reported="tokens",
        gpu="4x NVIDIA GeForce RTX 3090 24GB (nvidia-smi '0, NVIDIA GeForce RTX 3090, 24576 MiB')",
        gpu_source=RTX3090_TOTAL,
        version="0.19.0 (the host's installed engine; 'vllm 0.19.0 (the GT engine version)')",
        flags="VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 " + AGS_FLAGS.format(tp=4, port=8792),
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct")
        + " (planner_cases LLAMA31_8B; the source: 'Llama-3.1-8B "
        "131,072 B/token total')",
    ),
    Case(
        "Meta-Llama-3.1-8B-Instruct, A100 40GB (GCP a2-highgpu-1g), util 0.90, V1 0.15.1, len 131072, eager, LLM class",
        "https://github.com/ilseokoh/vllm-gce/blob/ede8ee4e36cf1ed10471b3ff38514159f71dfa58/README.md",
        LLAMA31_8B,
        39.49,
        0.90,
        157936,
        max_model_len=131072,
        batched_tokens=8192,
        enforce_eager=True,
        note="Korean study notes for running vLLM on Google Cloud Compute Engine: 'a2-highgpu-1g (12 vCPUs, 85 GB "
        "Memory) - A100 GPU Quota 1'. test.py (same repository) builds LLM(model=..., enforce_eager=True, "
        "gpu_memory_utilization=0.9, tensor_parallel_size=1); the README's sample output is that run ('출력 예시'), "
        "whose non-default args omit util (0.9 is the default). Max model len 131072 from the config; the LLM "
        "class's printed max_num_batched_tokens=8192. Prefix caching on (default). 157,936 x 128 KiB = 19.28 GiB.",
        part="sealed",
        vllm="0.15.1",
        source="ilseokoh/vllm-gce",
        log="vllm-gce test.py A100 02-06 03:33",
        quote=(
            "INFO 02-06 03:33:17 [utils.py:261] non-default args: {'disable_log_stats': True, 'enforce_eager': True, "
            "'model': '/home/admin_iloh_altostrat_com/models/Meta-Llama-3.1-8B-Instruct'}",
            "INFO 02-06 03:33:17 [model.py:1561] Using max model len 131072",
            "INFO 02-06 03:33:17 [scheduler.py:226] Chunked prefill is enabled with max_num_batched_tokens=8192.",
            "(EngineCore_DP0 pid=10479) INFO 02-06 03:33:32 [gpu_model_runner.py:4130] Model loading took 14.99 GiB "
            "memory and 6.720924 seconds",
            "(EngineCore_DP0 pid=10479) INFO 02-06 03:33:33 [gpu_worker.py:356] Available KV cache memory: 19.28 GiB",
            "(EngineCore_DP0 pid=10479) INFO 02-06 03:33:33 [kv_cache_utils.py:1307] GPU KV cache size: 157,936 tokens",
            "(EngineCore_DP0 pid=10479) INFO 02-06 03:33:33 [kv_cache_utils.py:1312] Maximum concurrency for 131,072 "
            "tokens per request: 1.20x",
        ),
        reported="tokens",
        gpu="NVIDIA A100 40GB (GCP a2-highgpu-1g, one GPU)",
        gpu_source=R3_A100_40_TOTAL,
        version="0.15.1 ('Initializing a V1 LLM engine (v0.15.1)')",
        flags="vllm.LLM(model='.../Meta-Llama-3.1-8B-Instruct', enforce_eager=True, gpu_memory_utilization=0.9, "
        "tensor_parallel_size=1) (test.py @506a8fd5)",
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct") + " (planner_cases LLAMA31_8B; cloned as "
        "meta-llama/Meta-Llama-3.1-8B-Instruct)",
    ),
    Case(
        "Qwen2.5-14B-Instruct, H100 80GB HBM3, util 0.90, V1 0.21.0, len 4096, no prefix caching, max_num_seqs 256",
        "https://github.com/llm-inferno/server-sim/blob/30110e07126ed2b89f135375178b7168fe406d96/docs/example-runs/"
        "qwen2.5-14b-h100/results/vllm-startup-calibration.txt",
        cfg("Qwen2.5-14B-Instruct"),
        79.18,
        0.90,
        226240,
        max_model_len=4096,
        batched_tokens=8192,
        max_num_seqs=256,
        estimate_cudagraphs=True,
        note="A simulator project's frozen example run ('Qwen2.5-14B-Instruct on H100'): the raw KV lines copied from "
        "the vLLM pod log into results/vllm-startup-calibration.txt, the deployment as applied in "
        "manifests/deployment-vllm-qwen.yaml (image vllm/vllm-openai:v0.21.0, one GPU, OpenShift nodes "
        "'NVIDIA-H100-80GB-HBM3'). CUDA graphs on; v0.21 subtracts the CUDA-graph estimate by default ('CUDA graph "
        "memory profiling is enabled (default since v0.21.0)' in other public logs). max_num_batched_tokens not "
        "printed: the release's default for an H100 API server (8192). 226,240 x 192 KiB = 41.43 GiB.",
        part="sealed",
        vllm="0.21.0",
        source="llm-inferno/server-sim",
        log="server-sim qwen2.5-14b-h100 06-24 15:25",
        quote=(
            "(APIServer pid=44) INFO 06-24 15:25:29 [utils.py:240] non-default args: {'model_tag': "
            "'Qwen/Qwen2.5-14B-Instruct', 'model': 'Qwen/Qwen2.5-14B-Instruct', 'trust_remote_code': True, 'dtype': "
            "'bfloat16', 'max_model_len': 4096, 'served_model_name': ['qwen'], 'generation_config': 'vllm', "
            "'download_dir': '/models-cache', 'gpu_memory_utilization': 0.9, 'enable_prefix_caching': False, "
            "'max_num_seqs': 256}",
            "(EngineCore pid=245) INFO 06-24 15:26:28 [gpu_worker.py:462] Available KV cache memory: 41.43 GiB",
            "(EngineCore pid=245) INFO 06-24 15:26:28 [kv_cache_utils.py:1710] GPU KV cache size: 226,240 tokens",
            "(EngineCore pid=245) INFO 06-24 15:26:28 [kv_cache_utils.py:1711] Maximum concurrency for 4,096 tokens "
            "per request: 55.23x",
        ),
        reported="tokens",
        gpu="NVIDIA H100 80GB HBM3 (OpenShift node label 'NVIDIA-H100-80GB-HBM3')",
        gpu_source=H100_TOTAL,
        version="0.21.0 (image vllm/vllm-openai:v0.21.0; README: 'vLLM v0.21.0 prints the real KV capacity')",
        flags="vllm serve Qwen/Qwen2.5-14B-Instruct --served-model-name qwen --trust-remote-code --download-dir "
        "/models-cache --no-enable-prefix-caching --dtype bfloat16 --max-model-len 4096 --max-num-seqs 256 "
        "--gpu-memory-utilization 0.90 --port 8000 --generation-config vllm",
        model_source="tests/data/models/Qwen2.5-14B-Instruct",
    ),
    Case(
        "Qwen2.5-3B-Instruct fp16, Colab Tesla T4 (14.56 GiB), util 0.90, V0 0.6.6.post1, eager, len 4096",
        TT + "reports/vllm-colab-t4-e2e-2026-06-24/09-vllm-server.log",
        shape(QWEN25_3B, torch_dtype="float16"),
        14.56,
        0.90,
        10533 * 16,
        max_model_len=4096,
        engine="v0",
        enforce_eager=True,
        note="KV tokens = 10533 blocks x 16. Colab T4 (sm_75) with VLLM_ATTENTION_BACKEND=XFORMERS; --dtype half "
        "(cast from bf16); chunked prefill off (len 4096), max_num_seqs default 256. The same start is quoted in "
        "04-verify.txt (log tail) and, abridged, in the repository's Colab T4 runbook (memo/)",
        part="sealed",
        vllm="0.6.6.post1",
        source="TickerTaka/TickerTaka-backend",
        log="TickerTaka colab T4 09-vllm-server.log",
        quote=(
            "INFO 06-24 14:57:17 api_server.py:712] vLLM API server version 0.6.6.post1",
            "WARNING 06-24 14:57:18 config.py:2276] Casting torch.bfloat16 to torch.float16.",
            "INFO 06-24 14:57:54 selector.py:129] Using XFormers backend.",
            "INFO 06-24 14:59:06 model_runner.py:1099] Loading model weights took 5.7915 GB",
            "INFO 06-24 14:59:08 worker.py:241] Memory profiling takes 2.06 seconds",
            "INFO 06-24 14:59:08 worker.py:241] the current vLLM instance can use total_gpu_memory (14.56GiB) x "
            "gpu_memory_utilization (0.90) = 13.11GiB",
            "INFO 06-24 14:59:08 worker.py:241] model weights take 5.79GiB; non_torch_memory takes 0.13GiB; PyTorch "
            "activation peak memory takes 1.40GiB; the rest of the memory reserved for KV Cache is 5.79GiB.",
            "INFO 06-24 14:59:08 gpu_executor.py:76] # GPU blocks: 10533, # CPU blocks: 7281",
            "INFO 06-24 14:59:08 gpu_executor.py:80] Maximum concurrency for 4096 tokens per request: 41.14x",
            "INFO 06-24 14:59:12 llm_engine.py:431] init engine (profile, create kv cache, warmup model) took 6.38 seconds",
        ),
        reported="blocks",
        gpu="Google Colab Tesla T4 16GB (01-status.txt 'Hardware: T4'; 02-setup.txt 'device Tesla T4')",
        gpu_source="printed in the log (total_gpu_memory (14.56GiB))",
        version="0.6.6.post1 printed ('vLLM API server version 0.6.6.post1', 'Initializing an LLM engine (v0.6.6.post1)')",
        flags="scripts/colab/serve.py: VLLM_ATTENTION_BACKEND=XFORMERS python -m vllm.entrypoints.openai.api_server "
        "--model Qwen/Qwen2.5-3B-Instruct --dtype half --enforce-eager --max-model-len 4096 "
        "--gpu-memory-utilization 0.90 --port 8000 (args line agrees: block_size None -> 16, max_num_seqs None, "
        "swap_space 4, kv_cache_dtype 'auto')",
        model_source=HF.format("Qwen/Qwen2.5-3B-Instruct") + " (public copies of its values: 36 layers, 2048 hidden, "
        "16 heads, 2 KV heads, 11008 intermediate, vocab 151936, 32768 positions, tied); weights 5.7915 GB and "
        "5.79 GiB / 36 KiB per token / 16 = 10,540 agree",
    ),
]

SEALED: list[Case] = FIRST_BATCH + SECOND_BATCH + THIRD_BATCH + FOURTH_BATCH + FIFTH_BATCH
SECOND = {c.name for c in SECOND_BATCH}
THIRD = {c.name for c in THIRD_BATCH}
THIRD_GATHERED = THIRD_DATE
FOURTH = {c.name for c in FOURTH_BATCH}
FOURTH_GATHERED = FOURTH_DATE
FIFTH = {c.name for c in FIFTH_BATCH}
FIFTH_GATHERED = FIFTH_DATE

RULES_AFTER[
    "V0's eager forward pass holds what its model code holds (planner.v0_forward_copies: Qwen2's MLP keeps gate_up, "
    "LlamaMLP frees it from 0.6.4), 0.6.4 counts the CUDA context (ACCOUNTINGS 'v0-all-non-torch'); the fitted "
    "non-torch and context constants refitted on the tuning part after that, and adopted once the held-out and "
    "sealed figures with them had been seen"
] = tuple(c.name for c in FIRST_BATCH + SECOND_BATCH)

# Candidates seen and left out, with the reason (decided before the planner was run on them).
LEFT_OUT: dict[str, str] = {
    **LEFT_OUT_THIRD,
    **LEFT_OUT_FOURTH,
    **LEFT_OUT_FIFTH,
    "dennislee22/vLLM-benchmarking Tests 6-8 (Qwen2.5-32B TP1/TP2, Qwen2-72B TP2)": "no start-up log committed and "
    "no util stated; only the 'Available KV cache memory' figure in the headings",
    "dennislee22/vLLM-benchmarking log/vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log": "gpt-oss-120b (MXFP4 MoE, "
    "sliding-window + sink attention): outside the text-decoder families asked for",
    "code: book notes 'Example 4-3. vLLM logs information about memory' (total_gpu_memory (79.14GiB), KV 54.93GiB)": "model not named (only 14.9888 GB weights), max_model_len and flags not stated, lines elided with '...'",
    "code: log-parser samples with total_gpu_memory (79.11GiB)/(79.15GiB) and 'GPU KV cache size: 447,088 / "
    "445,648 / 447,776 tokens'": "written as representative samples for tests, not a real start",
    "code: Qwen2.5-1.5B-Instruct on T4, '# CUDA blocks: 5519'": "GRPO training with Unsloth: vLLM shares the GPU "
    "with the trainer",
    "code: '# cuda blocks: 190100' (47.50GiB card)": "Unsloth's patched vLLM (as planner_cases' LEFT_OUT)",
    "code: '# cuda blocks: 14815' (79.15GiB, util 0.70)": "LoRA adapters (PunicaWrapperGPU)",
    "code: '# cuda blocks: 307335' (79.33GiB)": "LoRA on a vision model (multimodal, LoRA)",
    "code: '# cuda blocks: 15712' (23.53GiB, util 0.20) and '# cuda blocks: 41345' (23.65GiB, util 0.40)": "excerpts name no model; look like Unsloth notebooks; not examined further for lack of time",
    "https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/": "gpt-oss-20b and Gemma-4 (hybrid sliding-window "
    "attention, config not clear) on A100",
    "https://blog.huikang.dev/2025/12/28/vllm-logs.html": "gpt-oss-120b (MXFP4 MoE)",
    "code: DSV4 / Gemma4 MTP / DeepseekV4 notes with 'GPU KV cache size'": "MLA or speculative decoding, CPU "
    "offload; GPU and util not all stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+307%2C184+tokens%22"): "MiniMaxAI/MiniMax-M2.5 (FP8 MoE, 62 layers, 8 KV "
    "heads) on 4x H100 80GB, TP4, vLLM v0.19.1rc1.dev71+gdd9342e6b, util 0.95, max_model_len 128000, max_num_seqs 10, "
    "max_num_batched_tokens 8192 (a capacity document quoting logs/service.log): 'Model loading took 53.75 GiB memory', "
    "'Available KV cache memory: 18.16 GiB', 'GPU KV cache size: 307,184 tokens', 'Maximum concurrency for 128,000 "
    "tokens per request: 2.40x', and the hint 'increase --gpu-memory-utilization from 0.9500 to 0.9526'. Left out "
    "only because a full public copy of MiniMax-M2.5's config.json could not be found in the time (GPU 4 of the box "
    "runs a separate Parakeet service, GPUs 0-3 are this engine's); a good case once the config is established.",
    SEARCH.format("%22GPU+KV+cache+size%3A+399%2C424+tokens%22"): "MiniMax-M2.5 FP8 on 4x RTX PRO 6000, defaults "
    "(399,424 tokens at 196,608): community compilation, vLLM version not stated (':latest'), GPU total not printed",
    SEARCH.format("%22GPU+KV+cache+size%3A+148%2C096+tokens%22"): "Llama-3.1-8B-Instruct on A100, vLLM 0.8.2 "
    "(gateway-api-inference-extension blog): --enable-lora --max-loras 2 (LoRA)",
    SEARCH.format("%22GPU+KV+cache+size%3A+246%2C576+tokens%22"): "Qwen3.5-9B on 2x RTX 5090, vLLM 0.20.0: hybrid "
    "GDN/attention multimodal model (and an MTP run)",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+44%2C832+tokens%22"
    ): "Qwen3-8B on a Dell GB10 (unified memory), vLLM 0.27.1, "
    "util 0.20, with/without a KVBM connector: unified memory is outside the planner's model",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+46%2C400+tokens%22"
    ): "Carnice NVFP4 (Qwen3.5 hybrid) with MTP and fp8 KV on 2x RTX 5060 Ti: hybrid model and speculative decoding",
    SEARCH.format("%22GPU+KV+cache+size%3A+609%2C100+tokens%22"): "gemma-4-31B (sliding/full hybrid, multimodal) on 2x "
    "H200, util 0.85: Gemma-4 layout not clear for the planner",
    SEARCH.format("%22GPU+KV+cache+size%3A+126%2C832+tokens%22"): "Meta-Llama-3.1-70B-Instruct-AWQ-INT4 on RTX PRO "
    "6000 (0.14.0rc2 dev): model-switching marathon, util and max_model_len not stated, lines abridged",
    SEARCH.format("%22GPU+KV+cache+size%3A+643%2C232+tokens%22"): "vLLM documentation example (vllm-project/vllm, "
    "model and GPU not stated)",
    "code: hybrid/MLA/speculative notes with 'GPU KV cache size' (Qwen3.5/3.6/3.8, DeepSeek-V4, GLM-5.x, MiMo, "
    "Nemotron-H, gpt-oss, GB10 boxes)": "outside the dense/MoE text-decoder shapes asked for, or spec decode / "
    "nvfp4 KV / unified memory",
    "code: test fixtures and parsers quoting 'GPU KV cache size' (1,024 / 100,000 / 230,528 / 501,712 / 635,648 "
    "tokens ...)": "synthetic strings, not real starts",
    "code: OpenShift DeepSeek-R1-Distill-Qwen-1.5B demo ('Available KV cache memory: 2.46 GiB')": "no token/block "
    "line, GPU and util not established",
    "https://github.com/jackypanster/deploy-qwen (blog-post.md, 131K YaRN start)": "Qwen3-30B-A3B TP4, util 0.92, len "
    "131072: the quoted lines are not self-consistent ('KV Cache is 4.07GiB' gives 177,8xx tokens = 1.36x, but "
    "'Maximum concurrency for 131072 tokens per request: 1.21x' is printed; weights 14.27 vs 14.25 GiB) and no log "
    "file of it is committed; README quotes '0.9X = XX.XXGiB' placeholders",
    "code: Qwen2.5-Math-1.5B on L40 (total_gpu_memory (44.39GiB) x 0.85, '# CUDA blocks: 78115')": "same author/"
    "session as planner_cases' used case code:36332 ('(alignment)' prompt, same date 03-01, vLLM 0.7.2): treated as "
    "the same source",
    "code: DeepSeek-V2.5 PP2xTP8 on A100-SXM4-40GB ('# cuda blocks: 5302')": "MLA model (DeepSeek-V2), pipeline "
    "parallel over Ray",
    "code: DeepSeek-R1 TP8 on 8x H200 ('# cuda blocks: 18418', total_gpu_memory (139.81GiB) x 0.85)": "MLA model",
    "code: DeepSeek-Coder-V2-Lite on 8x A100 40GB (total_gpu_memory (39.39GiB))": "MLA model; KV block line not in "
    "the excerpt",
    "code: InternVL3-78B TP8 on L40S (total_gpu_memory (44.39GiB) x 0.92)": "multimodal (vision) model",
    "code: Qwen3-VL-30B-A3B AWQ on RTX 4090 48GB ('# cuda blocks: 3671')": "multimodal (video_grid_thw) model",
    "code: Llama-3.1-405B TP8 ('# GPU blocks: 51554', ROCmFlashAttention)": "AMD MI300X (non-NVIDIA)",
    "code: '# rocm blocks: 6495' / '# rocm blocks: 37011'": "AMD GPUs (non-NVIDIA)",
    "code: xinyuwei-david quantization comparison (Llama-3.1-8B '# GPU blocks: 9930', 0.5.4)": "README says H100 80GB "
    "but 9930 blocks at util 0.9 fits a ~40 GB card (log likely copied from a Colab notebook): GPU uncertain; also an "
    "already-used author",
    "code: just-record/vllm_practice (Llama-3.1-8B '# GPU blocks: 2575', 0.6.4.dev26)": "GPU not stated anywhere in "
    "the repository",
    "code: Qwen2.5-7B-Instruct '# GPU blocks: 5136' (v0.5.1, Chinese tutorial)": "GPU of the vLLM run not stated",
    "code: NIM llama3-8b-instruct '# GPU blocks: 27793' / '# GPU blocks: 1504' (NIM 1.0.0, vLLM 0.4.1)": "GPU and "
    "util not stated",
    "code: Mistral-7B-Instruct-v0.1 '# GPU blocks: 9010' (vLLM ~0.3, March 2024)": "on a MIG slice (40192MiB); total "
    "as torch sees it not printed",
    "code: Qwen2.5-7B-Instruct on a 31.37 GiB RTX 5090 (vLLM source build, 03-12)": "no KV line quoted",
    "https://github.com/vllm-project/vllm/issues/2382": "Mixtral-8x7B-AWQ TP2 on 2x A100 80GB, util 0.5, v0.2.7, "
    "'# GPU blocks: 6487': seen only through a wiki excerpt; vLLM 0.2's profile counted NCCL/context memory "
    "(as planner_cases' #2031 70B case), Mixtral sliding-window config not confirmed",
    "https://github.com/vllm-project/vllm/issues/12330": "already in planner_cases' LEFT_OUT",
    "code: Unsloth / LoRA logs ('# cuda blocks: 19813 / 12652 / 88952 / 41366 / 1353')": "LoRA adapters "
    "(PunicaWrapperGPU) or Unsloth's patched vLLM; 41366/41345 are CosyVoice2's LM",
    "code: '# cuda blocks: 314' (21.97GiB x 0.95)": "lines abridged/paraphrased ('total_gpu_memory=21.97GiB x ...', "
    "'KV Cache=1.23GiB'), not vLLM's wording",
    "code: '# GPU blocks: 37326' (23.98GiB, 'model weights take 0.00GiB')": "model weights 0.00 GiB: not a normal "
    "start (model not identified)",
    "code: many '# GPU blocks: 1234 / 2048 / 4096 / 6144 / 7890 / 8192 / 12345' hits": "illustrative or invented "
    "numbers in docs, tests and tutorials",
    SEARCH.format("%22GPU+KV+cache+size%3A+18%2C976+tokens%22"): "Qwen/Qwen3-32B on an NSCC node, vLLM 0.26.0, with an "
    "EAGLE-3 draft head (speculative decoding); GPU and util not stated in the file",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+52%2C960+tokens%22"
    ): "kvcached comparison write-up (baseline 'Model loading "
    "took 56.88 GiB', 4.85 GiB, 52,960 tokens at 16,384): not examined further for lack of time; kvcached setups "
    "share the GPU between engines (as issues_a's kvcached entry)",
    SEARCH.format("%22GPU+KV+cache+size%3A+7%2C228%2C559+tokens%22"): "305.79 GiB checkpoint on H200 (MLA/hybrid-class "
    "token count): outside the dense/MoE shapes asked for",
    SEARCH.format("%22GPU+KV+cache+size%3A+150%2C272+tokens%22"): "Qwen3-Coder-30B-A3B on 'a single 80GB card' (Barkla "
    "HPC, official vLLM image under Apptainer) at util 0.90, 'Model loading took 56.9342 GiB', 150,272 tokens: card "
    "model (A100 or H100) and vLLM version not stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+286%2C007+tokens%22"): "nvidia/Gemma-4-26B-A4B-NVFP4 under WSL: multimodal "
    "NVFP4 MoE",
    AGS + "profile_data/engine_logs/a100_Llama-3.1-8B_multi_pool_evidence.txt": "Llama-3.1-8B-Instruct TP1 on an "
    "A100-SXM4-40GB host, vLLM 0.19.0, util 0.85, prefix caching and chunked prefill on, two starts (mml 32768 "
    "05-04 and mml 8192 04-30) both 'Available KV cache memory: 17.12 GiB', 'GPU KV cache size: 140,208 tokens' "
    "(4.28x / 17.12x). Left out: the host's nvidia-smi shows an unusual '39936 MiB' per card (not the common 40960), "
    "so the total vLLM saw is not established (38.4-39.4 GiB: +-0.85 GiB of budget at 0.85)",
    AGS + "profile_data/engine_logs/2080ti_Llama-3.1-8B_tp1_pool_evidence.txt": "Llama-3.1-8B on a 22 GB (modified) "
    "RTX 2080 Ti host, vLLM 0.19.0, util 0.85: TP1 eager len 4096 'GPU KV cache size: 23,600 tokens' (2.88 GiB, "
    "weights 14.99 GiB), TP2 133,632 / TP4 393,120 tokens with the CUDA-graph estimate. Left out: the total used "
    "(23,622,320,128 B) is exactly 22 GiB, a nominal figure, not a printed one; Turing, fp16; TP2/TP4 flags only "
    "partly quoted",
    AGS_3090 + " (util 0.90 starts)": "'stage-split-flag launches' at util 0.90 with prefix caching (TP2 214,576 / "
    "TP4 551,712 tokens): flags not quoted in full and the lines not verbatim",
    SEARCH.format("%22GPU+KV+cache+size%3A+136%2C592+tokens%22"): "DotsOCR (vision-language OCR model) under WSL, vLLM "
    "0.9.1, util 0.8: multimodal",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+729%2C248+tokens%22"
    ): "Salyut1/GLM-4.7-NVFP4 (177B NVFP4 MoE) on 4x RTX PRO "
    "6000 Max-Q, vLLM 0.15.1, util 0.80, patched weight loader: MoE/NVFP4 outside the shapes asked for",
    SEARCH.format("%22GPU+KV+cache+size%3A+105%2C328+tokens%22"): "Qwen/Qwen3-0.6B on an RTX 5060 Ti 16GB under WSL2 "
    "(Windows 11 host, driver 610.88), vLLM 0.29.0, --gpu-memory-utilization 0.85 --max-model-len 8192, "
    "VLLM_USE_FLASHINFER_SAMPLER=0 VLLM_WSL2_ENABLE_PIN_MEMORY=1: 'Available KV cache memory: 11.25 GiB', 'GPU KV "
    "cache size: 105,328 tokens', 'Maximum concurrency for 8,192 tokens per request: 12.86x'. Left out: the total "
    "is printed only as torch's rounded 'vram GB : 15.9' under WSL2/WDDM (native Linux shows 15.48 GiB for this "
    "card), so what cudaMemGetInfo gave vLLM is not established; as planner_cases' 5070 Ti WSL2 entry.",
    SEARCH.format("%22GPU+KV+cache+size%3A+125%2C680+tokens%22"): "Qwen/Qwen2.5-0.5B-Instruct on a local 'RTX 4060 "
    "8GB', vLLM 0.8.5.post1 V1, LLM(enable_prefix_caching=False, max_model_len=1024, gpu_memory_utilization=0.45): "
    "'GPU KV cache size: 125,680 tokens'. Left out: GPU total not printed and desktop vs laptop 4060 (and OS) not "
    "established (user 'asus'), so the 8 GB card's total is uncertain",
    SEARCH.format("%22GPU+KV+cache+size%3A+112%2C064+tokens%22"): "Qwen3-32B dense on 'physical GPU2' of a Blackwell "
    "sm_120 box, vLLM v0.19, FLASH_ATTN, --max-num-seqs 128, util 0.95, default len 40960 ('Maximum concurrency for "
    "40,960 tokens per request: 2.74x'): the GPU model and memory are never named (machine names deliberately "
    "omitted); 61 GiB of bf16 weights plus 27.4 GiB of KV point to a 96 GB RTX PRO 6000, but that is inference",
    SEARCH.format("%22GPU+KV+cache+size%3A+100%2C224+tokens%22"): "Nemotron-Cascade on an RTX 5090 at util 0.75, "
    "quoted inside an assistant's chat reply; hybrid model, flags and version not stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+102%2C880+tokens%22"): "encoder-cache model ('profiled with 178 "
    "conditionals items'): not a text decoder",
    KTH.format("202f49b910b6245975271f06d033cd8c18dea4a3")
    + "logs/2026-07-19_STEPS_RESULTS_yunuikang.md (STEP 1)": "Qwen3-8B on RTX 5090, util 0.92, len 32768, vLLM 0.24.0, the day's first start ('GPU KV cache size: 89,040 "
    "tokens', 'Model loading took 15.27 GiB'): same configuration as the kept 95,936-token case but with a cold "
    "compile / CUDA-graph cache (the author's reading); kept out so that one configuration counts once. Useful for "
    "diagnosis: cold first start 0.95 GiB below the warm restarts.",
    KTH.format("33447b7ccdfa72909a2ba693f67de2a622251272")
    + "logs/2026-07-02_EXPERIMENT_LOG_yunuikang.md (section 2)": "Qwen3-8B on RTX 4090, util 0.92, len 32768, vLLM 0.24.0: 'num_gpu_blocks 2312 x block 16 = 36,992 tokens' per "
    "backend, an early start of the same configuration as the kept 43,888-token case (0.95 GiB lower, as the 5090's "
    "cold first start); no log line quoted",
    "kthxo/distserving SGLang runs (5090 TP2 / H200 Qwen3-8B and Qwen2.5-7B, '262,144 tok' pins)": "SGLang, not vLLM",
    SEARCH.format("%22GPU+KV+cache+size%3A+88%2C176+tokens%22"): "Qwen3-30B-A3B-FP8 on an NVIDIA GB10 (DGX Spark "
    "class, unified memory), NGC vLLM 0.13.0+faa43dbf.nv26.01, util 0.3, fp8 KV: unified memory is outside the "
    "planner's model",
    "https://github.com/xlisp/jimw-vllm (four V0 0.6.4.post1 starts: Llama-3.2-1B, phi-1_5, opt-125m twice)": "a GTX 1080 "
    "(Pascal, below the compute capability vLLM supports; the engine generated garbage) with Xorg holding ~300 MiB "
    "that this release counts as non-torch memory: left out as a whole before the planner ran on it",
    "code: '# GPU blocks: 19513' (total_gpu_memory=191.98GiB, Llama-3.1-70B FP8, util 0.98)": "AMD MI300 (hotaisle "
    "host, vllm-rocm): non-NVIDIA",
    "code: '# GPU blocks: 5065' (InternVL3-78B TP8 on g6e.48xlarge L40S, v0.6.6.post1)": "multimodal model (already "
    "in v0_f's LEFT_OUT as the InternVL3-78B start)",
    "code: '# GPU blocks: 5691' (Meta-Llama-3-8B on A100 40GB, total_gpu_memory (39.50GiB))": "a mirror of "
    "vllm#12330, already in planner_cases' LEFT_OUT",
    "code: '# cuda blocks: 2542' (total_gpu_memory (8.00GiB) x 0.50, BitsAndBytes)": "doc names "
    "Qwen2.5-7B-Instruct but 1.49 GiB weights and 1.09 GiB / 2542 blocks = 28 KiB per token fit a 1.5B model: "
    "model uncertain; lines abridged",
    "code: '# GPU blocks: 1253' (NousResearch/Meta-Llama-3.1-8B-Instruct, v0.5.5, len 20000, Lightning studio)": "GPU not stated",
    "code: '# GPU blocks: 13330' (Llama-3.1-Swallow-8B, v0.6.1.dev238, nara-wu-slc tutorial)": "GPU and util of "
    "the lab server not stated",
    "code: '# GPU blocks: 281784' (Qwen2.5-1.5B-Instruct, v0.6.1.dev238, MCP-vLLM project)": "GPU not stated",
    "code: '# GPU blocks: 1330' (Mistral-7B-Instruct-v0.3-GPTQ in Triton, 02-19)": "GPU not found in the excerpt",
    "code: '# GPU blocks: 14774' / '15570' (kaitchup AutoRound GPTQ benchmarks, v0.5.x, len 512)": "GPU not "
    "stated in the excerpts; not pursued",
    "code: '# GPU blocks: 19000' (v0.5.0.post1, model '/path/to/your/model/dir', DNA sequences)": "model not "
    "identified, GPU not stated",
    "code: '# GPU blocks: 37300' (opt-125m, v0.6.4.dev26)": "just-record/vllm_practice, already left out in v0_f "
    "(GPU not stated)",
    "code: '# GPU blocks: 127981' (opt-125m, v0.4.0.post1, skampere1)": "GPU not stated in the excerpt",
    "code: '# GPU blocks: 119630' (2.0512 GB weights, LMCache CacheBlend notes)": "abridged lines, GPU not "
    "named, LMCache build",
    "code: '# GPU blocks: 2153' (Phi-3.5-vision-instruct)": "multimodal model",
    "code: '# GPU blocks: 2889' (DeepSeek-V3)": "MLA model",
    "code: '# GPU blocks: 268051' (EngineCore with worker.py '# GPU blocks', 64.15 GiB weights)": "not a stock "
    "vLLM V0 wording in a V1 EngineCore process (fork); not pursued",
    "code: '# GPU blocks: 20186' / '169460' / '12003' (same files as the ROCm 51554 log)": "AMD GPUs",
    "code: '# GPU blocks: 1095' / '2254' / '747' (XPU)": "Intel GPU (non-NVIDIA)",
    "code: '# GPU blocks: 27243' (Qwen2.5-32B-AWQ, 'v0.11.0' with V0 gpu_executor lines)": "lines not "
    "self-consistent (a V1-era version with V0 file names): not a real log",
    "code: '# GPU blocks: 3721' ('KV cache size: 3721 blocks (约 9.10 GiB)')": "not vLLM's wording: invented sample",
    "code: '# GPU blocks: 42831' / '12483' / '14208' / '27648' / '7449'": "invented or tutorial samples (wordings "
    "vLLM never prints, e.g. 'Maximum concurrency: 64 sequences')",
    "code: '# GPU blocks: 15606' / '15612' (LP scheduler research, load_format=dummy, len 32)": "patched "
    "scheduler, dummy weights, model and GPU outside the excerpt; not pursued",
    "code: Memory profiling results: total_gpu_memory=15.56GiB (vllm#10797, Llama-3.2-3B, RTX 4080, util 1)": "issue seen only in fragments; no KV line in them and the title says the model could not load",
    "code: Memory profiling results: total_gpu_memory=23.69GiB (Qwen2-VL, v0.6.4.post1)": "multimodal model",
    "code: Memory profiling results: total_gpu_memory=79.15GiB (two 14B/72B instances on one GPU)": "vLLM "
    "sharing the GPU with another instance",
    "code: many '# GPU blocks: 1000 / 1024 / 1234 / 2048 / 4096 / 8192 / 12345' hits": "test fixtures and "
    "illustrative numbers",
}

RULES_AFTER[
    "the first Qwen's MLP (core/modelinfo.py: QWenLMHeadModel's config.json gives both gated projections together; "
    "vLLM's qwen.py builds them intermediate_size // 2 wide)"
] = tuple(c.name for c in FOURTH_BATCH if c.model.get("architectures") == ["QWenLMHeadModel"])
