"""`vllm-guard history`."""

from __future__ import annotations

import argparse

from vllm_guard.cli import add_common
from vllm_guard.errors import GuardError

HELP = "history"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p)


def run(args: argparse.Namespace) -> int:
    raise GuardError("not-built-yet", "`vllm-guard history` is not built yet in this version")
