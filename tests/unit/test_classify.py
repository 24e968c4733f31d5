"""Focused tests of the classifier: numbers, prefixes, the wrapper, hard negatives, systemd outcomes.

Lines quoted from public logs name their source beside them. Lines marked SYNTHETIC are made here
from vLLM's and PyTorch's message formats (to vary one thing at a time); they are not real logs.
"""

from __future__ import annotations

import pytest

from vllm_guard.core.classify import classify
from vllm_guard.core.failure import SystemdOutcome
from vllm_guard.core.kinds import Basis, Confidence, FailureKind, Phase
from vllm_guard.core.logline import as_printed, as_printed_line, strip_prefixes

pytestmark = pytest.mark.unit

K = FailureKind

# The message of the contract example (vLLM V1 kv_cache_utils wording).
KV_V1 = (
    "ValueError: To serve at least one request with the model's max seq len (131072), (4.0 GiB KV cache is "
    "needed, which is larger than the available KV cache memory (1.0 GiB). Based on the available memory, "
    "the estimated maximum model length is 32640. Try increasing `gpu_memory_utilization` or decreasing "
    "`max_model_len` when initializing the engine."
)
WRAPPER = "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"


# --- numbers ------------------------------------------------------------------------------------

NUMBER_CASES = [
    pytest.param(
        [KV_V1],
        K.KV_CACHE_INSUFFICIENT,
        {
            "max_model_len": 131072,
            "estimated_max_model_len": 32640,
            "kv_needed_gib": 4.0,
            "kv_available_gib": 1.0,
        },
        id="kv-v1",
    ),
    pytest.param(
        # https://github.com/vllm-project/tpu-inference/pull/223 ("models's", vLLM 0.8-0.10)
        [
            "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV "
            "cache is needed, which is larger than the available KV cache memory (0.71 GiB). Based on the "
            "available memory, the estimated maximum model length is 5632. Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
        ],
        K.KV_CACHE_INSUFFICIENT,
        {
            "max_model_len": 131072,
            "estimated_max_model_len": 5632,
            "kv_needed_gib": 16.0,
            "kv_available_gib": 0.71,
        },
        id="kv-v1-models-typo",
    ),
    pytest.param(
        # a pasted message wrapped over lines (as in blog posts and issue comments)
        [
            "ValueError: To serve at least one request with the model max seq len (250000), 3.19 GiB KV "
            "cache is "
            "needed,",
            "which is larger than the available KV cache memory (0.01 GiB). Based on the available memory, "
            "the "
            "estimated",
            "maximum model length is 256.",
        ],
        K.KV_CACHE_INSUFFICIENT,
        {
            "max_model_len": 250000,
            "estimated_max_model_len": 256,
            "kv_needed_gib": 3.19,
            "kv_available_gib": 0.01,
        },
        id="kv-wrapped",
    ),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/2418 (V0 wording)
        [
            "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that "
            "can be "
            "stored in KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` "
            "when initializing the engine."
        ],
        K.KV_CACHE_INSUFFICIENT,
        {"max_model_len": 4096, "kv_capacity_tokens": 3664},
        id="kv-v0",
    ),
    pytest.param(
        # vLLM's CPU backend (cpu_worker.py wording)
        [
            "(Worker pid=114) ERROR 08-14 08:34:03 [multiproc_executor.py:1018] ValueError: Available "
            "memory on "
            "node 0 (2.5/7.77 GiB) on kv cache allocation is less than requested memory for kv (12.0 GiB). "
            "Decrease --kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE, or reduce CPU memory used by other "
            "processes."
        ],
        K.KV_CACHE_INSUFFICIENT,
        {"kv_available_gib": 2.5, "kv_needed_gib": 12.0},
        id="kv-cpu-backend",
    ),
    pytest.param(
        [
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
            "when "
            "initializing the engine."
        ],
        K.KV_CACHE_INSUFFICIENT,
        {},
        id="kv-no-blocks",
    ),
    pytest.param(
        # vLLM gpu_worker.py wording, with the device name of newer versions
        [
            "ValueError: Free memory on device cuda:0 (7.34/15.49 GiB) on startup is less than desired GPU "
            "memory "
            "utilization (0.8, 12.39 GiB). Decrease GPU memory utilization or reduce GPU memory used by "
            "other "
            "processes."
        ],
        K.VRAM_HELD,
        {"gpu_free_gib": 7.34, "gpu_total_gib": 15.49, "util_requested": 0.8},
        id="vram-held-device",
    ),
    pytest.param(
        [
            "ValueError: Free memory on device (3.27/15.98 GiB) on startup is less than desired GPU memory "
            "utilization (0.9, 14.39 GiB)"
        ],
        K.VRAM_HELD,
        {"gpu_free_gib": 3.27, "gpu_total_gib": 15.98, "util_requested": 0.9},
        id="vram-held-no-device",
    ),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/12030 (PyTorch >= 2.2 wording)
        [
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total "
            "capacity "
            "of 11.53 GiB of which 187.75 MiB is free."
        ],
        K.CUDA_OOM_RUNTIME,  # a bare OOM: the likeliest phase, unknown
        {"alloc_bytes": 224 * 1024**2, "gpu_total_gib": 11.53, "gpu_free_gib": 0.183},
        id="oom-torch-new",
    ),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/2140 (PyTorch 2.1's "capacty" typo)
        [
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 518.00 MiB. GPU 0 has a "
            "total "
            "capacty of 21.67 GiB of which 4.06 MiB is free. Process 2417585 has 21.65 GiB memory in use."
        ],
        K.CUDA_OOM_RUNTIME,  # a bare OOM: the likeliest phase, unknown
        {"alloc_bytes": 518 * 1024**2, "gpu_total_gib": 21.67, "gpu_free_gib": 0.004},
        id="oom-torch-capacty",
    ),
    pytest.param(
        # SYNTHETIC: PyTorch < 2.1 wording
        [
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.65 GiB "
            "total "
            "capacity; 22.62 GiB already allocated; 11.56 MiB free; 22.77 GiB reserved in total by PyTorch)"
        ],
        K.CUDA_OOM_RUNTIME,  # a bare OOM: the likeliest phase, unknown
        {"alloc_bytes": 20 * 1024**2, "gpu_total_gib": 23.65, "gpu_free_gib": 0.011},
        id="oom-torch-old",
    ),
    pytest.param(
        # SYNTHETIC: uvicorn's bind error
        ["ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use"],
        K.PORT_IN_USE,
        {"port": 8000},
        id="port-uvicorn",
    ),
    pytest.param(
        # SYNTHETIC: vLLM's own bind (no port in the message) after its argument dump
        [
            "INFO 05-01 10:00:00 [api_server.py:1] non-default args: {'model': 'Qwen/Qwen3-8B', 'port': 8001}",
            "OSError: [Errno 98] Address already in use",
        ],
        K.PORT_IN_USE,
        {"port": 8001},
        id="port-from-args",
    ),
    pytest.param(
        # SYNTHETIC: the kernel's OOM-killer line
        [
            "kernel: Out of memory: Killed process 41234 (python3) total-vm:123456kB, anon-rss:98765kB, "
            "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1234kB oom_score_adj:0"
        ],
        K.HOST_OOM_KILLED,
        {"killed_pid": 41234},
        id="kernel-oom",
    ),
    pytest.param(
        ["vllm-qwen.service: Main process exited, code=killed, status=9/KILL"],
        K.HOST_OOM_KILLED,
        {"signal": 9},
        id="systemd-sigkill",
    ),
    pytest.param(
        [
            "ValueError: User-specified max_model_len (200000) is greater than the derived max_model_len "
            "(max_position_embeddings=131072 or model_max_length=None in model's config.json)."
        ],
        K.BAD_ARGUMENTS,
        {"max_model_len": 200000},
        id="maxlen-over-derived",
    ),
]


@pytest.mark.parametrize(("lines", "kind", "numbers"), NUMBER_CASES)
def test_numbers(lines: list[str], kind: FailureKind, numbers: dict[str, float]) -> None:
    failure = classify(lines)
    assert failure.kind is kind
    for key, value in numbers.items():
        assert failure.numbers.get(key) == pytest.approx(value, rel=1e-3), key
    assert failure.evidence
    assert failure.hint


def test_kv_hint_names_vllms_estimate() -> None:
    assert "32640" in classify([KV_V1]).hint


# --- prefixes ------------------------------------------------------------------------------------

PREFIXES = [
    pytest.param("", id="bare"),
    pytest.param("Nov 30 05:00:00 gpu-host python3[123]: ", id="journalctl-short"),
    pytest.param("2026-11-30T05:00:00+0000 gpu-host vllm[123]: ", id="journalctl-short-iso"),
    pytest.param("vllm-qwen-1  | ", id="docker-compose"),
    pytest.param("2026-11-30T05:00:00.123456789Z ", id="kubectl-timestamps"),
    pytest.param("(EngineCore_DP0 pid=18799) ERROR 10-08 20:33:48 [core.py:708] ", id="vllm-enginecore"),
    pytest.param("(VllmWorker rank=0 pid=3073) ERROR 03-20 10:00:00 [multiproc_executor.py:470] ", id="worker"),
    pytest.param("(APIServer pid=1) ", id="apiserver"),
    pytest.param("ERROR 04-17 15:10:09 engine.py:448] ", id="vllm-v0-logger"),
    pytest.param("[rank0]: ", id="torch-rank"),
    pytest.param("vllm-1  | (EngineCore_DP0 pid=7) ERROR 10-08 20:33:48 [core.py:708] ", id="stacked"),
    # journalctl's other short formats (journalctl(1), --output=)
    pytest.param("Nov 30 05:00:00.123456 gpu-host python3[123]: ", id="journalctl-short-precise"),
    pytest.param("Mon 2026-11-30 05:00:00 UTC gpu-host python3[123]: ", id="journalctl-short-full"),
    pytest.param("Mon 2026-11-30 05:00:00.123456 +03 gpu-host python3[123]: ", id="journalctl-short-full-precise"),
    pytest.param("[  123.456789] gpu-host python3[123]: ", id="journalctl-short-monotonic"),
    pytest.param("1764478800.123456 gpu-host python3[123]: ", id="journalctl-short-unix"),
    # a node's container log in the CRI format, as fluent-bit or promtail ship it unparsed
    pytest.param("2026-11-30T05:00:00.123456789Z stderr F ", id="cri"),
    pytest.param("2026-11-30T05:00:00.123456789Z stdout F (EngineCore_DP0 pid=7) ", id="cri-stacked"),
    pytest.param("4:47PM DBG GRPC(qwen-127.0.0.1:38441): stderr ", id="localai-backend"),
    # a console or an export that names the zone; a syslog collector's record (RFC 5424, RFC 3164)
    pytest.param("2026-11-30 05:00:00.123 UTC ", id="time-utc"),
    pytest.param("<14>1 2026-11-30T05:00:00.123Z gpu-host vllm 4242 - - ", id="syslog-rfc5424"),
    pytest.param("<14>Nov 30 05:00:00 gpu-host vllm[4242]: ", id="syslog-rfc3164"),
    pytest.param("    42\t", id="cat-n"),
    pytest.param("ERROR:root:", id="python-logging-basic"),
    pytest.param("2026-11-30 05:00:00,123 - supervisor - ERROR - ", id="python-logging-cookbook"),
    # a paste quoted in a reply, or indented as a Markdown code block
    pytest.param("> ", id="markdown-quote"),
    pytest.param("> > Nov 30 05:00:00 gpu-host python3[123]: ", id="markdown-quote-nested-journal"),
    pytest.param("    (EngineCore_DP0 pid=18799) ERROR 10-08 20:33:48 [core.py:708] ", id="markdown-indent"),
    # a launcher's or a shipper's own tags before vLLM's logger prefix
    pytest.param("[Worker_TP3 pid=540] ERROR 11-19 21:10:38 [v1/executor/multiproc_executor.py:671] ", id="tag-pid"),
    pytest.param("[Stage-0] ERROR 03-23 04:09:00 [diffusion_worker.py:430] ", id="tag-stage"),
    pytest.param("[Stage-0] ", id="tag-alone"),
    pytest.param("(raylet) ", id="ray-raylet"),
    pytest.param("[W622 01:26:22.765816358 ProcessGroupNCCL.cpp:1575] ", id="glog"),
    pytest.param(
        "[2026-09-09 23:58:37.427][sv-882d3306-0-1] (Worker_DP2_TP0 pid=1315) ERROR 09-09 15:58:37 "
        "[multiproc_executor.py:987] ",
        id="tags-stacked",
    ),
]


@pytest.mark.parametrize(
    "line",
    [
        "Nov 30 05:00:00 gpu-host python3[123]:",
        "Nov 30 05:00:00 gpu-host python3[123]: ",
        "2026-11-30T05:00:00+0000 gpu-host vllm[123]:",
        "2026-11-30T05:00:00.123456789Z",
        "> ",
    ],
)
def test_a_prefix_with_an_empty_message_leaves_nothing(line: str) -> None:
    # an empty line of the log (a paste may have trimmed the space after the prefix): still an empty line
    assert strip_prefixes(line) == ""


@pytest.mark.parametrize("prefix", PREFIXES)
def test_prefixes_do_not_change_the_verdict(prefix: str) -> None:
    failure = classify([prefix + KV_V1])
    assert failure.kind is K.KV_CACHE_INSUFFICIENT
    assert failure.numbers["estimated_max_model_len"] == 32640
    assert failure.evidence[0].startswith("ValueError: To serve")


@pytest.mark.parametrize("prefix", PREFIXES)
def test_strip_prefixes(prefix: str) -> None:
    assert strip_prefixes(prefix + "ValueError: boom\n") == "ValueError: boom"


@pytest.mark.parametrize(
    ("shown", "printed"),
    [
        # a forum's Markdown escapes (discuss.vllm.ai keeps them in what it serves)
        (
            "(EngineCore pid=258) INFO 04-24 10:21:03 \\[default\\_loader.py:384\\] Loading weights took 0.65 seconds",
            "(EngineCore pid=258) INFO 04-24 10:21:03 [default_loader.py:384] Loading weights took 0.65 seconds",
        ),
        # a page's HTML character references and typographic quotes
        (
            "  File &quot;/x/vllm/worker.py&quot;, line 1, in &lt;module&gt;",
            '  File "/x/vllm/worker.py", line 1, in <module>',
        ),
        (
            "  File \u201c/x/vllm/worker.py\u201d, line 1, in load\u2019s",
            '  File "/x/vllm/worker.py", line 1, in load\'s',
        ),
        ('\u00a0\u00a0File "/x.py", line 1, in f', '  File "/x.py", line 1, in f'),
        # what a process prints stays as it is: a URL's query, a Windows path, Python's reprs
        ("GET /v1/models?a=1&b=2 HTTP/1.1", "GET /v1/models?a=1&b=2 HTTP/1.1"),
        ("C:\\Users\\me\\model", "C:\\Users\\me\\model"),
        ("b'\\x00\\n'", "b'\\x00\\n'"),
    ],
)
def test_a_line_as_the_process_printed_it(shown: str, printed: str) -> None:
    assert as_printed_line(shown) == printed


def test_a_page_that_made_each_line_a_paragraph_is_read_as_the_log() -> None:
    printed = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/vllm/v1/engine/core.py", line 144, in __init__',
        "    kv_cache_config = self._initialize_kv_caches(vllm_config)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65"
        " GiB of which 1.24 GiB is free.",
    ]
    shown = [part for line in printed for part in (line, "")]
    assert list(as_printed(shown)) == printed
    assert classify(shown).phase is classify(printed).phase is Phase.PROFILE
    # a log whose own blank lines part runs of lines is left as it is
    own = [*printed[:2], "", *printed[2:], "", "INFO 1", "", "INFO 2", "", "INFO 3", ""]
    assert as_printed(own) is own


def test_a_terminals_hard_wrap_is_joined_again() -> None:
    printed = [
        "(EngineCore pid=316) ERROR 05-12 10:00:01 [core.py:12] EngineCore failed to start.",
        '(EngineCore pid=316)   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 305, in'
        " _initialize_kv_caches",
        "(EngineCore pid=316) ValueError: To serve at least one request with the model's max seq len (100000), (4.26"
        " GiB KV cache is needed, which is larger than the available KV cache memory (4.25 GiB). Based on the"
        " available memory, the estimated maximum model length is 99840.",
    ]
    text = "\n".join(printed)
    wrapped = [line[i : i + 80] for line in printed for i in range(0, len(line), 80)]
    assert "\n".join(as_printed(wrapped)) == text
    failure = classify(wrapped)
    assert failure.kind is K.KV_CACHE_INSUFFICIENT and failure.numbers["estimated_max_model_len"] == 99840


def test_lines_of_one_length_are_not_taken_for_a_wrap() -> None:
    # a log's own lines may share the widest length; the lines after them begin as a log's lines do
    stats = [
        f"INFO 11-30 05:00:0{i} [loggers.py:123] Engine 000: Avg prompt throughput: {i}.0 tokens/s, Running: 1 reqs"
        for i in range(5)
    ]
    lines = [
        line for pair in zip(stats, ["INFO 11-30 05:00:00 [api_server.py:1] 200 OK"] * 5, strict=True) for line in pair
    ]
    assert as_printed(lines) is lines
    same = ["x" * 90, "a warning's second line", "x" * 90, "a warning's second line"]
    assert as_printed(same) is same  # the same line again and again is a log's own


def test_a_prefix_no_table_knows_is_learnt_from_the_log() -> None:
    printed = [
        "INFO 05-12 10:00:00 [core.py:1] Loading weights took 8.1 GiB",
        "Traceback (most recent call last):",
        '  File "/x/vllm/v1/engine/core.py", line 144, in __init__',
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored"
        " in KV cache (1984). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`.",
    ]
    for prefix in ("node-7 :: vllm >> ", "{n}: ", "[{n}.{n}] ", "│ "):
        shown = [prefix.format(n=i + 1) + line for i, line in enumerate(printed)]
        # what is left is the log, or the log behind prefixes the table knows (">> " is a Markdown quote's)
        assert [strip_prefixes(line) for line in as_printed(shown)] == [strip_prefixes(line) for line in printed]
    assert classify([f"12:00:0{i}.123 W0 " + line for i, line in enumerate(printed)]).kind is (K.KV_CACHE_INSUFFICIENT)
    # a frame closes each line as it opens it: both sides go
    framed = [f"│ {line:<160} │" for line in printed]
    assert [strip_prefixes(line) for line in as_printed(framed)] == [strip_prefixes(line) for line in printed]
    # what every line begins with that a log's lines begin with is the table's (vLLM's logger prefix), and a word
    # before a colon is a message's own
    own = [
        "INFO 05-12 10:00:00 [core.py:1] a",
        "INFO 05-12 10:00:01 [core.py:2] b",
        "INFO 05-12 10:00:02 [core.py:3] c",
    ]
    assert as_printed(own) is own
    words = ["ERROR: a", "ERROR: b", "ERROR: c"]
    assert as_printed(words) is words


def test_a_log_with_nothing_to_undo_is_the_same_object() -> None:
    lines = ["INFO 11-30 05:00:00 [core.py:1] ok", 'ValueError: "x" & y']
    assert as_printed(lines) is lines


# --- the wrapper ---------------------------------------------------------------------------------


def test_wrapper_alone_is_never_oom() -> None:
    failure = classify([f"(APIServer pid=1) {WRAPPER}"])
    assert failure.kind is K.UNKNOWN_FAILURE
    assert not failure.kind.is_memory


def test_wrapper_points_at_the_cause_above() -> None:
    lines = [
        f"(EngineCore_DP0 pid=9) ERROR 10-08 20:33:48 [core.py:708] {KV_V1}",
        f"(APIServer pid=1) {WRAPPER}",
    ]
    assert classify(lines).kind is K.KV_CACHE_INSUFFICIENT


def test_engine_dead_error_alone() -> None:
    # SYNTHETIC (vLLM V1 wording)
    lines = [
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) "
        "for the root cause."
    ]
    assert classify(lines).kind is K.ENGINE_DEAD


# --- phases of a CUDA OOM ------------------------------------------------------------------------

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 79.10 GiB of which 1.02 GiB is free."
)


def _traceback(*frames: str) -> list[str]:
    # SYNTHETIC: a traceback through the named functions, then the OOM
    out = ["Traceback (most recent call last):"]
    for f in frames:
        out.append(f'  File "/usr/lib/python3/site-packages/vllm/worker.py", line 1, in {f}')
        out.append("    call()")
    return [*out, OOM]


PHASE_CASES = [
    pytest.param(
        _traceback("__init__", "load_model", "get_model", "load_weights"),
        K.CUDA_OOM_LOAD,
        Phase.LOAD,
        id="frames-load",
    ),
    pytest.param(
        _traceback(
            "run_engine_core",
            "_initialize_kv_caches",
            "determine_available_memory",
            "profile_run",
            "_dummy_run",
            "forward",
        ),
        K.CUDA_OOM_PROFILE,
        Phase.PROFILE,
        id="frames-profile",
    ),
    pytest.param(
        _traceback("compile_or_warm_up_model", "capture_model", "_dummy_run"),
        K.CUDA_OOM_PROFILE,
        Phase.PROFILE,
        id="frames-capture",
    ),
    pytest.param(
        _traceback("compile_or_warm_up_model", "_dummy_sampler_run", "sampler"),
        K.CUDA_OOM_PROFILE,
        Phase.PROFILE,
        id="frames-sampler",
    ),
    pytest.param(
        [
            "INFO 05-01 10:00:00 [launcher.py:1] Application startup complete.",
            'INFO:     10.0.0.5:4242 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
            *_traceback("run_busy_loop", "step", "execute_model", "forward"),
        ],
        K.CUDA_OOM_RUNTIME,
        Phase.SERVE,
        id="after-startup",
    ),
    pytest.param(
        ["INFO 05-01 10:00:00 [default_loader.py:1] Loading safetensors checkpoint shards:  40% 2/5", OOM],
        K.CUDA_OOM_LOAD,
        Phase.LOAD,
        id="milestone-load",
    ),
    pytest.param(
        [
            "INFO 05-01 10:00:00 [gpu_model_runner.py:1] Model loading took 14.99 GiB and 5.1 seconds",
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  40%",
            OOM,
        ],
        K.CUDA_OOM_PROFILE,
        Phase.PROFILE,
        id="milestone-capture",
    ),
    pytest.param(
        [
            "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. "
            "Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine."
        ],
        K.CUDA_OOM_PROFILE,
        Phase.PROFILE,
        id="sampler-warmup-message",
    ),
]


