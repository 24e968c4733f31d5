"""Planner math: how vLLM splits a GPU between weights, activations and the KV cache.

Pure. It mirrors vLLM's own accounting, so its predictions can be checked against what vLLM prints:

    V1 (vllm/v1/worker/gpu_worker.py, ``Worker.determine_available_memory``):
        requested   = total GPU memory x gpu_memory_utilization
        KV memory   = requested - (weights + torch activation peak of a dummy run + non-torch increase)
        [VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, the default from 0.20.0: minus an estimate of CUDA graphs]
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
* V1's profile run samples one row per dummy request after the forward pass (``sampler_path``): the logits of up
  to max_num_seqs rows of the whole vocabulary, which with PyTorch's sort (0.8-0.16) hold 38 bytes per logit, 4.6
  GiB at 1024 rows of 128K tokens, more than the forward pass of most dense models; the fused paths of later
  releases hold 14. The peak is the larger of the two phases, not their sum. V0's profile run sorts the logits
  of one row per dummy sequence (max_num_seqs) the same way (``v0_sampler_path``).
* Under tensor parallelism each worker profiles its own GPU and vLLM takes the minimum: the
  smallest GPU decides.
* MLA models (DeepSeek-V2 style) store one latent vector per token and layer, not split by TP; V0 in
  0.7.2-0.7.3 pads it to 256 bytes (576 -> 640 elements), and before 0.7.1 vLLM cached full K and V heads.
* FP8 KV cache halves the bytes per token.
* What counts as "used" changed across releases (``ACCOUNTINGS``): vLLM 0.2.0-0.2.4 took torch's allocated
  peak only, 0.2.5-0.3.0 everything the GPU had in use (CUDA context and NCCL included), later releases the
  increase since a baseline taken before (0.3.1-0.10) or after (V1 0.11+) the workers joined their NCCL
  groups. ``PlannerParams.vllm_version`` picks the one of the installed vLLM.
* Under tensor parallelism each rank holds NCCL communicators and custom all-reduce buffers; MoE layers
  hold a fused-MoE workspace of tokens x top_k x the experts' width.
* Multimodal models profile their encoder with dummy images/videos of the largest size
  (``encoder_profile``): its activation peak can exceed the text model's by far.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from vllm_guard.core.modelinfo import ModelInfo, VisionTower

GiB = 1 << 30
MiB = 1 << 20

Engine = Literal["v1", "v0"]
Version = tuple[int, int, int]

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_vllm_version(text: str) -> Version:
    """'0.6.4.post1', '0.10.1.dev101+g1234', '0.11.0rc2', 'v0.8' -> (major, minor, patch).

    Raises ValueError naming the accepted form."""
    m = _VERSION.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a vLLM version: use e.g. 0.6.4 or 0.11.0")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def release_and_engine(text: str | None) -> tuple[str | None, Engine]:
    """A release as a host reports it and the engine it runs by default; not a version (or none): (None, "v1"), the
    current releases."""
    if text is None:
        return None, "v1"
    try:
        return text, engine_of_version(parse_vllm_version(text))
    except ValueError:
        return None, "v1"


def engine_of_version(version: Version) -> Engine:
    """The engine a vLLM release runs by default: V1 from 0.8.0 (VLLM_USE_V1 defaults to 1), V0 before."""
    return "v1" if version >= (0, 8, 0) else "v0"


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
    # The GPU's name as vLLM reads it (torch.cuda.get_device_name; NVML gives the same, e.g. "NVIDIA
    # A100-SXM4-80GB"): V1's batch defaults go by it in some releases (large_batch_gpu). None: not known.
    gpu_name: str | None = None
    # Who started the engine: "server" (`vllm serve`, the OpenAI server: what the guard runs) or "llm" (the
    # Python LLM class, whose V1 batch defaults are larger: default_batched_tokens).
    usage_context: Literal["server", "llm"] = "server"
    # Activation peak per profiled token of V1's compiled forward pass (and of MoE models and vision encoders), in
    # copies of the 16-bit compute dtype: the MLP keeps gate_up (2 x intermediate) and the activated half
    # (1 x intermediate) alive at once, plus about 2 x hidden_size of residual/normed stream. 2 x hidden + 3 x
    # intermediate is the fit to the published start-up logs of the tuning part in bench/RESULTS-planner.md (its
    # leave-one-source-out column refits them). V0's eager forward of a dense model holds what its model code
    # holds (v0_forward_copies), no fitted figure.
    act_hidden_copies: float = 2.0
    act_intermediate_copies: float = 3.0
    # V1: the dummy sampler on FlashInfer's top-k/top-p (flashinfer.sampling.top_k_top_p_sampling_from_logits)
    # rather than PyTorch's. None: what the release does as pip installs it (sampler_path); True or False: set
    # by VLLM_USE_FLASHINFER_SAMPLER=1/0 (0.11.1+), or FlashInfer installed or not (0.8.0-0.11.0, where vLLM uses
    # it whenever it imports, as in the vllm/vllm-openai images; the wheel does not depend on it).
    flashinfer_sampler: bool | None = None
    # Non-torch memory that grows during the profile run on one GPU (cuBLAS/cuDNN workspaces, the attention
    # backend's buffers): V0 0.6.5+ logs print 0.01-0.28 GiB ('non_torch_memory takes'; 0.6.4's figure holds the
    # CUDA context too); the value fits the published logs of the tuning part in bench/RESULTS-planner.md.
    non_torch_bytes: int = int(0.05 * GiB)
    # Under TP/PP the distributed part is a formula (``distributed_bytes``): NCCL communicators and vLLM's
    # custom all-reduce buffers. This is its total at TP 2 with both communicators counted (V0 0.6.4+ logs:
    # 0.2-0.9 GiB with TP), which fixes the one fitted constant left in it, NCCL's own buffers per communicator;
    # a calibration log's 'non_torch_memory' under TP replaces the whole non-torch figure.
    non_torch_bytes_tp: int = int(0.30 * GiB)
    # vllm/distributed/device_communicators/custom_all_reduce.py: CustomAllreduce(max_size=8192 * 1024) makes
    # a metadata + scratch buffer of meta_size() + max_size and an IPC buffer of max_size with cudaMalloc
    # (allocate_shared_buffer_and_handle, 0.7+; torch tensors before), and an 8 MiB rank_data torch tensor.
    # Only for world sizes 2, 4, 6, 8 (_SUPPORTED_WORLD_SIZES), from vLLM 0.3.0.
    custom_ar_max_size: int = 8192 * 1024
    custom_ar_rank_data: int = 8 * 1024 * 1024
    # The CUDA context and whatever else the process holds outside torch before vLLM's baseline: counted by the
    # releases that took total - free as "used" (0.2.5-0.3.0; V0 0.6.4; V1 0.7-0.9.1). It depends on the card,
    # the driver and how lazily CUDA loads its modules: vllm-project/vllm#2031 (0.2.x, A100-80GB) printed
    # '# GPU blocks: 7449' under torch's peak and '7351' under total - free, 98 blocks x 8 MiB = 784 MiB more
    # used; V0 0.6.4 on an RTX 3090 (vllm-project/vllm#10517) printed 'non_torch_memory=0.35GiB', the context
    # included. The value fits the tuning part's cases of those releases (bench/RESULTS-planner.md).
    cuda_context_bytes: int = int(0.31 * GiB)
    # Memory other processes hold on the GPUs vLLM will use when it starts (NVML's per-process figures, the most
    # on any one of them). Only the releases that count total - free after their profile as their own use
    # (ACCOUNTINGS with ``context``: 0.2.5-0.3.0, V0 0.6.4, V1 0.7-0.9.1) take it from the KV cache; the others
    # measure from a baseline taken while it was already held (vLLM 0.3.1-0.6.3 read init_gpu_memory, 0.6.5+ and
    # V1 0.9.2+ a MemorySnapshot), and V1 refuses to start when total x util is more than is free.
    held_by_others: int = 0
    # The installed vLLM ("0.6.4", "0.11.0"): picks the accounting (ACCOUNTINGS), the MLA layout and the
    # multimodal profile's rules. None: the current releases' rules for the engine.
    vllm_version: str | None = None
    # --limit-mm-per-prompt: items per prompt by modality; vLLM's default when absent: 999 under V1, 1 under V0
    # (vllm/config/multimodal.py MultiModalConfig.get_limit_per_prompt).
    limit_mm_per_prompt: tuple[tuple[str, int], ...] = ()
    # --enable-expert-parallel: MoE experts are split across ranks whole, not sliced by TP, so the fused-MoE
    # workspace holds the experts' full width.
    enable_expert_parallel: bool = False
    # V1 subtracts its estimate of the CUDA graph pool from the KV budget when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    # is on (vllm/envs.py: added in 0.18.0, off; on by default from 0.20.0). vLLM's own log line "Graph capturing
    # finished in N secs, took X GiB" reports 0.2-1.5 GiB for 7B-72B models. None: as the release does
    # (``cudagraphs_estimated``); True or False: the unit's environment or --[no-]estimate-cudagraphs says.
    estimate_cudagraphs: bool | None = None
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
    "max_num_batched_tokens": "vLLM EngineArgs defaults (V1 server: 8192 on GPUs >= 70 GiB (not an A100 from 0.9; "
    "by name, H100/H200, before 0.8.5), 16384 >= 160 GiB (0.28+), else 2048; the LLM class twice that; "
    "V0: max(max_model_len, 2048), or 2048 with chunked prefill)",
    "max_num_seqs": "vLLM EngineArgs defaults (V1: 1024 on the GPUs that take the larger batch, else 256; 1024 on "
    "all in 0.8.0-0.8.3; V0: 256)",
    "activation": "profile run of max_num_batched_tokens tokens: V1 (2 x hidden + 3 x intermediate/TP) x 2 bytes "
    "per token, fitted to published start-up logs (bench/RESULTS-planner.md); V0's eager pass what its model code "
    "holds (4 x hidden + 3 x intermediate, LlamaMLP 3 + 3 from 0.6.4)",
    "sampler": "V1 dummy sampler run (gpu_model_runner.py _dummy_sampler_run): min(max_num_seqs, batched tokens) "
    "rows x vocab x the bytes its top-k/top-p path holds at once (sampler_path: 38 with PyTorch's sort, 50 below 128 "
    "rows, 14 fused), after the forward pass, not on top of it; V0 (sampler.py _apply_top_k_top_p): max_num_seqs "
    "rows sorted after the forward pass (v0_sampler_path: 38 from 0.6, 30 on the 16-bit logits before)",
    "non_torch": "fitted to published start-up logs: vLLM prints 0.01-0.28 GiB on one GPU ('non_torch_memory "
    "takes X GiB', V0 0.6.5+; V1's 'non-torch forward increase memory'), more under TP",
    "cudagraphs": "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (V1, on by default from 0.20.0): ~0.6 GiB, "
    "vLLM's 'Graph capturing ... took X GiB'",
    "v0_chunked_prefill": "V0 turned chunked prefill on above max_model_len 32768, profiling only 2048 tokens",
    "weights": "safetensors headers (exact tensor bytes) divided by TP; vLLM's 'model weights take X GiB'",
    "kv_per_token": "2 (K and V) x layers x KV heads per GPU x head_dim x KV dtype bytes; FP8 KV halves it",
    "gib": "vLLM's 'GB' in V0 logs are GiB (it divides by 2**30)",
}


def version_of(params: PlannerParams) -> Version | None:
    """The installed vLLM's version as a tuple; None when not known (or not a version)."""
    if params.vllm_version is None:
        return None
    try:
        return parse_vllm_version(params.vllm_version)
    except ValueError:
        return None


