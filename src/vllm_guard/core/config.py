"""The validated configuration: pydantic models, frozen, unknown keys rejected.

Pure: this module only validates values it is given. Reading the TOML files, layering them and the
checks that need the file system (model folder, API key file) live in ``vllm_guard.app.config_load``.
"""

from __future__ import annotations

import difflib
import re
import shlex
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

UNIT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:_.@-]{0,200}$")
# systemd's size syntax for MemoryMax=/MemoryHigh=: bytes with an optional K/M/G/T suffix, a
# percentage of RAM, or "infinity" (systemd.resource-control(5)).
SYSTEMD_SIZE = re.compile(r"^(?:\d+(?:\.\d+)?[KMGT]?|\d{1,3}(?:\.\d+)?%|infinity)$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


Util = Annotated[float, Field(gt=0.0, le=1.0)]


class Flags(_Model):
    """The tunable vLLM flags. ``None`` leaves a flag to vLLM's own default (it is not passed)."""

    # vLLM's default is 0.9 (EngineArgs.gpu_memory_utilization).
    gpu_memory_utilization: Util = 0.9
    # None: vLLM derives it from the model's max_position_embeddings.
    max_model_len: int | None = Field(default=None, ge=16)
    # None: vLLM's default (256 on most GPUs; V1 raises it on large ones).
    max_num_seqs: int | None = Field(default=None, ge=1)
    max_num_batched_tokens: int | None = Field(default=None, ge=16)
    tensor_parallel_size: int = Field(default=1, ge=1, le=64)  # vLLM default 1
    dtype: Literal["auto", "half", "float16", "bfloat16", "float", "float32"] = "auto"  # vLLM default
    quantization: str | None = None  # e.g. "awq", "gptq", "fp8"; None: read from the model's config
    kv_cache_dtype: Literal["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16"] = "auto"  # vLLM default
    enforce_eager: bool = False  # vLLM default: CUDA graphs on
    swap_space: float | None = Field(default=None, ge=0)  # GiB of CPU swap per GPU; vLLM V0 default 4
    cpu_offload_gb: float | None = Field(default=None, ge=0)  # vLLM default 0
    # CPU backend only: the KV cache's size in whole GiB of host memory. vLLM reads it from the environment
    # (VLLM_CPU_KVCACHE_SPACE, parsed with int() in vLLM 0.32), so the guard writes it into the env file.
    cpu_kvcache_space_gib: int | None = Field(default=None, ge=1)

    @field_validator("quantization")
    @classmethod
    def _quant_word(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[a-z0-9_\-]+", v):
            raise ValueError("must be one lower-case word such as awq, gptq, fp8")
        return v

    def to_args(self) -> list[str]:
        """The vLLM command-line words for these flags, in a fixed order."""
        out = [f"--gpu-memory-utilization={_num(self.gpu_memory_utilization)}"]
        if self.max_model_len is not None:
            out.append(f"--max-model-len={self.max_model_len}")
        if self.max_num_seqs is not None:
            out.append(f"--max-num-seqs={self.max_num_seqs}")
        if self.max_num_batched_tokens is not None:
            out.append(f"--max-num-batched-tokens={self.max_num_batched_tokens}")
        if self.tensor_parallel_size != 1:
            out.append(f"--tensor-parallel-size={self.tensor_parallel_size}")
        if self.dtype != "auto":
            out.append(f"--dtype={self.dtype}")
        if self.quantization is not None:
            out.append(f"--quantization={self.quantization}")
        if self.kv_cache_dtype != "auto":
            out.append(f"--kv-cache-dtype={self.kv_cache_dtype}")
        if self.enforce_eager:
            out.append("--enforce-eager")
        if self.swap_space is not None:
            out.append(f"--swap-space={_num(self.swap_space)}")
        if self.cpu_offload_gb is not None:
            out.append(f"--cpu-offload-gb={_num(self.cpu_offload_gb)}")
        return out

    def to_env(self) -> dict[str, str]:
        """The flags vLLM reads from the environment rather than the command line."""
        out = {}
        if self.cpu_kvcache_space_gib is not None:
            out["VLLM_CPU_KVCACHE_SPACE"] = str(self.cpu_kvcache_space_gib)
        return out

    def describe(self) -> str:
        words = self.to_args() + [f"{k}={v}" for k, v in self.to_env().items()]
        return " ".join(words)


def _num(v: float) -> str:
    """A float as vLLM reads it, without float noise (0.8500000001 -> 0.85)."""
    text = f"{v:.4f}".rstrip("0").rstrip(".")
    return text or "0"


class Floors(_Model):
    """The lowest values the guard may set. None: the default floor, or the base value if lower."""

    gpu_memory_utilization: Util | None = None  # default 0.5: below that the weights rarely fit either
    max_model_len: int | None = Field(default=None, ge=16)  # default 2048: shorter is no use for chat
    max_num_seqs: int | None = Field(default=None, ge=1)  # default 4


DEFAULT_FLOORS = {"gpu_memory_utilization": 0.5, "max_model_len": 2048, "max_num_seqs": 4}


class Budget(_Model):
    """How many remedies (flag changes or guard-driven restarts) a target may get in a window."""

    max_remedies: int = Field(default=6, ge=0, le=1000)  # a full util ladder 0.9 -> 0.5 is ~5 steps
    window_s: int = Field(default=3600, ge=60)  # one hour


class Restart(_Model):
    """systemd's restart settings of the vLLM unit."""

    # 10 s: long enough for the guard to rewrite the env file (p99 well under 1 s, bench/) and for
    # the old workers to free VRAM; systemd's own default (100 ms) would restart into held memory.
    restart_sec: int = Field(default=10, ge=1, le=3600)
    # systemd defaults are 10 s / 5; a vLLM start takes minutes, so the window must be much longer.
    start_limit_interval_sec: int = Field(default=1800, ge=0)
    start_limit_burst: int = Field(default=5, ge=1, le=100)


class Probe(_Model):
    """How the guard proves the model answers."""

    prompt: str = "Reply with one word: ok"
    max_tokens: int = Field(default=8, ge=1, le=512)  # a few tokens are enough to prove generation
    timeout_s: float = Field(default=60.0, gt=0)  # one request; a cold first request can take seconds
    interval_s: float = Field(default=60.0, ge=5)  # liveness probe period while active
    failures_allowed: int = Field(default=3, ge=1)  # consecutive liveness failures before a restart
    exec_start_post: bool = False  # render `ExecStartPost=vllm-guard probe --wait` into the unit


class Fallback(_Model):
    """A smaller build of the same model, for when the weights do not fit (e.g. AWQ, GPTQ, FP8).

    It is served under the target's served name, so clients keep working after the switch."""

    model: str
    quantization: str | None = None
    max_model_len: int | None = Field(default=None, ge=16)


# The sandboxing directives [target.hardening] may set or drop ("unset") on the vLLM unit.
HARDENING_KEYS = frozenset(
    {
        "NoNewPrivileges", "CapabilityBoundingSet", "AmbientCapabilities", "ProtectSystem", "ProtectHome",
        "PrivateTmp", "PrivateMounts", "PrivateDevices", "DevicePolicy", "DeviceAllow", "ProtectKernelTunables",
        "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups", "ProtectClock", "ProtectHostname",
        "ProtectProc", "ProcSubset", "RestrictAddressFamilies", "RestrictNamespaces", "RestrictSUIDSGID",
        "RestrictRealtime", "LockPersonality", "RemoveIPC", "KeyringMode", "UMask", "SystemCallArchitectures",
        "SystemCallFilter", "SystemCallErrorNumber", "IPAddressDeny", "IPAddressAllow", "MemoryDenyWriteExecute",
        "PrivateUsers", "PrivateNetwork", "ReadWritePaths", "ReadOnlyPaths", "InaccessiblePaths",
        "BindPaths", "BindReadOnlyPaths", "SupplementaryGroups",
    }
)  # fmt: skip


class Target(_Model):
    """One vLLM unit the guard renders and watches."""

    unit: str = "vllm-qwen"
    model: str
    served_model_name: str | None = None  # None: the model folder's name
    host: str = "127.0.0.1"  # loopback by default: put a proxy in front to expose it
    port: int = Field(default=8000, ge=1, le=65535, strict=True)  # vLLM's default port; "8000" is refused
    api_key_file: str | None = None
    # "cpu": vLLM's CPU backend (the vllm-cpu build). No GPU is needed; the KV cache lives in host RAM,
    # sized by flags.cpu_kvcache_space_gib (VLLM_CPU_KVCACHE_SPACE) or, unset, by gpu_memory_utilization
    # x the memory of NUMA node 0 (vLLM 0.32's CPU worker reads the flag as a fraction of its NUMA node).
    device: Literal["gpu", "cpu"] = "gpu"
    command: list[str] = Field(
        default_factory=lambda: ["python3", "-m", "vllm.entrypoints.openai.api_server"], min_length=1
    )
    extra_args: list[str] = Field(default_factory=list)
    environment: dict[str, str] = Field(default_factory=dict)
    user: str = "vllm"
    group: str = "vllm"
    # 30 min: loading 60+ GiB of weights from a network disk takes many minutes (systemd default 90 s).
    startup_timeout_s: int = Field(default=1800, ge=30)
    # 120 s: vLLM's workers need a moment to exit and free VRAM after SIGTERM.
    stop_timeout_s: int = Field(default=120, ge=5)
    memory_max: str | None = None
    memory_high: str | None = None
    # The KV-cache remedy sets max_model_len this fraction below vLLM's estimate: the estimate is the
    # length at which exactly one request fills the cache (a concurrency of 1.00x).
    kv_headroom: float = Field(default=0.05, ge=0, le=0.5)
    # "fit": before the first start after an install, a config change or a move to new hardware, check the
    # flags with the planner and start from a shorter max_model_len when they cannot fit (core/preflight.py).
    # None: the guard-wide [guard] preflight.
    preflight: Literal["off", "fit"] | None = None
    # The vLLM release the unit runs, for a unit whose python the guard cannot ask (a container image's vLLM,
    # e.g. "0.11.0"): the planner's accounting and the place its flags are filed under go by it. The version
    # installed for the unit's python wins where it can be read.
    vllm_version: str | None = None
    # [target.hardening]: the vLLM unit's sandboxing directives by name, e.g. ProtectHome = "read-only";
    # "unset" drops one. For what a site needs that the defaults forbid.
    hardening: dict[str, str] = Field(default_factory=dict)
    flags: Flags = Field(default_factory=Flags)
    floors: Floors = Field(default_factory=Floors)
    budget: Budget = Field(default_factory=Budget)
    restart: Restart = Field(default_factory=Restart)
    probe: Probe = Field(default_factory=Probe)
    fallback: list[Fallback] = Field(default_factory=list)

    @field_validator("command", mode="before")
    @classmethod
    def _split_command(cls, v: Any) -> Any:
        return shlex.split(v) if isinstance(v, str) else v

    @field_validator("vllm_version")
    @classmethod
    def _release(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"v?\d+\.\d+(\.\d+)?([.+-][0-9A-Za-z.+-]*)?", v.strip()):
            raise ValueError(f'{v!r} is not a vLLM release: write it as pip shows it, e.g. "0.11.0"')
        return v.strip().removeprefix("v") if v is not None else None

    @field_validator("hardening")
    @classmethod
    def _hardening(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            if key not in HARDENING_KEYS:
                near = difflib.get_close_matches(key, sorted(HARDENING_KEYS), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise ValueError(f"{key!r} is not a sandboxing directive the unit sets or may set{hint}")
            if "\n" in value or "\r" in value:
                raise ValueError(f"{key}: one line only")
        return v

    @field_validator("unit")
    @classmethod
    def _unit_name(cls, v: str) -> str:
        v = v.removesuffix(".service")
        if not UNIT_NAME.match(v):
            raise ValueError("must be a systemd unit name: letters, digits and :_.@- (no spaces)")
        return v

    @field_validator("model")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/"):
            raise ValueError("must be an absolute path to a local model folder")
        return v

    @field_validator("memory_max", "memory_high")
    @classmethod
    def _size(cls, v: str | None) -> str | None:
        if v is not None and not SYSTEMD_SIZE.match(v):
            raise ValueError("must be a systemd size such as 48G, 80% or infinity")
        return v

    @field_validator("environment")
    @classmethod
    def _env_names(cls, v: dict[str, str]) -> dict[str, str]:
        for name in v:
            if not ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
        return v

    @field_validator("user", "group")
    @classmethod
    def _account(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z_][a-z0-9_-]{0,31}\$?", v):
            raise ValueError("must be a user or group name such as vllm")
        return v

    @model_validator(mode="after")
    def _floors_below_base(self) -> Target:
        f, fl = self.flags, self.floors
        if fl.gpu_memory_utilization is not None and fl.gpu_memory_utilization > f.gpu_memory_utilization:
            raise ValueError(
                f"floors.gpu_memory_utilization ({fl.gpu_memory_utilization}) is above the base "
                f"flags.gpu_memory_utilization ({f.gpu_memory_utilization})"
            )
        if fl.max_model_len is not None and f.max_model_len is not None and fl.max_model_len > f.max_model_len:
            raise ValueError(
                f"floors.max_model_len ({fl.max_model_len}) is above the base flags.max_model_len ({f.max_model_len})"
            )
        if fl.max_num_seqs is not None and f.max_num_seqs is not None and fl.max_num_seqs > f.max_num_seqs:
            raise ValueError(
                f"floors.max_num_seqs ({fl.max_num_seqs}) is above the base flags.max_num_seqs ({f.max_num_seqs})"
            )
        return self

    @property
    def unit_file(self) -> str:
        return f"{self.unit}.service"

    @property
    def name(self) -> str:
        """The served model name clients use."""
        if self.served_model_name:
            return self.served_model_name
        return self.model.rstrip("/").rsplit("/", 1)[-1]

    def floor(self, key: Literal["gpu_memory_utilization", "max_model_len", "max_num_seqs"]) -> float:
        """The effective floor: the one configured, else the default capped at the base value."""
        set_value = getattr(self.floors, key)
        if set_value is not None:
            return float(set_value)
        base = getattr(self.flags, key)
        default = DEFAULT_FLOORS[key]
        return float(default if base is None else min(default, base))


class Guard(_Model):
    """Settings of the guard itself."""

    log_level: Literal["debug", "info", "warning", "error"] = "info"
    metrics: bool = False  # node_exporter textfile, off by default
    metrics_path: str = "/var/lib/prometheus/node-exporter/vllm_guard.prom"  # node_exporter's usual dir
    vram_wait_timeout_s: int = Field(default=600, ge=0)  # how long to wait for held VRAM to come back
    step_back: bool = False  # step back toward the base flags after a long healthy period
    step_back_after_s: int = Field(default=7 * 86400, ge=3600)  # a week healthy before trying
    pressure_interval_s: float = Field(default=5.0, ge=1)  # memory-pressure sampling period
    watchdog: bool = True  # send WATCHDOG=1 when the unit has WatchdogSec=
    preflight: Literal["off", "fit"] = "off"  # the default of each target's preflight


class Config(_Model):
    """The whole configuration."""

    guard: Guard = Field(default_factory=Guard)
    target: list[Target] = Field(min_length=1)

    @model_validator(mode="after")
    def _distinct(self) -> Config:
        seen_units: dict[str, int] = {}
        seen_ports: dict[tuple[str, int], int] = {}
        for i, t in enumerate(self.target):
            if t.unit in seen_units:
                raise ValueError(f"target[{i}] and target[{seen_units[t.unit]}] both use unit {t.unit!r}")
            seen_units[t.unit] = i
            host = "*" if t.host in ("0.0.0.0", "::") else t.host
            for (h, port), j in seen_ports.items():
                if port == t.port and (h == host or "*" in (h, host)):
                    raise ValueError(f"target[{i}] and target[{j}] both listen on port {t.port}")
            seen_ports[(host, t.port)] = i
        return self

    def by_unit(self, unit: str) -> Target | None:
        unit = unit.removesuffix(".service")
        return next((t for t in self.target if t.unit == unit), None)
