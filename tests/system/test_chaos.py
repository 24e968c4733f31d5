"""The guard SIGKILLed at random moments while it heals a memory failure, on a real systemd.

systemd brings the guard back after its RestartSec (5 s) and, meanwhile, restarts vLLM on whatever flags the
env file holds; the guard, back, reads the starts it missed from the journal. Each run must end healthy on
exactly the flags the same scenario ends on without faults: never lower (a failure of a start that ran on flags
the guard has already stepped past is no reason for another step), never a step lost.

Each scenario runs with 5 seeds, at least 3 kills each; the seed picks the moments. Seed 0 is the same
scenario without faults: it proves the flags expected are the ones it ends on undisturbed.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.system.harness import Q7, Q14, Q14_AWQ, GuardBox, add_model, flag, settle, start

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
PORT = 8000
SEEDS = (0, 1, 2, 3, 4, 5)  # 0: no kills
KILLS = 3
GUARD_RESTART_S = 5.0  # RestartSec= of units/vllm-guard.service


@dataclass(frozen=True)
class Scenario:
    flags: dict[str, object]
    env: dict[str, str] = field(default_factory=dict)
    expect: dict[str, str] = field(default_factory=dict)  # flag -> the value it ends on without faults
    model: str = Q7
    fallback: str | None = None
    expect_model: str | None = None  # the folder name the env file ends on
    load: bool = False  # chat traffic all along (the failure happens under load)


SCENARIOS = {
    # KV cache 1.62 GiB < 32768 tokens: one step, to 5 % under vLLM's estimate of 30240
    "kv": Scenario({"gpu_memory_utilization": 0.7, "max_model_len": 32768}, expect={"max-model-len": "28720"}),
    # CUDA-graph capture needs 0.5 GiB beyond util x total with 1 GiB held by the context: util steps down
    "profile": Scenario(
        {"gpu_memory_utilization": 0.95, "max_model_len": 8192},
        env={"VLLM_EMU_CUDA_RESERVED_MIB": "1024"},
        expect={"gpu-memory-utilization": "0.91", "max-model-len": "8192"},
    ),
    # the engine dies at its 3rd request while max_num_seqs > 16: three halvings, 128 -> 16
    "runtime": Scenario(
        {"gpu_memory_utilization": 0.9, "max_model_len": 8192, "max_num_seqs": 128},
        env={"VLLM_EMU_MODE": "oom_under_load", "VLLM_EMU_FAIL_AT_REQUEST": "3", "VLLM_EMU_SEQS_LIMIT": "16"},
        expect={"max-num-seqs": "16", "gpu-memory-utilization": "0.9"},
        load=True,
    ),
    # the weights do not fit: the quantized fallback
    "load": Scenario(
        {"max_model_len": 8192},
        model=Q14,
        fallback=Q14_AWQ,
        expect={"quantization": "awq", "max-model-len": "8192"},
        expect_model="fallback",
    ),
}


@pytest.fixture
def traffic(gbox: GuardBox) -> Iterator[threading.Event]:
    """Chat requests every 0.3 s while set (a server under load)."""
    on, stop = threading.Event(), threading.Event()

    def run() -> None:
        while not stop.is_set():
            if on.is_set():
                gbox.chat(PORT, "qwen", timeout=3)
            time.sleep(0.3)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    yield on
    stop.set()
    t.join(timeout=10)


def kill_guard_at(gbox: GuardBox, moments: list[float], t0: float) -> int:
    """SIGKILL the guard at each moment (seconds after t0) once it runs again; how many kills landed."""
    landed = 0
    for at in moments:
        time.sleep(max(0.0, t0 + at - time.monotonic()))

        def running() -> bool | None:
            return gbox.unit_state("vllm-guard")["ActiveState"] == "active" or None

        gbox.box.wait_until("the guard to run again", running, timeout=30)
        gbox.box.systemctl("kill", "--signal=SIGKILL", "vllm-guard.service")
        landed += 1
    return landed


def ended_on(gbox: GuardBox, sc: Scenario, model: str) -> bool:
    if gbox.unit_state(UNIT).get("ActiveState") != "active":
        return False
    if any(flag(gbox, UNIT, k) != v for k, v in sc.expect.items()):
        return False
    return gbox.env_file(UNIT).get("VLLM_GUARD_MODEL") == model and gbox.chat(PORT, "qwen", timeout=3) == 200


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_guard_killed_at_random_moments_still_ends_on_the_scenarios_flags(
    gbox: GuardBox, traffic: threading.Event, name: str, seed: int
) -> None:
    sc = SCENARIOS[name]
    model = add_model(gbox, "qwen", sc.model)
    extra: dict[str, object] = {"served_model_name": "qwen"}
    end_model = model
    if sc.fallback is not None:
        end_model = add_model(gbox, "qwen-fallback", sc.fallback)
        extra["fallback"] = [{"model": end_model, "quantization": "awq"}]
    target = gbox.emulator_target(unit=UNIT, model=model, port=PORT, flags=sc.flags, env=sc.env, **extra)
    if sc.load:
        traffic.set()
    rng = random.Random(seed)
    # three moments in the first ~25 s (while the failure is read, stepped on, restarted), one guard restart apart
    moments, at = [], rng.uniform(0.5, 4.0)
    for _ in range(KILLS if seed else 0):
        moments.append(at)
        at += GUARD_RESTART_S + rng.uniform(0.5, 5.0)
    start(gbox, [target])
    assert kill_guard_at(gbox, moments, time.monotonic()) == len(moments)

    gbox.box.wait_until(f"{UNIT} healthy on {sc.expect}", lambda: ended_on(gbox, sc, end_model) or None, timeout=180)
    settle(6)  # and it stays there: no later step lowers it
    assert ended_on(gbox, sc, end_model), (gbox.flags(UNIT), gbox.env_file(UNIT))
    assert gbox.events(UNIT, "gave_up") == []
