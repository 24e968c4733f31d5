"""The sealed part's third batch: starts of vLLM gathered on 2026-12-02, after the planner of the commit before this
file's was final, from sources no other case uses; written here and committed before the planner ran on any of them
(the commit that adds this file changes nothing in src/). They set no constant of the planner.

Gathered in three groups by the vLLM engine and release (V1 0.8-0.11, V1 0.12 and newer, V0); each group's candidates
left out, with the reason, are in its LEFT_OUT_* table. One fact was added to two cases when they were written here,
before any run: the --enable-expert-parallel their quoted commands carry (params enable_expert_parallel).
"""

from __future__ import annotations

from planner_cases import (
    AWQ_4BIT,
    HF,
    LLAMA2_7B,
    LLAMA3_8B,
    QWEN3_235B_FP8,
    QWEN25_3B,
    QWEN25_15B_INSTRUCT,
    SEARCH,
    Case,
    cfg,
    shape,
)

# --- V1A -------------------------------------------------------------------------------------------------------------
# --- model shapes (published config.json values) -------------------------------------------------------------------

QWEN3_235B_2507_FP8 = shape(  # Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 (Qwen3-235B-A22B-FP8 shape, 262144 positions)
    QWEN3_235B_FP8, max_position_embeddings=262144
)

QWEN25_7B_BASE = cfg(  # Qwen/Qwen2.5-7B (base; ModelScope qwen/Qwen2.5-7B): the Instruct shape with 131072 positions
    "Qwen2.5-7B-Instruct", max_position_embeddings=131072
)

