"""Rendering the vLLM units and the env files the guard owns.

Pure: the jinja2 template sources are passed in as text (``vllm_guard.app.render`` reads them from
``templates/``); every value is escaped for systemd here, so the templates only place them.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import jinja2

from vllm_guard import __version__
from vllm_guard.consts import ENV_API_KEY, ENV_ARGS, ENV_MODEL
from vllm_guard.core import systemd_escape as esc
from vllm_guard.core.config import Flags, Target


@dataclass(frozen=True)
class Rendered:
    """One file to write: its name and text."""

    name: str
    text: str
    mode: int = 0o644


def served_args(target: Target) -> list[str]:
    """The fixed arguments that never change with a remedy (the served name stays the same)."""
    return ["--served-model-name", target.name, "--host", target.host, "--port", str(target.port)]


def render_env(target: Target, *, model: str, flags: Flags, api_key: str | None, note: str = "") -> str:
    """The env file of one vLLM unit: the model path and the tunable flags (and the API key)."""
    lines = [
        f"# {target.unit_file}: flags written by vllm-guard {__version__}. The guard rewrites this file",
        f"# before each restart; `vllm-guard reset {target.unit}` puts the base flags from the config back.",
    ]
    if note:
        lines.append(f"# {note}")
    lines.append(f"{ENV_MODEL}={esc.env_file_value(model)}")
    lines.append(f"{ENV_ARGS}={esc.env_file_value(' '.join(flags.to_args()))}")
    for name, value in flags.to_env().items():
        lines.append(f"{name}={esc.env_file_value(value)}")
    if api_key is not None:
        lines.append(f"{ENV_API_KEY}={esc.env_file_value(api_key)}")
    return "\n".join(lines) + "\n"


def _environment_lines(env: Mapping[str, str]) -> list[str]:
    return [esc.environment_assignment(k, v) for k, v in sorted(env.items())]


# Addresses that are there before any network is: loopback, and the wildcards that bind every interface.
_LOCAL_OR_ANY = frozenset({"127.0.0.1", "::1", "localhost", "0.0.0.0", "::", ""})
_PLAIN_PATH = re.compile(r"[A-Za-z0-9._/+:@-]+")


def _mount_path(path: str) -> str:
    """A path for RequiresMountsFor=: the folder itself, or its nearest ancestor that needs no quoting.

    systemd orders the unit after the mounts of every prefix of the path, so an ancestor keeps the order
    for any mount point above it, and a folder named with spaces, quotes or % cannot break the unit file.
    """
    while path != "/" and not _PLAIN_PATH.fullmatch(path):
        path = path.rsplit("/", 1)[0] or "/"
    return path


_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
_HOME_TREES = ("/home", "/root", "/run/user")
# The NVIDIA driver's device classes (/proc/devices): nvidia-frontend holds /dev/nvidiactl and /dev/nvidia<N>,
# nvidia-uvm /dev/nvidia-uvm (CUDA's unified memory), nvidia-caps /dev/nvidia-caps/* (MIG).
NVIDIA_DEVICE_CLASSES = ("char-nvidia-frontend", "char-nvidia-uvm", "char-nvidia-caps")
UNSET = "unset"  # a hardening override that drops the directive


@dataclass(frozen=True)
class Hardening:
    """One sandboxing directive of the vLLM unit: its values (one line each) and why, in the unit's words."""

    key: str
    values: tuple[str, ...]
    why: str = ""


