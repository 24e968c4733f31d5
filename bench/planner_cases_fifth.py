"""The sealed part's fifth batch: starts of vLLM gathered on 2026-12-02, after the fourth batch's run and the changes
that followed it, from sources no other case uses; written here and committed before the planner ran on any of them
(the commit that adds this file changes nothing in src/). They set no constant of the planner.

Gathered in two groups: other projects' issue threads and committed files (one start met every requirement), and
tutorials and blog posts (none did: the pages' logs could not be read in full). Each group's candidates left out, and
why, are in its LEFT_OUT_* table.
"""

from __future__ import annotations

from planner_cases import Case, cfg

# === other projects' threads and files ===============================================================================
# Sealed batch 5, group PROJECTS: NVIDIA starts of vLLM pasted in issue threads or committed in the files of other
# projects that run vLLM, found in public issue threads and code search (gathered 2026-12-02, blind: no planner run).
#
# Only one candidate met every rule in the time box; the others seen are in LEFT_OUT_PROJECTS with the reason.

# --- model shapes (published config.json values) -------------------------------------------------------------------

# deepseek-ai/DeepSeek-R1-0528-Qwen3-8B: the Qwen3-8B shape (36 layers, hidden 4096, 32 heads, 8 KV heads, head_dim
# 128, intermediate 12288, vocab 151936, untied) with YaRN rope scaling and a 131072-token position limit; run here
# with --dtype float16 ('Casting torch.bfloat16 to torch.float16').
DS_R1_0528_QWEN3_8B_FP16 = cfg(
    "Qwen3-8B",
    torch_dtype="float16",
    max_position_embeddings=131072,
    rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
)

# --- sources -------------------------------------------------------------------------------------------------------

JP_DSQ3_URL = (
    "https://github.com/jackypanster/deploy-DeepSeek-R1-0528-Qwen3-8B/blob/"
    "02cf841e06a979472256d8b157c07faaab6d549c/output.log"
)

