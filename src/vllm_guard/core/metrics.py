"""The guard's metrics as a node_exporter textfile (Prometheus text format 0.0.4).

Pure: ``render_textfile`` turns a snapshot into text; ``vllm_guard.adapters.metrics`` writes it.

node_exporter's textfile collector reads ``*.prom`` files from its directory at every scrape. Its rules
(node_exporter README, "Textfile Collector"): no client-side timestamps, each metric family once and in
one block, ``# HELP`` and ``# TYPE`` before the samples.

    snapshot = MetricsSnapshot(up=True, targets=[TargetSnapshot(unit="vllm-qwen", last_probe_ok=True)])
    text = render_textfile(snapshot)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from vllm_guard.core.config import Flags

PREFIX = "vllm_guard_"


@dataclass(frozen=True)
class PressureSample:
    """One memory-pressure warning the guard watches: on (1) or off (0) now."""

    resource: str  # "host_memory", "swap", "gpu0", ...
    active: bool
    unit: str = ""  # the unit it concerns, or "" for the whole host


@dataclass(frozen=True)
class TargetSnapshot:
    """What the guard knows about one vLLM unit right now."""

    unit: str
    # remedies applied per failure kind, counted since the state began (a counter: it never goes down)
    remedies: Mapping[str, int] = field(default_factory=dict)
    flags: Mapping[str, float] = field(default_factory=dict)  # current tunable flag values
    last_probe_ok: bool | None = None  # None: no probe yet
    time_to_ready_s: float | None = None  # of the last verified start
    gave_up: bool = False
    kv_cache_tokens: int | None = None  # as vLLM reported at the last verified start
    # since when (unix time) the unit runs on other flags or another model than its base config; None: on the base
    below_base_since: float | None = None


@dataclass(frozen=True)
class MetricsSnapshot:
    up: bool = True
    written_at: float | None = None  # unix time of this write: a heartbeat (the guard rewrites at least every minute)
    targets: Sequence[TargetSnapshot] = ()
    pressure: Sequence[PressureSample] = ()


def flag_values(flags: Flags) -> dict[str, float]:
    """The numeric value of each flag that is set (booleans as 0/1; flags left to vLLM are omitted)."""
    out: dict[str, float] = {"gpu_memory_utilization": flags.gpu_memory_utilization}
    for name in ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "swap_space", "cpu_offload_gb"):
        value = getattr(flags, name)
        if value is not None:
            out[name] = float(value)
    out["tensor_parallel_size"] = float(flags.tensor_parallel_size)
    out["enforce_eager"] = 1.0 if flags.enforce_eager else 0.0
    return out


def escape_label(value: str) -> str:
    """A label value: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


Sample = tuple[Mapping[str, str], float]


def _family(name: str, kind: str, help_text: str, samples: Iterable[Sample]) -> list[str]:
    full = PREFIX + name
    lines = [f"# HELP {full} {_escape_help(help_text)}", f"# TYPE {full} {kind}"]
    for labels, value in samples:
        if labels:
            inner = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items())
            lines.append(f"{full}{{{inner}}} {format_value(value)}")
        else:
            lines.append(f"{full} {format_value(value)}")
    return lines


def render_textfile(snapshot: MetricsSnapshot) -> str:
    """The textfile: one block per metric family, targets sorted by unit, labels sorted."""
    targets = sorted(snapshot.targets, key=lambda t: t.unit)
    out: list[str] = []
    out += _family("up", "gauge", "1 while the vllm-guard daemon runs.", [({}, 1.0 if snapshot.up else 0.0)])
    if snapshot.written_at is not None:
        out += _family(
            "last_write_timestamp_seconds",
            "gauge",
            "Unix time the guard last wrote this file; it rewrites it at least every minute while it runs.",
            [({}, float(int(snapshot.written_at)))],
        )
    out += _family(
        "remedies_total",
        "counter",
        "Remedies the guard applied to a vLLM unit, by failure kind.",
        [({"unit": t.unit, "kind": k}, float(n)) for t in targets for k, n in sorted(t.remedies.items())],
    )
    out += _family(
        "flag",
        "gauge",
        "Current value of each tunable vLLM flag of a unit (booleans as 0/1).",
        [({"unit": t.unit, "flag": f}, float(v)) for t in targets for f, v in sorted(t.flags.items())],
    )
    out += _family(
        "last_probe_ok",
        "gauge",
        "1 if the last probe of the unit's model (/v1/models and a chat completion) passed, else 0.",
        [({"unit": t.unit}, 1.0 if t.last_probe_ok else 0.0) for t in targets if t.last_probe_ok is not None],
    )
    out += _family(
        "time_to_ready_seconds",
        "gauge",
        "Seconds from the unit's last verified start until its model answered.",
        [({"unit": t.unit}, t.time_to_ready_s) for t in targets if t.time_to_ready_s is not None],
    )
    out += _family(
        "gave_up",
        "gauge",
        "1 if the guard stopped restarting the unit and a person must act.",
        [({"unit": t.unit}, 1.0 if t.gave_up else 0.0) for t in targets],
    )
    out += _family(
        "kv_cache_tokens",
        "gauge",
        "KV cache capacity in tokens that vLLM reported at the unit's last verified start.",
        [({"unit": t.unit}, float(t.kv_cache_tokens)) for t in targets if t.kv_cache_tokens is not None],
    )
    out += _family(
        "below_base",
        "gauge",
        "1 while the unit runs on lowered flags or a fallback model instead of its base config, else 0.",
        [({"unit": t.unit}, 0.0 if t.below_base_since is None else 1.0) for t in targets],
    )
    out += _family(
        "below_base_since_timestamp_seconds",
        "gauge",
        "Unix time since which the unit runs below its base config (only while it does).",
        [({"unit": t.unit}, float(int(t.below_base_since))) for t in targets if t.below_base_since is not None],
    )
    pressure = sorted(snapshot.pressure, key=lambda p: (p.unit, p.resource))
    out += _family(
        "memory_pressure_warning",
        "gauge",
        "1 while the guard warns of memory pressure on a resource (host memory, swap, a GPU).",
        [({"unit": p.unit, "resource": p.resource}, 1.0 if p.active else 0.0) for p in pressure],
    )
    return "\n".join(out) + "\n"