@pytest.mark.parametrize(("lines", "kind", "phase"), PHASE_CASES)
def test_oom_phase(lines: list[str], kind: FailureKind, phase: Phase) -> None:
    failure = classify(lines)
    assert (failure.kind, failure.phase) == (kind, phase)


# PyTorch's allocator words its OOM error with NVML's process list (reportProcessMemoryInfo, called only once an
# allocation has failed); where NVML cannot answer, one of its assertions is raised instead of the OOM message.
ALLOCATOR_NVML_ASSERTIONS = [
    # https://github.com/pytorch/pytorch/issues/121899 (a second 30000 x 30000 tensor on a full GPU)
    'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/opt/builds/pytorch/c10/cuda/CUDACachingAllocator.cpp'
    '":830, please report a bug to PyTorch.',
    # https://github.com/pytorch/pytorch/issues/112950 (a comment of 2024-07-10)
    "RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( pci_id, &nvml_device) "
    'INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":815, please report a bug to PyTorch.',
    # https://github.com/pytorch/pytorch/issues/130486 (the title)
    'RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_() INTERNAL ASSERT FAILED at "../c10/cuda/'
    'CUDACachingAllocator.cpp":813, please report a bug to PyTorch.',
]


@pytest.mark.parametrize("line", ALLOCATOR_NVML_ASSERTIONS)
def test_the_allocators_nvml_assertion_is_an_out_of_memory(line: str) -> None:
    alone = classify([line])
    assert alone.kind is K.CUDA_OOM_RUNTIME and alone.phase is Phase.UNKNOWN
    # SYNTHETIC milestone before it (vLLM V1's wording): placed in start-up like any OOM
    placed = classify(["INFO 05-01 10:00:00 [gpu_model_runner.py:1] Model loading took 1.91 GiB", line])
    assert placed.kind is K.CUDA_OOM_PROFILE


def test_an_nvml_assertion_outside_the_allocator_stays_a_driver_error() -> None:
    # SYNTHETIC (NVML's assertion raised from another file of PyTorch)
    line = 'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../torch/csrc/cuda/Module.cpp":900'
    assert classify([line]).kind is K.GPU_DRIVER_ERROR


def test_nccls_cuda_failure_out_of_memory_is_an_out_of_memory() -> None:
    # NCCL's CUCHECK prints "Cuda failure %d '%s'" (2 is CUDA_ERROR_OUT_OF_MEMORY); the NcclError that follows is
    # its consequence, not a communication failure.
    # https://github.com/shwgao/vllm/blob/095c89791419676ea9047947c50793b007e4baa3/z_debug.md
    lines = [
        "enqueue.cc:1556 NCCL WARN Cuda failure 2 out of memory",
        "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_UNHANDLED_CUDA_ERROR: unhandled cuda error",
    ]
    assert classify(lines).kind is K.CUDA_OOM_RUNTIME
    # SYNTHETIC: the quoted form CUCHECK prints
    assert classify(["misc/utils.cc:42 NCCL WARN Cuda failure 2 'out of memory'"]).kind is K.CUDA_OOM_RUNTIME


@pytest.mark.parametrize(
    "line",
    [
        # https://github.com/Tencent-Hunyuan/HunyuanOCR/issues/19 (cudaErrorUnsupportedPtxVersion)
        "torch.AcceleratorError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
        # SYNTHETIC, from cudaGetErrorString (cudaErrorSystemDriverMismatch)
        "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination",
    ],
)
def test_a_toolkit_the_driver_cannot_run_is_a_driver_error(line: str) -> None:
    assert classify([line]).kind is K.GPU_DRIVER_ERROR


def test_an_exception_line_pasted_without_its_traceback_is_a_failure() -> None:
    # Python prints a traceback above every uncaught exception: a lone exception line is a paste that cut it.
    # SYNTHETIC lines in Python's and vLLM's formats.
    alone = classify(["(EngineCore pid=1) ValueError: something the classifier has no rule for"])
    assert (alone.kind, alone.confidence) == (K.UNKNOWN_FAILURE, Confidence.LOW)
    # a message logged at a level the program goes on from is not one, nor a deliberate exit
    assert classify(["WARNING 05-01 10:00:00 [x.py:1] ValueError: a request was refused"]).kind is K.NONE
    assert classify(["KeyboardInterrupt"]).kind is K.NONE
    # nor one the server got past
    served = [
        "ERROR 05-01 10:00:00 [serving_chat.py:1] ValueError: a request was refused",
        "INFO 05-01 10:00:05 [loggers.py:1] Engine 000: Avg prompt throughput: 120.3 tokens/s, Avg generation "
        "throughput: 44.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit "
        "rate: 0.0%",
    ]
    assert classify(served).kind is K.NONE


@pytest.mark.parametrize(
    ("lines", "kind"),
    [
        pytest.param(
            # https://github.com/LMCache/LMCache/issues/3163 (a KV connector turned the hybrid manager off)
            [
                "(Worker_TP0 pid=98743) ERROR 04-30 19:50:08 [multiproc_executor.py:949] ValueError: Hybrid KV cache "
                "manager is disabled but failed to convert the KV cache specs to one unified type."
            ],
            K.BAD_ARGUMENTS,
            id="hybrid-manager-disabled",
        ),
        pytest.param(
            # https://github.com/spark-arena/recipe-registry/issues/23 (pydantic's line under a config's errors)
            ["(APIServer pid=74)   Value error, Unknown attention backend: 'B12X_MLA_SPARSE'. Valid options are: "],
            K.BAD_ARGUMENTS,
            id="pydantic-value-error",
        ),
        pytest.param(
            # https://github.com/MiaAI-Lab/DeepSeek-v4.1-Flash-DGX-Sparks/issues/14 (NCCL's RDMA registration)
            ["Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"],
            K.DISTRIBUTED_ERROR,
            id="nccl-ib-verbs",
        ),
        pytest.param(
            # https://github.com/vedantdev-100/vLLM_local/blob/d32bf722797124bffee803dc32989a43a2f67ac4/vllm.log
            ["(EngineCore pid=2391) ERROR 09-10 12:22:13 [core.py:1346] RuntimeError: UVA is not available"],
            K.GPU_DRIVER_ERROR,
            id="uva-unavailable",
        ),
        pytest.param(
            # https://github.com/timothystewart6/vllm-gb10/issues/67 (a checkpoint reader's frame)
            [
                'File ".../vllm/model_executor/model_loader/weight_utils.py", line 1141, in '
                "instanttensor_weights_iterator",
                "    with instanttensor.safe_open(",
                "TypeError: safe_open.__init__() got an unexpected keyword argument 'copy'",
            ],
            K.MODEL_LOAD_ERROR,
            id="weights-iterator-frame",
        ),
        pytest.param(
            # https://github.com/generative-computing/granite-switch/issues/123 (the message wrapped as pasted)
            [
                "Process 26825 has 56.03 GiB memory in use",
                "ValueError: Free memory on device cuda:0 (22.27/79.25 GiB) on startup is less than",
                "  desired GPU memory utilization (0.7, 55.48 GiB)",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.13 GiB",
            ],
            K.VRAM_HELD,
            id="free-memory-wrapped",
        ),
    ],
)
def test_texts_of_recent_releases_and_their_platforms(lines: list[str], kind: FailureKind) -> None:
    assert classify(lines).kind is kind


def test_a_more_exact_text_on_a_pydantic_line_names_its_own_kind() -> None:
    # https://github.com/Tencent-Hunyuan/HunyuanOCR/issues/4: the installed transformers does not know the model
    line = (
        "Value error, The checkpoint you are trying to load has model type `hunyuan_vl` but Transformers does not "
        "recognize this architecture."
    )
    assert classify([line]).kind is K.MODEL_LOAD_ERROR


# --- hard negatives ------------------------------------------------------------------------------

BENIGN_LINES = [
    # vLLM start-up lines full of memory words (wordings of vLLM 0.6-0.11)
    "INFO 05-01 10:00:00 [gpu_worker.py:1] Available KV cache memory: 54.85 GiB",
    "INFO 05-01 10:00:00 [kv_cache_utils.py:1] GPU KV cache size: 1,234,560 tokens",
    "INFO 05-01 10:00:00 [kv_cache_utils.py:1] Maximum concurrency for 32,768 tokens per request: 37.68x",
    "INFO 05-01 10:00:00 model_runner.py:1] CUDA graphs can take additional 1~3 GiB memory per GPU. If you "
    "are "
    "running out of memory, consider decreasing `gpu_memory_utilization` or enforcing eager mode.",
    "INFO 05-01 10:00:00 [worker.py:1] Memory profiling takes 5.32 seconds. the current vLLM instance can "
    "use "
    "total_gpu_memory (79.10GiB) x gpu_memory_utilization (0.90) = 71.19GiB; model weights take 14.99GiB; "
    "non_torch_memory takes 0.12GiB; PyTorch activation peak memory takes 1.23GiB; the rest of the memory "
    "reserved for KV Cache is 54.85GiB.",
    "WARNING 05-01 10:00:00 [config.py:1] To reduce the risk of OOM, consider lowering --max-num-seqs.",
    "[rank0]:[W501 10:00:00 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
    "destroyed "
    "before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
    "destroy_process_group to ensure that any pending NCCL operations have finished in this process.",
    "INFO 05-01 10:00:00 [launcher.py:1] Route: /v1/models, Methods: GET",
    "INFO:     Application startup complete.",
    "INFO 05-01 10:00:00 [loggers.py:1] Engine 000: Avg prompt throughput: 120.3 tokens/s, Avg generation "
    "throughput: 44.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit "
    "rate: 0.0%",
    "vllm-qwen.service: Deactivated successfully.",
    "vllm-qwen.service: Main process exited, code=exited, status=0/SUCCESS",
]


@pytest.mark.parametrize("line", BENIGN_LINES)
def test_hard_negative_lines(line: str) -> None:
    assert classify([line]).kind is K.NONE


def test_all_hard_negatives_together() -> None:
    assert classify(BENIGN_LINES).kind is K.NONE
    assert classify(BENIGN_LINES, SystemdOutcome(result="success", exit_status=0)).kind is K.NONE


# vLLM 0.11's wording (vllm/distributed/device_communicators/shm_broadcast.py, MessageQueue.acquire_write)
BROADCAST_STALL = (
    "INFO 05-01 10:00:00 [shm_broadcast.py:1] No available shared memory broadcast block found in 60 seconds. "
    "This typically happens when some processes are hanging or doing some time-consuming work."
)


def test_a_broadcast_stall_the_server_got_past_is_not_a_failure() -> None:
    assert classify([BROADCAST_STALL, *BENIGN_LINES]).kind is K.NONE


def test_a_broadcast_stall_that_never_ended_is_a_distributed_hang() -> None:
    failure = classify(["INFO:     Application startup complete.", BROADCAST_STALL, BROADCAST_STALL])
    assert failure.kind is K.DISTRIBUTED_ERROR
    assert failure.confidence is not Confidence.HIGH


def test_empty() -> None:
    assert classify([]).kind is K.NONE


# --- systemd's outcome ---------------------------------------------------------------------------

OUTCOME_CASES = [
    pytest.param(SystemdOutcome(result="oom-kill"), K.HOST_OOM_KILLED, id="result-oom-kill"),
    pytest.param(SystemdOutcome(result="signal", signal="KILL"), K.HOST_OOM_KILLED, id="signal-kill"),
    pytest.param(SystemdOutcome(result="signal", signal="SIGBUS"), K.SHM_EXHAUSTED, id="signal-bus"),
    pytest.param(SystemdOutcome(result="exit-code", exit_status=1), K.UNKNOWN_FAILURE, id="exit-code"),
    pytest.param(SystemdOutcome(result="timeout"), K.UNKNOWN_FAILURE, id="timeout"),
    pytest.param(SystemdOutcome(result="success", exit_status=0), K.NONE, id="success"),
]


@pytest.mark.parametrize(("outcome", "kind"), OUTCOME_CASES)
def test_outcome_only(outcome: SystemdOutcome, kind: FailureKind) -> None:
    failure = classify([], outcome)
    assert failure.kind is kind
    if kind is not K.NONE:
        assert failure.evidence and failure.hint


def test_outcome_does_not_hide_a_logged_cause() -> None:
    assert classify([KV_V1], SystemdOutcome(result="exit-code", exit_status=1)).kind is K.KV_CACHE_INSUFFICIENT


def test_oom_kill_result_beats_a_generic_error() -> None:
    failure = classify([WRAPPER], SystemdOutcome(result="oom-kill"))
    assert failure.kind is K.HOST_OOM_KILLED


def test_sigkill_after_a_stop_timeout_is_not_an_oom() -> None:
    lines = [
        "vllm-qwen.service: State 'stop-sigterm' timed out. Killing.",
        "vllm-qwen.service: Main process exited, code=killed, status=9/KILL",
    ]
    assert classify(lines).kind is not K.HOST_OOM_KILLED
    assert classify([], SystemdOutcome(result="signal", signal="KILL")).kind is K.HOST_OOM_KILLED


def test_systemd_oom_lines() -> None:
    lines = [
        "vllm-qwen.service: A process of this unit has been killed by the OOM killer.",
        "vllm-qwen.service: Main process exited, code=killed, status=9/KILL",
        "vllm-qwen.service: Failed with result 'oom-kill'.",
    ]
    failure = classify(lines)
    assert failure.kind is K.HOST_OOM_KILLED
    assert failure.numbers["signal"] == 9


# --- a recovered error is not a failure ----------------------------------------------------------


def test_traceback_then_serving_is_not_a_failure() -> None:
    # SYNTHETIC: a request's error logged with a traceback while the server goes on serving
    lines = [
        "INFO:     Application startup complete.",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/foo.py", line 1, in handler',
        "KeyError: 'messages'",
        'INFO:     10.0.0.5:4242 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    ]
    assert classify(lines).kind is K.NONE


def test_uncaught_traceback_is_unknown_failure() -> None:
    # SYNTHETIC
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/foo.py", line 1, in main',
        "ZeroDivisionError: division by zero",
    ]
    failure = classify(lines)
    assert failure.kind is K.UNKNOWN_FAILURE
    assert failure.evidence == ("ZeroDivisionError: division by zero",)


def test_to_dict_round_trip() -> None:
    failure = classify([KV_V1])
    assert type(failure).from_dict(failure.to_dict()) == failure


ANSI_CASES = [
    # https://github.com/vllm-project/vllm/issues/33297 (as pasted, "^[" for ESC)
    pytest.param(
        "[2026-01-26T17:25:37Z] ^[[0;36m(EngineCore_DP0 pid=738)^[[0;0m ^[[31mERROR^[[0m ^[[90m01-26 09:25:37^[[0m "
        "^[[90m[core.py:935]^[[0m ValueError: boom",
        id="caret-escapes",
    ),
    pytest.param("\x1b[0;36m(EngineCore_DP0 pid=738)\x1b[0;0m ValueError: boom", id="raw-escapes"),
    pytest.param("#033[2m#033[33m(raylet)#033[0m ValueError: boom", id="rsyslog-escapes"),
    # a paste that lost the ESC characters
    pytest.param("[36m(RayWorkerWrapper pid=7)[0m [1;31mERROR[0m ValueError: boom", id="bare-codes"),
]


@pytest.mark.parametrize("line", ANSI_CASES)
def test_strip_ansi_colours(line: str) -> None:
    assert strip_prefixes(line).endswith("ValueError: boom")
    assert "[0" not in strip_prefixes(line)


@pytest.mark.parametrize(
    "line",
    [
        # the kernel's ring buffer (dmesg): the time is a prefix, not the host and ident of journalctl's
        # short-monotonic form
        "[  5.123456] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
        "[12345.678901] python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0",
    ],
)
def test_dmesg_lines_lose_only_their_time(line: str) -> None:
    assert strip_prefixes(line) == line.split("] ", 1)[1]


@pytest.mark.parametrize(
    "line",
    [
        "ERROR:    Exception in ASGI application",
        "a [1m] is not a colour code without a reset on the line",
        "['Qwen2ForCausalLM'] are the architectures of this checkpoint",
    ],
)
def test_lines_that_only_look_prefixed_keep_their_message(line: str) -> None:
    assert strip_prefixes(line) == line


# --- pydantic's config validation: the "Value error, ..." line decides -------------------------

PYDANTIC = "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig"

PYDANTIC_CASES = [
    pytest.param(
        # SYNTHETIC, in the format of https://github.com/vllm-project/vllm/issues/26161
        [
            PYDANTIC,
            "  Value error, Model architectures ['FooForCausalLM'] are not supported for now. [type=value_error]",
        ],
        K.MODEL_LOAD_ERROR,
        id="architecture",
    ),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/52435
        [PYDANTIC, "Value error, Total number of attention heads (64) must be divisible by tensor parallel size (3)."],
        K.BAD_ARGUMENTS,
        id="heads-divisible",
    ),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/26161 (the reason is not a known one)
        [PYDANTIC, "  Value error, Expecting value: line 1 column 1 (char 0) [type=value_error]"],
        K.BAD_ARGUMENTS,
        id="other-reason",
    ),
]


@pytest.mark.parametrize(("lines", "kind"), PYDANTIC_CASES)
def test_pydantic_config_validation(lines: list[str], kind: FailureKind) -> None:
    assert classify(lines).kind is kind


def test_terminal_wrapped_mid_word_numbers() -> None:
    # https://github.com/SergiioB/intel-arc-pro-b70-inference-cookbook/issues/4 (wrapped inside "cache")
    lines = [
        "(EngineCore pid=316) ValueError: To serve at least one request with the model's max seq len (100000), "
        "(4.26 GiB KV cach",
        "e is needed, which is larger than the available KV cache memory (4.25 GiB). Based on the avai",
    ]
    failure = classify(lines)
    assert failure.numbers["kv_needed_gib"] == 4.26
    assert failure.numbers["kv_available_gib"] == 4.25


def test_strip_vllm_ascend_logger_prefix() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/8938
    line = (
        "(Worker_DP1_TP14_EP30 pid=2493) ERROR 2026-04-25 10:01:17.340 [mooncake_connector.py:246] Mooncake "
        "KVCacheSendingThread exception: Address already in use (addr='tcp://10.235.53.16:20012')"
    )
    assert strip_prefixes(line).startswith("Mooncake KVCacheSendingThread exception")
    assert classify([line]).numbers["port"] == 20012


def test_the_gates_never_hide_a_rule_a_line_would_match() -> None:
    # The gate picks candidate rules by the needles it finds; over every line of the corpus the first rule
    # that matches must be the same as when every rule is tried in table order.
    from tests.corpus import lines_of, load
    from vllm_guard.core import classify as module

    tables = module._TABLES
    for case in load():
        lines = lines_of(case.path)
        for index, line in enumerate(lines):
            every = next((r for r in tables.rules if module._match(r, line, lines, index)), None)
            gated = tables.gate.search(line)
            picked = None
            if gated is not None:
                picked = next(
                    (r for r in module._candidates(tables, line, gated) if module._match(r, line, lines, index)), None
                )
            assert picked is every, (case.name, index, line[:200])


def test_every_signature_needle_passes_the_gate() -> None:
    # The gate is a cheap pre-filter: a line that holds a signature's needle must never be dropped by it.
    from vllm_guard.core import classify as module
    from vllm_guard.core.signatures import SIGNATURES

    for signature in SIGNATURES:
        assert signature.needles, signature.name
        for needle in signature.needles:
            assert module._TABLES.gate.search(f"x {needle} y"), (signature.name, needle)


KILLED_CASES = [
    # SYNTHETIC: the shell's report when a foreground child gets SIGKILL (no vLLM line after it)
    pytest.param(["Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]", "Killed"], id="bare"),
    pytest.param(
        ["bash: line 1:  4242 Killed                  python -m vllm.entrypoints.openai.api_server"], id="bash"
    ),
    # https://github.com/PKU-YuanGroup/Video-LLaVA/issues/13 (appended to a progress bar)
    pytest.param(["Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]Killed"], id="after-progress-bar"),
]


@pytest.mark.parametrize("lines", KILLED_CASES)
def test_shell_killed(lines: list[str]) -> None:
    assert classify(lines).kind is K.HOST_OOM_KILLED


# SYNTHETIC, in the wordings of vLLM's source: Python's multiprocessing exit codes, -N for a process killed by signal N
@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # vllm/executor/multiproc_worker_utils.py WorkerMonitor.run (V0, 0.5-0.10)
        (
            "ERROR 10-15 14:51:47 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4242 died, exit code: -9",
            K.HOST_OOM_KILLED,
        ),
        (
            "ERROR 10-15 14:51:47 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4242 died, exit code: 1",
            K.ENGINE_DEAD,
        ),
        (
            "ERROR 10-15 14:51:47 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4242 died, exit code: -11",
            K.ENGINE_DEAD,
        ),
        # vllm/v1/engine/utils.py wait_for_engine_startup (0.10+)
        (
            "RuntimeError: Engine core initialization failed. See root cause above. "
            "Failed core proc(s): {'EngineCore_DP0': -9}",
            K.HOST_OOM_KILLED,
        ),
        (
            "RuntimeError: Engine core initialization failed. See root cause above. "
            "Failed core proc(s): {'EngineCore_DP0': 1}",
            K.UNKNOWN_FAILURE,
        ),
    ],
    ids=["v0-worker-minus-9", "v0-worker-exit-1", "v0-worker-segv", "v1-core-minus-9", "v1-core-exit-1"],
)
def test_a_process_killed_by_sigkill_is_read_from_its_exit_code(line: str, kind: FailureKind) -> None:
    f = classify([line])
    assert f.kind is kind
    assert f.confidence is Confidence.LOW  # a bare SIGKILL or a death: the daemon weighs it (core/evidence.py)


