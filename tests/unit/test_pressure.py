"""Memory-pressure verdicts from two samples, and the sampler reading a fake /proc."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_guard.adapters.host import read_memory_sample, read_psi_memory
from vllm_guard.core.pressure import MemorySample, PressureThresholds, judge_pressure

pytestmark = pytest.mark.unit

GiB = 1 << 30
PAGE = 4096


def sample(
    t: float,
    pin: int = 0,
    pout: int = 0,
    avail: int = 32 * GiB,
    some: float | None = 0.0,
    full: float | None = 0.0,
    unit: int | None = None,
) -> MemorySample:
    return MemorySample(
        t=t,
        pswpin=pin,
        pswpout=pout,
        mem_total=64 * GiB,
        mem_available=avail,
        psi_some_avg10=some,
        psi_full_avg10=full,
        unit_memory=unit,
    )


# 10 MiB/s is 2560 pages/s of 4 KiB; over 5 s that is 12800 pages
CASES = [
    ("idle host", sample(0), sample(5), "ok", ""),
    ("swap-out only (idle pages leaving)", sample(0), sample(5, pout=50_000), "ok", ""),
    ("thrash both ways", sample(0), sample(5, pin=13_000, pout=13_000), "warn", "thrashing"),
    ("thrash just under", sample(0), sample(5, pin=12_000, pout=13_000), "ok", ""),
    ("RAM almost gone", sample(0), sample(5, avail=3 * GiB), "warn", "RAM available"),
    ("RAM at 10%", sample(0), sample(5, avail=int(6.5 * GiB)), "ok", ""),
    ("counters reset by a reboot", sample(0, pin=10**9, pout=10**9), sample(5), "ok", ""),
    ("no PSI on this kernel", sample(0, some=None, full=None), sample(5, some=None, full=None), "ok", ""),
]


@pytest.mark.parametrize(("name", "prev", "cur", "level", "needle"), CASES, ids=[c[0] for c in CASES])
def test_two_samples(name: str, prev: MemorySample, cur: MemorySample, level: str, needle: str) -> None:
    v = judge_pressure(prev, cur)
    assert v.level == level, v.reasons
    if needle:
        assert needle in v.message() and v.hint
    else:
        assert v.reasons == () and v.hint == ""


def test_psi_must_stay_high_for_30_seconds() -> None:
    since = None
    levels = []
    for t in range(0, 45, 5):
        v = judge_pressure(sample(t - 5.0, some=25), sample(float(t), some=25.0), high_since=since)
        since = v.high_since
        levels.append(v.level)
    # high from t=0; warned from t=30 on
    assert levels == ["ok"] * 6 + ["warn"] * 3
    # pressure falls: the clock starts again
    v = judge_pressure(sample(40, some=25), sample(45, some=2.0), high_since=since)
    assert v.level == "ok" and v.high_since is None


def test_full_pressure_counts_and_names_the_unit() -> None:
    v = judge_pressure(sample(0), sample(40, full=12.0, unit=20 * GiB), high_since=5.0)
    assert v.level == "warn"
    assert "full 12.0%" in v.message() and "vLLM unit uses 20480 MiB" in v.message()
    assert v.numbers()["unit_memory_bytes"] == 20 * GiB


def test_thresholds_are_parameters() -> None:
    strict = PressureThresholds(swap_in_mib_s=0.1, swap_out_mib_s=0.1)
    assert judge_pressure(sample(0), sample(5, pin=200, pout=200), strict).level == "warn"


def fake_proc(root: Path, *, psi: bool = True) -> None:
    (root / "proc/pressure").mkdir(parents=True)
    (root / "proc/vmstat").write_text("nr_free_pages 12345\npswpin 1000\npswpout 2000\n")
    (root / "proc/meminfo").write_text(
        "MemTotal:       24576000 kB\nMemFree:         1000000 kB\nMemAvailable:    8192000 kB\n"
        "SwapTotal:       1048576 kB\nSwapFree:         524288 kB\n"
    )
    if psi:
        # the format of /proc/pressure/memory (Documentation/accounting/psi.rst)
        (root / "proc/pressure/memory").write_text(
            "some avg10=12.50 avg60=3.10 avg300=0.80 total=123456\nfull avg10=4.00 avg60=1.00 avg300=0.20 total=6543\n"
        )
    cg = root / "sys/fs/cgroup/system.slice/vllm-qwen.service"
    cg.mkdir(parents=True)
    (cg / "memory.current").write_text("4294967296\n")


def test_sampler_reads_a_fake_proc(tmp_path: Path) -> None:
    fake_proc(tmp_path)
    s = read_memory_sample(tmp_path, 12.5, unit="vllm-qwen")
    assert (s.t, s.pswpin, s.pswpout) == (12.5, 1000, 2000)
    assert s.mem_total == 24576000 * 1024 and s.mem_available == 8192000 * 1024
    assert s.swap_total == 1 << 30 and s.swap_free == 1 << 29
    assert (s.psi_some_avg10, s.psi_full_avg10) == (12.5, 4.0)
    assert s.unit_memory == 4 * GiB


def test_sampler_without_psi_or_cgroup(tmp_path: Path) -> None:
    fake_proc(tmp_path, psi=False)
    s = read_memory_sample(tmp_path, 0.0, unit="other")
    assert s.psi_some_avg10 is None and s.unit_memory is None
    assert read_psi_memory(tmp_path / "nowhere") == (None, None)


def test_cgroup_v1_memory(tmp_path: Path) -> None:
    fake_proc(tmp_path)
    v1 = tmp_path / "sys/fs/cgroup/memory/system.slice/vllm-b.service"
    v1.mkdir(parents=True)
    (v1 / "memory.usage_in_bytes").write_text("1024\n")
    assert read_memory_sample(tmp_path, 0.0, unit="vllm-b.service").unit_memory == 1024
