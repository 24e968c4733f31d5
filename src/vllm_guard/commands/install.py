"""`vllm-guard install`: write the rendered units under --root and reload systemd."""

from __future__ import annotations

import argparse

from vllm_guard.cli import add_common
from vllm_guard.exitcodes import ExitCode

HELP = "write the rendered units under --root and reload systemd"
DESCRIPTION = (
    "Write each target's unit into ROOT/etc/systemd/system and its env file into ROOT/var/lib/vllm-guard "
    "(the env file only when it does not exist yet, or with --reset-flags: it holds the guard's current "
    "flags), then run `systemctl daemon-reload` unless --no-reload."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument("--no-reload", action="store_true", help="do not run `systemctl daemon-reload`")
    p.add_argument("--reset-flags", action="store_true", help="overwrite the env files with the base flags")
    p.add_argument("--enable", action="store_true", help="also `systemctl enable` the vLLM units")


def run(args: argparse.Namespace) -> int:
    from vllm_guard.adapters import systemctl
    from vllm_guard.app.config_load import load_config
    from vllm_guard.app.render import render_all, write_rendered
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    loaded = load_config(paths, args.config, absent_ok=True)  # a model not mounted yet: its unit waits for it
    files = render_all(loaded, paths)
    kept = (
        []
        if args.reset_flags
        else [f for f in files if f.name.endswith(".env") and (paths.state_dir / f.name).exists()]
    )
    keep = [f for f in files if f not in kept]
    for written in write_rendered(keep, paths.unit_dir, paths.state_dir):
        print(f"wrote {written}")
    from vllm_guard.commands.run import say_absent

    say_absent(loaded, paths)
    for env in kept:
        print(
            f"kept {paths.state_dir / env.name}: the guard owns the flags in it; when the config's base flags "
            "changed, the running guard starts over from them once it reloads (systemctl reload vllm-guard); "
            "--reset-flags writes them now"
        )
    if not args.no_reload:
        systemctl.daemon_reload()
        print("systemctl daemon-reload: done")
    if args.enable:
        for target in loaded.config.target:
            systemctl.run("enable", target.unit_file)
            print(
                f"systemctl enable {target.unit_file}: it starts at boot "
                f"(start it now: systemctl start {target.unit_file})"
            )
    return int(ExitCode.OK)