@dataclass(frozen=True)
class Accounting:
    """What one range of vLLM releases subtracts from total x util before the KV cache (each a quote of its
    code). ``util`` multiplies the GPU's total in every release: what changed is what counts as used."""

    name: str
    releases: str
    source: str
    non_torch: bool  # memory outside torch's allocator that grew after the baseline (cuBLAS workspaces, ...)
    context: bool  # the CUDA context and other memory held before the baseline
    # NCCL/custom all-reduce memory made when the workers join: "all" inside the budget, "lazy" only NCCL's
    # buffers (connected at the first collectives, after the baseline), "none" not at all
    distributed: Literal["all", "lazy", "none"]
    held_allreduce: bool = False  # all-reduce inputs torch's NCCL stream holds until it synchronizes


ACCOUNTINGS: dict[str, Accounting] = {
    a.name: a
    for a in (
        Accounting(
            "torch-peak",
            "0.2.0-0.2.4",
            "vllm/worker/worker.py profile_num_available_blocks: peak_memory = torch.cuda.max_memory_allocated(); "
            "blocks = (total x util - peak_memory) // block bytes",
            non_torch=False,
            context=False,
            distributed="none",
        ),
        Accounting(
            "total-used",
            "0.2.5-0.3.0",
            "vllm/worker/worker.py profile_num_available_blocks: peak_memory = total - free after the profile run "
            "(vllm-project/vllm#2031): the CUDA context, NCCL and torch's cache count",
            non_torch=True,
            context=True,
            distributed="all",
        ),
        Accounting(
            "since-init",
            "0.3.1-0.6.3",
            "vllm/worker/worker.py: peak_memory = init_gpu_memory - free, init_gpu_memory read in init_device "
            "before init_distributed_environment: NCCL counts, the CUDA context does not",
            non_torch=True,
            context=False,
            distributed="all",
        ),
        Accounting(
            "v0-all-non-torch",
            "V0 0.6.4",
            "vllm/worker/worker.py determine_num_available_blocks: torch's allocated peak + (total - free - torch "
            "allocated) after the profile run: the CUDA context and NCCL count (its log's 'non_torch_memory')",
            non_torch=True,
            context=True,
            distributed="all",
        ),
        Accounting(
            "v0-profiled",
            "V0 0.6.5-0.10",
            "vllm/worker/worker.py determine_num_available_blocks: memory_profiling(baseline_snapshot) = weights + "
            "torch peak increase + non-torch increase, the baseline taken before init_worker_distributed_environment",
            non_torch=True,
            context=False,
            distributed="all",
        ),
        Accounting(
            "v1-all-non-torch",
            "V1 0.7-0.9.1",
            "vllm/v1/worker/gpu_worker.py determine_available_memory: torch's allocated peak + (total - free - "
            "torch allocated) after the profile run: the CUDA context and NCCL count",
            non_torch=True,
            context=True,
            distributed="all",
        ),
        Accounting(
            "v1-snapshot",
            "V1 0.9.2-0.10",
            "vllm/v1/worker/gpu_worker.py: init_snapshot = MemorySnapshot() before "
            "init_worker_distributed_environment; non_kv_cache_memory = weights + torch peak increase + "
            "non-torch increase",
            non_torch=True,
            context=False,
            distributed="all",
        ),
        Accounting(
            "v1-snapshot-after-dist",
            "V1 0.11+",
            "vllm/v1/worker/gpu_worker.py init_device: init_worker_distributed_environment, then init_snapshot: the "
            "custom all-reduce buffers (cudaMalloc at init) are outside the budget; NCCL's channel buffers, "
            "connected at the first collectives of the profile run (NCCL 2.22+ NCCL_RUNTIME_CONNECT=1), inside",
            non_torch=True,
            context=False,
            distributed="lazy",
        ),
    )
}


def cudagraphs_estimated(params: PlannerParams) -> bool:
    """Whether vLLM subtracts a CUDA graph estimate from the KV budget: never eager or under V0; as asked
    (``estimate_cudagraphs``), else from 0.20.0 on (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS's default turned on),
    and for a release not known (the current releases)."""
    if params.enforce_eager or params.engine != "v1":
        return False
    if params.estimate_cudagraphs is not None:
        return params.estimate_cudagraphs
    v = version_of(params)
    return v is None or v >= (0, 20, 0)


def estimate_cudagraphs_of(vllm_version: str | None, environment: Mapping[str, str]) -> bool | None:
    """``PlannerParams.estimate_cudagraphs`` from a unit's environment: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "0"
    or "1" on a release that reads it (0.18.0+, or one not known); None: the release's default."""
    flag = environment.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "").strip()
    if flag not in ("0", "1"):
        return None
    try:
        v = parse_vllm_version(vllm_version) if vllm_version else None
    except ValueError:
        v = None
    if v is not None and v < (0, 18, 0):
        return None
    return flag == "1"


def accounting_of(params: PlannerParams) -> Accounting:
    """The accounting of the installed vLLM (``vllm_version``), else of the engine's recent releases."""
    v = version_of(params)
    if params.engine == "v1":
        if v is None or (0, 9, 2) <= v < (0, 11, 0):
            return ACCOUNTINGS["v1-snapshot"]
        return ACCOUNTINGS["v1-all-non-torch" if v < (0, 9, 2) else "v1-snapshot-after-dist"]
    if v is None or v >= (0, 6, 5):
        return ACCOUNTINGS["v0-profiled"]
    if v >= (0, 6, 4):
        return ACCOUNTINGS["v0-all-non-torch"]
    if v < (0, 2, 5):
        return ACCOUNTINGS["torch-peak"]
    if v < (0, 3, 1):
        held = v < (0, 2, 6)  # TORCH_NCCL_AVOID_RECORD_STREAMS=1 is set by vllm/worker/worker.py from 0.2.6
        return replace(ACCOUNTINGS["total-used"], held_allreduce=held)
    return ACCOUNTINGS["since-init"]


def v0_chunks_long_context(params: PlannerParams) -> bool:
    """V0 switched chunked prefill on above a 32K max_model_len from 0.5.3 (vllm/engine/arg_utils.py
    use_long_context); older releases profiled the whole length."""
    v = version_of(params)
    return v is None or v >= (0, 5, 3)


def large_batch_gpu(params: PlannerParams, gpu_bytes: int) -> bool:
    """Whether V1 takes its larger batch defaults on this GPU (vllm/engine/arg_utils.py, read release by release):
    0.7-0.8.4 by the device name ("h100" or "h200" in it); 0.8.5 by size (70 GiB or more); 0.9.0 on by size and not
    an A100 ("a100" not in the name: a large batch slows the A100 down). With the name not known, a card of 70
    GiB or more is taken as large: the larger profile run leaves the smaller KV cache, the careful side."""
    name = params.gpu_name.lower() if params.gpu_name else None
    v = version_of(params)
    if v is not None and v < (0, 8, 5) and name is not None:
        return "h100" in name or "h200" in name
    if gpu_bytes < 70 * GiB:
        return False
    return name is None or "a100" not in name or (v is not None and v < (0, 9, 0))


def default_batched_tokens(params: PlannerParams, gpu_bytes: int, max_model_len: int) -> int:
    """The max_num_batched_tokens vLLM would use, i.e. the size of its profile run."""
    if params.max_num_batched_tokens is not None:
        return params.max_num_batched_tokens
    if params.engine == "v0":
        if max_model_len > params.v0_chunked_prefill_above and v0_chunks_long_context(params):
            return params.v0_chunked_batched_tokens
        return max(max_model_len, params.v0_min_batched_tokens)
    # vllm/engine/arg_utils.py (EngineArgs._set_default_args; get_batch_defaults from 0.12): the OpenAI server
    # takes 8192 on a large-batch GPU (large_batch_gpu), 2048 on others; the LLM class 16384 and 8192. From 0.28
    # a GPU of 160 GiB or more (B200 class) takes 16384 for both.
    llm = params.usage_context == "llm"
    if gpu_bytes >= 160 * GiB:
        v = version_of(params)
        if v is None or v >= (0, 28, 0):
            return 16384
    if large_batch_gpu(params, gpu_bytes):
        return 16384 if llm else 8192
    return 8192 if llm else 2048


def default_max_num_seqs(params: PlannerParams, gpu_bytes: int) -> int:
    if params.max_num_seqs is not None:
        return params.max_num_seqs
    if params.engine == "v0":
        return 256  # SchedulerConfig.max_num_seqs default in V0
    v = version_of(params)
    # V1 (vllm/engine/arg_utils.py): 0.7 kept EngineArgs' 256; 0.8.0-0.8.3 set 1024 on every GPU; from 0.8.4
    # 1024 on a large-batch GPU (large_batch_gpu), 256 on others, for the server and the LLM class alike.
    if v is not None and v < (0, 8, 0):
        return 256
    if v is not None and v < (0, 8, 4):
        return 1024
    return 1024 if large_batch_gpu(params, gpu_bytes) else 256


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


# Quantization methods with which vLLM 0.7.1-0.7.2 kept MLA on (vllm/config.py ModelConfig.use_mla); others
# fell back to full K/V heads ("MLA is not supported with %s quantization. Disabling MLA.").
MLA_QUANTIZATIONS = ("fp8", "compressed-tensors")


def mla_layout(info: ModelInfo, params: PlannerParams | None = None) -> str:
    """How vLLM caches an MLA model: "latent" (one kv_lora_rank + qk_rope_head_dim vector per token and layer),
    "latent-aligned" (V0 0.7.2-0.7.3: that vector padded to 256 bytes), or "heads" (full K and V heads of
    qk_nope + qk_rope, as before MLA support)."""
    p = params or PlannerParams()
    v = version_of(p)
    if v is not None and v < (0, 7, 1):
        # before 0.7.1 ModelConfig.get_head_size() returned qk_rope + qk_nope for deepseek_v2/v3, per KV head
        return "heads"
    quant = info.quantization.method if info.quantization is not None else None
    if v is not None and v < (0, 7, 3) and quant is not None and quant not in MLA_QUANTIZATIONS:
        return "heads"
    if p.engine == "v0" and (v is None or (0, 7, 2) <= v < (0, 8, 0)):
        # vllm/worker/cache_engine.py (0.7.2, 0.7.3) get_cache_block_size: with use_mla and
        # VLLM_CUDA_MEM_ALIGN_KV_CACHE=1 (the default) key_cache_entry = align_to_256bytes(entry, model dtype).
        # The release is not known for V0: the padded entry, the smaller cache, is planned.
        return "latent-aligned"
    return "latent"


