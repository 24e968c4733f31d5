"""`vllm-guard doctor`: check the host, GPUs, model, swap and units before the first start."""

from __future__ import annotations

import argparse
import json

from vllm_guard.cli import add_common

HELP = "check the host, GPUs, model, swap and units before the first start"
DESCRIPTION = (
    "Measure everything a vLLM start depends on and judge it: GPUs and who holds their memory, the model "
    "against the GPU, host RAM and swap, /dev/shm, the open-file limit, the port, vLLM itself, the rendered "
    "units and env files, the journal and the guard. Each finding is ok, warn or fail with a reference, "
    "what was measured and a hint. Exit 0 when all are ok, 1 with warnings, 2 with a failure."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    p.add_argument(
        "--gpu",
        action="append",
        default=None,
        metavar="SIZE",
        help="judge against GPUs of this size instead of the real ones (repeat or comma-separate)",
    )
    p.add_argument("--no-vllm-check", action="store_true", help="do not import vLLM (it takes seconds)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vllm_guard.adapters.nvml import FakeGpus, read_gpus
    from vllm_guard.app.doctor import Checks, gather, render_text
    from vllm_guard.consts import JSON_SCHEMA, Paths
    from vllm_guard.core.doctor import exit_code, judge
    from vllm_guard.core.planner import gpu_card
    from vllm_guard.errors import UsageError

    paths = Paths(args.root)
    if args.gpu:
        try:
            cards = [gpu_card(s) for v in args.gpu for s in v.split(",") if s.strip()]
        except ValueError as err:
            raise UsageError(str(err)) from None
        gpus = FakeGpus([c.total for c in cards], [c.reserved for c in cards]).read()
    else:
        gpus = read_gpus()
    on_host = Path(args.root).resolve() == Path("/")
    checks = Checks(vllm=not args.no_vllm_check, journal=on_host, units_active=on_host, port=True)
    facts = gather(paths, args.config, gpus, checks)
    findings = judge(facts)
    if facts.config_error is None:
        import contextlib

        from vllm_guard.app.config_load import load_config
        from vllm_guard.app.setup_check import findings as setup_findings
        from vllm_guard.errors import GuardError

        # the set-up each unit needs: command, vLLM, user, files its user reads, metrics folder (when the config
        # cannot load, the findings above already name why)
        with contextlib.suppress(GuardError):
            loaded = load_config(paths, args.config, absent_ok=True)
            findings += setup_findings(loaded, paths, vllm=not args.no_vllm_check)
    code = exit_code(findings)
    if args.json:
        print(
            json.dumps(
                {"schema": JSON_SCHEMA, "exit_code": int(code), "findings": [f.as_json() for f in findings]}, indent=2
            )
        )
    else:
        print(render_text(findings))
    return int(code)
