"""`vllm-guard history UNIT`: the attempts, failures and remedies of one unit; with ``--journal-dir``, the guard's
events of many hosts from a collector's journal folder."""

from __future__ import annotations

import argparse
import json

from vllm_guard.cli import add_common, add_journal_dir
from vllm_guard.errors import UsageError
from vllm_guard.exitcodes import ExitCode

HELP = "the attempts, failures and remedies of one unit"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    add_journal_dir(p)
    p.add_argument(
        "unit",
        nargs="?",
        metavar="UNIT",
        help="the vLLM unit (e.g. vllm-qwen); with --journal-dir it may be left out: every unit's events",
    )


def run(args: argparse.Namespace) -> int:
    if args.journal_dir is not None:
        from vllm_guard.app.report import fleet_history, format_fleet_history, read_journal_dir

        unit = None if args.unit is None else _unit_file(args.unit)
        entries = read_journal_dir(args.journal_dir, unit=unit, host=args.host)
        data = fleet_history(entries, folder=args.journal_dir, unit=unit, host=args.host)
        print(json.dumps(data) if args.json else format_fleet_history(data))
        return int(ExitCode.OK)
    if args.host is not None:
        raise UsageError("--host needs --journal-dir", "add --journal-dir DIR (a collector's journal folder)")
    if args.unit is None:
        raise UsageError("name the unit", "vllm-guard history UNIT (e.g. vllm-qwen)")

    from vllm_guard.app.report import format_history, target_history
    from vllm_guard.app.statefile import StateStore
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    state = StateStore(paths.state_file).load()
    data = target_history(state, args.unit)
    print(json.dumps(data) if args.json else format_history(data))
    return int(ExitCode.OK)


def _unit_file(unit: str) -> str:
    return unit if unit.endswith(".service") else f"{unit}.service"
