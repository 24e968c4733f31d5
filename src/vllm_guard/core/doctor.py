"""Doctor's rules: measured facts about the host, GPUs, model and units in, findings out.

Pure. ``vllm_guard.app.doctor`` gathers the ``Facts``; each rule here turns some of them into
``Finding``s (ok / warn / fail, a kebab-case reference, what was measured, and a hint).
Exit code: 0 when every finding is ok, 1 with warnings, 2 with a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from vllm_guard.core.modelinfo import ModelInfo
from vllm_guard.core.planner import (
    GiB,
    MiB,
    PlannerParams,
    budget,
    default_max_num_seqs,
    kv_band,
    kv_bytes_per_token,
    max_model_len_at,
    refuses_seqs_above_state_blocks,
    state_block_seqs,
    util_for,
    weights_per_gpu,
)
from vllm_guard.exitcodes import ExitCode

Status = Literal["ok", "warn", "fail"]


EXPOSURE_MAX = 4.0  # `systemd-analyze security`: above this, the vLLM unit is not confined as rendered


@dataclass(frozen=True)
class Finding:
    status: Status
    ref: str  # kebab-case, stable: people search for it
    title: str
    measured: str = ""
    hint: str = ""

    def as_json(self) -> dict[str, str]:
        return {
            "status": self.status,
            "ref": self.ref,
            "title": self.title,
            "measured": self.measured,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class GpuProcessFact:
    pid: int
    mib: int | None
    command: str


@dataclass(frozen=True)
class GpuFact:
    index: int
    name: str
    total: int
    free: int
    used: int
    processes: tuple[GpuProcessFact, ...] = ()
    reserved: int = 0  # what the driver keeps besides ``total`` (which is CUDA's total, without it)


@dataclass(frozen=True)
class SwapFact:
    path: str
    kind: str  # "file" or "partition"
    size: int
    used: int
    rotational: bool | None = None  # None: unknown
    fstype: str | None = None  # file system holding a swap file


@dataclass(frozen=True)
class FolderFacts:
    safetensors: int = 0
    training_files: tuple[str, ...] = ()
    bin_files: tuple[str, ...] = ()
    missing_shards: tuple[str, ...] = ()
    size_mismatches: tuple[tuple[str, int, int], ...] = ()
    header_errors: tuple[str, ...] = ()
    index_error: str | None = None
    quant_config_files: tuple[str, ...] = ()  # quant_config.json, quantize_config.json, hf_quant_config.json


@dataclass(frozen=True)
class FallbackFacts:
    """A ``[[target.fallback]]`` model as doctor finds it (the guard starts it when the weights do not fit)."""

    model: str
    quantization: str | None
    model_info: ModelInfo | None = None  # None: its config.json cannot be read (the daemon waits for it)
    quant_config_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class TargetFacts:
    unit: str
    model: str
    util: float
    tp: int
    max_model_len: int | None
    kv_cache_dtype: str
    host: str
    port: int
    swap_space_gib: float | None = None
    cpu_offload_gb: float | None = None
    device: Literal["gpu", "cpu"] = "gpu"
    cpu_kv_gib: int | None = None  # VLLM_CPU_KVCACHE_SPACE (flags.cpu_kvcache_space_gib or the environment)
    model_error: str | None = None  # why the model could not be read
    model_info: ModelInfo | None = None
    folder: FolderFacts | None = None
    unit_state: Literal["matches", "differs", "missing"] | None = None
    unit_diff: str = ""
    # changed: the guard lowered flags; base_changed: the config's base flags changed since the guard wrote it
    env_state: Literal["base", "changed", "base_changed", "missing"] | None = None
    env_detail: str = ""
    unit_active: bool | None = None  # the vLLM unit itself is running (then its port is expected in use)
    port_in_use: bool | None = None
    limit_nofile: tuple[int, int] | None = None  # (soft, hard) from the unit's LimitNOFILE=
    exposure: float | None = None  # `systemd-analyze security` of the installed unit (0 best, 10 worst)
    # what the planner is told of this target's own vLLM (None: Facts.params, the first target's)
    params: PlannerParams | None = None
    vllm_error: str | None = None  # its python cannot import vLLM (said for targets after the first)
    quantization: str | None = None  # the --quantization flag (None: the checkpoint's own, if any)
    fallbacks: tuple[FallbackFacts, ...] = ()


@dataclass(frozen=True)
class Facts:
    # GPUs
    gpus: tuple[GpuFact, ...] = ()
    gpu_error: str | None = None
    gpu_fake: bool = False
    driver_version: str | None = None
    # config
    config_error: str | None = None
    config_ref: str = "config-invalid"
    targets: tuple[TargetFacts, ...] = ()
    # host memory and swap
    mem_total: int = 0
    mem_available: int = 0
    # NUMA node 0, which vLLM's CPU backend sizes its memory by (None: no NUMA, the host's numbers)
    node_total: int | None = None
    node_available: int | None = None
    swap_total: int = 0
    swap_free: int = 0
    swappiness: int | None = None
    swaps: tuple[SwapFact, ...] = ()
    shm_bytes: int | None = None
    nofile_soft: int | None = None
    nofile_hard: int | None = None
    # software
    vllm_version: str | None = None
    vllm_error: str | None = None
    journal_error: str | None = None  # None: readable
    journal_checked: bool = True
    guard_active: bool | None = None
    params: PlannerParams = field(default_factory=PlannerParams)


# Limits, each with where it comes from.
SWAPPINESS_ADVICE = 10  # the usual advice for inference hosts: keep the model server's pages in RAM
NOFILE_MIN = 65535  # vLLM raises its soft limit to 65535 itself (vllm/utils set_ulimit) when the hard limit allows
# NCCL keeps its shared-memory transport in /dev/shm; Docker's default of 64 MiB fails with TP
# ("Error while creating shared memory segment"); vLLM's docs say --ipc=host or a large --shm-size.
SHM_MIN_TP = 1 * GiB
HELD_WARN = 1 * GiB  # another process holding more than this much VRAM is worth naming
# Host RAM a vLLM process needs besides any CPU swap/offload: Python, torch, the CUDA context and the
# tokenizer, about 3 GiB each for the API server and every worker (an estimate, see doctor's hint).
PROCESS_RSS = 3 * GiB
# vLLM's CPU backend (vllm/platforms/cpu.py, 0.32): KV blocks of 128 tokens unless the user sets
# --block-size; the block pool keeps one null block back, so usable tokens are (blocks - 1) x 128
# (vllm/v1/core/kv_cache_utils.py). With 1 GiB at 32 KiB per token vLLM estimates 32640 tokens.
CPU_BLOCK_SIZE = 128
V0_SWAP_SPACE_GIB = 4  # vLLM V0's default --swap-space (GiB of pinned CPU memory per GPU)


def _gib(b: float) -> str:
    return f"{b / GiB:.1f} GiB"


def gpu_findings(f: Facts) -> list[Finding]:
    if f.targets and all(t.device == "cpu" for t in f.targets):
        return [
            Finding(
                "ok",
                "gpu-not-needed",
                'no GPU needed: every target runs on vLLM\'s CPU backend (device = "cpu")',
                f.gpu_error or f"{len(f.gpus)} GPU(s) visible, not used",
            )
        ]
    if f.gpu_error is not None:
        cpu_like = [t.unit for t in f.targets if t.device == "gpu" and t.cpu_kv_gib is not None]
        hint = (
            "install the NVIDIA driver and check `nvidia-smi`; to plan for a GPU this host lacks, "
            "use `vllm-guard plan --gpu 24GiB`"
        )
        if cpu_like:
            hint += (
                f"; {', '.join(cpu_like)} set(s) a CPU KV cache size: if it runs vllm-cpu, "
                'set device = "cpu" on the target'
            )
        return [Finding("fail", "gpu-none", "no NVIDIA GPU visible", f.gpu_error, hint)]
    out = [
        Finding(
            "ok",
            "gpu-visible",
            f"{len(f.gpus)} GPU(s) visible" + (" (planned, not real)" if f.gpu_fake else ""),
            "; ".join(
                f"GPU {g.index} {g.name}: {_gib(g.free)} free of {_gib(g.total)}"
                + (f" (CUDA's total; the driver keeps {g.reserved // MiB} MiB more)" if g.reserved else "")
                for g in f.gpus
            )
            + (f"; driver {f.driver_version}" if f.driver_version else ""),
        )
    ]
    for g in f.gpus:
        holders = [p for p in g.processes if p.mib is None or p.mib * MiB >= HELD_WARN]
        if g.used >= HELD_WARN and holders:
            who = ", ".join(
                f"pid {p.pid} ({p.command[:60]}) {p.mib if p.mib is not None else '?'} MiB" for p in holders
            )
            out.append(
                Finding(
                    "warn",
                    "gpu-memory-held",
                    f"GPU {g.index}: {_gib(g.used)} already in use",
                    who,
                    "if these are not the vLLM unit itself, stop them before vLLM starts "
                    "(vLLM refuses when free memory is below total x gpu_memory_utilization)",
                )
            )
    return out


def _smallest(gpus: Sequence[GpuFact], tp: int) -> GpuFact | None:
    used = list(gpus[:tp])
    return min(used, key=lambda g: g.total) if used else None


def model_findings(f: Facts, t: TargetFacts) -> list[Finding]:
    out: list[Finding] = []
    name = t.unit
    if t.model_error is not None:
        return [
            Finding(
                "fail",
                "model-unreadable",
                f"{name}: model {t.model} cannot be read",
                t.model_error,
                "fix the model path in the config or re-download the model",
            )
        ]
    folder = t.folder
    if folder is not None:
        if folder.safetensors == 0:
            if folder.training_files:
                out.append(
                    Finding(
                        "fail",
                        "model-not-safetensors",
                        f"{name}: only training checkpoints in {t.model}",
                        ", ".join(folder.training_files),
                        "vLLM cannot load a training .pt checkpoint: load it in transformers and "
                        "save_pretrained(dir, safe_serialization=True) to write *.safetensors with config.json",
                    )
                )
            elif folder.bin_files:
                out.append(
                    Finding(
                        "warn",
                        "model-pickle-weights",
                        f"{name}: weights are PyTorch .bin pickles, not safetensors",
                        ", ".join(folder.bin_files[:3]),
                        "vLLM loads them, slower and with pickle's risks; convert with save_pretrained(..., "
                        "safe_serialization=True)",
                    )
                )
            else:
                out.append(
                    Finding(
                        "fail",
                        "model-no-weights",
                        f"{name}: no weight files in {t.model}",
                        "no *.safetensors",
                        "download the model's *.safetensors files into the folder",
                    )
                )
        if folder.index_error:
            out.append(
                Finding(
                    "fail",
                    "model-bad-index",
                    f"{name}: the shard index cannot be read",
                    folder.index_error,
                    "re-download model.safetensors.index.json",
                )
            )
        if folder.missing_shards:
            out.append(
                Finding(
                    "fail",
                    "model-missing-shards",
                    f"{name}: {len(folder.missing_shards)} shard(s) named in the index are missing",
                    ", ".join(folder.missing_shards[:5]),
                    "the download is incomplete: fetch the missing files (e.g. huggingface-cli download again)",
                )
            )
        if folder.size_mismatches:
            out.append(
                Finding(
                    "fail",
                    "model-truncated-shards",
                    f"{name}: {len(folder.size_mismatches)} file(s) do not match the size their header promises",
                    ", ".join(f"{n}: {a} bytes, header says {e}" for n, e, a in folder.size_mismatches[:3]),
                    "the download was cut short: re-download those files",
                )
            )
        if folder.header_errors:
            out.append(
                Finding(
                    "fail",
                    "model-bad-safetensors",
                    f"{name}: unreadable safetensors headers",
                    "; ".join(folder.header_errors[:3]),
                    "re-download those files",
                )
            )
        if folder.safetensors and not (folder.missing_shards or folder.size_mismatches or folder.header_errors):
            out.append(
                Finding("ok", "model-files", f"{name}: {folder.safetensors} safetensors file(s), sizes match headers")
            )
    info = t.model_info
    if info is None:
        return out
    out.extend(_quantization_findings(t, info))
    if t.device == "cpu":
        return out + cpu_kv_findings(f, t, info)
    if f.gpu_error is not None or not f.gpus:
        return out
    if len(f.gpus) < t.tp:
        out.append(
            Finding(
                "fail",
                "gpu-too-few",
                f"{name}: tensor_parallel_size {t.tp} needs {t.tp} GPUs",
                f"{len(f.gpus)} visible",
                "lower tensor_parallel_size or make the GPUs visible",
            )
        )
        return out
    small = _smallest(f.gpus, t.tp)
    assert small is not None
    requested = small.total * t.util
    if small.free < requested and not t.unit_active:
        out.append(
            Finding(
                "fail",
                "gpu-free-below-util",
                f"{name}: GPU {small.index} has {_gib(small.free)} free, vLLM will ask for {_gib(requested)}",
                f"gpu_memory_utilization {t.util} x {_gib(small.total)}",
                f"free the GPU (see gpu-memory-held) or lower gpu_memory_utilization to "
                f"{max(0.0, int(small.free / small.total * 100 - 1) / 100):.2f}",
            )
        )
    params = t.params or f.params
    if not t.unit_active:
        # what other processes hold on its GPUs: the releases that count total - free take it from the KV cache
        held = max((sum(p.mib or 0 for p in g.processes) * MiB for g in f.gpus[: t.tp]), default=0)
        params = replace(params, held_by_others=held)
    weights = weights_per_gpu(info, t.tp, params)
    if weights >= requested:
        out.append(
            Finding(
                "fail",
                "model-weights-too-big",
                f"{name}: the weights need {_gib(weights)} per GPU, util {t.util} gives {_gib(requested)}",
                f"{_gib(info.estimated_weight_bytes())} of weights over TP {t.tp}",
                "use a quantized build (AWQ/GPTQ/FP8) as a fallback, or more tensor parallelism",
            )
        )
        return out
    if info.unmodelled_layout:
        return [*out, _kv_not_modelled(name, info)]
    length = t.max_model_len or info.max_context
    b = budget(info, small.total, t.util, tp=t.tp, max_model_len=length, kv_cache_dtype=t.kv_cache_dtype, params=params)
    held = b.longest_request  # for a hybrid model the longest request, not the token figure vLLM prints
    measured = f"KV cache {_gib(max(0, b.kv_bytes))} = {held} tokens at util {t.util}; max_model_len {length}"
    if info.hybrid is not None:
        measured += f" ({info.hybrid.what}; vLLM prints {b.kv_tokens} tokens)"
    if held < length:
        best = max_model_len_at(info, small.total, t.util, t.tp, kv_cache_dtype=t.kv_cache_dtype, params=params)
        need = util_for(info, small.total, length, t.tp, kv_cache_dtype=t.kv_cache_dtype, params=params)
        fix = f"lower max_model_len to {best}" if best >= 2048 else "use FP8 KV cache or more tensor parallelism"
        if need <= 0.95:
            fix += f", or raise gpu_memory_utilization to {need:.2f}"
        out.append(
            Finding(
                "fail",
                "model-kv-too-small",
                f"{name}: the KV cache cannot hold max_model_len",
                measured,
                fix + " (`vllm-guard plan` shows the budget)",
            )
        )
    elif held < length * (1 + (band := kv_band(info, params))):
        out.append(
            Finding(
                "warn",
                "model-kv-tight",
                f"{name}: the KV cache holds max_model_len with under {band:.0%} to spare (the planner's error band)",
                measured,
                "lower max_model_len a little or raise util (`vllm-guard plan`)",
            )
        )
    else:
        out.append(
            Finding(
                "ok",
                "model-fits",
                f"{name}: the model fits with {held / length:.1f}x max_model_len of KV",
                measured,
            )
        )
    blocks = state_block_seqs(info, b, params)
    if blocks is not None and refuses_seqs_above_state_blocks(params):
        # a hybrid model: one state block of its linear-attention layers per sequence in flight
        seqs = default_max_num_seqs(params, small.total)
        safe = state_block_seqs(info, b, params, kv_band(info, params)) or 0
        if seqs > safe:
            out.append(
                Finding(
                    "fail" if seqs > blocks else "warn",
                    "model-seqs-above-state-blocks",
                    f"{name}: max_num_seqs {seqs} against about {blocks} state blocks of the linear-attention layers "
                    "(one per sequence in flight; vLLM refuses to start with more)",
                    f"{b.blocks} blocks of {b.block_size} tokens at util {t.util}; max_num_seqs "
                    + ("as set" if params.max_num_seqs is not None else "vLLM's default"),
                    f"set max_num_seqs to {max(1, safe)} or less, or raise gpu_memory_utilization",
                )
            )
    return out


@dataclass(frozen=True)
class CpuKv:
    """The KV cache of a target on vLLM's CPU backend, as vLLM 0.32 sizes it."""

    explicit: bool  # VLLM_CPU_KVCACHE_SPACE set; else gpu_memory_utilization x host RAM
    requested: int  # explicit: the KV bytes; auto: total RAM x util, which holds the process too
    kv_bytes: int
    per_token: int
    tokens: int  # usable tokens: whole blocks, less the null block


