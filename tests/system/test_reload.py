"""`systemctl reload vllm-guard` with a broken config, on a real systemd: loud, and nothing lost."""

from __future__ import annotations

import pytest

from tests.system.harness import Q7, GuardBox, add_model, start, wait_healthy

pytestmark = pytest.mark.system

UNIT = "vllm-emu"
FLAGS = {"gpu_memory_utilization": 0.9, "max_model_len": 8192}


def test_a_reload_with_a_broken_config_fails_loudly_and_the_guard_keeps_its_config(gbox: GuardBox) -> None:
    model = add_model(gbox, "qwen", Q7)
    target = gbox.emulator_target(unit=UNIT, model=model, port=8000, flags=FLAGS)
    start(gbox, [target])
    wait_healthy(gbox, UNIT, timeout=60)
    good = (gbox.host_dir / "config.toml").read_text()

    (gbox.host_dir / "config.toml").write_text(good.replace("max_model_len", "max_modle_len"))
    reload = gbox.box.systemctl("reload", "vllm-guard.service", check=False, timeout=60)
    assert reload.returncode != 0  # `systemctl reload` itself says it failed
    check = "\n".join(str(e.get("MESSAGE", "")) for e in gbox.box.journal("_SYSTEMD_UNIT=vllm-guard.service"))
    assert "max_modle_len" in check and "did you mean 'max_model_len'" in check
    assert gbox.box.show("vllm-guard.service", "ActiveState")["ActiveState"] == "active"

    # a SIGHUP that bypasses the check (kill -HUP) is refused by the daemon itself, as a warning of its own
    gbox.box.systemctl("kill", "--signal=HUP", "vllm-guard.service")
    failed = gbox.wait_event("config_reload_failed", timeout=30)
    assert failed["PRIORITY"] == "4"
    assert "max_modle_len" in failed["VLLM_GUARD_REASON"]
    assert not gbox.events(None, "config_reloaded")
    status = gbox.box.show("vllm-guard.service", "StatusText")["StatusText"]
    assert "running on the previous config" in status, status
    assert gbox.unit_state(UNIT)["ActiveState"] == "active"  # the vLLM unit is still guarded and serving

    (gbox.host_dir / "config.toml").write_text(good)
    assert gbox.box.systemctl("reload", "vllm-guard.service", timeout=60).returncode == 0
    gbox.wait_event("config_reloaded", timeout=30)
    gbox.box.wait_until(
        "the status to drop the reload failure",
        lambda: "previous config" not in gbox.box.show("vllm-guard.service", "StatusText")["StatusText"] or None,
        timeout=20,
    )