# SYNTHETIC, in PyTorch's allocator wording (c10/cuda/CUDACachingAllocator.cpp, torch 2.x)
def _oom(others: str, own: str | None) -> str:
    mine = f"Including non-PyTorch memory, this process has {own} memory in use. " if own else ""
    return (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 508.00 MiB. GPU 0 has a total capacity of "
        f"23.53 GiB of which 329.44 MiB is free. {others}{mine}Of the allocated memory 0 bytes is allocated by "
        "PyTorch, and 0 bytes is reserved by PyTorch but unallocated."
    )


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # another process holds nearly all of the GPU, the failing one almost nothing: the share was never there
        (_oom("Process 35156 has 22.14 GiB memory in use. ", "1.05 GiB"), K.VRAM_HELD),
        # in a container NVML's pid is not the process's own: it is listed as "Process N", and no "this process"
        (_oom("Process 35156 has 22.14 GiB memory in use. ", None), K.CUDA_OOM_RUNTIME),
        # the others hold less than half the GPU, or not twice what the failing process holds: its own use ran out
        (_oom("Process 35156 has 8.00 GiB memory in use. ", "14.00 GiB"), K.CUDA_OOM_RUNTIME),
        (
            _oom("Process 1 has 8.00 GiB memory in use. Process 2 has 5.00 GiB memory in use. ", "9.00 GiB"),
            K.CUDA_OOM_RUNTIME,
        ),
    ],
    ids=["held-by-another", "container-self", "own-use", "siblings-not-twice"],
)
def test_an_oom_whose_message_shows_the_gpu_held_by_others(line: str, kind: FailureKind) -> None:
    assert classify([line]).kind is kind


def test_an_oom_while_serving_is_the_servers_own_whoever_else_holds_memory() -> None:
    # SYNTHETIC: the same message as a held GPU's, after the server served (another stage of the same server, or a
    # neighbour started later, holds the rest): vLLM got its share at start-up, and its own peak ran out
    serving = [
        "(APIServer pid=9) INFO 05-02 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 310.2 tokens/s",
        _oom("Process 35156 has 22.14 GiB memory in use. ", "1.05 GiB"),
    ]
    assert classify(serving).kind is K.CUDA_OOM_RUNTIME
    assert classify(serving[1:]).kind is K.VRAM_HELD


# SYNTHETIC, in PyTorch's allocator wording before 2.1 (no process named; what its allocator reserved instead)
def _old_oom(reserved: str) -> str:
    return (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total capacity;"
        f" 1.02 GiB already allocated; 20.81 MiB free; {reserved} reserved in total by PyTorch) If reserved memory is"
        " >> allocated memory try setting max_split_size_mb to avoid fragmentation."
    )


@pytest.mark.parametrize(
    ("reserved", "kind"),
    [("1.30 GiB", K.VRAM_HELD), ("22.30 GiB", K.CUDA_OOM_RUNTIME), ("10.00 GiB", K.CUDA_OOM_RUNTIME)],
    ids=["others-hold-most", "its-own-use", "others-under-half"],
)
def test_an_older_torchs_oom_reads_the_held_memory_from_what_its_allocator_reserved(
    reserved: str, kind: FailureKind
) -> None:
    assert classify([_old_oom(reserved)]).kind is kind
    # torch_npu words its allocator's message as PyTorch did before 2.1
    npu = _old_oom(reserved).replace("CUDA out of memory", "NPU out of memory").replace("(GPU 0;", "(NPU 0;")
    assert classify([npu]).kind is kind


# Quoted: https://github.com/vllm-project/vllm/issues/2140 (Qwen2-7B in fp32 on a 22 GB 2080 Ti) and
# https://github.com/vllm-project/vllm/issues/188 (PyTorch before 2.1), both while loading the weights;
# https://github.com/vllm-project/vllm/issues/3407 (an AWQ 34B model, a long request while serving)
_FILLED_BY_WEIGHTS = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 518.00 MiB. GPU 0 has a total capacty of "
    "21.67 GiB of which 4.06 MiB is free. Process 2417585 has 21.65 GiB memory in use. Of the allocated memory 21.32 GiB"
    " is allocated by PyTorch, and 1018.00 KiB is reserved by PyTorch but unallocated. If reserved but unallocated "
    "memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and"
    " PYTORCH_CUDA_ALLOC_CONF"
)
_FILLED_BY_WEIGHTS_OLD = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB (GPU 0; 10.73 GiB total capacity; "
    "9.85 GiB already allocated; 46.44 MiB free; 9.86 GiB reserved in total by PyTorch) If reserved memory is >> "
    "allocated memory try setting max_split_size_mb to avoid fragmentation."
)
_WITH_HOLES = (
    "future: <Future finished exception=OutOfMemoryError('CUDA out of memory. Tried to allocate 96.00 MiB. GPU 0 has a"
    " total capacty of 14.54 GiB of which 60.94 MiB is free. Process 868956 has 14.47 GiB memory in use. Of the "
    "allocated memory 12.85 GiB is allocated by PyTorch, and 391.40 MiB is reserved by PyTorch but unallocated. If "
    "reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation"
    " for Memory Management and PYTORCH_CUDA_ALLOC_CONF')>"
)


@pytest.mark.parametrize("line", [_FILLED_BY_WEIGHTS, _FILLED_BY_WEIGHTS_OLD], ids=["torch-2.1-on", "before-2.1"])
def test_an_unplaced_oom_whose_allocator_never_freed_is_read_as_loading(line: str) -> None:
    # nothing but the OOM: what PyTorch allocated fills the GPU and its reserve holds no freed holes
    f = classify([line])
    assert (f.kind, f.phase, f.basis, f.confidence) == (K.CUDA_OOM_LOAD, Phase.LOAD, Basis.ALLOCATOR, Confidence.LOW)


def test_the_allocators_figures_yield_to_what_places_an_oom() -> None:
    # a serving OOM leaves holes in the reserve: still unplaced
    holes = classify([_WITH_HOLES])
    assert (holes.kind, holes.phase) == (K.CUDA_OOM_RUNTIME, Phase.UNKNOWN)
    # the same figures after the engine came up: the milestone places it, not the figures
    up = "INFO 03-15 10:00:00 api_server.py:200] Started server process [1234]"
    served = classify(
        [up, "INFO 03-15 10:00:01 metrics.py:300] Avg prompt throughput: 10.0 tokens/s", _FILLED_BY_WEIGHTS]
    )
    assert served.basis is not Basis.ALLOCATOR
    # free space of a large segment or more, or an allocation that fills less than the GPU: no reading
    assert classify([_FILLED_BY_WEIGHTS.replace("1018.00 KiB", "24.00 MiB")]).phase is Phase.UNKNOWN
    assert classify([_FILLED_BY_WEIGHTS.replace("21.32 GiB is allocated", "12.00 GiB is allocated")]).phase is (
        Phase.UNKNOWN
    )
    # another process holding the GPU is read first
    assert classify([_oom("Process 35156 has 22.14 GiB memory in use. ", "1.05 GiB")]).kind is K.VRAM_HELD


def test_a_module_being_built_places_an_oom_in_loading() -> None:
    # a traceback cut above vLLM's load_model: the innermost frames are a layer's constructor allocating its weight
    lines = [
        '  File "/env/lib/python3.10/site-packages/vllm/model_executor/layers/vocab_parallel_embedding.py", line 76, '
        "in __init__",
        "    torch.empty(self.num_embeddings_per_partition,",
        '  File "/env/lib/python3.10/site-packages/torch/utils/_device.py", line 77, in __torch_function__',
        "    return func(*args, **kwargs)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 508.00 MiB. GPU 0 has a total capacity of "
        "23.53 GiB of which 329.44 MiB is free. Of the allocated memory 21.9 GiB is allocated by PyTorch.",
    ]
    f = classify(lines)
    assert (f.kind, f.phase) == (K.CUDA_OOM_LOAD, Phase.LOAD)
    # an __init__ outside vLLM's model code says nothing (without torch's device context, which vLLM's loaders build
    # the model in: that frame alone places the loading)
    other = [line.replace("vllm/model_executor/layers", "mypkg") for line in lines[:2] + lines[4:]]
    assert classify(other).phase is not Phase.LOAD
    assert classify([*lines[2:4], lines[4]]).phase is Phase.LOAD


def test_killed_words_in_benign_lines() -> None:
    lines = [
        "INFO 11-05 04:16:48 multiproc_worker_utils.py:124] Killing local vLLM worker processes",
        "INFO 05-01 10:00:00 [core.py:1] The engine was not killed",
    ]
    assert classify(lines).kind is K.NONE


def test_rocm_memory_access_fault() -> None:
    # SYNTHETIC in ROCm's wording
    line = "Memory access fault by GPU node-2 (Agent handle: 0x55d0) on address 0x7f00. Reason: Page not present."
    assert classify([line]).kind is K.GPU_DRIVER_ERROR


def test_vram_held_hint_names_the_fraction_that_fits() -> None:
    # https://github.com/vllm-project/vllm/issues/20305
    line = (
        "ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory "
        "utilization (0.95, 45.01 GiB)."
    )
    assert "below 0.66" in classify([line]).hint


SYSTEMD_CASES = [
    # SYNTHETIC, in systemd 252's wording: a start that timed out, then SIGKILL after the stop timeout
    pytest.param(
        [
            "vllm-qwen.service: start operation timed out. Terminating.",
            "vllm-qwen.service: State 'stop-sigterm' timed out. Killing.",
            "vllm-qwen.service: Killing process 4242 (python3) with signal SIGKILL.",
            "vllm-qwen.service: Main process exited, code=killed, status=9/KILL",
            "vllm-qwen.service: Failed with result 'timeout'.",
        ],
        K.UNKNOWN_FAILURE,
        id="start-timeout",
    ),
    pytest.param(
        [
            "vllm-qwen.service: Main process exited, code=exited, status=1/FAILURE",
            "vllm-qwen.service: Failed with result 'exit-code'.",
        ],
        K.UNKNOWN_FAILURE,
        id="exit-code",
    ),
    pytest.param(
        [
            "vllm-qwen.service: Main process exited, code=killed, status=9/KILL",
            "vllm-qwen.service: Failed with result 'signal'.",
        ],
        K.HOST_OOM_KILLED,
        id="memory-cgroup-kill-without-memorymax",  # SANDBOX.md: what a cgroup v1 limit kill looks like
    ),
    pytest.param(
        ["vllm-qwen.service: Main process exited, code=killed, status=7/BUS"],
        K.SHM_EXHAUSTED,
        id="sigbus",
    ),
    pytest.param(
        ["vllm-qwen.service: Main process exited, code=dumped, status=11/SEGV"],
        K.UNKNOWN_FAILURE,
        id="segv",
    ),
]


@pytest.mark.parametrize(("lines", "kind"), SYSTEMD_CASES)
def test_systemd_lines(lines: list[str], kind: FailureKind) -> None:
    failure = classify(lines)
    assert failure.kind is kind


def test_info_lines_are_skipped_but_not_a_joined_error() -> None:
    # SYNTHETIC: an INFO line with a failure's words stays benign; a paste that joined an error onto
    # an INFO line is still read.
    assert classify(["INFO 05-01 10:00:00 [worker.py:1] Memory cgroup out of memory: nothing to see"]).kind is K.NONE
    joined = f"INFO 05-01 10:00:00 [core.py:1] Waiting ERROR 05-01 10:00:01 [core.py:2] {KV_V1}"
    assert classify([joined]).kind is K.KV_CACHE_INSUFFICIENT


def test_logged_prompts_are_not_failures() -> None:
    # SYNTHETIC, in vLLM's request-logging format: a user asks about an error they saw
    line = (
        "(APIServer pid=1) INFO 05-01 10:00:00 [logger.py:43] Received request chatcmpl-1: prompt: 'Why do I get "
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB?', params: SamplingParams(n=1)"
    )
    assert classify([line]).kind is K.NONE


def test_systemd_oom_kill_result_is_final() -> None:
    # systemd says the kernel killed it for memory: that beats a CUDA OOM line earlier in the log
    failure = classify([OOM], SystemdOutcome(result="oom-kill", signal="KILL"))
    assert failure.kind is K.HOST_OOM_KILLED
    assert failure.numbers["signal"] == 9


@pytest.mark.parametrize(
    "line",
    [
        # SYNTHETIC: recovered OOMs logged as warnings (wordings used by libraries that retry)
        "WARNING 05-01 10:00:00 [x.py:1] CUDA out of memory during resize; falling back to CPU",
        "WARNING 05-01 10:00:00 [x.py:1] CUDA out of memory. Reducing batch size and retrying.",
    ],
)
def test_recovered_oom_warnings(line: str) -> None:
    assert classify([line]).kind is K.NONE


def test_quantization_needs_a_newer_gpu() -> None:
    # SYNTHETIC, in vLLM's config check wording (fp8 on a Turing GPU)
    line = (
        "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 80. "
        "Current capability: 75."
    )
    assert classify([line]).kind is K.BAD_ARGUMENTS


HOST_CASES = [
    # SYNTHETIC, in the wordings of kubectl describe, docker ps and kernels before 4.19
    pytest.param(["      Reason:       OOMKilled", "      Exit Code:    137"], {}, id="kubernetes"),
    pytest.param(["vllm-openai   Exited (137) 5 seconds ago"], {}, id="docker-ps"),
    pytest.param(
        ["kernel: Out of memory: Kill process 31337 (python3) score 912 or sacrifice child"],
        {"killed_pid": 31337},
        id="old-kernel",
    ),
]


@pytest.mark.parametrize(("lines", "numbers"), HOST_CASES)
def test_host_oom_wordings(lines: list[str], numbers: dict[str, int]) -> None:
    failure = classify(lines)
    assert failure.kind is K.HOST_OOM_KILLED
    for key, value in numbers.items():
        assert failure.numbers[key] == value


def test_evidence_keeps_each_text_once() -> None:
    # https://github.com/vllm-project/vllm/issues/14452: every worker prints the same sampler OOM
    text = (
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try "
        "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine."
    )
    lines = [
        f"(VllmWorker rank={r} pid={100 + r}) ERROR 03-16 06:12:38 [multiproc_executor.py:375] {text}" for r in range(8)
    ]
    assert classify(lines).evidence == (text,)


# Real vllm-cpu 0.32 runs under systemd, captured here (tests/data/logs/none/vllm-cpu-*.log): a start, chat
# requests and a person's `systemctl stop` / restart / Ctrl-C. vLLM prints EngineDeadError tracebacks for
# the streams still in flight when it is stopped; none of it is a failure.
CAPTURED_STOPS = [
    "vllm-cpu-systemctl-stop-after-request.log",
    "vllm-cpu-systemctl-stop-after-request-journal-short.log",
    "vllm-cpu-systemctl-stop-during-streaming-requests.log",
    "vllm-cpu-systemctl-stop-spurious-enginedeaderror.log",
    "vllm-cpu-systemctl-restart-by-person.log",
    "vllm-cpu-foreground-ctrl-c-after-request.log",
    "vllm-cpu-killmode-mixed-clean-stop.log",
    "vllm-cpu-sigterm-during-startup-stop-timeout.log",
]


@pytest.mark.parametrize("name", CAPTURED_STOPS)
def test_a_real_stop_by_a_person_is_no_failure(name: str) -> None:
    from tests.corpus import CORPUS, lines_of

    lines = lines_of(CORPUS / "none" / name)
    assert classify(lines).kind is K.NONE
    # with systemd's word on how it ended (a stop: success, or the stop timeout's SIGKILL)
    assert classify(lines, SystemdOutcome(result="success", exit_status=0)).kind is K.NONE


def test_the_streams_cut_by_a_stop_do_print_engine_dead_errors() -> None:
    # the capture shows what the stop suppresses: without systemd's "Stopping" line it would read as dead
    from tests.corpus import CORPUS, lines_of

    lines = lines_of(CORPUS / "none" / "vllm-cpu-systemctl-stop-during-streaming-requests.log")
    assert any("EngineDeadError" in line for line in lines)
    cut = [line for line in lines if "Stopping " not in line and "[shutdown]" not in line]
    assert classify(cut).kind is not K.NONE


# The mistakes of a first start, as systemd 252 and Python print them (SYNTHETIC lines in their real
# wordings: systemd's exec_child, Python's import system): no restart fixes them, and the hint says what does.
SETUP_CASES = [
    pytest.param(
        [
            "vllm-qwen.service: Failed to locate executable /opt/vllm/bin/python: No such file or directory",
            "vllm-qwen.service: Main process exited, code=exited, status=203/EXEC",
        ],
        "ExecStart=",
        id="exec",
    ),
    pytest.param(
        [
            "vllm-qwen.service: Failed to determine user credentials: No such process",
            "vllm-qwen.service: Failed at step USER spawning /opt/vllm/bin/python: No such process",
            "vllm-qwen.service: Main process exited, code=exited, status=217/USER",
        ],
        "User=",
        id="user",
    ),
    pytest.param(
        [
            "vllm-qwen.service: Failed to determine group credentials: No such process",
            "vllm-qwen.service: Failed at step GROUP spawning /opt/vllm/bin/python: No such process",
            "vllm-qwen.service: Main process exited, code=exited, status=216/GROUP",
        ],
        "Group=",
        id="group",
    ),
    pytest.param(
        [
            "vllm-qwen.service: Changing to the requested working directory failed: No such file or directory",
            "vllm-qwen.service: Failed at step CHDIR spawning /opt/vllm/bin/python: No such file or directory",
            "vllm-qwen.service: Main process exited, code=exited, status=200/CHDIR",
        ],
        "WorkingDirectory=",
        id="chdir",
    ),
    pytest.param(
        [
            "vllm-qwen.service: Failed to load environment files: No such file or directory",
            "vllm-qwen.service: Failed to spawn 'start' task: No such file or directory",
        ],
        "vllm-guard install",
        id="env-file",
    ),
    pytest.param(
        [
            "/usr/bin/python3: Error while finding module specification for 'vllm.entrypoints.openai.api_server' "
            "(ModuleNotFoundError: No module named 'vllm')"
        ],
        "not installed",
        id="no-vllm",
    ),
]


@pytest.mark.parametrize(("lines", "says"), SETUP_CASES)
def test_set_up_mistakes_are_named_and_never_retried(lines: list[str], says: str) -> None:
    failure = classify(lines)
    assert failure.kind is K.BAD_ARGUMENTS and failure.kind.is_permanent
    assert says in failure.hint
    assert "vLLM rejected an argument" not in failure.hint


def test_a_missing_vllm_submodule_is_not_a_missing_vllm() -> None:
    failure = classify(["ModuleNotFoundError: No module named 'vllm.vllm_flash_attn.layers'"])
    assert "not installed" not in failure.hint


def test_a_dump_of_several_starts_tells_the_latest_failure() -> None:
    # `journalctl -u vllm-qwen` over a day: an old KV failure, a restart, then the port taken
    lines = [
        "Started vllm-qwen.service - vLLM server.",
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
        "stored in KV cache (4096). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`",
        "vllm-qwen.service: Main process exited, code=exited, status=1/FAILURE",
        "Started vllm-qwen.service - vLLM server.",
        "ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): address already in use",
    ]
    failure = classify(lines)
    assert failure.kind is K.PORT_IN_USE
    assert failure.numbers["port"] == 8000
    assert classify(lines[:3]).kind is K.KV_CACHE_INSUFFICIENT


def test_the_units_own_probe_that_cannot_read_the_config_is_named() -> None:
    # systemd 252's words when ExecStartPost= exits 78 (EX_CONFIG, vllm-guard's exit for a config it cannot use)
    lines = [
        "vllm-guard: error[invalid-config]: cannot read /etc/vllm-guard/config.toml: Permission denied",
        "vllm-qwen.service: Control process exited, code=exited, status=78/CONFIG",
        "vllm-qwen.service: Failed with result 'exit-code'.",
    ]
    failure = classify(lines)
    assert failure.kind is K.BAD_ARGUMENTS
    assert "readable by that user" in failure.hint


# --- texts met on logs of 2026 (measurement 13, bench/RESULTS-classify.md) ------------------------


def test_a_hybrid_models_state_blocks_below_max_num_seqs_is_a_kv_cache_short_of_sequences() -> None:
    # https://github.com/vllm-project/recipes/pull/551 (Qwen3.6-27B-FP8 on one H100)
    line = (
        "ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (856). Each decode sequence requires "
        "one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 856 or "
        "increase gpu_memory_utilization."
    )
    f = classify([line])
    assert f.kind is K.KV_CACHE_INSUFFICIENT and f.confidence is Confidence.HIGH
    assert f.numbers["max_num_seqs"] == 1024 and f.numbers["max_num_seqs_fit"] == 856
    assert "--max-num-seqs to 856" in f.hint
    # vLLM's INFO line of the releases that capped the capture sizes instead is no failure (SYNTHETIC wording)
    capped = "INFO 03-20 10:00:00 [gpu_model_runner.py:1] Capping cudagraph capture sizes from max 256 to 136 to fit Mamba cache blocks"
    assert classify([capped]).kind is K.NONE


def test_vllms_own_dev_shm_check_names_a_small_dev_shm() -> None:
    # https://github.com/ppc64le/build-scripts/pull/8660 (vLLM 0.27.0)
    line = (
        "RuntimeError: Insufficient space in /dev/shm: 160 MiB required, 64 MiB free. Increase /dev/shm (e.g. "
        "--shm-size or --ipc=host)."
    )
    assert classify([line]).kind is K.SHM_EXHAUSTED


def test_memory_no_process_list_accounts_for_is_held_by_others() -> None:
    # https://github.com/ai-dynamo/dynamo/issues/1492: NVML listed no other process (another container), but
    # 79.20 - 0.05 - 2.46 GiB were in use outside the failing process
    line = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of "
        "79.20 GiB of which 48.62 MiB is free. Including non-PyTorch memory, this process has 2.46 GiB memory in use. "
        "Of the allocated memory 1.15 GiB is allocated by PyTorch, and 13.45 MiB is reserved by PyTorch but "
        "unallocated."
    )
    assert classify([line]).kind is K.VRAM_HELD
    # the process itself holding the card is an OOM of its own (SYNTHETIC: the same message, 76 GiB its own)
    own = line.replace("this process has 2.46 GiB", "this process has 76.46 GiB")
    assert classify(["Loading safetensors checkpoint shards:  13% Completed | 2/15", own]).kind is K.CUDA_OOM_LOAD


def _kv_allocation_oom(message: str) -> list[str]:
    # V0's KV-cache allocation, after the cache was sized (SYNTHETIC frames in the shape vLLM 0.7 prints them)
    return [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/vllm/worker/worker.py", line 312, in _init_cache_engine',
        "    CacheEngine(self.cache_config, self.model_config,",
        '  File "/usr/lib/python3/site-packages/vllm/worker/cache_engine.py", line 103, in _allocate_kv_cache',
        "    layer_kv_cache = torch.zeros(alloc_shape,",
        message,
    ]


KV_ALLOC_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 778.00 MiB. GPU 0 has a total capacity of 44.34 GiB"
    " of which 159.50 MiB is free. Process 358947 has 16.64 GiB memory in use. Including non-PyTorch memory, this"
    " process has 27.53 GiB memory in use. Of the allocated memory 27.17 GiB is allocated by PyTorch, and 47.18 MiB is"
    " reserved by PyTorch but unallocated."
)


