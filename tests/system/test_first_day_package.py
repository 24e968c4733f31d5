"""A sysadmin's first day, played from the .deb on a real systemd: install the package, `init`, `doctor`,
`install --enable`, start, a failure healed, `status`, `reset`, `history`, a bad reload, purge.

One container, one walk; the steps run in order, as a person would take them, with the emulator as vLLM
(the host's /usr/bin/python3, stdlib only) on an emulated 24 GiB GPU. Every exit code is asserted, and every
error or warning the guard prints must say what to do about it.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.system.harness import EMULATOR_MODELS, Q7
from tests.system.packages import INSIDE_PKG_DIR, REPO, package_box
from tests.system.packages import sandbox_missing as _sandbox_missing
from vllm_guard.app.sandbox import Container
from vllm_guard.exitcodes import ExitCode

pytestmark = pytest.mark.system

UNIT = "vllm-walk"
PORT = 8123
MODEL = f"{INSIDE_PKG_DIR}/models/qwen"
GPUS = f"{INSIDE_PKG_DIR}/gpus.json"
EMULATOR = f"{INSIDE_PKG_DIR}/vllm_emulator.py"
CONFIG = "/etc/vllm-guard/config.toml"
TIMEOUT_S = 90.0


@pytest.fixture
def box(built_deb: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    reason = _sandbox_missing()
    if reason:
        pytest.skip(reason)
    shared = tmp_path_factory.mktemp("first-day")
    shared.chmod(0o755)  # the vLLM unit runs as the package's `vllm` account: it reads the model and the emulator
    shutil.copy(built_deb, shared / built_deb.name)
    shutil.copytree(EMULATOR_MODELS / Q7, shared / "models/qwen")
    shutil.copy(REPO / "tests/emulator/vllm_emulator.py", shared / "vllm_emulator.py")
    gpu = {"index": 0, "name": "Emulated 24 GiB", "total_mib": 24576, "driver": "emulated", "processes": []}
    (shared / "gpus.json").write_text(json.dumps({"gpus": [gpu]}))
    with package_box(f"vg-walk-{int(time.time()) % 100000}", shared) as b:
        yield b


def says_what_to_do(text: str) -> None:
    """Every error or warning the guard prints comes with a hint (what to do), never a traceback."""
    assert "Traceback" not in text, text
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.search(r"\b(error|warning)\[[a-z0-9-]+\]", line):
            follow = lines[i + 1] if i + 1 < len(lines) else ""
            assert "hint:" in line + follow, f"no hint for: {line}\n{text}"


def guard(box: Container, *args: str, code: int = 0, timeout: float = 120.0) -> str:
    """`vllm-guard ARGS` as the admin runs it (the packaged command), its exit code asserted; its output."""
    proc = box.run("vllm-guard", *args, check=False, timeout=timeout, env={"VLLM_GUARD_FAKE_GPUS": GPUS})
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, f"vllm-guard {' '.join(args)}: exit {proc.returncode}, not {code}\n{out}"
    says_what_to_do(out)
    return out


def events(box: Container, event: str) -> list[dict[str, str]]:
    out = box.run(
        "journalctl", "--no-pager", "-o", "json", "SYSLOG_IDENTIFIER=vllm-guard", f"VLLM_GUARD_EVENT={event}"
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def wait_event(box: Container, event: str, n: int = 1) -> dict[str, str]:
    def nth() -> dict[str, str] | None:
        got = events(box, event)
        return got[n - 1] if len(got) >= n else None

    return box.wait_until(f"{event} #{n}", nth, TIMEOUT_S)


def edit_config(box: Container, old: str, new: str) -> None:
    text = box.read(CONFIG)
    assert old in text, f"{old!r} is not in the config:\n{text}"
    box.write(CONFIG, text.replace(old, new))


def test_a_sysadmins_first_day_from_the_package(box: Container, built_deb: Path) -> None:
    # -- install the package (apt resolves its dependencies from what the image has, as offline)
    box.run("rm", "-f", "/usr/sbin/policy-rc.d")
    box.run("mkdir", "-p", "/var/cache/apt/archives/partial", "/var/lib/apt/lists/partial")
    apt = box.run("apt-get", "install", "-y", f"{INSIDE_PKG_DIR}/{built_deb.name}", check=False, timeout=300)
    assert apt.returncode == 0, apt.stdout + apt.stderr
    # the package cannot run the demo (no emulator in it): it does not offer it, and says why when asked
    assert not re.search(r"^\s+demo\s", guard(box, "--help"), re.M)
    assert "clone the repository" in guard(box, "demo", code=ExitCode.UNAVAILABLE)
    # the GPU the guard sees is the emulated one (a drop-in, as a sysadmin would add Environment=)
    box.write(
        "/etc/systemd/system/vllm-guard.service.d/fake-gpu.conf",
        f"[Service]\nEnvironment=VLLM_GUARD_FAKE_GPUS={GPUS}\n",
    )
    box.run("systemctl", "daemon-reload")

    # -- init: a starter config from the model folder, pointing to the man page
    out = guard(box, "init", "--model", MODEL, "--unit", UNIT, "--port", str(PORT))
    assert f"wrote {CONFIG}" in out
    assert "man vllm-guard" in box.read(CONFIG)
    # the sysadmin's edits: vLLM's command (here the emulator), and a max_model_len the KV cache cannot hold at
    # 0.7 of the GPU (the emulator then prints vLLM's words: "the estimated maximum model length is 30240")
    edit_config(
        box,
        '# command = ["/opt/vllm/bin/python3"',
        f'command = ["/usr/bin/python3", "{EMULATOR}"]\n'
        f'environment = {{ VLLM_GUARD_FAKE_GPUS = "{GPUS}", PYTHONUNBUFFERED = "1" }}\n'
        '# command = ["/opt/vllm/bin/python3"',
    )
    edit_config(box, "gpu_memory_utilization = 0.9      # vLLM's default", "gpu_memory_utilization = 0.7")
    edit_config(box, "restart_sec = 10 ", "restart_sec = 3 ")
    # the set-up check before the first start: the one thing it finds is the stand-in itself (no vLLM in it)
    out = guard(box, "run", "--check", code=1)
    assert "error[vllm-not-installed]" in out and out.count("error[") == 1, out

    # -- doctor before the first install: what is missing is what `install` writes, and every finding that is
    # not "ok" says what to do
    # (no GPU here: doctor plans for a 24 GiB card; the emulator's model folder holds config.json only)
    report = json.loads(guard(box, "doctor", "--json", "--no-vllm-check", "--gpu", "24GiB", code=2))
    found = {f["ref"]: f for f in report["findings"]}
    failed = {r for r, f in found.items() if f["status"] == "fail"}
    # and it predicts the failure the walk set up: the KV cache cannot hold 32768 tokens at 0.7 of 24 GiB
    assert failed == {"unit-missing", "env-missing", "model-no-weights", "model-kv-too-small"}, found
    assert "lower max_model_len" in found["model-kv-too-small"]["hint"]
    assert all(f["hint"] for f in found.values() if f["status"] != "ok"), found
    assert "`vllm-guard install`" in found["unit-missing"]["hint"]

    # -- install --enable: it says what it wrote and what it enabled
    out = guard(box, "install", "--enable")
    assert f"wrote /etc/systemd/system/{UNIT}.service" in out
    assert f"systemctl enable {UNIT}.service: it starts at boot" in out
    assert box.run("systemctl", "is-enabled", f"{UNIT}.service").stdout.strip() == "enabled"

    # -- start: the guard first (active once it sent READY=1), then vLLM, which fails and is healed
    box.run("systemctl", "start", "vllm-guard.service", timeout=120)
    box.run("systemctl", "start", "--no-block", f"{UNIT}.service")
    remedy = wait_event(box, "remedy_applied")
    assert remedy["VLLM_GUARD_KIND"] == "kv_cache_insufficient"
    assert "--max-model-len=28720" in remedy["VLLM_GUARD_FLAGS_AFTER"], remedy
    healthy = wait_event(box, "verified_healthy")
    assert "--max-model-len=28720" in healthy["VLLM_GUARD_FLAGS_AFTER"]
    # journalctl -x explains the remedy from the shipped catalog, naming the env file the guard rewrote
    explained = box.run("journalctl", "--no-pager", "-x", f"MESSAGE_ID={remedy['MESSAGE_ID']}").stdout
    assert f"/var/lib/vllm-guard/{UNIT}.env" in explained, explained
    assert ".service.env" not in explained

    # -- status: the guard's view, systemd's, and what the server itself serves
    out = guard(box, "status")
    assert f"{UNIT}.service: healthy (systemd: active/running" in out, out
    assert f"/v1/models: serves the weights in {MODEL}" in out, out
    assert "--max-model-len=28720" in out and "base:" in out

    # -- reset: back to the base flags, the budget cleared; the guard heals the same failure again
    out = guard(box, "reset", UNIT, "--restart")
    assert "budget cleared (1 remedy" in out, out
    wait_event(box, "remedy_applied", n=2)
    wait_event(box, "verified_healthy", n=2)

    # -- history: each start, its failure and what the guard did
    out = guard(box, "history", UNIT)
    assert out.count("kv_cache_insufficient") >= 2, out
    assert "max_model_len 32768 -> 28720" in out, out

    # -- a bad reload: systemctl says it failed, the guard keeps guarding on the previous config
    edit_config(box, "max_model_len = 32768", "max_modle_len = 32768")
    reload = box.run("systemctl", "reload", "vllm-guard.service", check=False, timeout=60)
    assert reload.returncode != 0, "a reload with a broken config must fail"
    said = box.run("journalctl", "--no-pager", "-u", "vllm-guard.service", "-n", "40").stdout
    assert "did you mean 'max_model_len'" in said, said
    assert box.show("vllm-guard.service", "ActiveState")["ActiveState"] == "active"
    out = guard(box, "status")
    assert "the config is invalid" in out and "max_modle_len" in out
    assert "did you mean 'max_model_len'" in out
    guard(box, "run", "--check", code=ExitCode.CONFIG)
    edit_config(box, "max_modle_len = 32768", "max_model_len = 32768")
    box.run("systemctl", "reload", "vllm-guard.service", timeout=60)

    # -- purge: nothing is left that would fail at the next boot; the admin's config stays
    purge = box.run("apt-get", "purge", "-y", "vllm-guard", timeout=300)
    assert f"disabled and removed {UNIT}.service" in purge.stdout + purge.stderr
    box.run("systemctl", "stop", f"{UNIT}.service", check=False, timeout=60)
    box.run("systemctl", "daemon-reload")
    assert box.run("systemctl", "is-enabled", f"{UNIT}.service", check=False).stdout.strip() != "enabled"
    assert not box.exists(f"/etc/systemd/system/{UNIT}.service")
    assert not box.exists("/var/lib/vllm-guard")
    assert box.exists(CONFIG)
    wants = box.run("systemctl", "list-dependencies", "--plain", "multi-user.target").stdout
    assert UNIT not in wants and "vllm-guard" not in wants, wants
