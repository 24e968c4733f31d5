"""Every path and default in one place, each with where it comes from.

Paths are relative to a root (``--root``, default ``/``) so tests can run against a fake tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CONFIG_FILE = Path("etc/vllm-guard/config.toml")
CONFIG_DIR = Path("etc/vllm-guard/config.d")
STATE_DIR = Path("var/lib/vllm-guard")
RUNTIME_DIR = Path("run/vllm-guard")
UNIT_DIR = Path("etc/systemd/system")
METRICS_FILE = Path("var/lib/prometheus/node-exporter/vllm_guard.prom")

STATE_FILE_NAME = "state.json"
STATE_SCHEMA = 1  # bumped whenever state.json changes shape; older files are migrated
JSON_SCHEMA = 1  # the "schema" key of every --json output

SYSLOG_IDENTIFIER = "vllm-guard"
GUARD_UNIT = "vllm-guard.service"

# The env file variables the rendered vLLM unit reads (DESIGN.md: the guard owns this file).
ENV_ARGS = "VLLM_GUARD_ARGS"  # tunable flags, split into words by systemd ($VAR unbraced)
ENV_MODEL = "VLLM_GUARD_MODEL"  # the model path, one word (${VAR} braced)
ENV_API_KEY = "VLLM_API_KEY"  # vLLM reads its API key from this variable (vllm/envs.py)


@dataclass(frozen=True)
class Paths:
    """Where things live under one root."""

    root: Path = Path("/")

    def under(self, rel: Path | str) -> Path:
        return self.root / Path(rel)

    @property
    def config_file(self) -> Path:
        return self.under(CONFIG_FILE)

    @property
    def config_dir(self) -> Path:
        return self.under(CONFIG_DIR)

    @property
    def state_dir(self) -> Path:
        return self.under(STATE_DIR)

    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE_NAME

    @property
    def runtime_dir(self) -> Path:
        return self.under(RUNTIME_DIR)

    @property
    def unit_dir(self) -> Path:
        return self.under(UNIT_DIR)

    @property
    def metrics_file(self) -> Path:
        return self.under(METRICS_FILE)

    def env_file(self, unit: str) -> Path:
        """The env file the guard owns for one vLLM unit."""
        return self.state_dir / f"{unit}.env"

    def env_file_on_host(self, unit: str) -> Path:
        """The same path as the unit file names it (always from /, whatever the root)."""
        return Path("/") / STATE_DIR / f"{unit}.env"
