"""Doctor: gather the facts (config, units, GPUs, model folders, host), judge them, report."""

from __future__ import annotations

import contextlib
import difflib
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from vllm_guard.adapters import host
from vllm_guard.adapters.modelfs import load_model_info, quant_config_files, scan_folder
from vllm_guard.adapters.nvml import GpuReport
from vllm_guard.app.config_load import Loaded, load_config
from vllm_guard.consts import ENV_ARGS, GUARD_UNIT, Paths
from vllm_guard.core.config import Target
from vllm_guard.core.doctor import (
    Facts,
    FallbackFacts,
    Finding,
    FolderFacts,
    GpuFact,
    GpuProcessFact,
    SwapFact,
    TargetFacts,
)
from vllm_guard.core.planner import PlannerParams
from vllm_guard.core.state import base_hash
from vllm_guard.errors import GuardError


@dataclass(frozen=True)
class Checks:
    """Which live checks to run (the ones that only make sense on the real host can be switched off)."""

    vllm: bool = True
    journal: bool = True
    units_active: bool = True  # ask systemd whether the vLLM units and the guard run
    port: bool = True


def _gpu_facts(report: GpuReport) -> tuple[GpuFact, ...]:
    return tuple(
        GpuFact(
            index=d.index,
            name=d.name,
            total=d.cuda_total,  # as CUDA reports it, and vLLM sizes gpu_memory_utilization on it
            free=d.free,
            used=d.used,
            processes=tuple(GpuProcessFact(p.pid, p.used_mib, p.command) for p in d.processes),
            reserved=d.reserved,
        )
        for d in report.devices
    )


