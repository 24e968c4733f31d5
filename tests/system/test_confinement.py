"""The vLLM unit's confinement on a real systemd: it cannot write outside its folders nor read a home folder,
and it still serves (the emulator here; the acceptance tier runs real vLLM under the same unit)."""

from __future__ import annotations

import pytest

from tests.system.harness import Q7, GuardBox, add_model, start, wait_healthy

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
CACHE = f"/var/cache/vllm-guard/{UNIT}"  # CacheDirectory= of the unit, its HOME


def test_the_unit_writes_only_its_own_folders_and_reads_no_home(gbox: GuardBox) -> None:
    # root's own files, readable by everyone: only the unit's sandbox can keep it out (it runs as root here)
    gbox.box.write("/home/alice/notes.txt", "alice's notes\n", mode=0o644)
    tries = {
        "write:/etc/vllm-emu-was-here": "denied (Read-only file system)",
        "write:/var/lib/vllm-emu-was-here": "denied (Read-only file system)",
        "write:/var/log/vllm-emu-was-here": "denied (Read-only file system)",
        "read:/home/alice/notes.txt": "denied (Permission denied)",  # ProtectHome=yes: /home is inaccessible
        f"write:{CACHE}/was-here": "allowed",
        "write:/tmp/was-here": "allowed",
        "write:/dev/shm/was-here": "allowed",
    }
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(unit=UNIT, model=model, port=8000, env={"VLLM_EMU_TRY": ",".join(tries)})
    start(gbox, [target])
    wait_healthy(gbox, UNIT, timeout=60)  # confined, and it still serves

    log = gbox.unit_log(UNIT)
    for spec, said in tries.items():
        how, _, path = spec.partition(":")
        assert f"emulator: {how} {path}: {said}" in log, (spec, log[-3000:])
    for spec in tries:
        if spec.startswith("write:") and "allowed" not in tries[spec]:
            assert not gbox.box.exists(spec.removeprefix("write:")), spec
    assert gbox.chat(8000, "qwen") == 200