QWEN3_30B_A3B_2507_FP8 = cfg(  # Qwen/Qwen3-30B-A3B-Instruct-2507-FP8
    "Qwen3-30B-A3B",
    max_position_embeddings=262144,
    quantization_config={"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]},
)

DS_R1_DISTILL_QWEN_15B = {  # deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B (a Qwen2 dense model; config quoted by the source)
    "architectures": ["Qwen2ForCausalLM"],
    "num_hidden_layers": 28,
    "hidden_size": 1536,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "intermediate_size": 8960,
    "vocab_size": 151936,
    "max_position_embeddings": 131072,
    "sliding_window": 4096,
    "use_sliding_window": False,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

OPT_125M = {  # facebook/opt-125m (config.json keys as published; OPT ties lm_head to the embeddings)
    "architectures": ["OPTForCausalLM"],
    "model_type": "opt",
    "num_hidden_layers": 12,
    "hidden_size": 768,
    "num_attention_heads": 12,
    "ffn_dim": 3072,
    "word_embed_proj_dim": 768,
    "vocab_size": 50272,
    "max_position_embeddings": 2048,
    "do_layer_norm_before": True,
    "torch_dtype": "float16",
}

# --- GPU totals ----------------------------------------------------------------------------------------------------

L40S_PRINTED = "printed by vLLM in the same log: 'Free memory on device (43.93/44.42 GiB) on startup' (each of 8 L40S)"

RTX3090_TOTAL_V1A = (
    "RTX 3090 total as torch reports it, 23.56 GiB (25,296,044,032 bytes, as planner_cases_sealed's RTX3090_TOTAL "
    "prints it for another host); not printed by this source, which names its host '4 张 3090 显卡' (4x RTX 3090)"
)

A10_TOTAL_V1A = (
    "NVIDIA A10 total as torch reports it, ~22.07 GiB ('GPU | NVIDIA A10, 22.07 GiB' in a public run_meta-backed "
    "note on a Lambda A10; 22.1-22.2 GiB also seen on Aliyun gn7i A10s, so +-0.1 GiB); not printed by this source, "
    "which names its test server's GPU 'NVIDIA A10' (section 7)"
)

# --- sources -------------------------------------------------------------------------------------------------------

Q235_L40S_URL = SEARCH.format("%22GPU+KV+cache+size%3A+237%2C392+tokens%22")

HSC_3090_URL = SEARCH.format("%22GPU+KV+cache+size%3A+97%2C680+tokens%22")
HSC_3090_TP2_URL = SEARCH.format("%22GPU+KV+cache+size%3A+359%2C328+tokens%22")
HSC_SOURCE = "code: vLLM 框架介绍与本地私有化部署 (hsc blog post, 4x RTX 3090, vLLM 0.8.4, Qwen2.5-7B offline LLM())"
HSC_NOTE = (
    "A Chinese tutorial post ('vLLM 框架介绍与本地私有化部署', author hsc, 2025-04) committed as markdown, with the "
    "offline LLM() start logs pasted in full ('```Response' blocks). Host: Ubuntu 24.04 with '4 张 3090 显卡'; "
    "pip install vllm, 'Initializing a V1 LLM engine (v0.8.4)'. Model: ModelScope 'qwen/Qwen2.5-7B' (the base "
    "model, /home/08_vllm/qwen/Qwen2___5-7B), bf16, trust_remote_code=True. Offline LLM() in 0.8.4 uses "
    "max_num_batched_tokens 8192 ('Chunked prefill is enabled with max_num_batched_tokens=8192'), max_num_seqs "
    "default 256, prefix caching on, CUDA graphs on (captured after the KV sizing; 0.8.4 does not subtract it). "
    "FlashInfer not installed (PyTorch-native sampler). "
)

CASES_V1A: list[Case] = [
    Case(
        "Qwen3-235B-A22B-Instruct-2507-FP8, 8x L40S (44.42 GiB) TP8+EP, util 0.90, V1 0.10.2, len 32768",
        Q235_L40S_URL,
        QWEN3_235B_2507_FP8,
        44.42,
        0.90,
        237344,
        tp=8,
        max_model_len=32768,
        note="A committed markdown note 'Hosting Qwen3-235B-A22B-Instruct-2507-FP8 on 8xL40S' (vast.ai-style host "
        "'root@C.26184898', driver 565.57.01) with the full server log under '## vllm logs'. The note's headline "
        "command says --tensor-parallel-size 4, but the log itself is TP8 ('non-default args: ... "
        "'tensor_parallel_size': 8, 'enable_expert_parallel': True', 'Worker_TP0_EP0' .. 'Worker_TP7_EP7', 16/128 "
        "local experts, 'Model loading took 27.7183 GiB' per rank); the log is used. Each rank prints its own KV "
        "line (Available KV cache memory 10.64-10.68 GiB; GPU KV cache size 237,344 .. 238,256 tokens); vLLM keeps "
        "the minimum across ranks: 'num_gpu_blocks is: 14834' = 14834 x 16 = 237,344 tokens, the figure used here. "
        "4 KV heads under TP8: each rank keeps one KV head (replicated), 94 x 2 x 128 x 2 B = 47 KiB/token/rank. "
        "Default max_num_batched_tokens 2048 ('Chunked prefill is enabled with max_num_batched_tokens=2048'), "
        "max_num_seqs default 256, prefix caching on, CUDA graphs on (3.45 GiB captured after the KV sizing; 0.10.2 "
        "does not subtract it), swap_space 0. Peak activation 1.4 GiB, non-torch 0.17-0.21 GiB as vLLM prints them.",
        params={"enable_expert_parallel": True},  # '--enable-expert-parallel' in the quoted command
        part="sealed",
        vllm="0.10.2",
        source="code: Qwen3-235B-A22B-Instruct-2507-FP8 on 8xL40S note (GPU KV cache size: 237,392 tokens)",
        log="Qwen3-235B-2507-FP8 8xL40S TP8 EP 0.10.2",
        quote=(
            "(Worker_TP3_EP3 pid=2081) INFO 09-24 20:53:41 [gpu_worker.py:298] Available KV cache memory: 10.65 GiB",
            "(EngineCore_DP0 pid=1944) INFO 09-24 20:53:41 [kv_cache_utils.py:864] GPU KV cache size: 237,344 tokens",
            "(EngineCore_DP0 pid=1944) INFO 09-24 20:53:41 [kv_cache_utils.py:868] Maximum concurrency for 32,768 "
            "tokens per request: 7.24x",
            "(APIServer pid=1624) INFO 09-24 20:54:37 [loggers.py:142] Engine 000: vllm cache_config_info with "
            "initialization after num_gpu_blocks is: 14834",
            "(Worker_TP2_EP2 pid=2080) INFO 09-24 20:54:35 [gpu_worker.py:391] Free memory on device (43.93/44.42 GiB) "
            "on startup. Desired GPU memory utilization is (0.9, 39.98 GiB). Actual usage is 27.72 GiB for weight, 1.4 "
            "GiB for peak activation, 0.21 GiB for non-torch memory, and 3.45 GiB for CUDAGraph memory.",
        ),
        reported="tokens",
        gpu="NVIDIA L40S (8 of them, nvidia-smi 46068MiB each)",
        gpu_source=L40S_PRINTED,
        version="0.10.2 ('vLLM API server version 0.10.2', 'Initializing a V1 LLM engine (v0.10.2)')",
        flags="vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --tensor-parallel-size 8 --enable-expert-parallel "
        "--gpu-memory-utilization 0.90 --swap-space 0 --max-model-len 32K",
        model_source=HF.format("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8")
        + " (Qwen3-235B-A22B-FP8 shape as planner_cases keeps it: 94 layers, hidden 4096, 64 heads, 4 KV heads, "
        "head_dim 128, 128 experts x 1536, 8 per token, fp8 block [128,128]; 262144 positions for the 2507 release; "
        "the log: 'Resolved architecture: Qwen3MoeForCausalLM', 'quantization=fp8')",
    ),
]

CASES_V1A += [
    Case(
        "Qwen2.5-7B, RTX 3090 (23.56 GiB), util 0.90, V1 0.8.4, len 4096",
        HSC_3090_URL,
        QWEN25_7B_BASE,
        23.56,
        0.90,
        97680,
        max_model_len=4096,
        batched_tokens=8192,
        note=HSC_NOTE + "First start of the post: LLM(model=..., trust_remote_code=True, max_model_len=4096), no "
        "gpu_memory_utilization passed (0.9 default; the post says '默认是0.90'). 'Model loading took 14.2717 GiB'. "
        "97,680 x 56 KiB = 5.22 GiB. Doubt: the card's total is the usual RTX 3090 figure, not printed here.",
        part="sealed",
        vllm="0.8.4",
        source=HSC_SOURCE,
        log="hsc Qwen2.5-7B 3090 TP1 0.8.4",
        quote=(
            "INFO 04-18 14:22:11 [gpu_model_runner.py:1291] Model loading took 14.2717 GiB and 4.991946 seconds",
            "INFO 04-18 14:22:31 [kv_cache_utils.py:634] GPU KV cache size: 97,680 tokens",
            "INFO 04-18 14:22:31 [kv_cache_utils.py:637] Maximum concurrency for 4,096 tokens per request: 23.85x",
        ),
        reported="tokens",
        gpu="RTX 3090 ('4 张 3090 显卡', one used)",
        gpu_source=RTX3090_TOTAL_V1A,
        version="0.8.4 ('Initializing a V1 LLM engine (v0.8.4)')",
        flags="LLM(model='/home/08_vllm/qwen/Qwen2___5-7B', trust_remote_code=True, max_model_len=4096)",
        model_source=HF.format("Qwen/Qwen2.5-7B") + " (the Qwen2.5-7B-Instruct shape kept in tests/data/models: 28 "
        "layers, hidden 3584, 28 heads, 4 KV heads, intermediate 18944, vocab 152064, untied; base config has "
        "max_position_embeddings 131072)",
    ),
    Case(
        "Qwen2.5-7B, 2x RTX 3090 (23.56 GiB) TP2, util 0.80, V1 0.8.4, len 4096",
        HSC_3090_TP2_URL,
        QWEN25_7B_BASE,
        23.56,
        0.80,
        359328,
        tp=2,
        max_model_len=4096,
        batched_tokens=8192,
        note=HSC_NOTE + "Second start of the post (a fresh LLM() after the first): tensor_parallel_size=2, "
        "gpu_memory_utilization=0.8. 'Model loading took 7.1441 GiB' per rank. The two ranks print 359,328 and "
        "359,712 tokens; the engine keeps the smaller (359,328), used here. 2 of the 4 KV heads per rank: 28 "
        "KiB/token/rank, 359,328 x 28 KiB = 9.60 GiB. 'Custom allreduce is disabled because your platform lacks "
        "GPU P2P capability'. Doubt: the post does not say that GPU 0 was freed of the first instance; the start "
        "completed on both ranks (CUDA graphs captured, 'Core engine process 0 ready'), which 9.6 GiB of KV plus 7.1 "
        "GiB of weights could not have done beside a live first instance. The card's total is not printed.",
        part="sealed",
        vllm="0.8.4",
        source=HSC_SOURCE,
        log="hsc Qwen2.5-7B 3090 TP2 util 0.8 0.8.4",
        quote=(
            "(VllmWorker rank=0 pid=182840) INFO 04-18 14:33:23 [gpu_model_runner.py:1291] Model loading took 7.1441 "
            "GiB and 4.425101 seconds",
            "INFO 04-18 14:34:20 [kv_cache_utils.py:634] GPU KV cache size: 359,328 tokens",
            "INFO 04-18 14:34:20 [kv_cache_utils.py:637] Maximum concurrency for 4,096 tokens per request: 87.73x",
            "INFO 04-18 14:34:20 [kv_cache_utils.py:634] GPU KV cache size: 359,712 tokens",
        ),
        reported="tokens",
        gpu="RTX 3090 x2 of the host's four",
        gpu_source=RTX3090_TOTAL_V1A,
        version="0.8.4 ('Initializing a V1 LLM engine (v0.8.4)')",
        flags="LLM(model='/home/08_vllm/qwen/Qwen2___5-7B', trust_remote_code=True, tensor_parallel_size=2, "
        "gpu_memory_utilization=0.8, max_model_len=4096)",
        model_source=HF.format("Qwen/Qwen2.5-7B") + " (as the TP1 case)",
    ),
]

CASES_V1A += [
    Case(
        "Qwen3-30B-A3B-Instruct-2507-FP8, 2x L40S (44.42 GiB) TP2+EP, util 0.95, V1 0.10.2, len 32768",
        SEARCH.format("%22GPU+KV+cache+size%3A+566%2C016+tokens%22"),
        QWEN3_30B_A3B_2507_FP8,
        44.42,
        0.95,
        566016,
        tp=2,
        max_model_len=32768,
        note="A committed markdown note 'Ollama vs vLLM comparison' ('GPUs: 2x NVIDIA RTX L40S 48GB, Model: "
        "Qwen3-30B-A3B-Instruct-2507-FP8'; two copies of the note are stored) by the author of the Qwen3-235B 8xL40S "
        "note in this file (same vast.ai-style host prompt 'root@C.26183956', same driver 565.57.01, same day). "
        "'vllm --version' prints 0.10.2. The note quotes one rank's 'Available KV cache memory' and one 'GPU KV "
        "cache size' line only; with TP2 EngineCore prints one line per rank and keeps the smaller, so the other "
        "rank may be a little lower (in the 8-rank 235B log the ranks differ by < 0.4%). 4 KV heads over TP2: 2 per "
        "rank, 48 x 2 x 2 x 128 x 2 B = 48 KiB/token/rank; 25.91 GiB / 48 KiB = 566,0xx tokens (consistent). "
        "nvidia-smi while serving: 45241MiB / 46068MiB per card. Defaults: max_num_batched_tokens 2048, "
        "max_num_seqs 256, prefix caching on, CUDA graphs on (0.10.2 does not subtract them), swap_space 0.",
        params={"enable_expert_parallel": True},  # '--enable-expert-parallel' in the quoted command
        part="sealed",
        vllm="0.10.2",
        source="code: 'Ollama vs vLLM comparison' note, Qwen3-30B-A3B-Instruct-2507-FP8 on 2x L40S (566,016 tokens)",
        log="Qwen3-30B-A3B-2507-FP8 2xL40S TP2 EP util 0.95 0.10.2",
        quote=(
            "(Worker_TP1_EP1 pid=2295) INFO 09-24 19:58:12 [gpu_worker.py:298] Available KV cache memory: 25.91 GiB",
            "(EngineCore_DP0 pid=2225) INFO 09-24 19:58:12 [kv_cache_utils.py:864] GPU KV cache size: 566,016 tokens",
            "(EngineCore_DP0 pid=2225) INFO 09-24 19:58:12 [kv_cache_utils.py:868] Maximum concurrency for 32,768 "
            "tokens per request: 17.27x",
        ),
        reported="tokens",
        gpu="NVIDIA L40S x2 ('2x NVIDIA RTX L40S 48GB'; nvidia-smi 46068MiB each)",
        gpu_source="L40S total as vLLM prints it on the same author's host type: 'Free memory on device "
        "(43.93/44.42 GiB)' (the 235B note in this file), and planner_cases' L40S_TOTAL (44.42 GiB); not printed "
        "in this note",
        version="0.10.2 ('vllm --version' -> 0.10.2)",
        flags="vllm serve Qwen/Qwen3-30B-A3B-Instruct-2507-FP8 --tensor-parallel-size 2 --enable-expert-parallel "
        "--gpu-memory-utilization 0.95 --swap-space 0 --max-model-len 32K",
        model_source=HF.format("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8") + " (tests/data/models/Qwen3-30B-A3B shape: "
        "48 layers, hidden 2048, 32 heads, 4 KV heads, head_dim 128, 128 experts x 768, 8 per token, vocab 151936; "
        "the 2507 release has 262144 positions; fp8 block [128,128] weights)",
    ),
]

CASES_V1A += [
    Case(
        "DeepSeek-R1-Distill-Qwen-1.5B, RTX 4090 D (23.64 GiB), util 0.90, V1 0.8.3, len 131072",
        SEARCH.format("%22GPU+KV+cache+size%3A+426%2C448+tokens%22"),
        DS_R1_DISTILL_QWEN_15B,
        23.64,
        0.90,
        426448,
        max_model_len=131072,
        note="A committed Chinese study note on vLLM's KV sizing ('3. 验证: 使用4090D基于vllm启用默认参数进行推理'): the full "
        "'vllm serve /data/DeepSeek-R1-Distill-Qwen-1.5B' start log with the args Namespace (all defaults: "
        "gpu_memory_utilization=0.9, max_model_len=None -> 131072, block_size None -> 16, enforce_eager False, "
        "max_num_batched_tokens None -> 2048 'Chunked prefill is enabled with max_num_batched_tokens=2048', max_num_seqs "
        "None -> 256), then the model's config.json (section 3.2) and the author's check 2 x 2 x 128 x 2 B x 28 = "
        "28,672 B/token. 'Model loading took 3.3465 GiB'; prefix caching on; CUDA graphs captured after the KV sizing "
        "(1.47 GiB; 0.8.3 does not subtract them); FlashInfer not installed. The distill is a plain Qwen2 dense model "
        "(no MLA). 426,448 x 28 KiB = 11.39 GiB. Doubt: the card is named only as '4090D' / '4090D(24GB)'; whether "
        "anything else held memory on it is not shown.",
        part="sealed",
        vllm="0.8.3",
        source="code: vLLM KV-cache study note (RTX 4090D, DeepSeek-R1-Distill-Qwen-1.5B, 426,448 tokens)",
        log="R1-Distill-Qwen-1.5B 4090D defaults 0.8.3",
        quote=(
            "INFO 04-14 06:01:14 [gpu_model_runner.py:1273] Model loading took 3.3465 GiB and 1.192773 seconds",
            "INFO 04-14 06:02:04 [kv_cache_utils.py:578] GPU KV cache size: 426,448 tokens",
            "INFO 04-14 06:02:04 [kv_cache_utils.py:581] Maximum concurrency for 131,072 tokens per request: 3.25x",
        ),
        reported="tokens",
        gpu="RTX 4090 D 24GB ('4090D(24GB)')",
        gpu_source="RTX 4090 total as torch reports it (23.64 GiB), as planner_cases_sealed's RTX4090_TOTAL uses; the "
        "RTX 4090 D has the same 24564 MiB (nvidia-smi '24564MiB' for 'NVIDIA GeForce RTX 4090 D' in other public "
        "logs); not printed by this source",
        version="0.8.3 ('vLLM API server version 0.8.3', 'Initializing a V1 LLM engine (v0.8.3)')",
        flags="vllm serve /data/DeepSeek-R1-Distill-Qwen-1.5B (no other arguments; Namespace shows defaults)",
        model_source="the config.json printed by the source (section 3.2 '模型配置'), = "
        + HF.format("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"),
    ),
]

SE7EN_NOTE = (
    "A committed Chinese blog post 'vLLM 快速部署指南' (author Se7en, 2025-05-11) with full start logs. vLLM "
    "0.8.5.post1 installed with 'uv pip install vllm' on a rented cloud GPU VM (Ubuntu 22.04); the post's test server "
    "(section 7) is '32 vCPU, 188 GiB, GPU: NVIDIA A10'. FlashInfer not installed. Doubt: the post does not say in so "
    "many words that the section-5/6 starts ran on that same A10 VM (the dates, 05-09 to 05-11, and the single "
    "'GPU 后端' host suggest so); the A10 total is not printed. "
)
CASES_V1A += [
    Case(
        "Qwen2.5-1.5B-Instruct, A10 (22.07 GiB), util 0.90, V1 0.8.5.post1, len 32768",
        SEARCH.format("%22GPU+KV+cache+size%3A+567%2C984+tokens%22"),
        QWEN25_15B_INSTRUCT,
        22.07,
        0.90,
        567984,
        max_model_len=32768,
        note=SE7EN_NOTE + "Section 6: 'vllm serve Qwen/Qwen2.5-1.5B-Instruct' with no other argument (Namespace: "
        "gpu_memory_utilization=0.9, max_model_len=None -> 32768, max_num_batched_tokens None -> 2048, max_num_seqs "
        "None, block_size None -> 16). 'Model loading took 2.8871 GiB'. Prefix caching on, CUDA graphs on (0.45 GiB, "
        "after the KV sizing). 567,984 x 28 KiB = 15.17 GiB.",
        part="sealed",
        vllm="0.8.5.post1",
        source="code: 'vLLM 快速部署指南' (Se7en) blog post, A10, vLLM 0.8.5.post1",
        log="Se7en Qwen2.5-1.5B-Instruct serve 0.8.5.post1",
        quote=(
            "INFO 05-09 22:55:45 [gpu_model_runner.py:1347] Model loading took 2.8871 GiB and 226.791553 seconds",
            "INFO 05-09 22:56:27 [kv_cache_utils.py:634] GPU KV cache size: 567,984 tokens",
            "INFO 05-09 22:56:27 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 17.33x",
        ),
        reported="tokens",
        gpu="NVIDIA A10 (the post's test server: '32 vCPU, 188 GiB, GPU: NVIDIA A10')",
        gpu_source=A10_TOTAL_V1A,
        version="0.8.5.post1 ('vLLM API server version 0.8.5.post1', 'Initializing a V1 LLM engine (v0.8.5.post1)')",
        flags="vllm serve Qwen/Qwen2.5-1.5B-Instruct",
        model_source=HF.format("Qwen/Qwen2.5-1.5B-Instruct") + " (planner_cases' Qwen2.5-Math-1.5B shape with 32768 "
        "positions, as planner_cases_sealed's QWEN25_15B_INSTRUCT: 28 layers, hidden 1536, 12 heads, 2 KV heads, "
        "intermediate 8960, vocab 151936, tied embeddings)",
    ),
    Case(
        "OPT-125m, A10 (22.07 GiB), util 0.90, V1 0.8.5.post1, len 2048, offline LLM()",
        SEARCH.format("%22GPU+KV+cache+size%3A+549%2C216+tokens%22"),
        OPT_125M,
        22.07,
        0.90,
        549216,
        max_model_len=2048,
        batched_tokens=8192,
        note=SE7EN_NOTE + "Section 5: vLLM's examples/offline_inference/basic/basic.py, LLM(model='facebook/opt-125m') "
        "with no other argument: fp16 (the checkpoint's dtype), max_model_len 2048 (the model's), offline "
        "max_num_batched_tokens 8192 ('Chunked prefill is enabled with max_num_batched_tokens=8192'), util 0.9 "
        "default. 'Model loading took 0.2389 GiB'. OPT-125m is multi-head (12 KV heads x 64): 12 x 2 x 768 x 2 B = 36 "
        "KiB/token; 549,216 x 36 KiB = 18.86 GiB.",
        part="sealed",
        vllm="0.8.5.post1",
        source="code: 'vLLM 快速部署指南' (Se7en) blog post, A10, vLLM 0.8.5.post1",
        log="Se7en opt-125m offline 0.8.5.post1",
        quote=(
            "INFO 05-09 22:20:51 [gpu_model_runner.py:1347] Model loading took 0.2389 GiB and 29.934842 seconds",
            "INFO 05-09 22:21:02 [kv_cache_utils.py:634] GPU KV cache size: 549,216 tokens",
            "INFO 05-09 22:21:02 [kv_cache_utils.py:637] Maximum concurrency for 2,048 tokens per request: 268.17x",
        ),
        reported="tokens",
        gpu="NVIDIA A10 (the post's test server)",
        gpu_source=A10_TOTAL_V1A,
        version="0.8.5.post1 ('Initializing a V1 LLM engine (v0.8.5.post1)')",
        flags="LLM(model='facebook/opt-125m') (vLLM's basic.py example)",
        model_source=HF.format("facebook/opt-125m") + " (published config.json values; the log: dtype=torch.float16, "
        "max_seq_len=2048)",
    ),
]

LEFT_OUT_V1A: dict[str, str] = {
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C215%2C552+tokens%22"): "Llama-3.2-1B, 'vLLM API server version "
    "0.1.dev8168+g475c1a0' after the author's own code modifications ('LAZY CUDA GRAPH'): not stock vLLM",
    SEARCH.format("%22GPU+KV+cache+size%3A+702%2C800+tokens%22"): "Llama-3.1-8B-Instruct, vLLM 0.10.2+cu130 in a "
    "'vllm:r38.2.aarch64-cu130' container: Jetson Thor (unified memory)",
    SEARCH.format("%22GPU+KV+cache+size%3A+451%2C744+tokens%22"): "llava-v1.6-mistral-7b (vision model)",
    "https://github.com/vllm-project/vllm/issues/25970": "Qwen2.5-Omni-7B (multimodal)",
    SEARCH.format("%22GPU+KV+cache+size%3A+257%2C664+tokens%22"): "Qwen3-235B-A22B-Instruct-2507-FP8 / AWQ TP8 EP "
    "KV lines (257,664 / 549,232 tokens) in an eval note with no command, GPU or util stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C606%2C496+tokens%22"): "fine-tuned Qwen2.5-0.5B (verl ReTool "
    "merged_dapo_model) on an RTX 4090 D: the log has no version line (0.8.5.post1 only in a sibling note) and the "
    "card had just been used for training",
    SEARCH.format("%22GPU+KV+cache+size%3A+946%2C384+tokens%22"): "'checkpoint/merged_hf_model' (0.2540 GiB "
    "weights): model not identified",
    SEARCH.format("%22GPU+KV+cache+size%3A+63%2C776+tokens%22"): "Qwen2-7B-Instruct on an InternStudio vGPU slice "
    "('A100-80GB的30%算力 (约24GB显存)'): total not established, version not stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+42%2C224+tokens%22"): "EXAONE-4.0-32B-FP8 (hybrid sliding-window / "
    "global attention) in an edited log; GPU only named in a comment ('L40S 48GB 기준')",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C022%2C896+tokens%22"): "Qwen2.5-0.5B-Instruct, vLLM 0.9.2 on AutoDL: "
    "GPU not named in the stored text",
    SEARCH.format("%22GPU+KV+cache+size%3A+375%2C968+tokens%22"): "Qwen2.5-VL-7B-Instruct (vision model)",
    SEARCH.format("%22GPU+KV+cache+size%3A+136%2C080+tokens%22"): "dariustanrd/tokenkaki (already used)",
    SEARCH.format("%22GPU+KV+cache+size%3A+157%2C648+tokens%22"): "Llama-3.1-8B-Instruct fp16, vLLM 0.10.1.1 on a "
    "Jupyter host: GPU not named in the stored text",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C095%2C520+tokens%22"): "Qwen2.5-Coder-7B-Instruct TP2, vLLM 0.8.3, "
    "offline: GPU and gpu_memory_utilization not stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+62%2C608+tokens%22"): "Qwen3-8B-FP8 (--dtype float16, len 1024, util 0.8) "
    "on a card vLLM prints as 23.53 GiB: the version is not stated (only the 0.10.2 line numbers) and the GPU is not "
    "named",
    "https://github.com/vllm-project/vllm/issues/17395": "Qwen2-7B-Instruct TP2, util 0.95, enforce-eager, v0.8.5 "
    "('GPU KV cache size: 473,184 tokens'): the GPU is not stated in the text the index returns",
    "https://github.com/vllm-project/vllm/issues/19954": "'/data/others/adeltoosi/qwen3-moe' (model not identified), "
    "DP2+EP, dev build 0.9.2.dev197",
    SEARCH.format("%22GPU+KV+cache+size%3A+973%2C760+tokens%22"): "H200 TP2 start of a 512-expert model (Qwen3-Next "
    "class, hybrid linear attention)",
    SEARCH.format("%22GPU+KV+cache+size%3A+566%2C016+tokens%22") + " (ollama section)": "the same note's Ollama runs "
    "are not vLLM",
    SEARCH.format("%22GPU+KV+cache+size%3A+525%2C520+tokens%22"): "DeepSeek-R1-Distill-Qwen-1.5B in a Kind cluster, "
    "vLLM 0.8.1, max_num_batched_tokens 1024 (Se7en's 'GPU Kind 集群' post): the GPU is not named (an Aliyun GPU "
    "instance)",
    SEARCH.format("%22GPU+KV+cache+size%3A+280%2C480+tokens%22"): "canopylabs/orpheus-3b-0.1-ft (TTS) on 'my 12 "
    "gigabyte card': card model not named",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C215%2C552+tokens%22") + " (copy 2)": "a second copy of the same "
    "modified-build Llama-3.2-1B log",
    "https://github.com/vllm-project/vllm/issues/16841": "Mistral-Small-3.1-24B-Instruct-2503 (multimodal Mistral3)",
}

