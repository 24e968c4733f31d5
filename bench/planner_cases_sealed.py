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

from planner_cases import HF, SEARCH, Case, cfg

SEALED_DATE = "2026-12-01"
# Cases moved between parts after their error was seen: name -> reason. Empty: none was moved.
MOVED: dict[str, str] = {}

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

SEALED: list[Case] = [
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
]

# Candidates seen and left out, with the reason (decided before the planner was run on them).
LEFT_OUT: dict[str, str] = {
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
}
