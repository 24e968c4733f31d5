"""vLLM's own memory figures, read from a log of one of its starts, failed starts included.

Pure: the caller reads the file and passes the text. ``read_vllm_log`` finds every line in which vLLM
states how it split the GPU (or the host, on the CPU backend) and returns them as a ``LogReading``;
``LogReading.reported`` turns that into the planner's ``Reported`` for ``planner.calibrate``.

The wordings, by release (each one is checked against real lines in tests/unit/test_calibrate.py):

    KV capacity, exact (tokens or blocks)
      V1 0.8+         "GPU KV cache size: 174,800 tokens" (CPU backend: "CPU KV cache size: ..."; newer
                      releases put it on one line with the concurrency)
      V1 0.7          "# GPU blocks: 1381"
      V0              "# GPU blocks: 1952, # CPU blocks: 2048" (the second number is swap space, not KV);
                      0.7+ "# cuda blocks: 7191, # CPU blocks: 512"; the CPU backend "# CPU blocks: 7281"
                      (V0 <= 0.6) or "# cpu blocks: 1456, # CPU blocks: 0" (the first number is its KV)
      V0 failed start "The model's max seq len (29000) is larger than the maximum number of tokens that can
                      be stored in KV cache (23648)" (the figure is blocks x block size)
      V1 failed start "To serve at least one request with the model's max seq len (N), (X GiB KV cache is
                      needed, which is larger than the available KV cache memory (Y GiB). Based on the
                      available memory, the estimated maximum model length is K." ("models's" in 0.8-0.11,
                      "GB" and no estimate in 0.8.0-0.8.4, "4.0 GiB" with one decimal in the newest)
    KV capacity, approximate
      V0 and V1       "Maximum concurrency for 20000 tokens per request: 1.56x" (two decimals: tokens +- X/200)
      V1              "Available KV cache memory: 18.67 GiB" (may be negative: "-2.77 GiB")
      V0 0.6.4+       "the rest of the memory reserved for KV Cache is -1.05GiB." (sign kept)
      V0 0.6.0-0.6.3  "Memory profiling results: total_gpu_memory=23.58GiB ... kv_cache_size=3.81GiB
                      gpu_memory_utilization=0.90"
    The budget around it
      "the current vLLM instance can use total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90) =
      71.27GiB"; "model weights take 12.55GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak
      memory takes 2.38GiB"; V1 (debug) "Total non KV cache memory: ...; torch peak memory increase: ...;
      non-torch forward increase memory: ...; weights memory: ..."; "Model loading took 14.99 GiB" /
      "Loading model weights took 14.9888 GB" (GB are GiB there); "Estimated CUDA graph memory: 0.53 GiB
      total" and "The current --gpu-memory-utilization=0.8700 is equivalent to ..." (V1 0.21+); "Free memory
      on device (14.05/23.55 GiB) on startup is less than desired GPU memory utilization (0.9, 21.2 GiB)";
      V1 0.10+ "... Desired GPU memory utilization is (0.9, 160.53 GiB). Actual usage is 8.58 GiB for weight,
      9.96 GiB for peak activation, 0.07 GiB for non-torch memory, and 0.65 GiB for CUDAGraph memory", and
      from about 0.27 "Actual usage is 10.7 GiB for consumed memory (weights + non-torch), 1.54 GiB for peak
      activation, and 0.54 GiB for CUDAGraph memory" (the non-torch part is what the weights leave of it);
      "vllm cache_config_info with initialization after num_gpu_blocks is: 10925"; the CPU backend's
      "Explicitly set (1.0/9.21) GiB for KV cache on node 0".
    The flags of the start
      "non-default args: {...}" (V1), "args: Namespace(...)" (V0), "Initializing a V1 LLM engine (v0.x) with
      config: ... max_seq_len=32768, ... tensor_parallel_size=2, ..." and "Using max model len 512".

One log may hold several starts (a journal of restarts): a start begins at "vLLM API server version" or
"Initializing ... LLM engine", and the last start that printed a KV figure is the one read. Within a start,
under tensor or pipeline parallelism every worker prints its own figures: the smallest KV figure is the one
vLLM used (it sizes every worker's cache to the smallest), and the budget parts are read from the worker
that printed it. Token and block figures are preferred over GiB figures (printed to 0.01 GiB, which is
dozens of tokens); a figure of 0 tokens only says "none", so a negative GiB figure then says how far short
the start fell.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vllm_guard.core.echo import echoed_args
from vllm_guard.core.logline import as_printed_line, strip_prefixes
from vllm_guard.core.planner import Engine, GiB, Reported, parse_vllm_version, same_card

# vLLM prints GiB figures with two decimals (format_gib in the newest releases: one or two): a printed X
# stands for anything within half a hundredth of a GiB.
GIB_ROUNDING = 0.005 * GiB
# The block sizes vLLM accepts (CacheConfig BlockSize; the CPU backend with IPEX uses 128).
BLOCK_SIZES = (1, 8, 16, 32, 64, 128, 256)

# --- the wordings ---------------------------------------------------------------------------------

_N = r"(\d[\d,]*)"  # a count, maybe with thousands separators
_G = r"(-?\d+(?:\.\d+)?)"  # a GiB figure, sign kept

_KV_TOKENS = re.compile(r"\b(?:(\w+) )?KV cache size: " + _N + r" tokens")
_BLOCKS = re.compile(r"\b(GPU|gpu|cuda|CUDA|CPU|cpu|xpu|XPU|npu|NPU|hpu|HPU|tpu|TPU|neuron)\s+blocks:\s*(\d+)")
_STORED = re.compile(
    r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)"
)
_NEEDED = re.compile(
    r"max seq len \((\d+)\), \(" + _G + r" (GiB|GB) KV cache is needed, which is larger than the available "
    r"KV cache memory \(" + _G + r" (GiB|GB)\)"
)
_ESTIMATE = re.compile(r"the estimated maximum model length is (\d+)")
_CONCURRENCY = re.compile(r"Maximum concurrency for " + _N + r" tokens per request: (\d+(?:\.\d+)?)x")
_AVAILABLE = re.compile(r"Available KV cache memory: " + _G + r" ?GiB")
_REST = re.compile(r"the rest of the memory reserved for KV Cache is " + _G + r" ?GiB")
_PROFILE_RESULTS = re.compile(r"Memory profiling results:")
_KV_CACHE_SIZE = re.compile(r"\bkv_cache_size=" + _G + r" ?GiB")
# V1's TopKTopPSampler (vllm/v1/sample/ops/topk_topp_sampler.py) says which path its sampling takes
_FLASHINFER_ON = re.compile(r"Using FlashInfer for top-p & top-k sampling")
_FLASHINFER_OFF = re.compile(r"Falling back to the PyTorch-native implementation of top-p & top-k sampling")
_TOTAL_EQ = re.compile(r"\btotal_gpu_memory=" + _G + r" ?GiB")
_UTIL_EQ = re.compile(r"\bgpu_memory_utilization=(\d+(?:\.\d+)?)")
_NON_TORCH_EQ = re.compile(r"\bnon_torch_memory=" + _G + r" ?GiB")
_TOTAL_X_UTIL = re.compile(
    r"total_gpu_memory \(" + _G + r" ?GiB\) x gpu_memory_utilization \((\d+(?:\.\d+)?)\) = " + _G + r" ?GiB"
)
_WEIGHTS_TAKE = re.compile(r"model weights take " + _G + r" ?GiB")
_NON_TORCH_TAKES = re.compile(r"non_torch_memory takes " + _G + r" ?GiB")
_ACTIVATION_TAKES = re.compile(r"PyTorch activation peak memory takes " + _G + r" ?GiB")
_V1_WEIGHTS = re.compile(r"\bweights memory: " + _G + r" ?GiB")
_V1_ACTIVATION = re.compile(r"torch peak memory increase: " + _G + r" ?GiB")
_V1_NON_TORCH = re.compile(r"non-torch forward increase memory: " + _G + r" ?GiB")
_V1_REQUESTED = re.compile(r"Requested memory: (\d+(?:\.\d+)?) \(util\), " + _G + r" ?GiB")
_LOADING = re.compile(r"(?:Model loading|Loading model weights) took " + _G + r" ?Gi?B")
_GRAPHS = re.compile(r"Estimated (?:\w+ )?CUDA graph memory: " + _G + r" ?GiB")
_GRAPH_UTIL = re.compile(r"current --gpu-memory-utilization=(\d+(?:\.\d+)?) is equivalent to")
_FREE = re.compile(
    r"Free memory on device(?: \S+)? \(" + _G + r"/" + _G + r" GiB\) on startup is less than desired GPU memory "
    r"utilization \((\d+(?:\.\d+)?), " + _G + r" GiB\)"
)
# V1's start-up budget on one line: "Desired GPU memory utilization is (0.9, 160.53 GiB). Actual usage is ...", in two
# wordings of what follows (weights and non-torch memory apart, 0.10+; as one "consumed" figure, about 0.27 on)
_DESIRED_HEAD = r"Desired GPU memory utilization is \((\d+(?:\.\d+)?), " + _G + r" GiB\)\. Actual usage is " + _G
_DESIRED = re.compile(
    _DESIRED_HEAD
    + r" GiB for weight, "
    + _G
    + r" GiB for peak activation, "
    + _G
    + r" GiB for non-torch memory, and "
    + _G
    + r" GiB for CUDAGraph memory"
)
_DESIRED_CONSUMED = re.compile(
    _DESIRED_HEAD
    + r" GiB for consumed memory \(weights \+ non-torch\), "
    + _G
    + r" GiB for peak activation, and "
    + _G
    + r" GiB for CUDAGraph memory"
)
_FREE_TOTAL = re.compile(r"Free memory on device(?: \S+)? \(" + _G + r"/" + _G + r" GiB\) on startup")
_CACHE_INFO = re.compile(r"initialization after num_gpu_blocks is: (\d+)")
_CPU_SPACE = re.compile(r"Explicitly set \(" + _G + r"/" + _G + r"\) GiB for KV cache")
_MAX_LEN = re.compile(r"\b(?:max_seq_len=|Using max model len )(\d+)")
_CONFIG_LINE = re.compile(r"LLM engine \(v[^)]*\) with config:|LLM engine with config:")
_CONFIG_KEYS = re.compile(r"\b(tensor_parallel_size|pipeline_parallel_size|enforce_eager|kv_cache_dtype)=([\w.]+)")
_NAMESPACE = re.compile(r"\bNamespace\(")
_NAMESPACE_KEYS = re.compile(
    r"\b(gpu_memory_utilization|max_model_len|block_size|tensor_parallel_size|pipeline_parallel_size|"
    r"max_num_seqs|max_num_batched_tokens|enforce_eager|kv_cache_dtype)=('[^']*'|[\w.]+)"
)
_START = re.compile(r"vLLM API server version|Initializing (?:a V[01] |an )LLM engine")
# the release a start ran: "vLLM API server version 0.6.6", "Initializing a V1 LLM engine (v0.10.1.1) with config"
_VERSION = re.compile(r"vLLM API server version:? v?(\d+\.\d+[\w.+-]*)|LLM engine \(v(\d+\.\d+[\w.+-]*)\)")
_ENGINE_V1 = re.compile(
    r"Initializing a V1 LLM engine|\bEngineCore|\b(?:gpu_worker|kv_cache_utils|gpu_model_runner|core)\.py:\d+\]"
)
_ENGINE_V0 = re.compile(r"Initializing (?:a V0 |an )LLM engine|, # CPU blocks: \d+|[\s\[]worker\.py:\d+\]")
_NO_MEMORY = re.compile(r"No available memory for the cache blocks")
_PROCESS = re.compile(r"\(([^()]*\bpid=\d+[^()]*)\)")
_RANK = re.compile(r"\brank[= ]?(\d+)|\bTP(\d+)")

# What the message says was looked for when a log has no KV figure (one entry per wording above).
LOOKED_FOR = (
    "'GPU KV cache size: N tokens' / 'CPU KV cache size: N tokens' (V1)",
    "'# GPU blocks: N' / '# cuda blocks: N, # CPU blocks: M' / '# CPU blocks: N' (V0, V1 0.7, CPU backend)",
    "'maximum number of tokens that can be stored in KV cache (N)' (V0 failed start)",
    "'the estimated maximum model length is N' / 'available KV cache memory (X GiB)' (V1 failed start)",
    "'Maximum concurrency for N tokens per request: Xx'",
    "'Available KV cache memory: X GiB' (V1)",
    "'the rest of the memory reserved for KV Cache is X GiB' (V0 0.6.4+)",
    "'Memory profiling results: ... kv_cache_size=X GiB' (V0 0.6.0-0.6.3)",
)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _gib(text: str) -> int:
    return round(float(text) * GiB)


@dataclass(frozen=True)
class Figure:
    """One number vLLM printed: what it is, its value, and where it stood."""

    kind: str
    value: Any
    line_no: int  # 1-based line number in the log
    key: str  # the process that printed it ("" for the main process or a log without prefixes)
    text: str  # the message, without prefixes


# The kinds that say how big the KV cache is, from the most to the least exact.
EXACT_KV = ("tokens", "blocks", "stored", "estimate")
KV_KINDS = (*EXACT_KV, "concurrency", "gib")


# Every wording above holds one of these: a line with none is skipped without trying each pattern.
_HINTS = re.compile(
    r"KV cache|blocks|memory|max seq len|concurrency|non-default args|Namespace\(|with config|max model len|took|"
    r"estimated maximum|top-p & top-k sampling"
)


def _figures(message: str) -> list[tuple[str, Any]]:
    """Every figure one message states, as (kind, value)."""
    out: list[tuple[str, Any]] = []
    if not _HINTS.search(message):
        return out
    if m := _KV_TOKENS.search(message):
        out.append(("tokens", _int(m.group(2))))
        if (m.group(1) or "").lower() == "cpu":
            out.append(("device", "cpu"))
    if m := _BLOCKS.search(message):  # the first "<device> blocks: N" of the line is the KV cache
        out.append(("blocks", int(m.group(2))))
        if m.group(1).lower() == "cpu" and "GPU blocks" not in message:
            out.append(("device", "cpu"))
    if m := _STORED.search(message):
        out += [("max_len", int(m.group(1))), ("stored", int(m.group(2)))]
    if m := _NEEDED.search(message):
        out += [("max_len", int(m.group(1))), ("needed", (int(m.group(1)), _gib(m.group(2))))]
        out.append(("gib", _gib(m.group(4))))
    if m := _ESTIMATE.search(message):
        out.append(("estimate", int(m.group(1))))
    if m := _CONCURRENCY.search(message):
        out += [("max_len", _int(m.group(1))), ("concurrency", (_int(m.group(1)), float(m.group(2))))]
    for pattern in (_AVAILABLE, _REST):
        if m := pattern.search(message):
            out.append(("gib", _gib(m.group(1))))
    if _PROFILE_RESULTS.search(message) or _KV_CACHE_SIZE.search(message):
        # V0 0.6.0-0.6.3, one line (some builds break it into several)
        if m := _KV_CACHE_SIZE.search(message):
            out.append(("gib", _gib(m.group(1))))
        if m := _TOTAL_EQ.search(message):
            out.append(("total", _gib(m.group(1))))
        if m := _NON_TORCH_EQ.search(message):
            out.append(("non_torch", _gib(m.group(1))))
        if m := _UTIL_EQ.search(message):
            out.append(("util", float(m.group(1))))
    if m := _TOTAL_X_UTIL.search(message):
        out += [("total", _gib(m.group(1))), ("util", float(m.group(2)))]
    for pattern, kind in (
        (_WEIGHTS_TAKE, "weights"),
        (_NON_TORCH_TAKES, "non_torch"),
        (_ACTIVATION_TAKES, "activation"),
        (_V1_WEIGHTS, "weights"),
        (_V1_ACTIVATION, "activation"),
        (_V1_NON_TORCH, "non_torch"),
        (_LOADING, "loaded"),
        (_GRAPHS, "graphs"),
    ):
        if m := pattern.search(message):
            out.append((kind, _gib(m.group(1))))
    if m := _V1_REQUESTED.search(message):
        out.append(("util", float(m.group(1))))
    if m := _GRAPH_UTIL.search(message):
        out.append(("util", float(m.group(1))))
    if m := _FREE.search(message):
        out += [("total", _gib(m.group(2))), ("util", float(m.group(3)))]
    if m := _DESIRED.search(message):  # V1 0.10+: the whole budget on one line
        out += [("util", float(m.group(1))), ("weights", _gib(m.group(3))), ("activation", _gib(m.group(4)))]
        out += [("non_torch", _gib(m.group(5))), ("graphs", _gib(m.group(6)))]
    elif m := _DESIRED_CONSUMED.search(message):
        out += [("util", float(m.group(1))), ("consumed", _gib(m.group(3))), ("activation", _gib(m.group(4)))]
        out.append(("graphs", _gib(m.group(5))))
    if m is not None and (t := _FREE_TOTAL.search(message)):
        out.append(("total", _gib(t.group(2))))
    if _FLASHINFER_ON.search(message):
        out.append(("flashinfer", True))
    elif _FLASHINFER_OFF.search(message):
        out.append(("flashinfer", False))
    if m := _CACHE_INFO.search(message):
        out.append(("blocks", int(m.group(1))))
    if m := _CPU_SPACE.search(message):
        out += [("gib", _gib(m.group(1))), ("device", "cpu")]
    if m := _MAX_LEN.search(message):
        out.append(("max_len", int(m.group(1))))
    if _CONFIG_LINE.search(message):
        out += _settings({k: v for k, v in _CONFIG_KEYS.findall(message)})
    if _NAMESPACE.search(message):
        out += _settings({k: v.strip("'") for k, v in _NAMESPACE_KEYS.findall(message)})
    if "non-default args:" in message:
        echo = echoed_args([message])
        if echo is not None:
            out += _settings(echo)
    return out


def _settings(values: dict[str, Any]) -> list[tuple[str, Any]]:
    """The flags a start states (echo, Namespace or engine config), as figures."""
    out: list[tuple[str, Any]] = []

    def number(v: Any) -> float | None:
        if isinstance(v, bool):
            return None
        if isinstance(v, int | float):
            return float(v)
        if isinstance(v, str) and re.fullmatch(r"\d+(?:\.\d+)?", v):
            return float(v)
        return None

    names = {
        "tensor_parallel_size": "tp",
        "pipeline_parallel_size": "pp",
        "max_model_len": "max_len",
        "block_size": "block_size",
        "max_num_seqs": "max_num_seqs",
        "max_num_batched_tokens": "max_num_batched_tokens",
    }
    for name, kind in names.items():
        n = number(values.get(name))
        if n is not None and n >= 1:
            out.append((kind, int(n)))
    u = number(values.get("gpu_memory_utilization"))
    if u is not None and 0 < u <= 1:
        out.append(("util", u))
    eager = values.get("enforce_eager")
    if isinstance(eager, bool) or eager in ("True", "False"):
        out.append(("enforce_eager", eager in (True, "True")))
    dtype = values.get("kv_cache_dtype")
    if isinstance(dtype, str) and re.fullmatch(r"[\w]+", dtype):
        out.append(("kv_cache_dtype", dtype))
    return out


@dataclass
class _Start:
    figures: list[Figure] = field(default_factory=list)
    first_line: int = 1
    engine: Engine | None = None
    version: str | None = None

    def has_kv(self) -> bool:
        return any(f.kind in KV_KINDS for f in self.figures)

    def all(self, kind: str) -> list[Figure]:
        return [f for f in self.figures if f.kind == kind]

    def last(self, kind: str) -> Figure | None:
        found = self.all(kind)
        return found[-1] if found else None


@dataclass(frozen=True)
class LogReading:
    """What one vLLM start printed about its memory. Sizes in bytes, per GPU (per worker)."""

    kv_tokens: int | None = None  # vLLM's own token figure, exact to a block
    kv_tokens_range: tuple[int, int] | None = None  # from a concurrency figure alone
    kv_bytes: int | None = None  # a GiB figure (may be negative: the start fell short by that much)
    kv_wording: str = ""  # which wording the KV figure came from
    kv_line: int = 0
    kv_text: str = ""
    engine: Engine | None = None
    vllm_version: str | None = None  # "vLLM API server version X" / "LLM engine (vX)": the release that ran
    device: str | None = None  # "cpu" for the CPU backend
    total_bytes: int | None = None
    util: float | None = None
    tp: int | None = None
    pp: int | None = None
    max_model_len: int | None = None
    block_size: int | None = None
    block_size_source: str = ""
    kv_cache_dtype: str | None = None
    enforce_eager: bool | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    flashinfer_sampler: bool | None = None  # which top-k/top-p path the start's sampler said it took
    weights_bytes: int | None = None
    activation_bytes: int | None = None
    non_torch_bytes: int | None = None
    cudagraph_bytes: int | None = None
    needed: tuple[int, int] | None = None  # (max seq len, GiB needed for it) from V1's failed-start error
    starts: int = 0  # starts found in the log
    workers: int = 1  # KV figures of that wording compared (one per worker under TP): the smallest was taken
    lines: tuple[int, ...] = ()  # the lines read
    no_memory_line: bool = False  # "No available memory for the cache blocks" without a figure

    @property
    def found(self) -> bool:
        return self.kv_tokens is not None or self.kv_tokens_range is not None or self.kv_bytes is not None

    def reported(
        self,
        *,
        gpu_bytes: int,
        util: float,
        tp: int = 1,
        pp: int = 1,
        max_model_len: int | None = None,
        kv_cache_dtype: str = "auto",
        block_size: int = 16,
        engine: Engine | None = None,
    ) -> Reported:
        """The planner's ``Reported``: what the log states wins over the arguments (the caller's guesses)."""
        return Reported(
            gpu_bytes=self.total_bytes if self.total_bytes is not None else gpu_bytes,
            util=self.util if self.util is not None else util,
            tp=self.tp or tp,
            pp=self.pp or pp,
            max_model_len=self.max_model_len or max_model_len,
            kv_cache_dtype=self.kv_cache_dtype or kv_cache_dtype,
            engine=self.engine or engine,
            vllm_version=self.vllm_version,
            block_size=self.block_size or block_size,
            enforce_eager=self.enforce_eager,
            max_num_seqs=self.max_num_seqs,
            max_num_batched_tokens=self.max_num_batched_tokens,
            flashinfer_sampler=self.flashinfer_sampler,
            weights_bytes=self.weights_bytes,
            activation_bytes=self.activation_bytes,
            non_torch_bytes=self.non_torch_bytes,
            cudagraph_bytes=self.cudagraph_bytes,
            kv_cache_bytes=self.kv_bytes,
            kv_tokens=self.kv_tokens,
            kv_tokens_range=self.kv_tokens_range,
        )

    def differences_from(
        self, planned_total: int, tp: int, pp: int, vllm_version: str | None, enforce_eager: bool
    ) -> list[str]:
        """How this start differs from a plan in what its corrections depend on (the card, the parallel layout,
        the release, CUDA graphs): a plan calibrates on it only when there is none (bench/RESULTS-planner.md:
        carried across setups, corrections did worse than none). What the log does not state is taken to be as
        planned."""
        out: list[str] = []
        total = self.total_bytes
        if total is not None and not same_card(total, planned_total):
            out.append(f"another card ({total / GiB:.2f} GiB, planned {planned_total / GiB:.2f} GiB)")
        if self.tp is not None and self.tp != tp:
            out.append(f"tensor_parallel_size {self.tp} (planned {tp})")
        if self.pp is not None and self.pp != pp:
            out.append(f"pipeline_parallel_size {self.pp} (planned {pp})")
        if self.vllm_version is not None and vllm_version is not None:
            try:
                if parse_vllm_version(self.vllm_version) != parse_vllm_version(vllm_version):
                    out.append(f"vLLM {self.vllm_version} (planned {vllm_version})")
            except ValueError:
                pass
        if self.enforce_eager is not None and self.enforce_eager != enforce_eager:
            out.append(f"enforce_eager {self.enforce_eager} (planned {enforce_eager})")
        return out

    def per_token_range(self) -> tuple[float, float] | None:
        """KV bytes per token (per GPU) that vLLM's own figures imply, as a range: None unless the log has a
        token figure and a GiB figure for the same cache, or the V1 error's need for its max seq len."""
        bs = self.block_size or 16
        if self.needed is not None:
            length, need = self.needed
            padded = math.ceil(length / bs) * bs
            return max(0.0, need - GIB_ROUNDING) / padded, (need + GIB_ROUNDING) / max(1, length)
        if self.kv_tokens and self.kv_bytes is not None and self.kv_bytes > 0:
            return max(0.0, self.kv_bytes - GIB_ROUNDING) / (self.kv_tokens + bs), (
                self.kv_bytes + GIB_ROUNDING
            ) / self.kv_tokens
        return None

    def describe(self) -> str:
        """One line for the plan: which figure, from which line."""
        if self.kv_tokens is not None:
            what = f"{self.kv_tokens:,} tokens"
        elif self.kv_tokens_range is not None:
            what = f"{self.kv_tokens_range[0]:,}-{self.kv_tokens_range[1]:,} tokens"
        else:
            what = f"{(self.kv_bytes or 0) / GiB:.2f} GiB"
        where = f"line {self.kv_line}" + (f", the smallest of {self.workers} printed" if self.workers > 1 else "")
        return f"KV cache {what} from {self.kv_wording!r} ({where})"