# --- V1B -------------------------------------------------------------------------------------------------------------
# --- model shapes (config.json values as on the Hub) ---------------------------------------------------------------

LLAMA31_8B_INSTRUCT = {  # meta-llama/Llama-3.1-8B-Instruct
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}


QWEN25_3B_FP16 = shape(QWEN25_3B, torch_dtype="float16")  # run with --dtype float16 (T4)
QWEN25_3B_AWQ = shape(  # Qwen/Qwen2.5-3B-Instruct-AWQ (the official AWQ build: same shape, float16, 4-bit GEMM)
    QWEN25_3B,
    torch_dtype="float16",
    quantization_config=AWQ_4BIT,
)


QWEN3_235B_2507_FP8 = {  # Qwen/Qwen3-235B-A22B-Instruct-2507-FP8
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
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
    "norm_topk_prob": True,
    "vocab_size": 151936,
    "max_position_embeddings": 262144,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "quantization_config": {
        "quant_method": "fp8",
        "fmt": "e4m3",
        "weight_block_size": [128, 128],
        "activation_scheme": "dynamic",
    },
}

# --- chiragn28/FXAssist_Lite: a Kaggle GPU lab, 2x Tesla T4, vLLM 0.31.0, one server start per experiment --------------

FXA = "https://github.com/chiragn28/FXAssist_Lite/blob/5a241fb3c0c4aa1df2e0520cf58dba8ee108662b/"
FXA_URL = FXA + "results/BENCHMARKS.md"
FXA_SOURCE = "chiragn28/FXAssist_Lite"
FXA_VERSION = (
    "0.31.0: results/raw/20261007-v3-benchmark/fxassist_results/stages.jsonl 'install-vllm ... versions: 0.31.0 "
    "2.13.0+cu130 13.0' (bench/lab.py installs vllm=={cfg.vllm_version}, default '0.31.0'); BENCHMARKS.md Setup: "
    "'vLLM, PyTorch, CUDA: 0.31.0 2.13.0+cu130 13.0'"
)
FXA_GPU = "Tesla T4 (Kaggle 'GPU T4 x2'; environment.json: 2x 'Tesla T4', memory_mib 15360, compute capability 7.5)"
FXA_TOTAL = (
    "Kaggle Tesla T4 total as torch prints it, 14.56 GiB ('GPU 0: Tesla T4; free=14.46 GiB / total=14.56 GiB' in "
    "planner_cases_sealed's Kaggle T4 source; planner_cases' Colab T4s printed 14.56 and 14.74 GiB, so +-0.2 GiB); "
    "not printed by this source (nvidia-smi 15360 MiB)"
)
FXA_NOTE = (
    "GPU-lab results of a RAG project (Kaggle notebook version 3, 2026-10-07). One vLLM server per experiment, started "
    "by bench/lab.py Server.command() with the experiment's settings (bench/matrix.py BASE_SERVER plus one override) "
    "and stopped before the next; the KV figures are the table 'GPU memory per server start (from vLLM's own log "
    "lines, GPU-03)' that bench/report.py writes from each server's log (the logs themselves are not committed), and "
    "docs/runbooks/gpu-oom.md repeats them. Attention backend TRITON_ATTN (T4, sm_75), float16, prefix caching off "
    "(--no-enable-prefix-caching) unless stated, CUDA graphs on (the runbook lists CUDA-graph memory per start), "
    "max_num_batched_tokens not set (the report notes a compile range of 1 to 2,048 tokens: the release's default "
    "for a small card). estimate_cudagraphs set: the release estimates CUDA-graph memory by default (vLLM's 0.2x start message 'CUDA graph memory profiling is enabled (default since v0.21.0)'; the runbook: 'vLLM even reported "
    "that with CUDA-graph memory profiling on, 0.99 behaves like 0.9617'). "
)
FXA_FLAGS = (
    "vllm serve <local Qwen/{model}> --served-model-name fxassist-model --port 8000 --host 127.0.0.1 --dtype float16 "
    "--max-model-len {len} --gpu-memory-utilization {util} --max-num-seqs {seqs} --tensor-parallel-size {tp} "
    "--seed 0 --{pc}enable-prefix-caching{quant} (bench/lab.py Server.command)"
)
FXA_MODEL_SOURCE = (
    HF.format("Qwen/Qwen2.5-3B-Instruct") + " (36 layers, 2 KV heads x 128: 36 KiB/token in fp16, as the runbook "
    "computes: 'Every row above matches it to within 0.01 KiB')"
)

