"""The sealed part's fourth batch: starts of vLLM gathered on 2026-12-02, after the third batch's run and the planner
changes that followed it, from sources no other case uses; written here and committed before the planner ran on any of
them (the commit that adds this file changes nothing in src/). They set no constant of the planner.

Gathered in four groups (V1 0.12 and newer; V1 0.8-0.11 on one GPU; V0 on one GPU; tensor parallel up to 0.11), each
with its candidates left out, and why, in its LEFT_OUT_* table. The public code index had little left that earlier
batches had not used: 6 starts met every requirement (GPU and its total, util, release, model, vLLM's KV figure). One
more was left out when the groups were merged, before any run: a GPT-2 start whose config.json values could not be read
from a published copy (LEFT_OUT_V1MID says so).
"""

from __future__ import annotations

from planner_cases import (
    AWQ_4BIT,
    HF,
    QWEN3_06B,
    QWEN25_05B,
    QWEN25_15B_INSTRUCT,
    SEARCH,
    Case,
    shape,
)
from planner_cases_third import DS_R1_DISTILL_QWEN_15B

# === V1 0.12 and newer ===============================================================================================
# The sealed part's fourth batch, group V1NEW: starts of vLLM's V1 engine on releases 0.12.0 and newer (late 2025
# onwards), single GPU or tensor parallel, NVIDIA GPUs. Gathered blind (the planner was not run or read), from sources
# no other case uses; each candidate left out, with the reason, is in LEFT_OUT_V1NEW.
#
# Release line numbers used to date the quoted lines (as the logs of this batch and earlier batches show them):
# 0.12.0 gpu_worker.py:359 / kv_cache_utils.py:1286; 0.13.0 gpu_worker.py:375 / kv_cache_utils.py:1291; 0.14.0
# gpu_worker.py:358 / kv_cache_utils.py:1305; 0.15.1 gpu_worker.py:356 / kv_cache_utils.py:1307; 0.17.0 gpu_worker.py:424 /
# kv_cache_utils.py:1314; 0.18.0 gpu_worker.py:456 / kv_cache_utils.py:1316; 0.19.x gpu_worker.py:436 /
# kv_cache_utils.py:1319; 0.26.0 gpu_worker.py:560 / kv_cache_utils.py:2177.

# --- model shapes (published config.json values; the dtype a start ran with where the log shows a cast) -------------

QWEN25_15B_INSTRUCT_AWQ_BF16 = shape(  # Qwen/Qwen2.5-1.5B-Instruct-AWQ (Xinference's qwen2.5-instruct awq 1_5b Int4)
    QWEN25_15B_INSTRUCT,
    torch_dtype="bfloat16",  # as run: the log prints 'Downcasting torch.float32 to torch.bfloat16'
    quantization_config=AWQ_4BIT,
)
QWEN25_05B_FP16 = shape(QWEN25_05B, torch_dtype="float16")  # run with dtype="float16" ('Casting torch.bfloat16 to ...')

# --- GPU totals ----------------------------------------------------------------------------------------------------

RTX3090_TOTAL_V1NEW = (
    "RTX 3090 total as torch reports it, 23.56 GiB (25,296,044,032 bytes; the figure planner_cases_sealed's "
    "RTX3090_TOTAL and planner_cases_third's RTX3090_TOTAL_V1A use); not printed by this source, whose nvidia-smi shows "
    "'NVIDIA GeForce RTX 3090 ... 24576MiB' (before the start: '1MiB /  24576MiB', no processes)"
)

# --- sources -------------------------------------------------------------------------------------------------------

XINF_URL = SEARCH.format("%22GPU+KV+cache+size%3A+346%2C368+tokens%22")
XINF_SOURCE = "code: Xinference vLLM 0.13.0 debug log (RTX 3090 VM, qwen2_5-instruct-awq-1_5b-Int4, 346,368 tokens)"

RETRIVA_URL = SEARCH.format("%22GPU+KV+cache+size%3A+53%2C184+tokens%22")
RETRIVA_SOURCE = "code: Retriva 'Implementation #1: SDD + Antigravity' notes (llandre, RTX 3060 12GB, vLLM 0.19.0)"

KSTUDY_URL = SEARCH.format("%22GPU+KV+cache+size%3A+1%2C043%2C072+tokens%22")
KSTUDY_SOURCE = (
    "code: Korean LLM-serving study notes, week 1 (streaming.py, Qwen2.5-0.5B, vLLM 0.26.0, 1,043,072 tokens)"
)