_WORDING = {
    "tokens": "KV cache size: N tokens",
    "blocks": "# GPU blocks: N",
    "stored": "maximum number of tokens that can be stored in KV cache (N)",
    "estimate": "the estimated maximum model length is N",
    "concurrency": "Maximum concurrency for N tokens per request",
    "gib": "KV cache GiB figure",
}


def _key(raw: str, previous: str) -> str:
    """The process a raw line came from: its rank if the prefix names one, else the prefix itself."""
    m = _PROCESS.search(raw)
    if m is None:
        return previous
    r = _RANK.search(m.group(1))
    if r:
        return f"rank{r.group(1) or r.group(2)}"
    return re.sub(r"\s+", " ", m.group(1))


def _split_starts(lines: Iterable[str]) -> list[_Start]:
    starts: list[_Start] = [_Start()]
    key = ""
    for no, printed in enumerate(lines, 1):
        raw = as_printed_line(printed)
        message = strip_prefixes(raw)
        bare = message == raw.strip()
        key = key if bare else _key(raw, "")
        if _START.search(message) and starts[-1].has_kv():
            starts.append(_Start(first_line=no))
        current = starts[-1]
        if _ENGINE_V1.search(raw) and current.engine is None:
            current.engine = "v1"
        elif _ENGINE_V0.search(raw) and current.engine is None:
            current.engine = "v0"
        version = _VERSION.search(message)
        if version is not None and current.version is None:
            current.version = version.group(1) or version.group(2)
        if _NO_MEMORY.search(message):
            current.figures.append(Figure("no_memory", True, no, key, message))
        for kind, value in _figures(message):
            current.figures.append(Figure(kind, value, no, key, message))
    return starts