# --- cases -----------------------------------------------------------------------------------------------------------

CASES_V1B: list[Case] = [
    Case(
        "Qwen2.5-3B-Instruct fp16, Tesla T4 (14.56 GiB), util 0.90, V1 0.31.0, len 4096, max_num_seqs 32",
        FXA_URL,
        QWEN25_3B_FP16,
        14.56,
        0.9,
        199744,
        tp=1,
        max_model_len=4096,
        max_num_seqs=32,
        estimate_cudagraphs=True,
        note=FXA_NOTE
        + "Experiment baseline/fp16 (BASE_SERVER), a warm start: the smoke test had started the same settings first (lab.smoke_test uses the baseline fp16 server_config), and the report (section 6) says a start with the same settings as an earlier one reuses the compile cache. Two later starts printed the same figures (eval-fp16 with the same server_config, and prefix-caching-on-fp16 which differs only by --enable-prefix-caching): 5.79 / 6.86 GiB / 199,744 tokens. Doubt: the cold first start of these settings (smoke-default) printed 6.42 GiB / 187,008 tokens, 0.44 GiB less; both cold/warm pairs of this source (this one and baseline-awq / eval-awq) differ by 0.44 GiB (see LEFT_OUT), as the distserving source saw on its first starts. 199,744 x 36 KiB = 6.86 GiB.",
        part="sealed",
        vllm="0.31.0",
        source=FXA_SOURCE,
        log="FXAssist Kaggle T4 baseline-fp16 util 0.90",
        quote=(
            "| Server | Model memory (GiB) | Load time (s) | KV cache memory (GiB) | KV cache (tokens) | Max concurrency at max length |",
            "| baseline-fp16 | 5.79 | 8.8 | 6.86 | 199,744 | 48.77x at 4,096 tokens |",
            "| FP16, utilisation 0.90 | 13.5 GiB | 5.79 GiB | 0.11 GiB | 6.86 GiB | 199,744 |",
        ),
        reported="tokens",
        gpu=FXA_GPU,
        gpu_source=FXA_TOTAL,
        version=FXA_VERSION,
        flags=FXA_FLAGS.format(model="Qwen2.5-3B-Instruct", len=4096, util=0.9, seqs=32, tp=1, pc="no-", quant=""),
        model_source=FXA_MODEL_SOURCE,
    ),
    Case(
        "Qwen2.5-3B-Instruct fp16, Tesla T4 (14.56 GiB), util 0.80, V1 0.31.0, len 4096, max_num_seqs 32",
        FXA_URL,
        QWEN25_3B_FP16,
        14.56,
        0.8,
        157328,
        tp=1,
        max_model_len=4096,
        max_num_seqs=32,
        estimate_cudagraphs=True,
        note=FXA_NOTE
        + "Experiment gpu-mem-0.80: BASE_SERVER with gpu_memory_utilization 0.80 (one knob; util is not part of the compile cache key, and 6.86 - 0.10 x 14.56 = 5.40 GiB, so a warm start like the baseline). 157,328 x 36 KiB = 5.40 GiB.",
        part="sealed",
        vllm="0.31.0",
        source=FXA_SOURCE,
        log="FXAssist Kaggle T4 gpu-mem-0.80-fp16",
        quote=(
            "| Server | Model memory (GiB) | Load time (s) | KV cache memory (GiB) | KV cache (tokens) | Max concurrency at max length |",
            "| gpu-mem-0.80-fp16 | 5.79 | 8.6 | 5.4 | 157,328 | 38.41x at 4,096 tokens |",
            "| FP16, utilisation 0.80 | 12.0 GiB | 5.79 GiB | 0.11 GiB | 5.40 GiB | 157,328 |",
        ),
        reported="tokens",
        gpu=FXA_GPU,
        gpu_source=FXA_TOTAL,
        version=FXA_VERSION,
        flags=FXA_FLAGS.format(model="Qwen2.5-3B-Instruct", len=4096, util=0.8, seqs=32, tp=1, pc="no-", quant=""),
        model_source=FXA_MODEL_SOURCE,
    ),
    Case(
        "Qwen2.5-3B-Instruct-AWQ, Tesla T4 (14.56 GiB), util 0.90, V1 0.31.0, len 4096, max_num_seqs 32",
        FXA_URL,
        QWEN25_3B_AWQ,
        14.56,
        0.90,
        313472,
        max_model_len=4096,
        max_num_seqs=32,
        estimate_cudagraphs=True,
        note=FXA_NOTE
        + "The evaluation start eval-awq: lab.run_eval starts the baseline awq server_config (BASE_SERVER "
        "with the official AWQ build and --quantization awq), after the benchmark's start of the same settings, so a "
        "warm start. Doubt: that first (cold) start, baseline-awq, printed 10.32 GiB / 300,496 tokens, 0.44 GiB less, "
        "the same cold-start gap as the fp16 smoke start (LEFT_OUT). AWQ on a T4 (sm_75): the awq kernel, not "
        "awq_marlin. 313,472 x 36 KiB = 10.76 GiB.",
        part="sealed",
        vllm="0.31.0",
        source=FXA_SOURCE,
        log="FXAssist Kaggle T4 eval-awq util 0.90",
        quote=(
            "| Server | Model memory (GiB) | Load time (s) | KV cache memory (GiB) | KV cache (tokens) | Max concurrency "
            "at max length |",
            "| eval-awq | 1.95 | 6.9 | 10.76 | 313,472 | 76.53x at 4,096 tokens |",
        ),
        reported="tokens",
        gpu=FXA_GPU,
        gpu_source=FXA_TOTAL,
        version=FXA_VERSION,
        flags=FXA_FLAGS.format(
            model="Qwen2.5-3B-Instruct-AWQ", len=4096, util=0.9, seqs=32, tp=1, pc="no-", quant=" --quantization awq"
        ),
        model_source=HF.format("Qwen/Qwen2.5-3B-Instruct-AWQ") + " (the Qwen2.5-3B shape, float16, AWQ 4-bit group 128 "
        "GEMM)",
    ),
    Case(
        "Qwen2.5-1.5B-Instruct, RTX A4000 (15.6 GiB), util 0.90, V1 0.26.0, len 8192",
        "https://github.com/Podwarden/vllm-warden/blob/95b7f9b7d0ff3838c30b0b5b8276395bc313f447/documents/INSTALL.md",
        QWEN25_15B_INSTRUCT,
        15.6,
        0.90,
        395264,
        max_model_len=8192,
        estimate_cudagraphs=True,
        note="The install manual of a vLLM front end (LLM Warden), 'written from two recorded installs on a real "
        "machine ... every block of output is what the terminal actually printed': the model registered with "
        "served_model_name qwen2.5-1.5b, hf_repo Qwen/Qwen2.5-1.5B-Instruct, gpu_indices [0] (the RTX A4000; the "
        "engine env pins CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES from gpu_indices) and max_model_len "
        "8192, the rest defaults: ModelCreate gpu_memory_utilization 0.9, dtype None (no --dtype: auto, bf16 on "
        "Ampere), no max_num_seqs, no quantization, no extra args; the manual: 'gpu_memory_utilization defaults to "
        "0.9' and 'loaded first try at the default gpu_memory_utilization of 0.9'. The card was free for this start "
        "(an earlier attempt failed while llama-server processes held GPU 0; nvidia-smi after the load: GPU 0 15409 "
        "MiB used of 16376). Engine lines abridged by the author (no timestamps). vLLM 0.26.0 from the served "
        "model's own reply ('system_fingerprint':'vllm-0.26.0-aee93ac4'). CUDA graphs on (no --enforce-eager), "
        "compile ran in this start ('compilation: 10.33 s', a cold compile cache). max_num_batched_tokens not set "
        "(release default for a small card). CUDA-graph memory estimate on (the default since v0.21.0). --scheduling-policy priority does not touch memory. 395,264 x 28 KiB "
        "= 10.55 GiB.",
        part="sealed",
        vllm="0.26.0",
        source="Podwarden/vllm-warden",
        log="vllm-warden INSTALL qwen2.5-1.5b RTX A4000 util 0.90",
        quote=(
            "[gpu_worker.py:560]     Available KV cache memory: 10.55 GiB",
            "[kv_cache_utils.py:2177] GPU KV cache size: 395,264 tokens",
            "[core.py:340] init engine (profile, create kv cache, warmup model) took 20.32 s (compilation: 10.33 s)",
        ),
        reported="tokens",
        gpu="NVIDIA RTX A4000 16376 MiB (GPU 0 of the trial host; GPU 1 a Quadro RTX 5000)",
        gpu_source="printed by vLLM on the same card in the manual's failed start: 'Free memory on device cuda:0 "
        "(1.65/15.6 GiB) on startup is less than desired GPU memory utilization (0.13, 2.03 GiB)'",
        version="0.26.0: 'system_fingerprint':'vllm-0.26.0-aee93ac4' in the reply of this loaded model (same document)",
        flags="vllm serve --model Qwen/Qwen2.5-1.5B-Instruct --host 127.0.0.1 --port 10000 --served-model-name "
        "qwen2.5-1.5b --tensor-parallel-size 1 --gpu-memory-utilization 0.9 --max-model-len 8192 --revision main "
        "--scheduling-policy priority (app/runtime/backends/vllm/args.py build_vllm_args with the registered row)",
        model_source=HF.format("Qwen/Qwen2.5-1.5B-Instruct") + " (28 layers, 2 KV heads x 128: 28 KiB/token bf16; "
        "the manual: 2.89 GiB of weights pulled)",
    ),
    Case(
        "Qwen3-235B-A22B-Instruct-2507-FP8 (MoE), 4x RTX PRO 6000 Blackwell (95.01 GiB), TP4, util 0.90, V1 0.27.1, "
        "len 32768, max_num_seqs 32",
        "https://github.com/kubesimplify/website/blob/08b151ee1aa38188fb118b99104567117a2ca6d4/content/blog/"
        "running-a-big-llm-across-multiple-gpus-with-vllm.md",
        QWEN3_235B_2507_FP8,
        95.01,
        0.90,
        621392,
        tp=4,
        max_model_len=32768,
        max_num_seqs=32,
        estimate_cudagraphs=True,
        note="A blog post in the publisher's site repo ('Running a big LLM across multiple GPUs with vLLM', "
        "2026-08-18): 8x RTX PRO 6000 Blackwell Server Edition host (utho-gpu-rtxpro6000-8-62383), four of them "
        "given to the container (--gpus '\"device=1,4,5,6\"'), no NVLink (nvidia-smi topo SYS everywhere). vLLM "
        "0.27.1 in the official container (vllm/vllm-openai:latest at the time), PyTorch 2.13.0, CUDA 13.0, driver "
        "610.43.02. VLLM_USE_DEEP_GEMM=0 (DeepGEMM's 'Unknown SF transformation' on sm_120; vLLM's own FP8 block "
        "kernels instead). No kv-cache-dtype (bf16 KV), CUDA graphs on (no --enforce-eager), prefix caching on "
        "(default), max_num_batched_tokens not set (the release's default for a >=70 GiB card); CUDA-graph memory estimate on (default since v0.21.0). The log excerpt is "
        "abridged by the author ('.'), the four Worker lines identical. Per rank 1 KV head x 128 x 94 layers = 47 "
        "KiB/token; the author: '27.85 GiB divided by 47 KiB per token per card, gives 621,337 against the 621,392 "
        "vLLM printed'. The same post's other two starts of this model on the same 4 cards (TP4 + "
        "--enable-expert-parallel: 27.96 GiB / 623,696 tokens; PP4: 26.84 GiB / 555,680 tokens) are in LEFT_OUT.",
        part="sealed",
        vllm="0.27.1",
        source="kubesimplify/website",
        log="kubesimplify multi-GPU blog Qwen3-235B-2507-FP8 TP4 (vllm-tp4)",
        quote=(
            "(Worker_TP0 pid=770) INFO 08-21 18:18:05 [gpu_model_runner.py:5405] Model loading took 55.19 GiB memory "
            "and 48.502592 seconds",
            "(EngineCore pid=558) INFO 08-21 18:21:55 [kv_cache_utils.py:2235] GPU KV cache size: 621,392 tokens",
            "(EngineCore pid=558) INFO 08-21 18:21:55 [kv_cache_utils.py:2236] Maximum concurrency for 32,768 tokens "
            "per request: 18.96x",
            "(Worker_TP1 pid=771) INFO 08-21 18:22:06 [gpu_worker.py:789] Free memory on device (94.05/95.01 GiB) on "
            "startup. Desired GPU memory utilization is (0.9, 85.51 GiB). Actual usage is 56.89 GiB for consumed "
            "memory (weights + non-torch), 0.76 GiB for peak activation, and 0.32 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=29407858586` (27.39 GiB) to fit into requested "
            "memory, or `--kv-cache-memory=38581581312` (35.93 GiB) to fully utilize gpu memory. Current kv cache "
            "memory in use is 27.85 GiB.",
        ),
        reported="tokens",
        gpu="4x NVIDIA RTX PRO 6000 Blackwell Server Edition 96 GB ('the machine reports 95.01 GiB of that as usable')",
        gpu_source="printed in the log: 'Free memory on device (94.05/95.01 GiB) on startup'",
        version="0.27.1 (the post: 'The software: vLLM 0.27.1 running in the official container, with PyTorch "
        "2.13.0 and CUDA 13.0')",
        flags="docker run -d --name vllm-tp4 --gpus '\"device=1,4,5,6\"' --ipc=host -p 8000:8000 -v "
        "/root/.cache/huggingface:/root/.cache/huggingface -e HF_HUB_OFFLINE=1 -e HF_HOME=/root/.cache/huggingface "
        "-e VLLM_USE_DEEP_GEMM=0 vllm/vllm-openai:latest Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --served-model-name "
        "qwen3-235b --tensor-parallel-size 4 --gpu-memory-utilization 0.90 --max-model-len 32768 --max-num-seqs 32 "
        "--port 8000",
        model_source=HF.format("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8") + " (the post quotes its "
        "quantization_config and 94 layers, 64 heads, 4 KV heads, 128 experts / 8 per token; shape as "
        "Qwen3-235B-A22B-FP8 with 262144 positions)",
    ),
    Case(
        "Llama-3.1-8B-Instruct, A100 80GB PCIe (79.25 GiB), util 0.92 (default), V1 0.31.0, len 131072",
        SEARCH.format("%22GPU+KV+cache+size%3A+460%2C496+tokens%22"),
        LLAMA31_8B_INSTRUCT,
        79.25,
        0.92,
        460496,
        max_model_len=131072,
        estimate_cudagraphs=True,
        note="A learning-lab notebook ('Session 2', host dg05, 'Card used: A100 80GB', 'GPU Used: GPU2'; the same "
        "notes' nvidia-smi shows 'NVIDIA A100 80GB PCIe' cards, 81920MiB) quoting the start log of 'Run2' of the "
        "stock image vllm/vllm-openai:v0.31.0-ubuntu2404 with only --model (no other flags: util is the release's "
        "default, which vLLM prints as 0.92; max_model_len the model's 131072; bf16; CUDA graphs on; prefix caching "
        "default). Lines quoted in the author's notes, some reordered (timestamps show the order). The author's own "
        "arithmetic 72.91 - 15.26 - 1.44 = 56.21 leaves no room for the 0.23 GiB CUDA-graph figure, which the "
        "release prints after the KV line ('for CUDAGraph memory', actual); estimate_cudagraphs set (CUDA-graph "
        "memory profiling is on by default since v0.21.0, as 0.2x logs say), with that doubt. 460,496 x 128 KiB = 56.21 GiB. The repository is not named by the index "
        "(two copies of the notes; find them with the search URL). max_num_batched_tokens not printed (release "
        "default for an 80 GB card). The container mounts only the HF cache, so the compile cache is not kept: the "
        "author notes 'Compilation stayed at ~15 s both times, so it isn't cached across container restarts' (a "
        "cold-compile start, as every start of this command).",
        part="sealed",
        vllm="0.31.0",
        source="code: learning-lab notes (dg05, A100 80GB PCIe, Llama-3.1-8B-Instruct, vllm-openai v0.31.0)",
        log="dg05 learning-lab Session 2 Run2 Llama-3.1-8B A100 v0.31.0",
        quote=(
            "(EngineCore pid=326) INFO 10-06 17:00:11 [model_runner.py:407] Model loading took 15.0 GiB memory and "
            "5.420225 seconds",
            "(EngineCore pid=326) INFO 10-06 17:00:33 [kv_cache_utils.py:2464] GPU KV cache size: 460,496 tokens, "
            "Maximum concurrency for 131,072 tokens per request: 3.51x",
            "(EngineCore pid=326) INFO 10-06 17:00:41 [gpu_worker.py:955] Free memory on device (78.84/79.25 GiB) on "
            "startup. Desired GPU memory utilization is (0.92, 72.91 GiB). Actual usage is 15.26 GiB for consumed "
            "memory (weights + non-torch), 1.44 GiB for peak activation, and 0.23 GiB for CUDAGraph memory.",
            "(EngineCore pid=326) INFO 10-06 17:00:33 [gpu_worker.py:692] Available KV cache memory: 56.21 GiB",
        ),
        reported="tokens",
        gpu="NVIDIA A100 80GB PCIe (dg05 GPU2; 'Card used: A100 80GB')",
        gpu_source="printed in the log: 'Free memory on device (78.84/79.25 GiB) on startup'",
        version="docker image vllm/vllm-openai:v0.31.0-ubuntu2404 (the notes' Setup and docker run command)",
        flags="docker run --gpus '\"device=2\"' --ipc=host -p 8000:8000 -v ~/.cache/huggingface:/root/.cache/huggingface "
        "-e HF_TOKEN=... vllm/vllm-openai:v0.31.0-ubuntu2404 --model meta-llama/Llama-3.1-8B-Instruct",
        model_source=HF.format("meta-llama/Llama-3.1-8B-Instruct") + " (32 layers, 8 KV heads x 128: 128 KiB/token "
        "bf16, as the author computes)",
    ),
]