def hardening(target: Target) -> list[Hardening]:
    """The tightest confinement under which vLLM still loads, compiles and serves, with the target's overrides
    (``[target.hardening]``: a directive's new value, or "unset" to drop it)."""
    gpu = target.device == "gpu"
    paths = [target.model, *(f.model for f in target.fallback), *([target.api_key_file] if target.api_key_file else [])]
    in_home = any(p == tree or p.startswith(tree + "/") for p in paths for tree in _HOME_TREES)
    rows = [
        Hardening("NoNewPrivileges", ("yes",)),
        Hardening("CapabilityBoundingSet", ("",), "vLLM needs no capability, even when it runs as root"),
        Hardening("AmbientCapabilities", ("",)),
        Hardening(
            "ProtectSystem",
            ("strict",),
            "the OS is read-only; vLLM writes only its cache folder (HOME below: Triton, torch.compile and "
            "Hugging Face caches), its private /tmp and /dev/shm",
        ),
        Hardening(
            "ProtectHome",
            ("read-only",) if in_home else ("yes",),
            "a model folder is under a home folder: homes stay readable, not writable"
            if in_home
            else "no home folder is visible (the model folders are elsewhere)",
        ),
        Hardening("PrivateTmp", ("yes",)),
        Hardening("PrivateMounts", ("yes",)),
    ]
    if gpu:
        rows += [
            Hardening(
                "DevicePolicy",
                ("closed",),
                "no device but the pseudo devices and the NVIDIA ones below (a PrivateDevices= /dev has no GPU)",
            ),
            Hardening(
                "DeviceAllow",
                tuple(f"{c} rw" for c in NVIDIA_DEVICE_CLASSES),
                "classes the driver registers when it loads: nvidia-uvm must be loaded before the unit starts "
                "(nvidia-persistenced or a modules-load.d entry does it at boot)",
            ),
        ]
    else:
        rows.append(Hardening("PrivateDevices", ("yes",), "vLLM's CPU backend needs no device"))
    rows += [
        Hardening("ProtectKernelTunables", ("yes",)),
        Hardening("ProtectKernelModules", ("yes",)),
        Hardening("ProtectKernelLogs", ("yes",)),
        Hardening("ProtectControlGroups", ("yes",)),
        Hardening("ProtectClock", ("yes",)),
        Hardening("ProtectHostname", ("yes",)),
        Hardening(
            "ProtectProc",
            ("invisible",),
            "other users' processes are hidden; no ProcSubset=pid: vLLM and PyTorch read /proc/meminfo and "
            "/proc/cpuinfo",
        ),
        Hardening(
            "RestrictAddressFamilies",
            ("AF_UNIX AF_INET AF_INET6 AF_NETLINK",),
            "the API (inet), its engine and workers (unix), interface lookups (netlink)",
        ),
        Hardening("RestrictNamespaces", ("yes",)),
        Hardening("RestrictSUIDSGID", ("yes",)),
        Hardening("RestrictRealtime", ("yes",)),
        Hardening("LockPersonality", ("yes",)),
        Hardening("RemoveIPC", ("yes",)),
        Hardening("KeyringMode", ("private",)),
        Hardening("UMask", ("0077",)),
        Hardening("SystemCallArchitectures", ("native",)),
        Hardening(
            "SystemCallFilter",
            ("@system-service",),
            "what a service needs (NUMA binding and CPU affinity included); a call outside it fails with EPERM "
            "instead of killing vLLM",
        ),
        Hardening("SystemCallErrorNumber", ("EPERM",)),
    ]
    if target.host in _LOOPBACK:
        rows += [
            Hardening(
                "IPAddressDeny",
                ("any",),
                f"vLLM listens on {target.host}: only this host talks to it, and it reaches nothing outside",
            ),
            Hardening("IPAddressAllow", ("localhost",)),
        ]
    out = []
    for row in rows:
        if row.key in target.hardening:
            value = target.hardening[row.key]
            if value == UNSET:
                continue
            row = Hardening(row.key, (value,), "set by [target.hardening] in the config")
        out.append(row)
    known = {r.key for r in rows}
    out += [
        Hardening(k, (v,), "added by [target.hardening] in the config")
        for k, v in sorted(target.hardening.items())
        if k not in known and v != UNSET
    ]
    return out


def render_unit(
    template_source: str,
    target: Target,
    *,
    env_file: str,
    guard_exec: Sequence[str],
    guard_config: str | None = None,
    sources: Sequence[str] = (),
) -> str:
    """The ``<unit>.service`` text of one target."""
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.from_string(template_source)
    exec_start = " ".join(
        [
            esc.exec_line(target.command),
            "--model",
            "${" + ENV_MODEL + "}",  # braced: exactly one argument, whatever the path holds
            esc.exec_line(served_args(target)),
            "$" + ENV_ARGS,  # unbraced: split into the flag words
            esc.exec_line(target.extra_args),
        ]
    ).rstrip()
    return template.render(
        version=__version__,
        sources=", ".join(esc.specifiers(s) for s in sources) or "the built-in defaults",
        unit=target.unit,
        description=esc.specifiers(f"vLLM server for {target.name} on port {target.port}"),
        user=target.user,
        group=target.group,
        env_file=esc.specifiers(env_file),
        environment=_environment_lines(target.environment),
        exec_start=exec_start,
        exec_start_post=(
            esc.exec_line(
                [*guard_exec, "probe", "--wait", *(["--config", guard_config] if guard_config else []), target.unit]
            )
            if target.probe.exec_start_post
            else None
        ),
        restart=target.restart,
        host=target.host,
        network_online=target.host not in _LOCAL_OR_ANY,
        mounts=" ".join(dict.fromkeys(_mount_path(m) for m in (target.model, *(f.model for f in target.fallback)))),
        startup_timeout_s=target.startup_timeout_s,
        stop_timeout_s=target.stop_timeout_s,
        memory_max=target.memory_max,
        memory_high=target.memory_high,
        hardening=[(h.key, h.values, textwrap.wrap(h.why, 110)) for h in hardening(target)],
    )