CASES_PROJECTS: list[Case] = [
    Case(
        "DeepSeek-R1-0528-Qwen3-8B, 4x RTX 2080 Ti 22GB (21.48 GiB) TP4, util 0.93, V0 0.8.5, fp16, len 65536, eager",
        JP_DSQ3_URL,
        DS_R1_0528_QWEN3_8B_FP16,
        21.48,
        0.93,
        26370 * 16,
        tp=4,
        max_model_len=65536,
        engine="v0",
        batched_tokens=8192,
        enforce_eager=True,
        note="A deployment repo (jackypanster/deploy-DeepSeek-R1-0528-Qwen3-8B, 2025-06) that commits the full "
        "terminal session as output.log: the `docker run ... vllm/vllm-openai:v0.8.5` command and `docker logs -f "
        "coder`. The same author's blog post in the repo (deploy-deepseek-r1-qwen3-8b-optimization.md) names the "
        "host: '4 x NVIDIA RTX 2080 Ti（每张22GB显存）' (22 GB modded Turing cards), driver 570.153.02. Turing: 'Compute "
        "Capability < 8.0 is not supported by the V1 Engine. Falling back to V0', XFormers backend. Args Namespace: "
        "block_size None (16), max_num_seqs None (256), enable_prefix_caching None, swap_space 32, enforce_eager "
        "True (no CUDA graphs), max_num_batched_tokens 8192 ('Chunked prefill is enabled with "
        "max_num_batched_tokens=8192', chunked prefill on because len > 32K). Each rank prints its own profile: "
        "ranks 1-3 total_gpu_memory 21.49 GiB, activation peak 0.46 GiB, KV 15.49 GiB; the driver rank (rank 0) "
        "total 21.48 GiB, activation peak 1.45 GiB (it also runs the sampler), non-torch 0.20 GiB, KV 14.49 GiB. V0 "
        "takes the minimum over ranks: '# cuda blocks: 26370' x 16 = 421,920 tokens, the figure used, with rank 0's "
        "21.48 GiB. 8 KV heads over TP4 = 2 per rank: 36 x 2 x 2 x 128 x 2 B = 36 KiB/token/rank; 14.49 GiB / 36 KiB "
        "= 422,058 tokens, consistent (26,378 blocks before the GiB rounding); 'Maximum concurrency for 65536 "
        "tokens per request: 6.44x' = 421,920 / 65,536. 'Model loading took 3.8459 GiB' per rank. Custom allreduce "
        "disabled (more than two PCIe-only GPUs).",
        part="sealed",
        vllm="0.8.5",
        source="jackypanster/deploy-DeepSeek-R1-0528-Qwen3-8B",
        log="jackypanster DeepSeek-R1-0528-Qwen3-8B 4x2080Ti TP4 0.8.5 V0 06-07",
        quote=(
            "INFO 06-07 03:27:23 [api_server.py:1043] vLLM API server version 0.8.5",
            "INFO 06-07 03:27:55 [model_runner.py:1140] Model loading took 3.8459 GiB and 5.549861 seconds",
            "INFO 06-07 03:28:01 [worker.py:287] the current vLLM instance can use total_gpu_memory (21.48GiB) x "
            "gpu_memory_utilization (0.93) = 19.98GiB",
            "INFO 06-07 03:28:01 [worker.py:287] model weights take 3.85GiB; non_torch_memory takes 0.20GiB; PyTorch "
            "activation peak memory takes 1.45GiB; the rest of the memory reserved for KV Cache is 14.49GiB.",
            "(VllmWorkerProcess pid=198) INFO 06-07 03:28:01 [worker.py:287] model weights take 3.85GiB; "
            "non_torch_memory takes 0.18GiB; PyTorch activation peak memory takes 0.46GiB; the rest of the memory "
            "reserved for KV Cache is 15.49GiB.",
            "INFO 06-07 03:28:01 [executor_base.py:112] # cuda blocks: 26370, # CPU blocks: 58254",
            "INFO 06-07 03:28:01 [executor_base.py:117] Maximum concurrency for 65536 tokens per request: 6.44x",
        ),
        reported="blocks",
        gpu="NVIDIA RTX 2080 Ti 22GB x4 (the repo's blog post: '4 x NVIDIA RTX 2080 Ti（每张22GB显存）')",
        gpu_source="printed by vLLM in the same log: 'total_gpu_memory (21.48GiB)' on the driver rank (21.49GiB on "
        "the three worker ranks)",
        version="0.8.5 ('vLLM API server version 0.8.5', 'Initializing a V0 LLM engine (v0.8.5)', image "
        "vllm/vllm-openai:v0.8.5)",
        flags="docker run ... vllm/vllm-openai:v0.8.5 --model /models --served-model-name coder "
        "--tensor-parallel-size 4 --gpu-memory-utilization 0.93 --dtype float16 --max-model-len 65536 "
        "--trust-remote-code --load-format safetensors --swap-space 32 --enforce-eager --max-num-batched-tokens "
        "8192 --chat-template /models/qwen3_programming.jinja",
        model_source="https://huggingface.co/deepseek-ai/DeepSeek-R1-0528-Qwen3-8B/blob/main/config.json (the "
        "Qwen3-8B shape kept in tests/data/models/Qwen3-8B, plus YaRN rope scaling factor 4 over 32768 and 131072 "
        "positions). Doubt: the YaRN/position values were taken from the published card as recalled, not re-read "
        "from the card; the log corroborates them only in part ('Unrecognized keys in `rope_scaling` for "
        "'rope_type'='yarn': {'attn_factor'}', and vLLM accepting --max-model-len 65536 > Qwen3-8B's 40960). They do "
        "not change the per-token KV size (36 layers x 8 KV heads x 128).",
    ),
]

