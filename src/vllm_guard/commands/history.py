"""`vllm-guard history UNIT`: the attempts, failures and remedies of one unit."""

from __future__ import annotations

import argparse
import json

from vllm_guard.cli import add_common
from vllm_guard.exitcodes import ExitCode

HELP = "the attempts, failures and remedies of one unit"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    p.add_argument("unit", help="the vLLM unit (e.g. vllm-qwen)")


def run(args: argparse.Namespace) -> int:
    from vllm_guard.app.report import format_history, target_history
    from vllm_guard.app.statefile import StateStore
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    state = StateStore(paths.state_file).load()
    data = target_history(state, args.unit)
    print(json.dumps(data) if args.json else format_history(data))
    return int(ExitCode.OK)