def test_an_oom_allocating_a_sized_kv_cache_beside_other_processes_is_memory_they_hold() -> None:
    # vLLM sized the cache as its share of the whole card less its own use; another process held 16.64 of 44.34 GiB
    # (the message of https://github.com/ecgbeald/fyp/blob/40c55db59579480132b294416048bf2cfffa2ae2/vllm.ipynb)
    assert classify(_kv_allocation_oom(KV_ALLOC_OOM)).kind is K.VRAM_HELD
    # no "this process" line (a container): the largest process listed is the failing one
    container = KV_ALLOC_OOM.replace("Including non-PyTorch memory, this process has", "Process 7 has")
    assert classify(_kv_allocation_oom(container)).kind is K.VRAM_HELD
    # others within the share vLLM leaves (a desktop's 300 MiB): its own OOM
    desktop = KV_ALLOC_OOM.replace("Process 358947 has 16.64 GiB", "Process 358947 has 300.00 MiB")
    assert classify(_kv_allocation_oom(desktop)).kind is K.CUDA_OOM_PROFILE
    # the same message in the profiling run (the cache not sized yet): the profile's OOM
    profile = [
        line.replace("_allocate_kv_cache", "profile_run").replace(
            "_init_cache_engine", "determine_num_available_blocks"
        )
        for line in _kv_allocation_oom(KV_ALLOC_OOM)
    ]
    assert classify(profile).kind is K.CUDA_OOM_PROFILE
    assert "below 0.00" not in classify(_kv_allocation_oom(KV_ALLOC_OOM)).hint


@pytest.mark.parametrize(
    ("frames", "kind"),
    [
        # the dtype check raises only "Bfloat16 is only supported on GPUs with compute capability of at least 8.0"
        (
            [
                '  File "/usr/lib/python3/site-packages/vllm/worker/worker.py", line 71, in init_model',
                "    _check_if_gpu_supports_dtype(self.model_config.dtype)",
                '  File "/usr/lib/python3/site-packages/vllm/worker/worker.py", line 231, in _check_if_gpu_supports_dtype',
            ],
            K.BAD_ARGUMENTS,
        ),
        # vLLM's NCCL binding raises "NCCL error: ..." for the call that failed
        (
            [
                '  File "/x/vllm/distributed/device_communicators/pynccl.py", line 99, in __init__',
                "    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(",
                '  File "/x/vllm/distributed/device_communicators/pynccl_wrapper.py", line 244, in ncclCommInitRank',
                '    self.NCCL_CHECK(self._funcs["ncclCommInitRank"](ctypes.byref(comm),',
            ],
            K.DISTRIBUTED_ERROR,
        ),
    ],
    ids=["dtype-check", "pynccl"],
)
def test_a_traceback_cut_in_a_function_that_raises_one_kind(frames: list[str], kind: FailureKind) -> None:
    # the paste stops before the exception line (a search excerpt, a truncated issue body)
    assert classify(["Traceback (most recent call last):", *frames]).kind is kind


@pytest.mark.parametrize(
    "line",
    [
        # clap's errors (Rust's argument parser; vLLM's Rust frontend, 0.22), then "For more information, try '--help'."
        "error: invalid value '{\"api_key\": [\"k\"]}' for '--args-json <JSON>': The following arguments are not"
        " implemented in Rust frontend yet:",
        "error: unexpected argument '--max-modle-len' found",
        "error: the following required arguments were not provided:",
        "error: a value is required for '--port <PORT>' but none was supplied",
    ],
)
def test_a_rust_programs_argument_errors_are_bad_arguments(line: str) -> None:
    assert classify(["(APIServer pid=1) INFO 06-01 21:35:56 [utils.py:370] Launching Rust frontend", line]).kind is (
        K.BAD_ARGUMENTS
    )


def test_ipythons_numbered_source_lines_are_code_not_the_log() -> None:
    # transformers' tokenizer loader, as a notebook shows it: the string in the code around the frame is not a failure
    lines = [
        "OSError                                   Traceback (most recent call last)",
        "File ~/env/lib/python3.10/site-packages/vllm/transformers_utils/tokenizer.py:78, in get_tokenizer(name)",
        "     76 except ValueError as e:",
        '     81     or "requires you to execute the tokenizer file" in str(e))):',
        "---> 82     raise e",
        "OSError: Can't load tokenizer for '../Model/merged'. Make sure that '../Model/merged' is the correct path to a"
        " directory containing all relevant files for a LlamaTokenizerFast tokenizer.",
    ]
    assert classify(lines).kind is K.MODEL_LOAD_ERROR


def test_sleep_modes_memory_pool_under_expandable_segments_is_a_setting_to_change() -> None:
    # vllm/device_allocator/cumem.py (CuMemAllocator.__init__) asserts it; a launcher may wrap it in its own MemoryError
    lines = [
        "AssertionError: Expandable segments are not compatible with memory pool. Please track"
        " https://github.com/pytorch/pytorch/issues/147851 for the latest updates.",
        "MemoryError: Unsloth: Your GPU ran out of memory loading vLLM with standby mode enabled.",
    ]
    failure = classify(lines)
    assert failure.kind is K.BAD_ARGUMENTS
    assert "expandable_segments" in failure.hint


def test_pytorch_2_1s_capacty_names_the_gpu_held_by_others_in_a_notebook() -> None:
    # PyTorch 2.1 wrote "total capacty"; IPython names the exception in a header before the frames
    lines = [
        "OutOfMemoryError                          Traceback (most recent call last)",
        "File ~/env/lib/python3.10/site-packages/vllm/model_executor/model_loader.py:86, in get_model(model_config)",
        "OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total capacty of 21.99 GiB of"
        " which 198.12 MiB is free. Process 2770 has 17.75 GiB memory in use. Including non-PyTorch memory, this"
        " process has 4.03 GiB memory in use.",
    ]
    assert classify(lines).kind is K.VRAM_HELD


def test_an_oom_moving_a_built_model_to_the_device_is_a_load_oom() -> None:
    # torch.nn.Module.to (and .cuda(), .half()) go through Module._apply: a launcher that builds the model on the CPU
    # and then moves it (https://github.com/intel/ipex-llm/issues/12584, the XPU's older message)
    lines = [
        '  File "/usr/local/lib/python3.11/dist-packages/torch/nn/modules/module.py", line 810, in _apply',
        "    module._apply(fn)",
        '  File "/usr/local/lib/python3.11/dist-packages/torch/nn/modules/module.py", line 1158, in convert',
        "    return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)",
        "RuntimeError: XPU out of memory. Tried to allocate 1.02 GiB (GPU 0; 15.56 GiB total capacity; 0 bytes already"
        " allocated; 0 bytes reserved in total by PyTorch)",
    ]
    failure = classify(lines)
    assert (failure.kind, failure.phase) == (K.CUDA_OOM_LOAD, Phase.LOAD)


def test_v0s_older_graph_capture_wording_places_an_oom() -> None:
    # vLLM 0.2.5-0.6.3 (vllm/worker/model_runner.py, capture_model) logged "Capturing the model for CUDA graphs.";
    # another Ray worker's line after the OOM places it (https://github.com/QwenLM/Qwen/issues/819)
    lines = [
        "RuntimeError: CUDA error: out of memory",
        "(RayWorkerVllm pid=74362) INFO 12-18 21:44:36 model_runner.py:394] Capturing the model for CUDA graphs. This"
        " may lead to unexpected consequences if the model is not static.",
    ]
    failure = classify(lines)
    assert (failure.kind, failure.phase) == (K.CUDA_OOM_PROFILE, Phase.PROFILE)


def test_a_notebooks_traceback_header_names_the_exception() -> None:
    # IPython prints "NameError    Traceback (most recent call last)" and the frames after it; a paste may stop there
    lines = [
        "INFO 03-16 00:00:52 llm_engine.py:436] init engine (profile, create kv cache, warmup model) took 10.52 seconds",
        "---------------------------------------------------------------------------",
        "UnboundLocalError                         Traceback (most recent call last)",
        "Cell In[1], line 10",
        "---> 10 model, tokenizer = FastLanguageModel.from_pretrained(",
    ]
    failure = classify(lines)
    assert failure.kind is K.UNKNOWN_FAILURE
    # the frames after the header place a device OOM, JupyterLab's links to their files included
    oom = [
        "OutOfMemoryError                          Traceback (most recent call last)",
        "File [~/env/lib/python3.11/site-packages/vllm/worker/cache_engine.py:64](http://host:8888/lab/tree/env/lib/"
        "python3.11/site-packages/vllm/worker/cache_engine.py#line=63), in CacheEngine._allocate_kv_cache(self, n, d)",
        "---> 64         torch.empty(kv_cache_shape,",
        "OutOfMemoryError: CUDA out of memory. Tried to allocate 642.00 MiB. GPU",
    ]
    assert classify(oom).phase is Phase.PROFILE


