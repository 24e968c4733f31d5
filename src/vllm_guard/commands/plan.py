"""`vllm-guard plan`: predict flags that fit a model on a GPU, and show the budget behind them."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from vllm_guard.cli import add_common
from vllm_guard.exitcodes import ExitCode

HELP = "predict flags that fit a model on a GPU"
DESCRIPTION = (
    "Read the model's config.json and safetensors headers, the GPUs (NVML, or --gpu SIZE for hardware "
    "this host does not have), and predict how vLLM will split GPU memory: weights, activation peak, "
    "non-torch memory, KV cache. Prints the edge (the longest max_model_len the KV cache holds at a util), the "
    "planner's error band and the longest length it allows, the util a max_model_len needs, and a first-fit "
    "config whose max_model_len is never above the edge less the band. Exit 0 if it fits, 1 if it does not."
)


# what vLLM's --kv-cache-dtype accepts (the config's own list, vllm/config CacheDType)
KV_CACHE_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16")
# what vLLM's --block-size accepts (vllm/config/cache.py BlockSize)
BLOCK_SIZES = (1, 8, 16, 32, 64, 128, 256)
# the modalities --limit-mm-per-prompt names for the Qwen VL / Omni models
MODALITIES = ("image", "video", "audio")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    p.add_argument("--model", type=Path, help="model folder (default: the first target's model in the config)")
    p.add_argument(
        "--gpu",
        action="append",
        default=None,
        metavar="SIZE|auto",
        help="GPU size to plan for, e.g. 24GiB, 80G or 80GB (repeat, or comma-separate, one per GPU). A size in GiB "
        "is what CUDA reports, as vLLM prints total_gpu_memory; a whole number of GB names a card as it is sold: "
        "its GB are GiB, less what the driver keeps (and ECC on the data-centre GDDR cards --gpu-name names). "
        "Default auto: the GPUs NVML sees, less what their driver keeps",
    )
    p.add_argument(
        "--gpu-name",
        default=None,
        metavar="NAME",
        help="the GPU's name as nvidia-smi shows it (e.g. 'NVIDIA A100-SXM4-80GB'): vLLM picks its batch defaults "
        "by it, smaller on an A100 (default: the name NVML gives with --gpu auto; with --gpu SIZE none, and a card "
        "of 70 GiB or more is planned with the larger batch, the careful side)",
    )
    p.add_argument(
        "--tp",
        type=int,
        default=None,
        help="tensor parallel size; must divide the model's attention heads, as vLLM checks (default: from the "
        "config, else 1)",
    )
    p.add_argument(
        "--pp",
        type=int,
        default=None,
        help="pipeline parallel size (GPUs = TP x PP); must divide the model's layers, as vLLM checks (default: "
        "from the --calibrate-from log, else 1)",
    )
    p.add_argument("--max-model-len", type=int, default=None, help="context to plan for (default: the model's)")
    p.add_argument(
        "--max-num-seqs",
        type=int,
        default=None,
        help="sequences vLLM runs at once; sizes its sampler warm-up (default: the config's, else vLLM's: 256, "
        "1024 under V1 on GPUs of 70 GiB and more but an A100, and on all in 0.8.0-0.8.3)",
    )
    p.add_argument(
        "--max-num-batched-tokens",
        type=int,
        default=None,
        help="tokens per scheduler step; vLLM's profile run pushes this many through the model, so the activation "
        "peak grows with it (default: the config's, else vLLM's: V1 2048, 8192 on GPUs of 70 GiB and more but an "
        "A100, 16384 from 160 GiB in 0.28+)",
    )
    p.add_argument(
        "--block-size",
        type=int,
        default=None,
        choices=BLOCK_SIZES,
        help="tokens per KV cache block: the KV capacity is a whole number of blocks (default: 16, vLLM's on CUDA)",
    )
    p.add_argument(
        "--enforce-eager",
        action="store_const",
        const=True,
        default=None,
        help="plan for vLLM's eager mode: no CUDA graphs, so none of their memory (default: the config's)",
    )
    p.add_argument("--util", type=float, default=None, help="gpu_memory_utilization to plan at (default: first fit)")
    p.add_argument(
        "--kv-cache-dtype",
        default=None,
        choices=KV_CACHE_DTYPES,
        help="auto (the model's dtype) or an fp8 kind (half the bytes per token)",
    )
    p.add_argument(
        "--engine",
        choices=["v1", "v0"],
        default=None,
        help="vLLM engine to model (v1: vLLM >= 0.8; v0: older); default: the one of the --calibrate-from log, else v1",
    )
    p.add_argument(
        "--calibrate-from",
        type=Path,
        default=None,
        metavar="LOG",
        help="a log of a vLLM start on this host (journalctl -u UNIT -o cat), a failed one too: vLLM's own memory "
        "figures replace the planner's estimates (GPU size, util and flags are read from it where it states them, "
        "else from the options and the config)",
    )
    p.add_argument(
        "--estimate-cudagraphs",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="whether vLLM subtracts a CUDA graph estimate from the KV budget "
        "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; default: the config's target environment, else the release: on "
        "from 0.20.0 and for the current releases)",
    )
    p.add_argument(
        "--vllm-version",
        default=None,
        metavar="X.Y.Z",
        help="the vLLM release to model: what it counts before the KV cache changed across releases (0.2.0-0.2.4 "
        "torch's peak only, 0.2.5-0.3.0 everything in use, later the increase since a baseline), as did its "
        "MLA layout and multimodal profile (default: the version the config's target python has installed, "
        "else the one the --calibrate-from log names, else the current releases' rules)",
    )
    p.add_argument(
        "--flashinfer-sampler",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="whether vLLM samples top-k/top-p on FlashInfer (installed in its python, as in the vllm/vllm-openai "
        "images; VLLM_USE_FLASHINFER_SAMPLER): its profile's dummy sampler run then holds a fraction of what "
        "PyTorch's sort holds (default: what the config's target python has installed, else what the "
        "--calibrate-from log says it used, else the release's pip install)",
    )
    p.add_argument(
        "--limit-mm-per-prompt",
        default=None,
        metavar="JSON|M=N,...",
        help='items per prompt by modality, as vLLM takes it (\'{"image": 2, "video": 0}\' or image=2,video=0): '
        "vLLM profiles its vision/audio encoder with the largest items these allow; 0 switches a modality off "
        "(default: vLLM's, 999 under V1, 1 under V0)",
    )


def parse_mm_limits(text: str) -> dict[str, int]:
    """--limit-mm-per-prompt as vLLM takes it: a JSON object of modality -> count, or modality=count pairs.
    Raises ValueError naming the accepted forms."""
    form = 'use e.g. \'{"image": 2, "video": 0}\' or image=2,video=0'
    body = text.strip()
    pairs: dict[str, object] = {}
    if body.startswith("{"):
        try:
            loaded = json.loads(body)
        except json.JSONDecodeError as err:
            raise ValueError(f"--limit-mm-per-prompt {text!r} is not valid JSON ({err.msg}): {form}") from None
        if not isinstance(loaded, dict):
            raise ValueError(f"--limit-mm-per-prompt {text!r} is not an object: {form}")
        pairs = dict(loaded)
    else:
        for part in body.split(","):
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"--limit-mm-per-prompt {text!r}: {part!r} is not modality=count: {form}")
            try:
                pairs[key.strip()] = int(value.strip())
            except ValueError:
                raise ValueError(f"--limit-mm-per-prompt {text!r}: {value.strip()!r} is not a whole number") from None
    out: dict[str, int] = {}
    for modality, given in pairs.items():
        if modality not in MODALITIES:
            known = ", ".join(MODALITIES)
            raise ValueError(f"--limit-mm-per-prompt: unknown modality {modality!r}; the modalities are {known}")
        count = given.get("count") if isinstance(given, dict) else given  # 0.11+ also takes {"count": N, ...}
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"--limit-mm-per-prompt: {modality} must be a whole number >= 0, not {given!r}")
        out[modality] = count
    if not out:
        raise ValueError(f"--limit-mm-per-prompt {text!r} names no modality: {form}")
    return out


def _sizes(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or ["auto"]:
        out.extend(s.strip() for s in v.split(",") if s.strip())
    return out


def run(args: argparse.Namespace) -> int:
    from vllm_guard.adapters.modelfs import load_model_info
    from vllm_guard.adapters.nvml import FakeGpus, read_gpus
    from vllm_guard.consts import JSON_SCHEMA, Paths
    from vllm_guard.core.planner import (
        CALIBRATED_MARGIN,
        MULTIMODAL_MARGIN,
        Engine,
        GiB,
        PlannerParams,
        accounting_of,
        calibrated_band,
        engine_of_version,
        first_fit,
        gpu_card,
        kv_band,
        kv_bytes_per_token,
        parse_vllm_version,
        util_for,
    )
    from vllm_guard.errors import GuardError, UsageError

    paths = Paths(args.root)
    for flag, value in (
        ("--tp", args.tp),
        ("--pp", args.pp),
        ("--max-model-len", args.max_model_len),
        ("--max-num-seqs", args.max_num_seqs),
        ("--max-num-batched-tokens", args.max_num_batched_tokens),
    ):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be at least 1, not {value}")
    if args.util is not None and not 0 < args.util <= 1:
        raise UsageError("--util must be in (0, 1]")
    version_text: str | None = args.vllm_version
    if version_text is not None:
        try:
            parse_vllm_version(version_text)
        except ValueError as err:
            raise UsageError(f"--vllm-version: {err}") from None
    mm_limits: dict[str, int] = {}
    if args.limit_mm_per_prompt is not None:
        try:
            mm_limits = parse_mm_limits(args.limit_mm_per_prompt)
        except ValueError as err:
            raise UsageError(str(err)) from None
    # a calibration log is read first: what the start ran with fills in what neither the options nor the config say
    reading = _read_calibration_log(Path(args.calibrate_from)) if args.calibrate_from is not None else None
    model = args.model
    on_cpu = False
    # each setting: the option, else the config's first target, else the calibration log, else vLLM's default
    chosen: dict[str, Any] = {
        "tp": args.tp,
        "kv_cache_dtype": args.kv_cache_dtype,
        "max_num_seqs": args.max_num_seqs,
        "max_num_batched_tokens": args.max_num_batched_tokens,
        "enforce_eager": args.enforce_eager,
    }
    target = _first_target(paths, args.config, need=model is None)
    version_source = "--vllm-version" if version_text is not None else ""
    if target is not None and version_text is None:
        from vllm_guard.app.place import vllm_release

        version_text, version_source = vllm_release(target)
    if version_text is None and reading is not None and reading.vllm_version is not None:
        version_text = reading.vllm_version
        version_source = "the calibration log"
    if target is not None:
        on_cpu = target.device == "cpu"
        model = model if model is not None else paths.under(target.model.lstrip("/"))
        from_config = {
            "tp": target.flags.tensor_parallel_size,
            "kv_cache_dtype": target.flags.kv_cache_dtype,
            "max_num_seqs": target.flags.max_num_seqs,
            "max_num_batched_tokens": target.flags.max_num_batched_tokens,
            "enforce_eager": target.flags.enforce_eager,
        }
        chosen = {k: v if v is not None else from_config[k] for k, v in chosen.items()}
    pp, block_size = args.pp, args.block_size
    if reading is not None:
        from_log = {
            "tp": reading.tp,
            "kv_cache_dtype": reading.kv_cache_dtype if reading.kv_cache_dtype in KV_CACHE_DTYPES else None,
            "max_num_seqs": reading.max_num_seqs,
            "max_num_batched_tokens": reading.max_num_batched_tokens,
            "enforce_eager": reading.enforce_eager,
        }
        chosen = {k: v if v is not None else from_log[k] for k, v in chosen.items()}
        pp = pp if pp is not None else reading.pp
        if block_size is None and reading.block_size_source in (
            "stated in the log",
            "inferred from blocks and concurrency",
        ):
            block_size = reading.block_size
    tp: int = chosen["tp"] or 1
    kv_dtype: str = chosen["kv_cache_dtype"] or "auto"
    pp = pp or 1
    block_size = block_size or 16
    max_num_seqs: int | None = chosen["max_num_seqs"]
    max_num_batched_tokens: int | None = chosen["max_num_batched_tokens"]
    enforce_eager = bool(chosen["enforce_eager"])
    if max_num_seqs is not None and max_num_batched_tokens is not None and max_num_batched_tokens < max_num_seqs:
        raise UsageError(
            f"max_num_batched_tokens ({max_num_batched_tokens}) must be at least max_num_seqs ({max_num_seqs}), "
            "as vLLM checks: raise --max-num-batched-tokens or lower --max-num-seqs"
        )
    if model is None:
        raise UsageError("no model: pass --model PATH (or write a config with `vllm-guard init`)")
    info = _with_processor_bounds(load_model_info(Path(model)), Path(model))
    if info.unmodelled_layout:
        # a plan from the wrong KV model would be several times off (a hybrid's state per sequence, a window's
        # tokens): none is made rather than a wrong one
        raise GuardError(
            "plan-model-not-modelled",
            f"{model}: {info.unmodelled_layout}; the planner models full attention, sliding-window and Gated "
            "DeltaNet layers only, so it cannot say how much KV cache vLLM will find for this model",
            "start vLLM once and read its own 'GPU KV cache size' and 'Maximum concurrency' lines, then set "
            "max_model_len from them; the guard still heals the unit from what vLLM reports when a start fails",
            exit_code=ExitCode.UNAVAILABLE,
        )
    supported = _modalities(info)
    for modality in mm_limits:
        if modality not in supported:
            what = f"supports {', '.join(supported)}" if supported else "has no multimodal encoder"
            raise UsageError(f"--limit-mm-per-prompt names {modality}, but the model {what}")
    if info.num_attention_heads % tp:
        raise UsageError(
            f"--tp {tp} does not divide the model's {info.num_attention_heads} attention heads (vLLM refuses it): "
            f"use one of {', '.join(str(n) for n in range(1, 9) if info.num_attention_heads % n == 0)}"
        )
    if info.num_layers % pp:
        raise UsageError(
            f"--pp {pp} does not divide the model's {info.num_layers} layers (vLLM refuses it: total number of "
            f"hidden layers must be divisible by pipeline parallel size): use one of "
            f"{', '.join(str(n) for n in range(1, 9) if info.num_layers % n == 0)}"
        )
    engine: Engine = "v1"
    version = None
    if version_text is not None:
        try:
            version = parse_vllm_version(version_text)
        except ValueError:  # what a python or a log said is not a release number: plan without it
            version_text, version_source = None, ""
    if args.engine in ("v1", "v0"):
        engine = args.engine
    elif reading is not None and reading.engine is not None:
        engine = reading.engine
    elif version is not None:
        engine = engine_of_version(version)
    if version is not None and engine == "v0" and version >= (0, 11, 0):
        raise UsageError(f"vLLM {version_text} has no V0 engine (removed in 0.11): use --engine v1")
    if version is not None and engine == "v1" and version < (0, 7, 0):
        raise UsageError(f"vLLM {version_text} has no V1 engine (from 0.7, VLLM_USE_V1=1): use --engine v0")
    asked_len = args.max_model_len or info.max_context
    if (
        engine == "v0"
        and max_num_batched_tokens is not None
        and max_num_batched_tokens < asked_len
        and (asked_len <= PlannerParams().v0_chunked_prefill_above or (version is not None and version < (0, 5, 3)))
    ):
        raise UsageError(
            f"max_num_batched_tokens ({max_num_batched_tokens}) is smaller than max_model_len ({asked_len}): "
            "vLLM's V0 engine without chunked prefill refuses it; raise --max-num-batched-tokens or lower "
            "--max-model-len"
        )
    world = tp * pp

    sizes = _sizes(args.gpu)
    size_notes: list[str] = []
    gpu_name: str | None = args.gpu_name.strip() if args.gpu_name and args.gpu_name.strip() else None
    if sizes == ["auto"]:
        report = read_gpus()
        if not report.visible:
            hint = "pass --gpu SIZE (e.g. --gpu 24GiB, or --gpu 80GiB --tp 2) to plan for a GPU this host does not have"
            if on_cpu:
                hint = (
                    'the target runs on vLLM\'s CPU backend (device = "cpu"): `vllm-guard doctor` checks its KV '
                    "cache against host RAM; " + hint
                )
            # no GPU to plan for is a missing service (69), not a misuse of the command (64)
            raise GuardError("no-gpu", f"{report.error}", hint, exit_code=ExitCode.UNAVAILABLE)
    else:
        try:
            cards = [gpu_card(s, gpu_name) for s in sizes]
        except ValueError as err:
            raise UsageError(str(err)) from None
        size_notes = list(dict.fromkeys(n for c in cards for n in c.notes))
        report = FakeGpus([c.total for c in cards], [c.reserved for c in cards]).read()
    totals = [d.cuda_total for d in report.devices]  # what CUDA reports, and vLLM sizes util on
    free = [d.free for d in report.devices]
    if gpu_name is None and not report.fake and report.devices:
        gpu_name = report.devices[0].name  # vLLM reads the first visible device's name
    if len(totals) == 1 and world > 1 and report.fake:
        totals = totals * world
        free = free * world
    if len(totals) < world:
        what = f"--tp {tp}" + (f" x --pp {pp}" if pp > 1 else "")
        raise UsageError(f"{what} needs {world} GPUs; {len(totals)} given or visible")

    calibration_notes: list[str] = []
    flashinfer: bool | None = args.flashinfer_sampler
    if flashinfer is None and target is not None:
        from vllm_guard.app.place import flashinfer_of

        flashinfer = flashinfer_of(target, version_text)
    graphs: bool | None = args.estimate_cudagraphs
    if graphs is None and target is not None:
        from vllm_guard.core.planner import estimate_cudagraphs_of

        graphs = estimate_cudagraphs_of(version_text, target.environment)
    params = PlannerParams(
        gpu_name=gpu_name,
        flashinfer_sampler=flashinfer,
        engine=engine,
        estimate_cudagraphs=graphs,
        enforce_eager=enforce_eager,
        block_size=block_size,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        vllm_version=version_text,
        limit_mm_per_prompt=tuple(sorted(mm_limits.items())),
        # what other processes hold on the GPUs vLLM will use: the releases that count total - free take it
        held_by_others=_held_by_others(report, world, target, size_notes),
    )
    if gpu_name is None and engine == "v1" and (max_num_batched_tokens is None or max_num_seqs is None):
        from dataclasses import replace

        from vllm_guard.core.planner import large_batch_gpu

        smallest_total = min(totals[:world])
        if large_batch_gpu(params, smallest_total) != large_batch_gpu(replace(params, gpu_name="A100"), smallest_total):
            size_notes.append(
                "the GPU's name is not known: planned with the larger batch defaults vLLM takes on a card of 70 "
                "GiB or more; on an A100 it takes the smaller ones and leaves more for the KV cache (pass --gpu-name)"
            )
    quant = info.quantization
    if info.weights is None and quant is not None and quant.bits is None:
        size_notes.append(
            f"the checkpoint's quantization ({quant.method}) is not modelled: its weights were estimated at "
            f"{info.dtype}, which overstates them; a model folder with its *.safetensors files gives their exact size"
        )
    calibrated = None
    band = kv_band(info, params)  # the band of a plan from config.json: wider for a multimodal encoder
    margin = band
    if reading is not None:
        from vllm_guard.core.planner import calibrate

        planned = min(totals[:world])
        differs = reading.differences_from(planned, tp, pp, version_text, enforce_eager)
        margin = calibrated_band(reading.total_bytes, planned, band) if not differs else band
        if not differs and margin > CALIBRATED_MARGIN:
            calibration_notes.append(
                f"the log does not print its GPU's total: the error band stays {margin:.0%} "
                f"({CALIBRATED_MARGIN:.0%} needs a log from the planned card)"
            )
        if not differs and reading.total_bytes is not None and reading.total_bytes != planned:
            # the same card: vLLM's own measure of it (torch's total, less what the driver keeps) is the truth
            calibration_notes.append(
                f"GPU total {reading.total_bytes / GiB:.2f} GiB as vLLM measured it in the log, planned instead "
                f"of {planned / GiB:.2f} GiB"
            )
            totals = [reading.total_bytes] * len(totals)
        if reading.util is None:
            assumed = args.util or 0.9
            calibration_notes.append(
                f"the log does not say which gpu_memory_utilization the start ran with: {assumed:.2f} assumed "
                "(pass --util if it was another)"
            )
        reported = reading.reported(
            gpu_bytes=min(totals[:world]),
            util=args.util or 0.9,
            tp=tp,
            pp=pp,
            max_model_len=args.max_model_len,
            kv_cache_dtype=kv_dtype,
            block_size=block_size,
            engine=engine,
        )
        if differs:
            # a start of another setup: its corrections do not carry (bench/RESULTS-planner.md: carried across
            # cards, TP or releases they were worse than none on published pairs)
            calibration_notes.append(
                f"not calibrated on {reading.describe()}: that start ran with {', '.join(differs)}, not what is "
                f"planned, and corrections carried across setups were worse than none on published starts; "
                f"the plan is from config.json, the error band {band:.0%}"
            )
        else:
            params = calibrate(info, reported, params)
            calibrated = reported
            calibration_notes.append(f"calibrated on {reading.describe()}")
        if reading.device == "cpu":
            calibration_notes.append(
                "the log is from vLLM's CPU backend: its KV cache is sized by VLLM_CPU_KVCACHE_SPACE, not by GPU "
                "memory, so the calibration holds only at the util it assumes"
            )
        span = reading.per_token_range()
        per = kv_bytes_per_token(info, reported.kv_cache_dtype, tp=reported.tp, pp=reported.pp, params=params)
        if span is not None and not span[0] * 0.98 <= per <= span[1] * 1.02:
            calibration_notes.append(
                f"vLLM's figures imply {span[0] / 1024:.1f}-{span[1] / 1024:.1f} KiB of KV cache per token and GPU, "
                f"the model {per / 1024:.1f} KiB at TP {reported.tp} and kv_cache_dtype {reported.kv_cache_dtype}: "
                "is the log from this model, with these flags?"
            )
    plan = first_fit(
        info,
        totals,
        tp,
        pp=pp,
        max_model_len=args.max_model_len,
        kv_cache_dtype=kv_dtype,
        free=None if report.fake else free,
        util=args.util,
        params=params,
        margin=margin,
    )
    smallest = min(totals[:world])
    need = util_for(
        info,
        smallest,
        plan.max_model_len or plan.requested_max_model_len,
        tp,
        pp=pp,
        kv_cache_dtype=kv_dtype,
        params=params,
    )
    code = ExitCode.OK if plan.fits else ExitCode.WARN
    band_source = (
        "calibrated: measured on starts of the same model on one card, bench/RESULTS-planner.md"
        if calibrated is not None and margin == CALIBRATED_MARGIN
        else "calibrated on a log that does not print its GPU's total: measured on published start-up logs, "
        "bench/RESULTS-planner.md"
        if calibrated is not None
        else "measured on published starts of multimodal models, whose encoder's non-torch memory is not "
        "modelled, bench/RESULTS-planner.md"
        if margin == MULTIMODAL_MARGIN
        else "measured on published start-up logs, bench/RESULTS-planner.md"
    )
    asked = plan.requested_budget or plan.budget
    asked_need = math.ceil(plan.requested_max_model_len * (1 + plan.band))
    accounting = accounting_of(params)
    enc = plan.budget.encoder
    encoder_json = (
        {
            "modality": enc.modality,
            "tokens_per_item": enc.tokens_per_item,
            "items": enc.items,
            "budget_tokens": enc.budget_tokens,
            "patches": enc.patches,
            "peak_bytes": enc.peak,
            "held_bytes": enc.held,
        }
        if enc is not None
        else None
    )
    if args.json:
        out: dict[str, Any] = {
            "schema": JSON_SCHEMA,
            "model": str(model),
            "architecture": info.architecture,
            "weights_bytes": info.estimated_weight_bytes(),
            "weights_exact": info.weights is not None,
            "weights_source": plan.budget.weights_source,
            "kv_bytes_per_token": kv_bytes_per_token(info, kv_dtype, params=params),
            "kv_bytes_per_token_per_gpu": plan.budget.kv_per_token,
            "gpus": report.as_json(),
            "tp": tp,
            "pp": pp,
            "fits": plan.fits,
            "flags": plan.flags(),
            "kv_tokens": plan.budget.kv_tokens,
            "longest_request": plan.budget.longest_request,
            "hybrid": info.hybrid.what if info.hybrid is not None else None,
            "concurrency": round(plan.concurrency, 2),
            "max_model_len_at_util": plan.edge,
            "util_for_max_model_len": need,
            "edge": {
                "max_model_len": plan.edge,
                "util": plan.util,
                "limited_by": "context" if plan.edge_limited_by_context else "kv_cache",
                "band": plan.band,
                "band_source": band_source,
                "safe_max_model_len": plan.safe_edge,
            },
            "budget": [{"item": a, "value": b, "source": c} for a, b, c in plan.table()],
            "requested": {
                "max_model_len": plan.requested_max_model_len,
                "util": plan.util,
                "kv_tokens": asked.kv_tokens,
                "longest_request": asked.longest_request,
                "kv_tokens_needed_with_band": asked_need,
                "fits_with_band": asked.longest_request >= asked_need,
                "replanned": plan.max_model_len != plan.requested_max_model_len,
                "budget": [{"item": a, "value": b, "source": c} for a, b, c in asked.rows()],
            },
            "notes": size_notes + calibration_notes + list(plan.notes),
            "calibrated_from": str(args.calibrate_from) if calibrated is not None else None,
            "vllm_version": version_text,
            "vllm_version_source": version_source or None,
            "engine": engine,
            "accounting": {
                "name": accounting.name,
                "releases": accounting.releases,
                "source": accounting.source,
            },
            "encoder": encoder_json,
        }
        print(json.dumps(out, indent=2))
        return int(code)
    gpu_text = ", ".join(f"{t / GiB:.1f} GiB" for t in totals[:world])
    print(f"model: {model} ({info.architecture}, {info.num_layers} layers, {info.kv_heads} KV heads x {info.head_dim})")
    weights_how = "from safetensors headers" if info.weights is not None else "estimated from config.json"
    parallel = f"TP {tp}" + (f", PP {pp}" if pp > 1 else "")
    print(f"weights: {info.estimated_weight_bytes() / GiB:.2f} GiB ({weights_how}); GPUs: {gpu_text}; {parallel}")
    release = f"vLLM {version_text} ({version_source})" if version_text else "vLLM release not known"
    print(f"accounting: {release}, engine {engine}: {accounting.name} ({accounting.releases}): {accounting.source}")
    if enc is not None:
        print(f"multimodal profile: {enc.describe()}")
    print()
    width = max(len(r[0]) for r in plan.table())
    for item, value, source in plan.table():
        print(f"  {item:<{width}}  {value:>24}   {source}")
    print()
    if calibrated is not None:
        print(f"calibrated from {args.calibrate_from} (vLLM's own numbers on this host)")
    for note in [*size_notes, *calibration_notes, *plan.notes]:
        print(f"note: {note}")
    limit = (
        f"the model's context; the KV cache holds {plan.budget.longest_request} tokens"
        if plan.edge_limited_by_context
        else "the longest request the KV cache holds"
    )
    print(f"edge at util {plan.util:.2f}: max_model_len {plan.edge} ({limit})")
    print(
        f"error band: +-{plan.band:.0%} ({band_source}): the longest the planner can promise is {plan.safe_edge}; "
        f"the recommended max_model_len stays at or below it"
    )
    if plan.max_model_len != plan.requested_max_model_len:
        print(
            f"at the requested max_model_len {plan.requested_max_model_len}: the KV cache holds "
            f"{asked.longest_request} tokens at util {plan.util:.2f}, {asked_need} needed with the band"
        )
    print(f"util needed for max_model_len {plan.max_model_len or plan.requested_max_model_len}: {need:.2f}")
    verdict = "fits" if plan.fits else "DOES NOT FIT"
    flags = " ".join(
        f"--{k.replace('_', '-')}" if v is True else f"--{k.replace('_', '-')}={v}" for k, v in plan.flags().items()
    )
    if plan.max_model_len == 0:
        flags += " (no max_model_len fits)"
    print(f"first fit ({verdict}): {flags}")
    return int(code)


def _read_calibration_log(path: Path) -> Any:
    """The memory figures of the last start in a vLLM log that printed one; a clear error when there is none."""
    from vllm_guard.core.calibrate import LOOKED_FOR, read_vllm_log
    from vllm_guard.errors import InputError

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise InputError("log-unreadable", f"{path}: cannot read: {err.strerror or err}", "check the path") from None
    reading = read_vllm_log(text)
    if reading.found:
        return reading
    hint = (
        "pass the log of a start that got as far as sizing the KV cache (journalctl -u UNIT -o cat, with the "
        "lines before the failure); a start that failed earlier (loading the weights, bad arguments) has no "
        "KV figure"
    )
    if reading.no_memory_line:
        hint = (
            "the log says 'No available memory for the cache blocks' without a figure: vLLM prints the figures at "
            "INFO level just before it (V0: 'Memory profiling takes ...'; V1: 'Available KV cache memory'); pass "
            "the whole log of that start"
        )
    raise InputError(
        "log-no-memory-lines",
        f"{path}: no vLLM KV cache figure found in {reading.starts} start(s); looked for " + "; ".join(LOOKED_FOR),
        hint,
    )


def _modalities(info: Any) -> tuple[str, ...]:
    """The modalities the model's encoders take."""
    found: tuple[str, ...] = ("image", "video") if info.vision is not None else ()
    return found + (("audio",) if info.audio is not None else ())