# Methods whose parameters vLLM reads from the checkpoint (get_quant_config: config.json's quantization_config,
# else a file of the method's own beside it); the others (fp8, bitsandbytes, experts_int8, ...) quantize an
# unquantized checkpoint as it loads.
CHECKPOINT_QUANTIZATIONS = frozenset(
    {
        "awq",
        "awq_marlin",
        "gptq",
        "gptq_marlin",
        "gptq_marlin_24",
        "marlin",
        "gptq_bitblas",
        "bitblas",
        "squeezellm",
        "deepspeedfp",
        "modelopt",
        "modelopt_fp4",
    }
)


def _not_quantized_with(method: str | None, info: ModelInfo | None, quant_files: Sequence[str]) -> str | None:
    """The method, where vLLM would stop at "Cannot find the config file for <method>": a method whose parameters
    it reads from the checkpoint, which neither its config.json nor a file beside it declares."""
    m = (method or "").lower()
    if m not in CHECKPOINT_QUANTIZATIONS or info is None or info.quantization is not None or quant_files:
        return None
    return m


# Kernels vLLM may choose for another method's checkpoint when the flag names them (each method's
# override_quantization_method: a GPTQ or AWQ checkpoint runs on Marlin, BitBLAS, the MoE WNA16 kernel, IPEX)
_KERNEL_NAMES = frozenset({"marlin", "bitblas", "moe_wna16", "ipex", "machete"})