def test_a_ray_tasks_exception_line_is_a_failure_whichever_memory_it_names() -> None:
    # Ray re-raises a remote task's exception as "RayTaskError(<its class>)"; an OutOfMemoryError there is
    # PyTorch's (device) or Ray's memory monitor's (host): the line alone says neither
    head = "ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.actor_rollout_update_weights() (pid=4862)"
    alone = classify([head])
    assert (alone.kind, alone.confidence) == (K.UNKNOWN_FAILURE, Confidence.LOW)
    device = classify([head, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 742.00 MiB."])
    assert device.kind in (K.CUDA_OOM_LOAD, K.CUDA_OOM_PROFILE, K.CUDA_OOM_RUNTIME)
    host = classify(
        [
            head.replace("RayTaskError(OutOfMemoryError)", "OutOfMemoryError").split(" ray::")[0]
            + " Task was killed due to the node running low on memory."
        ]
    )
    assert host.kind is K.HOST_OOM_KILLED
    other = classify(["ray.exceptions.RayTaskError(ValueError): ray::RayWorkerWrapper.execute_method() (pid=1)"])
    assert other.kind is K.UNKNOWN_FAILURE


def test_a_cuda_error_in_the_custom_all_reduce_is_a_distributed_error() -> None:
    # https://github.com/vllm-project/vllm/issues/52457 (0.27.1, TP 4): the error vLLM's CUDACHECK reports from
    # csrc/custom_all_reduce.cuh is the all-reduce's own, whatever CUDA calls it
    lines = [
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'an illegal memory access was encountered'",
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
    ]
    assert classify(lines).kind is K.DISTRIBUTED_ERROR
    assert classify(lines[1:]).kind is K.GPU_DRIVER_ERROR  # elsewhere it stays the device's


def test_a_toolkit_older_than_the_gpu_names_a_crash_that_says_nothing_else() -> None:
    # https://github.com/vllm-project/vllm/issues/50705: FlashInfer's check before its JIT, then a cut traceback
    lines = [
        "(EngineCore pid=4140) Failed to get device capability: SM 12.x requires CUDA >= 12.9.",
        '(EngineCore pid=4140) ERROR 08-03 17:46:16 [core.py:1330]   File "/workspace/venv/lib/python3.12/'
        'site-packages/flashinfer/prefill.py", line 447, in get_batch_prefill_module',
        "(EngineCore pid=4140) ERROR 08-03 17:46:16 [core.py:1330]     module = gen_batch_prefill_module(backend,"
        " *args).build_and_load()",
    ]
    f = classify(lines)
    assert f.kind is K.GPU_DRIVER_ERROR and f.confidence is Confidence.MEDIUM
    assert classify(lines[1:]).kind is K.UNKNOWN_FAILURE  # without the clue: nothing names it


def test_a_line_holding_two_texts_is_read_by_its_more_exact_one() -> None:
    # https://github.com/runpod-workers/worker-vllm/issues/279: a JSON log record holds pydantic's header and the
    # message under it on one line; the header alone would say bad arguments
    line = (
        '{"requestId": null, "message": "Worker startup failed: 1 validation error for ModelConfig\\n  Value error, '
        "Model architectures ['Qwen3_5MoeForConditionalGeneration'] are not supported for now."
    )
    assert classify([line]).kind is K.MODEL_LOAD_ERROR
    # the header with a bare value error stays bad arguments (SYNTHETIC)
    assert classify(["1 validation error for ModelConfig\\n  Value error, max_model_len is 0."]).kind is K.BAD_ARGUMENTS


def test_features_vllm_does_not_run_together_are_bad_arguments() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/14666
    spec = (
        "NotImplementedError: Speculative Decoding with draft models or parallel drafting does not support M-RoPE yet"
    )
    assert classify([spec]).kind is K.BAD_ARGUMENTS
    # https://github.com/niushuai1991/qwen3.6-27b (docs/2026-07-24-fault-mtp-k4-cudagraph-crash.md)
    backend = (
        "ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason: "
        "['kv_cache_dtype not supported']"
    )
    f = classify([backend])
    assert f.kind is K.BAD_ARGUMENTS and f.confidence is Confidence.HIGH and "attention backend" in f.hint
    # vLLM's own ERROR line that it cannot use FlashAttention 2 on the GPU, then goes on, is no failure
    fa = "ERROR 08-13 17:50:27 [fa_utils.py:273] Cannot use FA version 2 is not supported due to FA2 is only supported"
    assert classify([fa, "INFO:     Application startup complete."]).kind is K.NONE


def test_ray_waiting_for_more_gpus_than_there_are_is_the_clusters_until_it_serves() -> None:
    # https://github.com/ThomasVuNguyen/agent-distillation (vllm.log): TP 4 on a smaller node, Ray waits for ever
    warn = (
        "WARNING 05-26 18:53:53 [ray_utils.py:342] The number of required GPUs exceeds the total number of available"
        " GPUs in the placement group."
    )
    wait = "INFO 05-26 18:54:03 [ray_utils.py:233] Waiting for creating a placement group of specs for 10 seconds."
    assert classify([warn, wait]).kind is K.DISTRIBUTED_ERROR
    # a cluster that gains the GPUs goes on to serve (SYNTHETIC)
    assert classify([warn, wait, "INFO:     Application startup complete."]).kind is K.NONE


def test_cuda_refusing_an_operation_is_the_platforms() -> None:
    # https://github.com/qBraid/evolving-quantum-compilers (vllm-server.log): cudaErrorNotPermitted in a container
    assert classify(["torch.AcceleratorError: CUDA error: operation not permitted"]).kind is K.GPU_DRIVER_ERROR
    # a capture that called something it must not is vLLM's (or a kernel's) bug, not the platform (SYNTHETIC)
    capture = "RuntimeError: CUDA error: operation not permitted when stream is capturing"
    assert classify([capture]).kind is not K.GPU_DRIVER_ERROR


def test_the_body_of_the_allocators_message_is_a_device_oom() -> None:
    # https://github.com/vllm-project/vllm/pull/57595: a paste that kept the message without its first words
    lines = [
        "    Tried to allocate 136.00 MiB. GPU 0 has a total capacity of 22.36 GiB of",
        "    which 120.88 MiB is free. ... If this problem persists, try setting",
    ]
    f = classify(lines)
    assert f.kind in (K.CUDA_OOM_LOAD, K.CUDA_OOM_PROFILE, K.CUDA_OOM_RUNTIME)
    assert f.numbers["alloc_bytes"] == 136 * 2**20


def test_the_nvidia_modules_no_memory_while_loading_a_drafter_is_a_load_oom() -> None:
    # https://github.com/eugr/spark-vllm-docker/issues/336 (two GB10, a DeepSeek-V4-Flash MTP drafter)
    lines = [
        "18:03:00  (Worker_TP0) INFO [gpu_model_runner.py:5332] Loading drafter model...",
        "18:03:03  kernel: NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY]",
    ]
    assert classify(lines).kind is K.CUDA_OOM_LOAD
    # the kernel's OOM killer after it names the host's memory (a DGX Spark post-mortem, SYNTHETIC pids)
    killer = "kernel: VLLM::Worker_TP invoked oom-killer: gfp_mask=0x140dca, order=0, oom_score_adj=0"
    assert classify([*lines, killer]).kind is K.HOST_OOM_KILLED


def test_a_start_up_hook_that_python_goes_on_without_is_no_failure() -> None:
    # site.py's report of a sitecustomize that failed to import (a committed vLLM 0.30 log): Python goes on
    lines = [
        "Error in sitecustomize; set PYTHONVERBOSE for traceback:",
        "ModuleNotFoundError: No module named 'wrapt'",
        "INFO:     Application startup complete.",
    ]
    assert classify(lines).kind is K.NONE
    # the same exception pasted alone is a failure the paste cut (SYNTHETIC)
    assert classify(lines[1:2]).kind is K.UNKNOWN_FAILURE


def test_a_feature_that_requires_another_option_is_bad_arguments() -> None:
    # https://github.com/getainode/ainode/pull/124 (vLLM 0.29.0)
    assert classify(["NotImplementedError: Qwen4Exp QSA requires a BF16 main KV cache"]).kind is K.BAD_ARGUMENTS


def test_the_sleep_mode_allocators_cuda_error_is_a_device_oom() -> None:
    # https://github.com/WaroonRagwongsiri/SuperAi-SS6-Level2-Hack4/blob/b92373c7209fbf0201f178d8a566cddbcc894204/llm.log
    # (vLLM 0.22.0 with --enable-sleep-mode: a wake_up after start-up)
    lines = [
        "(APIServer pid=47967) INFO:     Application startup complete.",
        "(APIServer pid=47967) INFO 06-02 14:31:00 [api_router.py:39] wake up the engine with tags: None",
        "CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:139",
        "(EngineCore pid=48200) ERROR 06-02 14:31:01 [core.py:1365] Invocation of wake_up method failed",
    ]
    assert classify(lines).kind is K.CUDA_OOM_RUNTIME
    # another driver error printed the same way is not an OOM (SYNTHETIC: cuGetErrorString's text for another code)
    other = "CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:139"
    assert classify([*lines[:2], other]).kind is not K.CUDA_OOM_RUNTIME


def test_a_quantization_flag_the_checkpoint_does_not_carry_is_bad_arguments() -> None:
    # https://github.com/edward-lcl/feedback-distillation/blob/2be72c377f1e7dac364b4c80737ec04588890abd/vllm_error.log
    # (vLLM 0.7.3, google/gemma-2-27b-it with quantization='awq')
    lines = [
        '  File "/home/skapoor/.local/lib/python3.10/site-packages/vllm/model_executor/model_loader/weight_utils.py",'
        " line 193, in get_quant_config",
        "    raise ValueError(",
        "ValueError: Cannot find the config file for awq",
    ]
    f = classify(lines)
    assert f.kind is K.BAD_ARGUMENTS and "--quantization" in f.hint


def test_the_nvidia_container_hook_refusing_a_container_is_a_driver_error() -> None:
    # https://github.com/vllm-project/vllm/issues/5635 (vllm-openai v0.5.0 on a host with driver 530)
    line = (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a "
        "newer version, or use an earlier cuda container: unknown."
    )
    assert classify([line]).kind is K.GPU_DRIVER_ERROR
    # the hook's other checks (SYNTHETIC, libnvidia-container's wording)
    assert classify(["nvidia-container-cli: initialization error: nvml error: driver not loaded"]).kind is (
        K.GPU_DRIVER_ERROR
    )


def test_an_oom_in_the_kernel_warm_up_package_is_a_start_up_oom_even_with_its_frame_wrapped() -> None:
    # https://github.com/vllm-project/vllm/issues/29360 (vLLM 0.11.1, 8x H20): the paste wrapped at 140 columns
    p = "(Worker_TP3_EP3 pid=406) ERROR 11-25 08:05:06 [multiproc_executor.py:815] "
    lines = [
        p + '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_exe',
        'cutor/warmup/deep_gemm_warmup.py", line 262, in _warmup',
        p + "    out = torch.empty((MAX_M, n), device=device, dtype=torch.b",
        "float16)",
        p + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate",
        "666.00 MiB. GPU 3 has a total capacity of 95.10 GiB of which 145.94 MiB is free.",
    ]
    assert classify(lines).kind is K.CUDA_OOM_PROFILE
    # the same frame unwrapped (SYNTHETIC join of the two lines above)
    joined = [lines[0] + lines[1], *lines[2:]]
    assert classify(joined).kind is K.CUDA_OOM_PROFILE
    # without the frame nothing places it: an OOM while serving, weakly
    assert classify(lines[4:]).kind is K.CUDA_OOM_RUNTIME


def test_an_excerpt_out_of_time_order_is_read_in_time_order() -> None:
    # https://github.com/vllm-project/vllm/issues/29070 (vLLM 0.11.1, TP4): the issue body quotes the error first,
    # then the start-up and the requests that ran before it
    oom = (
        "ERROR 11-19 21:10:38 [v1/executor/multiproc_executor.py:671] torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 23.50 GiB of which 31.19 MiB is free."
    )
    before = [
        "[Worker_TP3 pid=540] INFO 11-19 21:09:35 [v1/worker/gpu_worker.py:298] Available KV cache memory: 17.24 GiB",
        "[EngineCore_DP0 pid=404] INFO 11-19 21:09:35 [v1/core/kv_cache_utils.py:1087] GPU KV cache size: 226,000 "
        "tokens",
        "INFO 11-19 21:10:23 [v1/metrics/loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
        "generation throughput: 447.0 tokens/s, Running: 200 reqs, Waiting: 0 reqs, GPU KV cache usage: 49.2%, "
        "Prefix cache hit rate: 0.5%",
    ]
    f = classify([oom, *before])
    assert f.kind is K.CUDA_OOM_RUNTIME and f.phase is Phase.SERVE
    # in order, the same lines say the same
    assert classify([*before, oom]).kind is K.CUDA_OOM_RUNTIME
    # without the serving line, the KV cache sizing logged before it is the last milestone: a start-up OOM
    assert classify([oom, *before[:2]]).kind is K.CUDA_OOM_PROFILE


def test_a_kubernetes_service_port_in_vllm_port_is_bad_arguments() -> None:
    # https://github.com/vllm-project/vllm/issues/34199 (vLLM's own message, 0.8+)
    uri = (
        "ERROR 02-10 09:39:12 [engine.py:458] ValueError: VLLM_PORT 'tcp://169.169.193.120:6785' appears to be a URI. "
        "This may be caused by a Kubernetes service discovery issue,check the warning in: "
        "https://docs.vllm.ai/en/stable/serving/env_vars.html"
    )
    f = classify([uri])
    assert f.kind is K.BAD_ARGUMENTS and "VLLM_PORT" in f.hint
    # https://github.com/opea-project/GenAIInfra/pull/612 (vLLM 0.6: the bare int() of the variable)
    bare = [
        "ERROR 11-26 09:29:11 engine.py:366]     lambda: int(os.getenv('VLLM_PORT', '0'))",
        "ERROR 11-26 09:29:11 engine.py:366] ValueError: invalid literal for int() with base 10: "
        "'tcp://10.100.120.175:80'",
    ]
    assert classify(bare).kind is K.BAD_ARGUMENTS
    # another bad number is not this (SYNTHETIC)
    assert classify(["ValueError: invalid literal for int() with base 10: 'abc'"]).kind is not K.BAD_ARGUMENTS


def test_vllms_failed_safetensors_metadata_lookup_is_no_failure() -> None:
    # https://github.com/fpolica91/triton-example/blob/421a483afc7382db9cd2ab5dccce69de3a2613cc/vllm.log (vLLM 0.16.0):
    # logged at ERROR for a local folder, then the server starts and serves
    p = "(APIServer pid=103793) "
    lines = [
        p + "ERROR 03-08 20:37:09 [repo_utils.py:47] Error retrieving safetensors: Repo id must be in the form "
        "'repo_name' or 'namespace/repo_name': '/data0/huggingface/MiniMax-M2.5'. Use `repo_type` argument if "
        "needed., retrying 1 of 2",
        p + "ERROR 03-08 20:37:11 [repo_utils.py:45] Error retrieving safetensors: Repo id must be in the form "
        "'repo_name' or 'namespace/repo_name': '/data0/huggingface/MiniMax-M2.5'. Use `repo_type` argument if "
        "needed.",
        p + "INFO:     Application startup complete.",
    ]
    assert classify(lines).kind is K.NONE
    # the hub's own exception, raised, is still a model that cannot load (SYNTHETIC, huggingface_hub's wording)
    raised = (
        "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name'"
    )
    assert classify([raised]).kind is K.MODEL_LOAD_ERROR


def test_gpt_oss_without_its_tiktoken_vocabulary_is_a_model_load_error() -> None:
    # https://github.com/parallelworks/activate-rag-vllm/blob/08e26882e64afc6f0db4ab7b74b884fecf32d181/vllm.out
    line = (
        "(APIServer pid=21) openai_harmony.HarmonyError: invalid tiktoken vocab file: hash mismatch: computed="
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, expected="
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
    )
    f = classify([line])
    assert f.kind is K.MODEL_LOAD_ERROR and "TIKTOKEN_ENCODINGS_BASE" in f.hint


def test_a_new_year_below_the_error_is_not_an_earlier_line() -> None:
    # SYNTHETIC times around midnight of 31 December: the serving line below the exception came after it, so the
    # server went on (a January line is not read as logged before a December one)
    p = "ERROR 12-31 23:59:59 [api_server.py:1] "
    lines = [p + "Traceback (most recent call last):", p + "ValueError: boom"]
    serving = "INFO 01-01 00:00:09 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, Running: 2 reqs"
    assert classify([*lines, serving]).kind is K.NONE
    # the same serving line logged an hour before it, quoted below it, is not the server going on
    assert classify([*lines, serving.replace("01-01 00:00:09", "12-31 22:59:59")]).kind is K.UNKNOWN_FAILURE


def test_no_platform_found_is_a_driver_error() -> None:
    # https://github.com/llm-inference-aad/llm-inference/blob/f9d5ed4b2902aeaaa4c12e72f6f67452b357c195/server_vllm.log
    # (a Slurm job where no GPU was visible: vLLM's DeviceConfig got an empty device type)
    lines = [
        "INFO 04-28 01:32:18 [importing.py:44] Triton is installed but 0 active driver(s) found (expected 1). "
        "Disabling Triton to prevent runtime errors.",
        '  File "/storage/ice1/5/5/jgil37/llm-inference/venv/lib/python3.10/site-packages/vllm/config/device.py", '
        "line 73, in __post_init__",
        "    self.device = torch.device(self.device_type)",
        "RuntimeError: Device string must not be empty",
    ]
    assert classify(lines).kind is K.GPU_DRIVER_ERROR


def test_a_quantization_flag_naming_another_method_is_bad_arguments() -> None:
    # SYNTHETIC: the wording of vLLM's ModelConfig._verify_quantization, for an AWQ checkpoint started with gptq
    line = (
        "ValueError: Quantization method specified in the model config (awq) does not match the quantization "
        "method specified in the `quantization` argument (gptq)."
    )
    f = classify([line])
    assert f.kind is K.BAD_ARGUMENTS and "--quantization" in f.hint


def test_a_missing_driver_library_is_a_driver_error() -> None:
    # https://github.com/vllm-project/vllm/issues/7993 (collect_env.py of vLLM 0.5.x on a host without the driver)
    line = (
        "WARNING 08-29 11:55:28 _custom_ops.py:17] Failed to import from vllm._C with ImportError('libcuda.so.1: "
        "cannot open shared object file: No such file or directory')"
    )
    failure = classify([line])
    assert failure.kind is K.GPU_DRIVER_ERROR
    assert "container toolkit" in failure.hint
    # NVML's library, as the dynamic loader words it (SYNTHETIC, glibc's dlerror text)
    assert classify(["OSError: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"]).kind is (
        K.GPU_DRIVER_ERROR
    )
    # the CUDA runtime a build was linked against (the toolkit's, shipped with the Python packages): no restart brings
    # it, so it is the driver's kind too, with its own hint
    failure = classify(["ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"])
    assert failure.kind is K.GPU_DRIVER_ERROR
    assert "same CUDA release" in failure.hint


def test_a_kernel_needing_more_shared_memory_than_the_gpu_has_is_a_driver_error_not_an_oom() -> None:
    # https://github.com/vllm-project/vllm/issues/12498 (the issue's title, MI300X, vLLM 0.7)
    line = (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 66560, Hardware limit: "
        "65536. Reducing block sizes or `num_stages` may help."
    )
    failure = classify([line])
    assert failure.kind is K.GPU_DRIVER_ERROR
    assert "shared memory" in failure.hint


def test_exceptions_whose_names_do_not_end_in_error_end_a_traceback() -> None:
    # torch.compile's, concurrent.futures' (SYNTHETIC tracebacks around the exception names of torch/_dynamo/exc.py
    # and concurrent/futures/process.py)
    for last in (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while "
        "the future was running or pending.",
    ):
        lines = [
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 500, in run_engine_core',
            "    engine_core = EngineCoreProc(*args, **kwargs)",
            last,
        ]
        assert classify(lines).kind is K.UNKNOWN_FAILURE, last


def test_later_wordings_of_vllms_own_start_up_checks() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.32's source (the file and function are named in signatures.py)
    cases = {
        # kv_cache_utils._auto_fit_max_model_len (--max-model-len auto)
        "ValueError: Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
        "Try increasing `gpu_memory_utilization`.": K.KV_CACHE_INSUFFICIENT,
        # models/registry.py _raise_for_unsupported
        "ValueError: Model architecture BartForConditionalGeneration is not supported in-tree anymore. Please install "
        "the plugin at https://github.com/vllm-project/bart-plugin if you want to use this model architecture.": (
            K.MODEL_LOAD_ERROR
        ),
        "ValueError: Model architecture Phi3SmallForCausalLM was supported in vLLM until v0.9.2, and is not supported "
        "anymore. Please use an older version of vLLM if you want to use this model architecture.": K.MODEL_LOAD_ERROR,
        "ValueError: The Transformers implementation of Qwen2ForCausalLM is not compatible with vLLM.": (
            K.MODEL_LOAD_ERROR
        ),
        # model_loader/weight_utils.py, default_loader.py
        "FileNotFoundError: Weight files referenced in index but missing: ['model-00003-of-00004.safetensors']": (
            K.MODEL_LOAD_ERROR
        ),
        "ValueError: Following weights were not initialized from checkpoint: {'lm_head.weight'}": K.MODEL_LOAD_ERROR,
        # platforms/interface.py, model_loader/__init__.py
        "ValueError: bitsandbytes quantization is currently not supported in rocm.": K.BAD_ARGUMENTS,
        "ValueError: Load format `tensorizer2` is not supported": K.BAD_ARGUMENTS,
        "ValueError: Unknown vLLM environment variable detected: VLLM_USE_V1": K.BAD_ARGUMENTS,
        # a bare Exception (v1/engine/utils.py raises one where the DP device ranges do not add up)
        "Exception: Error computing device indices for CUDA_VISIBLE_DEVICES: local range: [2, 4) base value: "
        '"0,1"': K.UNKNOWN_FAILURE,
    }
    for line, kind in cases.items():
        assert classify([line]).kind is kind, line


def test_an_unknown_environment_variable_logged_as_a_warning_is_not_a_failure() -> None:
    # vLLM warns of unknown VLLM_* variables and goes on, unless the platform validates strictly (SYNTHETIC pair in
    # the wording of platforms/interface.py validate_environ; the corpus has the warning before real starts)
    warning = (
        "(APIServer pid=1) WARNING 06-17 11:25:22 [envs.py:2088] Unknown vLLM environment variable detected: "
        "VLLM_BUILD_COMMIT"
    )
    assert classify([warning]).kind is K.NONE


def test_transformers_and_hub_wordings_of_a_model_that_cannot_load() -> None:
    # SYNTHETIC lines in the wordings of transformers (utils/hub.py cached_files, models/auto/tokenization_auto.py)
    # and of vLLM 0.8-0.9's model registry
    for line in (
        "OSError: Incorrect path_or_model_id: '/models/qwen'. Please provide either the path to a local folder or "
        "the repo_id of a model on the Hub.",
        "ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported.",
        "ValueError: Qwen2_5_VLForConditionalGeneration has no vLLM implementation and the Transformers "
        "implementation is not compatible with vLLM.",
    ):
        assert classify([line]).kind is K.MODEL_LOAD_ERROR, line


def test_the_v0_era_config_checks_and_the_servers_own_flag_checks_are_bad_arguments() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.8.5's vllm/config.py, vllm/utils.py,
    # vllm/entrypoints/openai/cli_args.py and api_server.py, and vllm/executor/mp_distributed_executor.py
    for line in (
        "TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser",
        "KeyError: 'invalid tool call parser: qwen (chose from { hermes,llama3_json,mistral })'",
        "ValueError: With `vllm serve`, you should provide the model as a positional argument or in a config file "
        "instead of via the `--model` option.",
        "ValueError: Unknown kv cache dtype: fp9",
        "ValueError: max_num_batched_tokens (2048) must be greater than or equal to max_num_seqs (4096).",
        "ValueError: Too large swap space. 64.00 GiB out of the 62.00 GiB total CPU memory is allocated for the swap "
        "space.",
        "ValueError: Unrecognized distributed executor backend rayy. Supported values are 'ray', 'mp' 'uni', "
        "'external_launcher' or custom ExecutorBase subclass.",
        "ValueError: num_speculative_tokens was provided without speculative model.",
        "RuntimeError: please set tensor_parallel_size (4) to less than max local gpu count (2)",
        "ValueError: VLLM_ATTENTION_BACKEND is set to FLASHINFER, but flashinfer module was not found.",
    ):
        assert classify([line]).kind is K.BAD_ARGUMENTS, line
    # the swap space warning below 70 % of the host's RAM is not a failure
    warning = (
        "WARNING 05-01 10:00:00 config.py:1443] Possibly too large swap space. 16.00 GiB out of the 31.00 GiB total "
        "CPU memory is allocated for the swap space."
    )
    assert classify([warning]).kind is K.NONE
    # the loader finds no weights in the folder (SYNTHETIC, vllm/model_executor/model_loader/loader.py)
    assert classify(["RuntimeError: No model weights found in: `/models/qwen`"]).kind is K.MODEL_LOAD_ERROR


def test_a_failed_weight_download_is_a_model_load_error() -> None:
    # https://github.com/Einengutenmorgen/decode_kuki/blob/bc43a1dbc17a9930b64badeee852dd1b30a7fa73/logs/overnight_20261008_1721/qwen3.8-27b.vllm.log
    # (vLLM 0.31.0, TP2: the first start downloads the weights; the disk quota ran out)
    p = "(Worker_TP1 pid=1112811) ERROR 10-08 17:46:08 [multiproc_executor.py:948] "
    lines = [
        p + "WorkerProc failed to start.",
        p + "Traceback (most recent call last):",
        p + '  File "/home/hau/decode_kuki/venvDecodeKuKi/lib/python3.14/site-packages/vllm/model_executor/'
        'model_loader/weight_utils.py", line 505, in download_weights_from_hf',
        p + "    hf_folder = hf_api().snapshot_download(",
        p + '  File "/home/hau/decode_kuki/venvDecodeKuKi/lib/python3.14/site-packages/huggingface_hub/'
        'file_download.py", line 589, in xet_get',
        p + "    with session.new_file_download_group(",
        p + "RuntimeError: Task error: File reconstruction error: IO Error: Disk quota exceeded (os error 122)",
    ]
    assert classify(lines).kind is K.MODEL_LOAD_ERROR


def test_a_model_class_that_refuses_its_checkpoints_config_is_a_model_load_error() -> None:
    # https://github.com/OpenSQZ/MiniCPM-V-CookBook/issues/36 (vLLM 0.10.1: MiniCPM-V 4.5 before the release that
    # supports it)
    p = "(EngineCore_0 pid=1235737) "
    lines = [
        p + '  File "/home/admin1/miniconda3/envs/mimicpm/lib/python3.12/site-packages/vllm/model_executor/models/'
        'minicpmv.py", line 1432, in __new__',
        p + '    raise ValueError(f"Currently, MiniCPMV only supports versions "',
        p + "ValueError: Currently, MiniCPMV only supports versions 2.0, 2.5, 2.6, 4.0. Got version: (4, 5)",
    ]
    assert classify(lines).kind is K.MODEL_LOAD_ERROR
    # an import that fails inside a model's constructor is the install's fault, not the checkpoint's (SYNTHETIC,
    # after tests/data/logs/unknown_failure/rusteze-...-undefined-symbol.log, moved into a model class)
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/site-packages/vllm/model_executor/models/qwen2.py", line 300, in __init__',
        "    from flash_attn import flash_attn_varlen_func",
        '  File "/usr/lib/python3.12/site-packages/flash_attn/__init__.py", line 3, in <module>',
        "    from flash_attn.flash_attn_interface import (",
        "ImportError: /usr/lib/python3.12/site-packages/flash_attn_2_cuda.so: undefined symbol: _ZNK3c106SymInt6sym",
    ]
    assert classify(lines).kind is K.UNKNOWN_FAILURE


def test_an_access_log_line_is_never_read_for_a_failure_but_a_500_is() -> None:
    # SYNTHETIC: uvicorn's access log quotes the client's request; a path may hold any words
    # (a scanner's probe of a path named like vLLM's error was read as a dead engine before)
    line = 'INFO:     10.0.0.7:51234 - "GET /v1/models/EngineDeadError HTTP/1.1" 404 Not Found'
    assert classify(["Traceback (most recent call last):", line]).kind is K.NONE
    assert classify([line]).kind is K.NONE
    # a health check answered 500 is read as before (tests/data/logs/engine_dead/vllm-5060-...)
    assert classify(['INFO:     10.42.15.50:60988 - "GET /health HTTP/1.1" 500 Internal Server Error']).kind is not (
        K.NONE
    )


def test_xlas_full_hbm_is_a_device_oom() -> None:
    # https://github.com/AI-Hypercomputer/tpu-recipes/issues/151 (vLLM on TPU7x: the line alone does not place it)
    line = (
        "RESOURCE_EXHAUSTED: Error loading program 'jit__multi_slice': Attempting to reserve 6.14G at the bottom of "
        "memory. That was not possible."
    )
    failure = classify([line])
    assert failure.kind is K.CUDA_OOM_RUNTIME
    assert failure.confidence is Confidence.LOW
    # XLA's other RESOURCE_EXHAUSTED errors (a quota, a compile limit) are not an OOM by themselves (SYNTHETIC)
    assert classify(["RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Requests'"]).kind is not K.CUDA_OOM_RUNTIME


def test_a_platform_plugin_counting_the_kv_blocks_that_do_not_fit() -> None:
    # https://github.com/RBLN-SW/vllm-rbln/issues/1000 (vllm-rbln on Rebellions NPUs, max-model-len 196608)
    lines = [
        "Not enough memory for 24 blocks of KV cache.",
        "Try reducing the number of blocks by setting --num-gpu-blocks-override.",
    ]
    assert classify(lines).kind is K.KV_CACHE_INSUFFICIENT


def test_wordings_of_ascend_lora_ray_and_the_file_mapping() -> None:
    # SYNTHETIC lines in the wordings of CANN's runtime, vLLM's LoRA loader and registry, its Ray executor, and
    # PyTorch's MapAllocator (aten/src/ATen/MapAllocator.cpp)
    cases = {
        "[ERROR] RUNTIME(2070482,):2026-01-09-02:28:27.541.034 [npu_driver.cc:1579]2070482 DevMemAllocManaged:[drv api]"
        " halMemAlloc failed:size=306184192(bytes), type=0, drvRetCode=6, device_id=1, ErrCode=207001, desc=[driver "
        "error:out of memory], InnerCode=0x7020016": K.CUDA_OOM_RUNTIME,
        "        alloc device memory failed, runtime result = 207001[FUNC:ReportCallError][FILE:log_inner.cpp]": (
            K.CUDA_OOM_RUNTIME
        ),
        "EL0004: [PID: 5536] 2025-11-10-01:25:11.770.501 Failed to allocate memory.": K.CUDA_OOM_RUNTIME,
        "ValueError: While loading /srv/lora/checkpoint-100, expected target modules in ['o_proj', 'qkv_proj'] but "
        "received ['mlp1.1']. Please verify that the loaded LoRA module is correct": K.MODEL_LOAD_ERROR,
        "vllm.exceptions.LoRAAdapterNotFoundError: Loading lora sql failed: No adapter found for /srv/lora/sql": (
            K.MODEL_LOAD_ERROR
        ),
        "ValueError: LoRA rank 64 is greater than max_lora_rank 16.": K.BAD_ARGUMENTS,
        "ERROR 11-26 08:23:00 [registry.py:716] Error in inspecting model architecture 'HunYuanVLForConditionalGeneration'"
        "": K.MODEL_LOAD_ERROR,
        "ValueError: Current node has no GPU available. current_node_resource={'CPU': 112.0}. vLLM engine cannot start "
        "without GPU. Make sure you have at least 1 GPU available in a node": K.DISTRIBUTED_ERROR,
        "RuntimeError: unable to mmap 4965799096 bytes from file </models/model-00001-of-00002.safetensors>: Cannot "
        "allocate memory (12)": K.HOST_OOM_KILLED,
        # Ray's memory monitor's table of the largest processes, pasted without the kill line above it
        "PID\tMEM(GB)\tCOMMAND": K.HOST_OOM_KILLED,
        # EADDRNOTAVAIL: the HTTP server's --host, or an engine socket told another node's address
        "ERROR:    [Errno 99] error while attempting to bind on address ('10.0.0.5', 8000): cannot assign requested "
        "address": K.BAD_ARGUMENTS,
        "zmq.error.ZMQError: Cannot assign requested address (addr='tcp://10.27.91.102:13345')": K.DISTRIBUTED_ERROR,
        "Out of Memory: Not enough space to allocate 71999488 B DRAM buffer across 12 banks, where each bank needs to "
        "store 6000320 B": K.CUDA_OOM_RUNTIME,
    }
    for line, kind in cases.items():
        assert classify([line]).kind is kind, line


def test_a_retry_in_the_same_process_that_cannot_build_the_model_again_is_not_the_story() -> None:
    # a launcher (a notebook's cell) retries in the process whose first start failed: the second build of the model
    # meets the first one's layers (vllm/attention/layer.py, "Duplicate layer name: ..."); the first failure is why
    first = [
        "INFO 11-02 15:01:37 [utils.py:233] non-default args: {'model': 'q', 'gpu_memory_utilization': 0.259}",
        "INFO 11-02 15:01:38 [gpu_model_runner.py:2602] Starting to load model q...",
        "CUDA driver error: out of memory",
    ]
    retry = [
        "INFO 11-02 15:01:43 [utils.py:233] non-default args: {'model': 'q', 'gpu_memory_utilization': 0.2}",
        "INFO 11-02 15:01:44 [gpu_model_runner.py:2602] Starting to load model q...",
        "Traceback (most recent call last):",
        '  File "/env/vllm/model_executor/models/qwen3.py", line 160, in __init__',
        "    self.attn = Attention(",
        '  File "/env/vllm/attention/layer.py", line 214, in __init__',
        '    raise ValueError(f"Duplicate layer name: {prefix}")',
        "ValueError: Duplicate layer name: model.layers.0.self_attn.attn",
    ]
    assert classify(retry).kind is K.MODEL_LOAD_ERROR  # alone, a model that does not build
    assert classify(first + retry).kind is K.CUDA_OOM_LOAD
    # a later start that fails otherwise is still the story
    other = [*retry[:2], "ValueError: Unknown kv cache dtype: fp9"]
    assert classify(first + other).kind is K.BAD_ARGUMENTS


def test_more_wordings_read_from_the_libraries_that_print_them() -> None:
    # SYNTHETIC lines in the wordings of PyTorch, vLLM, transformers, pynccl, XLA, AWS Neuron and the Run:ai streamer
    cases = {
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
        "the 'spawn' start method": K.UNKNOWN_FAILURE,
        "ValueError: Model QWenLMHeadModel does not support LoRA, but LoRA is enabled. Support for this model may be "
        "added in the future.": K.BAD_ARGUMENTS,
        "ValueError: AoT scheduling is required for full cuda graph.": K.BAD_ARGUMENTS,
        "ValueError: moe_backend='triton' is not supported for NvFP4 MoE. Expected one of ['cutlass', 'marlin']": (
            K.BAD_ARGUMENTS
        ),
        "RuntimeError: NCCL Error 2: unhandled system error": K.DISTRIBUTED_ERROR,
        "OSError: Can't load image processor for 'org/model'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same name.": (
            K.MODEL_LOAD_ERROR
        ),
        "RuntimeError: Loading lora /adapters/sql failed": K.MODEL_LOAD_ERROR,
        "RuntimeError: CUDA driver error: device not ready": K.GPU_DRIVER_ERROR,
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 16.94G "
        "of 15.75G hbm.": K.CUDA_OOM_RUNTIME,
        'RuntimeError: nrt_tensor_allocate status=4 message="Allocation Failure"': K.CUDA_OOM_RUNTIME,
        "RuntimeError: Could not send runai_request to libstreamer due to: b'File access error'": K.MODEL_LOAD_ERROR,
        "The number of required TPUs exceeds the total number of available TPUs in the placement group.": (
            K.DISTRIBUTED_ERROR
        ),
        "ValueError: The number of required GPUs exceeds the total number of available GPUs in the cluster.": (
            K.DISTRIBUTED_ERROR
        ),
        # a single machine's count of its own GPUs stays the command line's
        "RuntimeError: please set tensor_parallel_size (4) to less than max local gpu count (2)": K.BAD_ARGUMENTS,
        # a reporter's words before the pasted line, ended with a full-width colon
        "使用vllm推理报错\uff1aValueError: Currently, MiniCPMV only supports versions 2.0, 2.5, and 2.6": K.UNKNOWN_FAILURE,
    }
    for line, kind in cases.items():
        assert classify([line]).kind is kind, line


def test_the_shells_killed_after_vllm_raised_is_vllms_own_kill() -> None:
    # V1's front end kills its own process tree once the engine failed (core_client.py, "Got fatal signal from worker
    # processes, shutting down"); the shell then reports "Killed": the exception is the story
    raised = [
        "ERROR 05-07 05:58:46 core.py:291] EngineCore hit an exception: Traceback (most recent call last):",
        'ERROR 05-07 05:58:46 core.py:291]   File "/env/vllm/v1/engine/core.py", line 283, in run_engine_core',
        "ERROR 05-07 05:58:46 core.py:291] KeyError: 'Cannot find `mm_limits` for model'",
        "CRITICAL 05-07 05:58:46 core_client.py:191] Got fatal signal from worker processes, shutting down. See stack "
        "trace above for root cause issue.",
        "Killed",
    ]
    assert classify(raised).kind is not K.HOST_OOM_KILLED
    # a "Killed" with nothing raised before it is still the OOM killer's likeliest
    assert classify([raised[0].split(" EngineCore")[0] + " Loading weights", "Killed"]).kind is K.HOST_OOM_KILLED


# Quoted (shortened where "..." stands): https://github.com/vllm-project/vllm/issues/6106 (a 3-node Ray cluster, TP 24)
_RAY_DEATH = (
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the "
    "problem, check the logs for the dead worker. RayTask ID: ffffffffffffffffde157c4cf1f6b23423e20a4102000000 ... "
    "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End "
    "of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high "
    "memory usage."
)


@pytest.mark.parametrize(
    ("before", "kind"),
    [
        (
            [
                "(RayWorkerWrapper pid=4139, ip=128.1.219.180) ERROR 07-03 14:43:50 worker_base.py:148] RuntimeError: "
                "NCCL error: internal error - please report this issue to the NCCL developers"
            ],
            K.DISTRIBUTED_ERROR,
        ),
        (
            [
                "(RayWorkerWrapper pid=9821) *** SIGSEGV received at time=1720017831 on cpu 54 ***",
                "(RayWorkerWrapper pid=9821) Fatal Python error: Segmentation fault",
            ],
            K.UNKNOWN_FAILURE,
        ),
        (["INFO 07-03 14:43:49 pynccl.py:63] vLLM is using nccl==2.20.5"], K.HOST_OOM_KILLED),
        # Ray's own exception for the death reports it and explains nothing (https://github.com/alibaba/ROLL/issues/80)
        (["ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."], K.HOST_OOM_KILLED),
    ],
    ids=["after-a-raise", "after-a-crash", "alone", "rays-report-of-it"],
)
def test_rays_worker_death_after_the_worker_failed_is_that_failure(before: list[str], kind: FailureKind) -> None:
    # Ray names the OOM killer as one likely cause of a vanished worker; a worker that raised or crashed just before
    # is another, and then the death is the consequence
    assert classify([*before, _RAY_DEATH]).kind is kind


def test_a_ray_tasks_traceback_and_a_checkpoints_own_code_place_the_failure() -> None:
    # Ray's header names the remote exception, then come the task's frames and its exception line
    ray = [
        "ray.exceptions.RayTaskError(KeyError): ray::RayWorker.execute_method() (pid=9510, ip=192.168.16.3)",
        '  File "/usr/lib/python3.10/dist-packages/vllm/worker/worker.py", line 70, in init_model',
        "    self.model = get_model(self.model_config)",
        '  File "/usr/lib/python3.10/dist-packages/vllm/model_executor/models/gpt_bigcode.py", line 280, in load_weights',
        "    param = params_dict[name]",
        "KeyError: 'transformer.h.0.mlp.act.scales'",
    ]
    assert classify(ray).kind is K.MODEL_LOAD_ERROR
    # trust_remote_code: the checkpoint's modeling file, imported from transformers' modules cache, does not run
    remote = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/dist-packages/transformers/dynamic_module_utils.py", line 250, in get_class_in_module',
        "    module_spec.loader.exec_module(module)",
        '  File "/root/.cache/huggingface/modules/transformers_modules/org/M1/c179/modeling_m1.py", line 15, in <module>',
        "    from transformers.modeling_flash_attention_utils import _flash_supports_window_size",
        "ImportError: cannot import name '_flash_supports_window_size' from 'transformers.modeling_flash_attention_utils'",
    ]
    assert classify(remote).kind is K.MODEL_LOAD_ERROR


