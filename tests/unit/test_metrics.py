"""The node_exporter textfile: names, labels, escaping, and the format rules node_exporter enforces."""

from __future__ import annotations

import errno
import re
import stat
from pathlib import Path

import pytest

from vllm_guard.adapters.metrics import metrics_write_error, write_textfile
from vllm_guard.core.config import Flags
from vllm_guard.core.metrics import (
    MetricsSnapshot,
    PressureSample,
    TargetSnapshot,
    escape_label,
    flag_values,
    format_value,
    render_textfile,
)

pytestmark = pytest.mark.unit

QWEN = TargetSnapshot(
    unit="vllm-qwen",
    remedies={"kv_cache_insufficient": 2, "cuda_oom_profile": 1},
    flags=flag_values(Flags(gpu_memory_utilization=0.85, max_model_len=16384, enforce_eager=True)),
    last_probe_ok=True,
    time_to_ready_s=73.25,
    kv_cache_tokens=75840,
    below_base_since=1_800_000_000.7,
)
LLAMA = TargetSnapshot(unit="vllm-llama", last_probe_ok=False, gave_up=True)
SNAP = MetricsSnapshot(
    up=True,
    written_at=1_800_000_123.9,
    targets=[QWEN, LLAMA],
    pressure=[PressureSample("host_memory", True), PressureSample("gpu0", False, unit="vllm-qwen")],
)

# The sample grammar of the text format: name, optional {label="value",...}, value; no timestamp.
SAMPLE = re.compile(
    r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? '
    r"(?P<value>-?[0-9.e+-]+|NaN|[+-]Inf)$"
)


def families(text: str) -> dict[str, list[str]]:
    """Check the rules node_exporter applies and return the samples per family."""
    assert text.endswith("\n")
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in out, f"{name} appears twice"
            out[name], current = [], name
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert name == current and kind in ("gauge", "counter")
        else:
            m = SAMPLE.match(line)
            assert m, f"not a sample line: {line!r}"
            assert m.group("name") == current, f"{line!r} outside its family"
            out[current].append(line)
    return out


def test_the_textfile() -> None:
    text = render_textfile(SNAP)
    fams = families(text)
    assert set(fams) == {
        "vllm_guard_up",
        "vllm_guard_remedies_total",
        "vllm_guard_flag",
        "vllm_guard_last_probe_ok",
        "vllm_guard_time_to_ready_seconds",
        "vllm_guard_gave_up",
        "vllm_guard_kv_cache_tokens",
        "vllm_guard_memory_pressure_warning",
        "vllm_guard_last_write_timestamp_seconds",
        "vllm_guard_below_base",
        "vllm_guard_below_base_since_timestamp_seconds",
    }
    assert fams["vllm_guard_up"] == ["vllm_guard_up 1"]
    assert fams["vllm_guard_last_write_timestamp_seconds"] == ["vllm_guard_last_write_timestamp_seconds 1800000123"]
    assert fams["vllm_guard_below_base"] == [
        'vllm_guard_below_base{unit="vllm-llama"} 0',
        'vllm_guard_below_base{unit="vllm-qwen"} 1',
    ]
    assert fams["vllm_guard_below_base_since_timestamp_seconds"] == [
        'vllm_guard_below_base_since_timestamp_seconds{unit="vllm-qwen"} 1800000000'
    ]
    assert fams["vllm_guard_remedies_total"] == [
        'vllm_guard_remedies_total{unit="vllm-qwen",kind="cuda_oom_profile"} 1',
        'vllm_guard_remedies_total{unit="vllm-qwen",kind="kv_cache_insufficient"} 2',
    ]
    assert 'vllm_guard_flag{unit="vllm-qwen",flag="gpu_memory_utilization"} 0.85' in fams["vllm_guard_flag"]
    assert 'vllm_guard_flag{unit="vllm-qwen",flag="max_model_len"} 16384' in fams["vllm_guard_flag"]
    assert 'vllm_guard_flag{unit="vllm-qwen",flag="enforce_eager"} 1' in fams["vllm_guard_flag"]
    # flags left to vLLM's default are not exported
    assert not any("max_num_seqs" in s for s in fams["vllm_guard_flag"])
    assert fams["vllm_guard_last_probe_ok"] == [
        'vllm_guard_last_probe_ok{unit="vllm-llama"} 0',
        'vllm_guard_last_probe_ok{unit="vllm-qwen"} 1',
    ]
    assert fams["vllm_guard_time_to_ready_seconds"] == ['vllm_guard_time_to_ready_seconds{unit="vllm-qwen"} 73.25']
    assert 'vllm_guard_gave_up{unit="vllm-llama"} 1' in fams["vllm_guard_gave_up"]
    assert fams["vllm_guard_kv_cache_tokens"] == ['vllm_guard_kv_cache_tokens{unit="vllm-qwen"} 75840']
    assert fams["vllm_guard_memory_pressure_warning"] == [
        'vllm_guard_memory_pressure_warning{unit="",resource="host_memory"} 1',
        'vllm_guard_memory_pressure_warning{unit="vllm-qwen",resource="gpu0"} 0',
    ]