def _other_method(method: str | None, info: ModelInfo) -> str | None:
    """The checkpoint's declared method, where the flag names another that is no kernel of it (vLLM stops with
    "Quantization method specified in the model config (X) does not match ..."); None where it may well start."""
    if info.quantization is None or not method:
        return None
    flag = method.lower().replace("-", "_")
    declared = info.quantization.method.lower().replace("-", "_")
    if declared in ("unknown", "") or flag == declared or flag in _KERNEL_NAMES:
        return None
    if flag.startswith(declared + "_") or declared.startswith(flag + "_"):  # gptq -> gptq_marlin, modelopt_fp4
        return None
    return declared


def _quantization_findings(t: TargetFacts, info: ModelInfo) -> list[Finding]:
    """A --quantization the checkpoint is not quantized with, for the target and for each fallback model."""
    out: list[Finding] = []
    quant_files = t.folder.quant_config_files if t.folder is not None else ("?",)  # folder unread: not judged
    method = _not_quantized_with(t.quantization, info, quant_files)
    if method is not None:
        out.append(
            Finding(
                "fail",
                "model-quantization-not-in-checkpoint",
                f"{t.unit}: quantization {method} is asked for, but {t.model} is not quantized with it",
                "config.json has no quantization_config and the folder no quant_config.json / quantize_config.json; "
                f'vLLM will stop with "Cannot find the config file for {method}"',
                "drop quantization from the target's flags (vLLM reads a quantized checkpoint's method from its "
                "config.json), or point the target at a checkpoint quantized with that method",
            )
        )
    declared = _other_method(t.quantization, info)
    if declared is not None:
        out.append(
            Finding(
                "warn",
                "model-quantization-other-method",
                f"{t.unit}: quantization {t.quantization} is asked for, but {t.model} is quantized with {declared}",
                f"config.json's quantization_config says {declared}; vLLM accepts another name only for a kernel of "
                'that method (gptq -> gptq_marlin, awq -> awq_marlin, ...), else it stops with "Quantization method '
                'specified in the model config ... does not match"',
                "drop quantization from the target's flags: vLLM reads the checkpoint's method and picks its kernel",
            )
        )
    for fb in t.fallbacks:
        method = _not_quantized_with(fb.quantization, fb.model_info, fb.quant_config_files)
        if method is not None:
            out.append(  # the target itself starts: a warning, not a reason to hold the deployment
                Finding(
                    "warn",
                    "fallback-quantization-not-in-checkpoint",
                    f"{t.unit}: fallback {fb.model} is not quantized with {method}, which the fallback asks for",
                    f'the guard would start it with --quantization={method} and vLLM stop with "Cannot find the '
                    f'config file for {method}"',
                    "drop quantization from that [[target.fallback]] (vLLM reads the checkpoint's own method), or "
                    "point it at a checkpoint quantized with that method",
                )
            )
    return out