def test_rccls_advice_at_init_is_not_the_failure() -> None:
    # RCCL warns through NCCL's WARN macro of what may go wrong (src/init.cc); the crash after it is the failure
    advice = (
        "node:927:927 [0] /build/rccl/src/init.cc:140 NCCL WARN NUMA auto balancing enabled which can lead to "
        'variability in the RCCL performance! Disable by "sudo sysctl kernel.numa_balancing=0"'
    )
    lines = [advice, "*** SIGSEGV received at time=1762945937 on cpu 6 ***", "Fatal Python error: Segmentation fault"]
    assert classify(lines).kind is K.UNKNOWN_FAILURE
    failed = "node:233:233 [0] init.cc:1815 NCCL WARN Call to connect returned Connection refused"
    assert classify([*lines, failed]).kind is K.DISTRIBUTED_ERROR


def test_a_traceback_cut_in_the_devices_first_use_is_the_driver() -> None:
    # torch.cuda.set_device is a worker's first CUDA call (vLLM's init_device): a traceback that stops there, or an
    # error raised from it that names no other cause, is the driver's, the runtime's or the device's
    frames = [
        "Traceback (most recent call last):",
        '  File "/opt/vllm/vllm/v1/worker/gpu_worker.py", line 209, in init_device',
        "    current_platform.set_device(self.device)",
        '  File "/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py", line 567, in set_device',
        "    torch._C._cuda_setDevice(device)",
    ]
    assert classify(frames).kind is K.GPU_DRIVER_ERROR
    assert classify([*frames, "RuntimeError: CUDA error: out of memory"]).kind is not K.GPU_DRIVER_ERROR


def test_more_wordings_of_a_full_dev_shm_a_missing_libcuda_and_a_full_model_cache() -> None:
    # SYNTHETIC lines in the wordings of NCCL (src/misc/shmutils.cc), PyTorch (torch/utils/data/_utils/
    # signal_handling.py), binutils' ld under Triton's launcher build, vLLM 0.8's Ray executor, huggingface_hub
    cases = {
        "misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-3fZ1 to 9637892 bytes": K.SHM_EXHAUSTED,
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
        "(shm).": K.SHM_EXHAUSTED,
        "/usr/bin/ld: cannot find -lcuda: No such file or directory": K.GPU_DRIVER_ERROR,
        "RuntimeError: Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group "
        "or running the driver on a GPU node.": K.DISTRIBUTED_ERROR,
        "OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/blobs/"
        "3c1f.incomplete'": K.MODEL_LOAD_ERROR,
        "RuntimeError: Data processing error: CAS service error : IO Error: No space left on device (os error 28)": (
            K.MODEL_LOAD_ERROR
        ),
        # the same errno on /dev/shm stays a full /dev/shm
        "OSError: [Errno 28] No space left on device: '/dev/shm/psm_8a981037'": K.SHM_EXHAUSTED,
    }
    for line, kind in cases.items():
        assert classify([line]).kind is kind, line


def test_failures_with_a_known_cause_but_no_kind_of_their_own_say_what_to_do() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.17+ (v1/engine/core_client.py) and Triton's launcher build
    timeout = classify(
        [
            "TimeoutError: Timed out waiting for engine core processes to start. This is often caused by slow weight "
            "loading for large models. Waited 600s (configured by VLLM_ENGINE_READY_TIMEOUT_S)."
        ]
    )
    assert timeout.kind is K.UNKNOWN_FAILURE
    assert "VLLM_ENGINE_READY_TIMEOUT_S" in timeout.hint
    compiler = classify(
        [
            "torch._inductor.exc.InductorError: RuntimeError: Failed to find C compiler. Please specify via CC "
            "environment variable or set triton.knobs.build.impl."
        ]
    )
    assert compiler.kind is K.UNKNOWN_FAILURE
    assert "gcc" in compiler.hint


def test_the_later_warning_about_model_given_as_a_flag_is_not_a_failure() -> None:
    # https://github.com/NnamdiOdozi/mlops-assignment/blob/0eb0115f8fa985587481c99e737d6347f0df2cd5/logs/vllm.log
    # (vLLM 0.22.1 warns where 0.8 raised; the start went on and served)
    line = (
        "WARNING 06-18 09:16:00 [argparse_utils.py:257] With `vllm serve`, you should provide the model as a "
        "positional argument or in a config file instead of via the `--model` option. The `--model` option will be "
        "removed in a future version."
    )
    assert classify([line]).kind is K.NONE
    # the raised form of 0.32 (SYNTHETIC, vllm/utils/argparse_utils.py)
    line = (
        "ValueError: `model` should be provided as the first positional argument when using `vllm serve`. i.e. "
        "`vllm serve <model> --<arg> <value>`."
    )
    assert classify([line]).kind is K.BAD_ARGUMENTS


def test_a_quantized_checkpoint_split_over_too_many_gpus_is_bad_arguments() -> None:
    # https://github.com/QwenLM/Qwen3-VL/issues/831 (Qwen2.5-VL-72B-AWQ at TP 2 and 4)
    line = (
        "ValueError: The input size is not aligned with the quantized weight shape. This can be caused by too large "
        "tensor parallel size."
    )
    failure = classify([line])
    assert failure.kind is K.BAD_ARGUMENTS
    assert "--tensor-parallel-size" in failure.hint


def test_a_checkpoint_tensor_the_model_has_no_place_for_is_a_model_load_error() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/2556 (Qwen3-Embedding-0.6B on vllm-ascend 0.10.0rc1)
    line = "   ValueError: There is no module or parameter named 'embed_tokens' in CustomQwen3ForCausalLM"
    assert classify([line]).kind is K.MODEL_LOAD_ERROR


def test_a_c_library_older_than_the_wheels_need_says_so() -> None:
    # https://github.com/modal-labs/modal-examples/issues/1318 (vLLM 0.9.1 on debian-slim; the paste joined two
    # records on one line)
    line = (
        "ERROR 08-04 07:35:11 [core.py:515]                    ^^^^^^^^^^^^^^^^^^^^^^^^^ ERROR 08-04 07:35:11 "
        "[core.py:515] OSError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by "
        "/usr/local/lib/python3.12/site-packages/flashinfer/data/aot/sampling/sampling.so)"
    )
    failure = classify([line])
    assert failure.kind is K.UNKNOWN_FAILURE
    assert "glibc" in failure.hint


def test_words_of_an_argument_error_in_a_line_vllm_went_on_from_are_not_one() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.32's model_executor/models/vision.py and config/parallel.py: warnings
    # a healthy start of a vision model under TP, or of a data-parallel group, prints; a later OOM is the failure
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.50 GiB of which 1.00 GiB is free."
    )
    for warning in (
        "(EngineCore pid=9) WARNING 11-02 10:00:00 [vision.py:120] The number of vision attention heads is not "
        "divisible by the tensor parallel size. Falling back to data parallelism for the vision encoder.",
        "WARNING 11-02 10:00:00 [parallel.py:746] Address already in use. Retrying with a new port.",
    ):
        lines = [warning, "INFO 11-02 10:00:10 [gpu_model_runner.py:1] Model loading took 15.2 GiB", oom]
        assert classify(lines).kind is K.CUDA_OOM_PROFILE, warning
        assert classify([warning, "INFO:     Application startup complete."]).kind is K.NONE, warning
    # the raised form of an argument error is read as before
    line = "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (3)."
    assert classify([line]).kind is K.BAD_ARGUMENTS


def test_the_kv_offload_p2p_sessions_errors_are_not_custom_all_reduces_p2p_failure() -> None:
    # SYNTHETIC, in the wording of vLLM 0.32's v1/kv_offload/tiering/p2p/session/session.py: an error of the
    # optional KV-offload tier logged before the start's real failure does not name it
    lines = [
        "ERROR 11-02 10:00:00 [session.py:210] P2PSession 3: protocol error: bad frame — disconnecting",
        "INFO 11-02 10:00:10 [gpu_model_runner.py:1] Model loading took 15.2 GiB",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.50 GiB of which 1.00 GiB is free.",
    ]
    assert classify(lines).kind is K.CUDA_OOM_PROFILE
    # custom all-reduce's own P2P check still reads as before (SYNTHETIC)
    assert classify(["RuntimeError: P2P test failed between GPU 0 and GPU 1"]).kind is K.DISTRIBUTED_ERROR


def test_a_warning_pasted_without_its_prefix_that_says_vllm_went_on_is_not_a_failure() -> None:
    # SYNTHETIC, in the wordings of vLLM 0.32 (model_executor/models/vision.py) and 0.8.5 (v1/engine/async_llm.py)
    assert (
        classify(
            [
                "The number of vision attention heads is not divisible by the tensor parallel size. Falling back to data "
                "parallelism for the vision encoder."
            ]
        ).kind
        is K.NONE
    )
    assert classify(["Aborted request 16."]).kind is K.NONE
    # the shell's report of an abort is still a crash
    assert classify(["Aborted (core dumped)"]).kind is K.UNKNOWN_FAILURE


def test_a_multimodal_item_above_the_step_a_dp_group_without_gpus_and_a_tpu_load_too_large() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.11.0 (v1/core/encoder_cache_manager.py, v1/engine/utils.py,
    # v1/worker/tpu_model_runner.py)
    cases = {
        "ValueError: Chunked MM input disabled but max_tokens_per_mm_item (16384) is larger than "
        "max_num_batched_tokens (8192). Please increase max_num_batched_tokens.": K.BAD_ARGUMENTS,
        "ValueError: Not enough resources to allocate 4 placement groups, only created 2 placement groups. Available "
        "resources: {'GPU': 8.0}": K.DISTRIBUTED_ERROR,
        "RuntimeError: Unable to load model, a likely reason is the model is too large for the current device's HBM "
        "memory. Consider switching to a smaller model or sharding the weights on more chips.": K.CUDA_OOM_LOAD,
    }
    for line, kind in cases.items():
        assert classify([line]).kind is kind, line


def test_a_full_disk_under_a_cache_is_not_dev_shm_and_says_where_to_look() -> None:
    # https://github.com/alint77/jupiter-glm52-vllm-worklog/blob/c954a3512d5c22a0520868f88762823b4ae3dd93/baseline/failed-home-quota-server.out
    # (torch.compile's autotuning writes under ~/.cache/vllm; the path cut here)
    quota = (
        "torch._inductor.exc.InductorError: RuntimeError: Failed to run autotuning code block: [Errno 122] Disk quota "
        "exceeded: '/e/home/jusers/u/jupiter/.cache/vllm/torch_compile_cache/torch_aot_compile/6dcc7ac7/inductor_cache'"
    )
    # SYNTHETIC: the same write on a full disk (ENOSPC), and torch's own /dev/shm file (aten MapAllocator's wording)
    full = "OSError: [Errno 28] No space left on device: '/root/.cache/vllm/torch_compile_cache/a1b2c3/rank_0_0'"
    shm = "RuntimeError: unable to write to file </torch_1234_5678_0>: No space left on device (28)"
    for line in (quota, full):
        failure = classify([line])
        assert failure.kind is K.UNKNOWN_FAILURE, line
        assert "VLLM_CACHE_ROOT" in failure.hint
    assert classify([shm]).kind is K.SHM_EXHAUSTED


def test_a_worker_gone_with_no_exit_code_after_a_raise_is_the_raise() -> None:
    # vLLM's executor looked before the worker's exit was reaped ("exit code: None"): after the worker's own traceback
    # that is no sign of a kill. SYNTHETIC lines in vLLM 0.32's wordings (v1/executor/multiproc_executor.py)
    raised = [
        "(Worker_TP0 pid=11) ERROR 07-16 18:21:23 [multiproc_executor.py:1007] Traceback (most recent call last):",
        '(Worker_TP0 pid=11) ERROR 07-16 18:21:23 [multiproc_executor.py:1007]   File "/x/vllm/worker.py", line 9, '
        "in compile_or_warm_up_model",
        "(Worker_TP0 pid=11) ERROR 07-16 18:21:23 [multiproc_executor.py:1007] RuntimeError: something new broke",
    ]
    gone = "(EngineCore pid=9) ERROR 07-16 18:21:45 [multiproc_executor.py:284] Worker proc VllmWorker-1 died "
    assert classify([*raised, gone + "unexpectedly (exit code: None), shutting down executor."]).kind is (
        K.UNKNOWN_FAILURE
    )
    # with nothing raised before, or with SIGKILL's -9, it stays the kill it most often is
    assert classify([gone + "unexpectedly (exit code: None), shutting down executor."]).kind is K.HOST_OOM_KILLED
    assert classify([*raised, gone + "unexpectedly (exit code: -9), shutting down executor."]).kind is (
        K.HOST_OOM_KILLED
    )


def test_hccl_on_ascend_reads_as_nccl_does() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/672 (DP+EP on Ascend, torch_npu's check of the HCCL call)
    init = (
        "[rank0]: RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function "
        "error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 15"
    )
    assert classify([init]).kind is K.DISTRIBUTED_ERROR
    # https://github.com/vllm-project/vllm-ascend/issues/4725 (two instances on one host; the init chain follows)
    listen = [
        "[ERROR] HCCL(60570,):2025-12-04-14:46:07.911.312 [hccl_socket.cc:106] [60570][HcclSocket][Listen] socket "
        "type[0], listen on ip[192.2.2.195] and specific port[16666] fail. Please check the port status and whether "
        "the port is being used by other process.",
        "[ERROR] HCCL(60570,):2025-12-04-14:46:07.911.325 [hccl_comm.cc:115] [60570][HcclComm][Init]"
        "errNo[0x0000000005000007] hccl initialize failed",
    ]
    failure = classify(listen)
    assert failure.kind is K.PORT_IN_USE
    assert failure.numbers["port"] == 16666


def test_the_cpu_backends_memory_checks_read_as_their_gpu_twins() -> None:
    # SYNTHETIC lines in the wordings of vLLM's CPU worker (v1/worker/cpu_worker.py): 0.24-0.32 at start-up, when
    # other processes hold the RAM the fraction asks for; 0.33- when the weights alone fill the fraction
    held = (
        "ValueError: Available memory on node 0 (3.21/15.52 GiB) on startup is less than desired CPU memory "
        "utilization (0.5, 7.76 GiB). On the CPU backend, the `--gpu-memory-utilization` flag controls the fraction "
        "of CPU memory reserved (despite its name). To resolve: decrease `--gpu-memory-utilization` (e.g. "
        "`--gpu-memory-utilization 0.5`) or reduce CPU memory used by other processes."
    )
    failure = classify([held])
    assert failure.kind is K.VRAM_HELD
    assert failure.numbers == {"gpu_free_gib": 3.21, "gpu_total_gib": 15.52, "util_requested": 0.5}
    assert "node" in failure.hint
    full = (
        "ValueError: The worker already uses 9.10 GiB (model weights and runtime), more than the 7.76 GiB of CPU "
        "memory reserved for it on node 0, leaving none for the KV cache. On the CPU backend, the "
        "`--gpu-memory-utilization` flag controls the fraction of CPU memory reserved (despite its name)."
    )
    assert classify([full]).kind is K.KV_CACHE_INSUFFICIENT


def test_the_start_up_checks_of_weights_held_outside_vllm() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.34's v1/worker/utils.py (request_memory)
    held = classify(
        [
            "ValueError: Free memory on device cuda:0 (10.5/79.19 GiB) on startup is less than the engine's budget "
            "after excluding external process's weights (0.9, 50.2 GiB). Decrease GPU memory utilization or reduce "
            "GPU memory used by other processes."
        ]
    )
    assert held.kind is K.VRAM_HELD
    assert held.numbers == {"gpu_free_gib": 10.5, "gpu_total_gib": 79.19, "util_requested": 0.9}
    low = classify(
        [
            "ValueError: Externally held weights on device cuda:0 (30.1/79.19 GiB) exceed the desired GPU memory "
            "utilization (0.3, 23.76 GiB). Increase GPU memory utilization or reduce GPU memory used by other "
            "processes."
        ]
    )
    assert low.kind is K.BAD_ARGUMENTS
    assert "--gpu-memory-utilization" in low.hint


def test_a_pooler_warm_up_out_of_memory_is_a_profile_oom() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.34's pooling runners (v1/worker/gpu/pool, v1/worker/cpu)
    for line in (
        "RuntimeError: CUDA out of memory occurred when warming up pooler (task='embed') with 256 dummy requests. "
        "Please try lowering `max_num_seqs` when initializing the engine.",
        "RuntimeError: Out of memory while warming up the pooler (task='embed') with 256 dummy requests. Lower "
        "`max_num_seqs`.",
    ):
        failure = classify([line])
        assert (failure.kind, failure.phase) == (K.CUDA_OOM_PROFILE, Phase.PROFILE), line


def test_an_exception_wrapped_onto_the_next_line_is_read_whole() -> None:
    # https://github.com/ls1intum/edutelligence/issues/570 (the message as quoted there, wrapped after "less")
    failure = classify(
        [
            "ValueError: Free memory on device cuda:0 (79.12/94.97 GiB) on startup is less",
            "than desired GPU memory utilization (0.95, 90.22 GiB).",
        ]
    )
    assert failure.kind is K.VRAM_HELD
    assert failure.numbers["gpu_free_gib"] == 79.12
    # SYNTHETIC: a terminal's hard wrap in the middle of a word, under a traceback
    failure = classify(
        [
            "Traceback (most recent call last):",
            '  File "/x/vllm/config/model.py", line 9, in _verify_args',
            "ValueError: Total number of attention heads (28) must be divis",
            "ible by tensor parallel size (8).",
        ]
    )
    assert failure.kind is K.BAD_ARGUMENTS
    assert failure.basis.value == "message"


def test_a_notebooks_traceback_is_read_through_its_frames() -> None:
    # https://github.com/zhenlan0426/ARI2025/blob/8d2518226fde7806a165971e8172614a9a0002b2/vllm.ipynb (IPython 8's
    # frames, "File ~/x.py:N, in Class.function(args)"; cut to the frames that place it)
    ipython8 = [
        "AssertionError                            Traceback (most recent call last)",
        "Cell In[1], line 3",
        '----> 3 llm = LLM(model="unsloth/gemma-3-4b-it-unsloth-bnb-4bit")',
        "File ~/anaconda3/lib/python3.12/site-packages/vllm/model_executor/model_loader/loader.py:444, in "
        "DefaultModelLoader.load_model(self, vllm_config)",
        "--> 444 loaded_weights = model.load_weights(",
        "File ~/anaconda3/lib/python3.12/site-packages/vllm/model_executor/layers/linear.py:1228, in "
        "RowParallelLinear.weight_loader(self, param, loaded_weight)",
        "-> 1228 assert param_data.shape == loaded_weight.shape",
        "AssertionError: ",
    ]
    failure = classify(ipython8)
    assert (failure.kind, failure.basis.value) == (K.MODEL_LOAD_ERROR, "frame")
    # SYNTHETIC: IPython 7's frames ("~/x.py in function(args)") around a CUDA OOM while the weights load
    ipython7 = [
        "OutOfMemoryError                          Traceback (most recent call last)",
        "<ipython-input-3-1b2c> in <module>",
        '----> 1 llm = LLM(model="Qwen/Qwen2.5-7B-Instruct")',
        "~/venv/lib/python3.10/site-packages/vllm/worker/model_runner.py in load_model(self)",
        "-> 1113     self.model = get_model(vllm_config=self.vllm_config)",
        "OutOfMemoryError: CUDA out of memory. Tried to allocate 260.00 MiB. GPU 0 has a total capacity of 14.58 GiB "
        "of which 101.56 MiB is free.",
    ]
    failure = classify(ipython7)
    assert (failure.kind, failure.phase) == (K.CUDA_OOM_LOAD, Phase.LOAD)


def test_every_backends_out_of_memory_reads_as_one() -> None:
    # SYNTHETIC lines in the wordings of PyTorch's allocators (c10/cuda, hipified ROCm, c10/xpu, MPS's
    # MPSAllocator.mm), torch_npu's, cuDNN's status, and PyTorch's host allocator (Linux, then Windows)
    device = (
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 191.98 "
        "GiB of which 1.20 GiB is free.",
        "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.99 GiB.",
        "RuntimeError: MPS backend out of memory (MPS allocated: 17.01 GB, other allocations: 1.20 GB, max allowed: "
        "18.13 GB). Tried to allocate 2.00 GB on private pool.",
        "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity; 55.91 GiB "
        "already allocated)",
        "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
    )
    for line in device:
        assert classify([line]).kind is K.CUDA_OOM_RUNTIME, line
    for line in (
        "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: you "
        "tried to allocate 34359738368 bytes. Error code 12 (Cannot allocate memory)",
        "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to "
        "allocate 34359738368 bytes.",
    ):
        assert classify([line]).kind is K.HOST_OOM_KILLED, line


def test_the_earlier_engine_ready_timeout_says_what_to_do_too() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.11.0 (the space missing) and 0.16.0's v1/engine/core_client.py
    for line in (
        "TimeoutError: Timed out waiting for engines to sendinitial message on input socket.",
        "TimeoutError: Timed out waiting for engines to send initial message on input socket.",
    ):
        failure = classify([line])
        assert failure.kind is K.UNKNOWN_FAILURE
        assert "VLLM_ENGINE_READY_TIMEOUT_S" in failure.hint


def test_a_model_load_text_vllm_only_warned_of_is_not_the_failure() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.8.5 (registry.py warns and goes on) and 0.11's (raises)
    warned = "WARNING 05-01 10:00:00 [registry.py:443] No model architectures are specified"
    assert classify([warned, "INFO:     Application startup complete."]).kind is K.NONE
    assert classify(["ValueError: No model architectures are specified"]).kind is K.MODEL_LOAD_ERROR


def test_the_kv_offload_tiers_own_p2p_errors_are_not_a_gpu_link_failure() -> None:
    # SYNTHETIC lines in the wordings of vLLM 0.34's v1/kv_offload/tiering/p2p/manager.py (logged, then serving goes
    # on) and of a GPU peer-to-peer failure
    tier = (
        "(APIServer pid=9) ERROR 12-03 10:00:00 [manager.py:736] P2P node-1:5555: failed to open connection to node-2"
    )
    assert classify([tier]).kind is K.NONE
    assert classify(["RuntimeError: P2P access failed between GPU 0 and GPU 1"]).kind is K.DISTRIBUTED_ERROR


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # https://github.com/vllm-project/vllm/issues/10855 (ROCm on an MI210 in a pod)
        ("RuntimeError: HIP error: invalid argument", K.GPU_DRIVER_ERROR),
        # SYNTHETIC, in PyTorch's wording: any runtime error of the CUDA API, but for memory, a kernel's assertion and
        # what graph capture refuses
        ("RuntimeError: CUDA error: invalid configuration argument", K.GPU_DRIVER_ERROR),
        ("RuntimeError: CUDA error: device-side assert triggered", K.UNKNOWN_FAILURE),
        ("RuntimeError: CUDA error: operation not permitted when stream is capturing", K.UNKNOWN_FAILURE),
        # https://github.com/vllm-project/vllm/issues/4019 (MI250X, TP 2): ROCm's runtime aborting a queue
        (
            "(RayWorkerVllm pid=12470) :0:rocdevice.cpp            :2726: 1292301652939 us: [pid:12470 "
            "tid:0x7eeb82ffd700] Callback: Queue 0x7eebf4200000 aborting with error : HSA_STATUS_ERROR_EXCEPTION: An "
            "HSAIL operation resulted in a hardware exception. code: 0x1016",
            K.GPU_DRIVER_ERROR,
        ),
        # https://github.com/djangodevreng/dgx-spark-benchmarks (results/qwen-3.6/qwen-3.6-27b/fp8/_server-crash.log):
        # a CUTLASS kernel the GB10 could not run
        (
            "(EngineCore pid=293) ERROR 08-14 08:00:06 [core.py:1330] RuntimeError: cutlass_gemm_caller, "
            "/workspace/csrc/libtorch_stable/quantization/w8a8/cutlass/c3x/cutlass_gemm_caller.cuh:62, Error Internal",
            K.GPU_DRIVER_ERROR,
        ),
        # SYNTHETIC: a status of CUTLASS's that is the caller's, not the device's
        ("RuntimeError: cutlass_gemm_caller, cutlass_gemm_caller.cuh:62, Error Misaligned Operand", K.UNKNOWN_FAILURE),
        # https://github.com/bakhovaddinov/aibrix (pod.log): torch_npu's check of a call into Ascend's runtime
        (
            "ERROR 08-14 19:25:05 [multiproc_executor.py:597] RuntimeError: zero_:build/CMakeFiles/torch_npu.dir/"
            "compiler_depend.ts:26 NPU function error: call aclnnInplaceZero failed, error code is 561103",
            K.GPU_DRIVER_ERROR,
        ),
    ],
    ids=["hip", "cuda-any", "cuda-device-assert", "cuda-capture", "hsa", "cutlass", "cutlass-caller", "npu-function"],
)
def test_the_devices_runtime_errors(line: str, kind: FailureKind) -> None:
    assert classify([line]).kind is kind


