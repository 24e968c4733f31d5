"""The failure classifier: the lines of one attempt (and systemd's outcome) -> one ``Failure``.

Usage::

    from vllm_guard.core.classify import classify
    failure = classify(lines, SystemdOutcome(result="oom-kill"))
    failure.kind, failure.phase, failure.confidence, failure.numbers, failure.evidence, failure.hint

The texts it knows are data: ``core/signatures.py`` lists every failure wording (with the project,
file, function and releases that print it), the vLLM functions that place a failure in a phase, the
start-up milestones, and the lines of a deliberate stop. This module is the engine that reads them.

How it reads a log:

1. One pass over the lines. vLLM's own INFO/DEBUG lines (most of any log) are skipped after one
   substring test and one anchored regex; so are request logs, which quote users' text. Any other
   line is looked at closely only when it holds one of the signatures' needles (fixed substrings,
   found by one compiled alternation); only then are the signatures' regular expressions run.
2. Every hit has a tier (``signatures.ROOT`` ... ``CONTEXT``). The verdict is the first hit of the best
   tier: a specific root cause beats pydantic's generic "validation error for ModelConfig" (the next
   line says why), systemd's bare SIGKILL, a distributed error (usually another rank's echo), an
   engine-dead report and a bare error or uncaught traceback. So the wrapper ``Engine core
   initialization failed. See root cause above`` never hides the cause above it, and alone gives
   ``unknown_failure``. A traceback followed by more serving is not a failure. A context clue (a
   64 MB ``/dev/shm``) names the kind of a verdict no better than a distributed error.
3. A deliberate stop (systemd's "Stopping ...", a SIGTERM or SIGINT the server reports, a
   KeyboardInterrupt) ends the attempt: what vLLM prints on its way out (``EngineDeadError``,
   ``CancelledError``, NCCL teardown) is not read as a failure, until a new process starts.
4. A device OOM's phase comes from the traceback around it (``signatures.FRAMES``: ``load_model`` ->
   load, ``profile_run`` / ``_initialize_kv_caches`` / ``capture_model`` -> profile,
   ``execute_model`` under the engine's step -> serve), or from the method a worker names ("while
   processing method load_model"), or else from the last start-up milestone the log printed before
   it, or else from the other ranks' next milestone. With no clue at all it is ``cuda_oom_runtime``
   with phase ``unknown`` and low confidence: a start-up prints milestones, while an OOM pasted bare
   is most often one of a server under load.
5. systemd's outcome, where given, is one more hit: ``oom-kill`` is a root cause; a SIGKILL is
   ``host_oom_killed`` unless systemd killed it itself after a stop timeout; SIGBUS is
   ``shm_exhausted``; any other failed result is ``unknown_failure`` when nothing better is known.
6. The verdict says how strong its evidence is (``confidence`` high / medium / low, and its ``basis``:
   a root-cause ``message``, a traceback ``frame``, a start-up ``milestone``, or nothing but a
   ``bare`` error), so that the daemon can act on a weak verdict with care.

Choices worth knowing:

- vLLM's CPU backend "Available memory on node N ... is less than requested memory for kv" is
  ``kv_cache_insufficient``: the KV cache asked for (VLLM_CPU_KVCACHE_SPACE or
  --kv-cache-memory-bytes) does not fit, which is the same remedy family (ask for less KV cache).
- The CPU backend's "Available memory on node N (x/y GiB) on startup is less than desired CPU memory
  utilization" (0.24-0.32) is ``vram_held`` as its GPU twin is: other processes hold the memory the
  fraction asks for, and a lower fraction fits. 0.33's "The worker already uses X GiB ..., leaving none
  for the KV cache" is ``kv_cache_insufficient``: the fraction is too small for the weights.
- PyTorch's host allocator failure ("DefaultCPUAllocator: can't allocate memory") and Ray's
  "node running low on memory" are ``host_oom_killed``: host memory ran out.
- A bare SIGKILL of the main process (systemd's ``status=9/KILL`` or ``signal="KILL"``) with no
  better cause is ``host_oom_killed`` with low confidence: under systemd that is what the kernel's or
  a user-space OOM killer does. It is not when systemd itself killed it after a stop timeout.
- An uncaught exception whose traceback runs through the code that reads the model's config,
  tokenizer or hub files is ``model_load_error`` (a config.json that is not JSON, say).
- "CUDA error: an illegal memory access", Xid and ECC errors are ``gpu_driver_error``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from vllm_guard.core import signatures as sig
from vllm_guard.core.failure import NO_FAILURE, Failure, SystemdOutcome
from vllm_guard.core.kinds import Basis, Confidence, FailureKind, Phase
from vllm_guard.core.logline import as_printed, strip_prefixes

K = FailureKind
Numbers = dict[str, float | int | str]

_MAX_EVIDENCE = 4  # evidence lines kept per verdict
_MAX_EVIDENCE_CHARS = 400  # longer lines are cut (a whole config dump helps nobody)
_WINDOW = 4  # lines joined when a message was wrapped (issues, terminals); vLLM's longest needs 4
_PHASE_LOOKBACK = 3000  # lines searched back for a traceback or a start-up milestone
_PHASE_LOOKAHEAD = 50  # lines searched forward for the other ranks' next milestone
_TRACEBACK_AFTER = 80  # lines searched after an exception line for a traceback printed below it

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
    r"(?:Free memory on device(?: \S+)?|Available memory on node \d+) \(" + _NUM + r"/" + _NUM + r" GiB\) on startup "
    r"is less than (?:desired [GC]PU memory utilization|the engine's budget after excluding external process's "
    r"weights) \(" + _NUM + r", " + _NUM + r" GiB\)"
)
_MAMBA_BLOCKS_RE = re.compile(
    r"max_num_seqs \((\d+)\) exceeds (?:the )?(?:number of )?available Mamba cache blocks \((\d+)\)"
)
_ALLOC_RE = re.compile(r"Tried to allocate " + _SIZE)
_CAPACITY_RE = re.compile(r"total capaci?ty of " + _SIZE + r" of which " + _SIZE + r" is free")
_CAPACITY_OLD_RE = re.compile(r"\((?:GPU|NPU) \d+; " + _SIZE + r" total capacity;.*?" + _SIZE + r" free")
_CPU_ALLOC_RE = re.compile(r"tried to allocate (\d+) bytes")
_PORT_RE = re.compile(
    r"\(['\"]?[\w.:\[\]-]*['\"]?, (\d{1,5})\)"  # uvicorn: ('0.0.0.0', 8000)
    r"|\bport[:=]? ?(\d{1,5})\b"  # torch's TCPStore: port: 29500
    r"|addr='[a-z]+://[^']*:(\d{1,5})'"  # zmq: (addr='tcp://127.0.0.1:5570')
    r"|bind to \S*:(\d{1,5})\b"  # torch's c10d socket: failed to bind to [::]:29500
    r"|\bport\[(\d{1,5})\]"  # HCCL: listen on ip[192.2.2.195] and specific port[16666] fail
)
_SELF_HAS_RE = re.compile(r"this process has " + _SIZE + r" memory in use")
_OTHER_HAS_RE = re.compile(r"Process \d+ has " + _SIZE + r" memory in use")
_KILLED_PID_RE = re.compile(r"Kill(?:ed)? process (\d+)")
_SYSTEMD_STATUS_RE = re.compile(r"code=(exited|killed|dumped), status=(\d+)(?:/(\w+))?")
_MAXLEN_USER_RE = re.compile(r"User-specified max_model_len \((\d+)\)")
_ARGS_PORT_RE = re.compile(r"""\bport['"]?(?:=|: ?)(\d{1,5})\b""")


def _kv_numbers(text: str) -> Numbers:
    out: Numbers = {}
    if m := _MAMBA_BLOCKS_RE.search(text):
        out["max_num_seqs"] = int(m.group(1))
        out["max_num_seqs_fit"] = int(m.group(2))
        return out
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


@dataclass(frozen=True)
class _GpuUse:
    """What a device OOM's message says of the GPU (PyTorch's allocator, c10/cuda/CUDACachingAllocator.cpp): its
    total and free memory, what "this process has U" names, and each "Process N has X memory in use" (NVML's processes
    on the device; in a container whose pids NVML does not share, the failing process itself is one of them and no
    "this process" line is printed)."""

    total: float
    free: float
    mine: float | None
    listed: list[float]
    # what PyTorch allocated and the free space in its reserve (see ``_allocator_figures``), where the message says
    allocator: tuple[float, float] | None


def _gpu_use(text: str) -> _GpuUse | None:
    cap = _CAPACITY_RE.search(text)
    before_2_1 = cap is None
    if cap is None:
        cap = _CAPACITY_OLD_RE.search(text)
        if cap is None:
            return None
    own = _SELF_HAS_RE.search(text)
    mine = None if own is None else _to_gib(own.group(1), own.group(2))
    allocator = _allocator_figures(text)
    if before_2_1 and mine is None and allocator is not None:
        # PyTorch before 2.1 named no process: "(GPU 0; 23.69 GiB total capacity; 1.02 GiB already allocated;
        # 20.81 MiB free; 1.30 GiB reserved in total by PyTorch)"; what its allocator reserved is what the failing
        # process holds, but for its CUDA context and any memory allocated outside PyTorch
        mine = allocator[0] + allocator[1]
    listed = [_to_gib(m.group(1), m.group(2)) for m in _OTHER_HAS_RE.finditer(text)]
    if mine is None and len(listed) > 1 and allocator is not None:
        # NVML lists the failing process too where it does not share the container's pids: it holds at least what
        # its allocator reserved (its CUDA context on top), so it is the smallest listed use that covers that
        reserved = allocator[0] + max(0.0, allocator[1])
        covering = [x for x in listed if x >= reserved]
        if covering:
            mine = min(covering)
            listed.remove(mine)
    total, free = _to_gib(cap.group(1), cap.group(2)), _to_gib(cap.group(3), cap.group(4))
    return _GpuUse(total=total, free=free, mine=mine, listed=listed, allocator=allocator)


def _others_hold_the_gpu(text: str) -> bool:
    """Whether a device OOM's own message shows other processes holding the GPU (see ``_GpuUse``; without a "this
    process" line none is taken as another). NVML lists only the processes it can see: one in another container is
    missing from the list, but its memory is still gone from the total (total - free - what this process holds), so
    that sum counts as well. Held by others: they hold at least half the GPU and at least twice what the failing
    process holds, so the share vLLM asked for was never there to take."""
    use = _gpu_use(text)
    if use is None or use.mine is None:
        return False
    others = max(sum(use.listed), use.total - use.free - use.mine)
    return use.total > 0 and others >= 0.5 * use.total and use.mine <= 0.5 * others


# What PyTorch's caching allocator says of its own memory at a device OOM (c10/cuda/CUDACachingAllocator.cpp, the
# message of OutOfMemoryError): "Of the allocated memory A is allocated by PyTorch, and R is reserved by PyTorch but
# unallocated" (2.1 on; "with P allocated in private pools (e.g., CUDA Graphs), " between them where P > 0), and before
# 2.1 "A already allocated; ... T reserved in total by PyTorch" (R = T - A). torch_npu prints either.
_ALLOCATED_RE = re.compile(
    r"Of the allocated memory " + _SIZE + r" is allocated by PyTorch,.*?and " + _SIZE + r" is reserved by PyTorch but"
    r" unallocated"
)
_ALLOCATED_OLD_RE = re.compile(_SIZE + r" already allocated;.*?" + _SIZE + r" reserved in total by PyTorch")
# The allocator serves requests of 1 to 10 MiB from segments of 20 MiB (kLargeBuffer), the largest unit of its
# rounding: less free space than one such segment is a reserve without the holes freed memory leaves.
_ONE_LARGE_SEGMENT_GIB = 20 / 1024
_FILLED_SHARE = 0.9


def _allocator_figures(text: str) -> tuple[float, float] | None:
    """What PyTorch allocated and the free space in its reserve, in GiB, as a device OOM's message gives them."""
    m = _ALLOCATED_RE.search(text)
    if m is not None:
        return _to_gib(m.group(1), m.group(2)), _to_gib(m.group(3), m.group(4))
    m = _ALLOCATED_OLD_RE.search(text)
    if m is not None:
        allocated = _to_gib(m.group(1), m.group(2))
        return allocated, _to_gib(m.group(3), m.group(4)) - allocated
    return None


def _filled_by_weights(text: str) -> bool:
    """Whether a device OOM's own figures show a process that only ever allocated: what PyTorch allocated fills the
    GPU, and its reserve holds less free space than one of its large segments. Before raising, the allocator has
    returned its wholly free segments to the driver and retried (``release_cached_blocks`` in ``malloc``), so the
    free space left in its reserve is the holes freed blocks leave in segments still in use. Loading the weights
    allocates tensors that stay; a forward pass frees its activations every step, so serving, and mostly profiling,
    leave holes. Read only where nothing else places the OOM."""
    use = _gpu_use(text)
    if use is None or use.total <= 0 or use.allocator is None:
        return False
    allocated, free_in_reserve = use.allocator
    return allocated >= _FILLED_SHARE * use.total and 0 <= free_in_reserve < _ONE_LARGE_SEGMENT_GIB


# The functions that allocate the KV cache itself, after its size was set (V0's CacheEngine, V1's runner).
_KV_ALLOCATION_FRAMES = frozenset(
    {
        "_allocate_kv_cache",
        "_init_cache_engine",
        "init_cache_engine",
        "_allocate_kv_cache_tensors",
        "initialize_kv_cache_tensors",
    }
)
_HEADROOM_AT_DEFAULT_UTIL = 0.1  # 1 - gpu_memory_utilization's default, 0.9


def _others_took_the_kv_cache(text: str, frames: Sequence[str]) -> bool:
    """Whether a device OOM while allocating the KV cache came from memory other processes hold. vLLM sizes the
    cache as its share of the whole GPU (gpu_memory_utilization x total) less what its own process uses: V0
    (vllm/worker/worker.py, determine_num_available_blocks: the free memory at its start, then its own increase,
    0.4-0.6.3; memory_profiling, 0.6.4-0.10) never subtracts what others held, nor V1 before its start-up check
    of free memory. So the allocation of a cache already sized fails for want of memory exactly when others
    hold more than the share vLLM leaves (a tenth of the GPU at the default). The failing process is the one
    "this process has U" names; where no line does (a container's own pids), the largest listed."""
    if not _KV_ALLOCATION_FRAMES.intersection(frames):
        return False
    use = _gpu_use(text)
    if use is None or (use.mine is None and not use.listed):
        return False
    others = sum(use.listed) - (max(use.listed) if use.mine is None else 0)
    return use.total > 0 and others >= _HEADROOM_AT_DEFAULT_UTIL * use.total


def _host_numbers(text: str) -> Numbers:
    out: Numbers = {}
    if m := _KILLED_PID_RE.search(text):
        out["killed_pid"] = int(m.group(1))
    if m := _CPU_ALLOC_RE.search(text):
        out["alloc_bytes"] = int(m.group(1))
    return out


def _port_numbers(text: str) -> Numbers:
    for m in _PORT_RE.finditer(text):
        port = int(next(g for g in m.groups() if g))
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
# the compiled tables

_NUMBER_READERS: dict[str, Callable[[str], Numbers]] = {
    "kv": _kv_numbers,
    "vram": _vram_numbers,
    "oom": _oom_numbers,
    "host": _host_numbers,
    "port": _port_numbers,
    "systemd": _systemd_numbers,
    "maxlen": _maxlen_numbers,
}


@dataclass(frozen=True)
class _Rule:
    """A signature made ready to match: its regex compiled, its number reader resolved."""

    signature: sig.Signature
    regex: re.Pattern[str] | None
    numbers: Callable[[str], Numbers] | None

    @property
    def kind(self) -> FailureKind:
        return self.signature.kind

    @property
    def tier(self) -> int:
        return self.signature.tier


def _compile(signature: sig.Signature) -> _Rule:
    regex = re.compile(signature.pattern) if signature.pattern is not None else None
    reader = _NUMBER_READERS[signature.numbers] if signature.numbers is not None else None
    return _Rule(signature, regex, reader)


def _trie_pattern(words: Sequence[str]) -> str:
    """One regular expression that finds any of ``words``, shaped as a trie.

    Python's ``re`` tries the branches of a plain alternation one by one at every position; a trie
    shares the prefixes, so a position that starts no needle is left after one character test. On
    the benchmark's log it gates lines about four times faster than ``"|".join(words)``.
    """
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        if "" in node:  # a word ends here: what follows is optional
            return "(?:" + "|".join(branches) + ")?"
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return build(trie)


@dataclass(frozen=True)
class _Tables:
    """The signature table made ready: the rules in table order, the gate, and the rules behind each needle."""

    rules: tuple[_Rule, ...]
    needles: tuple[str, ...]
    gate: re.Pattern[str]  # every needle in one trie-shaped pattern: a line with none is done in one search
    by_needle: dict[str, tuple[_Rule, ...]]


def _tables(signatures: Sequence[sig.Signature]) -> _Tables:
    rules = tuple(_compile(s) for s in signatures)
    needles = tuple(dict.fromkeys(n for s in signatures for n in s.needles))
    # The gate reports the needles it finds without overlaps; a needle that lies inside a reported one
    # ("in use" inside "already in use") is in the line too, so its rules are candidates as well.
    by_needle: dict[str, tuple[_Rule, ...]] = {}
    for found in needles:
        inside = {n for n in needles if n in found}
        by_needle[found] = tuple(r for r in rules if inside.intersection(r.signature.needles))
    return _Tables(rules, needles, re.compile(_trie_pattern(needles)), by_needle)


_TABLES = _tables(sig.SIGNATURES)
_ROOT_RULES = tuple(r for r in _TABLES.rules if r.tier <= sig.ROOT_WEAK)  # what may end a deliberate stop
_OOM_KINDS = (K.CUDA_OOM_LOAD, K.CUDA_OOM_PROFILE, K.CUDA_OOM_RUNTIME)

_FRAME_PHASE: dict[str, Phase] = {}
for _frame in sig.FRAMES:  # a name listed twice keeps its first (most specific) phase
    _FRAME_PHASE.setdefault(_frame.function, _frame.phase)
_STOP_RE = re.compile("|".join(f"(?:{s.pattern})" for s in sig.STOPS), re.MULTILINE)
_STOP_NEEDLES = tuple(dict.fromkeys(n for s in sig.STOPS for n in s.needles))
_START_RE = re.compile("|".join(f"(?:{s.pattern})" for s in sig.STARTS))
_START_NEEDLES = tuple(dict.fromkeys(n for s in sig.STARTS for n in s.needles))
_MARKER_RE = re.compile(_trie_pattern(tuple(dict.fromkeys(_STOP_NEEDLES + _START_NEEDLES))))
_INFO_NEEDLES = tuple(dict.fromkeys(n for s in sig.SIGNATURES if s.at_info for n in s.needles))
# what a quiet INFO line may still hold: a signature vLLM logs at INFO, a start or a stop
_INFO_RE = re.compile(_trie_pattern(_INFO_NEEDLES))
_QUIET_CLUE_RE = re.compile(_trie_pattern(tuple(dict.fromkeys(_INFO_NEEDLES + _STOP_NEEDLES + _START_NEEDLES))))
_MILESTONE_RE = re.compile("|".join(re.escape(m.text) for m in sig.MILESTONES))
_MILESTONE_PHASE = {m.text: m.phase for m in sig.MILESTONES}
_LOAD_DONE = tuple(m.text for m in sig.MILESTONES if m.done_loading)

_FRAME_KIND: dict[str, FailureKind] = {}
for _frame_kind in sig.FRAME_KINDS:
    _FRAME_KIND.setdefault(_frame_kind.function, _frame_kind.kind)


# ---------------------------------------------------------------------------------------------
# phases


_PHASE_TEXT_RES = tuple((re.compile(t.pattern), t.phase) for t in sig.PHASE_TEXTS)
# A traceback's frame line as Python prints it ('File "/x/core.py", line 9, in run'), and as IPython and Jupyter do
# (8 and later: "File ~/x/linear.py:1228, in RowParallelLinear.weight_loader(self, ...)"; 7: "~/x/linear.py in
# weight_loader(self, ...)"): the function's name, without its class
_FRAME_RE = re.compile(
    r'(?:File "[^"]*", line \d+, in |File [~/]\S*\.py:\d+, in (?:\w+\.)*|^[~/]\S*\.py in (?:\w+\.)*)(<module>|\w+)'
)
_METHOD_RE = re.compile(r"(?:while processing method|Error executing method|executing method) '?(\w+)")
_TRACEBACK = "Traceback (most recent call last)"


def _milestone(line: str) -> Phase | None:
    """The phase a milestone line shows; of several in one line the latest phase."""
    best: Phase | None = None
    for m in _MILESTONE_RE.finditer(line):
        phase = _MILESTONE_PHASE[m.group(0)]
        if best is None or _PHASE_ORDER[phase] > _PHASE_ORDER[best]:
            best = phase
    return best


_PHASE_ORDER = {Phase.UNKNOWN: 0, Phase.LOAD: 1, Phase.PROFILE: 2, Phase.SERVE: 3}


def unfinished_start(lines: Sequence[str]) -> Phase | None:
    """Where a log without a failure stops, when that is in the middle of a start: ``load`` where its last start-up
    milestone is of loading the weights and no deliberate stop comes after it. None for a log that went past loading
    (an offline engine's start ends in profiling: nothing after it need follow), was stopped, or shows no milestone."""
    for line in reversed(as_printed(lines)):
        if _is_stop(line):
            return None
        phase = _milestone(line)
        if phase is not None:
            return phase if phase is Phase.LOAD else None
    return None


# Python's multiprocessing resource tracker, when the processes it served are gone (Lib/multiprocessing/
# resource_tracker.py, main: "resource_tracker: There appear to be N leaked semaphore objects to clean up at shutdown",
# shared_memory alike): the program ended, whether it finished or was killed
_ENDED_RE = re.compile(r"resource_tracker: There appear to be \d+ leaked \w+ objects to clean up at shutdown")


def _exited_while_loading(lines: Sequence[str], starts: Sequence[int]) -> bool:
    """True when a process of the log ended (see ``_ENDED_RE``) after its last start-up milestone, that of loading."""
    bounds = [0, *starts, len(lines)]
    for low, high in pairwise(bounds):
        ended = next((i for i in range(high - 1, low - 1, -1) if _ENDED_RE.search(lines[i])), None)
        if ended is not None and unfinished_start(lines[low:ended]) is Phase.LOAD:
            return True
    return False


def _phase_of_frames(frames: Sequence[str]) -> Phase | None:
    """Profiling and loading frames decide first: ``execute_model`` also runs inside ``profile_run``."""
    phases = {_FRAME_PHASE.get(f) for f in frames}
    for phase in (Phase.PROFILE, Phase.LOAD, Phase.SERVE):
        if phase in phases:
            return phase
    return None


_CALL_RE = re.compile(r"([A-Za-z_]\w*)\(")
_NOT_CALLEES = frozenset(
    {"super", "getattr", "isinstance", "len", "str", "int", "float", "list", "dict", "tuple", "type"}
)


def _callee(lines: Sequence[str], index: int, end: int) -> str | None:
    """The function the source line under a frame calls: ``engine_core.run_busy_loop()`` -> run_busy_loop.

    A traceback cut at its end keeps only the call sites: the last frame's code line names the callee.
    """
    for i in range(index + 1, min(end, index + 3) + 1):  # a paste may put blank lines between
        code = strip_prefixes(lines[i])
        if not code:
            continue
        if code.startswith("File ") or _TRACEBACK in code:
            return None
        for m in _CALL_RE.finditer(code):
            if m.group(1) not in _NOT_CALLEES:
                return m.group(1)
        return None
    return None


def _frame_name(m: re.Match[str], line: str, lines: Sequence[str], index: int) -> str:
    """The function of a frame line; a terminal may have wrapped its name onto the next line."""
    name = m.group(1)
    if m.end() == len(line.rstrip()) and index + 1 < len(lines):
        rest = strip_prefixes(lines[index + 1])
        joined = name + rest
        if _WORD_RE.fullmatch(rest) and (joined in _FRAME_PHASE or joined in _FRAME_KIND):
            return joined
    return name


_WORD_RE = re.compile(r"\w+")


MODEL_INIT_FRAME = "model_executor.__init__"  # signatures.FRAMES: a module of vLLM's model being built
MODEL_CLASS_FRAME = "model_executor.models.__init__"  # signatures.FRAMES, FRAME_KINDS: a model class being built
MODULE_TO_FRAME = "torch.nn.Module._apply"  # signatures.FRAMES: a built module's parameters moved to the device
DEVICE_CONTEXT_FRAME = "torch.utils._device.DeviceContext"  # signatures.FRAMES: a tensor made under a device context
WARMUP_FRAME = "model_executor.warmup"  # signatures.FRAMES: any function of vLLM's kernel warm-up package
REMOTE_CODE_FRAME = "transformers_modules"  # signatures.FRAME_KINDS: a checkpoint's own code (trust_remote_code)


def _frame_at(lines: Sequence[str], index: int) -> tuple[re.Match[str], str] | None:
    """The frame line at ``lines[index]`` and its text; a terminal may have wrapped its path onto the next line
    (``File ".../vllm/model_exe`` then ``cutor/warmup/x.py", line 262, in _warmup``)."""
    line = lines[index]
    if "File " not in line:
        if ".py in " in line and (m := _FRAME_RE.search(line)):  # IPython 7
            return m, line
        return None
    if ", in " in line and (m := _FRAME_RE.search(line)):
        return m, line
    if line.count('"') == 1 and index + 1 < len(lines):
        joined = line.rstrip() + strip_prefixes(lines[index + 1]).strip()
        m = _FRAME_RE.search(joined)
        if m and m.start() < len(line):
            return m, joined
    return None


def _frame_function(m: re.Match[str], line: str, lines: Sequence[str], index: int) -> str:
    """A frame's function, or the name ``signatures.FRAMES`` gives a part of vLLM whose file places it."""
    name = _frame_name(m, line, lines, index)
    if name in ("__init__", "__new__") and "/vllm/model_executor/models/" in line:
        return MODEL_CLASS_FRAME
    if name == "__init__" and "/vllm/model_executor/" in line:
        return MODEL_INIT_FRAME
    if "/vllm/model_executor/warmup/" in line:
        return WARMUP_FRAME
    if "/transformers_modules/" in line:
        return REMOTE_CODE_FRAME
    if name == "_apply" and "/torch/nn/modules/module.py" in line:
        return MODULE_TO_FRAME
    if name == "__torch_function__" and "/torch/utils/_device.py" in line:
        return DEVICE_CONTEXT_FRAME
    return name


def _traceback_frames(lines: Sequence[str], index: int, low: int = 0) -> list[str]:
    """The functions of the traceback that ends at ``lines[index]``, innermost first, with their callees; none from
    before ``lines[low]`` (the start of the process that printed it)."""
    frames: list[str] = []
    for i in range(index, max(low, index - _PHASE_LOOKBACK) - 1, -1):
        line = lines[i]
        if "File " in line or ".py in " in line:
            found = _frame_at(lines, i)
            if found:
                m, text = found
                callee = _callee(lines, i, index)
                if callee is not None:
                    frames.append(callee)
                frames.append(_frame_function(m, text, lines, i))
        elif _TRACEBACK in line and frames:
            break
    return frames


def _told_phase(line: str) -> Phase | None:
    """The phase the way an error was reported names (a logger only one phase uses)."""
    for regex, reported in _PHASE_TEXT_RES:
        if regex.search(line):
            return reported
    return None


def _oom_phase(lines: Sequence[str], index: int, starts: Sequence[int] = ()) -> tuple[Phase, Basis]:
    """Where a device OOM at ``lines[index]`` happened, and what says so (within its own process)."""
    low, high = _segment(starts, index)
    start = max(low, index - _PHASE_LOOKBACK)
    # 0. The way the error itself was reported (a logger only one phase uses).
    reported = _told_phase(lines[index])
    if reported is not None:
        return reported, Basis.FRAME
    # 1. The traceback the OOM ends (frames are printed outermost first, then the exception line).
    phase = _phase_of_frames(_traceback_frames(lines, index, low))
    if phase is not None:
        return phase, Basis.FRAME
    # 2. The traceback printed just after the exception line (some loggers print the message first).
    after: list[str] = []
    for i in range(index + 1, min(len(lines), index + _TRACEBACK_AFTER, high)):
        line = lines[i]
        if ("File " in line or ".py in " in line) and (found := _frame_at(lines, i)):
            after.append(_frame_function(found[0], found[1], lines, i))
            callee = _callee(lines, i, len(lines) - 1)
            if callee is not None:
                after.append(callee)
        elif after and _EXC_LINE_RE.match(strip_prefixes(line)):
            break  # the end of that traceback: what follows is another story
    phase = _phase_of_frames(after)
    if phase is not None:
        return phase, Basis.FRAME
    # 3. The method a worker says it was running ("Exception in worker ... while processing method load_model").
    methods = []
    for i in range(max(start, index - _TRACEBACK_AFTER), min(len(lines), index + _TRACEBACK_AFTER)):
        line = lines[i]
        if "method" in line and (m := _METHOD_RE.search(line)):
            methods.append(m.group(1))
    phase = _phase_of_frames(methods)
    if phase is not None:
        return phase, Basis.FRAME
    # 4. The last start-up milestone before it: in time, where the excerpt puts later sections before earlier ones
    #    (an issue body quoting the error, then the start-up); else in the excerpt's order.
    phase = _milestone_before_in_time(lines, index, start, min(len(lines), high))
    if phase is not None:
        return phase, Basis.MILESTONE
    for i in range(index, start - 1, -1):
        phase = _milestone(lines[i])
        if phase is not None:
            return phase, Basis.MILESTONE
    # 5. None before it (an excerpt, or one rank failed first): the other ranks' next milestone.
    #    Weights loading or "loading took" means the failed rank was still loading.
    for i in range(index + 1, min(len(lines), index + _PHASE_LOOKAHEAD, high)):
        line = lines[i]
        if any(mark in line for mark in _LOAD_DONE):
            return Phase.LOAD, Basis.MILESTONE
        phase = _milestone(line)
        if phase is not None:
            return phase, Basis.MILESTONE
    return Phase.UNKNOWN, Basis.BARE


def _reported_phase(
    lines: Sequence[str], first: _Hit, verdicts: Sequence[_Hit], starts: Sequence[int]
) -> tuple[Phase, Basis] | None:
    """The phase another report of the same OOM names: vLLM catches PyTorch's OutOfMemoryError and raises its own,
    worded for the phase ("CUDA out of memory occurred when warming up sampler with 1024 dummy requests"), a few lines
    below the allocator's message."""
    low, high = _segment(starts, max(first.index, 0))
    for h in sorted(verdicts, key=lambda h: h.index):
        if h.rule.kind not in _OOM_KINDS or not low <= h.index < high or h.index < first.index:
            continue
        if h.rule in _CUT_GUESSES:  # a guess from a cut traceback, not another report
            continue
        if h.rule.signature.phase is not None:  # a text of its own for the phase (vLLM's sampler warm-up)
            return h.rule.signature.phase, Basis.MESSAGE
        reported = _told_phase(lines[h.index])
        if reported is not None:
            return reported, Basis.FRAME
    return None


_OOM_KIND_BY_PHASE = {
    Phase.LOAD: K.CUDA_OOM_LOAD,
    Phase.PROFILE: K.CUDA_OOM_PROFILE,
    Phase.SERVE: K.CUDA_OOM_RUNTIME,
    # No traceback, no milestone: the likeliest is an OOM while serving (in the development part of the corpus,
    # 7 of the 8 device OOMs whose excerpt places them nowhere happened under load: a start-up prints its
    # milestones, a server that ran for hours pastes just the error). The phase stays unknown and the
    # confidence low, so the daemon acts with care (see policy.unmoved).
    Phase.UNKNOWN: K.CUDA_OOM_RUNTIME,
}

# ---------------------------------------------------------------------------------------------
# hints


def _hint(kind: FailureKind, n: Mapping[str, float | int | str]) -> str:
    if kind is K.KV_CACHE_INSUFFICIENT:
        if "max_num_seqs_fit" in n:
            return (
                f"lower --max-num-seqs to {n['max_num_seqs_fit']} or less (the state blocks of the hybrid model's "
                "linear-attention layers: one per sequence), or raise --gpu-memory-utilization"
            )
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
        if "gpu_free_gib" in n and "gpu_total_gib" in n and "util_requested" not in n:
            # an OOM's message: what was free when it failed, vLLM's own memory already taken
            return (
                f"other processes hold GPU memory ({float(n['gpu_free_gib']):g} of {float(n['gpu_total_gib']):g} GiB"
                " free when it failed): stop them (nvidia-smi) or lower --gpu-memory-utilization to the share they"
                " leave"
            )
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


@dataclass
class _Hit:
    rule: _Rule
    index: int
    text: str  # the stripped line
    numbers: Numbers = field(default_factory=dict)


def _window(lines: Sequence[str], index: int, glue: str) -> str:
    """The stripped line at ``index`` joined with the next few, for messages wrapped across lines."""
    end = min(len(lines), index + _WINDOW)
    return glue.join(strip_prefixes(lines[i]) for i in range(index, end))


# vLLM stops on a bad argument or a model it cannot load by raising, never by logging: a line its logger wrote at
# WARNING or INFO is one it went on from ("... is not divisible by the tensor parallel size. Falling back to data
# parallelism for the vision encoder."; 0.8's "No model architectures are specified", which later releases raise),
# whatever words it shares with such an error. A signature that is itself such a warning (marked recoverable: Ray
# waiting for GPUs the cluster lacks) is read as it is.
_RAISED_KINDS = frozenset({K.BAD_ARGUMENTS, K.MODEL_LOAD_ERROR})
# the date vLLM's logger writes after the level: " 11-30 05:00:00" (a year before it in some builds)
_LOGGER_DATE = r" (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d"
_WENT_ON_RE = re.compile(r"(?:^|[\s)\]])(?:WARNING|INFO)" + _LOGGER_DATE)


def _match(rule: _Rule, line: str, lines: Sequence[str], index: int) -> _Hit | None:
    signature = rule.signature
    for needle in signature.needles:
        if needle in line:
            break
    else:
        return None
    for no in signature.unless:
        if no in line:
            return None
    if (
        signature.kind in _RAISED_KINDS
        and not signature.recoverable
        and ("WARNING" in line or "INFO" in line)
        and _WENT_ON_RE.search(line)
    ):
        return None
    text = strip_prefixes(line)
    if rule.regex is not None and rule.regex.search(text) is None and rule.regex.search(line) is None:
        return None
    numbers: Numbers = {}
    if rule.numbers is not None:
        numbers = rule.numbers(text)
        if signature.wrapped and index + 1 < len(lines):  # the message may be wrapped over lines: read on
            more = rule.numbers(_window(lines, index, " "))
            numbers = {**more, **numbers}
            # a terminal wraps mid-word: join the pieces without a space too
            more = rule.numbers(_window(lines, index, ""))
            numbers = {**more, **numbers}
    return _Hit(rule, index, text, numbers)


# Request and response logging (--enable-log-requests / --enable-log-outputs) quotes users' text,
# which may well talk about errors: never read it as the server's own failure.
# uvicorn's (and any HTTP server's) access log: '"POST /v1/chat/completions HTTP/1.1" 200 OK', colours or not
# (a 5xx answer is read: a health check answered 500 tells of a dead engine)
_ACCESS_LOG_RE = re.compile(r'HTTP/1\.[01](?:\x1b\[[0-9;]*m)?" (?:\x1b\[[0-9;]*m)?[1-4]\d\d\b')
_REQUEST_LOG = "Received request"
_OUTPUT_LOG = "Generated response"
# vLLM reads the checkpoint's safetensors metadata (for the dtype and the parameter count) and logs at ERROR each
# try that fails (a local folder is no repo id, the hub is offline); it goes on without it, whatever the error says
# (vllm/transformers_utils/config.py, later repo_utils.py: try_get_safetensors_metadata, "Error retrieving
# safetensors" through with_retry, its exception caught)
_METADATA_LOOKUP_LOG = "Error retrieving safetensors"
# vLLM's logger at INFO or DEBUG: "INFO 11-30 05:00:00 [core.py:1] ..." (the year-less date is its own)
_QUIET_RE = re.compile(r"(?:^|[\s)\]])(?:INFO|DEBUG)" + _LOGGER_DATE)
# Python's last line of a traceback: the exception's qualified name, then ": message" or nothing. Most names end in
# Error or Exception (or are Exception itself); torch.compile's BackendCompilerFailed, Triton's OutOfResources,
# concurrent.futures' BrokenProcessPool and subprocess's TimeoutExpired do not. IPython (a notebook) names the
# exception first, in the header of the traceback it prints for a cell: "UnboundLocalError    Traceback (most recent
# call last)".
# IPython (a notebook) prints the source around each frame, numbered, the failing line marked: "     81     or ...",
# "---> 64         torch.empty(kv_cache_shape,"; its strings are not the log's
_IPYTHON_CODE_RE = re.compile(r"(?:-*> ?| *)\d{1,6}(?: |$)")
_EXC_LINE_RE = re.compile(
    r"^(?:[\w.]+\.)?(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failed)|Exception|OutOfResources|BrokenProcessPool"
    r"|TimeoutExpired|(?:Base)?ExceptionGroup)"
    # Ray names the remote task's exception in parentheses: "ray.exceptions.RayTaskError(ValueError): ray::..."
    r"\b(?:\([\w.]+\))?(?::|$|\s{2,}" + re.escape(_TRACEBACK) + "$)"
)

# exceptions that end a traceback without a failure: a deliberate exit, a cancelled task on the way out
_NOT_A_FAILURE_RE = re.compile(r"^(?:[\w.]+\.)?(?:SystemExit|KeyboardInterrupt|CancelledError|GeneratorExit)\b")

# An exception group (Python 3.11's, or the exceptiongroup backport's: anyio's and starlette's task groups) says
# "unhandled errors in a TaskGroup (1 sub-exception)"; Python prints each member after it, with its own traceback
# inside the group's "| " margin (Lib/traceback.py, TracebackException.format): the members are what failed
_EXCEPTION_GROUP_RE = re.compile(r"^(?:[\w.]+\.)?(?:Base)?ExceptionGroup\b")


@dataclass
class _Scan:
    hits: list[_Hit] = field(default_factory=list)
    exception_lines: list[int] = field(default_factory=list)  # exception lines that end a traceback
    killed_by_systemd: bool = False  # systemd itself sent SIGKILL (stop timeout): not an OOM kill
    stopped: bool = False  # the log ends inside a deliberate stop
    cut_tracebacks: list[int] = field(default_factory=list)  # last frames of tracebacks cut before their exception
    starts: list[int] = field(default_factory=list)  # lines that begin a new process of the server
    # exception lines outside any traceback: what a paste keeps of an uncaught exception when it cut the frames
    loose_exceptions: list[int] = field(default_factory=list)


def _is_stop(line: str) -> bool:
    for needle in _STOP_NEEDLES:
        if needle in line:
            return _STOP_RE.search(strip_prefixes(line)) is not None
    return False


def _is_start(line: str) -> bool:
    for needle in _START_NEEDLES:
        if needle in line:
            return _START_RE.search(strip_prefixes(line)) is not None
    return False


def _scan(lines: Sequence[str]) -> _Scan:
    """One pass over the lines: rule hits, uncaught exceptions, systemd's own kills, deliberate stops."""
    scan = _Scan()
    hits = scan.hits
    exception_lines = scan.exception_lines
    main_exited = False
    in_traceback = False
    stopped = False
    tables = _TABLES
    gate = tables.gate.search
    info = _INFO_RE.search
    last_frame: int | None = None
    ipython = False  # the traceback being read is IPython's (a notebook's)
    quiet = _QUIET_RE.search
    access = _ACCESS_LOG_RE.search
    markers = _MARKER_RE.search
    clue = _QUIET_CLUE_RE.search
    for index, line in enumerate(lines):
        if " in " in line and (  # a frame: an excerpt may start inside a traceback
            (", in " in line and ('File "' in line or "File ~" in line or "File /" in line))
            or (".py in " in line and _FRAME_RE.search(line))
        ):
            if not stopped:
                in_traceback = True
                last_frame = index
            if "rror" not in line and "xception" not in line:
                continue  # a paste may have joined the error onto the frame: that line reads on
        # vLLM's own INFO/DEBUG lines (most lines of a log) carry no failure but the few it logs at INFO (zero KV
        # blocks) and the starts and stops it reports: skip them after one search, unless the line is a paste
        # that joined an error onto them. Request logs quote users' text: never read them.
        if _METADATA_LOOKUP_LOG in line:
            continue
        if "HTTP/1." in line and access(line) is not None:
            continue  # an HTTP server's access log line below 500: the client's request and its answer
        quiet_line = ("INFO " in line or "DEBUG " in line) and quiet(line) is not None
        if quiet_line:
            if _REQUEST_LOG in line or _OUTPUT_LOG in line:
                continue
            if "rror" not in line and "xception" not in line and clue(line) is None:
                continue
        marker = markers(line) is not None  # a start or stop needle: rare, one C-speed search decides
        if marker and _is_start(line):
            scan.starts.append(index)
            if in_traceback and last_frame is not None:  # the old process's traceback ends cut here
                scan.cut_tracebacks.append(last_frame)
            in_traceback, last_frame = False, None
            if stopped:
                stopped = False
                main_exited = scan.killed_by_systemd = False
                continue
        if stopped:
            if quiet_line:
                continue
            # After a deliberate stop, what a server prints on its way out (a dead engine, a cancelled task,
            # NCCL teardown, a timed-out stop's SIGKILL) is not a failure. A new process (a person's restart)
            # ends the stop, and so does a root cause: no server prints one while it shuts down.
            if "timed out. Killing" in line:
                scan.killed_by_systemd = True
                continue
            elif gate(line) is None or not _root_cause_in(line, lines, index, hits):
                continue
            stopped = False
            main_exited = scan.killed_by_systemd = False
            in_traceback = False
            continue
        if marker and _is_stop(line):
            stopped = True
            in_traceback = False
            continue
        if quiet_line and "rror" not in line and "xception" not in line and info(line) is None:
            continue
        if _TRACEBACK in line:
            if in_traceback and last_frame is not None:  # a new traceback: the one before was cut
                scan.cut_tracebacks.append(last_frame)
            in_traceback, last_frame = True, None
            ipython = not line.lstrip().startswith(_TRACEBACK)  # IPython's header names the exception first
        elif ipython and in_traceback and _IPYTHON_CODE_RE.match(strip_prefixes(line)):
            continue  # IPython's numbered lines of source around a frame: code, whatever its strings say
        # systemd's own SIGKILL (a stop that timed out) is not an OOM kill; but "Killing process N" after the
        # main process exited is KillMode=mixed cleaning up leftovers of a start that already failed
        if "Kill" in line and ("timed out. Killing" in line or ("Killing process" in line and not main_exited)):
            scan.killed_by_systemd = True
        if "Main process exited" in line:
            main_exited = True
        # most lines hold no needle and are done in one search; a line a needle lets through but no rule takes is
        # read like them: the end of a traceback, or an exception pasted without one
        gated = gate(line)
        hit = None if gated is None else _best_hit(_candidates(tables, line, gated), line, lines, index)
        if hit is not None:
            hits.append(hit)
        if hit is not None or (in_traceback and _ends_traceback(line, index, exception_lines)):
            in_traceback, last_frame = False, None
        elif not in_traceback and ("rror" in line or "xception" in line) and _loose_exception(line, lines, index):
            scan.loose_exceptions.append(index)
    scan.stopped = stopped
    if in_traceback and last_frame is not None and not stopped:
        scan.cut_tracebacks.append(last_frame)
    return scan


def _candidates(tables: _Tables, line: str, first: re.Match[str]) -> Sequence[_Rule]:
    """The rules a gated line may match, in table order: those of every needle the gate finds in it."""
    search = tables.gate.search
    more = search(line, first.start() + 1)  # overlapping needles too ("out of memory occurred when ...")
    if more is None:  # the common case: one needle
        return tables.by_needle[first.group(0)]
    found = {first.group(0)}
    while more is not None:
        found.add(more.group(0))
        more = search(line, more.start() + 1)
    rules = {id(r) for n in found for r in tables.by_needle[n]}
    return [r for r in tables.rules if id(r) in rules]


def _best_hit(rules: Sequence[_Rule], line: str, lines: Sequence[str], index: int) -> _Hit | None:
    """The hit of the best tier among ``rules`` (in table order) that match the line, the first of its tier: a line
    may hold two texts, as a log shipper's JSON record holds pydantic's header and the message under it."""
    best: _Hit | None = None
    for rule in rules:
        if best is not None and rule.tier >= best.rule.tier:
            continue
        hit = _match(rule, line, lines, index)
        if hit is not None:
            best = hit
            if rule.tier == sig.ROOT:
                break
    return best


def _root_cause_in(line: str, lines: Sequence[str], index: int, hits: list[_Hit]) -> bool:
    """Record a root-cause hit at ``lines[index]``, if there is one."""
    hit = _best_hit(_ROOT_RULES, line, lines, index)
    if hit is not None:
        hits.append(hit)
    return hit is not None


# a level a logger gives a message it went on from (an uncaught exception has none, or ERROR/CRITICAL)
_GOT_PAST_LEVEL_RE = re.compile(r"(?:^|[\s)\]])(?:INFO|DEBUG|WARNING|WARN)[\s:]")


def _exception_line(line: str) -> tuple[str, bool] | None:
    """An exception line as Python ends a traceback with: its stripped text, and whether it is a failure (not a
    deliberate exit or a cancelled task); None: not an exception line."""
    if (  # cheap tests that let most lines skip the expression: a part of every name it takes
        "rror" not in line
        and "xception" not in line
        and "Exit" not in line
        and "Interrupt" not in line
        and "Failed" not in line
        and "OutOfResources" not in line
        and "BrokenProcessPool" not in line
        and "TimeoutExpired" not in line
    ):
        return None
    text = strip_prefixes(line)
    if not _EXC_LINE_RE.match(text):
        # a reporter's words before the pasted line, ended with a full-width colon (U+FF1A), as Chinese prose ends them
        said, colon, rest = text.partition("\uff1a")
        if not colon or len(said) > _SAID_MAX or not _EXC_LINE_RE.match(rest.strip()):
            return None
        text = rest.strip()
    return text, _NOT_A_FAILURE_RE.match(text) is None


_SAID_MAX = 80  # a sentence of a reporter's, not a log line


# site.py reports a sitecustomize or usercustomize that fails to import in one line above the exception, without
# its traceback, and Python goes on: "Error in sitecustomize; set PYTHONVERBOSE for traceback:"
_SITE_HOOK = ("Error in sitecustomize", "Error in usercustomize")


def _loose_exception(line: str, lines: Sequence[str], index: int) -> bool:
    """An exception line with no traceback above it: Python prints one above every uncaught exception, so this
    is a paste that kept only the last line. A message logged at a level the program goes on from is not one,
    nor the exception site.py reports for a start-up hook it goes on without."""
    found = _exception_line(line)
    if found is None or not found[1]:
        return False
    if index > 0 and any(hook in lines[index - 1] for hook in _SITE_HOOK):
        return False
    return _GOT_PAST_LEVEL_RE.search(line[: max(0, len(line) - len(found[0]))]) is None


def _ends_traceback(line: str, index: int, exception_lines: list[int]) -> bool:
    """Record the exception line that ends a traceback (not a deliberate exit); False: not one."""
    found = _exception_line(line)
    if found is None:
        return False
    if found[1]:
        exception_lines.append(index)
    return True


def _segment(starts: Sequence[int], index: int) -> tuple[int, int]:
    """The lines of the process that printed ``lines[index]``: from its start up to the next one."""
    at = bisect.bisect_right(starts, index)
    low = starts[at - 1] if at > 0 else 0
    high = starts[at] if at < len(starts) else 1 << 62
    return low, high


# uvicorn's access line for a request the server refused (400 Bad Request, 404 Not Found, 422 Unprocessable Entity):
# vLLM's OpenAI server validates a request (its length against max_model_len, its parameters, the model's name) before
# the engine sees it and answers 4xx, logging the ValueError / VLLMValidationError it raised; a process that answers
# is alive, so an exception before that answer did not end it
_REFUSED_REQUEST_RE = re.compile(r'HTTP/1\.[01](?:\x1b\[[0-9;]*m)?" (?:\x1b\[[0-9;]*m)?4\d\d\b')


def _recovered_after(lines: Sequence[str], index: int, starts: Sequence[int] = (), end: int | None = None) -> bool:
    """True when the same process went on serving after ``lines[index]`` (the error did not kill it), before
    ``end`` where given."""
    # a new process: whatever it serves says nothing of the one that failed
    end = min(len(lines), _segment(starts, index)[1] if end is None else end)
    at = _log_time(lines[index])
    for i in range(index + 1, end):
        line = lines[i]
        if (
            "Avg prompt throughput" in line
            or '" 200' in line
            or "Application startup complete" in line
            or _REFUSED_REQUEST_RE.search(line)
        ):
            then = _log_time(line)
            if at is not None and then is not None and _earlier(then, at):
                continue  # printed before the error: the excerpt put it below
            return True
    return False


# vLLM's logger: "INFO 11-19 21:10:38 [file.py:1] ..." (month-day, time; no year)
_LOG_TIME_RE = re.compile(r"\b(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\b")


def _log_time(line: str) -> tuple[int, ...] | None:
    m = _LOG_TIME_RE.search(line)
    return tuple(int(g) for g in m.groups()) if m else None


def _earlier(t: tuple[int, ...], than: tuple[int, ...]) -> bool:
    """``t`` was logged before ``than`` (a line of January below one of December is the new year, not earlier)."""
    return t < than and not (than[0] == 12 and t[0] == 1)


def _milestone_before_in_time(lines: Sequence[str], index: int, start: int, end: int) -> Phase | None:
    """Where an excerpt is out of time order (a line below ``lines[index]`` was logged earlier), the milestone
    logged last at or before it; None where the excerpt is in order or says no time."""
    at = _log_time(lines[index])
    if at is None:
        return None
    window = range(index + 1, min(end, index + _TRACEBACK_AFTER))  # a section quoted below the error
    if not any((t := _log_time(lines[i])) is not None and _earlier(t, at) for i in window):
        return None
    best: tuple[tuple[int, ...], int, Phase] | None = None
    for i in range(start, min(end, index + _PHASE_LOOKBACK)):
        t = _log_time(lines[i])
        phase = _milestone(lines[i]) if t is not None and (t == at or _earlier(t, at)) else None
        if phase is not None and t is not None:
            key = (t, _PHASE_ORDER[phase], phase)
            if best is None or key[:2] > best[:2]:
                best = key
    return best[2] if best else None


_UNCAUGHT = _Rule(
    sig.Signature(
        "uncaught-exception",
        K.UNKNOWN_FAILURE,
        sig.BARE,
        (),
        sig.Source("python", "Python/pythonrun.c", "PyErr_Display (an uncaught exception's traceback)", "all"),
    ),
    None,
    None,
)


def _frame_rule(kind: FailureKind) -> _Rule:
    """A verdict read from the frames an exception went through (see ``signatures.FRAME_KINDS``)."""
    tier = {K.DISTRIBUTED_ERROR: sig.DISTRIBUTED, K.ENGINE_DEAD: sig.DEAD}.get(kind, sig.ROOT_WEAK)
    phase = Phase.LOAD if kind is K.MODEL_LOAD_ERROR else None
    source = sig.Source("vllm", "see signatures.FRAME_KINDS", "the innermost frame of a traceback", "0.2.0-")
    return _Rule(sig.Signature("frame-" + kind.value, kind, tier, (), source, phase=phase), None, None)


_FRAME_RULES = {kind: _frame_rule(kind) for kind in {f.kind for f in sig.FRAME_KINDS}}


def _outcome_rule(kind: FailureKind, tier: int) -> _Rule:
    return _Rule(sig.Signature("systemd-outcome", kind, tier, (), sig.SYSTEMD_SERVICE), None, None)


def _outcome_hit(outcome: SystemdOutcome | None, lines: Sequence[str], scan: _Scan) -> _Hit | None:
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
        return _Hit(_outcome_rule(K.HOST_OOM_KILLED, sig.ROOT), -1, text, numbers)
    if scan.stopped:  # a person (or systemd) stopped it: however it ended, it did not fail
        return None
    if "signal" in numbers and not scan.killed_by_systemd:
        return _Hit(_outcome_rule(K.HOST_OOM_KILLED, sig.KILLED), len(lines), text, numbers)
    if signal == "BUS" or signal == "7":
        return _Hit(_outcome_rule(K.SHM_EXHAUSTED, sig.KILLED), len(lines), text, numbers)
    if result and result != "success":
        return _Hit(_outcome_rule(K.UNKNOWN_FAILURE, sig.BARE), len(lines), text, numbers)
    if outcome.exit_status not in (None, 0) or (signal and signal not in ("TERM", "INT", "15", "2")):
        return _Hit(_outcome_rule(K.UNKNOWN_FAILURE, sig.BARE), len(lines), text, numbers)
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


def _traceback_end(lines: Sequence[str], index: int) -> int:
    """The line a traceback ends at, for an exception named at ``lines[index]`` (an index out of the lines is taken
    as the nearest line): that line, but for IPython's header and Ray's (the frames follow them), the exception line
    after the frames or, where the paste was cut, IPython's last line."""
    index = min(max(index, 0), len(lines) - 1)
    ipython = lines[index].rstrip().endswith(_TRACEBACK)
    if not ipython and _RAY_HEADER_RE.search(lines[index]) is None:
        return index
    last = min(len(lines), index + _PHASE_LOOKBACK) - 1
    for i in range(index + 1, last + 1):
        text = strip_prefixes(lines[i])
        if _EXC_LINE_RE.match(text):
            return i
    return last if ipython else index


# Ray re-raises a remote task's exception with a header that names it, then the task's frames and its own exception
# line: "ray.exceptions.RayTaskError(KeyError): ray::RayWorker.execute_method() (pid=9510, ...)"
_RAY_HEADER_RE = re.compile(r"Ray\w*Error\([\w.]+\): ray::")


def _deciding_frame(frames: Sequence[str]) -> str | None:
    """The innermost frame of ``signatures.FRAME_KINDS`` among frames given innermost first."""
    for frame in frames:
        if frame == "<module>":  # raised while a module was imported: an install's fault, whoever imported it
            return None
        if frame in _FRAME_KIND:
            return frame
    return None


def _kind_of_frames(frames: Sequence[str]) -> FailureKind | None:
    """The kind the innermost frame of ``signatures.FRAME_KINDS`` names, of frames given innermost first."""
    frame = _deciding_frame(frames)
    return None if frame is None else _FRAME_KIND[frame]


def _cut_guess(name: str, kind: FailureKind, phase: Phase, source: sig.Source, where: str) -> _Rule:
    """The verdict a traceback cut before its exception gets from where it was cut (low confidence)."""
    hint = f"the traceback stops {where}, before its error: most often the device running out there; read the lines "
    return _Rule(sig.Signature(name, kind, sig.ROOT_WEAK, (), source, phase=phase, hint=hint + "after it"), None, None)


# A traceback cut (a paste's or an index's excerpt, a process killed mid-print) while a model class was being built:
# its exception is not there to name the cause. Building the model is where vLLM puts every parameter on the device
# (each layer's create_weights, ParallelLMHead, make_layers: torch.empty on the GPU), so what fails there without a
# message of its own to read is most often the device running out; a config the code does not accept raises there
# too, but is then read by its exception line. Every such cut traceback of the public threads read (9) was the weights
# not fitting. Low confidence: the daemon acts on it with care.
_CUT_IN_MODEL_BUILD = _cut_guess(
    "frame-cut-model-build",
    K.CUDA_OOM_LOAD,
    Phase.LOAD,
    sig.Source("vllm", "vllm/model_executor/models/, model_loader/", "the model classes' __init__", "0.2.0-"),
    "while the model was being built (the weights put on the device)",
)


# The same for a traceback cut inside the profile run, the CUDA-graph capture, the warm-up or the KV cache's allocation
# (the frames of signatures.FRAMES that place a profile), where vLLM runs the model at its largest batch on purpose to
# find its peak: with no exception line left to read, the likeliest is the device running out. On cut tracebacks of
# public threads, every one placed there with no message left was an OOM (5 of 5); where the message was kept
# elsewhere, 7 of 11 were OOMs, 3 a device fault in the capture and 1 the KV cache's own check, which is also why a cut
# in the KV cache's sizing (below) is not read so. Low confidence: the daemon's first step is a small one, and one
# that moves nothing is not repeated.
_CUT_IN_PROFILE_RUN = _cut_guess(
    "frame-cut-profile-run",
    K.CUDA_OOM_PROFILE,
    Phase.PROFILE,
    sig.Source(
        "vllm", "vllm/worker/, vllm/v1/worker/", "profile_run, capture_model, the KV cache's allocation", "0.4.0-"
    ),
    "in the profile run, the CUDA-graph capture or the KV cache's allocation",
)
_CUT_GUESSES = (_CUT_IN_MODEL_BUILD, _CUT_IN_PROFILE_RUN)

# where vLLM sizes the KV cache and refuses a length that does not fit: a cut there is no guess of an OOM
_KV_SIZING_FRAMES = frozenset(
    {
        "get_kv_cache_spec",
        "_get_kv_cache_config",
        "get_kv_cache_config",
        "get_kv_cache_configs",
        "raise_if_cache_size_invalid",
    }
)


def _cut_in_a_profile_run(frames: Sequence[str]) -> bool:
    if _phase_of_frames(frames) is not Phase.PROFILE:
        return False
    innermost = next((f for f in frames if f in _FRAME_PHASE), None)
    return innermost is not None and innermost not in _KV_SIZING_FRAMES


# vLLM's OpenAI server catches what a request's preprocessing raises (its chat template, its length against
# max_model_len, its parameters: ValueError, TypeError, RuntimeError, jinja2's TemplateError, VLLMValidationError),
# logs it with its traceback under this message and answers the client 400 (vllm/entrypoints/openai/serving_chat.py,
# serving_completion.py, serving_responses.py, later chat_completion/serving.py; 0.6.4-): the server goes on. The chat
# template's own failure is logged first where it is rendered (vllm/entrypoints/chat_utils.py, apply_hf_chat_template:
# "An error occurred in `transformers` while applying chat template", then re-raised as ValueError for the handler)
_REFUSED_REQUEST_LOGS = ("Error in preprocessing prompt inputs", "while applying chat template")


def _answered_as_refused(lines: Sequence[str], index: int) -> bool:
    """True when the traceback ending at ``lines[index]`` is one vLLM logged for a request it refused."""
    for i in range(index, max(0, index - _PHASE_LOOKBACK) - 1, -1):
        if _TRACEBACK in lines[i]:
            return any(log in lines[j] for j in range(max(0, i - 2), i + 1) for log in _REFUSED_REQUEST_LOGS)
    return False


def _uncaught_hits(lines: Sequence[str], scan: _Scan) -> list[_Hit]:
    """The first uncaught exception (or cut traceback) the server did not survive, read through its frames."""
    # a paste that kept only an exception's last line stands for it as its traceback would
    ends = sorted(scan.exception_lines + scan.cut_tracebacks + scan.loose_exceptions)
    cut = set(scan.cut_tracebacks)
    for at, index in enumerate(ends):
        if _recovered_after(lines, index, scan.starts) or _answered_as_refused(lines, index):
            continue
        if (
            at + 1 < len(ends)
            and ends[at + 1] - index <= _PHASE_LOOKBACK
            and _EXCEPTION_GROUP_RE.match(strip_prefixes(lines[index]))
        ):
            continue  # a group's members follow it: the first of them is read instead
        frames = _traceback_frames(lines, _traceback_end(lines, index), _segment(scan.starts, index)[0])
        frame = _deciding_frame(frames)
        if frame == MODEL_CLASS_FRAME and index in cut:
            rule = _CUT_IN_MODEL_BUILD
        elif frame is None and index in cut and _cut_in_a_profile_run(frames):
            rule = _CUT_IN_PROFILE_RUN
        else:
            rule = _UNCAUGHT if frame is None else _FRAME_RULES[_FRAME_KIND[frame]]
        return [_Hit(rule, index, strip_prefixes(lines[index]))]
    return []


# Python's faulthandler on a fatal signal: "Fatal Python error: Segmentation fault", then the crashing thread's stack,
# most recent call first, under "Current thread 0x7f0d3a2a9740 (most recent call first):" ("Stack (most recent call
# first):" where it dumps one thread), each frame as '  File "/x/pynccl_wrapper.py", line 257 in ncclAllReduce'
_FAULT_STACK_RE = re.compile(r"(?:Current thread 0x[0-9a-fA-F]+|Stack) \(most recent call first\):")
_FAULT_FRAME_RE = re.compile(r'File "[^"]*", line \d+ in (<module>|\w+)')
_FAULT_WINDOW = 200  # lines after the report: other threads' stacks may come first


def _crash_frames(lines: Sequence[str], index: int) -> list[str]:
    """The functions of the crashing thread's stack after faulthandler's report at ``lines[index]``, innermost
    first."""
    frames: list[str] = []
    inside = False
    for i in range(index + 1, min(len(lines), index + _FAULT_WINDOW)):
        text = strip_prefixes(lines[i])
        if not inside:
            inside = _FAULT_STACK_RE.match(text) is not None
            continue
        m = _FAULT_FRAME_RE.search(text)
        if m is None:
            break
        frames.append(_frame_function(m, lines[i], lines, i))
    return frames


def _crash_hits(lines: Sequence[str], scan: _Scan) -> list[_Hit]:
    """A fatal signal read through the frames it struck in, where faulthandler printed them (a crash inside NCCL's
    call is NCCL's)."""
    out = []
    for hit in scan.hits:
        if hit.rule.tier != sig.BARE or "Fatal Python error" not in hit.text:
            continue
        kind = _kind_of_frames(_crash_frames(lines, hit.index))
        if kind is not None:
            out.append(_Hit(_FRAME_RULES[kind], hit.index, hit.text))
    return out


def _wrapped_hits(lines: Sequence[str], scan: _Scan, hits: Sequence[_Hit]) -> list[_Hit]:
    """Root causes of exception lines no rule took alone, read with the lines a paste or a terminal wrapped them onto
    ("... (79.12/94.97 GiB) on startup is less" / "than desired GPU memory utilization ..."): joined at a space,
    then mid-word."""
    taken = {h.index for h in hits}
    out: list[_Hit] = []
    for index in sorted(set(scan.exception_lines + scan.loose_exceptions) - taken):
        parts = [strip_prefixes(lines[index])]
        for j in range(index + 1, min(len(lines), index + _WINDOW)):
            more = strip_prefixes(lines[j])
            if not more or more.startswith(("File ", _TRACEBACK)) or _EXC_LINE_RE.match(more):
                break
            parts.append(more)
        if len(parts) == 1:
            continue
        for glue in (" ", ""):
            joined = glue.join(parts)
            gated = _TABLES.gate.search(joined)  # as the scan does: only the rules of the needles found
            if gated is None:
                continue
            rules = [r for r in _candidates(_TABLES, joined, gated) if r.tier <= sig.ROOT_WEAK]
            hit = _best_hit(rules, joined, lines, index)
            if hit is not None:
                out.append(hit)
                break
    return out


# A process's own report of a fatal signal: Python's faulthandler ("Fatal Python error: Segmentation fault"), absl's
# ("*** SIGSEGV received at time=..."), a shell's "Segmentation fault (core dumped)"
_FATAL_SIGNAL_RE = re.compile(
    r"Fatal Python error|\*\*\* SIG[A-Z]+ received|Segmentation fault|Aborted \(core dumped\)"
)


# Ray's exceptions for a worker or an actor that died (python/ray/exceptions.py): reports of a death, not a cause
_DEATH_REPORT_RE = re.compile(
    r"\b(?:ActorDiedError|WorkerCrashedError|RayActorError|ActorUnavailableError|NodeDiedError)\b"
)


def _raises(lines: Sequence[str], index: int) -> bool:
    """An exception line of a failure, other than Ray's report of a death."""
    found = _exception_line(lines[index]) if index >= 0 else None
    return found is not None and found[1] and _DEATH_REPORT_RE.search(found[0]) is None


class _EarlierFailures:
    """What a death may follow in a log: the lines where one of the server's processes raised (the exceptions no rule
    took, and those a rule took by their text, "RuntimeError: NCCL error: ...", but for the engine's reports of its
    own death and Ray's of a dead worker) or crashed of a fatal signal; worked out once, on first need."""

    def __init__(self, lines: Sequence[str], scan: _Scan) -> None:
        self.lines, self.scan = lines, scan
        self._at: list[int] | None = None
        self._recovered: dict[int, bool] = {}
        self._starting: dict[int, bool] = {}

    def _indices(self) -> list[int]:
        if self._at is None:
            lines, scan = self.lines, self.scan
            at = {i for i in scan.exception_lines + scan.loose_exceptions if _raises(lines, i)}
            for h in scan.hits:
                if not (h.index >= 0 and h.rule.tier != sig.DEAD):
                    continue
                if _raises(lines, h.index) or (h.rule.tier == sig.BARE and _FATAL_SIGNAL_RE.search(h.text)):
                    at.add(h.index)
            self._at = sorted(at)
        return self._at

    def first(self, low: int, high: int) -> int | None:
        """The first such line in ``[low, high)`` after which the process did not go on serving."""
        at = self._indices()
        for index in at[bisect.bisect_left(at, low) :]:
            if index >= high:
                break
            recovered = self._recovered.get(index)
            if recovered is None:
                recovered = self._recovered[index] = _recovered_after(self.lines, index, self.scan.starts)
            if not recovered:
                return index
        return None

    def while_starting(self, index: int) -> bool:
        """Whether what places the failure at ``lines[index]`` (its frames, the method a worker ran, the milestone
        before it) says the server was still loading or profiling."""
        starting = self._starting.get(index)
        if starting is None:
            phase = _oom_phase(self.lines, _traceback_end(self.lines, index), self.scan.starts)[0]
            starting = self._starting[index] = phase in (Phase.LOAD, Phase.PROFILE)
        return starting


def _explained_by_an_earlier_failure(hit: _Hit, earlier: _EarlierFailures) -> bool:
    """A death that names no cause of its own (``Signature.after_a_failure``: a worker's exit code None, a shell's
    "Killed", Ray's worker that died of a "system error") after one of the server's processes raised without
    recovering, or crashed of a fatal signal, in the same start: the failure is what ended the start, the death its
    consequence (vLLM kills its own processes; a crashed worker is what Ray reports). So is the engine's report of
    its own death (``DEAD``) after such a failure in a start that had not served yet: an engine that dies while
    serving is what ``engine_dead`` names; one still loading or profiling died of what it raised."""
    if hit.index < 0:
        return False
    dead = hit.rule.tier == sig.DEAD
    if not (hit.rule.signature.after_a_failure or dead):
        return False
    failed = earlier.first(_segment(earlier.scan.starts, hit.index)[0], hit.index)
    return failed is not None and (not dead or earlier.while_starting(failed))


# vLLM registers each attention (and Mamba, LoRA) layer by its name in the process's forward context and refuses a
# name twice (vllm/attention/layer.py and the layers like it: "Duplicate layer name: model.layers.0.self_attn.attn"):
# a model built a second time in one process, a launcher's or a notebook's retry after the first start failed
_REBUILT = "Duplicate layer name: "


def _went_on(lines: Sequence[str], hit: _Hit, scan: _Scan) -> bool:
    """A warning the server got past: its process served after it. What Python prints while vLLM is imported comes
    before the banner and arguments that mark the process's start: where that start follows within seconds (by the
    logger's times), the warning is its process's, and is followed up to the first uncaught exception after it."""
    if _recovered_after(lines, hit.index, scan.starts):
        return True
    if not hit.rule.signature.at_import:
        return False
    first = next((i for i in scan.starts if i > hit.index), None)
    ends = [i for i in (*scan.exception_lines, *scan.cut_tracebacks) if i > hit.index]
    end = min(ends, default=len(lines))
    if first is None or first > end:
        return False
    warned, started = _log_time(lines[hit.index]), _log_time(lines[first])
    if warned is None or started is None or _earlier(started, warned) or _seconds(started) - _seconds(warned) > 60:
        return False
    return _recovered_after(lines, hit.index, end=end)


def _seconds(t: tuple[int, ...]) -> int:
    """A logger time (month, day, hour, minute, second) as seconds, within a month's span."""
    return (((t[1] * 24 + t[2]) * 60) + t[3]) * 60 + t[4]


def _before_a_rebuild(lines: Sequence[str], starts: Sequence[int], verdicts: list[_Hit]) -> list[_Hit]:
    """The failures of the starts before a retry in the same process that could not build the model again: the
    retry fails because the first start left its layers behind, so the first start's failure is the story."""
    rebuilt = next((i for i, line in enumerate(lines) if _REBUILT in line), None)
    if rebuilt is None:
        return verdicts
    low = _segment(starts, rebuilt)[0]
    earlier = [h for h in verdicts if 0 <= h.index < low]
    return earlier or verdicts


def _without_what_went_on(verdicts: list[_Hit], starts: Sequence[int]) -> list[_Hit]:
    """Warnings the program went on from (``Signature.alone``) where something else in their start failed (systemd's
    result of the attempt is how it ended, not something else)."""
    if not any(h.rule.signature.alone for h in verdicts):
        return verdicts
    failed = {_segment(starts, h.index)[0] for h in verdicts if h.index >= 0 and not h.rule.signature.alone}
    return [h for h in verdicts if not h.rule.signature.alone or _segment(starts, max(h.index, 0))[0] not in failed]


def classify(lines: Sequence[str], outcome: SystemdOutcome | None = None) -> Failure:
    """Why the attempt whose log ``lines`` are given failed (``kind`` ``none`` when it did not).

    ``lines`` are raw messages in order, with or without prefixes; ``outcome`` is systemd's result
    for the attempt where known.
    """
    lines = as_printed(lines)
    scan = _scan(lines)
    # a warning the server got past (a slow rank that caught up) is not what ended the attempt
    hits = [h for h in scan.hits if not (h.rule.signature.recoverable and _went_on(lines, h, scan))]
    hits.extend(_wrapped_hits(lines, scan, hits))
    hits.extend(_uncaught_hits(lines, scan))
    hits.extend(_crash_hits(lines, scan))
    earlier = _EarlierFailures(lines, scan)
    hits = [h for h in hits if not _explained_by_an_earlier_failure(h, earlier)]
    if scan.killed_by_systemd:
        hits = [h for h in hits if h.rule.tier != sig.KILLED]
    extra = _outcome_hit(outcome, lines, scan)
    if extra is not None:
        hits.append(extra)
    verdicts = [h for h in hits if h.rule.tier != sig.CONTEXT]
    if not verdicts:
        if not _exited_while_loading(lines, scan.starts):
            return NO_FAILURE
        # the process ended while it loaded the model and said nothing of why (a SIGKILL's trace is in the kernel's
        # log or the journal, not here)
        return Failure(
            kind=K.UNKNOWN_FAILURE,
            phase=Phase.LOAD,
            evidence=(_cut(strip_prefixes(lines[-1])),) if lines else (),
            hint="the process ended while loading the model without a word of why: look for an OOM kill in the "
            "kernel's log (journalctl -k) and for systemd's result in the unit's journal",
            confidence=Confidence.LOW,
            basis=Basis.BARE,
        )
    verdicts = _without_what_went_on(verdicts, scan.starts)
    if scan.starts:  # a log of several starts (a journal dump): the latest one that failed is the story
        verdicts = _before_a_rebuild(lines, scan.starts, verdicts)
        latest = max(_segment(scan.starts, max(h.index, 0))[0] for h in verdicts)
        verdicts = [h for h in verdicts if h.index < 0 or _segment(scan.starts, h.index)[0] == latest]

    best_tier = min(h.rule.tier for h in verdicts)
    chosen = [h for h in verdicts if h.rule.tier == best_tier]
    first = min(chosen, key=lambda h: h.index)
    kind = first.rule.kind
    signature = first.rule.signature
    basis = Basis.MESSAGE if best_tier <= sig.ROOT_WEAK else Basis.BARE
    if first.rule in _FRAME_RULES.values() or first.rule in _CUT_GUESSES:
        basis = Basis.FRAME

    phase = signature.phase or Phase.UNKNOWN
    if signature.oom and lines:
        phase, basis = _reported_phase(lines, first, verdicts, scan.starts) or _oom_phase(
            lines, _traceback_end(lines, first.index), scan.starts
        )
        kind = _OOM_KIND_BY_PHASE[phase]
        # the allocator's message may be another hit than the first (IPython names the exception in a header first);
        # PyTorch 2.1 wrote "total capacty"
        told = next((h for h in verdicts if h.rule.signature.oom and "capac" in h.text), first)
        if phase is Phase.UNKNOWN and _filled_by_weights(told.text):
            phase, basis = Phase.LOAD, Basis.ALLOCATOR
            kind = K.CUDA_OOM_LOAD
        # held by others: only before serving, while vLLM still takes its share; a server that serves got it, and
        # what runs out then is its own peak over what is left, whoever else holds memory (another stage of the same
        # server, a neighbour started later)
        if (phase is not Phase.SERVE and _others_hold_the_gpu(told.text)) or (
            phase is Phase.PROFILE
            and _others_took_the_kv_cache(
                told.text,
                _traceback_frames(lines, _traceback_end(lines, told.index), _segment(scan.starts, told.index)[0]),
            )
        ):
            kind, basis = K.VRAM_HELD, Basis.MESSAGE  # what ran out was taken before vLLM asked for it

    # a clue that names the kind of a bare verdict: a tiny /dev/shm behind a crash that says nothing else
    segment = _segment(scan.starts, max(first.index, 0))
    context = [h for h in hits if h.rule.tier == sig.CONTEXT and segment[0] <= h.index < segment[1]]
    if context and best_tier >= sig.BARE:
        first = context[0]
        kind, phase, basis, best_tier = first.rule.kind, Phase.UNKNOWN, Basis.MESSAGE, sig.CONTEXT

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
    hint = first.rule.signature.hint if first.rule.kind is kind and first.rule.signature.hint else _hint(kind, numbers)
    if kind is K.VRAM_HELD and "memory profiling" in first.text:
        hint = "another process's GPU memory changed while vLLM profiled: give vLLM the GPU alone, then restart"
    return Failure(
        kind=kind,
        phase=phase,
        numbers=numbers,
        evidence=evidence,
        hint=hint,
        confidence=Confidence.LOW if first.rule in _CUT_GUESSES else _confidence(best_tier, basis),
        basis=basis,
    )


def _confidence(tier: int, basis: Basis) -> Confidence:
    """How far the daemon may trust a verdict: a root-cause message most, a bare error least."""
    if basis in (Basis.BARE, Basis.ALLOCATOR) or tier in (sig.KILLED, sig.BARE):
        return Confidence.LOW
    if basis is Basis.MILESTONE or tier in (sig.ROOT_WEAK, sig.DISTRIBUTED, sig.DEAD, sig.CONTEXT):
        return Confidence.MEDIUM
    return Confidence.HIGH


def _same_kind(hit: _Hit, first: _Hit) -> bool:
    if hit is first:
        return True
    if hit.rule.kind in _OOM_KINDS and first.rule.kind in _OOM_KINDS:
        return True
    return hit.rule.kind is first.rule.kind and hit.rule.tier == first.rule.tier


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_EVIDENCE_CHARS else text[: _MAX_EVIDENCE_CHARS - 3] + "..."