def _with_processor_bounds(info: Any, folder: Path) -> Any:
    """The model's own image/video processor pixel bounds (preprocessor_config.json,
    video_preprocessor_config.json), when it has a vision tower and the files are there."""
    from vllm_guard.core.modelinfo import with_preprocessor
    from vllm_guard.errors import InputError

    if info.vision is None:
        return info
    found: list[dict[str, Any] | None] = []
    for name in ("preprocessor_config.json", "video_preprocessor_config.json"):
        path = folder / name
        if not path.is_file():
            found.append(None)
            continue
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(
                "model-processor-config-unreadable",
                f"{path}: cannot read it as JSON: {err}",
                "re-download the model's processor configuration",
            ) from None
        found.append(loaded if isinstance(loaded, dict) else None)
    return with_preprocessor(info, found[0], found[1])


def _held_by_others(report: Any, world: int, target: Any, notes: list[str]) -> int:
    """What the processes NVML lists hold on the GPUs vLLM will use (the most on one), none on planned GPUs; while
    the config's vLLM unit runs, what is listed is taken to be its own, as doctor takes it."""
    if report.fake:
        return 0
    held = max((d.held_by_processes for d in report.devices[:world]), default=0)
    if held and target is not None:
        from vllm_guard.app.doctor import unit_running

        if unit_running(target.unit_file):
            notes.append(
                f"{target.unit_file} is running: the GPU memory processes hold is taken to be its own, not another "
                "process's (stop it to plan with the GPUs as they are without it)"
            )
            return 0
    return int(held)


def _first_target(paths: Any, explicit: Path | None, *, need: bool) -> Any:
    from vllm_guard.app.config_load import load_config
    from vllm_guard.errors import ConfigError

    try:
        loaded = load_config(paths, explicit, check_files=False)
    except ConfigError:
        if need and explicit is not None:
            raise
        return None
    return loaded.config.target[0]
