"""`vllm-guard run`: the daemon (vllm-guard.service, Type=notify)."""

from __future__ import annotations

import argparse
import os

from vllm_guard.cli import add_common
from vllm_guard.exitcodes import ExitCode

HELP = "the daemon: follow the journal, remedy memory failures, verify restarts"
DESCRIPTION = (
    "Follow the journal of every configured vLLM unit, classify each failed start, change the right flag "
    "in the unit's env file before systemd restarts it, and verify that the model answers afterwards. "
    "Sends READY/STATUS/WATCHDOG to systemd; SIGHUP reloads the config, SIGTERM stops it."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument("--check", action="store_true", help="validate the config and exit (no daemon)")


def run(args: argparse.Namespace) -> int:
    from vllm_guard.app.config_load import load_config
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    if args.check:
        loaded = load_config(paths, args.config)
        print(f"config ok: {len(loaded.config.target)} target(s) from {', '.join(map(str, loaded.files))}")
        return int(ExitCode.OK)

    from vllm_guard.app.daemon import Daemon, Deps

    deps = Deps(echo="INVOCATION_ID" not in os.environ)  # print events too when not run by systemd
    return Daemon(paths, args.config, deps).run()