def _env_args(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(f"{ENV_ARGS}="):
            return line.partition("=")[2]
    return None


def unit_running(unit: str) -> bool:
    """Whether systemd says the unit runs (or starts); False where it cannot be asked."""
    return _active(unit) is True


def _active(unit: str) -> bool | None:
    from vllm_guard.adapters import systemctl

    try:
        state = systemctl.show(unit, "ActiveState").get("ActiveState")
    except GuardError:
        return None
    return None if state is None else state in ("active", "activating", "reloading")


def _target_facts(
    target: Target,
    loaded: Loaded,
    paths: Paths,
    rendered: dict[str, str],
    checks: Checks,
    guard_base: str | None = None,
) -> TargetFacts:
    """``guard_base``: the hash of the base flags the guard last started from (state file), None if never."""
    folder_path = paths.under(target.model.lstrip("/"))
    model_error = None
    info = None
    folder = None
    try:
        info = load_model_info(folder_path)
        report = scan_folder(folder_path)
        folder = FolderFacts(
            safetensors=len(report.safetensors),
            training_files=tuple(report.training_files),
            bin_files=tuple(report.bin_files),
            missing_shards=tuple(report.missing_shards),
            size_mismatches=tuple(report.size_mismatches),
            header_errors=tuple(report.header_errors),
            index_error=report.index_error,
            quant_config_files=tuple(report.quant_config_files),
        )
    except GuardError as err:
        model_error = f"[{err.ref}] {err.message}"
    unit_state = None
    unit_diff = ""
    want_unit = rendered.get(target.unit_file)
    if want_unit is not None:
        have = paths.unit_dir / target.unit_file
        try:
            text = have.read_text(encoding="utf-8")
        except OSError:
            unit_state = "missing"
        else:
            if text == want_unit:
                unit_state = "matches"
            else:
                unit_state = "differs"
                diff = difflib.unified_diff(text.splitlines(), want_unit.splitlines(), lineterm="", n=0)
                unit_diff = "; ".join(d for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---"))[:400]
    unit_text = None
    with contextlib.suppress(OSError):
        unit_text = (paths.unit_dir / target.unit_file).read_text(encoding="utf-8")
    limit = _limit_nofile(unit_text if unit_text is not None else want_unit or "")
    env_state = None
    env_detail = ""
    want_env = rendered.get(f"{target.unit}.env")
    if want_env is not None:
        try:
            env_text = paths.env_file(target.unit).read_text(encoding="utf-8")
        except OSError:
            env_state = "missing"
        else:
            have_args, base_args = _env_args(env_text), _env_args(want_env)
            if have_args == base_args:
                env_state = "base"
            else:
                # the guard's own changes, or flags from before a person changed the config's base ones
                env_state = "changed" if guard_base == base_hash(target) else "base_changed"
                env_detail = f"now: {have_args or '(none)'}; base: {base_args}"
    active = _active(target.unit_file) if checks.units_active else None
    in_use = host.port_in_use(target.host, target.port) if checks.port else None
    return TargetFacts(
        unit=target.unit,
        model=target.model,
        util=target.flags.gpu_memory_utilization,
        tp=target.flags.tensor_parallel_size,
        max_model_len=target.flags.max_model_len,
        kv_cache_dtype=target.flags.kv_cache_dtype,
        host=target.host,
        port=target.port,
        swap_space_gib=target.flags.swap_space,
        cpu_offload_gb=target.flags.cpu_offload_gb,
        quantization=target.flags.quantization,
        fallbacks=tuple(_fallback_facts(fb.model, fb.quantization, paths) for fb in target.fallback),
        device=target.device,
        cpu_kv_gib=_cpu_kv_gib(target),
        model_error=model_error,
        model_info=info,
        folder=folder,
        unit_state=unit_state,  # type: ignore[arg-type]
        unit_diff=unit_diff,
        env_state=env_state,  # type: ignore[arg-type]
        env_detail=env_detail,
        unit_active=active,
        port_in_use=in_use,
        limit_nofile=limit,
        exposure=_exposure(paths.unit_dir / target.unit_file) if unit_text is not None else None,
    )


def _fallback_facts(model: str, quantization: str | None, paths: Paths) -> FallbackFacts:
    folder = paths.under(model.lstrip("/"))
    try:
        info = load_model_info(folder)
    except GuardError:
        return FallbackFacts(model, quantization)
    return FallbackFacts(model, quantization, info, tuple(quant_config_files(folder)))


def _cpu_kv_gib(target: Target) -> int | None:
    """The KV cache GiB a CPU-backend vLLM is given: the flag, else the unit's own environment."""
    if target.flags.cpu_kvcache_space_gib is not None:
        return target.flags.cpu_kvcache_space_gib
    raw = target.environment.get("VLLM_CPU_KVCACHE_SPACE", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


INFINITY = 1 << 31


def _exposure(unit_file: Path) -> float | None:
    """systemd's exposure score of the installed unit (offline: the file as it is), None where it cannot tell."""
    import re
    import shutil
    import subprocess

    if shutil.which("systemd-analyze") is None:
        return None
    try:
        out = subprocess.run(
            ["systemd-analyze", "security", "--offline=yes", str(unit_file)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", out)
    return float(m.group(1)) if m else None


def _limit_nofile(unit_text: str) -> tuple[int, int] | None:
    """LimitNOFILE= of a unit: N, SOFT:HARD or infinity (systemd.exec(5)); the last one wins."""
    value = None
    for line in unit_text.splitlines():
        if line.startswith("LimitNOFILE="):
            value = line.partition("=")[2].strip()
    if not value:
        return None
    soft_s, _, hard_s = value.partition(":")
    try:
        soft = INFINITY if soft_s == "infinity" else int(soft_s)
        hard = soft if not hard_s else INFINITY if hard_s == "infinity" else int(hard_s)
    except ValueError:
        return None
    return soft, hard


def gather(paths: Paths, explicit: Path | None, gpus: GpuReport, checks: Checks | None = None) -> Facts:
    c = checks or Checks()
    config_error = None
    config_ref = "config-invalid"
    targets: list[TargetFacts] = []
    python = None
    try:
        loaded = load_config(paths, explicit, check_files=False)
    except GuardError as err:
        config_error, config_ref = err.message, err.ref
    else:
        from vllm_guard.app.render import render_all

        try:
            rendered = {r.name: r.text for r in render_all(loaded, paths, with_api_keys=False)}
        except GuardError:
            rendered = {}
        from vllm_guard.app.statefile import StateStore

        try:
            guard_state = StateStore(paths.state_file).load()
        except GuardError:
            guard_state = None
        for t in loaded.config.target:
            ts = guard_state.targets.get(t.unit) if guard_state is not None else None
            targets.append(_target_facts(t, loaded, paths, rendered, c, ts.base_hash if ts else None))
        from vllm_guard.app.place import python_of

        python = python_of(loaded.config.target[0])
    # each target's vLLM, asked once per python: the planner counts the release that target runs
    asked: dict[str, tuple[str | None, str | None]] = {}
    if targets:
        from vllm_guard.app.place import python_of

        for t in loaded.config.target:
            py = python_of(t)
            if c.vllm and py is not None and py not in asked:
                asked[py] = host.vllm_version(py)
        targets = [
            _with_vllm(facts, t, asked.get(python_of(t) or ""), first=i == 0)
            for i, (facts, t) in enumerate(zip(targets, loaded.config.target, strict=True))
        ]
    mem = host.read_meminfo(paths.root)
    node = host.read_node_memory(paths.root)
    swaps = tuple(
        SwapFact(path=s.path, kind=s.kind, size=s.size, used=s.used, rotational=rot, fstype=fs)
        for s, rot, fs in host.swap_facts(paths.root)
    )
    soft, hard = host.nofile_limit()
    version = err_v = None
    if python is not None and python in asked:
        version, err_v = asked[python]
    journal_err = host.journal_error() if c.journal else None
    params = _planner_params(loaded.config.target[0] if targets else None, version)
    return Facts(
        gpus=_gpu_facts(gpus),
        gpu_error=gpus.error,
        gpu_fake=gpus.fake,
        driver_version=gpus.driver_version,
        config_error=config_error,
        config_ref=config_ref,
        targets=tuple(targets),
        mem_total=mem.get("MemTotal", 0),
        mem_available=mem.get("MemAvailable", 0),
        node_total=node[0] if node else None,
        node_available=node[1] if node else None,
        swap_total=mem.get("SwapTotal", 0),
        swap_free=mem.get("SwapFree", 0),
        swappiness=host.read_swappiness(paths.root),
        swaps=swaps,
        shm_bytes=host.shm_bytes(paths.root),
        nofile_soft=soft,
        nofile_hard=hard,
        vllm_version=version,
        vllm_error=err_v,
        journal_error=journal_err,
        journal_checked=c.journal,
        guard_active=_active(GUARD_UNIT) if c.units_active else None,
        params=params,
    )


def _with_vllm(
    facts: TargetFacts, target: Target, vllm: tuple[str | None, str | None] | None, *, first: bool
) -> TargetFacts:
    """A target's facts with what the planner is told of its own vLLM; an import that failed is said for the
    targets after the first (the first's is the host-wide `vllm` finding)."""
    version, error = vllm or (None, None)
    return replace(facts, params=_planner_params(target, version), vllm_error=None if first else error)


def _planner_params(target: Target | None, version: str | None) -> PlannerParams:
    """What the planner is told of a target's vLLM, as the preflight tells it: the release (imported, else
    ``place.vllm_release``), its sampler path and whether it subtracts a CUDA graph estimate (the unit's
    environment, else the release's default)."""
    if target is None:
        return PlannerParams()
    from vllm_guard.app.place import flashinfer_of, vllm_release
    from vllm_guard.core.planner import estimate_cudagraphs_of, release_and_engine

    release, engine = release_and_engine(version or vllm_release(target)[0])
    return PlannerParams(
        engine=engine,
        vllm_version=release,
        flashinfer_sampler=flashinfer_of(target, release),
        estimate_cudagraphs=estimate_cudagraphs_of(release, target.environment),
        enforce_eager=target.flags.enforce_eager,
    )


SYMBOL = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def render_text(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        lines.append(f"[{SYMBOL[f.status]}] {f.title}  ({f.ref})")
        if f.measured:
            lines.append(f"         measured: {f.measured}")
        if f.hint and f.status != "ok":
            lines.append(f"         hint: {f.hint}")
    counts = {s: sum(1 for f in findings if f.status == s) for s in ("ok", "warn", "fail")}
    lines.append(f"{counts['ok']} ok, {counts['warn']} warning(s), {counts['fail']} failure(s)")
    return "\n".join(lines)


def quote_cmd(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)
