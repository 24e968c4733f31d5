"""Rendering the vLLM units and the env files the guard owns.

Pure: the jinja2 template sources are passed in as text (``vllm_guard.app.render`` reads them from
``templates/``); every value is escaped for systemd here, so the templates only place them.
"""

from __future__ import annotations

import re
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
    )