CASES_V1NEW: list[Case] = [
    Case(
        "Qwen2.5-1.5B-Instruct-AWQ, RTX 3090 (23.56 GiB), util 0.50, V1 0.13.0, len 2048",
        XINF_URL,
        QWEN25_15B_INSTRUCT_AWQ_BF16,
        23.56,
        0.50,
        346368,
        max_model_len=2048,
        note="A committed Chinese debug record ('Xinference vLLM 模型启动失败 —— 完整调试全程记录', debugging 2026-03-22, "
        "'Ubuntu VM / RTX 3090 24GB / Docker / Xinference 2.3.0 + vLLM 0.13.0'; archived with 'Xinference permanently "
        "abandoned'). Section 9.3: after Xinference's own launches failed (CUDA init in the spawned EngineCore), the "
        "author ran vLLM's OpenAI server directly inside the ai_xinference container with "
        "VLLM_ENABLE_V1_MULTIPROCESSING=0 on the model Xinference had cached for 'qwen2.5-instruct' awq 1.5B Int4 "
        "(Qwen/Qwen2.5-1.5B-Instruct-AWQ), gpu_memory_utilization 0.5, max_model_len 2048, trust_remote_code; no other "
        "argument (max_num_seqs, max_num_batched_tokens: release defaults; prefix caching on; CUDA graphs on: 'Capturing "
        "CUDA graphs (mixed prefill-decode): 100% | 51/51', '(decode, FULL): 100% | 35/35'). The log is abridged by the "
        "author (no timestamps or file:line, and the graph-capture lines are listed before the KV lines). The model ran "
        "in bfloat16 ('Downcasting torch.float32 to torch.bfloat16'); the earlier 14B attempt of the same record shows "
        "'quantization=awq_marlin' for this AWQ path. nvidia-smi after the start: 'VLLM::EngineCore 12884MiB', "
        "12894MiB / 24576MiB used, the card otherwise empty (1MiB before). 0.13.0 does not subtract CUDA-graph memory "
        "from the KV budget. 346,368 x 28 KiB = 9.25 GiB (28 layers, 2 KV heads x 128, bf16). Doubt: the 3090's total "
        "is the usual torch figure, not printed by this record; the card is passed through to a VM "
        "(Bus-Id 00000000:06:10.0).",
        part="sealed",
        vllm="0.13.0",
        source=XINF_SOURCE,
        log="Xinference container direct api_server qwen2.5-1.5b-awq util 0.5 len 2048 0.13.0",
        quote=(
            "(APIServer pid=211) INFO vLLM API server version 0.13.0",
            "(EngineCore_DP0 pid=258) INFO Model loading took 1.1018 GiB memory",
            "(EngineCore_DP0 pid=258) INFO Available KV cache memory: 9.25 GiB",
            "(EngineCore_DP0 pid=258) INFO GPU KV cache size: 346,368 tokens",
            "(EngineCore_DP0 pid=258) INFO Maximum concurrency for 2,048 tokens per request: 169.12x",
        ),
        reported="tokens",
        gpu="NVIDIA GeForce RTX 3090 24GB (in an Ubuntu VM, one card)",
        gpu_source=RTX3090_TOTAL_V1NEW,
        version="0.13.0 ('vLLM API server version 0.13.0'; 'pip show vllm' in the container: 'Version: 0.13.0')",
        flags="docker exec ai_xinference bash -c 'export VLLM_ENABLE_V1_MULTIPROCESSING=0; python3 -m "
        "vllm.entrypoints.openai.api_server --model /workspace/xinference/cache/v2/qwen2_5-instruct-awq-1_5b-Int4 "
        "--gpu-memory-utilization 0.5 --port 8199 --max-model-len 2048 --trust-remote-code'",
        model_source=HF.format("Qwen/Qwen2.5-1.5B-Instruct-AWQ") + " (the Qwen2.5-1.5B-Instruct shape: 28 layers, "
        "hidden 1536, 12 heads, 2 KV heads, intermediate 8960, vocab 151936, tied embeddings; AWQ 4-bit group 128 "
        "GEMM as the official AWQ builds; torch_dtype set to the bfloat16 the log shows it ran in; the log: 'Resolved "
        "architecture: Qwen2ForCausalLM')",
    ),
    Case(
        "Qwen3-0.6B, RTX 3060 12GB (11.63 GiB), util 0.60, V1 0.19.0, len 4096, max_num_seqs 8, batched 1024, eager",
        RETRIVA_URL,
        QWEN3_06B,
        11.63,
        0.60,
        53184,
        max_model_len=4096,
        batched_tokens=1024,
        max_num_seqs=8,
        enforce_eager=True,
        note="A committed project write-up ('Implementation #1: SDD + Antigravity', section 'Starting vLLM locally', "
        "2026-04-03/04): the author's host 'is equipped with an NVIDIA GeForce RTX 3060 12GB' and runs the desktop; vLLM "
        "in the official container vllm/vllm-openai:latest (banner 'version 0.19.0'). Three starts of Qwen/Qwen3-0.6B "
        "are logged in full: (1) defaults -> 'Free memory on device cuda:0 (9.02/11.63 GiB) on startup is less than "
        "desired GPU memory utilization (0.9, 10.47 GiB)' (failed; it gives the card total used here); (2) util 0.75, "
        "len 8192, eager -> KV sized (8.03 GiB, 75,152 tokens) then failed in the sampler warm-up (LEFT_OUT); (3) this "
        "one, with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, util 0.60, len 4096, max_num_seqs 8, "
        "max_num_batched_tokens 1024, --enforce-eager ('Cudagraph is disabled under eager mode'); it served requests. "
        "bf16, prefix caching on, FLASH_ATTN (FA2). 'Model loading took 1.12 GiB'. 53,184 x 112 KiB = 5.68 GiB (28 "
        "layers, 8 KV heads x 128). 0.6 x 11.63 = 6.98 GiB, so 1.30 GiB of non-KV use. Doubt: about 2.6 GiB of the card "
        "was held by other processes (the desktop) at the first start; vLLM's budget is util x total, so it enters only "
        "through memory those processes free or take during profiling (the util 0.75 start shows such a disturbance).",
        part="sealed",
        vllm="0.19.0",
        source=RETRIVA_SOURCE,
        log="retriva RTX 3060 Qwen3-0.6B util 0.6 len 4096 seqs 8 mbt 1024 eager 0.19.0",
        quote=(
            "(EngineCore pid=229) ERROR 04-03 15:05:56 [core.py:1108] ValueError: Free memory on device cuda:0 "
            "(9.02/11.63 GiB) on startup is less than desired GPU memory utilization (0.9, 10.47 GiB). Decrease GPU "
            "memory utilization or reduce GPU memory used by other processes.",
            "(APIServer pid=1) INFO 04-03 17:49:21 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3-0.6B', "
            "'max_model_len': 4096, 'enforce_eager': True, 'gpu_memory_utilization': 0.6, 'max_num_batched_tokens': "
            "1024, 'max_num_seqs': 8}",
            "(EngineCore pid=188) INFO 04-03 17:49:38 [gpu_model_runner.py:4820] Model loading took 1.12 GiB memory "
            "and 3.162604 seconds",
            "(EngineCore pid=188) INFO 04-03 17:49:45 [gpu_worker.py:436] Available KV cache memory: 5.68 GiB",
            "(EngineCore pid=188) INFO 04-03 17:49:45 [kv_cache_utils.py:1319] GPU KV cache size: 53,184 tokens",
            "(EngineCore pid=188) INFO 04-03 17:49:45 [kv_cache_utils.py:1324] Maximum concurrency for 4,096 tokens "
            "per request: 12.98x",
        ),
        reported="tokens",
        gpu="NVIDIA GeForce RTX 3060 12GB ('my host, which is equipped with an NVIDIA GeForce RTX 3060 12GB')",
        gpu_source="printed by vLLM on the same host in the same document, at the first (failed) start: 'Free memory "
        "on device cuda:0 (9.02/11.63 GiB) on startup'",
        version="0.19.0 (vllm/vllm-openai:latest; banner 'version 0.19.0', 'Initializing a V1 LLM engine (v0.19.0)')",
        flags="docker run -d --name vllm-qwen --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface -e HF_TOKEN "
        "-e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -p 8000:8000 --ipc=host vllm/vllm-openai:latest "
        "Qwen/Qwen3-0.6B --gpu-memory-utilization 0.60 --max-model-len 4096 --max-num-seqs 8 "
        "--max-num-batched-tokens 1024 --enforce-eager",
        model_source=HF.format("Qwen/Qwen3-0.6B") + " (planner_cases' QWEN3_06B: 28 layers, hidden 1024, 16 heads, "
        "8 KV heads, head_dim 128, intermediate 3072, vocab 151936, tied, 40960 positions)",
    ),
    Case(
        "Qwen2.5-0.5B fp16, 15.55 GiB card, util 0.90, V1 0.26.0, len 32768, batched 32768",
        KSTUDY_URL,
        QWEN25_05B_FP16,
        15.55,
        0.90,
        1043072,
        max_model_len=32768,
        batched_tokens=32768,
        estimate_cudagraphs=True,
        note="A committed Korean study note (week 1 of an LLM-serving study group, 2026-08-02) working through the "
        "ch02 examples of the book code orca3/llm-model-inference; the notebooks ran on Colab T4s, but this start is the "
        "author's own run of ch02/streaming.py on a separate Linux host ('source venv/bin/activate && python "
        "streaming.py', venv under /root/llm-model-inference/ch02, 'Available RAM: 57.97 GiB', FlashAttention 2, "
        "FlashInfer sampler), printed in full. AsyncEngineArgs as the note quotes them: model Qwen/Qwen2.5-0.5B, "
        "dtype float16 ('Casting torch.bfloat16 to torch.float16'), TP 1, gpu_memory_utilization 0.9, "
        "max_num_batched_tokens 32768 ('Chunked prefill is enabled with max_num_batched_tokens=32768'), max_num_seqs 256 "
        "(the default), max_model_len not set -> 32768. V1 engine 0.26.0 with the V2 model runner ('Using V2 Model "
        "Runner'); prefix caching on; CUDA graphs on (PIECEWISE 51, FULL 35; 0.40 GiB); CUDA-graph memory estimate on "
        "(default since v0.21.0; the Free-memory line counts 0.4 GiB of CUDAGraph memory). A warm compile cache "
        "('Directly load the compiled graph(s) for compile range (1, 32768) from the cache'). 1,043,072 x 12 KiB = "
        "11.94 GiB (24 layers, 2 KV heads x 64). Doubt: the card is not named (15.55 GiB total as vLLM prints it; FA2, "
        "so Ampere or newer); the code comes from a repository another batch already uses (orca3/llm-model-inference), "
        "but this start is the note author's own, on another host.",
        part="sealed",
        vllm="0.26.0",
        source=KSTUDY_SOURCE,
        log="Korean study week1 streaming.py Qwen2.5-0.5B fp16 util 0.9 mbt 32768 0.26.0",
        quote=(
            "WARNING 08-02 07:03:38 [model.py:2123] Casting torch.bfloat16 to torch.float16.",
            "INFO 08-02 07:03:38 [scheduler.py:252] Chunked prefill is enabled with max_num_batched_tokens=32768.",
            "(EngineCore pid=6113) INFO 08-02 07:03:45 [model_runner.py:305] Model loading took 0.93 GiB and "
            "2.174401 seconds",
            "(EngineCore pid=6113) INFO 08-02 07:03:47 [gpu_worker.py:560] Available KV cache memory: 11.94 GiB",
            "(EngineCore pid=6113) INFO 08-02 07:03:47 [kv_cache_utils.py:2177] GPU KV cache size: 1,043,072 tokens",
            "(EngineCore pid=6113) INFO 08-02 07:03:47 [kv_cache_utils.py:2178] Maximum concurrency for 32,768 tokens "
            "per request: 31.83x",
            "(EngineCore pid=6113) INFO 08-02 07:03:49 [gpu_worker.py:857] Free memory on device (15.32/15.55 GiB) on "
            "startup. Desired GPU memory utilization is (0.9, 13.99 GiB). Actual usage is 0.93 GiB for weight, 1.06 GiB "
            "for peak activation, 0.07 GiB for non-torch memory, and 0.4 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=12227975783` (11.39 GiB) to fit into requested "
            "memory, or `--kv-cache-memory=13651129344` (12.71 GiB) to fully utilize gpu memory. Current kv cache "
            "memory in use is 11.94 GiB.",
        ),
        reported="tokens",
        gpu="an unnamed 15.55 GiB NVIDIA card (FlashAttention 2 selected)",
        gpu_source="printed by vLLM in the same log: 'Free memory on device (15.32/15.55 GiB) on startup'",
        version="0.26.0 ('Initializing a V1 LLM engine (v0.26.0)')",
        flags="python streaming.py: AsyncLLMEngine.from_engine_args(AsyncEngineArgs(model='Qwen/Qwen2.5-0.5B', "
        "dtype='float16', tensor_parallel_size=1, gpu_memory_utilization=0.9, max_num_batched_tokens=32768, "
        "max_num_seqs=256, disable_log_requests=True, disable_log_stats=True))",
        model_source=HF.format("Qwen/Qwen2.5-0.5B") + " (planner_cases' QWEN25_05B: 24 layers, hidden 896, 14 heads, "
        "2 KV heads, intermediate 4864, vocab 151936, tied, 32768 positions; the note prints the same config); "
        "float16 as run",
    ),
]

