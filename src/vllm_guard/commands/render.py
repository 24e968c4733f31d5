"""`vllm-guard render`: print or write the vLLM units and env files rendered from the config."""

from __future__ import annotations

import argparse
from pathlib import Path

from vllm_guard.cli import add_common
from vllm_guard.exitcodes import ExitCode

HELP = "render the vLLM units and env files from the config"
DESCRIPTION = (
    "Render one <unit>.service and one <unit>.env per target. Without --out, print them; with --out DIR, "
    "write them into DIR (atomically). Nothing is installed or reloaded: see `vllm-guard install`."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, json_flag=True)
    p.add_argument("--out", type=Path, help="write the files into this folder instead of printing them")
    p.add_argument(
        "--no-check-files",
        action="store_true",
        help="do not check that the model folders and API key files exist (rendering on another host)",
    )


def run(args: argparse.Namespace) -> int:
    from vllm_guard.app.config_load import load_config
    from vllm_guard.app.render import render_all, write_rendered
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    loaded = load_config(paths, args.config, check_files=not args.no_check_files)
    files = render_all(loaded, paths, with_api_keys=False)
    if args.out is None and args.json:
        import json

        from vllm_guard.consts import JSON_SCHEMA

        doc = {
            "schema": JSON_SCHEMA,
            "files": [{"name": f.name, "mode": f"{f.mode:04o}", "text": f.text} for f in files],
        }
        print(json.dumps(doc))
        return int(ExitCode.OK)
    if args.out is None:
        for f in files:
            print(f"### {f.name}")
            print(f.text)
        return int(ExitCode.OK)
    for written in write_rendered(files, args.out, args.out):
        print(written)
    return int(ExitCode.OK)
