"""Follower throughput: entries per second read from a real journal file, one core.

    PYTHONPATH=src:. python bench/bench_follower.py [--entries 200000] [--keep DIR]

Builds a journal file with systemd-journal-remote (a vLLM unit at debug level restarting now and
then, PID 1's messages about it, kernel lines, and another unit's lines that the matches must skip),
then times ``JournalFollower.read()`` alone and with ``AttemptTracker.feed_all()``.
Prints one JSON object. Target (see the README): 20,000 entries/s on one core.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

from tests.journal.export import JournalScript, new_invocation, write_journal
from tests.journal.scenarios import CUDA_OOM, KERNEL_OOM, READY, START_LINES, fill
from vllm_guard.adapters.journal import JournalFollower
from vllm_guard.core.attempt import AttemptTracker

UNIT = "vllm-qwen.service"
NOISE = "cron.service"
# vLLM at DEBUG: one line per scheduler step and request (format of vLLM's logger)
DEBUG_LINE = "(EngineCore_DP0 pid={core}) DEBUG 10-21 09:12:{s:02d} [core.py:412] EngineCore loop active: step {i}"


def build_script(total: int) -> JournalScript:
    s = JournalScript(step_us=50)
    attempt = 0
    while len(s.entries) < total:
        attempt += 1
        inv = new_invocation()
        main, core = 10_000 + attempt * 10, 10_005 + attempt * 10
        s.started(UNIT, inv)
        s.lines(UNIT, inv, main, fill(START_LINES, core=core) + fill(READY, main=main))
        for i in range(5_000):
            if i % 97 == 0:
                s.other(NOISE, "(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)")
            elif i % 499 == 0:
                s.kernel('audit: type=1400 audit(1700000000.000:1): apparmor="STATUS"', priority="5")
            else:
                s.line(UNIT, inv, main, DEBUG_LINE.format(core=core, s=i % 60, i=i))
        s.lines(UNIT, inv, main, CUDA_OOM)
        s.kernel(KERNEL_OOM.format(pid=core))
        s.main_exited(UNIT, inv, status=1)
        s.failed(UNIT, inv, "exit-code")
        s.restart_scheduled(UNIT, inv, attempt)
    del s.entries[total:]
    return s


def time_read(directory: Path, batch: int, with_tracker: bool) -> dict[str, float]:
    tracker = AttemptTracker([UNIT])
    n = events = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with JournalFollower([UNIT], path=directory) as follower:
        while True:
            got = follower.read(batch)
            n += len(got)
            if with_tracker:
                events += len(tracker.feed_all(got))
            if follower.caught_up:
                break
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"entries": n, "events": events, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "entries_per_cpu_s": round(n / cpu)}  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entries", type=int, default=200_000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--keep", type=Path, help="build the journal here and keep it")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or Path(tmp)
        t0 = time.perf_counter()
        script = build_script(args.entries)
        path = write_journal(script.export(), directory / "system.journal")
        built_s = time.perf_counter() - t0
        time_read(directory, args.batch, False)  # warm the page cache
        follower_only = time_read(directory, args.batch, False)
        with_tracker = time_read(directory, args.batch, True)
        result = {
            "journal_entries": len(script.entries),
            "journal_bytes": path.stat().st_blocks * 512,
            "build_s": round(built_s, 1),
            "batch": args.batch,
            "follower": follower_only,
            "follower_and_tracker": with_tracker,
            "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(),
        }
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
