"""`vllm-guard reset UNIT`: put a unit back on the base flags from the config."""

from __future__ import annotations

import argparse

from vllm_guard.cli import add_common
from vllm_guard.errors import UsageError
from vllm_guard.exitcodes import ExitCode

HELP = "put a unit back on the base flags from the config"
DESCRIPTION = (
    "Rewrite the unit's env file with the base flags from the config, forget the guard's remedies and its "
    "'gave up' mark, and clear the remedy budget (the history stays). The running vLLM keeps its flags until "
    "its next start; add --restart to restart it now."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument("unit", help="the vLLM unit (e.g. vllm-qwen)")
    p.add_argument("--restart", action="store_true", help="also `systemctl restart` the unit")


def run(args: argparse.Namespace) -> int:
    from vllm_guard.adapters.files import atomic_write
    from vllm_guard.app.config_load import load_config, read_api_key
    from vllm_guard.app.statefile import StateStore
    from vllm_guard.consts import Paths
    from vllm_guard.core.events import Event, EventKind
    from vllm_guard.core.render import render_env
    from vllm_guard.core.state import base_current, base_hash

    paths = Paths(args.root)
    loaded = load_config(paths, args.config, absent_ok=True)
    target = loaded.config.by_unit(args.unit)
    if target is None:
        units = ", ".join(t.unit for t in loaded.config.target)
        raise UsageError(f"no target has unit {args.unit!r}", f"the configured units are: {units}")
    import time

    store = StateStore(paths.state_file)
    now = time.time()
    with store.locked():
        state = store.load()
        ts = state.target(target.unit)
        before = ts.current.flags.describe() if ts.current else ""
        cleared = ts.remedies_since(now - target.budget.window_s)
        was_given_up = ts.gave_up is not None
        # the budget starts over (the remedies stay in the history); no later than the last remedy recorded,
        # whatever the clocks of the two processes say
        ts.budget_from = max([now, *(r.at for r in ts.remedies)])
        ts.guard_stopped = False
        ts.current = base_current(target)
        ts.base_hash = base_hash(target)
        ts.rungs = {}
        ts.gave_up = None
        ts.pending = None
        ts.waiting_vram_since = None
        text = render_env(target, model=target.model, flags=target.flags, api_key=read_api_key(target, paths))
        ts.log_env(ts.budget_from, ts.current)  # no earlier than the guard's last entries, as the budget
        atomic_write(paths.env_file(target.unit), text, mode=0o600)
        store.save(state)
    try:
        from vllm_guard.adapters.journal import send_event

        send_event(
            Event(
                EventKind.RESET,
                f"{target.unit_file}: reset to the base flags by a person",
                {
                    "UNIT": target.unit_file,
                    "FLAGS_BEFORE": before,
                    "FLAGS_AFTER": target.flags.describe(),
                    "REASON": f"a person reset it; cleared {_remedies(cleared)} from the budget",
                },
            )
        )
    except Exception:
        pass  # the journal is a courtesy here; the reset itself is done
    print(f"{target.unit_file}: back on the base flags: {target.flags.describe()}")
    print(
        f"{target.unit_file}: budget cleared ({_remedies(cleared)} in the last {target.budget.window_s:g} s "
        f"no longer count; {target.budget.max_remedies} available)"
        + ("; the 'gave up' mark is gone" if was_given_up else "")
    )
    if args.restart:
        from vllm_guard.adapters import systemctl

        systemctl.reset_failed(target.unit_file)
        systemctl.restart(target.unit_file)
        print(f"{target.unit_file}: restarted")
    return int(ExitCode.OK)


def _remedies(n: int) -> str:
    return f"{n} remedy" if n == 1 else f"{n} remedies"