def kv_bytes_per_token(
    info: ModelInfo,
    kv_cache_dtype: str = "auto",
    *,
    tp: int = 1,
    pp: int = 1,
    params: PlannerParams | None = None,
) -> int:
    """KV cache bytes for one token on one GPU (tp=1, pp=1: the whole model).

    Standard attention: 2 (K and V) x layers x KV heads x head_dim x dtype bytes.
    MLA: one latent vector (kv_lora_rank + qk_rope_head_dim) per layer, the same on every TP rank; the engine
    and release (``params``) decide its padding, or full heads before vLLM supported MLA (``mla_layout``).
    Under pipeline parallelism a GPU holds the KV cache of its stage's layers only.
    """
    b = kv_dtype_bytes(info, kv_cache_dtype)
    layers = layers_per_stage(info, pp)
    if info.is_mla:
        entry = info.kv_lora_rank + info.qk_rope_head_dim
        layout = mla_layout(info, params)
        if layout == "heads":
            head = (info.qk_nope_head_dim + info.qk_rope_head_dim) or info.head_dim
            return 2 * layers * kv_heads_per_gpu(info, tp) * head * b
        if kv_cache_dtype == "fp8_ds_mla":
            # FlashMLA's FP8 layout: 512 fp8 values + 4 float32 scales + 64 bf16 rope values = 656 bytes
            return layers * 656
        if layout == "latent-aligned":
            # vllm/utils.py align_to_256bytes(extent, dtype): round_up(extent, 256 // dtype size), with the
            # model's dtype (not the cache's): 576 -> 640 elements in 16 bits; the cache dtype's bytes follow
            per_256 = 256 // (2 if info.dtype_bytes >= 2 else max(1, int(info.dtype_bytes)))
            entry = -(-entry // per_256) * per_256
        return layers * entry * b
    return 2 * layers * kv_heads_per_gpu(info, tp) * info.head_dim * b


@dataclass(frozen=True)
class KvGroups:
    """A hybrid model's KV cache on one GPU as vLLM's V1 hybrid KV cache manager lays it out (vllm/v1/core/
    kv_cache_utils.py, 0.9.2 on): the layers fall in groups of ``group_size`` layers of one kind; every layer's
    page (one block) has the same bytes, a Gated DeltaNet layer's state padded to the attention page after the
    attention block size was raised to hold it; one block id is a page in each of ``group_size`` tensors, drawn
    from one pool by every group."""

    block_size: int  # tokens per attention block
    page: int  # bytes of one block of one layer
    group_size: int
    full_groups: int
    sliding_groups: int = 0
    linear_groups: int = 0
    window: int = 0
    in_flight: int = 0  # tokens a sliding-window group keeps past its window (the scheduled batches)
    state_blocks: int = 1  # blocks a linear-attention group keeps per request (2 in "align" mode, 0.26 on)
    share_report: bool = True  # printed tokens: num_blocks // groups x block size (to 0.20), else concurrency x L

    @property
    def groups(self) -> int:
        return self.full_groups + self.sliding_groups + self.linear_groups

    @property
    def block_bytes(self) -> int:
        return self.page * self.group_size

    def other_blocks(self, length: int) -> int:
        """The blocks one request takes outside its full-attention groups (sliding windows, linear states)."""
        bs = self.block_size
        window = -(-min(self.window - 1 + self.in_flight, length) // bs) + 1 if self.sliding_groups else 0
        return self.sliding_groups * window + self.linear_groups * self.state_blocks

    def blocks_per_request(self, length: int) -> int:
        return self.full_groups * -(-length // self.block_size) + self.other_blocks(length)

    def reported_tokens(self, blocks: int, length: int) -> int:
        """vLLM's "GPU KV cache size: N tokens" for ``blocks`` blocks at max_model_len ``length``."""
        if self.share_report:
            return blocks // max(1, self.groups) * self.block_size
        return int(blocks / max(1, self.blocks_per_request(length)) * length)

    def request_tokens(self, blocks: int, length: int) -> int:
        """The longest request ``blocks`` blocks hold (what max_model_len is checked against)."""
        free = blocks - self.other_blocks(length)
        return max(0, free // max(1, self.full_groups) * self.block_size)


def kv_groups(
    info: ModelInfo,
    kv_cache_dtype: str = "auto",
    *,
    tp: int = 1,
    pp: int = 1,
    params: PlannerParams | None = None,
    batched_tokens: int = 2048,
) -> KvGroups | None:
    """The hybrid KV cache manager's layout of ``info`` (``ModelInfo.hybrid``) on one GPU, or None where vLLM lays
    the KV cache out as full attention in every layer: V0, and V1 before 0.9.2, which treat sliding-window
    layers as full ones. The rules, release by release (vllm/v1/core/kv_cache_utils.py, vllm/model_executor/
    models/config.py HybridAttentionMambaModelConfig to 0.19, Platform._align_hybrid_block_size from 0.20):

    - a Gated DeltaNet layer keeps a conv state ((kernel - 1) x (2 key heads x key dim + value heads x value dim) /
      TP) and a recurrent one (value heads / TP x key dim x value dim), in the model's dtype (the recurrent one in
      float32 where a Qwen3.5 config says so: ``HybridLayout.ssm_state_bytes``); the attention block
      size is raised to the smallest multiple of 16 (64 from 0.34, whose default block is 64) whose attention page
      holds that state, and the state is padded to the page;
    - the layers are bucketed by kind; a group holds as many layers as the smallest bucket (as the largest when
      it is under 1.25 x the smallest from 0.12, 1.5 x from 0.18) and each bucket fills whole groups;
    - a request takes ceil(L / block) blocks in a full-attention group, ceil(min(window - 1 + in-flight tokens, L)
      / block) + 1 in a sliding one (in flight: max_num_batched_tokens, twice that with 0.26's async scheduling),
      and 1 in a linear one (2 from 0.26, when prefix caching in "align" mode became the default);
    - vLLM prints num_blocks // groups x block as its token figure up to 0.20, concurrency x max_model_len from
      0.21."""

    def cdiv(a: int, b: int) -> int:
        return -(-a // b)

    h = info.hybrid
    p = params or PlannerParams()
    if h is None or p.engine != "v1":
        return None
    v = version_of(p)
    if not h.linear and v is not None and v < (0, 9, 2):
        return None
    b = kv_dtype_bytes(info, kv_cache_dtype)
    per_token = 2 * kv_heads_per_gpu(info, tp) * info.head_dim * b  # one attention layer
    block = p.block_size
    if h.linear:
        state_bytes = 2 if info.dtype_bytes >= 2 else max(1, int(info.dtype_bytes))
        conv_dim = 2 * h.linear_key_heads * h.linear_key_head_dim + h.linear_value_heads * h.linear_value_head_dim
        conv = (h.linear_conv_kernel - 1) * (conv_dim // tp) * state_bytes
        recurrent = (
            (h.linear_value_heads // tp)
            * h.linear_key_head_dim
            * h.linear_value_head_dim
            * (h.ssm_state_bytes or state_bytes)
        )
        align = 64 if v is not None and v >= (0, 34, 0) else 16
        block = max(block, align * cdiv(conv + recurrent, align * per_token))
    counts = [cdiv(n, pp) for n in (h.full, h.sliding, h.linear)]  # a PP stage's share of each kind
    buckets = [n for n in counts if n > 0]
    low, high = min(buckets), max(buckets)
    size = low
    if v is None or v >= (0, 18, 0):
        size = high if high < 1.5 * low else low
    elif v >= (0, 12, 0):
        size = high if high < 1.25 * low else low
    full, sliding, linear = (cdiv(n, size) for n in counts)
    new = v is None or v >= (0, 26, 0)
    return KvGroups(
        block_size=block,
        page=block * per_token,
        group_size=size,
        full_groups=full,
        sliding_groups=sliding,
        linear_groups=linear,
        window=h.window,
        in_flight=batched_tokens * (2 if new else 1),
        state_blocks=2 if new else 1,
        share_report=v is not None and v < (0, 21, 0),
    )


def vision_tower_off(info: ModelInfo, params: PlannerParams) -> bool:
    """--limit-mm-per-prompt image and video 0: vLLM (0.10.2+: qwen2_5_vl.py and its kin set self.visual =
    None) builds no vision tower, so loads none of its weights."""
    v = version_of(params)
    if info.vision is None or (v is not None and v < (0, 10, 2)):
        return False
    return _limit(params, "image") == 0 and _limit(params, "video") == 0


def weights_per_gpu(info: ModelInfo, tp: int, params: PlannerParams | None = None, *, pp: int = 1) -> int:
    """Weight bytes on the fullest GPU: vLLM's own figure when calibrated, else the model's bytes split by TP
    and, under pipeline parallelism, by stage (the layers split evenly; the embedding sits on the first
    stage and the LM head on the last, so the fullest stage holds one of them)."""
    if params is not None and params.weights_bytes is not None:
        return params.weights_bytes
    total = info.estimated_weight_bytes()
    if params is not None and vision_tower_off(info, params):
        total -= info.vision_weight_bytes()
    if pp > 1:
        embed = int(info.vocab_size * info.hidden_size * min(2.0, max(1.0, info.dtype_bytes)))
        copies = 1 if info.tie_word_embeddings else 2
        layers = max(0, total - copies * embed)
        total = math.ceil(layers * layers_per_stage(info, pp) / max(1, info.num_layers)) + embed
    return math.ceil(total / max(1, tp))


def moe_chunk_size(params: PlannerParams) -> int:
    """VLLM_FUSED_MOE_CHUNK_SIZE's default (vllm/envs.py): 32768 tokens up to 0.11, 16384 from 0.12."""
    v = version_of(params)
    return 16 * 1024 if v is None or v >= (0, 12, 0) else 32768


def moe_workspace_bytes(info: ModelInfo, batched_tokens: int, tp: int, params: PlannerParams) -> int:
    """The fused-MoE workspace of one MoE layer (torch memory, part of the activation peak).

    vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts_impl, M = min(tokens,
    VLLM_FUSED_MOE_CHUNK_SIZE), N = the experts' gate_up width on this rank (2 x moe_intermediate_size / TP,
    or the full width under expert parallelism), K = hidden_size, in the activations' 16 bits:
    0.8+: cache13 = M x top_k x max(N, K) (intermediate caches 1 and 3 share it) and cache2 = M x top_k x N/2;
    before 0.8: three caches, M x top_k x (N + N/2 + K).
    """
    if not info.is_moe:
        return 0
    m = min(batched_tokens, moe_chunk_size(params))
    width = 2 * info.moe_intermediate_size
    n = width if params.enable_expert_parallel else max(1, width // max(1, tp))
    k = info.hidden_size
    v = version_of(params)
    per = n + n // 2 + k if v is not None and v < (0, 8, 0) else max(n, k) + n // 2
    return 2 * m * info.experts_per_token * per


# --- V1's dummy sampler run ----------------------------------------------------------------------------------
#
# Read in the source of vLLM 0.8.5, 0.9.2, 0.10.1, 0.10.2, 0.11.0-0.11.2, 0.12.0, 0.16.0-0.18.0, 0.20.0, 0.21.0,
# 0.23.0, 0.26.0-0.31.0 and 0.33.0. The release boundaries below are exact (the release before was read too)
# but for Model Runner V2's defaults, given as the first release read that has them.
# vllm/v1/worker/gpu_model_runner.py profile_run (0.8.0 on): _dummy_run(max_num_batched_tokens) splits the tokens over
# min(tokens, max_num_seqs) dummy requests and returns the hidden states with one row per request (the last token
# of each); the forward pass's own tensors are freed by then. _dummy_sampler_run then computes the logits of those
# rows only (compute_logits: the 16-bit model dtype; under TP all-gathered, so every rank holds the whole vocabulary)
# and samples them with temperature 0.5, top_p 0.9 and top_k = vocab - 1: no penalties (no_penalties=True), no
# logprobs, no min_p, no logits processors. The profile's hidden states stay alive meanwhile (profile_run deletes
# them after the sampler). So the torch peak is the larger of the forward pass and the sampler, not their sum.
#
# What the sampler holds at its peak, in bytes per (row x vocabulary element), path by path. Every path holds the
# 16-bit logits (2, _dummy_sampler_run's variable) and Sampler.forward's float32 copy (logits.to(torch.float32), 4).
#
# PyTorch's sort (vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p, forward_native; 0.8.0-0.16, and for
# fewer than 8 rows up to 0.29): logits.sort(dim=-1) makes the sorted values (4) and int64 indices (8). Inside it
# (PyTorch aten/src/ATen/native/cuda/SortStable.cu): from 128 rows, segmented_sort_pairs allocates an int64 iota of
# the indices (8) and CUB's DeviceSegmentedRadixSort::SortPairs takes temporary storage holding the alternate key
# and value buffers (4 + 8); a single row (segmented_sort_large_segments) holds the same per element. 2 + 4 + 4 + 8
# + 8 + 12 = 38. From 2 to 127 rows segmented_sort_pairs_by_full_sort holds two int2 index/segment arrays (8 + 8),
# a key output (4) and CUB's alternate buffers of float keys and int2 values (4 + 8): 2 + 4 + 4 + 8 + 16 + 4 + 12
# = 50. After the sort (masks, softmax, cumsum in place, scatter: 28) and in random_sample (18) it holds less.
SAMPLER_SORT_BYTES = 38
SAMPLER_SORT_FEW_ROWS_BYTES = 50
# Fused: FlashInfer's top_k_top_p_sampling_from_logits (top_k_mask_logits' masked copy, 4, then its softmax, 4;
# FlashInfer 0.3.1, 0.6.8 and 0.7.2 alike, as vLLM passes top_k as a tensor) or vLLM's Triton
# top-k/top-p (0.17+: masks the float32 logits in place; forward_native's softmax, 4, and random_sample's exponential
# noise, 4): 2 + 4 + 4 + 4 = 14. Model Runner V2 (vllm/v1/worker/gpu: the default for some dense models in 0.23,
# for all in 0.29) samples its warm-up pass the same way in 0.33: a float32 copy, FlashInfer's masked copy and its
# softmax (rows under 8 included, which the V1 runner's forward_native warm-up sorts up to 0.29).
# Not counted: the Triton path's per-SM buffer (SMs x vocab x 4 B, under 0.1 GiB), which the planner cannot size.
SAMPLER_FUSED_BYTES = 14


@dataclass(frozen=True)
class SamplerPath:
    """The top-k/top-p path V1's dummy sampler run takes, and the bytes it holds per (row x vocabulary element)."""

    name: str
    bytes_per_logit: int
    releases: str


def _sort_path(rows: int, releases: str) -> SamplerPath:
    few = 2 <= rows < 128
    name = "PyTorch sort" + (" (2-127 rows: segmented_sort_pairs_by_full_sort)" if few else "")
    return SamplerPath(name, SAMPLER_SORT_FEW_ROWS_BYTES if few else SAMPLER_SORT_BYTES, releases)


# V0 (vllm/model_executor/layers/sampler.py Sampler.forward, on the profile run's dummy batch: max_num_seqs
# sequences, SamplingParams(top_p=0.99, top_k=vocab - 1), vllm/worker/model_runner.py profile_run) sorts the
# logits of one row per sequence in _apply_top_k_top_p, as V1's forward_native does. From 0.6.0 it sorts a float32
# copy (`logits = logits.to(torch.float)`): the bytes of V1's sort path (38; 50 below 128 rows). Before, it sorts
# the 16-bit logits themselves: 2 (the logits) + 2 (sorted) + 8 (int64 indices) + 8 (PyTorch's iota) + 2 + 8 (CUB's
# alternate key and value buffers) = 30; 2-127 rows: 2 + 2 + 8 + 16 (two int2 arrays) + 2 (key output) + 2 + 8 =
# 40. 0.2.0-0.2.6 then re-sort the int64 indices (torch.argsort(logits_idx)) while the sorted logits and indices
# are held: 2 + 2 + 8 + 8 (argsort's output) + 8 (its iota) + 16 (CUB's int64 alternates) = 44. After the sort
# (softmax, log_softmax, the sampling noise) it holds less. FlashInfer's sampler (0.6.0+, only with
# VLLM_USE_FLASHINFER_SAMPLER=1) samples from float32 probabilities: 2 + 4 + 4 + 4 = 14.
V0_SORT_16BIT_BYTES = 30
V0_SORT_16BIT_FEW_ROWS_BYTES = 40
V0_ARGSORT_BYTES = 44


def v0_sampler_path(params: PlannerParams, rows: int) -> SamplerPath:
    """The path of V0's sampler on the profile run's dummy batch of ``rows`` sequences, by release."""
    v = version_of(params)
    if v is None or v >= (0, 6, 0):
        if params.flashinfer_sampler:
            return SamplerPath("FlashInfer (VLLM_USE_FLASHINFER_SAMPLER=1)", SAMPLER_FUSED_BYTES, "V0 0.6+")
        return _sort_path(rows, "V0 0.6+, a float32 copy sorted")
    if v < (0, 2, 7):
        return SamplerPath("16-bit sort, then argsort of the indices", V0_ARGSORT_BYTES, "0.2.0-0.2.6")
    few = 2 <= rows < 128
    return SamplerPath(
        "16-bit sort" + (" (2-127 rows)" if few else ""),
        V0_SORT_16BIT_FEW_ROWS_BYTES if few else V0_SORT_16BIT_BYTES,
        "0.2.7-0.5",
    )


def sampler_path(params: PlannerParams, rows: int) -> SamplerPath:
    """The path of V1's dummy sampler run with ``rows`` rows, by release (``vllm_version``) and FlashInfer.

    0.8.0-0.11.0: FlashInfer whenever it imports (TopKTopPSampler: VLLM_USE_FLASHINFER_SAMPLER unset means on), else
    PyTorch's sort; the wheel does not depend on FlashInfer, so the sort is taken unless ``flashinfer_sampler``.
    0.11.1-0.16: PyTorch's sort; FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER=1.
    0.17-0.20: Triton top-k/top-p from 8 rows (apply_top_k_top_p), PyTorch's sort below; FlashInfer when asked.
    0.21-0.29: FlashInfer on by default, and _dummy_sampler_run samples a second time with a seeded generator to warm
    forward_native up: Triton from 8 rows, PyTorch's sort below, so the sort decides for fewer than 8 rows.
    0.30+: Triton for any number of rows; FlashInfer on by default: fused either way.
    Release not known: the current releases' path (as ``vllm_version`` None means everywhere), fused: 0.8.0-0.16
    hold 2.7 times as much, so a plan for one of them should name its release."""
    v = version_of(params)
    flashinfer = params.flashinfer_sampler
    if v is None or v >= (0, 30, 0):
        releases = "0.30+" if v is not None else "release not known: the current releases' path"
        return SamplerPath("fused (FlashInfer or Triton top-k/top-p)", SAMPLER_FUSED_BYTES, releases)
    if v >= (0, 21, 0):
        if rows < 8:
            return _sort_path(rows, "0.21-0.29, under 8 rows (the forward_native warm-up)")
        return SamplerPath("fused (FlashInfer, then Triton)", SAMPLER_FUSED_BYTES, "0.21-0.29")
    if v >= (0, 17, 0):
        if flashinfer:
            return SamplerPath("FlashInfer (VLLM_USE_FLASHINFER_SAMPLER=1)", SAMPLER_FUSED_BYTES, "0.17-0.20")
        if rows < 8:
            return _sort_path(rows, "0.17-0.20, under 8 rows")
        return SamplerPath("Triton top-k/top-p", SAMPLER_FUSED_BYTES, "0.17-0.20")
    releases = "0.8.0-0.11.0" if v < (0, 11, 1) else "0.11.1-0.16"
    if flashinfer:
        return SamplerPath("FlashInfer", SAMPLER_FUSED_BYTES, releases)
    return _sort_path(rows, releases)


def flashinfer_sampler_of(vllm_version: str | None, installed: bool | None, env: str | None = None) -> bool | None:
    """``PlannerParams.flashinfer_sampler`` from what a host shows: FlashInfer installed for the unit's python,
    the unit's VLLM_USE_FLASHINFER_SAMPLER, the installed release. None when that cannot tell.

    VLLM_USE_FLASHINFER_SAMPLER=0 switches it off, =1 on (where FlashInfer is there). Unset: 0.8.0-0.11.0 use it
    whenever it imports (vllm/v1/sample/ops/topk_topp_sampler.py); 0.11.1-0.20 only when asked; 0.21 on by
    default (``sampler_path`` then takes the fused path either way). V0 releases (before 0.8.0) use it only when
    asked, from 0.6.0 (vllm/model_executor/layers/sampler.py: ``if envs.VLLM_USE_FLASHINFER_SAMPLER and
    find_spec("flashinfer")``), and never before."""
    try:
        v = parse_vllm_version(vllm_version) if vllm_version else None
    except ValueError:
        v = None
    flag = (env or "").strip()
    if v is not None and v < (0, 6, 0):
        return False
    if flag in ("0", "1"):
        return flag == "1" and installed is not False
    if v is not None and v < (0, 8, 0):
        return False
    if installed is None:
        return None
    if not installed:
        return False
    if v is None:
        return None
    return v < (0, 11, 1) or v >= (0, 21, 0)


def sampler_rows(max_num_seqs: int, batched_tokens: int) -> int:
    """Rows of the dummy sampler run: one per dummy request, min(tokens, max_num_seqs) (gpu_model_runner.py
    _dummy_run)."""
    return max(1, min(max_num_seqs, batched_tokens))


def sampler_bytes(info: ModelInfo, max_num_seqs: int, batched_tokens: int, params: PlannerParams) -> int:
    """V1: the dummy sampler run's own peak, rows x vocab x the path's bytes (``sampler_path``)."""
    rows = sampler_rows(max_num_seqs, batched_tokens)
    return rows * info.vocab_size * sampler_path(params, rows).bytes_per_logit


# Architectures whose MLP is llama.py's LlamaMLP in vLLM's model registry (Phi3ForCausalLM subclasses it).
LLAMA_MLP_ARCHITECTURES = frozenset(
    {
        "LlamaForCausalLM",
        "LLaMAForCausalLM",
        "MistralForCausalLM",
        "AquilaForCausalLM",
        "AquilaModel",
        "InternLMForCausalLM",
        "InternLM3ForCausalLM",
        "XverseForCausalLM",
        "Phi3ForCausalLM",
    }
)


def v0_forward_copies(info: ModelInfo, tp: int, params: PlannerParams) -> tuple[float, float]:
    """(hidden, intermediate) 16-bit tensors per token alive at the peak of V0's eager forward pass, read off
    vLLM's model code (V0 never compiles the model).

    A decoder layer (qwen2.py, llama.py, ...) runs while the model's loop still holds the layer's input, the
    residual stream is normalised in place, and the caller holds the attention output it hands the MLP: three
    hidden-wide tensors before the MLP allocates anything. Most MLPs keep ``gate_up`` in a local while ``down_proj``
    writes its output (``gate_up, _ = self.gate_up_proj(x); x = self.act_fn(gate_up)``): 4 x hidden + 3 x
    intermediate. LlamaMLP rebinds ``x`` from 0.6.4 (``x, _ = self.gate_up_proj(x); x = self.act_fn(x)``), so
    gate_up is freed before down_proj: the larger of 3 x hidden + 3 x intermediate (during the activation) and
    4 x hidden + 1 x intermediate. A release not known keeps gate_up (the larger)."""
    v = version_of(params)
    rebinds = info.architecture in LLAMA_MLP_ARCHITECTURES and v is not None and v >= (0, 6, 4)
    if not rebinds:
        return 4.0, 3.0
    h, i = info.hidden_size, info.intermediate_size / max(1, tp)  # under TP each rank holds its share of gate_up
    return (3.0, 3.0) if 3 * h + 3 * i >= 4 * h + i else (4.0, 1.0)


def activation_bytes(info: ModelInfo, batched_tokens: int, max_num_seqs: int, tp: int, params: PlannerParams) -> int:
    """The torch activation peak of vLLM's text profile run on one GPU (the encoder run: ``encoder_profile``).

    Forward pass: tokens x (2 x hidden + 3 x intermediate/TP) x 2 bytes (the fitted copies; V1 compiles the model,
    and the compiled graph frees its buffers at their last use); V0's eager forward of a dense model: the copies its
    model code holds (``v0_forward_copies``). MoE: the fitted copies for the hidden stream and the shared expert,
    plus the fused-MoE workspace (``moe_workspace_bytes``), whose per-token width is vLLM's own.
    V1: the larger of the forward pass and the dummy sampler run that follows it (``sampler_bytes``), during which
    the profile's hidden states (tokens x hidden), the sampled rows and their random stand-in (2 x rows x hidden;
    0.8.5 has no torch.rand_like copy, 0.9.2 on has) stay alive. V0: the larger of the forward pass and its
    sampler's sort of one row per dummy sequence (``v0_sampler_path``), the hidden states alive meanwhile."""
    dt = 2  # activations run in 16-bit even for quantized weights
    if info.is_moe:
        inter = float(info.shared_expert_intermediate_size)
        workspace = moe_workspace_bytes(info, batched_tokens, tp, params)
    else:
        inter = float(info.intermediate_size)
        workspace = 0
    hidden_copies, inter_copies = params.act_hidden_copies, params.act_intermediate_copies
    if params.engine == "v0" and not info.is_moe:
        hidden_copies, inter_copies = v0_forward_copies(info, tp, params)
    per_token = dt * (hidden_copies * info.hidden_size + inter_copies * inter / max(1, tp))
    forward = batched_tokens * per_token + workspace
    rows = sampler_rows(max_num_seqs, batched_tokens)
    if params.engine == "v1":
        held = (batched_tokens + 2 * rows) * info.hidden_size * dt
        peak = max(forward, held + sampler_bytes(info, max_num_seqs, batched_tokens, params))
    else:
        # the hidden states and the rows picked for the logits stay alive while the sampler runs
        held = (batched_tokens + rows) * info.hidden_size * dt
        peak = max(forward, held + rows * info.vocab_size * v0_sampler_path(params, rows).bytes_per_logit)
    return int(params.activation_scale * peak)


# --- multimodal encoders ---------------------------------------------------------------------------------


def _limit(params: PlannerParams, modality: str) -> int:
    """--limit-mm-per-prompt for a modality as given, else vLLM's default: 999 under V1 from 0.8.4
    (get_default_limit_per_prompt), 1 under V0 and before."""
    given = dict(params.limit_mm_per_prompt)
    if modality in given:
        return given[modality]
    v = version_of(params)
    return 999 if params.engine == "v1" and (v is None or v >= (0, 8, 4)) else 1


def _profile_counts(params: PlannerParams, modality: str) -> int:
    """The count of a modality vLLM's profile sizes the largest item for (registry
    get_max_tokens_per_item_by_modality): the configured limit up to 0.8.3, 1 from 0.8.4 (V1)."""
    v = version_of(params)
    if params.engine == "v1" and v is not None and v < (0, 8, 4):
        return max(1, _limit(params, modality))
    return 1


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """The Qwen2-VL image processor's resize rule (transformers qwen2_vl image_processing ``smart_resize``):
    each side a multiple of ``factor`` (patch x merge), the area within [min_pixels, max_pixels], the aspect
    kept. Floating point as there, so the sizes match to the pixel."""
    h = round(height / factor) * factor
    w = round(width / factor) * factor
    if h * w > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


def _largest_frame(tower: VisionTower, max_pixels: int | None = None) -> tuple[int, int]:
    """get_image_size_with_most_features: a 9999999-pixel square resized within the processor's bounds."""
    factor = tower.patch_size * tower.spatial_merge_size
    return smart_resize(9999999, 9999999, factor, tower.min_pixels, max_pixels or tower.max_pixels)


def vision_patches(tower: VisionTower, frames: int, size: tuple[int, int]) -> int:
    """Patches of one item: frames padded to a multiple of temporal_patch_size, grid_t x grid_h x grid_w
    (qwen2_vl.py ``_get_vision_info``); its tokens are patches // spatial_merge_size^2."""
    padded = frames + frames % tower.temporal_patch_size
    grid_t = max(padded // tower.temporal_patch_size, 1)
    return grid_t * (size[0] // tower.patch_size) * (size[1] // tower.patch_size)


def video_smart_resize(
    frames: int, height: int, width: int, temporal: int, factor: int, min_pixels: int, max_pixels: int
) -> tuple[int, int]:
    """Qwen3-VL's video resize rule (transformers qwen3_vl video_processing ``smart_resize``): the pixel budget
    covers all frames (frames rounded to a multiple of ``temporal``) x height x width."""
    h = round(height / factor) * factor
    w = round(width / factor) * factor
    t = round(frames / temporal) * temporal
    if t * h * w > max_pixels:
        beta = math.sqrt((frames * height * width) / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif t * h * w < min_pixels:
        beta = math.sqrt(min_pixels / (frames * height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


@dataclass(frozen=True)
class MMItem:
    """The largest item of one modality: the tokens vLLM budgets it at, the embeddings the encoder returns
    for it, and the patches (or audio frames) the encoder runs on."""

    tokens: int
    embeds: int
    patches: int


def _qwen3_video(tower: VisionTower, frames: int) -> int:
    """Patches of a Qwen3-VL video of ``frames`` largest frames, resized by the video processor."""
    factor = tower.patch_size * tower.spatial_merge_size
    frame = _largest_frame(tower)
    size = video_smart_resize(
        frames,
        frame[0],
        frame[1],
        tower.temporal_patch_size,
        factor,
        tower.min_pixels,
        tower.video_max_pixels or tower.max_pixels,
    )
    return vision_patches(tower, frames, size)


def mm_max_tokens_per_item(info: ModelInfo, params: PlannerParams, seq_len: int) -> dict[str, MMItem]:
    """The largest item of each modality vLLM allows, in vLLM's order (image, video, audio).

    Image: the largest frame (``_largest_frame``). Video (Qwen2-VL, Qwen2.5-VL, Qwen2.5-Omni): as many
    largest frames as ``seq_len`` (max_model_len; before 0.10 less one image's tokens) holds, at most
    _MAX_FRAMES_PER_VIDEO per video (16 before 0.11, 14 from 0.11: qwen2_vl.py
    get_num_frames_with_most_features). Qwen3-VL (qwen3_vl.py get_max_video_tokens): 0.13+, one frame pair at
    the video processor's max pixels / temporal_patch_size; 0.11-0.12, _MAX_FRAMES_PER_VIDEO = 24576 frames
    squeezed into the video processor's pixels (2 frames when max_model_len cannot hold 3), budgeted at
    12.5 tokens per embedding (the timestamps and separators around each). Audio (Qwen2.5-Omni): a 30 s
    clip, 3000 mel frames -> (3000-1)//2+1 = 1500 -> (1500-2)//2+1 = 750 tokens (qwen2_audio.py
    _get_feat_extract_output_lengths). Modalities switched off with --limit-mm-per-prompt 0 are left out."""
    tower = info.vision
    out: dict[str, MMItem] = {}
    v = version_of(params)
    if tower is not None:
        merge2 = tower.spatial_merge_size**2
        frame = _largest_frame(tower)
        image_patches = vision_patches(tower, 1, frame)
        image_tokens = image_patches // merge2
        if _limit(params, "image") > 0:
            out["image"] = MMItem(image_tokens, image_tokens, image_patches)
        if _limit(params, "video") > 0:
            if tower.kind == "qwen3_vl" and v is not None and (0, 11, 0) <= v < (0, 13, 0):
                frames = 24576 if _qwen3_video(tower, 3) // merge2 <= seq_len else 2
                patches = _qwen3_video(tower, frames)
                out["video"] = MMItem(int(patches // merge2 * 12.5), patches // merge2, patches)
            elif tower.kind == "qwen3_vl":
                pair = tower.video_max_pixels or tower.max_pixels
                vframe = _largest_frame(tower, pair // tower.temporal_patch_size)
                patches = vision_patches(tower, 2, vframe)
                out["video"] = MMItem(patches // merge2, patches // merge2, patches)
            else:
                # get_num_frames_with_most_features: up to 0.10.1 the images' tokens (image count x one image)
                # are taken from seq_len first; the frames that fit are split among the videos (counts:
                # _profile_counts); _get_max_video_frames: the most frames whose tokens fit (each
                # temporal_patch_size frames make one grid of image_tokens); at least 1 per video
                images = _profile_counts(params, "image") if _limit(params, "image") > 0 else 0
                room = seq_len - (images * image_tokens if v is not None and v < (0, 10, 2) else 0)
                total_frames = max(0, room // max(1, image_tokens) * tower.temporal_patch_size)
                per_video = max(1, total_frames // _profile_counts(params, "video"))
                cap = 16 if v is not None and v < (0, 11, 0) else 14
                patches = vision_patches(tower, min(per_video, cap), frame)
                out["video"] = MMItem(patches // merge2, patches // merge2, patches)
    if info.audio is not None and _limit(params, "audio") > 0:
        out["audio"] = MMItem(750, 750, 1500)  # 1500 encoder frames before the pool halves them
    return out


@dataclass(frozen=True)
class EncoderProfile:
    """vLLM's multimodal profile run on one GPU: how many items of which modality, and what it holds."""

    modality: str
    tokens_per_item: int
    items: int
    budget_tokens: int  # the encoder cache / compute budget (V1)
    patches: int  # through the tower in the run
    peak: int  # bytes: the encoder run's own torch peak
    held: int  # bytes still held while the text dummy run runs (the dummy inputs and the encoder outputs)
    # tokens of the text model's dummy run: V1 runs max_num_batched_tokens; V0's dummy sequences are never
    # cut, so each holds all of its placeholders, however short max_num_batched_tokens / max_num_seqs is
    text_tokens: int = 0
    # V0: the dummy sequences (max_num_seqs cut to max_num_batched_tokens // the items' tokens), one sampled row
    # each; 0 under V1, whose dummy run keeps its max_num_seqs
    seqs: int = 0

    def describe(self) -> str:
        return (
            f"{self.items} {self.modality} item(s) of {self.tokens_per_item} tokens "
            f"({self.patches} patches), encoder budget {self.budget_tokens}"
        )


def encoder_profile(
    info: ModelInfo, params: PlannerParams, batched_tokens: int, max_num_seqs: int, max_model_len: int, tp: int
) -> EncoderProfile | None:
    """The multimodal part of vLLM's profile run, or None (text model, every modality switched off).

    V1 (vllm/v1/worker/gpu_model_runner.py profile_run; the budget: vllm/v1/worker/utils.py MultiModalBudget,
    0.10.2+, and vllm/v1/core/encoder_cache_manager.py compute_mm_encoder_budget): the modality with the
    most tokens per item T is profiled; budget = max(max_num_batched_tokens, T) (encoder compute budget and
    cache size both start at max_num_batched_tokens); items = max(1, min(budget // T, max_num_seqs x
    max(1, min(limit, max_model_len // T)))); before 0.10.2: min(ceil(budget / T), max_num_seqs x limit).
    The encoder runs on all of them at once; its outputs stay in the encoder cache, and the dummy inputs
    alive, while the text model's dummy run follows.
    V0 (vllm/worker/model_runner.py _dummy_run): max_num_seqs is cut to max_num_batched_tokens // (the sum of
    limit x T), at least 1; each dummy sequence carries ``limit`` items of each modality, sized for its
    length, and is not cut to it: the text model then runs all their placeholders.

    The tower's peak per patch reuses the text model's fitted copies (2 x width + 3 x MLP width when gated,
    2 x MLP width for fc1/GELU/fc2), its MLP split by TP as vLLM shards the tower; the pixel values arrive in
    float32 and are cast to 16 bits for the patch embedding."""
    tower = info.vision
    if tower is None and info.audio is None:
        return None
    v = version_of(params)
    per_item = mm_max_tokens_per_item(info, params, max_model_len)
    if not per_item:
        return None
    if params.engine == "v1":
        if v is None or v >= (0, 17, 0):  # ties go to the later name from 0.17 (encoder_budget.py)
            modality = max(per_item, key=lambda m: (per_item[m].tokens, m))
        else:  # max() over the dict: the first of the largest
            modality = max(per_item, key=lambda m: per_item[m].tokens)
        item = per_item[modality]
        tokens = item.tokens
        budget = max(batched_tokens, tokens)
        limit = _limit(params, modality)
        if v is not None and v < (0, 10, 0):
            items = max(1, min(-(-budget // tokens), max_num_seqs * limit))
        elif v is not None and v < (0, 10, 1):
            items = max(1, min(budget // tokens, max_num_seqs * limit))
        else:  # MultiModalBudget (vllm/v1/worker/utils.py, 0.10.1+)
            per_prompt = max(1, min(limit, max_model_len // tokens))
            items = max(1, min(budget // tokens, max_num_seqs * per_prompt))
        # the dummy item the encoder runs on is built for max_num_batched_tokens in 0.8.2-0.9.2 and
        # 0.10.1-0.10.2 (gpu_model_runner.py), for max_model_len from 0.11: a video has fewer frames there
        # than the item the budget was sized by (an image is the same either way)
        if v is not None and v < (0, 11, 0) and not (0, 10, 0) <= v < (0, 10, 1):
            ran = mm_max_tokens_per_item(info, params, batched_tokens).get(modality, item)
            item = MMItem(item.tokens, ran.embeds, ran.patches)
        total_patches = items * item.patches
        out_tokens = items * item.embeds
        text_tokens = batched_tokens
        v0_seqs = 0
    else:
        mm_tokens = sum(_limit(params, m) * it.tokens for m, it in per_item.items())
        seqs = max(1, min(max_num_seqs, batched_tokens // max(1, mm_tokens)))
        seq_len = batched_tokens // seqs
        # each dummy sequence's items are sized for its own length (the video's frames); before 0.7 the
        # Qwen2-VL dummy held images only (qwen2_vl.py _get_dummy_mm_inputs), though videos counted in the cut
        dummy = mm_max_tokens_per_item(info, params, seq_len)
        if v is not None and v < (0, 7, 0):
            dummy = {m: it for m, it in dummy.items() if m != "video"} or dummy
        modality = max(dummy, key=lambda m: dummy[m].tokens)
        item = dummy[modality]
        tokens = item.tokens
        budget = mm_tokens
        items = seqs * sum(_limit(params, m) for m in dummy)
        total_patches = seqs * sum(_limit(params, m) * it.patches for m, it in dummy.items())
        out_tokens = seqs * sum(_limit(params, m) * it.embeds for m, it in dummy.items())
        text_tokens = seqs * max(seq_len, sum(_limit(params, m) * it.tokens for m, it in dummy.items()))
        v0_seqs = seqs
    dt = 2
    if modality == "audio" and info.audio is not None:
        a = info.audio
        width, inter, values, gated, out_width, deep = a.d_model, a.ffn_dim, a.num_mel_bins * 2, False, a.output_dim, 0
    else:
        assert tower is not None
        width, inter, values = tower.hidden_size, tower.intermediate_size, tower.patch_values
        gated, out_width, deep = tower.gated, tower.out_hidden_size, tower.deepstack_layers
    mlp_copies = params.act_intermediate_copies if gated else 2.0
    layer = total_patches * dt * (params.act_hidden_copies * width + mlp_copies * inter / max(1, tp))
    pixels_fp32 = total_patches * values * 4
    cast = total_patches * values * dt + total_patches * width * dt  # the 16-bit copy and the patch embedding
    outputs = out_tokens * out_width * (1 + deep) * dt
    if params.engine == "v1" and v is not None and (0, 11, 0) <= v < (0, 12, 0) and item.embeds < budget:
        # gpu_model_runner.py profile_run, 0.11.x: each item's output shorter than the budget is copied into
        # (budget, hidden) zeros for the encoder cache; the loop variable keeps the originals alive as well (one
        # tensor the model split into the items' views)
        outputs = items * (budget + item.embeds) * out_width * (1 + deep) * dt
    scale = params.activation_scale
    peak = int(scale * (pixels_fp32 + max(cast, layer) + outputs))
    held = int(scale * (pixels_fp32 + outputs))
    return EncoderProfile(modality, tokens, items, budget, total_patches, peak, held, text_tokens, v0_seqs)


# --- non-torch memory --------------------------------------------------------------------------------------


def custom_all_reduce_bytes(tp: int, params: PlannerParams) -> int:
    """vLLM's custom all-reduce on one rank: meta + scratch (meta_size() + max_size, a few KiB of signals
    counted as 0) and the IPC buffer (max_size), made with cudaMalloc; the peers' buffers are mapped, not
    allocated. 0 where vLLM does not use it: world sizes other than 2, 4, 6, 8, releases before 0.3.0."""
    v = version_of(params)
    if tp not in (2, 4, 6, 8) or (v is not None and v < (0, 3, 0)):
        return 0
    return 2 * params.custom_ar_max_size


def nccl_communicators(tp: int, pp: int, params: PlannerParams, acc: Accounting) -> int:
    """NCCL communicators of one rank inside the budget: per group with more than one rank (TP, PP), torch's
    NCCL process group and vLLM's own (cupy 0.3.1-0.3.3, PyNccl from 0.4); before 0.3.1 torch's only.
    V1 0.11+ takes its baseline after making them, but NCCL (2.22+, NCCL_RUNTIME_CONNECT=1 by default)
    allocates their channel buffers at the first collectives, in the profile run: they still count (the
    published V1 0.11 starts of Qwen3-32B at TP 1 and TP 2 differ by about that much)."""
    groups = (tp > 1) + (pp > 1)
    if groups == 0 or acc.distributed == "none":
        return 0
    v = version_of(params)
    return groups * (1 if v is not None and v < (0, 3, 1) else 2)


def nccl_comm_bytes(params: PlannerParams) -> int:
    """NCCL's own buffers per communicator (NCCL_BUFFSIZE x channels x peers: not in vLLM's source): the one
    fitted constant, fixed so that TP 2 with both communicators and the custom all-reduce adds up to
    non_torch_bytes_tp (the V0 logs' figure under TP)."""
    rest = params.non_torch_bytes_tp - params.non_torch_bytes - 2 * params.custom_ar_max_size
    return max(0, rest // 2)


def non_torch_parts(
    info: ModelInfo, tp: int, pp: int, batched_tokens: int, params: PlannerParams
) -> list[tuple[str, int, str]]:
    """The memory outside torch's activation peak that vLLM counts before the KV cache, part by part:
    (row name, bytes, where it comes from)."""
    acc = accounting_of(params)
    world = tp * pp
    if "non_torch" in params.measured:
        value = params.non_torch_bytes_tp if world > 1 else params.non_torch_bytes
        return [("- non-torch memory", value, "vLLM's 'non_torch_memory' in the calibration log")]
    parts: list[tuple[str, int, str]] = []
    if acc.non_torch:
        parts.append(
            (
                "- non-torch memory",
                params.non_torch_bytes,
                "fitted to published starts; vLLM prints 0.01-0.28 GiB on one GPU (its 'non_torch_memory' lines)",
            )
        )
    if acc.context:
        parts.append(
            (
                "- CUDA context",
                params.cuda_context_bytes,
                f"vLLM {acc.releases} counts total - free (vllm-project/vllm#2031: 98 blocks more on Llama-2-7B)",
            )
        )
    if acc.context and params.held_by_others > 0:
        parts.append(
            (
                "- held by other processes",
                params.held_by_others,
                f"NVML's per-process figures on the GPU; vLLM {acc.releases} counts total - free as its own use",
            )
        )
    comms = nccl_communicators(tp, pp, params, acc)
    if comms:
        ar = custom_all_reduce_bytes(tp, params) if acc.distributed == "all" else 0
        if acc.name in ("total-used", "since-init") and ar:
            ar += params.custom_ar_rank_data  # a torch tensor: counted where total - free is "used"
        parts.append(
            (
                "- NCCL / custom all-reduce",
                comms * nccl_comm_bytes(params) + ar,
                f"{comms} NCCL communicator(s) x {nccl_comm_bytes(params) / GiB:.2f} GiB (fitted)"
                + (f" + custom all-reduce buffers {ar / MiB:.0f} MiB (custom_all_reduce.py)" if ar else ""),
            )
        )
    if acc.held_allreduce and tp > 1:
        # 0.2.5: without TORCH_NCCL_AVOID_RECORD_STREAMS torch keeps each all-reduce input until its NCCL stream
        # synchronizes: the embedding's and two per layer (attention and MLP outputs), tokens x hidden x 2 B
        held = (2 * layers_per_stage(info, pp) + 1) * batched_tokens * info.hidden_size * 2
        parts.append(("- all-reduce inputs held", held, "0.2.5: TORCH_NCCL_AVOID_RECORD_STREAMS set only from 0.2.6"))
    return parts


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
    # the profile run's sampler: rows, bytes per logit and path (sampler_path, v0_sampler_path)
    sampler: str = ""
    # the non-torch total part by part (row, bytes, source): see non_torch_parts()
    non_torch_parts: tuple[tuple[str, int, str], ...] = ()
    # the multimodal profile run, when the model has an encoder: its share of the activation peak
    encoder: EncoderProfile | None = None
    accounting: str = ""  # the name of the release range's accounting (ACCOUNTINGS)
    kv_layout: str = "2 x layers (of the PP stage) x KV heads/TP x head_dim x dtype"
    # a hybrid model (KvGroups): the longest request the blocks hold, and how many full-length requests; -1 and
    # 0.0 for a model whose every layer is full attention (kv_tokens says both)
    request_tokens: int = -1
    hybrid_concurrency: float = 0.0

    @property
    def longest_request(self) -> int:
        """The longest request the KV cache holds, the figure vLLM checks max_model_len against."""
        return self.kv_tokens if self.request_tokens < 0 else self.request_tokens

    def concurrency_at(self, length: int) -> float:
        """How many requests of ``length`` tokens the KV cache holds at once (vLLM's "Maximum concurrency")."""
        if self.request_tokens >= 0:
            return self.hybrid_concurrency
        return self.kv_tokens / length if length else 0.0

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
                    "the larger of the forward pass, tokens x (2 hidden + 3 intermediate/TP) x 2 B, and the "
                    f"sampler of the profile run, {self.sampler}",
                    "vLLM's 'activation peak' in the calibration log, scaled to these batch sizes",
                ),
            ),
        ]
        if self.encoder is not None:
            e = self.encoder
            rows.append(
                (
                    "  of which the multimodal encoder run",
                    g(max(e.peak, e.held)),
                    f"{e.describe()}: vLLM's encoder profile (gpu_model_runner.py profile_run, MultiModalBudget)",
                )
            )
        parts = self.non_torch_parts or (
            (
                "- non-torch memory",
                self.non_torch,
                src("non_torch", "vLLM's 'non_torch_memory' lines", "vLLM's 'non_torch_memory' in the calibration log"),
            ),
        )
        rows += [(name, g(value), source) for name, value, source in parts]
        if self.accounting == "torch-peak":
            rows.append(("- non-torch memory", g(0), "vLLM 0.2.0-0.2.4 counts torch's allocated peak only"))
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
            ("KV bytes per token", f"{self.kv_per_token / 1024:.1f} KiB", self.kv_layout),
            ("KV capacity", f"{self.kv_tokens} tokens", f"{self.blocks} blocks of {self.block_size}"),
            *(
                [
                    (
                        "longest request",
                        f"{self.request_tokens} tokens",
                        "the blocks less what the sliding-window and linear-attention groups keep per request "
                        "(vLLM prints the blocks shared among its groups, or concurrency x max_model_len)",
                    )
                ]
                if self.request_tokens >= 0
                else []
            ),
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
    enc = encoder_profile(info, p, batched, seqs, length, tp)
    if enc is not None:
        # the encoder runs first; its inputs and outputs stay alive through the text model's dummy run (V0: of
        # fewer sequences, each holding its items' placeholders)
        if enc.text_tokens > batched or enc.seqs:
            act = activation_bytes(info, max(enc.text_tokens, batched), enc.seqs or seqs, tp, p)
        act = max(act + enc.held, enc.peak)
    parts = non_torch_parts(info, tp, pp, batched, p)
    non_torch = sum(value for _, value, _ in parts)
    graphs_mode = "eager" if p.enforce_eager else ("estimate" if cudagraphs_estimated(p) else "off")
    graphs = p.cudagraph_bytes if graphs_mode == "estimate" else 0
    kv = requested - weights - act - non_torch - graphs - p.extra_bytes
    per_token = kv_bytes_per_token(info, kv_cache_dtype, tp=tp, pp=pp, params=p)
    if info.is_mla:
        layout = {
            "heads": "full K and V heads of qk_nope + qk_rope (vLLM before MLA support, 0.7.1)",
            "latent-aligned": "MLA latent of layers x (kv_lora_rank + rope) padded to 256 B (V0 cache_engine.py)",
            "latent": "MLA latent: layers x (kv_lora_rank + qk_rope_head_dim) x dtype, the same on every rank",
        }[mla_layout(info, p)]
    else:
        layout = "2 x layers (of the PP stage) x KV heads/TP x head_dim x dtype"
    blocks = max(0, kv // (per_token * p.block_size))
    block_size, kv_tokens, request, conc = p.block_size, blocks * p.block_size, -1, 0.0
    groups = kv_groups(info, kv_cache_dtype, tp=tp, pp=pp, params=p, batched_tokens=batched)
    if groups is not None and info.hybrid is not None:
        blocks = max(0, kv // groups.block_bytes)
        block_size = groups.block_size
        kv_tokens = groups.reported_tokens(blocks, length)
        request = groups.request_tokens(blocks, length)
        conc = blocks / max(1, groups.blocks_per_request(length))
        per_token = groups.block_bytes * groups.groups // groups.block_size
        layout = (
            f"hybrid ({info.hybrid.what}): {groups.groups} groups of {groups.group_size} layers share blocks of "
            f"{groups.block_size} tokens, {groups.page} B a layer"
        )
    split = " / TP" + (", per PP stage (its layers and one embedding)" if pp > 1 else "")
    if "weights" in p.measured:
        weights_source = "vLLM's 'model weights take' / 'Model loading took' in the calibration log"
    elif info.weights is not None:
        weights_source = "safetensors headers (exact tensor bytes)" + split
    else:
        weights_source = "estimate from config.json (parameters x dtype)" + split
    if p.engine == "v1":
        rows = sampler_rows(seqs, enc.text_tokens if enc is not None and enc.text_tokens > batched else batched)
        path = sampler_path(p, rows)
    else:
        rows = sampler_rows(enc.seqs if enc is not None and enc.seqs else seqs, batched)
        path = v0_sampler_path(p, rows)
    sampler = f"{rows} rows x vocab x {path.bytes_per_logit} B ({path.name}; {path.releases})"
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
        kv_tokens=kv_tokens,
        batched_tokens=batched,
        max_num_seqs=seqs,
        block_size=block_size,
        weights_source=weights_source,
        graphs=graphs_mode,
        measured=p.measured,
        non_torch_parts=tuple(parts),
        encoder=enc,
        accounting=accounting_of(p).name,
        kv_layout=layout,
        sampler=sampler,
        request_tokens=request,
        hybrid_concurrency=conc,
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


def request_tokens_at(
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
    """The longest request vLLM's KV cache will hold: its token figure, but for a hybrid model (KvGroups), whose
    sliding-window and linear-attention groups take a fixed share of each request's blocks."""
    return budget(
        info, gpu_bytes, util, tp=tp, pp=pp, max_model_len=max_model_len, kv_cache_dtype=kv_cache_dtype, params=params
    ).longest_request


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
        held = request_tokens_at(
            info, gpu_bytes, util, tp, pp=pp, max_model_len=length, kv_cache_dtype=kv_cache_dtype, params=p
        )
        return held >= need(length)

    best = 0
    lo, hi = 1, cap
    if (
        p.engine == "v0"
        and cap > p.v0_chunked_prefill_above
        and p.max_num_batched_tokens is None
        and v0_chunks_long_context(p)
    ):
        # two regimes: up to 32K (profile grows with the length) and above (fixed chunk)
        above = request_tokens_at(
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
    groups = kv_groups(info, kv_cache_dtype, tp=tp, pp=pp, params=p, batched_tokens=b0.batched_tokens)
    if groups is not None:
        # the full-attention groups' blocks for the longer length, the others' at the planned one
        full = groups.full_groups * -(-need_tokens // groups.block_size)
        need = fixed + (full + groups.other_blocks(max_model_len)) * groups.block_bytes
    util = round(math.ceil(need / gpu_bytes * 100 - 1e-9) / 100, 2)
    # the budget floors total x util to whole bytes: a util that lands a byte short takes the next hundredth
    if int(gpu_bytes * util) < need:
        util = round(util + 0.01, 2)
    return util


def state_block_seqs(info: ModelInfo, b: Budget, params: PlannerParams, margin: float = 0.0) -> int | None:
    """The most sequences a hybrid model's state blocks let vLLM run at once, ``margin`` (the planner's band) taken
    off the blocks as it is taken off lengths. Each sequence in flight keeps one block of its linear-attention
    layers' state; from 0.19 vLLM refuses to start with max_num_seqs above the blocks ("max_num_seqs (1024)
    exceeds available Mamba cache blocks (600)": vllm/config/compilation.py), earlier V1 releases capped their
    CUDA graphs to them. None: no linear-attention layers, or V0 (``keeps_state_blocks``)."""
    return int(b.blocks / (1 + margin)) if keeps_state_blocks(info, params) else None


def keeps_state_blocks(info: ModelInfo, params: PlannerParams) -> bool:
    """Whether vLLM keeps state blocks for this model, one per sequence in flight: V1, and linear-attention layers."""
    return info.hybrid is not None and info.hybrid.linear > 0 and params.engine == "v1"


def refuses_seqs_above_state_blocks(params: PlannerParams) -> bool:
    """Whether the release refuses to start a hybrid model with max_num_seqs above its state blocks (0.19 on;
    an unknown release is taken as the current ones)."""
    v = version_of(params)
    return v is None or v >= (0, 19, 0)


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
        return self.edge > 0 and self.budget.longest_request > self.edge

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
# published start-up logs: at most +8.5% from config.json alone (the tuning cases within its model), at most +5.6%
# once calibrated on another start of the same model and setup. The sealed part exceeds it on one case (the same
# file says which). A recommended max_model_len is never above the edge
# less this band (``Plan.safe_edge``); bench/bench_planner_accuracy.py fails when a measured error leaves it.
KV_MARGIN = 0.10
CALIBRATED_MARGIN = 0.06
# A model with a multimodal encoder: the same file's multimodal cases (Qwen2-VL, Qwen2.5-VL, measured apart) leave
# the planner up to +21% above vLLM's figure (memory the encoder's profile holds outside torch is not modelled), so a
# plan for one from config.json keeps a wider band.
MULTIMODAL_MARGIN = 0.25
# A log's GPU total within this share of the planned card's is the same card (torch's total, less what the
# driver keeps, moves by a few percent between drivers). Calibration corrects absolute bytes: a log of another
# card (or TP, release, eager mode) is not carried at all (calibrate.LogReading.differences_from), and the band
# narrows to CALIBRATED_MARGIN only when the log shows it ran on the planned card.
SAME_CARD = 0.05


def kv_band(info: ModelInfo, params: PlannerParams | None = None) -> float:
    """The error band of a plan from config.json for this model: KV_MARGIN, or MULTIMODAL_MARGIN when vLLM will
    build and profile a multimodal encoder for it."""
    if info.vision is None and info.audio is None:
        return KV_MARGIN
    if info.audio is None and params is not None and vision_tower_off(info, params):
        return KV_MARGIN  # --limit-mm-per-prompt image and video 0: no vision tower is built
    return MULTIMODAL_MARGIN


def same_card(log_total: int | None, planned_total: int) -> bool:
    """Whether a log's GPU (its printed total; None when the log does not print one) is the planned card."""
    return log_total is not None and abs(log_total - planned_total) <= SAME_CARD * planned_total


def calibrated_band(log_total: int | None, planned_total: int, uncalibrated: float = KV_MARGIN) -> float:
    """The error band of a plan calibrated on a log: narrow when the log's printed total shows the planned card,
    else the uncalibrated band (a log that does not say which card it ran on is not taken to be this one)."""
    return CALIBRATED_MARGIN if same_card(log_total, planned_total) else uncalibrated


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
        held = request_tokens_at(
            info, smallest, u, tp, pp=pp, max_model_len=length, kv_cache_dtype=kv_cache_dtype, params=p
        )
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
        if (
            p.engine == "v0"
            and batched is not None
            and batched < length
            and (length <= p.v0_chunked_prefill_above or not v0_chunks_long_context(p))
        ):
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
        cap = state_block_seqs(info, b, p, margin)
        if cap is not None and seqs > cap:
            # a hybrid model: one state block per sequence in flight, and no more sequences than blocks
            refuses = refuses_seqs_above_state_blocks(p)
            notes.append(
                f"max_num_seqs {seqs} -> {max(1, cap)}: each sequence keeps one block of the linear-attention "
                f"layers' state, and the KV cache has about {b.blocks} blocks ({cap} with the planner's "
                f"{margin:.0%} band)" + ("; vLLM refuses to start above them" if refuses else "")
            )
            seqs = max(1, cap)
            fits = fits and cap >= 1
            q = replace(p, max_num_seqs=seqs)  # fewer sampler rows in the profile: the budget at those
            b = budget(
                info, smallest, u, tp=tp, pp=pp, max_model_len=length or want, kv_cache_dtype=kv_cache_dtype, params=q
            )
            asked = b
            if length != want:
                asked = budget(
                    info, smallest, u, tp=tp, pp=pp, max_model_len=want, kv_cache_dtype=kv_cache_dtype, params=q
                )
        conc = b.concurrency_at(length)
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
        held = request_tokens_at(
            info, smallest, u, tp, pp=pp, max_model_len=length, kv_cache_dtype=kv_cache_dtype, params=p
        )
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
    vllm_version: str | None = None  # "vLLM API server version X" (None: as the plan has it)
    # "Using FlashInfer for top-p & top-k sampling" / "... Falling back to the PyTorch-native implementation"
    flashinfer_sampler: bool | None = None
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
    at = PlannerParams(engine=reported.engine or "v1", vllm_version=reported.vllm_version)
    groups = kv_groups(info, reported.kv_cache_dtype, tp=reported.tp, pp=reported.pp, params=at)
    if groups is not None:
        # a hybrid's token figure is the blocks shared among its groups up to 0.20, concurrency x max_model_len
        # after: the GiB figure ("Available KV cache memory") says the bytes without that reading
        if reported.kv_cache_bytes is not None:
            return reported.kv_cache_bytes
        if reported.kv_tokens is not None and groups.share_report:
            return reported.kv_tokens // groups.block_size * groups.groups * groups.block_bytes
        return None
    per = kv_bytes_per_token(info, reported.kv_cache_dtype, tp=reported.tp, pp=reported.pp, params=at)
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
    size, batch sizes, eager mode); the parameters returned keep the plan's, and take the start's vLLM release and
    sampler path (FlashInfer or not) when the plan names none (as ``plan`` does): the terms that differ between
    releases and installs (the dummy sampler's path) must be the same in the correction and in the plan."""
    p = params or PlannerParams()
    if p.vllm_version is None and reported.vllm_version is not None:
        p = replace(p, vllm_version=reported.vllm_version)
    if p.flashinfer_sampler is None and reported.flashinfer_sampler is not None:
        # the host's vLLM samples as the start did: the same dummy sampler path in the correction and the plan
        p = replace(p, flashinfer_sampler=reported.flashinfer_sampler)
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
        vllm_version=reported.vllm_version or p.vllm_version,
        flashinfer_sampler=(
            p.flashinfer_sampler if reported.flashinfer_sampler is None else reported.flashinfer_sampler
        ),
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


# What the driver keeps of a card for itself (NVML's "reserved"): CUDA reports the total less this, and vLLM
# sizes gpu_memory_utilization on what CUDA reports. nvidia-smi -q on Linux hosts shows 354 MiB reserved on an RTX
# 4090, 330-550 MiB on H100s and 560-830 MiB on A100 80GBs; with what NVML already leaves out of the card's size,
# CUDA's totals are 0.3-0.45 GiB under 8-24 GiB cards, ~0.5-0.6 under 32-48 GiB and 0.75-1.0 under 80-96 GiB ones
# (e.g. 23.64 GiB on an RTX 4090, 47.54 on an RTX A6000, 79.15-79.25 on an A100 80GB, 94.97 on an RTX PRO 6000).
# bench/bench_gpu_totals.py checks the estimate against every card the planner's cases name.
DRIVER_RESERVE_BASE = int(0.3 * GiB)
DRIVER_RESERVE_SHARE = 0.0075
# Data-centre cards with GDDR memory run with ECC on by default, which keeps 1/16 of it for the check bits (an L4 "24
# GB" shows 22.5 GiB to NVML, a T4 "16 GB" 15 GiB, an L40S or A40 "48 GB" 45 GiB). HBM cards keep ECC apart.
_ECC_BY_DEFAULT = re.compile(r"(?<![\w-])(?:T4|L4|A2|A10G?|A16|A40|L20|L40S?)(?![\w-])", re.IGNORECASE)


@dataclass(frozen=True)
class CardSize:
    """A GPU named by the size it is sold with, and the part CUDA will not report of it."""

    total: int  # the card's memory
    reserved: int  # what ECC and the driver keep of it: CUDA (and vLLM's total_gpu_memory) reports total - reserved
    notes: tuple[str, ...] = ()  # how the size was read


def driver_reserve(card: int) -> int:
    """What the driver keeps of a card of ``card`` bytes, estimated (0.3 GiB and 0.75 %)."""
    return int(DRIVER_RESERVE_BASE + DRIVER_RESERVE_SHARE * card)


def gpu_card(text: str, gpu_name: str | None = None) -> CardSize:
    """``--gpu`` as a user writes it. A whole number with a bare GB ("24GB", "80GB") names a card as it is sold: its
    memory in binary units, less what the driver keeps (and ECC, by default on the data-centre GDDR cards when the
    name says so), since vLLM plans on what CUDA reports. A size in GiB (or a fraction of GB) is taken as what CUDA
    reports, as vLLM prints it in total_gpu_memory."""
    total, note = parse_gpu_size(text)
    if note is None or "." in text:  # a note: a bare GB on a number; a fraction is not a card's size
        return CardSize(total, 0, (note,) if note else ())
    ecc = bool(gpu_name and _ECC_BY_DEFAULT.search(gpu_name))
    kept = total // 16 if ecc else 0
    reserved = kept + driver_reserve(total - kept)
    why = f"ECC, on by default on the {gpu_name}, keeps 1/16 and " if ecc else ""
    unnamed = (
        "; a data-centre card with GDDR memory (T4, L4, A10, L40S ...) keeps 1/16 more for ECC: name it with --gpu-name"
        if not gpu_name
        else ""
    )
    return CardSize(
        total,
        reserved,
        (
            note,
            f"CUDA reports about {format_gib(total - reserved)} of a {text.strip()} card, and vLLM plans on that "
            f"({why}the driver keeps about {format_gib(reserved - kept)}): give the total vLLM prints, in GiB, to "
            f"plan on it exactly{unnamed}",
        ),
    )


def format_gib(b: int | float) -> str:
    return f"{b / GiB:.2f} GiB"