def node_memory(f: Facts) -> tuple[int, int]:
    """(total, available) as vLLM's CPU backend sees them: NUMA node 0 where the host has NUMA."""
    if f.node_total is not None and f.node_available is not None:
        return f.node_total, f.node_available
    return f.mem_total, f.mem_available


def cpu_kv(f: Facts, t: TargetFacts, info: ModelInfo) -> CpuKv:
    per_token = kv_bytes_per_token(info, t.kv_cache_dtype, tp=t.tp)
    if t.cpu_kv_gib is not None:
        requested = kv = t.cpu_kv_gib * GiB
    else:
        # vllm/v1/worker/cpu_worker.py: KV = node total x util - the worker's RSS after loading the weights
        requested = int(node_memory(f)[0] * t.util)
        kv = requested - weights_per_gpu(info, t.tp, t.params or f.params) - PROCESS_RSS
    blocks = max(0, kv) // (per_token * CPU_BLOCK_SIZE)
    return CpuKv(t.cpu_kv_gib is not None, requested, kv, per_token, max(0, blocks - 1) * CPU_BLOCK_SIZE)


def cpu_kv_gib_for(length: int, per_token: int) -> int:
    """The smallest whole VLLM_CPU_KVCACHE_SPACE (GiB) whose usable tokens reach ``length``."""
    blocks = -(-length // CPU_BLOCK_SIZE) + 1  # the null block
    return max(1, -(-blocks * CPU_BLOCK_SIZE * per_token // GiB))


def _kv_not_modelled(name: str, info: ModelInfo) -> Finding:
    return Finding(
        "warn",
        "model-kv-not-modelled",
        f"{name}: the planner cannot check this model's KV cache",
        info.unmodelled_layout,
        "its first start's 'GPU KV cache size' and 'Maximum concurrency' lines tell whether max_model_len "
        "fits; the guard lowers it from what vLLM reports if a start fails",
    )


def cpu_kv_findings(f: Facts, t: TargetFacts, info: ModelInfo) -> list[Finding]:
    """A CPU-backend target: the KV cache comes out of host RAM, and must hold max_model_len."""
    name = t.unit
    kv = cpu_kv(f, t, info)
    total, available = node_memory(f)
    where = "NUMA node 0" if f.node_total is not None else "RAM"
    out: list[Finding] = []
    if total > 0 and not t.unit_active and kv.requested > available:
        if kv.explicit:
            out.append(
                Finding(
                    "fail",
                    "cpu-kv-above-available",
                    f"{name}: the KV cache asks for {_gib(kv.requested)}, {_gib(available)} of {where} is available",
                    f"VLLM_CPU_KVCACHE_SPACE={t.cpu_kv_gib}",
                    "lower cpu_kvcache_space_gib or stop other services (vLLM refuses: 'less than requested "
                    "memory for kv')",
                )
            )
        else:
            fit = max(0.0, int(available / total * 100 - 1) / 100)
            out.append(
                Finding(
                    "fail",
                    "cpu-util-above-available",
                    f"{name}: vLLM will reserve {_gib(kv.requested)} of {where}, {_gib(available)} is available",
                    f"gpu_memory_utilization {t.util} x {_gib(total)} (on the CPU backend the flag is a "
                    f"fraction of {where})",
                    f"lower gpu_memory_utilization to {fit:.2f}, or set cpu_kvcache_space_gib",
                )
            )
    if info.unmodelled_layout:
        return [*out, _kv_not_modelled(name, info)]
    length = t.max_model_len or info.max_context
    source = f"VLLM_CPU_KVCACHE_SPACE={t.cpu_kv_gib}" if kv.explicit else f"util {t.util} x {where}"
    measured = (
        f"KV cache {_gib(max(0, kv.kv_bytes))} ({source}) / {kv.per_token // 1024} KiB per token = "
        f"{kv.tokens} tokens; max_model_len {length}"
    )
    if kv.tokens < length:
        fix = f"lower max_model_len to {kv.tokens}" if kv.tokens >= 2048 else "give the KV cache more RAM"
        fix += f", or set cpu_kvcache_space_gib = {cpu_kv_gib_for(length, kv.per_token)}"
        out.append(
            Finding("fail", "model-kv-too-small", f"{name}: the KV cache cannot hold max_model_len", measured, fix)
        )
    else:
        out.append(
            Finding(
                "ok",
                "model-fits",
                f"{name}: the model fits with {kv.tokens / length:.1f}x max_model_len of KV",
                measured,
            )
        )
    return out


def host_memory_findings(f: Facts) -> list[Finding]:
    out: list[Finding] = []
    if f.mem_total <= 0:
        return [Finding("warn", "host-ram-unknown", "host RAM could not be read", "", "check /proc/meminfo")]
    for t in f.targets:
        workers = t.tp + 1  # the API server process plus one worker per GPU
        swap_space = t.swap_space_gib if t.swap_space_gib is not None else 0.0
        offload = t.cpu_offload_gb or 0.0
        need = workers * PROCESS_RSS + (swap_space + offload) * GiB * t.tp
        on_cpu = ""
        if t.device == "cpu" and t.model_info is not None:
            # the weights and the KV cache live in host RAM too
            weights = t.model_info.estimated_weight_bytes()
            kv = max(0, cpu_kv(f, t, t.model_info).kv_bytes)
            need += weights + kv
            on_cpu = f" + weights {_gib(weights)} + KV cache {_gib(kv)}"
        have = f.mem_available + f.swap_free
        measured = (
            f"{_gib(f.mem_available)} RAM available + {_gib(f.swap_free)} swap free; "
            f"needs about {_gib(need)} ({workers} processes x {_gib(PROCESS_RSS)}"
            + on_cpu
            + (f" + swap_space {swap_space:g} GiB x TP" if swap_space else "")
            + (f" + cpu_offload_gb {offload:g} x TP" if offload else "")
            + ")"
        )
        if have < need:
            out.append(
                Finding(
                    "fail",
                    "host-ram-short",
                    f"{t.unit}: not enough host memory to start vLLM",
                    measured,
                    "lower swap_space / cpu_offload_gb, stop other services, or add swap (`vllm-guard swap`)",
                )
            )
        elif f.mem_available < need:
            out.append(
                Finding(
                    "warn",
                    "host-ram-tight",
                    f"{t.unit}: starting vLLM will push the host into swap",
                    measured,
                    "lower swap_space / cpu_offload_gb or add RAM",
                )
            )
        else:
            out.append(Finding("ok", "host-ram", f"{t.unit}: host RAM is enough to load", measured))
        info = t.model_info
        if info is not None and info.estimated_weight_bytes() > f.mem_total:
            out.append(
                Finding(
                    "warn",
                    "host-ram-below-weights",
                    f"{t.unit}: the weights ({_gib(info.estimated_weight_bytes())}) do not fit in RAM "
                    f"({_gib(f.mem_total)})",
                    "",
                    "loading still works (safetensors are memory-mapped) but every restart rereads the disk",
                )
            )
    return out


def swap_findings(f: Facts) -> list[Finding]:
    out: list[Finding] = []
    if f.swap_total <= 0 or not f.swaps:
        out.append(
            Finding(
                "warn",
                "swap-none",
                "no swap",
                f"RAM {_gib(f.mem_total)}",
                "a host OOM kill ends vLLM at once; a swap file gives the guard time to react: "
                "`vllm-guard swap` shows the plan",
            )
        )
    else:
        used_pct = 100 * (f.swap_total - f.swap_free) / f.swap_total
        status: Status = "warn" if used_pct >= 50 else "ok"
        out.append(
            Finding(
                status,
                "swap-usage",
                f"swap {_gib(f.swap_total)}, {used_pct:.0f}% used",
                ", ".join(f"{s.path} ({_gib(s.size)})" for s in f.swaps),
                "more than half the swap is in use: the host is short of RAM" if status == "warn" else "",
            )
        )
        for s in f.swaps:
            if s.rotational:
                out.append(
                    Finding(
                        "warn",
                        "swap-rotational",
                        f"swap {s.path} is on a rotational disk",
                        "rotational=1",
                        "swapping to a spinning disk stalls the host; put swap on an SSD/NVMe",
                    )
                )
            if s.kind == "file" and s.fstype in ("btrfs",):
                out.append(
                    Finding(
                        "warn",
                        "swap-fs",
                        f"swap file {s.path} is on btrfs",
                        s.fstype,
                        "btrfs swap files need NOCOW and no snapshots of that subvolume; "
                        "see `btrfs filesystem mkswapfile`",
                    )
                )
            elif s.kind == "file" and s.fstype in ("zfs", "nfs", "nfs4", "tmpfs", "overlay", "cifs", "fuse"):
                out.append(
                    Finding(
                        "fail",
                        "swap-fs",
                        f"swap file {s.path} is on {s.fstype}",
                        s.fstype,
                        "this file system does not support swap files reliably; move it to ext4 or xfs",
                    )
                )
    if f.swappiness is not None and f.swap_total > 0:
        if f.swappiness > SWAPPINESS_ADVICE:
            out.append(
                Finding(
                    "warn",
                    "swap-swappiness",
                    f"vm.swappiness is {f.swappiness}",
                    f"advice: {SWAPPINESS_ADVICE}",
                    f"`vllm-guard swap --swappiness {SWAPPINESS_ADVICE} --apply` writes /etc/sysctl.d and applies it",
                )
            )
        else:
            out.append(Finding("ok", "swap-swappiness", f"vm.swappiness is {f.swappiness}"))
    return out


def shm_findings(f: Facts) -> list[Finding]:
    tp = max((t.tp for t in f.targets), default=1)
    if f.shm_bytes is None:
        return [
            Finding(
                "warn" if tp > 1 else "ok",
                "shm-unknown",
                "/dev/shm could not be measured",
                "",
                "mount a tmpfs on /dev/shm" if tp > 1 else "",
            )
        ]
    if tp > 1 and f.shm_bytes < SHM_MIN_TP:
        return [
            Finding(
                "fail",
                "shm-small",
                f"/dev/shm is {f.shm_bytes / MiB:.0f} MiB with tensor parallelism {tp}",
                f"needs at least {SHM_MIN_TP / MiB:.0f} MiB",
                "NCCL uses /dev/shm between GPUs: enlarge it (containers: --ipc=host or --shm-size=16g)",
            )
        ]
    return [Finding("ok", "shm", f"/dev/shm is {f.shm_bytes / GiB:.1f} GiB")]


def nofile_findings(f: Facts) -> list[Finding]:
    """The vLLM unit's LimitNOFILE= when the unit says; else this process's own limit."""
    out: list[Finding] = []
    limits = [(t.unit + ".service", t.limit_nofile) for t in f.targets if t.limit_nofile is not None]
    if not limits and f.nofile_soft is not None:
        limits = [("this shell", (f.nofile_soft, f.nofile_hard or f.nofile_soft))]
    for who, (soft, hard) in limits:
        if max(soft, hard) < NOFILE_MIN:
            out.append(
                Finding(
                    "warn",
                    "nofile-low",
                    f"{who}: open-file limit {soft} (hard {hard})",
                    f"vLLM wants {NOFILE_MIN}",
                    "many concurrent requests need file descriptors: set LimitNOFILE=65536 in the vLLM unit",
                )
            )
        else:
            out.append(Finding("ok", "nofile", f"{who}: open-file limit {soft} (hard {hard})"))
    return out


def port_findings(f: Facts) -> list[Finding]:
    out = []
    for t in f.targets:
        if t.port_in_use is None:
            continue
        if t.port_in_use and not t.unit_active:
            out.append(
                Finding(
                    "fail",
                    "port-in-use",
                    f"{t.unit}: port {t.port} on {t.host} is taken by another program",
                    f"{t.host}:{t.port}",
                    f"find it with `ss -ltnp 'sport = :{t.port}'` or change the port",
                )
            )
        elif t.port_in_use:
            out.append(Finding("ok", "port", f"{t.unit}: port {t.port} is in use by the running unit"))
        else:
            out.append(Finding("ok", "port", f"{t.unit}: port {t.port} is free"))
    return out


def software_findings(f: Facts) -> list[Finding]:
    out = []
    if f.vllm_error is not None:
        out.append(
            Finding(
                "fail",
                "vllm-missing",
                "vLLM cannot be imported by the unit's python",
                f.vllm_error,
                "install vLLM into the python the unit's command uses (pip install vllm)",
            )
        )
    elif f.vllm_version is not None:
        out.append(Finding("ok", "vllm", f"vLLM {f.vllm_version} importable"))
    for t in f.targets:
        if t.vllm_error is not None:
            out.append(
                Finding(
                    "fail",
                    "vllm-missing",
                    f"{t.unit}: vLLM cannot be imported by the unit's python",
                    t.vllm_error,
                    "install vLLM into the python the unit's command uses (pip install vllm)",
                )
            )
    if f.journal_checked:
        if f.journal_error is not None:
            out.append(
                Finding(
                    "warn",
                    "journal-unreadable",
                    "the journal cannot be read",
                    f.journal_error,
                    "the guard reads vLLM's logs from the journal: run as root or in group systemd-journal",
                )
            )
        else:
            out.append(Finding("ok", "journal", "the journal is readable"))
    if f.guard_active is not None:
        if f.guard_active:
            out.append(Finding("ok", "guard-running", "vllm-guard.service is running"))
        else:
            out.append(
                Finding(
                    "warn",
                    "guard-not-running",
                    "vllm-guard.service is not running",
                    "",
                    "`systemctl enable --now vllm-guard` (after `vllm-guard install`)",
                )
            )
    return out


def unit_findings(f: Facts) -> list[Finding]:
    out = []
    if f.config_error is not None:
        out.append(
            Finding(
                "fail",
                f.config_ref,
                "the configuration cannot be used",
                f.config_error,
                "fix the configuration (or write one with `vllm-guard init --model DIR`)",
            )
        )
        return out
    for t in f.targets:
        if t.unit_state == "missing":
            out.append(
                Finding(
                    "fail",
                    "unit-missing",
                    f"{t.unit}.service is not installed",
                    "",
                    "`vllm-guard install` writes it and reloads systemd",
                )
            )
        elif t.unit_state == "differs":
            out.append(
                Finding(
                    "warn",
                    "unit-stale",
                    f"{t.unit}.service differs from what the config renders",
                    t.unit_diff,
                    "`vllm-guard install` rewrites it",
                )
            )
        elif t.unit_state == "matches":
            out.append(Finding("ok", "unit", f"{t.unit}.service matches the config"))
        if t.exposure is not None:
            if t.exposure <= EXPOSURE_MAX:
                out.append(Finding("ok", "unit-exposure", f"{t.unit}.service: exposure {t.exposure:.1f} (confined)"))
            else:
                out.append(
                    Finding(
                        "warn",
                        "unit-exposure",
                        f"{t.unit}.service: exposure {t.exposure:.1f}, above {EXPOSURE_MAX}",
                        f"systemd-analyze security {t.unit}.service",
                        "`vllm-guard install` renders the confined unit; loosen single directives with "
                        "[target.hardening] only where the site needs it",
                    )
                )
        if t.env_state == "missing":
            out.append(
                Finding(
                    "fail",
                    "env-missing",
                    f"{t.unit}.env is missing",
                    "",
                    "`vllm-guard install` writes it (the unit reads its flags from it)",
                )
            )
        elif t.env_state == "changed":
            out.append(
                Finding(
                    "warn",
                    "env-changed",
                    f"{t.unit}.env differs from the base flags",
                    t.env_detail,
                    "the guard lowered flags after failures; `vllm-guard reset` restores the base ones",
                )
            )
        elif t.env_state == "base_changed":
            out.append(
                Finding(
                    "warn",
                    "env-base-changed",
                    f"{t.unit}.env holds flags from before the config's base flags changed",
                    t.env_detail,
                    "a running guard starts over from the new base flags when it reloads (`systemctl reload "
                    "vllm-guard`); `vllm-guard install --reset-flags` writes them now",
                )
            )
        elif t.env_state == "base":
            out.append(Finding("ok", "env", f"{t.unit}.env holds the base flags"))
    return out


RULES: tuple[Callable[[Facts], list[Finding]], ...] = (
    unit_findings,
    gpu_findings,
    host_memory_findings,
    swap_findings,
    shm_findings,
    nofile_findings,
    port_findings,
    software_findings,
)


def judge(f: Facts) -> list[Finding]:
    """Every finding, in a fixed order: config and units, GPUs, models, host, software."""
    out: list[Finding] = []
    for rule in RULES[:2]:
        out.extend(rule(f))
    for t in f.targets:
        out.extend(model_findings(f, t))
    for rule in RULES[2:]:
        out.extend(rule(f))
    return out


def exit_code(findings: Sequence[Finding]) -> ExitCode:
    if any(x.status == "fail" for x in findings):
        return ExitCode.FAIL
    if any(x.status == "warn" for x in findings):
        return ExitCode.WARN
    return ExitCode.OK