LEFT_OUT_V1NEW: dict[str, str] = {
    SEARCH.format("%22GPU+KV+cache+size%3A+75%2C152+tokens%22"): "the Retriva notes' second start (Qwen3-0.6B, RTX "
    "3060 11.63 GiB, 0.19.0, util 0.75, len 8192, eager): KV sized at 8.03 GiB / 75,152 tokens, more than 0.75 x 11.63 "
    "- 1.12 GiB of weights allows (other processes freed memory during profiling), and the start then failed in the "
    "sampler warm-up; the util 0.60 start of the same source is the case",
    SEARCH.format("%22GPU+KV+cache+size%3A+71%2C152+tokens%22"): "Qwen3-8B-AWQ TP2 (0.17.0, util 0.2, len 32768, "
    "--performance-mode throughput): the GPUs (compute capability 8.9, no P2P) are never named and no total is "
    "printed; at util 0.2 the total matters most",
    SEARCH.format("%22GPU+KV+cache+size%3A+321%2C088+tokens%22"): "Qwen3-0.6B W4A16 (auto-round, quantized locally) "
    "under lm_eval, 0.19.1, util 0.9, len 8192: the GPU is not established (the request file says RTX 4090, but 34.3 "
    "GiB of KV at util 0.9 cannot fit a 24 GiB card)",
    SEARCH.format("%22GPU+KV+cache+size%3A+12%2C624+tokens%22"): "Qwen2.5-7B-Instruct-AWQ on a native Windows vLLM "
    "0.19.0 build (gloo backend), util 0.7, len 4096, max 8 seqs: GPU not named, total not printed; Windows build",
    SEARCH.format("%22GPU+KV+cache+size%3A+109%2C264+tokens%22"): "Qwen2.5-3B-Instruct with bitsandbytes, 0.18.0, "
    "eager, util 0.8, in Kubernetes under WSL ('WSL is detected'): WSL excluded; GPU not named",
    SEARCH.format("%22GPU+KV+cache+size%3A+622%2C464+tokens%22"): "Mistral-7B-Instruct-v0.2 with LoRA on a RunPod "
    "serverless worker fork (v0.14.0 image), util 0.95: LoRA; the GPU (RTX 6000 Blackwell) only inferred by the "
    "author, total not printed; the start crashed in graph capture",
    SEARCH.format("%22GPU+KV+cache+size%3A+175%2C856+tokens%22"): "vllm-project/vllm#33263 (Qwen3-1.7B, max_num_seqs "
    "1, len 1024, 0.14-era lines): the card is only '24 GB GPU', model and total not stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+126%2C832+tokens%22"): "Llama-3.1-70B-Instruct-AWQ-INT4 on an RTX PRO "
    "6000 Blackwell, vLLM 0.14.0rc2.dev348 (a dev build) in a model-switching harness: gpu_memory_utilization not "
    "stated; system freezes after the start",
    SEARCH.format("%22GPU+KV+cache+size%3A+88%2C384+tokens%22"): "Qwen3-14B on an AMD Radeon gfx1100 (ROCm 7.2, "
    "vLLM 0.16.1.dev0): AMD",
    SEARCH.format("%22GPU+KV+cache+size%3A+808%2C192+tokens%22"): "Qwen2.5-0.5B-Instruct on an AMD RX 7900 GRE "
    "(ROCm container, HIP_VISIBLE_DEVICES): AMD",
    SEARCH.format("%22GPU+KV+cache+size%3A+775%2C280+tokens%22"): "Qwen2.5-14B-Instruct on an AMD MI300X (vLLM "
    "0.17.1 + ROCm 7.0): AMD",
    SEARCH.format("%22GPU+KV+cache+size%3A+9%2C026%2C017+tokens%22"): "MI300X (191.69 GiB) start: AMD",
    SEARCH.format("%22GPU+KV+cache+size%3A+3%2C522%2C400+tokens%22"): "granite-4.0-h-350m on AMD Strix Halo (ROCm "
    "0.15.0rc3): hybrid mamba model, AMD unified memory",
    SEARCH.format("%22GPU+KV+cache+size%3A+124%2C704+tokens%22"): "gemma-4-31B-it with online fp8 on Cloud Run RTX "
    "PRO 6000 (vLLM 0.17.2rc1.dev133, a dev build): multimodal sliding-window model; util only as $GPU_MEM_UTIL",
    SEARCH.format("%22GPU+KV+cache+size%3A+2%2C324%2C244+tokens%22"): "a hybrid (mamba) model with fp8 KV on a 16.0 "
    "GiB sm90 slice, 0.26-era: hybrid",
    SEARCH.format("%22GPU+KV+cache+size%3A+183%2C744+tokens%22"): "NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4 TP2 on RTX "
    "5080 + 5070 Ti under WSL (NGC 26.01): hybrid, WSL, mixed cards",
    SEARCH.format("%22GPU+KV+cache+size%3A+20%2C992+tokens%22"): "Qwen2.5-1.5B-class start on a DGX Spark (GB10): "
    "unified memory",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C890%2C240+tokens%22"): "TP2 start on GB10 boxes (119.61 GiB): unified "
    "memory",
    SEARCH.format("%22GPU+KV+cache+size%3A+820%2C013+tokens%22"): "119.63 GiB device (GB10) start: unified memory",
    "code: gpt-oss-20b memory breakdown 'Free memory on device (21.83/22.71 GiB)' (vLLM 0.29.0, util 0.80, 128k, "
    "131,815 tokens)": "gpt-oss (mxfp4, alternating sliding-window groups), excluded like the earlier gpt-oss notes",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C629%2C520+tokens%22"): "orca3/llm-model-inference WSL 4090 (23.99 "
    "GiB) runs: WSL, and the repository is already used",
    "code: 'Available KV cache memory: 11.06 GiB' (Gemma 4 12B on a Modal A10, 22.06 GiB, util 0.8, sleep mode)": "multimodal model with sleep-mode cumem allocator ('-3.58 GiB for non-torch memory'); no token line",
    "code: journal 'Model loading took 1.12 GiB memory and 2.748736 seconds' (Qwen3-0.6B, 12288MiB card, util 0.90)": "Russian note: only 'Available KV cache memory: 8.93 GiB', no token line, vLLM version and card model not stated",
    "code: '[gpu_worker.py:424] Available KV cache memory: 2.43 GiB' (qwen3.5-9b, 0.17.0)": "Qwen3.5 hybrid (GDN) "
    "multimodal model",
    SEARCH.format("%22GPU+KV+cache+size%3A+72%2C400+tokens%22"): "RedHatAI/gemma-4-26B-A4B-it-NVFP4 (0.19.x, util "
    "0.8, len 98304): multimodal sliding-window model",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C640%2C160+tokens%22"): "kaitchup/Qwen3.5-2B-autoround-W4A16 under "
    "lm_eval (0.19.x): Qwen3.5 hybrid (GDN) model; GPU not named",
    "code: DeepSeek-R1-Distill-Qwen-32B-FP8 TP2 (vLLM 0.13.0 notes, CUDA_VISIBLE_DEVICES=6,7)": "the notes quote the "
    "command and the engine config line only; no KV line, GPU not named",
}