def test_a_device_memory_code_under_torch_npus_check_is_the_oom() -> None:
    # SYNTHETIC, in torch_npu's and CANN's wording: the check's line first, CANN's account of the failure under it
    lines = [
        "RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:508 NPU function error: "
        "AclrtSynchronizeDeviceWithTimeout, error code is 507013",
        "[ERROR] 2025-11-10-01:25:12 (PID:5536, Device:0, RankID:-1) ERR00100 PTA call acl api failed",
        "EL0004: [PID: 5536] 2025-11-10-01:25:11.770.501 Failed to allocate memory.",
    ]
    assert classify(lines).kind in (K.CUDA_OOM_LOAD, K.CUDA_OOM_PROFILE, K.CUDA_OOM_RUNTIME)


@pytest.mark.parametrize(
    ("lines", "kind"),
    [
        # https://github.com/vllm-project/vllm/issues/7032 (8x MI300X): the Hub's CDN refused a range; the worker
        # vLLM then terminated reports its SIGTERM
        (
            [
                "[rank0]: huggingface_hub.utils._errors.HfHubHTTPError: 416 Client Error: Requested Range Not "
                "Satisfiable for url: https://cdn-lfs-us- .....",
                "ERROR 08-01 07:45:19 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 76 died, exit code: "
                "-15",
            ],
            K.MODEL_LOAD_ERROR,
        ),
        # https://github.com/OpenPipe/ART/issues/405: expandable segments with vLLM's sleep mode
        (["RuntimeError: torch.cuda.MemPool doesn't currently support expandable_segments."], K.BAD_ARGUMENTS),
        # SYNTHETIC, vLLM's own check (vllm/device_allocator/cumem.py)
        (["AssertionError: Expandable segments are not compatible with memory pool."], K.BAD_ARGUMENTS),
        # https://github.com/parsehawk/parsehawk/issues/6 (vllm-metal on a 16 GB Mac)
        (
            [
                "ValueError: Paged attention: not enough Metal memory for KV cache.",
                "metal_limit=14.30GB, fraction=0.5, usable_metal=7.15GB,",
                "kv_budget=-0.38GB.",
            ],
            K.KV_CACHE_INSUFFICIENT,
        ),
        # https://github.com/AlexGS74/glm47-nvfp4-sm120 (docs/vllm-sm120-nvfp4-working-state.md): vLLM's own report
        # of the allocator's OOM names the phase, a few lines below it
        (
            [
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB.",
                "GPU 3 has a total capacity of 94.97 GiB of which 1.69 GiB is free.",
                "...",
                "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests.",
            ],
            K.CUDA_OOM_PROFILE,
        ),
        # https://github.com/Alibaba-NLP/ZeroSearch/issues/11: in a container NVML lists the failing process too; it is
        # the smallest listed use that covers what its allocator reserved (600 MiB): the other holds the GPU
        (
            [
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 148.00 MiB. GPU 0 has a total capacity "
                "of 31.60 GiB of which 87.44 MiB is free. Process 441650 has 30.51 GiB memory in use. Process 449657 "
                "has 1022.00 MiB memory in use. Of the allocated memory 594.01 MiB is allocated by PyTorch, and 5.99 "
                "MiB is reserved by PyTorch but unallocated."
            ],
            K.VRAM_HELD,
        ),
    ],
    ids=["hub-http", "mempool", "cumem-assert", "metal-kv", "sampler-report", "container-listed"],
)
def test_what_a_start_up_failure_names(lines: list[str], kind: FailureKind) -> None:
    assert classify(lines).kind is kind


def test_the_engines_death_at_start_up_after_it_raised_is_what_it_raised() -> None:
    # https://github.com/vllm-project/vllm/issues/16150 (shortened): the profile run raises, then the front end reports
    # the engine's death and kills its processes
    raised = [
        "ERROR 04-07 10:56:15 [core.py:390] EngineCore hit an exception: Traceback (most recent call last):",
        'ERROR 04-07 10:56:15 [core.py:390]   File "/usr/local/lib/python3.10/dist-packages/vllm/v1/engine/core.py", '
        "line 132, in _initialize_kv_caches",
        "ERROR 04-07 10:56:15 [core.py:390]     available_gpu_memory = self.model_executor.determine_available_memory()",
        'ERROR 04-07 10:56:15 [core.py:390]   File "/usr/local/lib/python3.10/dist-packages/vllm/v1/executor/'
        'multiproc_executor.py", line 123, in collective_rpc',
        "ERROR 04-07 10:56:15 [core.py:390]     raise result",
        "ERROR 04-07 10:56:15 [core.py:390] ValueError: too many values to unpack (expected 12)",
        "CRITICAL 04-07 10:56:15 [core_client.py:359] Got fatal signal from worker processes, shutting down. See stack "
        "trace above for root cause issue.",
        "Killed",
    ]
    assert classify(raised).kind is K.UNKNOWN_FAILURE
    # the same after the server came up (its later wording of the start) is the engine dying while serving
    up = "(APIServer pid=1) INFO 04-07 10:50:00 [api_server.py:596] Starting vLLM server on http://0.0.0.0:8000"
    served = [up, *(line.replace("_initialize_kv_caches", "step") for line in raised)]
    served = [line for line in served if "determine_available_memory" not in line]
    assert classify(served).kind is K.ENGINE_DEAD


def test_a_fatal_signal_is_read_through_the_frames_faulthandler_printed() -> None:
    # https://github.com/vllm-project/vllm/issues/6918 (shortened): a Ray worker crashes inside NCCL's all-reduce
    crash = [
        "(RayWorkerWrapper pid=5993) *** SIGSEGV received at time=1722289279 on cpu 61 ***",
        "(RayWorkerWrapper pid=5993) PC: @     0x7f0c73d2944a  (unknown)  addProxyOpIfNeeded()",
        "(RayWorkerWrapper pid=5993) Fatal Python error: Segmentation fault",
        "(RayWorkerWrapper pid=5993)",
        "(RayWorkerWrapper pid=5993) Stack (most recent call first):",
        '(RayWorkerWrapper pid=5993)   File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/'
        'device_communicators/pynccl_wrapper.py", line 257 in ncclAllReduce',
        '(RayWorkerWrapper pid=5993)   File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/'
        'device_communicators/pynccl.py", line 118 in all_reduce',
        "(RayWorkerWrapper pid=5993)",
    ]
    assert classify(crash).kind is K.DISTRIBUTED_ERROR
    # https://github.com/vllm-project/vllm/issues/3053 (shortened): a crash in CUDA graph capture names no kind
    capture = [
        "Fatal Python error: Segmentation fault",
        "",
        "Stack (most recent call first):",
        '  File "/root/.conda/envs/py39/lib/python3.9/site-packages/torch/cuda/graphs.py", line 77 in capture_begin',
        '  File "/root/.conda/envs/py39/lib/python3.9/site-packages/vllm/worker/model_runner.py", line 725 in '
        "capture_model",
    ]
    assert classify(capture).kind is K.UNKNOWN_FAILURE
    # only the crashing thread's stack counts: another thread waiting in NCCL says nothing of the crash
    other = ["Fatal Python error: Segmentation fault", "", "Thread 0x00007f0c1b7fe640 (most recent call first):"]
    other += [*crash[5:7], "", "Current thread 0x00007f0d3a2a9740 (most recent call first):", *capture[3:]]
    assert classify(other).kind is K.UNKNOWN_FAILURE


@pytest.mark.parametrize(
    "line",
    [
        # https://github.com/ROCm/ROCm/issues/5680 (an RX 7800 XT, gfx1101, with AMD's aiter)
        'vllm-ovis  | (APIServer pid=1) RuntimeError: Get GPU arch from rocminfo failed "Unknown GPU architecture: '
        "gfx1101. Supported architectures: ['native', 'gfx90a', 'gfx908', 'gfx940', 'gfx941', 'gfx942', 'gfx945', "
        "'gfx1100', 'gfx950']\"",
        # SYNTHETIC, in rocBLAS's wording
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : "
        "gfx1103",
    ],
    ids=["aiter", "rocblas"],
)
def test_a_kernel_library_built_without_the_gpus_architecture(line: str) -> None:
    assert classify([line]).kind is K.GPU_DRIVER_ERROR


# SYNTHETIC, in the wordings of Ray (python/ray/_private/services.py), PyTorch's TCPStore, gloo
# (gloo/transport/tcp/device.cc) and requests: a cluster not there, ranks that never joined, an interface that is not
# there, a Hub that does not answer
_CLUSTER = [
    (
        "ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting "
        "`--address` flag or `RAY_ADDRESS` environment variable.",
        K.DISTRIBUTED_ERROR,
    ),
    ("RuntimeError: Timed out after 1800 seconds waiting for clients. 1/2 clients joined.", K.DISTRIBUTED_ERROR),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to "
        "find address for: eth0",
        K.DISTRIBUTED_ERROR,
    ),
    (
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
        "exceeded with url: /api/models/Qwen/Qwen2.5-7B (Caused by NewConnectionError",
        K.MODEL_LOAD_ERROR,
    ),
]
_CLUSTER_IDS = ["ray-not-running", "store-clients", "gloo-ifname", "hub-unreachable"]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # SYNTHETIC, in numpy's wording (numpy/_core/_exceptions.py _ArrayMemoryError): host memory
        (
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.00 GiB for an array with shape (1024, "
            "786432) and data type float32",
            K.HOST_OOM_KILLED,
        ),
        # SYNTHETIC, in transformers' wording (models/auto/auto_factory.py): a config type with no model class
        (
            "ValueError: Unrecognized configuration class <class 'transformers.models.foo.FooConfig'> for this kind "
            "of AutoModel: AutoModelForCausalLM.",
            K.MODEL_LOAD_ERROR,
        ),
        # SYNTHETIC, in PyTorch's wording (torch/nn/modules/module.py load_state_dict): a checkpoint that does not fit
        ("RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:", K.MODEL_LOAD_ERROR),
        # SYNTHETIC, in vLLM's wording (vllm/transformers_utils/config.py): transformers asked for trust_remote_code
        (
            "RuntimeError: Failed to load the model config. If the model is a custom model not yet available in the "
            "HuggingFace transformers library, consider setting `trust_remote_code=True` in LLM or using the "
            "`--trust-remote-code` flag in the CLI.",
            K.BAD_ARGUMENTS,
        ),
        # SYNTHETIC, in docker's wording: no NVIDIA runtime to hand the GPUs to the container
        (
            'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
            K.GPU_DRIVER_ERROR,
        ),
        *_CLUSTER,
    ],
    ids=["numpy-array", "auto-config", "state-dict", "trust-remote-code", "docker-no-gpu-runtime", *_CLUSTER_IDS],
)
def test_what_the_libraries_under_vllm_say(line: str, kind: FailureKind) -> None:
    assert classify([line]).kind is kind


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # SYNTHETIC, in Intel's runtimes' wordings (unified-runtime, level-zero) and Gaudi's PyTorch bridge
        ("RuntimeError: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", K.CUDA_OOM_RUNTIME),
        (
            "RuntimeError: level_zero backend failed with error: 39 (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
            K.CUDA_OOM_RUNTIME,
        ),
        (
            "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::1073741824 (1024)MB",
            K.CUDA_OOM_RUNTIME,
        ),
        # the device taken by another process or gone, as Gaudi's runtime says it
        ("RuntimeError: synStatus=26 [Generic failure] Device acquire failed.", K.GPU_DRIVER_ERROR),
    ],
    ids=["ur", "level-zero", "gaudi-devmem", "gaudi-acquire"],
)
def test_other_accelerators_memory_and_devices(line: str, kind: FailureKind) -> None:
    assert classify([line]).kind is kind


def test_vllms_warning_that_its_ops_did_not_import_is_one_it_goes_on_from() -> None:
    # https://github.com/xbill9/gemma4-tips-aws (remote_vllm_logs.txt, shortened): on a Neuron host every start warns
    # that vllm._C needs libcuda.so.1; what ends the start comes later
    warned = (
        "(APIServer pid=41) WARNING 06-24 15:21:32 [interface.py:225] Failed to import from vllm._C: "
        "ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')"
    )
    later = "(EngineCore_DP0 pid=214) subprocess.CalledProcessError: Command '' died with <Signals.SIGHUP: 1>."
    assert classify([warned, later]).kind is K.UNKNOWN_FAILURE
    # the loader's own failure to find the driver's library is still the driver's
    loader = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"
    assert classify([loader]).kind is K.GPU_DRIVER_ERROR


def test_a_moe_backend_that_cannot_run_the_model_is_the_flags() -> None:
    # https://github.com/99sono/DockerBuildFiles (gemma-4-26b-5090 .../07_vllm_crash.md)
    line = (
        "(EngineCore pid=196) ERROR 04-19 10:55:33 [core.py:1132] ValueError: NvFp4 MoE backend 'FLASHINFER_CUTLASS' "
        "does not support the deployment configuration since kernel does not support MoEActivation.GELU activation."
    )
    assert classify([line]).kind is K.BAD_ARGUMENTS


@pytest.mark.parametrize(
    "line",
    [
        # SYNTHETIC, in libtpu's wording: a second process opens the chips' VFIO group (TPU VMs v4 and later)
        "RuntimeError: Bad StatusOr access: UNKNOWN: TPU initialization failed: open(/dev/vfio/0): Device or resource "
        "busy: Device or resource busy; Couldn't open iommu group /dev/vfio/0",
        # SYNTHETIC, in libtpu's wording when it finds another process's lock first
        "jax.errors.JaxRuntimeError: ABORTED: The TPU is already in use by process with pid 27846. Not attempting to "
        "load libtpu.so in this process.",
        # SYNTHETIC: an older TPU VM's device node
        "RuntimeError: TPU initialization failed: open(/dev/accel0): Device or resource busy",
    ],
    ids=["vfio", "libtpu-lock", "accel"],
)
def test_a_tpu_another_process_holds_is_held_not_broken(line: str) -> None:
    failure = classify([line])
    assert failure.kind is K.VRAM_HELD
    assert "lsof" in failure.hint


def test_device_or_resource_busy_elsewhere_is_not_a_held_tpu() -> None:
    # SYNTHETIC: EBUSY on a mount or a file is no accelerator held by another process
    assert classify(["OSError: [Errno 16] Device or resource busy: '/models/cache'"]).kind is not K.VRAM_HELD


