"""`vllm-guard probe`: check that a vLLM unit's model answers."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from vllm_guard.cli import add_common
from vllm_guard.errors import GuardError, UsageError
from vllm_guard.exitcodes import ExitCode

# With --wait as ExecStartPost=, systemd's TimeoutStartSec= (the target's startup_timeout_s) also bounds the
# probe: stop waiting this much earlier, so the probe's own line says what failed before systemd kills it.
SYSTEMD_MARGIN_S = 10.0

HELP = "check that a vLLM unit's model answers (/health, /v1/models, /v1/chat/completions)"
DESCRIPTION = (
    "Probe one vLLM unit: /v1/models must list the served name with the model folder the unit runs now "
    "(as the guard's env file says), and a short chat completion (temperature 0) must return one non-empty "
    "answer. With --wait, first wait for /health to answer 200 (the weights load meanwhile), up to the "
    "target's startup_timeout_s: this is the form for ExecStartPost= of the vLLM unit, which keeps the unit "
    "'activating' until the model answers. Run by systemd for the unit, the model path and API key come from "
    "the unit's environment (VLLM_GUARD_MODEL, VLLM_API_KEY: the env file of that start); otherwise from the "
    "guard's env file and the target's api_key_file. Exit 0 when it answers, 1 when it does not."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    p.add_argument("unit", metavar="UNIT", help="the vLLM unit (as in the config's target.unit)")
    p.add_argument(
        "--wait",
        action="store_true",
        help="wait for the server to come up first (for ExecStartPost=), up to the target's startup_timeout_s "
        "(less 10 s, to report before systemd's TimeoutStartSec= ends the wait)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="with --wait: the longest wait in seconds (default: startup_timeout_s - 10); "
        "without: the timeout of each request (default: probe.timeout_s)",
    )
    p.add_argument(
        "--main-pid",
        type=int,
        metavar="PID",
        default=None,
        help="with --wait: stop waiting as soon as this process is gone (default: $MAINPID, which systemd "
        "sets for ExecStartPost=)",
    )


def _main_pid(args: argparse.Namespace) -> int | None:
    if args.main_pid is not None:
        return int(args.main_pid) if args.main_pid > 0 else None
    raw = os.environ.get("MAINPID", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def run(args: argparse.Namespace) -> int:
    from vllm_guard.adapters.process import pid_alive
    from vllm_guard.app.config_load import load_config, read_api_key
    from vllm_guard.app.probe import probe_once, wait_until_answers
    from vllm_guard.consts import ENV_API_KEY, ENV_MODEL, JSON_SCHEMA, Paths
    from vllm_guard.core.systemd_escape import parse_env_file

    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be above 0 (got {args.timeout:g})", "give seconds, e.g. --timeout 600")
    paths = Paths(args.root)
    loaded = load_config(paths, args.config, check_files=False)
    target = loaded.config.by_unit(args.unit)
    if target is None:
        units = ", ".join(t.unit for t in loaded.config.target)
        raise UsageError(
            f"no target with unit {args.unit!r} in {', '.join(str(f) for f in loaded.files)}",
            f"the configured units are: {units}",
            ref="unknown-unit",
        )
    # Run by systemd for the unit (ExecStartPost=), the probe has the unit's environment: the env file of
    # this very start, which the unit's user can use even where it cannot read the 0600 files themselves.
    unit_env = os.environ if os.environ.get("MAINPID") and os.environ.get(ENV_MODEL) else None
    api_key = unit_env.get(ENV_API_KEY) if unit_env is not None else None
    if not api_key:
        try:
            api_key = read_api_key(target, paths)
        except (OSError, UnicodeDecodeError) as err:
            raise GuardError(
                "api-key-unreadable",
                f"cannot read the API key file {target.api_key_file} of {target.unit}: {err}",
                "run the probe as a user that can read it (ExecStartPost=+... runs it as root)",
                exit_code=ExitCode.NOINPUT,
            ) from None

    model_path = target.model
    if unit_env is not None:
        model_path = unit_env[ENV_MODEL]
    else:
        env_file = paths.env_file(target.unit)
        try:
            env = parse_env_file(env_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            env = {}
        except (OSError, UnicodeDecodeError) as err:
            raise GuardError(
                "env-file-unreadable",
                f"cannot read {env_file}: {err}",
                "run the probe as root, or check the file's permissions",
                exit_code=ExitCode.NOINPUT,
            ) from None
        if env.get(ENV_MODEL):
            model_path = env[ENV_MODEL]

    if args.wait:
        pid = _main_pid(args)
        if args.timeout is not None:
            timeout = float(args.timeout)
        else:
            timeout = max(float(target.startup_timeout_s) - SYSTEMD_MARGIN_S, 1.0)
        result = wait_until_answers(
            target,
            api_key,
            timeout_s=timeout,
            model_path=model_path,
            stop=(lambda: not pid_alive(pid)) if pid is not None else (lambda: False),
        )
    else:
        result = probe_once(target, api_key, model_path=model_path, timeout_s=args.timeout)

    if args.json:
        out: dict[str, Any] = {"schema": JSON_SCHEMA, "unit": target.unit, "served_name": target.name}
        out["model_path"] = model_path
        out.update(result.to_dict())
        print(json.dumps(out, sort_keys=True))
    elif result.ok:
        print(f"{target.unit}: ok: {result.summary()}")
    if not result.ok:
        print(f"vllm-guard: probe {target.unit}: {result.summary()}", file=sys.stderr)
    return int(ExitCode.OK if result.ok else ExitCode.WARN)