# === V1 0.8-0.11, one GPU ============================================================================================
# Fourth sealed batch, group V1MID: single-GPU starts of vLLM's V1 engine on releases 0.8.0 to 0.11.x, gathered on
# 2026-12-02 from sources no existing case uses (checked against every source the earlier batches and their LEFT_OUT tables name). Blind: the planner was
# neither run nor read. Candidates left out, with the reason, are in LEFT_OUT_V1MID.

# --- model shapes (published config.json values) -------------------------------------------------------------------

# --- GPU totals ----------------------------------------------------------------------------------------------------

COLAB_A100_TOTAL = (
    "Google Colab A100 (the post: '在 Google Colab 上运行 vLLM，并使用了 A100 GPU'); Colab's A100 is the 40GB card. "
    "Total not printed by this source (0.9.0.1 does not print it); 39.56 GiB as vLLM printed it for a Colab A100 40GB "
    "in planner_cases (Phi-4-mini case: 'total_gpu_memory (39.56GiB)'); A100 40GB totals of 39.39-39.59 GiB are seen "
    "elsewhere, so +-0.1 GiB"
)

# --- sources -------------------------------------------------------------------------------------------------------

AIINFRA_URL = SEARCH.format("%22GPU+KV+cache+size%3A+603%2C488+tokens%22")
AIINFRA_SOURCE = "code: ZOMI AIInfra 'CODE 01: KV Cache 缓存优化' notebook (GPT-2 Chinese, RTX 4090, vLLM 0.11.0)"

RUNAI_URL = SEARCH.format("%22GPU+KV+cache+size%3A+1%2C131%2C008+tokens%22")
RUNAI_SOURCE = "code: '使用 Run:ai Model Streamer 实现模型的高效加载' (Se7en) blog post, Colab A100, vLLM 0.9.0.1"

CASES_V1MID: list[Case] = [
    Case(
        "DeepSeek-R1-Distill-Qwen-1.5B, Colab A100 40GB (39.56 GiB), util 0.90, V1 0.9.0.1, len 131072",
        RUNAI_URL,
        DS_R1_DISTILL_QWEN_15B,
        39.56,
        0.90,
        1131008,
        max_model_len=131072,
        note="A committed Chinese blog post '使用 Run:ai Model Streamer 实现模型的高效加载' (author Se7en, 2025-05-20) with "
        "full 'vllm serve' logs, run 'on Google Colab ... 使用了 A100 GPU' after 'pip install vllm[runai]'. The first "
        "start (the case): 'vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B' with no other argument "
        "(gpu_memory_utilization default 0.9, max_model_len None -> 131072 ('max_seq_len=131072'), "
        "max_num_batched_tokens 2048 ('Chunked prefill is enabled with max_num_batched_tokens=2048'), max_num_seqs "
        "default, block_size 16, bf16). 'Model loading took 3.3466 GiB'. Prefix caching on, CUDA graphs on (0.45 GiB, "
        "captured after the KV sizing; 0.9.0.1 does not subtract it), FlashInfer not installed. Two later starts in "
        "the same post with --load-format runai_streamer (local file, and from S3) print the same 1,131,008 tokens "
        "('num_gpu_blocks is: 70688'); they are the same configuration and are not separate cases. 1,131,008 x 28 "
        "KiB = 30.20 GiB. Doubts: (1) the A100's total is not printed (Colab's A100 is the 40GB card); (2) the "
        "post's author also wrote 'vLLM 快速部署指南', a source the third batch used; this is a different post (a "
        "different machine: Colab, not the A10 VM), but if the author's blog repository counts as one source, drop "
        "this case.",
        part="sealed",
        vllm="0.9.0.1",
        source=RUNAI_SOURCE,
        log="Se7en Run:ai post DeepSeek-R1-Distill-Qwen-1.5B Colab A100 default serve 0.9.0.1",
        quote=(
            "INFO 06-05 09:07:48 [gpu_model_runner.py:1549] Model loading took 3.3466 GiB and 1.677846 seconds",
            "INFO 06-05 09:08:05 [kv_cache_utils.py:637] GPU KV cache size: 1,131,008 tokens",
            "INFO 06-05 09:08:05 [kv_cache_utils.py:640] Maximum concurrency for 131,072 tokens per request: 8.63x",
            "INFO 06-05 09:08:37 [loggers.py:134] vllm cache_config_info with initialization after num_gpu_blocks is: "
            "70688",
            "INFO 06-05 09:09:15 [api_server.py:1289] vLLM API server version 0.9.0.1",
        ),
        reported="tokens",
        gpu="NVIDIA A100 on Google Colab ('在 Google Colab 上运行 vLLM，并使用了 A100 GPU')",
        gpu_source=COLAB_A100_TOTAL,
        version="0.9.0.1 ('vLLM API server version 0.9.0.1', 'Initializing a V1 LLM engine (v0.9.0.1)' in the "
        "post's later starts of the same install)",
        flags="vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
        model_source=HF.format("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B") + " (planner_cases_third's "
        "DS_R1_DISTILL_QWEN_15B: 28 layers, hidden 1536, 12 heads, 2 KV heads, intermediate 8960, vocab 151936, "
        "131072 positions, untied, bf16; the log: dtype=torch.bfloat16, max_seq_len=131072)",
    ),
]

