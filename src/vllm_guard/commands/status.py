"""`vllm-guard status`: per target, state, current flags against the base ones, last failure and start."""

from __future__ import annotations

import argparse
import json

from vllm_guard.cli import add_common
from vllm_guard.exitcodes import ExitCode

HELP = "per target: state, current flags against the base ones, last failure, last verified start"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)


def run(args: argparse.Namespace) -> int:
    from vllm_guard.app.config_load import load_config
    from vllm_guard.app.report import format_status, target_status
    from vllm_guard.app.statefile import StateStore
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    loaded = load_config(paths, args.config, check_files=False)
    state = StateStore(paths.state_file).load()
    data = target_status(loaded.config, state)
    print(json.dumps(data) if args.json else format_status(data))
    return int(ExitCode.OK)