LEFT_OUT_V1B: dict[str, str] = {
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+60%2C768+tokens%22"
    ): "RTX 5090 (31.36 GiB printed) notes of a self-hosted assistant: Qwen3-32B-AWQ at util 0.70/0.85 len 8192 (12,272 / 21,120 tokens) and Qwen3-14B-AWQ at util 0.70 len 16384/32768 (9.27 GiB, 60,768 tokens); the repository, the vLLM release and the exact checkpoints and compose flags are not shown in the indexed file",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+251%2C344+tokens%22"
    ): "Qwen2.5-7B-Instruct-AWQ, util 0.90, len 8192, vLLM 0.28.0 (the plan's pinned tag) on a RunPod pod: the GPU model is never named in the indexed notes (only '24 GiB physical VRAM'), so the total is not established",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+70%2C240+tokens%22"
    ): "vLLM 0.29.0 warm/cold start pair on a 6.0 GiB card (70,240 vs 43,664 tokens; a useful cold-compile-cache data point): GPU, model and flags not named in the test fixture",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+504%2C192+tokens%22"
    ): "MiniCPM5-1B (LlamaForCausalLM) on RTX 4090 D, vLLM 0.23.0, util 0.6, len 4096: the model's config.json (head_dim, intermediate, vocab, tying) not found in a public copy, and the 4090 D total is not printed",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+1%2C793%2C232+tokens%22"
    ): "Qwen2.5-0.5B-Instruct on an RTX 4090 under WSL2 (vLLM 0.27.1, 23.99 GiB printed): WSL excluded; the notebook is orca3/llm-model-inference (already used)",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+136%2C736+tokens%22"
    ): "Qwen3-0.6B on A100 80GB, vLLM 0.26.0, eager: an instrumented vLLM ([BRIDGE] traces), util and max_model_len not stated",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+651%2C504+tokens%22"
    ): "Qwen2.5-7B-Instruct-AWQ on an H200, vLLM 0.31.0 smoke run (test fixture): gpu_memory_utilization and max_num_seqs not stated (34.79 GiB of KV is far below a 0.9 budget)",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+558%2C496+tokens%22"
    ): "local qwen3-32b-nvfp4 / mxfp4 (compressed-tensors) on an sm100 card, vLLM 0.31.0: self-made quantized checkpoints (config and weights not public), util and card total not stated",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+178%2C256+tokens%22"
    ): "chiragn28/FXAssist_Lite test fixture from an earlier Kaggle run (5.79 / 6.12 GiB / 178,256 tokens at len 4096): which experiment and flags it came from is not stated; the v3 benchmark starts are the cases",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+165%2C792+tokens%22"
    ): "Qwen3.5-9B on L40S (vLLM 0.19.0): hybrid (GDN) multimodal model",
    SEARCH.format(
        "%22GPU+KV+cache+size%3A+79%2C648+tokens%22"
    ): "NVFP4 hybrid (mamba) multimodal model, 65,536 len: hybrid",
    SEARCH.format(
        "%22Free+memory+on+device+%2830.86%2F31.36+GiB%29%22"
    ): "RTX 5090 benchmark tables (vLLM 0.28.0 / 0.30.0, 'vllm-primary eager/graph/fp8kv' arms): the model and flags are outside the indexed excerpt; KV only as 'Available KV cache memory' in a summary cell",
    "code: journal of vllm-assistant.service (Qwen2.5-14B-Instruct-AWQ, vLLM 0.15.1, max_num_seqs 8, len 16384)": "systemd journal of a host running several GPU services: the start shown failed (1.87 GiB available) with the card shared; GPU model not printed",
    "code: NGC vLLM 0.13.0+nv26.01 logs on promaxgb10 (Qwen2.5-14B-FP8-dynamic, Qwen3-30B-A3B-FP8, Nemotron-3-Nano)": "GB10 (unified memory)",
    "code: Qwen3-8B-FP8 on a 23.53 GiB card, util 0.8, len 1024, DEBUG log (gpu_worker.py:391)": "vLLM 0.10/0.11 era, outside the 0.12+ releases this batch gathered",
    "code: bridge_attn 'cu_sm80_on_sm7x' start (650,208 tokens, 23.47 GiB)": "modified vLLM attention (bridge_attn), not stock",
    "https://github.com/kubesimplify/website/blob/08b151ee1aa38188fb118b99104567117a2ca6d4/content/blog/"
    "running-a-big-llm-across-multiple-gpus-with-vllm.md (TP4 + EP, PP4)": "the post's other starts (in another revision of "
    "the same file and in its part two, content/blog/how-multi-gpu-llm-inference-actually-works.md) of "
    "Qwen3-235B-2507-FP8 on the same 4 cards: TP4 with --enable-expert-parallel (27.96 GiB, 623,696 tokens) and "
    "pipeline-parallel 4 (26.84 GiB per GPU, 555,680 tokens); Case has no EP or PP field; figures only in the "
    "post's table, not as log lines",
    FXA_URL + " (baseline-awq, 300,496 tokens)": "cold first start of the AWQ settings (new model, compile cache "
    "cold): 0.44 GiB below the warm restart eval-awq of the same server_config, which is the case",
    FXA_URL + " (smoke-default, 187,008 tokens)": "cold first start of the baseline fp16 settings: 0.44 GiB below "
    "the warm restarts (baseline-fp16, eval-fp16), which are the case",
    FXA_URL + " (max-model-len-2048-fp16, 187,008 tokens)": "cold start only (a new max_model_len is a new compile "
    "cache): same 0.44 GiB cold gap; no warm restart of these settings",
    FXA_URL + " (max-num-seqs-8-fp16, 189,456 tokens)": "cold start only (new max_num_seqs, new CUDA-graph sizes); no "
    "warm restart of these settings",
    FXA_URL + " (oom-drill, util 0.99, len 32768, max_num_seqs 256, 213,168 tokens)": "cold start only (new "
    "max_model_len and max_num_seqs); no warm restart",
    FXA_URL + " (tensor-parallel-2-fp16, 2x T4, 564,928 tokens)": "cold start only (first TP2 start); no warm restart",
    FXA_URL + " (prefix-caching-on-fp16, eval-fp16)": "the same figures as the baseline-fp16 case (199,744 tokens), "
    "starts of the same settings (prefix caching on in the first): counted once",
    SEARCH.format("%22GPU+KV+cache+size%3A+332%2C672+tokens%22"): "Qwen2.5-14B-Instruct-FP8-dynamic on a GB10 "
    "(promaxgb10, NGC vLLM 0.13.0+nv26.01): unified memory",
    SEARCH.format("%22GPU+KV+cache+size%3A+211%2C936+tokens%22"): "Qwen3VLMoeForConditionalGeneration on H100 NVL "
    "(0.13.0): vision model",
    SEARCH.format("%22GPU+KV+cache+size%3A+686%2C320+tokens%22"): "Ministral-3-14B-Instruct-2512 TP2 (0.12.0): "
    "Mistral3 multimodal; flags in the script differ from the log's (len 100,000 vs --max-model-len 16384)",
    SEARCH.format("%22GPU+KV+cache+size%3A+597%2C776+tokens%22"): "Jetson Thor (unified memory) test fixture",
    SEARCH.format("%22GPU+KV+cache+size%3A+174%2C720+tokens%22"): "vLLM 0.18.0+cpu (CPU backend)",
    SEARCH.format("%22GPU+KV+cache+size%3A+208%2C320+tokens%22"): "Nemotron-3-Nano-4B (hybrid) on a GB10 (NGC 0.13.0)",
}