LEFT_OUT_V1MID: dict[str, str] = {
    AIINFRA_URL: "GPT-2 Chinese (uer/gpt2-chinese-cluecorpussmall) on an RTX 4090, V1 0.11.0, 603,488 tokens "
    "(AIINFRA_SOURCE): written as a case, then left out when the groups were merged, before any run: its config.json "
    "values (12 layers, 768 hidden, 12 heads, vocab 21128) could not be read from a published copy; they agree with "
    "the log's 36 KiB per token and 0.1968 GiB of fp16 weights, but were not taken from the model's file",
    SEARCH.format("%22GPU+KV+cache+size%3A+2%2C427%2C344+tokens%22"): "Qwen2.5-Math-1.5B-Instruct fine-tune, V1 "
    "0.9.0.1 offline, len 4096 (a Russian SFT notebook): the GPU is not named (only 'Number of CUDA devices: 8') and "
    "the same process had just trained the model on the card",
    SEARCH.format("%22GPU+KV+cache+size%3A+32%2C960+tokens%22"): "Qwen3-Reranker-0.6B on an RTX 3090 (util 0.258?, "
    "len 8192): the lines are quoted in a code comment that lists several utils, without saying which start printed "
    "them, and the version is only implied by the line numbers (0.10.1's gpu_worker.py:276 / kv_cache_utils.py:849)",
    SEARCH.format("%22GPU+KV+cache+size%3A+840%2C160+tokens%22"): "Mistral-7B-Instruct-v0.2-GPTQ on a DGX Spark "
    "(GB10, unified memory) in NGC vllm 25.11 (0.11.0+nv25.11): outside (unified-memory host); also not a discrete "
    "GPU total",
    SEARCH.format("%22GPU+KV+cache+size%3A+613%2C024+tokens%22"): "vllm-project/vllm#20264 (0.8.3, len 131072, "
    "3.4213 GiB weights): model and GPU not stated in the text the index returns",
    SEARCH.format("%22GPU+KV+cache+size%3A+16%2C064+tokens%22"): "vllm-project/vllm#16301 (0.8.3, 61.04 GiB weights, "
    "len 10000): model, GPU and util not stated in the excerpt",
    SEARCH.format("%22GPU+KV+cache+size%3A+45%2C968+tokens%22"): "opt-125m-sized model (0.2389 GiB), 0.9.x lines, len "
    "512, in a Korean post that runs a patched vLLM ('패치 A'): not stock vLLM; GPU not established",
    SEARCH.format("%22GPU+KV+cache+size%3A+128%2C000+tokens%22"): "Qwen3-32B TP2 on Ascend 910B (vllm-ascend "
    "0.10.2rc1): NPU, TP2",
    "https://github.com/vllm-project/vllm/issues/21028": "Qwen3-0.6B on an RTX 5090, 0.9.2: the issue is a start "
    "error; no KV line in the text the index returns",
    SEARCH.format("%22GPU+KV+cache+size%3A+75%2C824+tokens%22"): "Qwen3-14B on L40S (Korean capstone post): vLLM "
    "0.28.0, outside this group's releases (0.12+ group)",
    SEARCH.format("%22GPU+KV+cache+size%3A+149%2C712+tokens%22"): "Qwen2.5-7B-Instruct-AWQ on an RTX 4080 (WSL2): "
    "vLLM 0.26.0, outside this group's releases",
    SEARCH.format("%22GPU+KV+cache+size%3A+100%2C752+tokens%22"): "Qwen3-VL-30B-A3B-Instruct TP2, 0.11.0: "
    "multimodal and TP2",
    SEARCH.format("%22GPU+KV+cache+size%3A+324%2C496+tokens%22"): "vllm-project/vllm#25970 (Qwen2.5-Omni-7B): already "
    "used / multimodal",
    "https://github.com/LMCache/LMCache/issues/1739": "Qwen3-14B on one A100 40GB, vLLM 0.10.2 + LMCache 0.3.6 "
    "('GPU KV cache size: 42,656 tokens', len 32768): the command (gpu_memory_utilization) is not in the text the index "
    "returns, and the LMCache KV connector is on (outside, as vllm#21348)",
    "https://github.com/vllm-project/vllm/issues/19996": "Llama-3.1-8B on an H100 80GB, 0.9.2-line build ('GPU KV cache "
    "size: 410,128 tokens', 51.63 GiB = 132 KiB/token, i.e. 33 layers): an EAGLE speculative-decoding start, command "
    "and util not shown",
    SEARCH.format("%22GPU+KV+cache+size%3A+78%2C800+tokens%22"): "unsloth-merged Llama on an AMD gfx1201 (ROCm vLLM "
    "v0.9.2rc2.dev1802 build): ROCm, outside",
    "https://github.com/LMCache/LMCache/pull/1769": "LMCache FAQ table (Qwen3-8B 366,400 tokens / 50.32 GB spare): no "
    "vLLM version, util or vLLM lines quoted",
    "https://jishuzhan.net/article/1989610883765567490": "Qwen3-0.6B-FP8 at util 0.2/0.3 (0.11.0 line numbers, "
    "'GPU KV cache size: 118,576 tokens'): GPU only in a screenshot, version not stated in text (mirror: "
    "http://www.dtcms.com/a/609393.html)",
    "Robert McDermott, 'Performance vs Practicality: A Comparison of vLLM and Ollama' (2025-05-27)": "Qwen3-14B on an "
    "A6000 48GB, vLLM 0.8.5.post1: the KV lines are elided ('...') in the quoted log",
    SEARCH.format("%22GPU+KV+cache+size%3A+122%2C880+tokens%22"): "0.10.1 with VLLM_CPU_KVCACHE_SPACE=15: CPU backend",
    "https://github.com/vllm-project/vllm/issues/22517": "SmolLM3-3B, 0.10.0, util 0.4, len 4092 on an unnamed GPU: "
    "the start fails; no KV line in the text the index returns",
    SEARCH.format("%22GPU+KV+cache+size%3A+4%2C836%2C272+tokens%22"): "TinyLlama-1.1B-Chat, vLLM 0.10.2+cu130 in a "
    "jetson-containers image on a Jetson Thor (rteixeira notes): unified memory, outside",
    "https://github.com/vllm-project/vllm-ascend/issues/2973": "Qwen3-30B-A3B TP4 on Ascend NPUs (0.10.2): NPU, TP",
    "https://github.com/vllm-project/vllm-ascend/issues/1120": "Qwen2.5-7B-Instruct, 0.9.0 main, load_format dummy "
    "on an Ascend NPU: NPU, and the start fails",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C131%2C008+tokens%22")
    + " (runai_streamer starts)": "the same post's two "
    "--load-format runai_streamer starts (local file, S3) print the same 1,131,008 tokens with the same settings: not "
    "separate cases",
}


# === V0, one GPU =====================================================================================================
# The sealed part's fourth batch, V0 group: single-GPU starts of vLLM's V0 engine (releases 0.4 to 0.10 running V0:
# '# GPU blocks: N, # CPU blocks: M' from gpu_executor.py / executor_base.py, 'Memory profiling results' / 'Memory
# profiling takes' from worker.py), gathered on 2026-12-02 from sources no other case uses, before the planner ran on
# any of them. Tensor-parallel V0 starts belong to the tp group.
#
# The code index's V0 logs turned out to be almost all used by the earlier batches (every '# GPU blocks' /
# '# cuda blocks' / 'Memory profiling results' / 'worker.py:2xx] the current vLLM instance' / 'Maximum concurrency for
# N tokens per request' hit that was read is one the earlier batches name or is CPU/XPU/NPU/ROCm), so this group is one
# case from an issue thread plus a long LEFT_OUT_V0 table of the candidates read and why each was left out.

BLOCK = 16
VLLM = "https://github.com/vllm-project/vllm/issues/{}"

# --- model shapes (published config.json values) -------------------------------------------------------------------