def test_every_family_has_help_and_type_and_no_timestamps() -> None:
    text = render_textfile(SNAP)
    helps = [line for line in text.splitlines() if line.startswith("# HELP")]
    types = [line for line in text.splitlines() if line.startswith("# TYPE")]
    assert len(helps) == len(types) == 11
    assert "# TYPE vllm_guard_remedies_total counter" in types
    assert all(len(line.split()) == 2 for line in text.splitlines() if not line.startswith("#"))


def test_a_daemon_going_down_and_no_targets() -> None:
    text = render_textfile(MetricsSnapshot(up=False))
    assert families(text)["vllm_guard_up"] == ["vllm_guard_up 0"]
    assert "vllm_guard_last_write_timestamp_seconds" not in families(text)  # no time given: no heartbeat
    assert all(samples == [] for name, samples in families(text).items() if name != "vllm_guard_up")


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [("plain", "plain"), ('a"b', 'a\\"b'), ("a\\b", "a\\\\b"), ("a\nb", "a\\nb"), ("vllm@1.service", "vllm@1.service")],
)
def test_label_escaping(raw: str, escaped: str) -> None:
    assert escape_label(raw) == escaped
    text = render_textfile(MetricsSnapshot(targets=[TargetSnapshot(unit=raw, last_probe_ok=True)]))
    families(text)  # still parses
    assert f'vllm_guard_last_probe_ok{{unit="{escaped}"}} 1' in text


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1"), (0.85, "0.85"), (16384, "16384"), (float("nan"), "NaN"), (float("inf"), "+Inf"), (1e20, "1e+20")],
)
def test_values(value: float, text: str) -> None:
    assert format_value(value) == text


def test_flag_values_of_a_full_flag_set() -> None:
    flags = Flags(
        gpu_memory_utilization=0.8,
        max_model_len=8192,
        max_num_seqs=32,
        max_num_batched_tokens=4096,
        tensor_parallel_size=2,
        swap_space=4,
        cpu_offload_gb=0,
    )
    assert flag_values(flags) == {
        "gpu_memory_utilization": 0.8,
        "max_model_len": 8192.0,
        "max_num_seqs": 32.0,
        "max_num_batched_tokens": 4096.0,
        "tensor_parallel_size": 2.0,
        "swap_space": 4.0,
        "cpu_offload_gb": 0.0,
        "enforce_eager": 0.0,
    }


def test_write_textfile_replaces_the_file_atomically(tmp_path: Path) -> None:
    path = tmp_path / "node-exporter/vllm_guard.prom"
    write_textfile(path, MetricsSnapshot(up=True))
    first = path.read_text()
    text = write_textfile(path, SNAP)
    assert path.read_text() == text != first
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    # nothing but the file itself is left in the folder (node_exporter reads every *.prom there)
    assert [p.name for p in path.parent.iterdir()] == ["vllm_guard.prom"]


@pytest.mark.parametrize(
    ("err", "words"),
    [
        (FileNotFoundError(errno.ENOENT, "No such file or directory"), "install prometheus-node-exporter"),
        (OSError(errno.EROFS, "Read-only file system"), "ReadWritePaths="),
        (PermissionError(errno.EACCES, "Permission denied"), "not writable by root"),
    ],
)
def test_a_textfile_that_cannot_be_written_says_what_to_do(err: OSError, words: str) -> None:
    text = metrics_write_error(Path("/var/lib/prometheus/node-exporter/vllm_guard.prom"), err)
    assert text.startswith(f"cannot write metrics to /var/lib/prometheus/node-exporter/vllm_guard.prom: {err.strerror}")
    assert words in text and "run --check" in text


def test_below_base_since_is_the_start_of_the_current_departure_from_the_base() -> None:
    from vllm_guard.core.state import Current, TargetState

    base = Current(model="/m", flags=Flags(max_model_len=8192))
    low = Current(model="/m", flags=Flags(max_model_len=4096))
    lower = Current(model="/m", flags=Flags(max_model_len=2048))
    ts = TargetState(current=base)
    ts.log_env(100.0, base)
    assert ts.below_base_since(base) is None
    ts.log_env(200.0, low)
    ts.log_env(300.0, base)  # back on the base (a reset, a step back)
    ts.log_env(400.0, low)
    ts.log_env(500.0, lower)
    ts.current = lower
    assert ts.below_base_since(base) == 400.0
    # a log that does not reach back to the base: the oldest departure it holds
    ts.env_log = ts.env_log[-1:]
    assert ts.below_base_since(base) == 500.0
