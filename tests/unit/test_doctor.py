"""Doctor: every rule on measured facts, and the whole verb against a fake root."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, CliResult, write_config
from tests.unit.test_modelinfo import write_safetensors
from vllm_guard.core.doctor import (
    Facts,
    FallbackFacts,
    Finding,
    FolderFacts,
    GpuFact,
    GpuProcessFact,
    SwapFact,
    TargetFacts,
    exit_code,
    judge,
)
from vllm_guard.core.modelinfo import model_info_from_config
from vllm_guard.core.planner import PlannerParams
from vllm_guard.exitcodes import ExitCode

pytestmark = pytest.mark.unit

GiB = 1 << 30
Q7 = model_info_from_config(json.loads((DATA / "models/Qwen2.5-7B-Instruct/config.json").read_text()))


def healthy_target(**kw: Any) -> TargetFacts:
    base = TargetFacts(
        unit="vllm-qwen",
        model="/models/q7",
        util=0.9,
        tp=1,
        max_model_len=16384,
        kv_cache_dtype="auto",
        host="127.0.0.1",
        port=8000,
        model_info=Q7,
        folder=FolderFacts(safetensors=4),
        unit_state="matches",
        env_state="base",
        unit_active=False,
        port_in_use=False,
    )
    return replace(base, **kw)


def healthy(**kw: Any) -> Facts:
    base = Facts(
        gpus=(GpuFact(0, "NVIDIA L40S", 48 * GiB, 47 * GiB, 1 * GiB // 2),),
        driver_version="550.54",
        targets=(healthy_target(),),
        mem_total=64 * GiB,
        mem_available=50 * GiB,
        swap_total=16 * GiB,
        swap_free=16 * GiB,
        swappiness=10,
        swaps=(SwapFact("/swapfile", "file", 16 * GiB, 0, rotational=False, fstype="ext4"),),
        shm_bytes=32 * GiB,
        nofile_soft=65535,
        nofile_hard=65535,
        vllm_version="0.11.0",
        journal_error=None,
        guard_active=True,
    )
    return replace(base, **kw)


def refs(findings: list[Finding], status: str | None = None) -> set[str]:
    return {f.ref for f in findings if status is None or f.status == status}


def test_the_gpu_is_judged_on_what_cuda_reports_and_the_drivers_part_is_named() -> None:
    # the fact holds CUDA's total (NVML's less the reserved part): the KV verdict is planned on it
    kept = healthy(gpus=(GpuFact(0, "NVIDIA L40S", 44 * GiB, 44 * GiB, 0, reserved=600 << 20),))
    visible = next(f for f in judge(kept) if f.ref == "gpu-visible")
    assert "free of 44.0 GiB (CUDA's total; the driver keeps 600 MiB more)" in visible.measured
    assert "driver keeps" not in next(f for f in judge(healthy()) if f.ref == "gpu-visible").measured


def test_a_healthy_host_is_all_ok() -> None:
    findings = judge(healthy())
    assert [f for f in findings if f.status != "ok"] == []
    assert exit_code(findings) == ExitCode.OK
    assert {
        "gpu-visible",
        "model-fits",
        "model-files",
        "host-ram",
        "swap-usage",
        "swap-swappiness",
        "shm",
        "nofile",
        "port",
        "vllm",
        "journal",
        "guard-running",
        "unit",
        "env",
    } <= refs(findings)


T = healthy_target
HOLDER = GpuProcessFact(4242, 30_000, "python3 -m sglang.launch_server")
CASES: list[tuple[str, Facts, str, str]] = [
    ("no GPU", healthy(gpus=(), gpu_error="no NVIDIA GPU visible: NVML did not start"), "gpu-none", "fail"),
    (
        "VRAM held by another process",
        healthy(gpus=(GpuFact(0, "L40S", 48 * GiB, 18 * GiB, 30 * GiB, (HOLDER,)),)),
        "gpu-memory-held",
        "warn",
    ),
    (
        "free memory below util",
        healthy(gpus=(GpuFact(0, "L40S", 48 * GiB, 18 * GiB, 30 * GiB, (HOLDER,)),)),
        "gpu-free-below-util",
        "fail",
    ),
    ("too few GPUs for TP", healthy(targets=(T(tp=2),)), "gpu-too-few", "fail"),
    ("weights too big", healthy(gpus=(GpuFact(0, "T4", 15 * GiB, 15 * GiB, 0),)), "model-weights-too-big", "fail"),
    (
        "KV cache too small",
        healthy(gpus=(GpuFact(0, "L4", 24 * GiB, 24 * GiB, 0),), targets=(T(max_model_len=32768, util=0.7),)),
        "model-kv-too-small",
        "fail",
    ),
    (
        "KV cache tight",
        healthy(gpus=(GpuFact(0, "L4", 24 * GiB, 24 * GiB, 0),), targets=(T(max_model_len=32768, util=0.72),)),
        "model-kv-tight",
        "warn",
    ),
    (
        "model unreadable",
        healthy(targets=(T(model_error="[model-missing] /models/q7: no such folder", model_info=None),)),
        "model-unreadable",
        "fail",
    ),
    (
        "only a training checkpoint",
        healthy(targets=(T(folder=FolderFacts(training_files=("model.pt",))),)),
        "model-not-safetensors",
        "fail",
    ),
    (
        "pickled .bin weights",
        healthy(targets=(T(folder=FolderFacts(bin_files=("pytorch_model.bin",))),)),
        "model-pickle-weights",
        "warn",
    ),
    ("no weights at all", healthy(targets=(T(folder=FolderFacts()),)), "model-no-weights", "fail"),
    (
        "missing shards",
        healthy(targets=(T(folder=FolderFacts(safetensors=3, missing_shards=("model-00004-of-00004.safetensors",))),)),
        "model-missing-shards",
        "fail",
    ),
    (
        "truncated shard",
        healthy(targets=(T(folder=FolderFacts(safetensors=4, size_mismatches=(("m1.safetensors", 100, 50),))),)),
        "model-truncated-shards",
        "fail",
    ),
    (
        "bad header",
        healthy(targets=(T(folder=FolderFacts(safetensors=4, header_errors=("m1: header is not JSON",))),)),
        "model-bad-safetensors",
        "fail",
    ),
    (
        "bad index",
        healthy(targets=(T(folder=FolderFacts(safetensors=4, index_error="index: no weight_map")),)),
        "model-bad-index",
        "fail",
    ),
    ("host RAM short", healthy(mem_available=2 * GiB, swap_free=0), "host-ram-short", "fail"),
    ("host RAM tight", healthy(mem_available=4 * GiB, swap_free=16 * GiB), "host-ram-tight", "warn"),
    (
        "swap_space counts",
        healthy(mem_available=12 * GiB, swap_free=0, targets=(T(swap_space_gib=8),)),
        "host-ram-short",
        "fail",
    ),
    ("weights above RAM", healthy(mem_total=8 * GiB, mem_available=8 * GiB), "host-ram-below-weights", "warn"),
    ("RAM unknown", healthy(mem_total=0), "host-ram-unknown", "warn"),
    ("no swap", healthy(swap_total=0, swap_free=0, swaps=()), "swap-none", "warn"),
    ("swap mostly used", healthy(swap_free=4 * GiB), "swap-usage", "warn"),
    (
        "swap on a spinning disk",
        healthy(swaps=(SwapFact("/dev/sdb2", "partition", 16 * GiB, 0, rotational=True),)),
        "swap-rotational",
        "warn",
    ),
    (
        "swap file on btrfs",
        healthy(swaps=(SwapFact("/swapfile", "file", 16 * GiB, 0, False, "btrfs"),)),
        "swap-fs",
        "warn",
    ),
    (
        "swap file on zfs",
        healthy(swaps=(SwapFact("/tank/swap", "file", 16 * GiB, 0, False, "zfs"),)),
        "swap-fs",
        "fail",
    ),
    ("swappiness 60", healthy(swappiness=60), "swap-swappiness", "warn"),
    (
        "small /dev/shm with TP",
        healthy(
            shm_bytes=64 << 20,
            gpus=(GpuFact(0, "A", 48 * GiB, 47 * GiB, 0), GpuFact(1, "A", 48 * GiB, 47 * GiB, 0)),
            targets=(T(tp=2),),
        ),
        "shm-small",
        "fail",
    ),
    (
        "/dev/shm unknown with TP",
        healthy(shm_bytes=None, gpus=(GpuFact(0, "A", 48 * GiB, 47 * GiB, 0),) * 2, targets=(T(tp=2),)),
        "shm-unknown",
        "warn",
    ),
    ("open files of this shell", healthy(nofile_soft=1024, nofile_hard=4096), "nofile-low", "warn"),
    ("open files of the unit", healthy(targets=(T(limit_nofile=(1024, 4096)),)), "nofile-low", "warn"),
    ("port taken by someone else", healthy(targets=(T(port_in_use=True),)), "port-in-use", "fail"),
    (
        "vLLM not importable",
        healthy(vllm_version=None, vllm_error="python3: No module named 'vllm'"),
        "vllm-missing",
        "fail",
    ),
    ("journal unreadable", healthy(journal_error="PermissionError"), "journal-unreadable", "warn"),
    ("guard not running", healthy(guard_active=False), "guard-not-running", "warn"),
    ("unit not installed", healthy(targets=(T(unit_state="missing"),)), "unit-missing", "fail"),
    ("unit stale", healthy(targets=(T(unit_state="differs", unit_diff="-old +new"),)), "unit-stale", "warn"),
    ("env file missing", healthy(targets=(T(env_state="missing"),)), "env-missing", "fail"),
    (
        "env flags lowered by the guard",
        healthy(targets=(T(env_state="changed", env_detail="now: --gpu-memory-utilization=0.8"),)),
        "env-changed",
        "warn",
    ),
    (
        "env flags from before the base flags changed",
        healthy(targets=(T(env_state="base_changed", env_detail="now: --max-model-len=8192"),)),
        "env-base-changed",
        "warn",
    ),
    (
        "config invalid",
        healthy(config_error="config.toml: target[0].port: bad", config_ref="invalid-config", targets=()),
        "invalid-config",
        "fail",
    ),
]


@pytest.mark.parametrize(("name", "facts", "ref", "status"), CASES, ids=[c[0] for c in CASES])
def test_each_rule(name: str, facts: Facts, ref: str, status: str) -> None:
    findings = judge(facts)
    hit = [f for f in findings if f.ref == ref]
    assert hit, f"{ref} not in {refs(findings)}"
    assert hit[0].status == status
    if status != "ok":
        assert hit[0].hint, "every warning and failure says what to do"
    assert exit_code(findings) == (ExitCode.FAIL if status == "fail" else ExitCode.WARN) or any(
        f.status == "fail" for f in findings
    )


def test_vram_held_names_the_holder_and_the_util_that_would_fit() -> None:
    findings = judge(CASES[2][1])
    held = next(f for f in findings if f.ref == "gpu-memory-held")
    assert "pid 4242" in held.measured and "sglang" in held.measured
    below = next(f for f in findings if f.ref == "gpu-free-below-util")
    assert "0.36" in below.hint  # 18 of 48 GiB free


def test_kv_too_small_suggests_the_length_or_util_that_fits() -> None:
    f = next(x for x in judge(CASES[5][1]) if x.ref == "model-kv-too-small")
    assert "lower max_model_len to" in f.hint and "raise gpu_memory_utilization" in f.hint


def test_port_held_by_the_unit_itself_is_fine() -> None:
    findings = judge(healthy(targets=(T(port_in_use=True, unit_active=True),)))
    assert "port-in-use" not in refs(findings)


def test_exit_codes() -> None:
    assert exit_code([Finding("ok", "a", "a")]) == ExitCode.OK
    assert exit_code([Finding("ok", "a", "a"), Finding("warn", "b", "b")]) == ExitCode.WARN
    assert exit_code([Finding("warn", "b", "b"), Finding("fail", "c", "c")]) == ExitCode.FAIL


def test_refs_are_kebab_case() -> None:
    import re

    for _, facts, _, _ in CASES:
        for f in judge(facts):
            assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", f.ref), f.ref


# --- the verb against a fake root -------------------------------------------------------------------


def build_root(root: Path, *, install: bool = True) -> None:
    """A fake host: config, a model folder with real safetensors, /proc and /sys files, rendered units."""
    model = root / "models/tiny"
    model.mkdir(parents=True)
    (model / "config.json").write_text((DATA / "models/tiny-qwen2/config.json").read_text())
    write_safetensors(model / "model.safetensors", {"embed": ("BF16", [512, 256]), "w": ("BF16", [256, 256])})
    python = root / "opt/vllm/bin/python3"  # the unit's command, present (vLLM itself is not asked: --no-vllm-check)
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    write_config(
        root,
        '[[target]]\nmodel = "/models/tiny"\nport = 8000\nuser = "root"\ngroup = "root"\n'
        'command = ["/opt/vllm/bin/python3", "-m", "vllm.entrypoints.openai.api_server"]\n',
    )
    (root / "proc/sys/vm").mkdir(parents=True)
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/meminfo").write_text(
        "MemTotal:       65536000 kB\nMemAvailable:   50000000 kB\nSwapTotal:      16777216 kB\nSwapFree:       16777216 kB\n"
    )
    (root / "proc/swaps").write_text(
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/swapfile                               file\t\t16777216\t0\t\t-2\n"
    )
    (root / "proc/sys/vm/swappiness").write_text("10\n")
    (root / "proc/self/mounts").write_text("/dev/nvme0n1p2 / ext4 rw,relatime 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n")
    (root / "sys/class/block/nvme0n1/queue").mkdir(parents=True)
    (root / "sys/class/block/nvme0n1/queue/rotational").write_text("0\n")
    (root / "dev/shm").mkdir(parents=True)
    if install:
        from vllm_guard.app.config_load import load_config
        from vllm_guard.app.render import render_all, write_rendered
        from vllm_guard.consts import Paths

        paths = Paths(root)
        files = render_all(load_config(paths, None), paths, with_api_keys=False)
        write_rendered(files, paths.unit_dir, paths.state_dir)


def _lowered_by_the_guard(root: Path, *, with_state: bool) -> None:
    """Env flags that differ from the base ones; with_state: the guard wrote them (its state holds this base),
    else they come from before the config's base flags changed (the guard never started from these)."""
    from vllm_guard.app.config_load import load_config
    from vllm_guard.app.statefile import StateStore
    from vllm_guard.consts import Paths
    from vllm_guard.core.state import State, TargetState, base_hash

    paths = Paths(root)
    (root / "var/lib/vllm-guard/vllm-qwen.env").write_text("VLLM_GUARD_ARGS=--gpu-memory-utilization=0.7\n")
    if with_state:
        target = load_config(paths, None).config.target[0]
        StateStore(paths.state_file).save(State(targets={target.unit: TargetState(base_hash=base_hash(target))}))