def read_vllm_log(text: str, *, block_size: int | None = None) -> LogReading:
    """Every memory figure of the last start in ``text`` that printed one (see the module docstring).

    ``block_size`` is the caller's guess (the plan's --block-size), used when the log states none and none
    can be inferred from it."""
    starts = _split_starts(text.splitlines())
    with_kv = [s for s in starts if s.has_kv()]
    no_memory = any(s.last("no_memory") is not None for s in starts)
    if not with_kv:
        return LogReading(starts=len(starts), no_memory_line=no_memory)
    s = with_kv[-1]

    # block size: the start's own statement, else inferred from blocks and concurrency, else the caller's
    bs_source = "stated in the log"
    bs_fig = s.last("block_size")
    bs: int | None = bs_fig.value if bs_fig is not None else None
    blocks, conc = s.last("blocks"), s.last("concurrency")
    if bs is None and blocks is not None and conc is not None and blocks.value > 0:
        length, x = conc.value
        guess = x * length / blocks.value
        nearest = min(BLOCK_SIZES, key=lambda b: abs(b - guess))
        if abs(nearest - guess) <= 0.05 * nearest:
            bs, bs_source = nearest, "inferred from blocks and concurrency"
    if bs is None:
        bs, bs_source = (block_size, "from --block-size") if block_size else (16, "vLLM's default (16)")

    # the KV figure: exact ones first (the smallest over workers), a GiB figure when the exact one is 0
    def tokens_of(f: Figure) -> int:
        return int(f.value) * bs if f.kind == "blocks" else int(f.value)

    exact = [f for f in s.figures if f.kind in EXACT_KV]
    gibs = s.all("gib")
    smallest_gib = min(gibs, key=lambda f: f.value) if gibs else None
    kv_tokens: int | None = None
    kv_range: tuple[int, int] | None = None
    chosen: Figure | None = None
    if exact:
        chosen = min(exact, key=tokens_of)
        kv_tokens = tokens_of(chosen)
        if kv_tokens == 0 and smallest_gib is not None:
            chosen, kv_tokens = smallest_gib, None  # "0 blocks" floors; the GiB figure keeps the shortfall
    elif s.all("concurrency"):
        chosen = min(s.all("concurrency"), key=lambda f: f.value[0] * f.value[1])
        length, x = chosen.value
        padded = math.ceil(length / bs) * bs  # V1 divides by whole blocks per request, V0 by the length
        kv_range = (math.floor(max(0.0, x - 0.005) * length), math.ceil((x + 0.005) * padded))
    else:
        chosen = smallest_gib
    assert chosen is not None
    chosen_key = chosen.key
    printed = {(f.key, f.value) for f in s.figures if f.kind == chosen.kind}

    def part(kind: str) -> int | None:
        """A budget part, from the worker whose KV figure was taken if it printed one."""
        found = s.all(kind)
        same = [f for f in found if f.key == chosen_key]
        pick = (same or found)[-1] if found else None
        return int(pick.value) if pick is not None else None

    def setting(kind: str) -> Any:
        f = s.last(kind)
        return f.value if f is not None else None

    weights = part("weights")
    if weights is None:
        weights = part("loaded")
    non_torch = part("non_torch")
    consumed = part("consumed")
    if non_torch is None and consumed is not None and weights is not None:
        non_torch = max(0, consumed - weights)  # "consumed memory (weights + non-torch)" less the weights
    needed = setting("needed")
    max_len = setting("max_len")
    device = setting("device")
    return LogReading(
        kv_tokens=kv_tokens,
        kv_tokens_range=kv_range,
        kv_bytes=int(smallest_gib.value) if smallest_gib is not None else None,
        kv_wording=_WORDING[chosen.kind],
        kv_line=chosen.line_no,
        kv_text=chosen.text,
        engine=s.engine,
        vllm_version=s.version,
        device=device,
        total_bytes=setting("total"),
        util=setting("util"),
        tp=setting("tp"),
        pp=setting("pp"),
        max_model_len=max_len,
        block_size=bs,
        block_size_source=bs_source,
        kv_cache_dtype=setting("kv_cache_dtype"),
        enforce_eager=setting("enforce_eager"),
        max_num_seqs=setting("max_num_seqs"),
        max_num_batched_tokens=setting("max_num_batched_tokens"),
        flashinfer_sampler=setting("flashinfer"),
        weights_bytes=weights,
        activation_bytes=part("activation"),
        non_torch_bytes=non_torch,
        cudagraph_bytes=part("graphs"),
        needed=needed,
        starts=len(starts),
        workers=max(1, len(printed)),
        lines=tuple(sorted({f.line_no for f in s.figures})),
        no_memory_line=no_memory,
    )
