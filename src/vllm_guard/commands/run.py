"""`vllm-guard run`: the daemon (vllm-guard.service, Type=notify)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from vllm_guard.cli import add_common
from vllm_guard.exitcodes import ExitCode

if TYPE_CHECKING:
    from vllm_guard.app.config_load import Loaded
    from vllm_guard.consts import Paths

HELP = "the daemon: follow the journal, remedy memory failures, verify restarts"
DESCRIPTION = (
    "Follow the journal of every configured vLLM unit, classify each failed start, change the right flag "
    "in the unit's env file before systemd restarts it, and verify that the model answers afterwards. "
    "Sends READY/STATUS/WATCHDOG to systemd; SIGHUP reloads the config, SIGTERM stops it."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument(
        "--check",
        action="store_true",
        help="validate the config and the set-up each unit needs (command, vLLM, user, readable files, metrics "
        "folder), then exit (no daemon); exit 78 on an invalid config, 1 on a set-up problem",
    )
    p.add_argument(
        "--config-only", action="store_true", help="with --check: the config files only (what a reload needs)"
    )


def run(args: argparse.Namespace) -> int:
    from vllm_guard.app.config_load import load_config
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    if args.check:
        loaded = load_config(paths, args.config, absent_ok=True)
        print(f"config ok: {len(loaded.config.target)} target(s) from {', '.join(map(str, loaded.files))}")
        if args.config_only:  # a reload: a model folder that is not there yet makes its target wait, not fail
            say_absent(loaded, paths)
            return int(ExitCode.OK)
        from vllm_guard.app.setup_check import findings

        problems = findings(loaded, paths)
        for f in problems:
            print(f"vllm-guard: error[{f.ref}]: {f.title}\n  hint: {f.hint}", file=sys.stderr)
        if problems:
            return int(ExitCode.WARN)
        print("set-up ok: every unit's command, user and files are in place")
        return int(ExitCode.OK)

    from vllm_guard.app.daemon import Daemon, Deps

    deps = Deps(echo="INVOCATION_ID" not in os.environ)  # print events too when not run by systemd
    return Daemon(paths, args.config, deps).run()


def say_absent(loaded: Loaded, paths: Paths) -> None:
    from vllm_guard.app.config_load import absent_paths

    for t in loaded.config.target:
        absent = absent_paths(t, paths)
        if absent:
            print(
                f"vllm-guard: warning[files-absent]: {t.unit_file}: {'; '.join(absent)}: the guard "
                "waits for them and guards the other units meanwhile\n  hint: mount or copy them there, or fix "
                "the path",
                file=sys.stderr,
            )