# --- V0 --------------------------------------------------------------------------------------------------------------
GiB = 1 << 30
BLOCK = 16
VLLM = "https://github.com/vllm-project/vllm/issues/{}"
VLLM_PR = "https://github.com/vllm-project/vllm/pull/{}"

GPTQ_4BIT = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq"}

MISTRAL_7B = {  # mistralai/Mistral-7B-v0.1 shape (the base of OpenHermes-2.5 and zephyr-7b-beta)
    "architectures": ["MistralForCausalLM"],
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "sliding_window": 4096,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
OPENHERMES_25_MISTRAL_7B = shape(MISTRAL_7B, vocab_size=32002)  # teknium/OpenHermes-2.5-Mistral-7B (2 added tokens)
ZEPHYR_7B_BETA_AWQ = shape(
    MISTRAL_7B, torch_dtype="float16", quantization_config=AWQ_4BIT
)  # TheBloke/zephyr-7B-beta-AWQ
LLAMA2_7B_GPTQ = shape(LLAMA2_7B, quantization_config=GPTQ_4BIT)  # TheBloke/Llama-2-7B-GPTQ (main: 4-bit, g128)
QWEN25_32B_AWQ = cfg(
    "Qwen2.5-32B-Instruct", torch_dtype="float16", quantization_config=AWQ_4BIT
)  # Qwen/Qwen2.5-32B-Instruct-AWQ
QWEN25_72B_GPTQ_INT4 = cfg(  # Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4: intermediate padded to 29696 for 4-bit groups
    "Qwen2.5-72B-Instruct",
    torch_dtype="float16",
    intermediate_size=29696,
    quantization_config=GPTQ_4BIT,
)

# --- vllm-project/vllm PR #4454: mgoin's KV block counts on an A6000 at main 73c8d677 (after v0.4.1) -------------
PR4454 = VLLM_PR.format(4454)
PR4454_SOURCE = "vllm-project/vllm#4454"
PR4454_NOTE = (
    "vLLM PR #4454 ('[Misc] Upgrade to torch==2.3.0'), mgoin's comment of 2024-04-29: 'here are my results for kv "
    "cache block allocation using an A6000 ... Using main's current HEAD commit "
    "73c8d677e57e42374bcfb2271b8f1cf7f2c0a486' (main between the v0.4.1 and v0.4.2 tags, torch 2.2.x), each start "
    "a bare `python -c 'from vllm import LLM;LLM(\"<model>\")'`, so every engine argument is the release default: "
    "gpu_memory_utilization 0.90, max_model_len from the config, max_num_seqs 256, max_num_batched_tokens "
    "max(max_model_len, 2048) (no chunked prefill), block 16, swap 4 GiB, CUDA graphs on. The same comment repeats "
    "the six starts on the PR's torch 2.3.0 build ('a roughly ~1 block difference'); the main-branch figures are "
    "used. GPU total not printed (V0 of this age prints only the block counts): 47.54 GiB is the A6000 total vLLM "
    "printed for an 'A6000 (48G)' in vllm#10360 (total_gpu_memory=47.54GiB). The comment's #issuecomment anchor "
    "was not available from the copies read; the PR URL is given."
)
PR4454_GPU = "NVIDIA RTX A6000 ('using an A6000')"
PR4454_GPU_SOURCE = "A6000 total as vLLM printed it in vllm#10360 ('GPU: A6000 (48G)', total_gpu_memory=47.54GiB)"
PR4454_VERSION = "main at 73c8d677e57e42374bcfb2271b8f1cf7f2c0a486 (2024-04-29, after the v0.4.1 tag); taken as 0.4.1"
PR4454_QUOTE_HEAD = "Using main's current HEAD commit 73c8d677e57e42374bcfb2271b8f1cf7f2c0a486:"

CASES_V0: list[Case] = [
    Case(
        "Qwen2.5-32B-Instruct, 2x 48GB card (47.50 GiB), util 0.90, TP2, V0 0.7.1, len 12288",
        VLLM.format(12663),
        cfg("Qwen2.5-32B-Instruct"),
        47.50,
        0.90,
        5225 * BLOCK,
        tp=2,
        max_model_len=12288,
        engine="v0",
        enforce_eager=True,
        note="Issue 'vllm spins gpus at 100%' (bdambrosio, 2025-02-02), the start log pasted in the author's second "
        "comment ('First startup log, the curl, then additional console output'). Both TP ranks print the same "
        "profile (weights 30.71 GiB, non-torch 0.29 GiB, activation peak 1.54 GiB, KV 10.21 GiB). KV tokens = 5225 "
        "blocks x 16 = 83,600 per rank (5225 x 16 x 64 layers x 4 KV heads/rank x 128 x 2 x 2 B = 10.20 GiB). "
        "dtype auto (bf16). The GPU's name is not in the parts of the thread that could be read (its collect_env "
        "block was not); the total is printed by vLLM (47.50 GiB, a 48 GB card). enforce-eager is stated in the twin "
        "issue #12664's command (same author, model and flags); in V0 graphs are captured after the KV cache is "
        "sized, so it does not change the figure. max_num_seqs / batched tokens not set (defaults). The comment's "
        "#issuecomment anchor was not available from the copies read; the issue URL is given.",
        part="sealed",
        vllm="0.7.1",
        source="vllm-project/vllm#12663",
        log="vllm#12663 Qwen2.5-32B-Instruct TP2 startup 02-02 11:49",
        quote=(
            "INFO 02-02 11:49:54 api_server.py:838] vLLM API server version 0.7.1",
            "INFO 02-02 11:50:17 model_runner.py:1116] Loading model weights took 30.7098 GB",
            "INFO 02-02 11:50:23 worker.py:266] Memory profiling takes 5.38 seconds",
            "INFO 02-02 11:50:23 worker.py:266] the current vLLM instance can use total_gpu_memory (47.50GiB) x "
            "gpu_memory_utilization (0.90) = 42.75GiB",
            "INFO 02-02 11:50:23 worker.py:266] model weights take 30.71GiB; non_torch_memory takes 0.29GiB; PyTorch "
            "activation peak memory takes 1.54GiB; the rest of the memory reserved for KV Cache is 10.21GiB.",
            "INFO 02-02 11:50:23 executor_base.py:108] # CUDA blocks: 5225, # CPU blocks: 2048",
            "INFO 02-02 11:50:23 executor_base.py:113] Maximum concurrency for 12288 tokens per request: 6.80x",
        ),
        reported="blocks",
        gpu="2x 48 GB NVIDIA card (name not read; host bruce-AI-Server)",
        gpu_source="printed in the log (total_gpu_memory (47.50GiB))",
        version="0.7.1 printed ('vLLM API server version 0.7.1')",
        flags="./vllm-server.sh: vllm serve /home/bruce/Downloads/models/Qwen2.5-32B-Instruct --port 5000 "
        "(args: max_model_len=12288, dtype='auto', kv_cache_dtype='auto'; tensor-parallel-size 2 and --enforce-eager "
        "per #12664's command 'vllm serve .../Qwen2.5-32B-Instruct --tensor-parallel-size 2 --max-model-len 12288 "
        "--enforce-eager --port 5000')",
        model_source="tests/data/models/Qwen2.5-32B-Instruct (weights 30.7098 GB per rank agree with 32.8B bf16 / 2)",
    ),
    Case(
        "Meta-Llama-3-8B-Instruct, RTX A6000 (47.54 GiB), util 0.90, V0 0.4.1 (main), len 8192",
        PR4454,
        LLAMA3_8B,
        47.54,
        0.90,
        13248 * BLOCK,
        max_model_len=8192,
        engine="v0",
        note=PR4454_NOTE + " bf16; len 8192 from the config; 13248 x 16 x 128 KiB = 25.88 GiB.",
        part="sealed",
        vllm="0.4.1",
        source=PR4454_SOURCE,
        log="vllm#4454 main 73c8d677 A6000 Meta-Llama-3-8B-Instruct",
        quote=(
            PR4454_QUOTE_HEAD,
            "> python -c 'from vllm import LLM;LLM(\"meta-llama/Meta-Llama-3-8B-Instruct\")'",
            "INFO 04-29 19:12:48 gpu_executor.py:118] # GPU blocks: 13248, # CPU blocks: 2048",
        ),
        reported="blocks",
        gpu=PR4454_GPU,
        gpu_source=PR4454_GPU_SOURCE,
        version=PR4454_VERSION,
        flags='LLM("meta-llama/Meta-Llama-3-8B-Instruct") (all defaults)',
        model_source=HF.format("meta-llama/Meta-Llama-3-8B-Instruct") + " (Meta-Llama-3-8B shape, planner_cases "
        "LLAMA3_8B; bf16, 8192 positions, vocab 128256)",
    ),
    Case(
        "OpenHermes-2.5-Mistral-7B, RTX A6000 (47.54 GiB), util 0.90, V0 0.4.1 (main), len 32768",
        PR4454,
        OPENHERMES_25_MISTRAL_7B,
        47.54,
        0.90,
        12735 * BLOCK,
        max_model_len=32768,
        engine="v0",
        note=PR4454_NOTE + " bf16; max_model_len taken as the config's 32768 positions (vLLM 0.4.x does not cap it "
        "at the 4096 sliding window; the block count is consistent with zephyr-7B-beta-AWQ of the same shape and "
        "length: both leave ~4.4 GiB for the profile's activations). 12735 x 16 x 128 KiB = 24.87 GiB.",
        part="sealed",
        vllm="0.4.1",
        source=PR4454_SOURCE,
        log="vllm#4454 main 73c8d677 A6000 OpenHermes-2.5-Mistral-7B",
        quote=(
            PR4454_QUOTE_HEAD,
            "> python -c 'from vllm import LLM;LLM(\"teknium/OpenHermes-2.5-Mistral-7B\")'",
            "INFO 04-29 19:13:07 gpu_executor.py:118] # GPU blocks: 12735, # CPU blocks: 2048",
        ),
        reported="blocks",
        gpu=PR4454_GPU,
        gpu_source=PR4454_GPU_SOURCE,
        version=PR4454_VERSION,
        flags='LLM("teknium/OpenHermes-2.5-Mistral-7B") (all defaults)',
        model_source=HF.format("teknium/OpenHermes-2.5-Mistral-7B") + " (Mistral-7B-v0.1 shape with vocab 32002, "
        "bf16, 32768 positions, sliding_window 4096; recalled, not re-read from a copy: one public copy lists vocab "
        "32000 with 'TODO: verify'; 2 rows of embedding either way)",
    ),
    Case(
        "Llama-2-7B-GPTQ (4-bit), RTX A6000 (47.54 GiB), util 0.90, V0 0.4.1 (main), len 4096",
        PR4454,
        LLAMA2_7B_GPTQ,
        47.54,
        0.90,
        4877 * BLOCK,
        max_model_len=4096,
        engine="v0",
        note=PR4454_NOTE + " float16 GPTQ 4-bit (group 128); len 4096 from the config; 4877 x 16 x 512 KiB (32 "
        "KV heads) = 38.10 GiB; CPU blocks 512 = 4 GiB / 8 MiB per block agree with the MHA shape.",
        part="sealed",
        vllm="0.4.1",
        source=PR4454_SOURCE,
        log="vllm#4454 main 73c8d677 A6000 Llama-2-7B-GPTQ",
        quote=(
            PR4454_QUOTE_HEAD,
            "> python -c 'from vllm import LLM;LLM(\"TheBloke/Llama-2-7B-GPTQ\")'",
            "INFO 04-29 19:13:19 gpu_executor.py:118] # GPU blocks: 4877, # CPU blocks: 512",
        ),
        reported="blocks",
        gpu=PR4454_GPU,
        gpu_source=PR4454_GPU_SOURCE,
        version=PR4454_VERSION,
        flags='LLM("TheBloke/Llama-2-7B-GPTQ") (all defaults; quantization detected from the config)',
        model_source=HF.format("TheBloke/Llama-2-7B-GPTQ") + " (Llama-2-7b shape, planner_cases LLAMA2_7B, float16; "
        "quantization_config 4-bit, group 128, act-order off for the main branch per the repo README's table; recalled, "
        "not re-read from a copy)",
    ),
    Case(
        "zephyr-7B-beta-AWQ (4-bit), RTX A6000 (47.54 GiB), util 0.90, V0 0.4.1 (main), len 32768",
        PR4454,
        ZEPHYR_7B_BETA_AWQ,
        47.54,
        0.90,
        17641 * BLOCK,
        max_model_len=32768,
        engine="v0",
        note=PR4454_NOTE + " float16 AWQ 4-bit (group 128, gemm); max_model_len the config's 32768 (see the "
        "OpenHermes case); 17641 x 16 x 128 KiB = 34.45 GiB.",
        part="sealed",
        vllm="0.4.1",
        source=PR4454_SOURCE,
        log="vllm#4454 main 73c8d677 A6000 zephyr-7B-beta-AWQ",
        quote=(
            PR4454_QUOTE_HEAD,
            "> python -c 'from vllm import LLM;LLM(\"TheBloke/zephyr-7B-beta-AWQ\")'",
            "INFO 04-29 19:13:37 gpu_executor.py:118] # GPU blocks: 17641, # CPU blocks: 2048",
        ),
        reported="blocks",
        gpu=PR4454_GPU,
        gpu_source=PR4454_GPU_SOURCE,
        version=PR4454_VERSION,
        flags='LLM("TheBloke/zephyr-7B-beta-AWQ") (all defaults; quantization detected from the config)',
        model_source=HF.format("TheBloke/zephyr-7B-beta-AWQ") + " (Mistral-7B-v0.1 shape, vocab 32000, float16, "
        "32768 positions; AWQ 4-bit g128 gemm zero_point; recalled, not re-read from a copy)",
    ),
    Case(
        "Qwen2.5-32B-Instruct-AWQ, RTX A6000 (47.54 GiB), util 0.90, V0 0.6.4.post1, len 4096, prefix caching",
        VLLM.format(10360),
        QWEN25_32B_AWQ,
        47.54,
        0.90,
        int(22.74 * GiB) // 262144 // BLOCK * BLOCK,
        max_model_len=4096,
        engine="v0",
        note="Issue 'v0.6.4 requires more GPU memory than v0.6.3' (paulcx), comment of 2024-11-30: 'IMAGE: "
        "0.6.4.post1 / GPU: A6000 (48G) / CMD: --model Qwen2.5-32B-Instruct-AWQ --max-model-len 4096 "
        "--enable-prefix-caching' with the one-line profile quoted. Only the GiB figure is printed here: tokens = "
        "22.74 GiB / 256 KiB per token (64 layers x 8 KV heads x 128 x 2 x 2 B), rounded down to whole blocks "
        "(+-0.005 GiB of print rounding = +-20 tokens). The OOM the author reports came later, while serving; the "
        "start itself completed. util not passed: the release's default 0.90 (printed). The comment's #issuecomment "
        "anchor was not available from the copies read; the issue URL is given.",
        part="sealed",
        vllm="0.6.4.post1",
        source="vllm-project/vllm#10360",
        log="vllm#10360 paulcx Qwen2.5-32B-Instruct-AWQ A6000 0.6.4.post1",
        quote=(
            "LOG: `Memory profiling results: total_gpu_memory=47.54GiB initial_memory_usage=18.60GiB "
            "peak_torch_memory=19.60GiB memory_usage_post_profile=18.62GiB non_torch_memory=0.44GiB "
            "kv_cache_size=22.74GiB gpu_memory_utilization=0.90`",
        ),
        reported="gib",
        gpu="NVIDIA RTX A6000 ('GPU: A6000 (48G)')",
        gpu_source="printed in the log (total_gpu_memory=47.54GiB)",
        version="docker image 0.6.4.post1 ('IMAGE: 0.6.4.post1')",
        flags="'--model' 'Qwen2.5-32B-Instruct-AWQ' '--max-model-len' '4096' '--enable-prefix-caching'",
        model_source=HF.format("Qwen/Qwen2.5-32B-Instruct-AWQ") + " (Qwen2.5-32B-Instruct shape, "
        "tests/data/models; float16; AWQ 4-bit g128 gemm zero_point; recalled)",
    ),
    Case(
        "Qwen2.5-72B-Instruct-GPTQ-Int4, A40-48Q vGPU (47.74 GiB), util 0.95, V0 0.6.4.post1, eager, len 8192",
        VLLM.format(11230),
        QWEN25_72B_GPTQ_INT4,
        47.74,
        0.95,
        80 * BLOCK,
        max_model_len=8192,
        engine="v0",
        enforce_eager=True,
        note="Issue 'Increased VRAM usage since v0.6.4.post1 (vs v0.6.3.post1)' (githebs, 2024-12-16), 'Test 2.1 : "
        "Version v0.6.4.post1' of the issue body; hardware 'GPU : NVIDIA A40-48Q / VRAM : 48GB / Driver 535.161.08' "
        "(a 48Q vGPU profile of an A40; the total vLLM prints, 47.74 GiB, is used). The start FAILS after sizing "
        "the cache: 80 blocks = 1,280 tokens (0.39 GiB at 320 KiB/token) is below the 8192 length, so vLLM raises; "
        "the sizing itself is complete and is the figure here. KV is tiny next to the 45.35 GiB budget (weights "
        "38.53 GB, non-torch 4.09 GiB), so relative errors on this case are large. The body's other tests (other "
        "models, v0.6.3.post1) could not be read in full.",
        part="sealed",
        vllm="0.6.4.post1",
        source="vllm-project/vllm#11230",
        log="vllm#11230 Test 2.1 Qwen2.5-72B-GPTQ-Int4 0.6.4.post1",
        quote=(
            "INFO 12-16 02:38:24 model_runner.py:1077] Loading model weights took 38.5260 GB",
            "INFO 12-16 02:38:40 worker.py:232] Memory profiling results: total_gpu_memory=47.74GiB "
            "initial_memory_usage=42.62GiB peak_torch_memory=40.87GiB memory_usage_post_profile=42.63GiB "
            "non_torch_memory=4.09GiB kv_cache_size=0.39GiB gpu_memory_utilization=0.95",
            "INFO 12-16 02:38:41 gpu_executor.py:113] # GPU blocks: 80, # CPU blocks: 819",
            "INFO 12-16 02:38:41 gpu_executor.py:117] Maximum concurrency for 8192 tokens per request: 0.16x",
            "ERROR 12-16 02:38:41 engine.py:366] The model's max seq len (8192) is larger than the maximum number of "
            "tokens that can be stored in KV cache (1280).",
        ),
        reported="blocks",
        gpu="NVIDIA A40-48Q (vGPU profile, 48 GB)",
        gpu_source="printed in the log (total_gpu_memory=47.74GiB)",
        version="v0.6.4.post1 ('Test 2.1 : Version v0.6.4.post1')",
        flags="model Qwen-Qwen2.5-72B-Instruct-GPTQ-Int4, max-model-len 8192, gpu-memory-utilization 0.95, "
        "enforce-eager true (the test's list)",
        model_source=HF.format("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4") + " (Qwen2.5-72B-Instruct shape from "
        "tests/data/models with intermediate_size 29696 as the Qwen 72B 4-bit repos pad it (the AWQ file's copy "
        "reads 29696); float16; GPTQ 4-bit g128; weights 38.53 GB agree with TP1 int4)",
    ),
]

LEFT_OUT_V0: dict[str, str] = {
    SEARCH.format("%22%23+GPU+blocks%3A+1730%2C+%23+CPU+blocks%3A+2048%22"): "Mistral-7B-Instruct-v0.2 on a Paperspace "
    "RTX A5000 via ghcr.io/mistralai/mistral-src/vllm:latest: the vLLM release inside that image is not stated, and "
    "the GPU total is not printed",
    SEARCH.format("%22%23+GPU+blocks%3A+7449%2C+%23+CPU+blocks%3A+512%22"): "Llama-2-7b-hf in an FPGA-vs-GPU profiling "
    "README (VHK158): GPU ('A100/V100') and vLLM version not stated",
    VLLM.format(11251): "Llama-3.1-8B on 2x V100 16GB, 0.6.4.post1 (# GPU blocks: 3852): started with --enable-lora "
    "(LoRA is out of scope)",
    VLLM.format(12664): "twin of vllm#12663 (same author, model and flags, DEBUG logging): the same start, used once",
    PR4454 + " (opt-125m, phi-2-super-marlin)": "same comment as the A6000 cases: facebook/opt-125m (OPT, learned "
    "positions) and mgoin/phi-2-super-marlin (a private re-quant whose config is not established) left out",
    SEARCH.format("%22%23+GPU+blocks%3A+1055%2C+%23+CPU+blocks%3A+512%22"): "CodeLlama-7b on a modified vLLM 0.6.1 "
    "fork (predictor scheduler), GPU not stated",
    SEARCH.format("%22%23+GPU+blocks%3A+54126%2C+%23+CPU+blocks%3A+16384%22"): "Phi-3.5-MoE TP8 on A100 with "
    "--load-format dummy in a scheduling-research fork; GPU total, version and util not stated",
    SEARCH.format(
        "%22%23+cuda+blocks%3A+3637%22"
    ): "unsloth/Llama-3.2-3B-Instruct on a Colab T4 (14.74 GiB), V0 0.8.2, "
    "util 0.8939: the notebook is huggingface/cookbook's fine_tune_chatbot_docs_synthetic (a source already used)",
    SEARCH.format("%22%23+CUDA+blocks%3A+2356%22"): "Llama-3.1-8B on a 22.07 GiB A10 (failed 131072 start): "
    "oracle-samples/oci-data-science-ai-samples, a source already used",
    VLLM.format(17144): "QwQ-32B V0 0.8.4 TP4 util 0.95 len 32000: the console's KV lines could not be read (only the "
    "engine config line is quoted in the copies found)",
    VLLM.format(7303): "Phi-3-mini-4k on a T4 with v0.5.3.post1: the start hangs after loading; no KV line read, T4 "
    "total not printed",
    VLLM.format(10451): "RTX A6000, 0.6.3 vs 0.6.4 gpu_memory_utilization semantics: no KV line could be read",
    VLLM.format(11550): "hmellor's example profile (23.55 GiB card, VllmWorkerProcess): model, version and the block "
    "line not established",
    VLLM.format(8185): "Tesla V100S-PCIE-32GB, blocks vs max_seq_length: the log part of the thread could not be read",
    VLLM.format(16777): "c4ai-command-a-03-2025 (Cohere2, interleaved sliding-window layers) TP2, v0.8.4: engine "
    "(V0/V1) and KV lines not read; architecture outside the planner's dense-attention assumption",
    SEARCH.format("%22%23+GPU+blocks%3A+157794%22"): "Meta-Llama-3-8B-Instruct fp8 KV on MI300X (AMD)",
    "https://github.com/leadawon/structrag/blob/b08137e8f79a9eb633a51ee7bda154497f453608/vllm.log": "Qwen2.5-32B-Instruct "
    "TP4, V0 0.6.3.post1, util 0.9, len 32768, '# GPU blocks: 2987': the four GPUs are not named or sized anywhere for "
    "this run (the repo's A100 notes describe a later, different setup)",
    "https://github.com/0324wy/MapCoder/blob/d47a5145e80c6ad45c345bead63402476251613c/vllm.log": "Llama-3.1-8B-Instruct "
    "pipeline-parallel 4, V0 0.6.3.post1 ('# GPU blocks: 70165'): GPU not stated; PP with uneven per-stage weights",
}


THIRD_DATE = "2026-12-02"
THIRD_BATCH: list[Case] = CASES_V1A + CASES_V1B + CASES_V0
LEFT_OUT_THIRD: dict[str, str] = {**LEFT_OUT_V1A, **LEFT_OUT_V1B, **LEFT_OUT_V0}
