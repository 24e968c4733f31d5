"""The vLLM emulator itself: its verdicts for a given GPU and flags, its log lines, its endpoints.

The printed lines are checked against the wording of vLLM's source (vllm/v1/core/kv_cache_utils.py,
vllm/v1/worker/gpu_worker.py, vllm/v1/engine/utils.py) and PyTorch's CUDA caching allocator.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

EMULATOR = Path(__file__).parent / "vllm_emulator.py"
MODELS = Path(__file__).parent / "models"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _gpus(tmp_path: Path, total_mib: int = 24576, held_mib: int = 0) -> Path:
    procs = [{"pid": 4242, "command": "stray.py", "used_mib": held_mib}] if held_mib else []
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"gpus": [{"index": 0, "total_mib": total_mib, "processes": procs}]}))
    return path


def _run(
    tmp_path: Path, model: str, *flags: str, held_mib: int = 0, env: dict[str, str] | None = None
) -> tuple[int, str]:
    argv = [sys.executable, str(EMULATOR), "--model", str(MODELS / model), "--port", str(_free_port()), *flags]
    full_env = {**os.environ, "VLLM_GUARD_FAKE_GPUS": str(_gpus(tmp_path, held_mib=held_mib)), **(env or {})}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, env=full_env, check=False)
    return proc.returncode, proc.stdout + proc.stderr


# (case, model, flags, held MiB, env, exit status, expected text)
FAILURES = [
    (
        "kv cache too small: vLLM's estimate",
        "qwen2.5-7b-instruct",
        ["--gpu-memory-utilization=0.7", "--max-model-len=32768"],
        0,
        {},
        1,
        "the estimated maximum model length is 30240. Try increasing `gpu_memory_utilization`",
    ),
    (
        "weights do not fit",
        "qwen2.5-14b-instruct",
        ["--max-model-len=8192"],
        0,
        {},
        1,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB",
    ),
    (
        "vram held by another process",
        "qwen2.5-7b-instruct",
        ["--max-model-len=8192"],
        12288,
        {},
        1,
        "ValueError: Free memory on device (12.00/24.00 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 21.60 GiB)",
    ),
    (
        "cuda graph capture beyond the budget",
        "qwen2.5-7b-instruct",
        ["--gpu-memory-utilization=0.95", "--max-model-len=8192"],
        0,
        {"VLLM_EMU_CUDA_RESERVED_MIB": "1024"},
        1,
        "in _capture_cudagraphs",
    ),
    (
        "unknown flag",
        "qwen2.5-7b-instruct",
        ["--no-such-flag"],
        0,
        {},
        2,
        "api_server.py: error: unrecognized arguments: --no-such-flag",
    ),
    (
        "max_model_len above the model's",
        "qwen2.5-7b-instruct",
        ["--max-model-len=65536"],
        0,
        {},
        1,
        "User-specified max_model_len (65536) is greater than the derived max_model_len",
    ),
]


@pytest.mark.parametrize(
    ("case", "model", "flags", "held", "env", "status", "text"), FAILURES, ids=[f[0] for f in FAILURES]
)
def test_start_failures(
    tmp_path: Path, case: str, model: str, flags: list[str], held: int, env: dict[str, str], status: int, text: str
) -> None:
    code, out = _run(tmp_path, model, *flags, held_mib=held, env=env)
    assert code == status, out
    assert text in out
    if case not in ("unknown flag", "max_model_len above the model's"):  # the engine core never started
        assert "RuntimeError: Engine core initialization failed. See root cause above." in out


def test_missing_model_folder(tmp_path: Path) -> None:
    argv = [sys.executable, str(EMULATOR), "--model", str(tmp_path / "gone"), "--port", str(_free_port())]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    assert proc.returncode == 1
    assert f"Invalid repository ID or local directory specified: '{tmp_path / 'gone'}'" in proc.stdout


def test_serves_the_openai_endpoints_then_dies_at_the_chosen_request(tmp_path: Path) -> None:
    port = _free_port()
    argv = [
        sys.executable,
        str(EMULATOR),
        "--model",
        str(MODELS / "qwen2.5-7b-instruct"),
        "--served-model-name",
        "qwen",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len=8192",
    ]
    env = {**os.environ, "VLLM_GUARD_FAKE_GPUS": str(_gpus(tmp_path)), "VLLM_EMU_MODE": "engine_dead"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, "the emulator did not come up"
                time.sleep(0.1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
            models = json.load(r)
        assert models["data"][0]["id"] == "qwen"
        assert models["data"][0]["root"] == str(MODELS / "qwen2.5-7b-instruct")

        def chat() -> int:
            body = json.dumps({"model": "qwen", "messages": [{"role": "user", "content": "hi"}]}).encode()
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(req, timeout=2) as r:
                    return int(r.status)
            except urllib.error.HTTPError as err:
                return int(err.code)

        assert chat() == 200
        assert chat() == 500  # the 2nd request kills the engine; the API stays up
        assert chat() == 500
        with pytest.raises(urllib.error.HTTPError) as dead:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
        assert dead.value.code == 503
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert "Application startup complete." in out
    assert "GPU KV cache size: " in out
    assert "EngineDeadError: EngineCore encountered an issue." in out
