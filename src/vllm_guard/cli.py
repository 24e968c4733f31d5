"""The ``vllm-guard`` command line: argparse verbs, each in its own module, imported lazily.

Each verb module in ``vllm_guard.commands`` defines::

    HELP: str                                   # one line for --help
    def add_arguments(p: argparse.ArgumentParser) -> None
    def run(args: argparse.Namespace) -> int    # returns an ExitCode

Errors a person will read are ``GuardError``; they are printed as one message with a hint
and the verb exits with the error's code, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from vllm_guard import __version__
from vllm_guard.checkout import source_checkout
from vllm_guard.errors import GuardError
from vllm_guard.exitcodes import EXIT_CODE_TABLE, ExitCode

# verb -> one-line summary (kept here so --help does not import every verb's dependencies)
VERBS: dict[str, str] = {
    "render": "render the vLLM units and env files from the config (print, or write with --out)",
    "install": "write the rendered units under --root and reload systemd",
    "init": "write a starter config from a model folder",
    "classify": "read vLLM logs and say why each start failed",
    "run": "the daemon: follow the journal, remedy memory failures, verify restarts",
    "probe": "check that a vLLM unit's model answers (/health, /v1/models, /v1/chat/completions)",
    "status": "per target: state, current flags against the base ones, last failure, last verified start",
    "history": "the attempts, failures and remedies of one unit",
    "reset": "put a unit back on the base flags from the config",
    "doctor": "check the host, GPUs, model, swap and units before the first start",
    "plan": "predict flags that fit a model on a GPU",
    "swap": "plan (and with --apply, create) a swap file and set swappiness",
    "demo": "run the guard against a crash-looping vLLM unit in a throwaway systemd",
}
# Verbs that need the source checkout (the vLLM emulator lives in tests/): a package does not list them in
# --help; run anyway, they say why they cannot.
CHECKOUT_ONLY = frozenset({"demo"})


def _verb_module(verb: str) -> ModuleType:
    return importlib.import_module(f"vllm_guard.commands.{verb}")


def add_common(p: argparse.ArgumentParser, *, json_flag: bool = False) -> None:
    """Options shared by verbs that read the config."""
    p.add_argument(
        "--root",
        type=Path,
        default=Path("/"),
        help="treat this folder as / (for tests and image builds); default: /",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="config file to read instead of ROOT/etc/vllm-guard/config.toml "
        "(its config.d/ folder beside it is read too)",
    )
    if json_flag:
        p.add_argument("--json", action="store_true", help='print JSON (with "schema": 1) instead of text')


def add_journal_dir(p: argparse.ArgumentParser) -> None:
    """--journal-dir and --host: read the guard's events of many hosts from a collector's journal folder."""
    p.add_argument(
        "--journal-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="read the guard's events from the journal files in DIR (a collector's folder, as "
        "systemd-journal-remote writes it, e.g. /var/log/journal/remote) instead of this host's state, "
        "naming the host of each entry",
    )
    p.add_argument(
        "--host",
        default=None,
        help="with --journal-dir: only this host's events (its _HOSTNAME, or the HOST of a remote-HOST.journal file)",
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(int(ExitCode.USAGE), f"{self.prog}: error: {message}\n")


def build_parser(verbs: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="vllm-guard",
        description="Supervises vLLM servers under systemd: reads why a start failed, lowers the right "
        "flag before systemd's restart, and proves the model answers afterwards.",
        epilog="exit codes:\n" + EXIT_CODE_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"vllm-guard {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    packaged = source_checkout() is None
    for verb in verbs if verbs is not None else VERBS:
        mod = _verb_module(verb)
        description = getattr(mod, "DESCRIPTION", VERBS[verb])
        if packaged and verb in CHECKOUT_ONLY:  # no help=: argparse then leaves it out of the list
            p = sub.add_parser(verb, description=description)
        else:
            p = sub.add_parser(verb, help=VERBS[verb], description=description)
        mod.add_arguments(p)
        p.set_defaults(_module=mod)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    # Import only the verb that runs (each verb's dependencies are loaded lazily).
    verb = next((a for a in args_list if not a.startswith("-")), None)
    only = [verb] if verb in VERBS else None
    parser = build_parser(only)
    if not args_list:
        parser.print_help()
        return int(ExitCode.USAGE)
    args = parser.parse_args(args_list)
    if getattr(args, "_module", None) is None:
        parser.print_help()
        return int(ExitCode.USAGE)
    try:
        return int(args._module.run(args))
    except GuardError as err:
        print(err.render(), file=sys.stderr)
        return int(err.exit_code)
    except KeyboardInterrupt:
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        return int(ExitCode.OK)


if __name__ == "__main__":
    sys.exit(main())
