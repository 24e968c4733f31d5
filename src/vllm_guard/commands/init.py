"""`vllm-guard init`: write a commented starter config from a model folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from vllm_guard.cli import add_common
from vllm_guard.errors import ConfigError, GuardError, UsageError
from vllm_guard.exitcodes import ExitCode

HELP = "write a starter config from a model folder"
DESCRIPTION = (
    "Read MODEL/config.json and write a starter config (ROOT/etc/vllm-guard/config.toml, or --out FILE) "
    "with the served name from the folder, max_model_len no larger than the model's context, and the "
    "rest at their defaults, each key commented. Refuses to overwrite an existing file without --force."
)

# 32768: a context every 24 GiB GPU can hold for a 7B model with room for batching; the guard lowers it
# further on a KV-cache failure. Longer contexts are a deliberate choice for the admin to make.
STARTER_MAX_MODEL_LEN = 32768


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p)
    p.add_argument("--model", required=True, type=Path, help="the local model folder (holds config.json)")
    p.add_argument("--out", type=Path, help="where to write the config (default ROOT/etc/vllm-guard/config.toml)")
    p.add_argument("--unit", default="vllm-qwen", help="the vLLM unit's name (default vllm-qwen)")
    p.add_argument("--port", type=int, default=8000, help="the port vLLM listens on (default 8000, vLLM's)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def starter_config(model: str, unit: str, port: int, max_context: int | None, served: str) -> str:
    max_len = min(max_context, STARTER_MAX_MODEL_LEN) if max_context else STARTER_MAX_MODEL_LEN
    ctx = f"the model supports {max_context}" if max_context else "the model's context is unknown"
    return f"""\
# vllm-guard configuration. Every key: `man vllm-guard` (CONFIGURATION), /etc/vllm-guard/config.toml.example.
# After editing: `vllm-guard run --check`, `vllm-guard install` (renders the units), `systemctl reload vllm-guard`.

[guard]
# metrics = true         # write node_exporter textfile metrics
# vram_wait_timeout_s = 600

[[target]]
unit = {_toml_str(unit)}                 # the systemd unit vLLM runs in ({unit}.service)
model = {_toml_str(model)}
served_model_name = {_toml_str(served)}  # the name clients ask for
host = "127.0.0.1"                # loopback: put a proxy in front to expose it
port = {port}
# api_key_file = "/etc/vllm-guard/api-key"   # one line, mode 0600; vLLM then requires it
# command = ["/opt/vllm/bin/python3", "-m", "vllm.entrypoints.openai.api_server"]  # a venv's python
user = "vllm"
group = "vllm"
# fallback = [{{ model = "/models/...-AWQ", quantization = "awq" }}]  # when the weights do not fit

[target.flags]                    # the base flags; the guard lowers them after memory failures
gpu_memory_utilization = 0.9      # vLLM's default
max_model_len = {max_len}            # {ctx}
# max_num_seqs = 256              # vLLM's default on most GPUs
# tensor_parallel_size = 1
# kv_cache_dtype = "fp8"          # halves the KV cache

[target.floors]                   # the guard never goes below these
gpu_memory_utilization = 0.5
max_model_len = {min(2048, max_len)}

[target.restart]
restart_sec = 10                  # time the guard has to rewrite the flags before systemd restarts
start_limit_interval_sec = 1800
start_limit_burst = 5
"""


def run(args: argparse.Namespace) -> int:
    from vllm_guard.adapters.files import atomic_write
    from vllm_guard.app.config_load import max_context, read_model_config
    from vllm_guard.consts import Paths

    paths = Paths(args.root)
    model_dir = args.model if args.model.is_absolute() else args.model.resolve()
    on_disk = paths.under(str(model_dir).lstrip("/"))
    if not on_disk.is_dir():
        raise UsageError(f"model folder {model_dir} does not exist", "pass the folder that holds config.json")
    cfg = read_model_config(on_disk)
    if cfg is None:
        raise ConfigError(
            f"{model_dir}/config.json is missing or not JSON",
            "pass a Hugging Face model folder (config.json, *.safetensors, tokenizer files)",
            ref="model-no-config",
        )
    out = args.out if args.out is not None else paths.config_file
    if out.exists() and not args.force:
        raise GuardError(
            "config-exists", f"{out} already exists", "pass --force to overwrite it", exit_code=ExitCode.CANTCREAT
        )
    text = starter_config(str(model_dir), args.unit, args.port, max_context(cfg), model_dir.name)
    atomic_write(out, text, mode=0o644)
    print(f"wrote {out}")
    return int(ExitCode.OK)
