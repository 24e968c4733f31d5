"""Planner math: how vLLM splits a GPU between weights, activations and the KV cache.

Pure. It mirrors vLLM's own accounting, so its predictions can be checked against what vLLM prints:

    V1 (vllm/v1/worker/gpu_worker.py, ``Worker.determine_available_memory``):
        requested   = total GPU memory x gpu_memory_utilization
        KV memory   = requested - (weights + torch activation peak of a dummy run + non-torch increase)
        [recent versions, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1: minus an estimate of CUDA graphs]
    V1 (vllm/v1/core/kv_cache_utils.py): blocks = KV memory // (page size x layers);
        "GPU KV cache size: N tokens" = blocks x block_size
    V0 (vllm/worker/worker.py, ``determine_num_available_blocks``): the same budget, logged as
        "# GPU blocks: N" (tokens = N x block_size) and, from 0.6.4, "model weights take X GiB;
        non_torch_memory takes Y GiB; PyTorch activation peak memory takes Z GiB". Its "GB" are GiB.

Known traps, each a named parameter below with where its value comes from:

* The activation peak is not a constant: the profile run pushes ``max_num_batched_tokens`` tokens
  through the model, so it grows with that flag. V0 switched chunked prefill on by default above a
  32K max_model_len, which drops the profiled batch to a small chunk, so a longer max_model_len can
  leave *more* KV room than a shorter one.
* Under tensor parallelism each worker profiles its own GPU and vLLM takes the minimum: the
  smallest GPU decides.
* MLA models (DeepSeek-V2 style) store one latent vector per token and layer, not split by TP.
* FP8 KV cache halves the bytes per token.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from vllm_guard.core.modelinfo import ModelInfo

GiB = 1 << 30
MiB = 1 << 20

Engine = Literal["v1", "v0"]


@dataclass(frozen=True)
class PlannerParams:
    """vLLM's costs besides weights and KV cache. Every default says where its value comes from."""

    engine: Engine = "v1"  # V1 is the only engine from vLLM 0.10 on (V0 removed)
    # CacheConfig.block_size: 16 on CUDA (vllm/config/cache.py); KV capacity is a whole number of blocks.
    block_size: int = 16
    # None: vLLM's default for the OpenAI server (see default_batched_tokens()).
    max_num_batched_tokens: int | None = None
    # None: vLLM's default (see default_max_num_seqs()).
    max_num_seqs: int | None = None
    # Activation peak per profiled token, in copies of the 16-bit compute dtype: the MLP keeps gate_up
    # (2 x intermediate) and the activated half (1 x intermediate) alive at once, plus about 2 x
    # hidden_size of residual/normed stream. 2 x hidden + 3 x intermediate is the fit to the published
    # start-up logs in bench/RESULTS-planner.md (leave-one-out: 10 of 12 GPU cases within 10%).
    act_hidden_copies: float = 2.0
    act_intermediate_copies: float = 3.0
    # The dummy sampler run holds float32 logits for max_num_seqs rows of the vocabulary, plus the
    # sorted/softmaxed copy top-p/top-k make (vllm/v1/sample/sampler.py): 2 copies of seqs x vocab x 4 B.
    sampler_logit_copies: float = 2.0
    # Non-torch memory that grows during the profile run (cuBLAS/cuDNN workspaces, NCCL buffers):
    # V0 0.6.4+ logs print 0.1-0.6 GiB on one GPU and up to ~1.5 GiB with TP (custom all-reduce
    # buffers); these values fit the published logs in bench/RESULTS-planner.md.
    non_torch_bytes: int = int(0.35 * GiB)
    non_torch_bytes_tp: int = int(0.9 * GiB)
    # Recent V1 (opt-in with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, the default in the newest
    # releases) subtracts the CUDA graph pool from the KV budget. vLLM's own log line
    # "Graph capturing finished in N secs, took X GiB" reports 0.2-1.5 GiB for 7B-72B models.
    estimate_cudagraphs: bool = False
    cudagraph_bytes: int = int(0.6 * GiB)
    enforce_eager: bool = False  # no CUDA graphs at all
    # V0: chunked prefill was switched on by default when max_model_len > 32768
    # (vllm/engine/arg_utils.py, EngineArgs.create_engine_config, 0.5.x-0.6.x) ...
    v0_chunked_prefill_above: int = 32768
    # ... and then the profiled batch is max_num_batched_tokens = 2048 (SchedulerConfig default with
    # chunked prefill, _DEFAULT_MAX_NUM_BATCHED_TOKENS); without it, max(max_model_len, 2048).
    v0_chunked_batched_tokens: int = 2048
    v0_min_batched_tokens: int = 2048
    # Calibration (from numbers vLLM reported on this host); 1.0 / 0 / None: not calibrated.
    activation_scale: float = 1.0
    extra_bytes: int = 0
    weights_bytes: int | None = None  # vLLM's "model weights take X GiB" / "Loading model weights took X GiB"
    measured: tuple[str, ...] = ()  # the parts calibrate() took from vLLM's own figures (the budget names them)


