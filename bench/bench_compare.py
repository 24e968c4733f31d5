"""Compare vllm-guard with plain systemd and with one blind retry, on the same failing vLLM units.

For each scenario the same vLLM unit (the vLLM emulator on an emulated 24 GiB GPU, rendered by
``vllm-guard install``) runs in a fresh throwaway systemd three times:

- guard: the real vllm-guard.service watches it;
- plain systemd: Restart=on-failure until StartLimitBurst gives up;
- blind retry: after the first failure a script lowers --gpu-memory-utilization by 0.05, once, whatever
  the failure was (what a person or a generic wrapper might try), then systemd carries on.

It reports the starts, whether it ever served (a chat request answered), the time from the first start
to a verified healthy server, and that time's floor: each failed attempt's own run time, plus RestartSec
after each, plus the good attempt's own start-up time (the guard cannot be faster than systemd and vLLM).

    sudo .venv/bin/python bench/bench_compare.py            # writes bench/RESULTS-compare.md
    sudo .venv/bin/python bench/bench_compare.py --only kv_cache --out -
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.system.harness import Q7, Q14, Q14_AWQ, add_model, start  # noqa: E402
from vllm_guard.app import sandbox  # noqa: E402
from vllm_guard.app.sandbox import GuardBox  # noqa: E402

UNIT = "vllm-emu"
PORT = 8000
RESTART_SEC = 2  # the same short RestartSec for every mode
BURST = 5  # systemd's default StartLimitBurst
TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    target: Callable[[GuardBox], dict[str, Any]]
    memory_limit_mib: int | None = None


def _kv(gb: GuardBox) -> dict[str, Any]:
    return gb.emulator_target(
        unit=UNIT,
        model=add_model(gb, "qwen", Q7),
        flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768},
        restart_sec=RESTART_SEC,
        start_limit_burst=BURST,
    )


def _oom_profile(gb: GuardBox) -> dict[str, Any]:
    return gb.emulator_target(
        unit=UNIT,
        model=add_model(gb, "qwen", Q7),
        flags={"gpu_memory_utilization": 0.95, "max_model_len": 8192},
        env={"VLLM_EMU_CUDA_RESERVED_MIB": "1024"},
        restart_sec=RESTART_SEC,
        start_limit_burst=BURST,
    )


def _weights(gb: GuardBox) -> dict[str, Any]:
    return gb.emulator_target(
        unit=UNIT,
        model=add_model(gb, "qwen14", Q14),
        served_model_name="qwen",
        flags={"max_model_len": 8192},
        fallback=[{"model": add_model(gb, "qwen14-awq", Q14_AWQ), "quantization": "awq"}],
        restart_sec=RESTART_SEC,
        start_limit_burst=BURST,
    )


def _host_oom(gb: GuardBox) -> dict[str, Any]:
    return gb.emulator_target(
        unit=UNIT,
        model=add_model(gb, "qwen", Q7),
        flags={"max_model_len": 8192, "max_num_seqs": 64, "swap_space": 4},
        env={"VLLM_EMU_HOST_ALLOC": "1", "VLLM_EMU_MEMCG": sandbox.INSIDE_MEMCG},
        restart_sec=RESTART_SEC,
        start_limit_burst=BURST,
    )


SCENARIOS = [
    Scenario("kv_cache", "--max-model-len 32768 with 1.6 GiB of KV cache (fits 30240)", _kv),
    Scenario("cuda_oom_profile", "util 0.95: CUDA-graph capture runs out of memory", _oom_profile),
    Scenario("weights_too_big", "Qwen2.5-14B bf16 on 24 GiB, AWQ build configured as fallback", _weights),
    Scenario("host_oom", "--swap-space 4 pins more host memory than the 400 MiB cgroup allows", _host_oom, 400),
]


@dataclass
class Result:
    scenario: str
    mode: str
    starts: int
    served: bool
    time_to_healthy_s: float | None
    floor_s: float | None


def _ts(entry: dict[str, Any]) -> float:
    return int(entry["__REALTIME_TIMESTAMP"]) / 1e6


def _timeline(gb: GuardBox) -> tuple[list[float], list[float], float | None]:
    """(start times, exit times, the first 'Application startup complete' time) of the unit."""
    starts, exits = [], []
    for e in gb.box.journal(f"UNIT={UNIT}.service", "_PID=1"):
        msg = str(e.get("MESSAGE", ""))
        if msg.startswith("Started "):
            starts.append(_ts(e))
        elif "Main process exited" in msg:
            exits.append(_ts(e))
    ready = None
    for e in gb.box.journal(f"_SYSTEMD_UNIT={UNIT}.service"):
        if "Application startup complete." in str(e.get("MESSAGE", "")):
            ready = _ts(e)
            break
    return starts, exits, ready


def _floor(starts: list[float], exits: list[float], ready: float | None) -> float | None:
    """Each failed attempt's own time + RestartSec after it + the good attempt's own start-up time."""
    if ready is None or not starts:
        return None
    good = max(s for s in starts if s <= ready)
    failed = [(s, next((x for x in exits if x >= s), s)) for s in starts if s < good]
    return sum(x - s for s, x in failed) + RESTART_SEC * len(failed) + (ready - good)


def run_one(scn: Scenario, mode: str) -> Result:
    name = f"vg-bench-{scn.name.replace('_', '-')}-{mode}-{os.getpid() % 10000}"
    limit = None if scn.memory_limit_mib is None else scn.memory_limit_mib << 20
    with sandbox.guard_box(name, repo=REPO, memory_limit_bytes=limit) as gb:
        target = scn.target(gb)
        start(gb, [target], with_guard=(mode == "guard"), guard={"vram_wait_timeout_s": 60})
        served_name = target.get("served_model_name") or Path(str(target["model"])).name
        deadline = time.monotonic() + TIMEOUT_S
        blind_done = False
        healthy_at: float | None = None
        while time.monotonic() < deadline:
            st = gb.unit_state(UNIT)
            if mode == "guard":
                ev = gb.events(UNIT, "verified_healthy")
                if ev:
                    healthy_at = _ts(ev[0])
                    break
                if gb.events(UNIT, "gave_up"):
                    break
            else:
                if mode == "blind" and not blind_done and gb.starts(UNIT) >= 1 and st["ActiveState"] != "active":
                    flags = gb.flags(UNIT)
                    util = next(
                        (float(f.split("=")[1]) for f in flags if f.startswith("--gpu-memory-utilization=")), 0.9
                    )
                    new = [f for f in flags if not f.startswith("--gpu-memory-utilization=")]
                    env = gb.env_file(UNIT)
                    path = f"/var/lib/vllm-guard/{UNIT}.env"
                    args = " ".join([f"--gpu-memory-utilization={round(util - 0.05, 2)}", *new])
                    gb.box.write(
                        path, f'VLLM_GUARD_MODEL="{env["VLLM_GUARD_MODEL"]}"\nVLLM_GUARD_ARGS="{args}"\n', 0o600
                    )
                    blind_done = True
                if st["ActiveState"] == "active" and gb.chat(PORT, served_name, timeout=3) == 200:
                    healthy_at = time.time()
                    break
                if st["ActiveState"] == "failed":
                    break
            time.sleep(0.5)
        starts, exits, ready = _timeline(gb)
        served = healthy_at is not None and gb.chat(PORT, served_name, timeout=3) == 200
        tth = None if healthy_at is None or not starts else healthy_at - starts[0]
        return Result(scn.name, mode, len(starts), served, tth, _floor(starts, exits, ready) if served else None)


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def table(results: list[Result]) -> str:
    by = {(r.scenario, r.mode): r for r in results}
    lines = [
        "| scenario | guard: starts | guard: time to healthy (s) | floor (s) | guard overhead (s) "
        "| plain systemd: starts | plain: ever serves | blind retry: starts | blind: ever serves "
        "| blind: time to healthy (s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scn in SCENARIOS:
        g, p, b = by.get((scn.name, "guard")), by.get((scn.name, "plain")), by.get((scn.name, "blind"))
        if g is None and p is None and b is None:
            continue
        over = (
            None if g is None or g.time_to_healthy_s is None or g.floor_s is None else g.time_to_healthy_s - g.floor_s
        )
        lines.append(
            f"| {scn.name} | {g.starts if g else '-'}{'' if g is None or g.served else ' (never healthy)'} "
            f"| {_fmt(g.time_to_healthy_s if g else None)} | {_fmt(g.floor_s if g else None)} | {_fmt(over)} "
            f"| {p.starts if p else '-'} | {('yes' if p.served else 'no') if p else '-'} "
            f"| {b.starts if b else '-'} | {('yes' if b.served else 'no') if b else '-'} "
            f"| {_fmt(b.time_to_healthy_s if b else None)} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", help="scenario name (repeatable)")
    ap.add_argument("--modes", default="guard,plain,blind")
    ap.add_argument("--out", default=str(REPO / "bench" / "RESULTS-compare.md"), help="file, or - for stdout")
    args = ap.parse_args()
    reason = None if os.geteuid() == 0 else "needs root (systemd-nspawn)"
    if reason:
        print(f"bench_compare: {reason}", file=sys.stderr)
        return 77
    results = []
    t0 = time.monotonic()
    for scn in SCENARIOS:
        if args.only and scn.name not in args.only:
            continue
        for mode in args.modes.split(","):
            r = run_one(scn, mode)
            print(
                f"{scn.name:18} {mode:6} starts={r.starts} served={r.served} tth={_fmt(r.time_to_healthy_s)} floor={_fmt(r.floor_s)}",
                flush=True,
            )
            results.append(r)
    text = (
        "# Guard vs plain systemd vs one blind retry\n\n"
        "Made by `sudo .venv/bin/python bench/bench_compare.py` "
        f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, {platform.release()}, "
        f"{time.monotonic() - t0:.0f} s in all). Each cell is one run in a fresh throwaway systemd "
        "(systemd-nspawn): the vLLM emulator on an emulated 24 GiB GPU, the unit rendered by `vllm-guard install`, "
        f"RestartSec={RESTART_SEC}, StartLimitBurst={BURST}.\n\n"
        "- starts: how many times systemd started the unit; ever serves: a chat request was answered before "
        "systemd gave up (or within 90 s).\n"
        "- time to healthy: from the first start to the guard's verified_healthy event (a real chat answer).\n"
        "- floor: each failed attempt's own run time + RestartSec after it + the good attempt's own start-up "
        "time; guard overhead = time to healthy - floor.\n"
        "- blind retry: after the first failure, --gpu-memory-utilization is lowered by 0.05 once, whatever "
        "the failure was.\n\n" + table(results) + "\n"
    )
    if args.out == "-":
        print(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