LEFT_OUT_PROJECTS: dict[str, str] = {
    "https://github.com/xorbitsai/inference/issues/2958": "Qwen2.5-32B-Instruct under Xinference on 8x L20 48G, V0 "
    "('executor_base.py:116] Maximum concurrency for 32768 tokens per request: 10.64x'): the '# cuda blocks' line, "
    "the vLLM version, TP size and gpu_memory_utilization were not in the parts of the thread that could be read",
    "https://github.com/gpustack/gpustack/issues/4660": "Qwen3-8B-FP8 in gpustack/runner:cuda12.9-vllm0.13.0 on an RTX "
    "4090, --gpu-memory-utilization 0.5, --max-model-len 32768: the KV lines of the start were not in the returned "
    "excerpts",
    "https://github.com/kaito-project/kaito/issues/2114": "Azure Standard_NC6s_v3 (V100) / NC4as_T4_v3 (T4) start "
    "('Available KV cache memory: 4.7 GiB'): which SKU this log is from, the model, the version and the 'GPU KV cache "
    "size' line were not in the parts of the thread that could be read",
    "https://github.com/huggingface/trl/pull/3310": "Qwen2.5-7B-Instruct, trl vllm-serve with data parallel, V1 "
    "0.8.3, enforce_eager, max_seq_len 102400: GPU, util and KV lines not in the parts of the thread that could be read",
    "https://github.com/livepeer/ai-runner/pull/230": "Meta-Llama-3.1-8B-Instruct TP2 on two 23GiB cards: 'Initializing "
    "an LLM engine (vdev)' (a dev build, release not established) and no KV line in the excerpt",
    "https://github.com/lm-sys/FastChat/pull/2601": "llama2-13B on one A100-80G '# GPU blocks: 3817, # CPU blocks: "
    "327': vLLM version and gpu_memory_utilization not stated",
    "https://github.com/OpenRLHF/OpenRLHF/issues/336": "Llama-3 70B PPO vLLM engine '# GPU blocks: 378' (start failed "
    "with 'max seq len (8192) ... KV cache (6048)'): GPU total, util and version not in the excerpt; colocated RLHF",
    "https://github.com/kserve/kserve/pull/4368": "Llama-3.2-1B-Instruct via huggingfaceserver, V0/V1 0.8.1: GPU and KV "
    "lines not in the parts of the thread that could be read",
    "https://github.com/kserve/kserve/pull/3849": "facebook/opt-125m float32 via huggingfaceserver, 0.5.3.post1: GPU "
    "and KV lines not in the parts of the thread that could be read",
    "noonghunna/club-3090 issues #91, #294, #295, #612, #652, #1087; mitchross/talos-argocd-proxmox#1995": "Qwen3.6 / "
    "Qwen3.8 hybrid (Gated DeltaNet) models, most with MTP speculative decoding and fp8 KV: outside a dense/MoE "
    "decoder",
    "https://github.com/vllm-project/vllm/issues/28228": "vllm-project thread (not another project); Kimi-Linear hybrid "
    "MLA/linear attention",
    "https://github.com/1CatAI/1Cat-vLLM/issues/237": "1Cat-vLLM SM70 fork (not stock vLLM), journalctl start on V100 16GB "
    "x4",
    "https://github.com/guqiong96/Lvllm/issues/35": "Lvllm fork with CPU/GPU MoE offload (LVLLM_* env), not stock vLLM",
    "https://github.com/vllm-project/vllm-ascend/issues/1249 (copy in a wiki repo)": "Ascend 910B4, not NVIDIA",
    "code: verl '(WorkerDict pid=...)' training logs (deepseek-coder-1.3b, Qwen2.5-0.5B, 04-02)": "vLLM colocated with "
    "FSDP training in verl's patched rollout; the KV lines, GPU and version were not established in the time box",
    "https://github.com/jackypanster/deploy-qwen3-32b-awq": "Qwen3-32B-AWQ TP4 guide: command only, no start log",
    "code: 'Free memory on device (22.45/23.99 GiB)' (Qwen2.5-0.5B-Instruct, vLLM 0.27.1, WSL)": "its 'GPU KV cache "
    "size: 1,629,520 tokens' is already used (by an earlier batch)",
    "code: '# CUDA blocks: 5517' (Qwen2.5-1.5B-Instruct on T4, total_gpu_memory (14.56GiB) x 0.50, 05-30)": "a sibling "
    "run of the used '# CUDA blocks: 5519' notebooks; its repository could not be told apart from the used one",
}


# === tutorials and blog posts ========================================================================================
# The sealed part's fifth batch, group PAGES: NVIDIA starts of vLLM (V0 or V1, any release, TP or not) looked for in
# public web pages (tutorials, blog posts, Q&A / forum threads, vendor manuals), gathered on 2026-12-02 without running,
# importing or reading the planner.
#
# Result: no case. About sixty searches of public pages (vLLM's own KV wordings: 'GPU KV cache size', '# GPU
# blocks', 'Available KV cache memory', 'Memory profiling results: total_gpu_memory', 'the rest of the memory reserved
# for KV Cache', 'Maximum concurrency for', 'Model loading took', 'Initializing an LLM engine (v0.x)'; with GPU names
# (A100, H100, L4, A10G, T4, RTX 3060/3090/4060 Ti/4090, RTX 4000 Ada) and model names; in English, Chinese and
# Japanese; aimed at blogs, CSDN mirrors, discuss.vllm.ai, Medium/dev.to, GKE/vendor tutorials, Hugging Face card
# mirrors and GitHub-issue mirror pages) returned a small, repeating set of pages. Only the opening of a page could be read
# (never the whole page), so on every page whose log sits further down the KV line could not be
# read. Of the pages whose excerpt did hold vLLM lines, one is already used (myoceane.fr, GPT-OSS-20B / Gemma 4 on an
# A100) and the others lack the KV figure, the GPU, the util or the version, or are multimodal / hybrid-attention models.
# Each candidate and the reason it was left out is in LEFT_OUT_PAGES. Sources earlier batches already use
# (blog.huikang.dev, myoceane.fr, the Se7en 'vLLM 快速部署指南' post and its hk.pswp.cn / mzph.cn mirrors) were skipped
# and are not repeated below.