# Where each parameter comes from, for the plan's table and `plan --json`.
PARAM_SOURCES: dict[str, str] = {
    "block_size": "vLLM CacheConfig default block_size=16 on CUDA",
    "max_num_batched_tokens": "vLLM EngineArgs defaults (V1: 8192 on GPUs >= 70 GiB, else 2048; "
    "V0: max(max_model_len, 2048), or 2048 with chunked prefill)",
    "max_num_seqs": "vLLM EngineArgs defaults (V1: 1024 on GPUs >= 70 GiB, else 256; V0: 256)",
    "activation": "profile run of max_num_batched_tokens tokens: (2 x hidden + 3 x intermediate/TP) "
    "x 2 bytes per token, fitted to published start-up logs (bench/RESULTS-planner.md)",
    "sampler": "dummy sampler run: 2 x max_num_seqs x vocab x 4 bytes (float32 logits and their sorted copy)",
    "non_torch": "V0 0.6.4+ 'non_torch_memory takes X GiB' lines: ~0.35 GiB on one GPU, ~0.9 GiB under TP",
    "cudagraphs": "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (recent V1): ~0.6 GiB, "
    "vLLM's 'Graph capturing ... took X GiB'",
    "v0_chunked_prefill": "V0 turned chunked prefill on above max_model_len 32768, profiling only 2048 tokens",
    "weights": "safetensors headers (exact tensor bytes) divided by TP; vLLM's 'model weights take X GiB'",
    "kv_per_token": "2 (K and V) x layers x KV heads per GPU x head_dim x KV dtype bytes; FP8 KV halves it",
    "gib": "vLLM's 'GB' in V0 logs are GiB (it divides by 2**30)",
}


def default_batched_tokens(params: PlannerParams, gpu_bytes: int, max_model_len: int) -> int:
    """The max_num_batched_tokens vLLM would use, i.e. the size of its profile run."""
    if params.max_num_batched_tokens is not None:
        return params.max_num_batched_tokens
    if params.engine == "v0":
        if max_model_len > params.v0_chunked_prefill_above:
            return params.v0_chunked_batched_tokens
        return max(max_model_len, params.v0_min_batched_tokens)
    # vllm/engine/arg_utils.py EngineArgs._set_default_args (V1, OpenAI server): 8192 on GPUs with
    # at least 70 GiB, 2048 on smaller ones.
    return 8192 if gpu_bytes >= 70 * GiB else 2048


def default_max_num_seqs(params: PlannerParams, gpu_bytes: int) -> int:
    if params.max_num_seqs is not None:
        return params.max_num_seqs
    if params.engine == "v0":
        return 256  # SchedulerConfig.max_num_seqs default in V0
    return 1024 if gpu_bytes >= 70 * GiB else 256  # EngineArgs._set_default_args (V1)


def kv_dtype_bytes(info: ModelInfo, kv_cache_dtype: str) -> int:
    """Bytes per KV element: 1 for FP8 KV cache, else the model's compute dtype (float32 served as 16 bit)."""
    if kv_cache_dtype.startswith("fp8"):
        return 1
    if kv_cache_dtype in ("bfloat16", "float16", "half"):
        return 2
    return 2 if info.dtype_bytes >= 2 else int(info.dtype_bytes) or 2


