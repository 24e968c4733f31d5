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
    from pathlib import Path

    from vllm_guard.app.config_load import load_config
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
    data = target_status(config, state, systemd=systemd, config_error=config_error)
    print(json.dumps(data) if args.json else format_status(data))
    return int(ExitCode.OK)
