"""Rendering every target's unit and env file from a loaded config, and writing them."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from vllm_guard.adapters.files import atomic_write
from vllm_guard.app.config_load import Loaded, read_api_key
from vllm_guard.consts import Paths
from vllm_guard.core.render import Rendered, render_env, render_unit
from vllm_guard.errors import GuardError
from vllm_guard.exitcodes import ExitCode

UNIT_TEMPLATE = "vllm-unit.service.j2"


def data_dir(name: str) -> Path:
    """``templates/`` or ``units/``: inside the installed package, or at the top of a source checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_data" / name, here.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise GuardError(
        "data-missing",
        f"cannot find the {name}/ folder of vllm-guard (looked in {here / '_data'} and the source tree)",
        "reinstall vllm-guard",
        exit_code=ExitCode.SOFTWARE,
    )


def guard_executable() -> list[str]:
    """The command that runs this ``vllm-guard`` (for ExecStartPost=), as absolute words."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "vllm-guard" and argv0.is_absolute():
        return [str(argv0)]
    found = shutil.which("vllm-guard")
    if found:
        return [found]
    if argv0.name == "__main__.py" or "pytest" in argv0.name:  # `python -m vllm_guard`, or the tests
        return [sys.executable, "-m", "vllm_guard"]
    return ["/usr/bin/vllm-guard"]


def render_all(loaded: Loaded, paths: Paths, *, with_api_keys: bool = True) -> list[Rendered]:
    template = (data_dir("templates") / UNIT_TEMPLATE).read_text(encoding="utf-8")
    guard_exec = guard_executable()
    out: list[Rendered] = []
    sources = [str(f) for f in loaded.files]
    # `probe --wait` in ExecStartPost= reads the same config the units were rendered from
    explicit = loaded.files[0] if loaded.files and loaded.files[0] != paths.config_file else None
    guard_config = str(explicit.resolve()) if explicit is not None else None
    for target in loaded.config.target:
        env_path = str(paths.env_file_on_host(target.unit))
        out.append(
            Rendered(
                name=target.unit_file,
                text=render_unit(
                    template,
                    target,
                    env_file=env_path,
                    guard_exec=guard_exec,
                    guard_config=guard_config,
                    sources=sources,
                ),
            )
        )
        api_key = read_api_key(target, paths) if with_api_keys else None
        if target.api_key_file is not None and not with_api_keys:
            api_key = "<from " + target.api_key_file + ">"
        out.append(
            Rendered(
                name=f"{target.unit}.env",
                text=render_env(target, model=target.model, flags=target.flags, api_key=api_key),
                mode=0o600,
            )
        )
    return out


def write_rendered(files: list[Rendered], unit_dir: Path, env_dir: Path) -> list[Path]:
    written = []
    for f in files:
        dest = (env_dir if f.name.endswith(".env") else unit_dir) / f.name
        try:
            atomic_write(dest, f.text, mode=f.mode)
        except OSError as err:
            raise GuardError(
                "cannot-write",
                f"cannot write {dest}: {err.strerror or err}",
                "run as root, or pick another --root/--out",
                exit_code=ExitCode.CANTCREAT,
            ) from None
        written.append(dest)
    return written
