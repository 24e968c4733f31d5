"""The generator: the units and env files rendered from the shipped examples and from hard values."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO, CliResult, write_config
from vllm_guard.app.config_load import load_config
from vllm_guard.app.render import render_all
from vllm_guard.consts import Paths
from vllm_guard.core import systemd_escape as esc

pytestmark = pytest.mark.unit

EXAMPLES = sorted((REPO / "examples").glob("*.toml"))
HARD_PATH = '/models/Qwen2.5 7B/100%$HOME "x"\\y'


def test_there_are_at_least_three_examples() -> None:
    assert len(EXAMPLES) >= 3


def _fake_verify_root(tmp_path: Path, commands: list[str]) -> Path:
    """A root for `systemd-analyze verify --root`: the host's units, and the unit's executables."""
    root = tmp_path / "vroot"
    (root / "usr/lib").mkdir(parents=True)
    (root / "usr/lib/systemd").symlink_to("/usr/lib/systemd")
    for cmd in commands:
        exe = root / (cmd.lstrip("/") if cmd.startswith("/") else f"usr/bin/{cmd}")
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    return root


def _verify_complaints(stderr: str) -> list[str]:
    """What verify says about our units (the host's own symlinked units are not ours to judge)."""
    return [line for line in stderr.splitlines() if line.strip() and "Failed to resolve symlink" not in line]


needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")


@needs_analyze
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_example_units_pass_systemd_analyze_verify(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("vllm_guard.app.render.guard_executable", lambda: ["/usr/bin/vllm-guard"])
    loaded = load_config(Paths(tmp_path), example, check_files=False)
    files = render_all(loaded, Paths(tmp_path), with_api_keys=False)
    commands = [t.command[0] for t in loaded.config.target] + ["/usr/bin/vllm-guard"]
    root = _fake_verify_root(tmp_path, commands)
    unit_dir = root / "etc/systemd/system"
    unit_dir.mkdir(parents=True)
    for f in files:
        if f.name.endswith(".service"):
            (unit_dir / f.name).write_text(f.text)
            proc = subprocess.run(
                ["systemd-analyze", "verify", f"--root={root}", "--man=no", f.name],
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 0, proc.stderr
            assert _verify_complaints(proc.stderr) == []


@needs_analyze
def test_guard_unit_security_exposure_is_at_most_3_5() -> None:
    proc = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", str(REPO / "units/vllm-guard.service")],
        capture_output=True,
        text=True,
    )
    last = [line for line in (proc.stdout + proc.stderr).splitlines() if "Overall exposure level" in line]
    assert last, proc.stdout + proc.stderr
    exposure = float(last[0].split(":")[1].split()[0])
    assert exposure <= 3.5


def test_unit_has_restart_settings_and_env_file(fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\n[target.restart]\nrestart_sec = 7\nstart_limit_burst = 4\n'
        "[target.flags]\nmax_model_len = 1024\nmax_num_seqs = 16\n",
    )
    res = cli("render", "--root", fake_root)
    assert res.code == 0, res.err
    unit = res.out.split("### vllm-qwen.env")[0]
    env = res.out.split("### vllm-qwen.env")[1]
    for line in [
        "Restart=on-failure",
        "RestartSec=7",
        "StartLimitBurst=4",
        "StartLimitIntervalSec=1800",
        "TimeoutStartSec=1800",
        "EnvironmentFile=/var/lib/vllm-guard/vllm-qwen.env",
        "User=vllm",
        "KillMode=mixed",
        "After=vllm-guard.service",  # loopback and a local folder: no wait for network-online.target
        "RequiresMountsFor=/models/tiny",
    ]:
        assert f"\n{line}\n" in unit, line
    # a GPU target: the NVIDIA device classes, not a private /dev without the GPU
    assert "\nPrivateDevices=" not in unit and "\nDevicePolicy=closed\n" in unit
    assert "\nDeviceAllow=char-nvidia-frontend rw\nDeviceAllow=char-nvidia-uvm rw\n" in unit
    assert "--model ${VLLM_GUARD_MODEL}" in unit and " $VLLM_GUARD_ARGS" in unit
    parsed = esc.parse_env_file(env)
    assert parsed["VLLM_GUARD_MODEL"] == "/models/tiny"
    assert parsed["VLLM_GUARD_ARGS"].split() == [
        "--gpu-memory-utilization=0.9",
        "--max-model-len=1024",
        "--max-num-seqs=16",
    ]


@needs_analyze
def test_hard_values_are_escaped_and_verify(fake_root: Path, tmp_path: Path) -> None:
    hard_dir = fake_root / HARD_PATH.lstrip("/")
    hard_dir.mkdir(parents=True)
    shutil.copy(fake_root / "models/tiny/config.json", hard_dir / "config.json")
    toml_path = HARD_PATH.replace("\\", "\\\\").replace('"', '\\"')
    write_config(
        fake_root,
        f'[[target]]\nmodel = "{toml_path}"\nserved_model_name = "q 100%$X \\"y\\""\n'
        'extra_args = ["--chat-template", "/t/a b%$.jinja"]\n'
        'environment = { HF_HOME = "/h 50% $x \\"q\\"" }\n',
    )
    paths = Paths(fake_root)
    files = render_all(load_config(paths), paths)
    unit = next(f for f in files if f.name.endswith(".service")).text
    env = next(f for f in files if f.name.endswith(".env")).text
    assert esc.parse_env_file(env)["VLLM_GUARD_MODEL"] == HARD_PATH
    assert '--served-model-name "q 100%%$$X \\"y\\""' in unit
    assert '"/t/a b%%$$.jinja"' in unit
    assert 'Environment="HF_HOME=/h 50%% $x \\"q\\""' in unit
    root = _fake_verify_root(tmp_path, ["python3", "/usr/bin/vllm-guard"])
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/vllm-qwen.service").write_text(unit)
    proc = subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", "--man=no", "vllm-qwen.service"],
        capture_output=True,
        text=True,
        env={**os.environ, "SYSTEMD_LOG_LEVEL": "notice"},
    )
    assert proc.returncode == 0, proc.stderr
    assert _verify_complaints(proc.stderr) == []


def test_render_out_writes_files_atomically(fake_root: Path, tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\n')
    out = tmp_path / "out"
    res = cli("render", "--root", fake_root, "--out", out)
    assert res.code == 0, res.err
    assert sorted(p.name for p in out.iterdir()) == ["vllm-qwen.env", "vllm-qwen.service"]
    assert (out / "vllm-qwen.env").stat().st_mode & 0o777 == 0o600


def test_install_writes_under_root_and_keeps_existing_env(fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\n')
    res = cli("install", "--root", fake_root, "--no-reload")
    assert res.code == 0, res.err
    unit = fake_root / "etc/systemd/system/vllm-qwen.service"
    env = fake_root / "var/lib/vllm-guard/vllm-qwen.env"
    assert unit.is_file() and env.is_file()
    env.write_text('VLLM_GUARD_ARGS="--gpu-memory-utilization=0.8"\n')
    again = cli("install", "--root", fake_root, "--no-reload")
    assert again.code == 0
    assert "0.8" in env.read_text()  # the guard's current flags are not clobbered
    assert f"kept {env}" in again.out and "--reset-flags" in again.out  # and it says so
    assert cli("install", "--root", fake_root, "--no-reload", "--reset-flags").code == 0
    assert "0.9" in env.read_text()


def test_init_writes_a_starter_config_that_loads(fake_root: Path, cli: Callable[..., CliResult]) -> None:
    res = cli("init", "--root", fake_root, "--model", "/models/tiny")
    assert res.code == 0, res.err
    cfg = load_config(Paths(fake_root)).config
    assert cfg.target[0].flags.max_model_len == 4096  # capped at the model's max_position_embeddings
    assert cfg.target[0].name == "tiny"
    assert cli("init", "--root", fake_root, "--model", "/models/tiny").code == 73  # no silent overwrite


def test_render_json(fake_root: Path, cli: Callable[..., CliResult]) -> None:
    import json

    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\n')
    res = cli("render", "--root", fake_root, "--json")
    doc = json.loads(res.out)
    assert doc["schema"] == 1
    assert [f["name"] for f in doc["files"]] == ["vllm-qwen.service", "vllm-qwen.env"]
    assert doc["files"][1]["mode"] == "0600"


@pytest.mark.parametrize(
    ("host", "waits"),
    [("127.0.0.1", False), ("0.0.0.0", False), ("::", False), ("10.0.0.5", True), ("gpu1.example", True)],
)
def test_only_a_specific_address_waits_for_an_online_network(host: str, waits: bool) -> None:
    from vllm_guard.core.config import Target
    from vllm_guard.core.render import render_unit

    template = (REPO / "templates" / "vllm-unit.service.j2").read_text()
    unit = render_unit(template, Target(model="/models/tiny", host=host), env_file="/x.env", guard_exec=["g"])
    assert ("After=network-online.target vllm-guard.service" in unit) is waits
    assert ("Wants=network-online.target vllm-guard.service" in unit) is waits


def test_requires_mounts_for_the_model_and_its_fallbacks() -> None:
    from vllm_guard.core.config import Target
    from vllm_guard.core.render import render_unit

    template = (REPO / "templates" / "vllm-unit.service.j2").read_text()
    target = Target(
        model="/mnt/nfs/models/Qwen2.5-7B",
        fallback=[{"model": "/srv/q/Qwen2.5 7B AWQ 100%"}, {"model": "/mnt/nfs/models/Qwen2.5-7B"}],
    )
    unit = render_unit(template, target, env_file="/x.env", guard_exec=["g"])
    # a folder named with spaces or % gives its nearest plain ancestor: same mount order, no quoting
    assert "\nRequiresMountsFor=/mnt/nfs/models/Qwen2.5-7B /srv/q\n" in unit


# -- confinement


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))


def _exposure(unit_file: Path) -> float:
    out = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", str(unit_file)], capture_output=True, text=True, check=False
    ).stdout
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", out)
    assert m, out
    return float(m.group(1))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_renders_a_unit_exposed_at_most_4(
    example: Path, tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    res = cli("render", "--config", example, "--no-check-files", "--out", tmp_path)
    assert res.code == 0, res.err
    units = sorted(tmp_path.glob("*.service"))
    assert units
    for unit in units:
        assert _exposure(unit) <= 4.0, unit.read_text()


def _unit(**target: object) -> str:
    from vllm_guard.core.config import Target
    from vllm_guard.core.render import render_unit

    template = (Path(__file__).resolve().parents[2] / "templates/vllm-unit.service.j2").read_text()
    t = Target.model_validate({"model": "/models/q", **target})
    return render_unit(template, t, env_file="/var/lib/vllm-guard/x.env", guard_exec=["/usr/bin/vllm-guard"])


def test_a_cpu_target_gets_no_device_and_a_gpu_target_only_the_nvidia_classes() -> None:
    cpu, gpu = _unit(device="cpu"), _unit()
    assert "\nPrivateDevices=yes\n" in cpu and "DeviceAllow=" not in cpu and "DevicePolicy=" not in cpu
    assert "\nPrivateDevices=" not in gpu and "\nDevicePolicy=closed\n" in gpu
    assert [line for line in gpu.splitlines() if line.startswith("DeviceAllow=")] == [
        "DeviceAllow=char-nvidia-frontend rw",
        "DeviceAllow=char-nvidia-uvm rw",
        "DeviceAllow=char-nvidia-caps rw",
    ]


def test_the_ip_allow_list_follows_the_address_vllm_listens_on() -> None:
    loopback, wildcard = _unit(host="127.0.0.1"), _unit(host="0.0.0.0")
    assert "\nIPAddressDeny=any\nIPAddressAllow=localhost\n" in loopback
    assert "IPAddressDeny=" not in wildcard and "IPAddressAllow=" not in wildcard


def test_a_model_under_a_home_folder_keeps_homes_readable() -> None:
    assert "\nProtectHome=yes\n" in _unit()
    assert "\nProtectHome=read-only\n" in _unit(model="/home/alice/models/q")
    assert "\nProtectHome=read-only\n" in _unit(fallback=[{"model": "/root/q-awq", "quantization": "awq"}])


def test_a_target_loosens_or_drops_one_directive_by_name() -> None:
    unit = _unit(hardening={"MemoryDenyWriteExecute": "yes", "IPAddressDeny": "unset", "ProtectHome": "tmpfs"})
    assert "\nMemoryDenyWriteExecute=yes\n" in unit
    assert "IPAddressDeny=" not in unit and "\nProtectHome=tmpfs\n" in unit
    assert "# set by [target.hardening] in the config\nProtectHome=tmpfs" in unit


def test_a_misspelt_hardening_directive_is_refused_with_a_suggestion() -> None:
    from vllm_guard.core.config import Target

    with pytest.raises(ValueError, match="did you mean 'ProtectHome'"):
        Target.model_validate({"model": "/models/q", "hardening": {"ProtectHomes": "yes"}})


def test_every_directive_the_unit_sets_can_be_changed_by_name() -> None:
    from vllm_guard.core.config import HARDENING_KEYS, Target
    from vllm_guard.core.render import hardening

    for target in (Target(model="/m"), Target(model="/m", device="cpu")):
        assert {h.key for h in hardening(target)} <= HARDENING_KEYS