def kv_heads_per_gpu(info: ModelInfo, tp: int) -> int:
    """vLLM splits KV heads across TP ranks and replicates them when TP exceeds the head count."""
    return max(1, info.kv_heads // max(1, tp))


def layers_per_stage(info: ModelInfo, pp: int = 1) -> int:
    """Decoder layers on the fullest pipeline stage (vLLM splits them evenly; the first stages take a remainder)."""
    return math.ceil(info.num_layers / max(1, pp))


def kv_bytes_per_token(info: ModelInfo, kv_cache_dtype: str = "auto", *, tp: int = 1, pp: int = 1) -> int:
    """KV cache bytes for one token on one GPU (tp=1, pp=1: the whole model).

    Standard attention: 2 (K and V) x layers x KV heads x head_dim x dtype bytes.
    MLA: one latent vector (kv_lora_rank + qk_rope_head_dim) per layer, the same on every TP rank.
    Under pipeline parallelism a GPU holds the KV cache of its stage's layers only.
    """
    b = kv_dtype_bytes(info, kv_cache_dtype)
    layers = layers_per_stage(info, pp)
    if info.is_mla:
        entry = info.kv_lora_rank + info.qk_rope_head_dim
        if kv_cache_dtype == "fp8_ds_mla":
            # FlashMLA's FP8 layout: 512 fp8 values + 4 float32 scales + 64 bf16 rope values = 656 bytes
            return layers * 656
        return layers * entry * b
    return 2 * layers * kv_heads_per_gpu(info, tp) * info.head_dim * b


def weights_per_gpu(info: ModelInfo, tp: int, params: PlannerParams | None = None, *, pp: int = 1) -> int:
    """Weight bytes on the fullest GPU: vLLM's own figure when calibrated, else the model's bytes split by TP
    and, under pipeline parallelism, by stage (the layers split evenly; the embedding sits on the first
    stage and the LM head on the last, so the fullest stage holds one of them)."""
    if params is not None and params.weights_bytes is not None:
        return params.weights_bytes
    total = info.estimated_weight_bytes()
    if pp > 1:
        embed = int(info.vocab_size * info.hidden_size * min(2.0, max(1.0, info.dtype_bytes)))
        copies = 1 if info.tie_word_embeddings else 2
        layers = max(0, total - copies * embed)
        total = math.ceil(layers * layers_per_stage(info, pp) / max(1, info.num_layers)) + embed
    return math.ceil(total / max(1, tp))


def activation_bytes(info: ModelInfo, batched_tokens: int, max_num_seqs: int, tp: int, params: PlannerParams) -> int:
    """The torch activation peak of vLLM's profile run on one GPU."""
    dt = 2  # activations run in 16-bit even for quantized weights
    if info.is_moe:
        inter = info.experts_per_token * info.moe_intermediate_size + info.shared_expert_intermediate_size
    else:
        inter = info.intermediate_size
    per_token = dt * (params.act_hidden_copies * info.hidden_size + params.act_intermediate_copies * inter / max(1, tp))
    sampler = params.sampler_logit_copies * min(max_num_seqs, batched_tokens) * info.vocab_size * 4
    return int(params.activation_scale * (batched_tokens * per_token + sampler))


@dataclass(frozen=True)
class Budget:
    """One GPU's memory, as vLLM will split it."""

    gpu_bytes: int
    util: float
    requested: int
    weights: int
    activation: int
    non_torch: int
    cudagraphs: int
    extra: int
    kv_bytes: int
    kv_per_token: int
    blocks: int
    kv_tokens: int
    batched_tokens: int
    max_num_seqs: int
    block_size: int = 16
    # where the parts come from (the rows name them): see budget()
    weights_source: str = "safetensors headers / TP"
    graphs: str = "off"  # "estimate" (subtracted), "eager" (--enforce-eager: none captured), "off" (not subtracted)
    measured: tuple[str, ...] = ()  # parts taken from vLLM's own log (calibration)

    def rows(self) -> list[tuple[str, str, str]]:
        def g(b: int) -> str:
            return f"{b / GiB:.2f} GiB"

        def src(part: str, estimate: str, measured: str) -> str:
            return measured if part in self.measured else estimate

        rows = [
            ("GPU memory (smallest GPU)", g(self.gpu_bytes), "--gpu / NVML / the calibration log"),
            ("x gpu_memory_utilization", f"{self.util:.2f}", "flag"),
            ("= requested by vLLM", g(self.requested), "vLLM: total x util"),
            ("- model weights", g(self.weights), self.weights_source),
            (
                f"- activation peak ({self.batched_tokens} tokens, {self.max_num_seqs} seqs)",
                g(self.activation),
                src(
                    "activation",
                    "profile run of max_num_batched_tokens: tokens x (2 hidden + 3 intermediate/TP) x 2 B + sampler",
                    "vLLM's 'activation peak' in the calibration log, scaled to these batch sizes",
                ),
            ),
            (
                "- non-torch memory",
                g(self.non_torch),
                src("non_torch", "V0 'non_torch_memory' log lines", "vLLM's 'non_torch_memory' in the calibration log"),
            ),
        ]
        if self.graphs == "estimate":
            rows.append(
                (
                    "- CUDA graphs (estimate)",
                    g(self.cudagraphs),
                    src(
                        "cudagraphs",
                        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
                        "vLLM's 'Estimated CUDA graph memory' in the calibration log",
                    ),
                )
            )
        elif self.graphs == "eager":
            rows.append(("- CUDA graphs", g(0), "none captured: --enforce-eager"))
        if self.extra:
            rows.append(("- calibration correction", g(self.extra), "numbers vLLM reported on this host"))
        kv_note = "vLLM: requested - everything above"
        if self.kv_bytes < 0:
            kv_note += " (short: vLLM refuses to start)"
        rows += [
            ("= KV cache", g(self.kv_bytes), kv_note),
            (
                "KV bytes per token",
                f"{self.kv_per_token / 1024:.1f} KiB",
                "2 x layers (of the PP stage) x KV heads/TP x head_dim x dtype",
            ),
            ("KV capacity", f"{self.kv_tokens} tokens", f"{self.blocks} blocks of {self.block_size}"),
        ]
        return rows


def budget(
    info: ModelInfo,
    gpu_bytes: int,
    util: float,
    *,
    tp: int = 1,
    pp: int = 1,
    max_model_len: int | None = None,
    kv_cache_dtype: str = "auto",
    params: PlannerParams | None = None,
) -> Budget:
    """The budget of one GPU (under TP or PP, pass the smallest GPU: vLLM takes the minimum over workers)."""
    p = params or PlannerParams()
    length = max_model_len or info.max_context
    requested = int(gpu_bytes * util)
    weights = weights_per_gpu(info, tp, p, pp=pp)
    batched = default_batched_tokens(p, gpu_bytes, length)
    seqs = default_max_num_seqs(p, gpu_bytes)
    act = activation_bytes(info, batched, seqs, tp, p)
    non_torch = p.non_torch_bytes_tp if tp * pp > 1 else p.non_torch_bytes
    graphs_mode = "eager" if p.enforce_eager else ("estimate" if p.estimate_cudagraphs else "off")
    graphs = p.cudagraph_bytes if graphs_mode == "estimate" else 0
    kv = requested - weights - act - non_torch - graphs - p.extra_bytes
    per_token = kv_bytes_per_token(info, kv_cache_dtype, tp=tp, pp=pp)
    blocks = max(0, kv // (per_token * p.block_size))
    split = " / TP" + (", per PP stage (its layers and one embedding)" if pp > 1 else "")
    if "weights" in p.measured:
        weights_source = "vLLM's 'model weights take' / 'Model loading took' in the calibration log"
    elif info.weights is not None:
        weights_source = "safetensors headers (exact tensor bytes)" + split
    else:
        weights_source = "estimate from config.json (parameters x dtype)" + split
    return Budget(
        gpu_bytes=gpu_bytes,
        util=util,
        requested=requested,
        weights=weights,
        activation=act,
        non_torch=non_torch,
        cudagraphs=graphs,
        extra=p.extra_bytes,
        kv_bytes=kv,
        kv_per_token=per_token,
        blocks=blocks,
        kv_tokens=blocks * p.block_size,
        batched_tokens=batched,
        max_num_seqs=seqs,
        block_size=p.block_size,
        weights_source=weights_source,
        graphs=graphs_mode,
        measured=p.measured,
    )


def kv_tokens_at(
    info: ModelInfo,
    gpu_bytes: int,
    util: float,
    tp: int = 1,
    *,
    pp: int = 1,
    max_model_len: int | None = None,
    kv_cache_dtype: str = "auto",
    params: PlannerParams | None = None,
) -> int:
    """How many tokens vLLM's KV cache will hold ("GPU KV cache size: N tokens")."""
    return budget(
        info, gpu_bytes, util, tp=tp, pp=pp, max_model_len=max_model_len, kv_cache_dtype=kv_cache_dtype, params=params
    ).kv_tokens


def max_model_len_at(
    info: ModelInfo,
    gpu_bytes: int,
    util: float,
    tp: int = 1,
    *,
    pp: int = 1,
    kv_cache_dtype: str = "auto",
    params: PlannerParams | None = None,
    limit: int | None = None,
    headroom: float = 0.0,
) -> int:
    """The largest max_model_len vLLM accepts at this util (its KV cache must hold one full request), or with
    ``headroom`` the largest whose request the KV cache holds ``1 + headroom`` times over: the longest the
    planner can promise when its own figure may be that much too high.

    Capped at the model's context (or ``limit``); 0 when not even one block fits. Under V0 the answer
    can jump up above 32K, where chunked prefill shrinks the profile run.
    """
    p = params or PlannerParams()
    cap = min(limit or info.max_context, info.max_context)

    def need(length: int) -> int:
        return math.ceil(length * (1 + headroom) - 1e-9)

    def fits(length: int) -> bool:
        held = kv_tokens_at(
            info, gpu_bytes, util, tp, pp=pp, max_model_len=length, kv_cache_dtype=kv_cache_dtype, params=p
        )
        return held >= need(length)

    best = 0
    lo, hi = 1, cap
    if p.engine == "v0" and cap > p.v0_chunked_prefill_above and p.max_num_batched_tokens is None:
        # two regimes: up to 32K (profile grows with the length) and above (fixed chunk)
        above = kv_tokens_at(
            info, gpu_bytes, util, tp, pp=pp, max_model_len=cap, kv_cache_dtype=kv_cache_dtype, params=p
        )
        longest = min(cap, math.floor(above / (1 + headroom) + 1e-9))
        if longest > p.v0_chunked_prefill_above:
            best = longest
        hi = p.v0_chunked_prefill_above
    # capacity falls (weakly) as the length grows, so the set of lengths that fit is an interval from 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best = max(best, mid)
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def util_for(
    info: ModelInfo,
    gpu_bytes: int,
    max_model_len: int,
    tp: int = 1,
    *,
    pp: int = 1,
    kv_cache_dtype: str = "auto",
    params: PlannerParams | None = None,
    headroom: float = 0.0,
) -> float:
    """The smallest gpu_memory_utilization (rounded up to 0.01) whose KV cache holds
    ``max_model_len x (1 + headroom)`` tokens. May exceed 1.0 when no util can fit it."""
    p = params or PlannerParams()
    b0 = budget(
        info, gpu_bytes, 0.0, tp=tp, pp=pp, max_model_len=max_model_len, kv_cache_dtype=kv_cache_dtype, params=p
    )
    fixed = b0.weights + b0.activation + b0.non_torch + b0.cudagraphs + b0.extra
    need_tokens = math.ceil(max_model_len * (1 + headroom))
    need_blocks = math.ceil(need_tokens / p.block_size)
    need = fixed + need_blocks * p.block_size * b0.kv_per_token
    util = round(math.ceil(need / gpu_bytes * 100 - 1e-9) / 100, 2)
    # the budget floors total x util to whole bytes: a util that lands a byte short takes the next hundredth
    if int(gpu_bytes * util) < need:
        util = round(util + 0.01, 2)
    return util


@dataclass(frozen=True)
class Plan:
    """A first-fit configuration, the budget behind it, and the edge the planner's error band leaves."""

    fits: bool
    util: float
    max_model_len: int  # 0: no length fits
    max_num_seqs: int
    tp: int
    kv_cache_dtype: str
    budget: Budget
    concurrency: float  # how many full-length requests the KV cache holds at once
    notes: tuple[str, ...] = ()
    params: PlannerParams = field(default_factory=PlannerParams)
    # The edge at the plan's util: the largest max_model_len the planner predicts vLLM accepts (its KV cache
    # holds one request), and the largest it can promise when its figure may be ``band`` too high.
    edge: int = 0
    safe_edge: int = 0
    band: float = 0.0
    # What was asked for (the model's context when nothing was), and the budget at that length.
    requested_max_model_len: int = 0
    requested_budget: Budget | None = None
    pp: int = 1

    @property
    def edge_limited_by_context(self) -> bool:
        return self.edge > 0 and self.budget.kv_tokens > self.edge

    def table(self) -> list[tuple[str, str, str]]:
        """Rows (item, value, where the number comes from) a person can check by hand."""
        rows = list(self.budget.rows())
        rows.append(
            (
                "max_model_len",
                str(self.max_model_len),
                f"at or below the edge less the planner's {self.band:.0%} error band ({self.safe_edge})",
            )
        )
        rows.append(("concurrency at max_model_len", f"{self.concurrency:.2f}x", "KV capacity / max_model_len"))
        return rows

    def flags(self) -> dict[str, object]:
        """The flags, named as vLLM's (and the config's [target.flags]) options; no max_model_len when none fits,
        and the others only where they differ from vLLM's defaults."""
        out: dict[str, object] = {"gpu_memory_utilization": self.util}
        if self.max_model_len > 0:
            out["max_model_len"] = self.max_model_len
        out["max_num_seqs"] = self.max_num_seqs
        if self.params.max_num_batched_tokens is not None:
            out["max_num_batched_tokens"] = self.params.max_num_batched_tokens
        if self.tp != 1:
            out["tensor_parallel_size"] = self.tp
        if self.pp != 1:
            out["pipeline_parallel_size"] = self.pp
        if self.kv_cache_dtype != "auto":
            out["kv_cache_dtype"] = self.kv_cache_dtype
        if self.params.block_size != 16:
            out["block_size"] = self.params.block_size
        if self.params.enforce_eager:
            out["enforce_eager"] = True
        return out


# Planning margins. 0.90 is vLLM's default util; 0.95 the highest the planner proposes, leaving
# room for the CUDA context and allocator fragmentation outside vLLM's accounting.
DEFAULT_UTIL = 0.90
MAX_UTIL = 0.95
# The planner's error band: how much too high its KV figure may be. bench/RESULTS-planner.md measures it on
# published start-up logs: at most +8.5% from config.json alone (the cases within its model), at most +5.8%
# once calibrated on another start of the same model. A recommended max_model_len is never above the edge
# less this band (``Plan.safe_edge``); bench/bench_planner_accuracy.py fails when a measured error leaves it.
KV_MARGIN = 0.10
CALIBRATED_MARGIN = 0.06
MIN_USEFUL_LEN = 2048  # shorter is no use for chat (the config floors use the same number)


def first_fit(
    info: ModelInfo,
    gpus: Sequence[int],
    tp: int = 1,
    *,
    pp: int = 1,
    max_model_len: int | None = None,
    kv_cache_dtype: str = "auto",
    free: Sequence[int] | None = None,
    util: float | None = None,
    params: PlannerParams | None = None,
    margin: float = KV_MARGIN,
) -> Plan:
    """The first configuration that fits: vLLM's default util (or the one asked for), the model's
    full context (or the one asked for) if the KV cache holds it with the margin, else a higher util
    up to 0.95 (only if the GPUs' free memory allows it), else a shorter max_model_len.

    ``gpus`` are the total bytes of the GPUs vLLM will use (the first ``tp x pp``); ``free`` their free bytes.
    """
    p = params or PlannerParams()
    world = tp * pp
    used = list(gpus[:world]) if len(gpus) >= world else list(gpus) + [gpus[-1]] * (world - len(gpus)) if gpus else []
    if not used:
        raise ValueError("first_fit needs at least one GPU size")
    notes: list[str] = []
    smallest = min(used)
    if len(set(used)) > 1:
        notes.append(
            f"GPUs differ in size; the smallest ({smallest / GiB:.1f} GiB) decides: vLLM takes every worker's minimum"
        )
    util_cap = MAX_UTIL
    if free is not None:
        free_used = list(free[:world])
        tightest = min(f / t for f, t in zip(free_used, used, strict=False)) if free_used else 1.0
        # vLLM refuses to start when free memory is below total x util (gpu_worker.py "Free memory on device")
        free_cap = math.floor((tightest - 0.01) * 100) / 100
        if free_cap < util_cap:
            util_cap = free_cap
            notes.append(f"other processes hold GPU memory: util capped at {util_cap:.2f} by free memory")
    if util is not None and util > MAX_UTIL:
        notes.append(
            f"util {util:.2f} as asked, above {MAX_UTIL}, the highest the planner proposes: little is left for "
            "the CUDA context and allocator fragmentation outside vLLM's accounting"
        )
        if util_cap >= MAX_UTIL:  # free memory did not cap it lower: the util asked for is planned as asked
            util_cap = util
    base_util = min(util if util is not None else DEFAULT_UTIL, util_cap)
    want = min(max_model_len or info.max_context, info.max_context)
    if max_model_len is not None and max_model_len > info.max_context:
        notes.append(f"asked for {max_model_len} tokens; the model's config allows {info.max_context}")

    def holds(length: int, u: float) -> bool:
        held = kv_tokens_at(info, smallest, u, tp, pp=pp, max_model_len=length, kv_cache_dtype=kv_cache_dtype, params=p)
        return held >= math.ceil(length * (1 + margin) - 1e-9)

    def round_down(n: int, u: float) -> int:
        """A round length at or below ``n`` (whole KiB of tokens from 4K, else whole blocks) that the KV cache
        still holds with the band: under V0 a shorter length can hold less (at 32K and below vLLM profiles the
        whole length; above, one chunk), so each candidate is checked, and ``n`` itself holds."""
        for cand in (n // 1024 * 1024 if n >= 4096 else 0, n // p.block_size * p.block_size):
            if cand > 0 and holds(cand, u):
                return cand
        return n

    def plan_at(u: float, length: int, fits: bool) -> Plan:
        edge = max_model_len_at(info, smallest, u, tp, pp=pp, kv_cache_dtype=kv_cache_dtype, params=p)
        safe = max_model_len_at(info, smallest, u, tp, pp=pp, kv_cache_dtype=kv_cache_dtype, params=p, headroom=margin)
        if length > safe:
            # the safety rule: a recommended length is never above the edge the planner's error band allows
            length = round_down(safe, u)
            fits = fits and length >= MIN_USEFUL_LEN
        batched = p.max_num_batched_tokens
        if p.engine == "v0" and batched is not None and batched < length <= p.v0_chunked_prefill_above:
            # V0 without chunked prefill (its default up to 32K) refuses a max_model_len above
            # max_num_batched_tokens ("max_num_batched_tokens (X) is smaller than max_model_len (Y)")
            notes.append(
                f"max_model_len held to max_num_batched_tokens {batched}: V0 without chunked prefill refuses longer"
            )
            length = batched
            fits = fits and length >= MIN_USEFUL_LEN
        b = budget(
            info, smallest, u, tp=tp, pp=pp, max_model_len=length or want, kv_cache_dtype=kv_cache_dtype, params=p
        )
        asked = b
        if length != want:
            asked = budget(info, smallest, u, tp=tp, pp=pp, max_model_len=want, kv_cache_dtype=kv_cache_dtype, params=p)
        seqs = default_max_num_seqs(p, smallest)
        # Enough sequences to use the cache, never more than vLLM's default: at least 256 tokens
        # (a short chat turn) per running sequence so a full batch does not preempt at once. A
        # max_num_seqs asked for is kept as asked (the activation peak was sized with it).
        if b.kv_tokens > 0 and p.max_num_seqs is None:
            seqs = max(1, min(seqs, b.kv_tokens // 256))
        conc = b.kv_tokens / length if length else 0.0
        return Plan(
            fits=fits,
            util=round(u, 2),
            max_model_len=length,
            max_num_seqs=seqs,
            tp=tp,
            pp=pp,
            kv_cache_dtype=kv_cache_dtype,
            budget=b,
            concurrency=conc,
            notes=tuple(notes),
            params=p,
            edge=edge,
            safe_edge=safe,
            band=margin,
            requested_max_model_len=want,
            requested_budget=asked,
        )

    weights = weights_per_gpu(info, tp, p, pp=pp)
    if weights >= smallest * util_cap:
        notes.append(
            f"the weights alone take {weights / GiB:.1f} GiB per GPU, more than {util_cap:.2f} of "
            f"{smallest / GiB:.1f} GiB: use a quantized model (AWQ/GPTQ/FP8) or more tensor parallelism"
        )
        return plan_at(base_util, want, False)

    need_util = util_for(info, smallest, want, tp, pp=pp, kv_cache_dtype=kv_cache_dtype, params=p, headroom=margin)
    if need_util <= base_util:
        return plan_at(base_util, want, True)
    if util is None and need_util <= util_cap:
        notes.append(f"util raised from {base_util:.2f} to {need_util:.2f} to hold {want} tokens with the margin")
        return plan_at(need_util, want, True)
    u = base_util if util is not None else util_cap
    safe = max_model_len_at(
        info, smallest, u, tp, pp=pp, kv_cache_dtype=kv_cache_dtype, params=p, limit=want, headroom=margin
    )
    length = round_down(safe, u)
    if length >= MIN_USEFUL_LEN:
        held = kv_tokens_at(info, smallest, u, tp, pp=pp, max_model_len=length, kv_cache_dtype=kv_cache_dtype, params=p)
        notes.append(
            f"max_model_len lowered from {want} to {length}: the KV cache holds {held} tokens at util {u:.2f}, "
            f"enough for {length} with the planner's {margin:.0%} error band"
        )
        return plan_at(u, length, True)
    longest = max_model_len_at(info, smallest, u, tp, pp=pp, kv_cache_dtype=kv_cache_dtype, params=p, limit=want)
    notes.append(
        f"at util {u:.2f} the KV cache holds only {max(0, longest)} tokens: use FP8 KV cache, a quantized model "
        "or more tensor parallelism"
    )
    return plan_at(u, length, False)


# --- calibration -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reported:
    """Numbers vLLM printed about one start on this host (any may be missing), and the settings it ran with.

    ``calibrate`` evaluates the planner at these settings, so the correction it derives is the planner's own
    error, not the difference between the start's flags and the plan's."""

    gpu_bytes: int
    util: float
    tp: int = 1
    pp: int = 1
    max_model_len: int | None = None
    kv_cache_dtype: str = "auto"
    engine: Engine | None = None  # None: the plan's engine
    block_size: int = 16
    enforce_eager: bool | None = None  # None: as the plan has it
    max_num_seqs: int | None = None  # None: as the plan has it
    max_num_batched_tokens: int | None = None
    weights_bytes: int | None = None  # "model weights take X GiB" / "Model loading took X GiB"
    activation_bytes: int | None = None  # "PyTorch activation peak memory takes X GiB"
    non_torch_bytes: int | None = None  # "non_torch_memory takes X GiB"
    cudagraph_bytes: int | None = None  # "Estimated CUDA graph memory: X GiB" (vLLM subtracted it)
    kv_cache_bytes: int | None = None  # "Available KV cache memory: X GiB" (may be negative)
    kv_tokens: int | None = None  # "GPU KV cache size: N tokens", "# GPU blocks: N" x block size, ...
    kv_tokens_range: tuple[int, int] | None = None  # "Maximum concurrency ...": tokens within this range


# vLLM prints GiB figures to 0.01: a printed X GiB is anything within this of X.
GIB_PRINT_ROUNDING = int(0.005 * GiB)


def reported_kv_bytes(info: ModelInfo, reported: Reported) -> int | None:
    """The KV cache vLLM had on one GPU, in bytes, from the most exact figure it printed.

    Tokens (or blocks) are exact to a block and win; 0 tokens only says "none", so a (negative) GiB figure
    then says by how much the start fell short. A concurrency figure gives a range of tokens, narrowed by a
    GiB figure when there is one; the lowest whole block in it is taken."""
    per = kv_bytes_per_token(info, reported.kv_cache_dtype, tp=reported.tp, pp=reported.pp)
    bs = reported.block_size
    if reported.kv_tokens is not None and (reported.kv_tokens > 0 or reported.kv_cache_bytes is None):
        return reported.kv_tokens * per
    if reported.kv_tokens_range is not None:
        lo, hi = reported.kv_tokens_range
        if reported.kv_cache_bytes is not None:
            glo = math.floor((reported.kv_cache_bytes - GIB_PRINT_ROUNDING) / per)
            ghi = math.ceil((reported.kv_cache_bytes + GIB_PRINT_ROUNDING) / per)
            if max(lo, glo) <= min(hi, ghi):
                lo, hi = max(lo, glo), min(hi, ghi)
        tokens = math.ceil(lo / bs) * bs
        return (tokens if tokens <= hi else lo) * per
    return reported.kv_cache_bytes


def calibrate(info: ModelInfo, reported: Reported, params: PlannerParams | None = None) -> PlannerParams:
    """Parameters that reproduce what vLLM reported, so later plans on this host start from the truth.

    Each measured part replaces its estimate; whatever remains between the prediction and the reported
    KV cache becomes ``extra_bytes``. The prediction is made at the start's own settings (engine, block
    size, batch sizes, eager mode); the parameters returned keep the plan's."""
    p = params or PlannerParams()
    measured = list(p.measured)
    if reported.cudagraph_bytes is not None:
        # that vLLM subtracts its CUDA graph estimate from the KV budget: so will the same vLLM for the plan
        p = replace(p, estimate_cudagraphs=True, cudagraph_bytes=reported.cudagraph_bytes)
        measured.append("cudagraphs")
    if reported.weights_bytes is not None:
        p = replace(p, weights_bytes=reported.weights_bytes)
        measured.append("weights")
    if reported.non_torch_bytes is not None:
        if reported.tp * reported.pp > 1:
            p = replace(p, non_torch_bytes_tp=reported.non_torch_bytes)
        else:
            p = replace(p, non_torch_bytes=reported.non_torch_bytes)
        measured.append("non_torch")
    if reported.activation_bytes is not None:
        measured.append("activation")
    p = replace(p, measured=tuple(dict.fromkeys(measured)))
    ran = replace(
        p,
        engine=reported.engine or p.engine,
        block_size=reported.block_size,
        enforce_eager=p.enforce_eager if reported.enforce_eager is None else reported.enforce_eager,
        max_num_seqs=reported.max_num_seqs if reported.max_num_seqs is not None else p.max_num_seqs,
        max_num_batched_tokens=(
            reported.max_num_batched_tokens if reported.max_num_batched_tokens is not None else p.max_num_batched_tokens
        ),
    )

    def at_start(q: PlannerParams) -> Budget:
        return budget(
            info,
            reported.gpu_bytes,
            reported.util,
            tp=reported.tp,
            pp=reported.pp,
            max_model_len=reported.max_model_len,
            kv_cache_dtype=reported.kv_cache_dtype,
            params=q,
        )

    if reported.activation_bytes is not None:
        raw = at_start(replace(ran, activation_scale=1.0)).activation
        if raw > 0:
            scale = reported.activation_bytes / raw
            p, ran = replace(p, activation_scale=scale), replace(ran, activation_scale=scale)
    kv = reported_kv_bytes(info, reported)
    if kv is not None:
        p = replace(p, extra_bytes=at_start(replace(ran, extra_bytes=0)).kv_bytes - kv)
    return p


# --- sizes -------------------------------------------------------------------------------------------

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?)(B?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'24GiB', '24G', '80GB', '512MiB', '1.5TiB', or plain bytes -> bytes.

    Binary units (GiB, and bare G as in systemd and nvidia-smi) are powers of 1024; 'GB' is 10**9.
    Raises ValueError with the accepted forms.
    """
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a size: use e.g. 24GiB, 80G, 512MiB or a number of bytes")
    number, unit, binary, b = m.groups()
    exp = " KMGT".index(unit.upper()) if unit else 0
    if unit and (binary or not b):
        return int(float(number) * (1024**exp))
    return int(float(number) * (1000**exp))


def parse_gpu_size(text: str) -> tuple[int, str | None]:
    """A GPU size as cards are named: a card sold as "24 GB" or "80GB" has 24 or 80 GiB, so a bare GB (MB, TB) on
    a GPU size means GiB. Returns the bytes and a note when the unit was read so (None otherwise)."""
    m = _SIZE.match(text)
    if m is not None and m.group(2) and m.group(4) and not m.group(3):
        binary = f"{m.group(1)}{m.group(2).upper()}iB"
        return parse_size(binary), f"--gpu {text.strip()} read as {binary}: GPU memory is sold in binary units"
    return parse_size(text), None


def format_gib(b: int | float) -> str:
    return f"{b / GiB:.2f} GiB"
