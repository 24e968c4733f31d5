"""`vllm-guard swap`: plan (and with --apply, create) a swap file and set swappiness."""

from __future__ import annotations

import argparse
import json

from vllm_guard.cli import add_common

HELP = "plan (and with --apply, create) a swap file and set swappiness"
DESCRIPTION = (
    "Without --apply, print the plan and change nothing. With --apply: refuse an existing file at the path "
    "that is not already this swap, a disk without room, a rotational disk (unless --force) and file systems "
    "that cannot hold swap; create the file (fallocate, or zeros where needed), chmod 600, mkswap, swapon, add "
    "the fstab line once, write /etc/sysctl.d/90-vllm-guard-swap.conf and apply vm.swappiness. Running it "
    "again changes nothing."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    p.add_argument("--size", default="auto", help="auto (about 1x RAM, 16-64 GiB, more for big models) or e.g. 16GiB")
    p.add_argument("--swappiness", type=int, default=None, help="vm.swappiness to set (default 10)")
    p.add_argument("--path", default=None, help="swap file path as the host sees it (default /swapfile)")
    p.add_argument("--model", default=None, help="model folder to size for (default: the config's first target)")
    p.add_argument("--apply", action="store_true", help="do it (needs root)")
    p.add_argument("--force", action="store_true", help="allow a swap file on a rotational disk")


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from vllm_guard.app.swap import (
        DEFAULT_PATH,
        DEFAULT_SWAPPINESS,
        KernelSwap,
        SwapRefused,
        apply,
        auto_size,
        make_plan,
    )
    from vllm_guard.consts import JSON_SCHEMA, Paths
    from vllm_guard.core.planner import GiB, parse_size
    from vllm_guard.errors import UsageError
    from vllm_guard.exitcodes import ExitCode

    paths = Paths(args.root)
    path = args.path or DEFAULT_PATH
    if not path.startswith("/") or "\n" in path or " " in path:
        raise UsageError(f"--path {path!r} must be an absolute path without spaces")
    swappiness = DEFAULT_SWAPPINESS if args.swappiness is None else args.swappiness
    if not 0 <= swappiness <= 200:
        raise UsageError("--swappiness must be between 0 and 200 (the kernel's range)")
    if args.size == "auto":
        from vllm_guard.adapters import host

        mem = host.read_meminfo(paths.root).get("MemTotal", 0)
        size, why = auto_size(mem, _weights(paths, args))
    else:
        try:
            size = parse_size(args.size)
        except ValueError as err:
            raise UsageError(str(err)) from None
        why = "given with --size"
        if size < 40 * 4096:
            raise UsageError("--size is too small for a swap area (mkswap needs at least 40 pages)")
    page = os.sysconf("SC_PAGE_SIZE")
    size = size // page * page
    plan = make_plan(paths, path, size, why, swappiness)
    if not args.apply:
        if args.json:
            print(json.dumps({"schema": JSON_SCHEMA, "applied": False, "plan": plan.as_json()}, indent=2))
        else:
            print(f"swap plan (nothing changed; add --apply to do it): {size / GiB:.1f} GiB at {path}, {why}")
            print(f"  now: {plan.current_swap / GiB:.1f} GiB of swap, swappiness {plan.current_swappiness}")
            for i, step in enumerate(plan.steps, 1):
                print(f"  {i}. {step}")
        return int(ExitCode.OK)
    if Path(args.root).resolve() == Path("/") and os.geteuid() != 0:
        raise SwapRefused(
            "swap-needs-root",
            "creating swap needs root",
            "run `sudo vllm-guard swap --apply`",
            exit_code=ExitCode.NOPERM,
        )
    done = apply(plan, paths, KernelSwap(), force=args.force)
    if args.json:
        print(json.dumps({"schema": JSON_SCHEMA, "applied": True, "plan": plan.as_json(), "done": done}, indent=2))
    else:
        for line in done:
            print(line)
    return int(ExitCode.OK)


def _weights(paths: object, args: argparse.Namespace) -> int | None:
    from pathlib import Path

    from vllm_guard.adapters.modelfs import load_model_info
    from vllm_guard.app.config_load import load_config
    from vllm_guard.consts import Paths
    from vllm_guard.errors import GuardError

    assert isinstance(paths, Paths)
    folder: Path | None = Path(args.model) if args.model else None
    if folder is None:
        try:
            loaded = load_config(paths, args.config, check_files=False)
        except GuardError:
            return None
        folder = paths.under(loaded.config.target[0].model.lstrip("/"))
    try:
        return load_model_info(folder).estimated_weight_bytes()
    except GuardError:
        return None