CASES_PAGES: list[Case] = []

LEFT_OUT_PAGES: dict[str, str] = {
    "https://vllm-engineer.pages.dev/phase-02-paged-attention/labs/lab-03-real-vllm-blocks/": "course lab 'Inspect "
    "Real vLLM's KV Blocks' with a 'Captured output (real run, facebook/opt-125m, L4 24GB, vLLM 0.22.1)': the stored "
    "excerpts stop at the table of contents, so no KV line, util or GPU total can be quoted. Doubtful as well: the prose "
    "names '# GPU blocks: NNNN' (a V0 line) as the startup line of a V1 release, and the course reads as generated text",
    "https://vllm-engineer.pages.dev/phase-01-architecture-and-request-lifecycle/labs/lab-02-read-the-real-loop/": "same "
    "course, 'Captured output (real run, facebook/opt-125m, L4, vLLM 0.22.1, trimmed)': the captured lines could not be "
    "read from the stored excerpts (no KV figure, util or total)",
    "https://deepseek.csdn.net/6805bfcfda5d787fd5d0ee89.html": "DeepSeek-R1-Distill-Qwen-32B, 'vllm serve ... --dtype "
    "bfloat16 --max_model_len 32384 --gpu_memory_utilization 0.8 --quantization fp8 --enforce-eager', vLLM 0.8.1, a "
    "walk-through of one start's log: the stored excerpt ends before the KV lines and before the GPU is named, so "
    "neither the KV figure nor the card can be established (online fp8 weight quantization as well)",
    "https://discuss.vllm.ai/t/dont-get-more-kv-cache-when-running-with-enforce-eager/1542": "forum question quoting 'the "
    "same in both cases (241,920 tokens)' with and without --enforce-eager (0.53GB CUDA graphs): the model, GPU, util "
    "and vLLM version are not in the post",
    "https://www.robotmunki.com/pages/vllm-startup-log-annotated.html": "annotated cold-start log of "
    "nvidia/Gemma-4-31B-IT-NVFP4 on an H100 ('KV cache 1,563,739 tokens', 262,144 context, max_num_batched_tokens "
    "4096; companion post robotmunki.com/blog/vllm-startup-log): Gemma4ForConditionalGeneration is multimodal with "
    "sliding-window/global hybrid attention and NVFP4 weights; the util, version and total were not in the stored text",
    "https://spike.blog.csdn.net/article/details/150495514": "'使用 vLLM 部署 Qwen2.5-VL-32B 模型 (4卡x4090-49G)' "
    "(nvidia-smi 49140MiB per card): a vision model (apart at best), and the stored excerpt ends at the nvidia-smi "
    "table, before the command and any KV line",
    "http://www.mynw.cn/news/425280.html": "Qwen2.5-VL-7B-Instruct-AWQ on 2x T4 16G, vllm/vllm-openai:latest, "
    "--tensor-parallel-size 2 --max-model-len 16384 --gpu-memory-utilization 0.9: a vision model, the image tag "
    "'latest' gives no release, and no KV line is in the stored excerpt",
    "https://devpress.csdn.net/amd/6a045be30a2f6a37c5a9d231.html": "'vllm部署Qwen-VL': Qwen2-VL-2B-Instruct with all "
    "defaults, 'version 0.19.0', max model len 32768: a vision model, the GPU is not named and the KV lines are past "
    "the stored excerpt",
    "http://www.mzph.cn/pingmian/81541.shtml": "'7GB显存如何部署bf16精度的DeepSeek-R1 70B大模型?' on AutoDL (RTX3080 20G x2 "
    "and a vGPU-32GB; mirror hk.pswp.cn/pingmian/81541.shtml): a 70B bf16 model squeezed into ~7 GB of a vGPU "
    "(offload-style start, outside what the planner models); its '正常日志' section is past the stored excerpt",
    "https://nith.in/posts/workshop/what-an-llm-server-feels-like-under-load": "RTX 3060 12GB on Proxmox, "
    "vllm/vllm-openai:v0.11.0, Qwen2.5-7B AWQ and Llama-2-7B GPTQ, --gpu-memory-utilization 0.9 --max-num-seqs 96 "
    "--enable-prefix-caching: the command gives --max-model-len <CTX> (not stated) and no vLLM KV line is quoted in "
    "the stored text",
    "https://devopscube.com/deploying-llama-with-docker-and-vllm/": "Llama 3 8B fp16 in Docker on a DigitalOcean RTX "
    "4000 Ada (20,475 MiB): the stored excerpt (and its copy blog.ngocha.biz/?p=301) ends before the vLLM command and "
    "log; no KV figure, util or version could be read",
    "https://ermolushka.github.io/posts/vllm-benchmark-4090": "Meta-Llama-3.1-8B-Instruct on an RTX 4090, vLLM "
    "0.10.1.1, LLM(dtype='float16', gpu_memory_utilization=0.9, max_model_len=4096, enforce_eager=True): only "
    "nvidia-smi usage (22,631MB) is reported, no vLLM KV line",
    "https://stackbytes.beehiiv.com/p/why-your-gpu-is-idle-but-your-requests-are-queued": "Qwen2.5-7B-Instruct on an "
    "RTX 4090: TTFT/TPOT benchmark table only; no vLLM KV line, util or version in the stored text",
    "https://dev.to/ever9998/achieving-maximum-throughput-on-vllm-with-a-single-rtx-3090-a-production-guide-for-7b-llms"
    "-2g6e": "Meta-Llama-3-8B-Instruct GPTQ INT4 on an RTX 3090 ('stable usage around 5.8GB'): no vLLM KV line, util or "
    "version in the stored text",
    "https://www.learnlog.dev/vllm-multi-model-gpu-utilization": "Qwen3-Embedding-0.6B (util 0.15) and "
    "Qwen3Guard-Gen-8B (util 0.60) on one RunPod L40S: planned GB figures only, no vLLM KV line",
    "https://gigagpu.com/?p=34198": "'Deploying Llama 3.1 70B AWQ INT4 on a Single RTX 4090 24GB' (hosting vendor): "
    "computed figures, no vLLM log lines; internally inconsistent (a 70B AWQ model said to load in 17 GB)",
    "https://fast.hugflare.com/murilonwt/Qwen3-VL-8B-Thinking-NVFP4": "model card of a local Qwen3-VL-8B NVFP4A16 "
    "quant on an RTX 5060 Ti 16GB, vLLM 0.21.1rc1.dev46+gb50646e5e: a vision model on a dev build; the KV line is "
    "not in the stored excerpt",
    "https://blog.gloary.net/zai-rtx-4060-ti-16gb-shang-ji-yu-docker-vllmbu-shu-qwen3-8b": "Qwen3-8B-AWQ on an RTX "
    "4060 Ti 16GB via WSL2 + Docker: the stored excerpt ends at 'docker run --runtime', before any vLLM line",
    "https://ollama.linkworksinc.com/posts/vllm-tp4-3090-benchmark": "Gemma-4-31B-it AWQ TP4 on 4x RTX 3090, vLLM "
    "0.19.1: Gemma 4 (multimodal, hybrid attention); no KV line in the stored text",
    "https://blog.bitipcman.com/post/running-models-on-cpu-and-gpu-with-llama-and-vllm": "Qwen3-VL-2B-Thinking on an "
    "EC2 G6 (L4): a vision model; the vLLM part is past the stored excerpt",
    "http://www.maplevalley.com.cn/news/711143": "Qwen3-VL-2B-Instruct on 2x RTX 3090 with vLLM 0.11.2: a vision "
    "model, a generated-looking article with no vLLM KV line in the stored text",
    "https://hn.jakechampion.name/reader/https://medium.com/google-cloud/optimize-gemma-3-inference-vllm-on-gke-c071a08f7c78": "Gemma 3 27B on GKE Autopilot: Gemma 3 is multimodal with sliding-window layers, and the memory section is past "
    "the stored excerpt",
}


FIFTH_DATE = "2026-12-02"
FIFTH_BATCH: list[Case] = CASES_PROJECTS + CASES_PAGES
LEFT_OUT_FIFTH: dict[str, str] = {**LEFT_OUT_PROJECTS, **LEFT_OUT_PAGES}