# SYNTHETIC, in the format of vLLM 0.15's OpenAI server (vllm/entrypoints/openai/engine/serving.py): a request longer
# than max_model_len, refused with 400 while the server goes on
_REFUSED = [
    "(APIServer pid=3210) INFO:     Application startup complete.",
    "(APIServer pid=3210) ERROR 02-21 16:58:46 [serving.py:323] Error in preprocessing prompt inputs",
    "(APIServer pid=3210) ERROR 02-21 16:58:46 [serving.py:323] Traceback (most recent call last):",
    '(APIServer pid=3210) ERROR 02-21 16:58:46 [serving.py:323]   File "/v/vllm/entrypoints/openai/engine/serving.py", '
    "line 1084, in _validate_input",
    "(APIServer pid=3210) ERROR 02-21 16:58:46 [serving.py:323]     raise VLLMValidationError(",
    "(APIServer pid=3210) ERROR 02-21 16:58:46 [serving.py:323] vllm.exceptions.VLLMValidationError: This model's "
    "maximum context length is 16384 tokens. However, your request has 19069 input tokens. Please reduce the length "
    "of the input messages. (parameter=input_tokens, value=19069)",
]


def test_a_request_vllm_refused_is_no_failure_of_the_server() -> None:
    assert classify(_REFUSED).kind is K.NONE
    # the same traceback without the handler's message is an exception nothing says was caught
    uncaught = [line for line in _REFUSED if "preprocessing" not in line]
    assert classify(uncaught).kind is K.UNKNOWN_FAILURE
    # ... unless the server answered a request after it: a process that answers is alive
    answered = '(APIServer pid=3210) INFO:     127.0.0.1:42876 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request'
    assert classify([*uncaught, answered]).kind is K.NONE
    # a 5xx answer says nothing of the kind (a dead engine answers 500 too)
    failed = answered.replace("400 Bad Request", "500 Internal Server Error")
    assert classify([*uncaught, failed]).kind is K.UNKNOWN_FAILURE


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # SYNTHETIC, as a model's load_weights raises them (params_dict[name]) when the checkpoint holds a tensor the
        # model's code has no parameter for: a layer's index, or a parameter's ending
        ("KeyError: 'layers.11.mlp.down_proj.weight'", K.MODEL_LOAD_ERROR),
        ("KeyError: 'model.layers.0.mlp.experts.w2_weight_scale_inv'", K.MODEL_LOAD_ERROR),
        ("KeyError: 'visual.blocks.0.attn.qkv.weight'", K.MODEL_LOAD_ERROR),
        ("KeyError: 'lm_head.weight'", K.MODEL_LOAD_ERROR),
        ("KeyError: 'transformer.h.0'", K.MODEL_LOAD_ERROR),
        # no parameter's name: a file, a config key, an environment variable
        ("KeyError: 'tokenizer.json'", K.UNKNOWN_FAILURE),
        ("KeyError: 'architectures'", K.UNKNOWN_FAILURE),
        ("KeyError: 'CUDA_VISIBLE_DEVICES'", K.UNKNOWN_FAILURE),
    ],
)
def test_a_keyerror_names_a_parameter_when_the_checkpoint_does_not_match_the_model(
    line: str, kind: FailureKind
) -> None:
    failure = classify([f"(EngineCore_DP0 pid=7) ERROR 03-02 10:00:01 [core.py:700] {line}"])
    assert failure.kind is kind
    if kind is K.MODEL_LOAD_ERROR:
        assert failure.phase is Phase.LOAD


def test_a_placement_group_ray_can_never_create_is_the_clusters() -> None:
    # https://github.com/vllm-project/aibrix/issues/927 (two nodes, TP 2; the specs shortened)
    waiting = (
        "INFO 04-01 02:47:00 ray_utils.py:214] Waiting for creating a placement group of specs for 70 seconds. "
        "specs=[{'node:10.163.194.101': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` to see if you have "
        "enough resources, and make sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP environment "
        "variable specified in each node if you are running on a multi-node."
    )
    # https://github.com/vllm-project/vllm/issues/8908 (Ray's autoscaler; its colour codes dropped) and
    # https://github.com/ray-project/ray/issues/20968 (the older wording)
    infeasible = (
        "(autoscaler +21m12s) Error: No available node types can fulfill resource request {'node:10.2.0.127': 0.001, "
        "'GPU': 1.0}. Add suitable node types to this cluster to resolve this issue."
    )
    older = (
        "2021-12-08 02:08:11,690 WARNING resource_demand_scheduler.py:731 -- The autoscaler could not find a node type "
        "to satisfy the request: [{'bundle_group_f603e2de7cd8965a3e9e30f6357dbb7b': 0.001}]."
    )
    for lines in ([waiting], [infeasible], [older], [infeasible, waiting]):
        assert classify(lines).kind is K.DISTRIBUTED_ERROR
    # a cluster that gained the GPUs and went on to serve: a wait, not a failure
    served = "INFO 04-01 02:50:00 metrics.py:351] Avg prompt throughput: 12.0 tokens/s, Avg generation throughput: 3.0"
    assert classify([waiting, served]).kind is K.NONE


def test_hccls_own_error_lines_are_the_collective_layers() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/1815 (DP 4 x TP 4 on 16 Ascend 910B)
    line = (
        "[ERROR] HCCL(38011,python):2025-07-15-12:47:33.021.978 [hccl_socket_manager.cc:601] [87033]the connection "
        "failure between this device and target device may be due to the following reasons:"
    )
    assert classify([line]).kind is K.DISTRIBUTED_ERROR


def test_a_chat_template_that_refused_a_request_is_no_failure_of_the_server() -> None:
    # https://github.com/fmedeiros58/KnexIt-Workspace (vllm.log, vLLM 0.11.0; shortened): the template's own check, logged
    # where it is rendered; vLLM answers the request 400 and serves on
    lines = [
        "(APIServer pid=7565) INFO:     Application startup complete.",
        "(APIServer pid=7565) ERROR 02-27 15:15:38 [chat_utils.py:1645] An error occurred in `transformers` while "
        "applying chat template",
        "(APIServer pid=7565) ERROR 02-27 15:15:38 [chat_utils.py:1645] Traceback (most recent call last):",
        '(APIServer pid=7565) ERROR 02-27 15:15:38 [chat_utils.py:1645]   File "/v/vllm/entrypoints/chat_utils.py", '
        "line 1632, in apply_hf_chat_template",
        "(APIServer pid=7565) ERROR 02-27 15:15:38 [chat_utils.py:1645]     return tokenizer.apply_chat_template(",
        "(APIServer pid=7565) ERROR 02-27 15:15:38 [chat_utils.py:1645] jinja2.exceptions.TemplateError: Conversation "
        "roles must alternate user/assistant/user/assistant/...",
    ]
    assert classify(lines).kind is K.NONE


def test_a_program_that_ended_while_loading_without_a_word_is_an_unknown_failure() -> None:
    # https://github.com/atreydesai/augmented-mcqa (vllm_output.log, vLLM 0.11.2; shortened): the last milestone is of
    # loading the weights, then Python's resource tracker reports what the ended program left behind
    loading = (
        "(EngineCore_DP0 pid=1368984) INFO 05-08 00:37:14 [gpu_model_runner.py:3476] Starting to load model "
        "cyankiwi/Qwen3-30B-A3B-Thinking-2507-AWQ-8bit..."
    )
    ended = (
        "/fs/miniconda3/lib/python3.12/multiprocessing/resource_tracker.py:254: UserWarning: resource_tracker: There "
        "appear to be 1 leaked semaphore objects to clean up at shutdown"
    )
    failure = classify([loading, ended])
    assert (failure.kind, failure.phase, failure.confidence) == (K.UNKNOWN_FAILURE, Phase.LOAD, Confidence.LOW)
    # a paste cut while loading says nothing of an end; an end after serving is a server that stopped
    assert classify([loading]).kind is K.NONE
    serving = "(APIServer pid=1) INFO 05-08 00:40:00 [loggers.py:123] Engine 000: Avg prompt throughput: 10.0 tokens/s"
    assert classify([loading, serving, ended]).kind is K.NONE


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # https://github.com/intel/llm-scaler/issues/152 (an XPU build serving GPT-OSS): the GPU was lost
        (
            "(EngineCore_DP0 pid=2390) ERROR 11-06 19:52:03 [core.py:718] RuntimeError: Native API failed. Native API "
            "returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
            K.GPU_DRIVER_ERROR,
        ),
        # SYNTHETIC: torch_npu's lookup of a CANN function an older toolkit lacks (vllm-ascend issue 1401 names
        # aclmdlRICaptureBegin with CANN 8.1.RC1)
        ("RuntimeError: Failed to find function aclmdlRICaptureBegin", K.GPU_DRIVER_ERROR),
        # https://github.com/UKGovernmentBEIS/inspect_ai/issues/1799 (a launcher's word for the server it started)
        (
            "[05/05/25 18:08:24] ERROR    Server process exited unexpectedly with code 1. Try rerunning with "
            "local_server.py:214",
            K.UNKNOWN_FAILURE,
        ),
        # SYNTHETIC: a supervisor's words for a child's exit status
        ("worker exited with exit code 136", K.UNKNOWN_FAILURE),
        ("worker exited with exit code 0", K.NONE),
    ],
    ids=["ur-device-lost", "cann-function", "launcher-exit", "exit-code-136", "exit-code-0"],
)
def test_runtimes_and_launchers_say_what_ended_the_process(line: str, kind: FailureKind) -> None:
    assert classify([line]).kind is kind


@pytest.mark.parametrize(
    ("lines", "kind"),
    [
        # https://github.com/gpustack/gpustack/issues/5181 (a node's Ray never joined; the later wording of the wait's end)
        (
            [
                "(EngineCore_DP0 pid=89) ERROR 04-20 18:08:14 [core.py:1100] ValueError: Cannot provide a placement "
                "group requiring 4.0 GPUs (placement_group_specs=[{'node:172.16.11.65': 0.001, 'GPU': 1.0}, {'GPU': "
                "1.0}, {'GPU': 1.0}, {'GPU': 1.0}]) within 1800 seconds."
            ],
            K.DISTRIBUTED_ERROR,
        ),
        # https://github.com/vllm-project/vllm-ascend/issues/486 (a collective queued as an operator timed out)
        (
            [
                "[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function "
                "error: HcclAllreduce, error code is 6",
                "[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api "
                "failed.",
            ],
            K.DISTRIBUTED_ERROR,
        ),
        # https://github.com/vllm-project/vllm/issues/9865 (NVML asked for a device index it does not have)
        (
            [
                "ERROR 01-22 15:13:59 worker_base.py:467]     raise NVMLError(ret)",
                "ERROR 01-22 15:13:59 worker_base.py:467] pynvml.NVMLError_InvalidArgument: Invalid Argument",
            ],
            K.GPU_DRIVER_ERROR,
        ),
        # https://github.com/vllm-project/vllm-ascend/issues/16654 (a kernel fault on the NPU's cores while serving)
        (
            [
                "(Worker_TP11_DCP11_EP11 pid=2640) ERROR 09-02 05:45:09 [multiproc_executor.py:987]         The error "
                "from device(chipId:5, dieId:1), serial number is 7, there is an exception of fftsplus aicore error, "
                "core id is 14, error code = 0, dump info: pc start: 0x12c0c136b000"
            ],
            K.GPU_DRIVER_ERROR,
        ),
        # https://github.com/vllm-project/vllm-ascend/issues/3843 (nothing left for the KV cache after the weights)
        (
            [
                "(Worker_TP2 pid=554) INFO 10-28 21:14:48 [worker_v1.py:259] Available memory: 0, total memory: "
                "65452113920",
                "(EngineCore_DP0 pid=415) ERROR 10-28 21:14:49 [core.py:708] EngineCore failed to start.",
            ],
            K.KV_CACHE_INSUFFICIENT,
        ),
        # https://github.com/alint77/jupiter-glm52-vllm-worklog (baseline/failed-slurm-affinity-server.err; shortened)
        (
            [
                "(APIServer pid=147522) Traceback (most recent call last):",
                '(APIServer pid=147522)   File "/e/vllm/vllm/utils/numa_utils.py", line 254, in _get_numa_node',
                "(APIServer pid=147522)     raise RuntimeError(",
                "(APIServer pid=147522) RuntimeError: NUMA binding was requested, but vLLM could not detect the "
                "GPU-to-NUMA topology automatically. Pass --numa-bind-nodes explicitly or disable --numa-bind.",
            ],
            K.BAD_ARGUMENTS,
        ),
    ],
    ids=[
        "placement-group-requiring",
        "hccl-operator",
        "nvml-invalid-argument",
        "npu-core-exception",
        "npu-kv-zero",
        "numa-bind",
    ],
)
def test_cluster_device_and_binding_reports_name_their_kind(lines: list[str], kind: FailureKind) -> None:
    assert classify(lines).kind is kind


def test_nvml_refusing_what_a_gpu_lacks_is_no_driver_failure() -> None:
    # SYNTHETIC, after vllm/platforms/cuda.py (0.4-0.6): NVLink detection logs NVML's refusal with its traceback and
    # goes on, as on any GPU without NVLink
    lines = [
        "ERROR 05-01 10:00:00 cuda.py:120] NVLink detection failed. This is normal if your machine has no NVLink "
        "equipped.",
        "Traceback (most recent call last):",
        '  File "/v/vllm/platforms/cuda.py", line 115, in is_full_nvlink',
        "    p2p_status = pynvml.nvmlDeviceGetP2PStatus(handle, peer_handle, pynvml.NVML_P2P_CAPS_INDEX_NVLINK)",
        "pynvml.NVMLError_NotSupported: Not Supported",
    ]
    assert classify(lines).kind is not K.GPU_DRIVER_ERROR


def test_an_exception_group_is_read_through_its_members() -> None:
    # https://github.com/vllm-project/vllm/issues/4553 (shortened): starlette's task group wraps what the engine loop
    # raised; Python prints the member's traceback inside the group's "| " margin
    lines = [
        'INFO:     127.0.0.1:60772 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
        "ERROR:    Exception in ASGI application",
        "  + Exception Group Traceback (most recent call last):",
        '  |   File "/opt/venv/lib/python3.10/site-packages/anyio/_backends/_asyncio.py", line 678, in __aexit__',
        "  |     raise BaseExceptionGroup(",
        "  | exceptiongroup.ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
        "  +-+---------------- 1 ----------------",
        "    | Traceback (most recent call last):",
        '    |   File "/home/ubuntu/vllm/vllm/engine/async_llm_engine.py", line 39, in _raise_exception_on_finish',
        "    |     task.result()",
        '    |   File "/home/ubuntu/vllm/vllm/worker/neuron_model_runner.py", line 72, in _prepare_prompt',
        "    |     assert len(block_table) == 1",
        "    | AssertionError",
        "    +------------------------------------",
    ]
    failure = classify(lines)
    assert (failure.kind, failure.evidence) == (K.ENGINE_DEAD, ("AssertionError",))
    # a group whose members the paste lost is still a failure
    assert classify(lines[:6]).kind is K.UNKNOWN_FAILURE


_MODEL_BUILD = [
    # https://github.com/QwenLM/Qwen3-VL/issues/1204 (vLLM V1; shortened): the excerpt stops inside the model's
    # constructor, before the exception
    'ERROR 05-13 21:09:41 [core.py:396]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/'
    'model_loader/loader.py", line 133, in _initialize_model',
    "ERROR 05-13 21:09:41 [core.py:396]     return model_class(vllm_config=vllm_config, prefix=prefix)",
    'ERROR 05-13 21:09:41 [core.py:396]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/'
    'qwen2.py", line 443, in __init__',
    "ERROR 05-13 21:09:41 [core.py:396]     self.lm_head = ParallelLMHead(config.vocab_size,",
    'ERROR 05-13 21:09:41 [core.py:396]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/'
    'vocab_parallel_embedding.py", line 459, in __init__',
    "ERROR 05-13 21:09:41 [core.py:396]     super().__init__(num_embeddings, embedding_dim, params_dtype,",
]


def test_a_traceback_cut_while_the_model_is_built_is_a_guess_of_weights_that_do_not_fit() -> None:
    failure = classify(_MODEL_BUILD)
    assert (failure.kind, failure.phase, failure.confidence, failure.basis) == (
        K.CUDA_OOM_LOAD,
        Phase.LOAD,
        Confidence.LOW,
        Basis.FRAME,
    )
    # its exception line, where the paste kept it, names the cause (SYNTHETIC: a config the model code refuses)
    refused = classify(
        [
            *_MODEL_BUILD,
            "ERROR 05-13 21:09:41 [core.py:396] AttributeError: 'Qwen2Config' object has "
            "no attribute 'rope_scaling_type'",
        ]
    )
    assert refused.kind is K.MODEL_LOAD_ERROR


@pytest.mark.parametrize(
    ("lines", "kind"),
    [
        # https://github.com/vllm-project/vllm-ascend/issues/1127 (shortened): a tensor made under the loader's device
        # context while the model was built
        (
            [
                '(NPURayWorkerWrapper pid=45464) ERROR 06-09 06:57:48 worker_base.py:581]   File "/usr/local/python3.10'
                '.17/lib/python3.10/site-packages/torch/utils/_device.py", line 106, in __torch_function__',
                "(NPURayWorkerWrapper pid=45464) ERROR 06-09 06:57:48 worker_base.py:581] RuntimeError: NPU out of "
                "memory. Tried to allocate 30.00 MiB (NPU 3; 60.96 GiB total capacity; 60.34 GiB already allocated; "
                "60.34 GiB current active; 14.24 MiB free; 60.60 GiB reserved in total by PyTorch)",
            ],
            K.CUDA_OOM_LOAD,
        ),
        # https://github.com/vllm-project/vllm/issues/15685: the paste kept only the second sentence of AutoConfig's
        # refusal of an unknown model type
        (
            [
                "You can update Transformers with the command `pip install --upgrade transformers`. If this does not "
                "work, and the checkpoint is very new, then there may not be a release version that supports this "
                "model yet."
            ],
            K.MODEL_LOAD_ERROR,
        ),
        # https://github.com/vllm-project/vllm-omni/issues/917
        (
            ["ValueError: No tokenizer file found in directory: /hdd2/ltg/Qwen3-Omni-30B-A3B-Instruct"],
            K.MODEL_LOAD_ERROR,
        ),
        # https://github.com/vllm-project/vllm/issues/1738 (a CUDA 12 build beside a CUDA 11.8 torch)
        (
            ["ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"],
            K.GPU_DRIVER_ERROR,
        ),
        # https://github.com/vllm-project/vllm/issues/1116 (vLLM started inside Ray Serve's placement group)
        (
            [
                '(ServeController pid=2645112)   File "/envs/z2/lib/python3.10/site-packages/vllm/engine/ray_utils.py", '
                "line 101, in initialize_cluster",
                "(ServeController pid=2645112)     raise ValueError(",
                "(ServeController pid=2645112) ValueError: Placement group bundle cannot have more than 1 GPU.",
            ],
            K.DISTRIBUTED_ERROR,
        ),
        # https://github.com/vllm-project/vllm-ascend/issues/16652 (the user's lines of CANN's report)
        (
            [
                "The error from device(chipId:0..7, dieId:0), serial number is …,",
                "hccl fftsplus task timeout occurred during task execution,",
            ],
            K.DISTRIBUTED_ERROR,
        ),
        # https://github.com/kserve/kserve/issues/3769 (the launcher's word, with nothing of why)
        (
            [
                "2024-07-10 18:06:56.118 1 kserve ERROR [__main__.py:<module>():254] Failed to start model server: "
                "integer division or modulo by zero"
            ],
            K.UNKNOWN_FAILURE,
        ),
        # https://github.com/vllm-project/tpu-inference (a rank of a multi-rank launch left with no chip; shortened)
        (
            [
                "(EngineCore pid=733504) ERROR 06-26 02:43:45 [core.py:1231] RuntimeError: Unable to initialize backend "
                "'tpu': FAILED_PRECONDITION: TPU initialization failed: No TPU devices found after filtering"
            ],
            K.GPU_DRIVER_ERROR,
        ),
    ],
    ids=[
        "device-context-oom",
        "transformers-unknown-type-tail",
        "no-tokenizer-file",
        "libcudart",
        "ray-serve-bundle",
        "hccl-fftsplus-timeout",
        "launcher-failed-to-start",
        "no-tpu-devices",
    ],
)
def test_more_texts_name_their_kind(lines: list[str], kind: FailureKind) -> None:
    assert classify(lines).kind is kind


def test_an_import_warning_before_the_banner_is_got_past_by_a_server_that_served() -> None:
    # SYNTHETIC, after a vllm-project/tpu-inference log (a TPU host: vLLM's CUDA ops cannot import, and it goes on)
    warning = (
        "WARNING 06-26 20:23:21 [interface.py:358] Failed to import from vllm._C: ImportError('libcuda.so.1: cannot "
        "open shared object file: No such file or directory')"
    )
    banner = "(APIServer pid=1) INFO 06-26 20:23:22 [api_server.py:1] vLLM API server version 0.23.1"
    served = '(APIServer pid=1) INFO:     127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK'
    assert classify([warning, banner, served]).kind is K.NONE
    assert classify([warning, banner]).kind is K.GPU_DRIVER_ERROR  # nothing else explains a start that went no further


_PROFILE_RUN = [
    # https://github.com/vllm-project/vllm/issues/17631 (vLLM V1; shortened): the excerpt stops in the profile run
    '(VllmWorker rank=4 pid=555) ERROR 05-04 12:38:38 [multiproc_executor.py:380]   File "/opt/conda/lib/python3.11/'
    'site-packages/vllm/v1/worker/gpu_worker.py", line 157, in determine_available_memory',
    "(VllmWorker rank=4 pid=555) ERROR 05-04 12:38:38 [multiproc_executor.py:380]     self.model_runner.profile_run()",
]


def test_a_traceback_cut_in_the_profile_run_is_a_guess_of_an_oom_there() -> None:
    failure = classify(_PROFILE_RUN)
    assert (failure.kind, failure.phase, failure.confidence) == (K.CUDA_OOM_PROFILE, Phase.PROFILE, Confidence.LOW)
    # SYNTHETIC: cut where vLLM sizes the KV cache (its own check of the length may be what raised): no guess
    sizing = [
        '  File "/v/vllm/v1/engine/core.py", line 142, in _initialize_kv_caches',
        "    kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs, available_gpu_memory)",
        '  File "/v/vllm/v1/core/kv_cache_utils.py", line 1091, in get_kv_cache_configs',
        "    _check_enough_kv_cache_memory(",
    ]
    assert classify(sizing).kind is not K.CUDA_OOM_PROFILE