def doctor(cli: Callable[..., CliResult], root: Path, *extra: str) -> tuple[int, dict[str, Finding]]:
    r = cli("doctor", "--root", root, "--gpu", "24GiB", "--json", *extra)
    out = json.loads(r.out)
    assert out["schema"] == 1
    return r.code, {f["ref"]: Finding(**f) for f in out["findings"]}


def test_doctor_on_a_fake_root(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    build_root(tmp_path)
    code, found = doctor(cli, tmp_path)
    for ref in ("unit", "env", "gpu-visible", "model-files", "model-fits", "host-ram", "swap-usage", "swap-swappiness"):
        assert found[ref].status == "ok", (ref, found[ref])
    # the configured python does not exist: vLLM cannot be imported (a failure, exit 2)
    assert found["vllm-missing"].status == "fail" and code == 2
    code, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert "vllm-missing" not in found


@pytest.mark.parametrize(
    ("breakage", "ref", "status"),
    [
        (lambda r: (r / "etc/systemd/system/vllm-qwen.service").unlink(), "unit-missing", "fail"),
        (
            lambda r: (r / "etc/systemd/system/vllm-qwen.service").write_text("[Service]\nExecStart=/bin/true\n"),
            "unit-stale",
            "warn",
        ),
        (lambda r: (r / "var/lib/vllm-guard/vllm-qwen.env").unlink(), "env-missing", "fail"),
        (lambda r: _lowered_by_the_guard(r, with_state=True), "env-changed", "warn"),
        (lambda r: _lowered_by_the_guard(r, with_state=False), "env-base-changed", "warn"),
        (lambda r: (r / "proc/sys/vm/swappiness").write_text("60\n"), "swap-swappiness", "warn"),
        (
            lambda r: (r / "etc/systemd/system/vllm-qwen.service").write_text(
                (r / "etc/systemd/system/vllm-qwen.service")
                .read_text()
                .replace("LimitNOFILE=65536", "LimitNOFILE=1024:4096")
            ),
            "nofile-low",
            "warn",
        ),
        (lambda r: (r / "proc/swaps").write_text("Filename Type Size Used Priority\n"), "swap-none", "warn"),
        (lambda r: (r / "sys/class/block/nvme0n1/queue/rotational").write_text("1\n"), "swap-rotational", "warn"),
        (lambda r: (r / "proc/self/mounts").write_text("/dev/sda1 / btrfs rw 0 0\n"), "swap-fs", "warn"),
        (lambda r: (r / "models/tiny/model.safetensors").write_bytes(b"\x00" * 4), "model-bad-safetensors", "fail"),
        (
            lambda r: (r / "models/tiny/model.safetensors").rename(r / "models/tiny/model.pt"),
            "model-not-safetensors",
            "fail",
        ),
        (
            lambda r: (r / "models/tiny/model.safetensors.index.json").write_text(
                '{"weight_map": {"a": "model.safetensors", "b": "model-2.safetensors"}}'
            ),
            "model-missing-shards",
            "fail",
        ),
        (lambda r: (r / "models/tiny/config.json").unlink(), "model-unreadable", "fail"),
        (lambda r: (r / "etc/vllm-guard/config.toml").write_text("[[target]]\nport = 0\n"), "invalid-config", "fail"),
    ],
)
def test_doctor_finds_each_breakage(
    cli: Callable[..., CliResult], tmp_path: Path, breakage: Callable[[Path], Any], ref: str, status: str
) -> None:
    build_root(tmp_path)
    breakage(tmp_path)
    code, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert ref in found, sorted(found)
    assert found[ref].status == status
    assert code == (2 if status == "fail" else 1) or any(f.status == "fail" for f in found.values())


def test_doctor_without_config(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    code, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert found["config-missing"].status == "fail" and code == 2


def test_doctor_text_output(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    build_root(tmp_path)
    r = cli("doctor", "--root", tmp_path, "--gpu", "24GiB", "--no-vllm-check")
    assert r.code == 0, r.out
    assert "[ok  ]" in r.out and "0 failure(s)" in r.out


def test_doctor_refuses_a_bad_gpu_size(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    r = cli("doctor", "--root", tmp_path, "--gpu", "huge")
    assert r.code == 64


def test_doctor_reports_the_exposure_of_the_installed_unit(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    import shutil

    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    build_root(tmp_path)
    _, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert found["unit-exposure"].status == "ok", found["unit-exposure"]
    unit = tmp_path / "etc/systemd/system/vllm-qwen.service"
    keep = ("Description", "ExecStart", "User", "Group", "Type", "EnvironmentFile", "WantedBy")
    lines = unit.read_text().splitlines()
    bare = [x for x in lines if "=" not in x or x.startswith(("[", "#")) or x.split("=")[0] in keep]
    unit.write_text("\n".join(bare) + "\n")  # the unit without its confinement
    _, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert found["unit-exposure"].status == "warn" and "above 4.0" in found["unit-exposure"].title


def test_doctor_plans_for_the_targets_release_and_environment(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    # a container's vLLM 0.24.0 (the config says which): it subtracts a CUDA graph estimate from the KV budget,
    # unless the unit's environment turns that off, as the preflight and `plan` read it
    build_root(tmp_path)
    config = tmp_path / "etc/vllm-guard/config.toml"
    base = config.read_text()

    def kv_tokens(extra: str) -> int:
        config.write_text(base.replace('group = "root"\n', f'group = "root"\n{extra}'))
        _, found = doctor(cli, tmp_path, "--no-vllm-check")
        m = re.search(r"= (\d+) tokens", found["model-fits"].measured)
        assert m, found["model-fits"]
        return int(m.group(1))

    graphs = kv_tokens('vllm_version = "0.24.0"\n')
    off = kv_tokens('vllm_version = "0.24.0"\nenvironment = { VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS = "0" }\n')
    old = kv_tokens('vllm_version = "0.19.0"\n')  # before 0.20.0 it is off by default
    assert off > graphs and old > graphs


def test_doctor_plans_each_target_for_its_own_vllm(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    # two units, two vLLMs: 0.24.0 subtracts a CUDA graph estimate, 0.19.0 does not; each target is planned for
    # its own release, and a second python that cannot import vLLM is named
    build_root(tmp_path)
    config = tmp_path / "etc/vllm-guard/config.toml"
    base = config.read_text()
    second = base.replace("port = 8000\n", 'port = 8001\nunit = "vllm-b"\nvllm_version = "0.19.0"\n').replace(
        "/opt/vllm/bin/python3", "/opt/other/bin/python3"
    )
    config.write_text(base.replace('group = "root"\n', 'group = "root"\nvllm_version = "0.24.0"\n', 1) + second)
    r = cli("doctor", "--root", tmp_path, "--gpu", "24GiB", "--json")
    fits = {
        f["title"].split(":")[0]: int(re.search(r"= (\d+) tokens", f["measured"]).group(1))  # type: ignore[union-attr]
        for f in json.loads(r.out)["findings"]
        if f["ref"] == "model-fits"
    }
    assert fits["vllm-b"] > fits["vllm-qwen"]
    missing = [f for f in json.loads(r.out)["findings"] if f["ref"] == "vllm-missing"]
    assert any(f["title"].startswith("vllm-b:") and "/opt/other/bin/python3" in f["measured"] for f in missing)


def test_memory_other_processes_hold_counts_where_the_release_takes_total_minus_free() -> None:
    # V1 before 0.9.2 takes total - free after its profile as its own use: the 30000 MiB the holder keeps leave
    # the KV cache too small; a running vLLM unit's own processes are not counted against it
    old = PlannerParams(engine="v1", vllm_version="0.8.5")
    gpu = GpuFact(0, "L40S", 48 * GiB, 18 * GiB, 30 * GiB, (HOLDER,))
    held = healthy(gpus=(gpu,), params=old, targets=(T(util=0.9),))
    assert "model-kv-too-small" in refs(judge(held))
    assert "model-fits" in refs(judge(replace(held, gpus=(replace(gpu, processes=()),))))
    assert "model-fits" in refs(judge(replace(held, targets=(T(util=0.9, unit_active=True),))))
    # 0.11 measures from a snapshot taken while the memory was already held (and refuses a util above what is free)
    new = replace(held, params=PlannerParams(engine="v1", vllm_version="0.11.0"))
    assert "model-kv-too-small" not in refs(judge(new))


def test_a_model_the_planner_does_not_model_gets_no_kv_verdict() -> None:
    hybrid = replace(Q7, unmodelled_layout="one layer in 4 is full attention (full_attention_interval)")
    findings = judge(healthy(targets=(T(model_info=hybrid),)))
    found = {f.ref: f for f in findings}
    assert (
        found["model-kv-not-modelled"].status == "warn"
        and "full_attention_interval" in found["model-kv-not-modelled"].measured
    )
    assert not {"model-fits", "model-kv-tight", "model-kv-too-small"} & set(found)


def test_a_hybrid_the_planner_models_is_judged_on_its_longest_request() -> None:
    from tests.unit.test_planner_hybrid import QWEN3_NEXT
    from vllm_guard.core.modelinfo import model_info_from_config

    info = model_info_from_config(QWEN3_NEXT)
    gpu = GpuFact(0, "H200", int(139.8 * GiB), int(139.8 * GiB), 0)
    facts = healthy(
        gpus=(gpu, replace(gpu, index=1)),
        params=PlannerParams(engine="v1", vllm_version="0.11.0"),
        targets=(T(model_info=info, tp=2, max_model_len=262144, util=0.9),),
    )
    found = {f.ref: f for f in judge(facts)}
    assert "model-kv-not-modelled" not in found
    assert found["model-fits"].status == "ok" and "Gated DeltaNet" in found["model-fits"].measured


def test_a_hybrid_model_with_more_sequences_than_state_blocks_fails_the_check() -> None:
    # Qwen3.5-27B on one 80 GB card: vLLM's default max_num_seqs there is 1024, its state blocks a few hundred
    from tests.unit.test_planner_hybrid import QWEN35_27B

    info = model_info_from_config(QWEN35_27B)
    gpu = (GpuFact(0, "NVIDIA H100 80GB HBM3", int(79.19 * GiB), int(79 * GiB), 0),)
    target = healthy_target(model_info=info, max_model_len=32768)
    p = PlannerParams(engine="v1", vllm_version="0.26.0")
    found = next(
        f for f in judge(healthy(gpus=gpu, targets=(target,), params=p)) if f.ref == "model-seqs-above-state-blocks"
    )
    assert found.status == "fail" and "vLLM's default" in found.measured and "set max_num_seqs to" in found.hint
    few = replace(target, params=replace(p, max_num_seqs=64))
    assert "model-seqs-above-state-blocks" not in refs(judge(healthy(gpus=gpu, targets=(few,), params=p)))
    # before 0.19 vLLM capped its CUDA graphs to the blocks instead of refusing
    old = PlannerParams(engine="v1", vllm_version="0.18.0")
    assert "model-seqs-above-state-blocks" not in refs(judge(healthy(gpus=gpu, targets=(target,), params=old)))


def test_a_quantization_flag_the_checkpoint_does_not_carry_fails() -> None:
    # vLLM's get_quant_config reads an AWQ/GPTQ/ModelOpt method's parameters from the checkpoint: an unquantized
    # one stops it at "Cannot find the config file for awq"
    awq = healthy(targets=(healthy_target(quantization="awq"),))
    (found,) = [f for f in judge(awq) if f.ref == "model-quantization-not-in-checkpoint"]
    assert found.status == "fail" and "Cannot find the config file for awq" in found.measured
    # a method vLLM applies while loading an unquantized checkpoint is fine
    assert "model-quantization-not-in-checkpoint" not in refs(
        judge(healthy(targets=(healthy_target(quantization="fp8"),)))
    )
    # an older GPTQ checkpoint keeps its parameters in quantize_config.json beside config.json
    folder = FolderFacts(safetensors=4, quant_config_files=("quantize_config.json",))
    gptq = healthy(targets=(healthy_target(quantization="gptq", folder=folder),))
    assert "model-quantization-not-in-checkpoint" not in refs(judge(gptq))
    # a checkpoint whose config.json declares it
    quantized = model_info_from_config(
        {
            **json.loads((DATA / "models/Qwen2.5-7B-Instruct/config.json").read_text()),
            "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128},
        }
    )
    declared = healthy(targets=(healthy_target(quantization="awq", model_info=quantized),))
    assert "model-quantization-not-in-checkpoint" not in refs(judge(declared))


def test_doctor_reads_the_quantization_flag_and_the_folder(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    build_root(tmp_path)
    config = tmp_path / "etc/vllm-guard/config.toml"
    config.write_text(config.read_text() + '[target.flags]\nquantization = "gptq"\n')
    _, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert found["model-quantization-not-in-checkpoint"].status == "fail"
    (tmp_path / "models/tiny/quantize_config.json").write_text('{"bits": 4, "group_size": 128}')
    _, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert "model-quantization-not-in-checkpoint" not in found
    # a fallback: the same folder without the file, asked for with AWQ
    plain = tmp_path / "models/tiny-plain"
    shutil.copytree(tmp_path / "models/tiny", plain)
    (plain / "quantize_config.json").unlink()
    config.write_text(config.read_text() + '[[target.fallback]]\nmodel = "/models/tiny-plain"\nquantization = "awq"\n')
    _, found = doctor(cli, tmp_path, "--no-vllm-check")
    assert found["fallback-quantization-not-in-checkpoint"].status == "warn"


def test_a_fallback_asking_for_a_quantization_its_checkpoint_lacks_fails() -> None:
    awq = model_info_from_config(
        {
            **json.loads((DATA / "models/Qwen2.5-7B-Instruct/config.json").read_text()),
            "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128},
        }
    )
    wrong = FallbackFacts("/models/q7-plain", "awq", Q7)
    right = FallbackFacts("/models/q7-awq", "awq", awq)
    unread = FallbackFacts("/models/not-there-yet", "awq")  # the daemon waits for a missing folder; not judged
    found = judge(healthy(targets=(healthy_target(fallbacks=(wrong, right, unread)),)))
    (warned,) = [f for f in found if f.ref == "fallback-quantization-not-in-checkpoint"]
    assert warned.status == "warn" and "/models/q7-plain" in warned.title


def test_a_quantization_flag_naming_another_method_than_the_checkpoints_warns() -> None:
    gptq = model_info_from_config(
        {
            **json.loads((DATA / "models/Qwen2.5-7B-Instruct/config.json").read_text()),
            "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128},
        }
    )

    def found(flag: str) -> set[str]:
        return refs(judge(healthy(targets=(healthy_target(quantization=flag, model_info=gptq),))), "warn")

    assert "model-quantization-other-method" in found("awq")
    assert "model-quantization-other-method" in found("fp8")
    # a kernel of the checkpoint's own method is accepted by vLLM
    for kernel in ("gptq", "gptq_marlin", "marlin", "gptq_bitblas", "moe_wna16"):
        assert "model-quantization-other-method" not in found(kernel), kernel
