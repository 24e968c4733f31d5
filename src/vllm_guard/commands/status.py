"""`vllm-guard status`: per target, state, current flags against the base ones, last failure and start; with
``--journal-dir``, per host and unit, what the guard's latest events in a collector's journal folder say."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from vllm_guard.cli import add_common, add_journal_dir
from vllm_guard.errors import UsageError
from vllm_guard.exitcodes import ExitCode

if TYPE_CHECKING:
    from vllm_guard.consts import Paths
    from vllm_guard.core.config import Target

HELP = "per target: state, current flags against the base ones, last failure, last verified start"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    add_journal_dir(p)


def run(args: argparse.Namespace) -> int:
    if args.journal_dir is not None:
        from vllm_guard.app.report import fleet_status, format_fleet_status, read_journal_dir

        entries = read_journal_dir(args.journal_dir, host=args.host)
        fleet = fleet_status(entries, folder=args.journal_dir, host=args.host)
        print(json.dumps(fleet) if args.json else format_fleet_status(fleet))
        return int(ExitCode.OK)
    if args.host is not None:
        raise UsageError("--host needs --journal-dir", "add --journal-dir DIR (a collector's journal folder)")
    from pathlib import Path

    from vllm_guard.app.config_load import load_config
    from vllm_guard.app.probe import models_view
    from vllm_guard.app.report import format_status, systemd_view, target_status
    from vllm_guard.app.statefile import StateStore
    from vllm_guard.consts import GUARD_UNIT, Paths
    from vllm_guard.errors import ConfigError

    paths = Paths(args.root)
    state = StateStore(paths.state_file).load()
    config_error = None
    try:
        config = load_config(paths, args.config, check_files=False).config
    except ConfigError as err:
        # the running guard keeps its last good config: say what is wrong, and report from the state file
        config_error = err.render().removeprefix("vllm-guard: ")
        config = None
    on_host = Path(args.root).resolve() == Path("/")
    units = [t.unit_file for t in config.target] if config else [f"{u}.service" for u in state.targets]
    systemd = systemd_view([GUARD_UNIT, *units]) if on_host else {}
    serving = {}
    for t in config.target if config else []:
        if systemd.get(t.unit_file, {}).get("ActiveState") == "active":  # ask the running server what it serves
            ts = state.targets.get(t.unit)
            model = ts.current.model if ts and ts.current else t.model
            serving[t.unit_file] = models_view(t, model, _api_key(t, paths))
    data = target_status(config, state, systemd=systemd, config_error=config_error, serving=serving)
    print(json.dumps(data) if args.json else format_status(data))
    return int(ExitCode.OK)


def _api_key(target: Target, paths: Paths) -> str | None:
    """The target's API key, or None where this user cannot read it (the server then says 401, shown as such)."""
    from vllm_guard.app.config_load import read_api_key

    try:
        return read_api_key(target, paths)
    except OSError:
        return None