QWEN_7B_CHAT = {  # Qwen/Qwen-7B-Chat (first-generation Qwen, QWenLMHeadModel, remote code; MHA, no GQA key)
    "architectures": ["QWenLMHeadModel"],
    "model_type": "qwen",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "kv_channels": 128,  # head_dim (= hidden_size / num_attention_heads)
    "intermediate_size": 22016,  # QWen's MLP uses intermediate_size // 2 = 11008 per projection (w1, w2, c_proj)
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

# --- sources -------------------------------------------------------------------------------------------------------

A100_80_TOTAL = (
    "A100-80GB total as torch reports it (79.15 GiB), the figure planner_cases uses for vllm#2031's A100-80GB; not "
    "printed by this source (V0 0.5.3 prints only the block counts); the issue's collect_env lists 'GPU 0: NVIDIA "
    "A100-SXM4-80GB' (x4, the start is TP1)"
)

CASES_V0: list[Case] = [
    Case(
        "Qwen-7B-Chat, A100-SXM4-80GB (79.15 GiB), util 1.00, V0 0.5.3.post1, eager, len 32768",
        VLLM.format(7256),
        QWEN_7B_CHAT,
        79.15,
        1.00,
        7877 * BLOCK,
        max_model_len=32768,
        engine="v0",
        enforce_eager=True,
        note="Issue '[Bug]: profile_run Inaccurate estimation leads to gpu OutOfMemoryError' (izhuhaoran, "
        "2024-08-07). The description's script builds LLM(model=model, trust_remote_code=True, enforce_eager=True, "
        "disable_log_stats=False, max_num_seqs=n, tensor_parallel_size=tp_size, disable_custom_all_reduce=True, "
        "gpu_memory_utilization=1.0) and its log shows the engine config (v0.5.3.post1, './models/Qwen-7B-Chat', "
        "bf16, max_seq_len=32768, tensor_parallel_size=1, enforce_eager=True, no prefix caching, no chunked "
        "prefill) and '# GPU blocks: 7877, # CPU blocks: 512'; generation then OOMs (the issue's subject). "
        "7877 x 16 = 126,032 tokens x 512 KiB (32 layers x 32 KV heads x 128 x 2 x 2 B) = 61.54 GiB; CPU blocks "
        "512 = 4 GiB swap / 8 MiB per block agree with the MHA shape. Weights 14737.2578 MB (14.39 GiB) as printed. "
        "The same description then re-runs with the author's own patch to worker.py (init_gpu_memory x util instead "
        "of total x util) and gets 7823 blocks: that run is modified code and is not used. Doubts: (1) max_num_seqs "
        "is the script's n, whose value is not in the parts of the thread that could be read (prompts[:n] of 512 "
        "prompts), so it is left unset here; it only changes the profile's sampler/logits tensors; (2) the GPU total "
        "is not printed (A100-80GB convention, see gpu_source); (3) the traceback's paths read "
        "/mnt/data/zhuhr/vllm_upstream/..., a source checkout whose printed version is v0.5.3.post1; (4) the model "
        "is first-generation Qwen (remote code), whose published config has no num_key_value_heads key (MHA). The "
        "comment's #issuecomment anchor was not available from the copies read; the issue URL is given.",
        part="sealed",
        vllm="0.5.3.post1",
        source="vllm-project/vllm#7256",
        log="vllm#7256 Qwen-7B-Chat A100-80GB util 1.0 eager 0.5.3.post1 (stock run)",
        quote=(
            "INFO 08-07 07:11:24 llm_engine.py:178] Initializing an LLM engine (v0.5.3.post1) with config: "
            "model='./models/Qwen-7B-Chat', speculative_config=None, tokenizer='./models/Qwen-7B-Chat', "
            "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, rope_scaling=None, rope_theta=None, "
            "tokenizer_revision=None, trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=32768, "
            "download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=1, pipeline_parallel_size=1, "
            "disable_custom_all_reduce=True, quantization=None, enforce_eager=True, kv_cache_dtype=auto, "
            "quantization_param_path=None, device_config=cuda, "
            "decoding_config=DecodingConfig(guided_decoding_backend='outlines'), "
            "observability_config=ObservabilityConfig(otlp_traces_endpoint=None), seed=0, "
            "served_model_name=./models/Qwen-7B-Chat, use_v2_block_manager=False, enable_prefix_caching=False)",
            "INFO 08-07 07:11:28 model_runner.py:736] Loading model weights took 14737.2578 MB",
            "INFO 08-07 07:11:31 gpu_executor.py:103] # GPU blocks: 7877, # CPU blocks: 512",
        ),
        reported="blocks",
        gpu="NVIDIA A100-SXM4-80GB (collect_env: 4 of them; the start is TP1)",
        gpu_source=A100_80_TOTAL,
        version="v0.5.3.post1 printed ('Initializing an LLM engine (v0.5.3.post1)')",
        flags="LLM(model='./models/Qwen-7B-Chat', trust_remote_code=True, enforce_eager=True, disable_log_stats=False, "
        "max_num_seqs=n, tensor_parallel_size=1, disable_custom_all_reduce=True, gpu_memory_utilization=1.0) "
        "(n not read)",
        model_source=HF.format("Qwen/Qwen-7B-Chat") + " (QWenLMHeadModel: 32 layers, hidden 4096, 32 heads, "
        "kv_channels 128, intermediate_size 22016, vocab 151936, untied; values as a public copy of the Qwen-7B "
        "config.json reads them (levanter's Qwen test fixture), not re-read from the Hub page; "
        "max_position_embeddings 32768 agrees with the max_seq_len=32768 vLLM printed (that copy's seq_length "
        "8192 would have capped vLLM's derived length at 8192, so the Chat checkpoint's seq_length is not taken "
        "from it and is left out); bf16 as the log prints it)",
    ),
]

LEFT_OUT_V0: dict[str, str] = {
    VLLM.format(7256) + " (second run)": "the same issue's re-run with the author's patched worker.py ('# GPU blocks: "
    "7823'): modified code, not a vLLM release",
    "https://github.com/QwenLM/Qwen3/issues/1048": "Qwen2.5-7B-Instruct on an NVIDIA L20 ('can not deploy qwen2.5 "
    "with vllm', 2024-11-01): the vLLM version is not stated (model_runner.py:1056 line numbers only), and the KV "
    "sizing lines and the command could not be read in the copies found",
    "https://github.com/xorbitsai/inference/issues/2227": "Qwen2-7B-Instruct GPTQ-Int4 via Xinference vLLM engine, "
    "n_gpu 1 (2024-09): the KV sizing lines, GPU and vLLM version could not be read in the copies found",
    VLLM.format(6737): "qwen2-0.5b on one H800 with vllm==0.4.2: no '# GPU blocks' line read (only metrics lines), "
    "command and util not read",
    VLLM.format(
        8031
    ): "V100-PCIE-32GB, 'How can I determine the maximum number of concurrent requests?' (0.5.x): no KV "
    "line in the parts read",
    VLLM.format(9753): "Llama-3.2-3B-Instruct on an A10, v0.6.3.post1, kv_cache_dtype fp8_e5m2: the start fails with "
    "an mmap error before the KV cache is sized",
    VLLM.format(10439): "Qwen2.5-0.5B-Instruct, v0.6.4.post1 docker ('No available memory for the cache blocks'): the "
    "memory-profiling line and the flags could not be read in the copies found (thread is in the log corpus)",
    VLLM.format(15228): "Qwen2.5-72B-Instruct-GPTQ-Int4 V0 0.7.2 start is tensor_parallel_size=2 (tp group)",
    VLLM.format(15561): "Qwen1.5-MoE-A2.7B load question (torch 2.6 / 0.8.x): no KV sizing line read",
    SEARCH.format("%22%23+GPU+blocks%3A+13033%2C+%23+CPU+blocks%3A+2048%22"): "Llama-3.1-8B-Instruct-FP8 "
    "(compressed-tensors, Marlin) on an A40 in an MMLU-Pro k8s exam RCA note (vLLM v0.6.3 named): the lines are "
    "abbreviated (timestamps cut, not verbatim), the exact checkpoint, util, max_model_len and the A40 total are not "
    "stated",
    SEARCH.format("%22Maximum+concurrency+for+16384+tokens+per+request%3A+62.58x%22"): "Qwen2.5-7B-Instruct on one "
    "A800 80GB (ALFWorld homework notes, util 0.90, len 16384, KV 54.76 GiB): the profile lines are paraphrased (not "
    "vLLM's verbatim wording) and the vLLM version / engine is not stated",
    SEARCH.format("%22%23+GPU+blocks%3A+365549%22"): "rho-1b-sft-GSM8K on an H200 (139.80 GiB), V0 0.6.4.post1: "
    "suesie/grpocredit, a repository already used",
    SEARCH.format("%22%23+cuda+blocks%3A+1395%22"): "Llama-3.2-3B-Instruct-Q8_0.gguf on an RTX 4070 laptop (7.65 GiB): "
    "eformat/ragit-dev, already used; GGUF weights; version not stated",
    SEARCH.format(
        "%22%23+cuda+blocks%3A+1394%22"
    ): "Qwen3-4B on an RTX 2060 12GB (util 0.95, len 10k, max_num_seqs 1): Q07K/langgraph-mcp-example, already used",
    SEARCH.format("%22%23+GPU+blocks%3A+715%22"): "kaitchup/Phi-4-AutoRound-GPTQ-4bit, util 0.15 on 79.25 GiB: the "
    "kaitchup AutoRound benchmark notebooks are an already used source",
    SEARCH.format("%22%23+cuda+blocks%3A+34595%22"): "opt-125m-sized model (0.24 GiB weights, KV 19.00 GiB) quoted in "
    "an issue-digest page of a vLLM issue ('Missing metrics in V1'): GPU total, util and model not established from "
    "the copy",
    SEARCH.format("%22%23+GPU+blocks%3A+11836%22"): "Qwen2-7B-Instruct Q4_K_M GGUF on a Jetson Orin NX 16G (unified "
    "memory, dustynv container 0.6.3): outside (Jetson unified memory, GGUF); process killed after sizing",
    SEARCH.format("%22%23+GPU+blocks%3A+2197%22"): "microsoft/Phi-3.5-vision-instruct in a CAMEL-AI example's "
    "docstring (V0 0.6.1.post2, len 4096): multimodal, and the GPU and the gpu_memory_utilization CAMEL's PHIConfig "
    "passed are not stated",
    "https://github.com/jayashan10/Deepseek-qwen-deployment/blob/663d94d27442d1b9ab841b9d76d6b38c934b297c/"
    "vllm_server.log": "DeepSeek-R1-Distill-Qwen-14B, vLLM 0.8.5.post1: a V1 start (core.py, kv_cache_utils), not V0 "
    "(for the V1 0.8-0.11 group; GPU total not printed)",
    "https://github.com/ShanghaoLi0913/memory-aware_RLHF/blob/111900dee73452ba12d0d4250d99a70e2bbea9e1/vllm.log": "Qwen2.5-3B "
    "fp16, max_num_seqs 1, 0.10.2: a V1 start (for the V1 0.8-0.11 group), not V0",
}


# === tensor parallel, up to 0.11 =====================================================================================
# Fourth sealed batch, TP group: starts of vLLM with tensor_parallel_size >= 2 (V0 or V1, releases up to 0.11.x) on
# NVIDIA GPUs, gathered on 2026-12-02 from sources no other case uses (checked against every source the earlier batches and their LEFT_OUT tables name).
# Written blind: the planner was neither run nor read while gathering them.
#
# Under TP vLLM sizes the KV cache per rank and keeps the minimum over the ranks; V1 (0.10-0.11) prints one 'Available
# KV cache memory' line per rank and one 'GPU KV cache size' line per rank from the EngineCore, and the engine keeps the
# smallest ('num_gpu_blocks is: N'). The figure recorded is that minimum.
#
# Only one start met every requirement (GPU model and total, util, release, KV figure all established by the source);
# the other TP candidates found, and why each was left out, are in LEFT_OUT_TP.

# --- model shapes (published config.json values) -------------------------------------------------------------------

# Qwen/Qwen3-VL-30B-A3B-Instruct: the values below are those of an inline, byte-for-byte transcription of the Hub
# config.json (at the model repo's commit 1fc78ad) kept in a public repository's parser test ("An inline copy of the
# REAL `Qwen/Qwen3-VL-30B-A3B-Instruct/config.json` structure ... transcribed byte-for-byte from the fetched file at
# commit `1fc78ad`"). The config has no torch_dtype key in that transcription; bf16 is what the start's own log prints
# (dtype=torch.bfloat16).
QWEN3_VL_30B_A3B = {
    "architectures": ["Qwen3VLMoeForConditionalGeneration"],
    "model_type": "qwen3_vl_moe",
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "text_config": {
        "model_type": "qwen3_vl_moe_text",
        "num_hidden_layers": 48,
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "intermediate_size": 6144,
        "moe_intermediate_size": 768,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "norm_topk_prob": True,
        "vocab_size": 151936,
        "max_position_embeddings": 262144,
        "rope_theta": 5000000,
        "rope_scaling": {"mrope_interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default"},
    },
    "vision_config": {
        "depth": 27,
        "hidden_size": 1152,
        "intermediate_size": 4304,
        "num_heads": 16,
        "out_hidden_size": 2048,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "num_position_embeddings": 2304,
        "deepstack_visual_indexes": [8, 16, 24],
        "in_channels": 3,
    },
}

# --- GPU totals ----------------------------------------------------------------------------------------------------

RTX3090_TOTAL_TP = (
    "RTX 3090 total as torch reports it, 23.56 GiB (25,296,044,032 bytes, as planner_cases_sealed's RTX3090_TOTAL "
    "prints it for another host: 'torch.cuda.get_device_properties(0).total_memory = 25,296,044,032 bytes'); not "
    "printed by this source (vLLM 0.11.0 does not print the total). The card is named by the log itself: the MoE "
    "tuning file vLLM looked for is '.../E=128,N=192,device_name=NVIDIA_GeForce_RTX_3090.json', and the document's "
    "list of deployment setups has '4× RTX3090 → FP16' for this model"
)

# --- sources -------------------------------------------------------------------------------------------------------

NANOKVM_URL = (
    "https://github.com/sipeed/sipeed_wiki/blob/db46b93c55f6e5730747b3687a3c60eec923b36e/"
    "docs/hardware/en/kvm/NanoKVM_Pro/cua.md"
)
NANOKVM_SOURCE = "sipeed/sipeed_wiki"

CASES_TP: list[Case] = [
    Case(
        "Qwen3-VL-30B-A3B-Instruct (MoE), 4x RTX 3090 (23.56 GiB) TP4, util 0.90, V1 0.11.0, len 65536",
        NANOKVM_URL,
        QWEN3_VL_30B_A3B,
        23.56,
        0.90,
        100752,
        tp=4,
        max_model_len=65536,
        note="Sipeed's wiki page 'Experimental AI Agent' for the NanoKVM-Pro (docs/hardware/en/kvm/NanoKVM_Pro/cua.md, "
        "author zepan, 2025-10-06, with a 2025-10-15 update), section 'Deploying VLM with vLLM' -> 'Example server "
        "output': the full `vllm serve` log of a start on the author's host 'zp@server105' (4 GPUs; the page's setup list "
        "has '4× RTX3090 → FP16'). Args as printed ('non-default args'): max_model_len 65536, tensor_parallel_size 4, "
        "nothing else that bears on memory, so gpu_memory_utilization is 0.11.0's default 0.9 (the command shown "
        "above the log also passes --gpu-memory-utilization 0.90). bf16 weights ('dtype=torch.bfloat16', "
        "quantization=None), enforce_eager False, kv_cache_dtype auto, prefix caching on, chunked prefill with the "
        "default max_num_batched_tokens 2048 ('Chunked prefill is enabled with max_num_batched_tokens=2048'), "
        "max_num_seqs default. TP4 over PCIe: vLLM turned custom all-reduce off itself ('Custom allreduce is "
        "disabled because it's not supported on more than two PCIe-only GPUs'); no EP flag (the ranks print 'EP rank "
        "N' but the command has no --enable-expert-parallel). FlashInfer not installed (PyTorch-native sampler). "
        "'Model loading took 14.7708 GiB' per rank. The vision tower was profiled with 'Encoder cache will be "
        "initialized with a budget of 153600 tokens, and profiled with 1 video items of the maximum feature size'. "
        "All four ranks print 'Available KV cache memory: 2.31 GiB' and the EngineCore prints 'GPU KV cache size: "
        "100,752 tokens' four times; 'num_gpu_blocks is: 6297' = 6297 x 16 = 100,752 tokens (the minimum over ranks, "
        "used here). 4 KV heads over TP4: one per rank, 48 x 2 x 128 x 2 B = 24 KiB/token/rank; 100,752 x 24 KiB = "
        "2.31 GiB (consistent). CUDA graphs (PIECEWISE 67 + FULL decode 35) captured after the KV sizing, 1.92 GiB "
        "per rank; 0.11.0 does not subtract them. Doubt: the 3090's total is not printed by the source; whether the "
        "four cards were otherwise idle is not shown (the log starts cleanly and serves requests).",
        params={"flashinfer_sampler": False},  # 'FlashInfer is not available. Falling back to the PyTorch-native ...'
        part="sealed",
        vllm="0.11.0",
        source=NANOKVM_SOURCE,
        log="sipeed NanoKVM-Pro CUA Qwen3-VL-30B-A3B 4x3090 TP4 0.11.0",
        quote=(
            "(APIServer pid=41428) INFO 10-06 15:56:26 [api_server.py:1839] vLLM API server version 0.11.0",
            "(APIServer pid=41428) INFO 10-06 15:56:26 [utils.py:233] non-default args: {'model_tag': "
            "'/home/zp/work/models/Qwen/Qwen3-VL-30B-A3B-Instruct', 'host': '0.0.0.0', 'api_key': ['sk123'], 'model': "
            "'/home/zp/work/models/Qwen/Qwen3-VL-30B-A3B-Instruct', 'max_model_len': 65536, 'served_model_name': "
            "['Qwen3-VL-30B-A3B-Instruct'], 'tensor_parallel_size': 4}",
            "(Worker_TP0 pid=41699) INFO 10-06 15:57:17 [gpu_model_runner.py:2653] Model loading took 14.7708 GiB and "
            "25.517781 seconds",
            "(Worker_TP3 pid=41702) INFO 10-06 15:57:53 [gpu_worker.py:298] Available KV cache memory: 2.31 GiB",
            "(Worker_TP2 pid=41701) INFO 10-06 15:57:53 [gpu_worker.py:298] Available KV cache memory: 2.31 GiB",
            "(Worker_TP0 pid=41699) INFO 10-06 15:57:53 [gpu_worker.py:298] Available KV cache memory: 2.31 GiB",
            "(Worker_TP1 pid=41700) INFO 10-06 15:57:53 [gpu_worker.py:298] Available KV cache memory: 2.31 GiB",
            "(EngineCore_DP0 pid=41565) INFO 10-06 15:57:53 [kv_cache_utils.py:1087] GPU KV cache size: 100,752 tokens",
            "(EngineCore_DP0 pid=41565) INFO 10-06 15:57:53 [kv_cache_utils.py:1091] Maximum concurrency for 65,536 "
            "tokens per request: 1.54x",
            "(APIServer pid=41428) INFO 10-06 15:58:17 [loggers.py:147] Engine 000: vllm cache_config_info with "
            "initialization after num_gpu_blocks is: 6297",
        ),
        reported="tokens",
        gpu="NVIDIA GeForce RTX 3090 x4 (MoE config lookup 'device_name=NVIDIA_GeForce_RTX_3090'; page: '4× RTX3090')",
        gpu_source=RTX3090_TOTAL_TP,
        version="0.11.0 ('vLLM API server version 0.11.0', 'Initializing a V1 LLM engine (v0.11.0)')",
        flags="vllm serve /home/zp/work/models/Qwen/Qwen3-VL-30B-A3B-Instruct --host 0.0.0.0 --port 8000 "
        "--tensor-parallel-size 4 --gpu-memory-utilization 0.90 --max-model-len 65536 --served-model-name "
        "Qwen3-VL-30B-A3B-Instruct --api-key sk123",
        model_source="https://huggingface.co/Qwen/Qwen3-VL-30B-A3B-Instruct/blob/main/config.json (values as an "
        "inline byte-for-byte transcription of it at commit 1fc78ad in a public parser test: text 48 layers, hidden "
        "2048, 32 heads, 4 KV heads, head_dim 128, 128 experts x 768, 8 per token, vocab 151936, 262144 positions, "
        "untied; vision tower depth 27, hidden 1152, 16 heads, patch 16; the log: 'Resolved architecture: "
        "Qwen3VLMoeForConditionalGeneration', dtype=torch.bfloat16)",
        apart="multimodal: the vision encoder's profile run is not modelled",
    ),
]

LEFT_OUT_TP: dict[str, str] = {
    "https://github.com/vllm-project/vllm/issues/10702": "Meta-Llama-3.1-70B-Instruct TP8, V0 0.6.4.post1, util "
    "0.95, len 131072 ('Memory profiling results: total_gpu_memory=139.72GiB ... kv_cache_size=110.52GiB'): the "
    "reporter names the GPUs 'H100 8GPU', which a 139.72 GiB total contradicts, so the card is not established; and "
    "the '# GPU blocks' line and the driver rank's profile line were not in the text that could be read (ranks show "
    "110.52 and 110.99 GiB), so the minimum over ranks is not established",
    "https://github.com/vllm-project/vllm/issues/17462": "Qwen3-32B TP2 on 'L20*2' ('GPU KV cache size: 67,856 "
    "tokens' twice, 'Maximum concurrency for 16,384 tokens'): release stated only as '0.8.4/0.85', the quoted "
    "command ('vllm serve Qwen3-32B --tensor-parallel-size 2') does not carry the 16384 length or a util, and the "
    "L20 total is printed nowhere in the thread text read",
    "https://github.com/vllm-project/vllm/issues/17469": "Qwen3 TP4 'GPU KV cache size: 198,784 tokens' (cpwan, "
    "04-29 01:09:49): the same start as the one quoted in vllm#17327, which is already used",
    "https://github.com/vllm-project/vllm/issues/16841": "Mistral-Small-3.1-24B (multimodal) TP4 in docker, "
    "'GPU KV cache size: 233,936 tokens' x2: GPU and release not stated in the text read",
    "https://github.com/vllm-project/vllm/issues/21524": "Qwen3-30B-A3B TP2 across two H100 nodes over Ray (LWS), "
    "util 0.9, 'GPU KV cache size: 878,416 tokens': release not stated (only kv_cache_utils.py:634 line numbers), "
    "multi-node Ray TP",
    "https://github.com/vllm-project/vllm/issues/22479": "two RTX 6000 Pro Blackwell TP2, dev build "
    "0.10.1.dev446+g7e3a8dc90: model, util and the KV size line not in the text read",
    "https://github.com/vllm-project/vllm/issues/28910": "Qwen3-30B-A3B-Instruct-2507-FP8 TP4, 0.11.0, util 0.90, "
    "len 131072, max_num_batched_tokens 32768, max_num_seqs 10: GPU and the KV lines not in the text read",
    "https://github.com/vllm-project/vllm/pull/14447": "davidsyoung's 3090 logs (total_gpu_memory (23.58GiB) x 0.99) "
    "in the moe wna16 marlin PR: a DeepSeek-class MLA MoE on many ranks; model/flags not established in the text read",
    "https://github.com/vllm-project/vllm/pull/14462": "DeepSeek-Coder-V2-Lite TP2 main-vs-PR KV sizes (MLA bugfix "
    "PR): GPU, util and release not stated; an MLA model",
    "https://github.com/vllm-project/vllm/pull/24162": "Qwen2.5-0.5B TP2 on a dev build 0.10.2.dev378: GPU and KV "
    "lines not in the text read",
    "https://github.com/vllm-project/vllm/issues/5248": "deepseek-coder-6.7b TP2 on 2x T4 ('# GPU blocks: 507'): "
    "the vLLM version is only shown as an image",
    SEARCH.format("%22GPU+KV+cache+size%3A+217%2C104+tokens%22"): "QuantTrio/Qwen3-VL-235B-A22B-Instruct-FP8 / AWQ "
    "TP8 EP eval note (217,104 / 508,624 tokens on some ranks): nightly wheel (no release), GPU not stated",
    SEARCH.format("%22GPU+KV+cache+size%3A+1%2C095%2C520+tokens%22") + " (TP2 copy)": "Qwen2.5-Coder-7B-Instruct "
    "TP2 0.8.3 log: already listed by the third batch (GPU and util not stated)",
    "https://github.com/gnosia93/eks-agentic-ai (Qwen2.5-72B-Instruct TP4 on g6e.12xlarge)": "vLLM 0.19.0: the "
    "V1 0.12+ group",
    "https://github.com/hanzhizhz/prograph (vllm.log, Qwen3-30B-A3B-Instruct-2507-Int4-W4A16 TP2)": "vLLM 0.13.0: the "
    "V1 0.12+ group; GPU not named",
    "code: AMD ROCm Ray blog (DeepSeek-R1-Distill-Qwen-14B TP2, 0.11.1rc2.dev141)": "AMD GPUs (ROCm)",
    "code: ll3.1_test README (Llama-3.1-405B TP8, '# GPU blocks: 34501', v0.4.3)": "AMD GPUs (ROCmFlashAttention)",
    "code: openchat 'Run on 2 GPUs' notes (openchat-3.6-8b TP2, '# GPU blocks: 12344', v0.4.2)": "GPU not named; "
    "gpu_memory_utilization not shown (openchat's server wraps vLLM's engine args)",
    "https://github.com/Kiloma-Advanced-Solutions/PLG_AI (vllm.log, gemma-3-12b-it-qat-autoawq TP2, 0.8.4)": "GPU "
    "not named; a multimodal model with sliding-window layers",
    "code: DeepSeek-V3.2 P/D log (TP8, 0.13.0, P2pNcclConnector)": "0.13.0 (the V1 0.12+ group), MLA, KV connector",
    "code: vllm-ascend issue copies (Qwen3-Next-80B TP4, Qwen3-VL-8B TP2 ...)": "Ascend NPUs",
}


FOURTH_DATE = "2026-12-02"
FOURTH_BATCH: list[Case] = CASES_V1NEW + CASES_V1MID + CASES_V0 + CASES_TP
LEFT_OUT_FOURTH: dict[str, str] = {**LEFT_OUT_V1NEW, **LEFT_OUT_V1MID, **LEFT_OUT_V0, **LEFT_OUT_TP}
