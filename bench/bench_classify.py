"""Classifier throughput: lines per second on a mixed log of a million lines, on one core.

Lines per second are counted against the process's CPU time (``time.process_time``), which is
what one core spends on it whatever else shares the machine; wall time is printed beside it.

The log is built from the corpus (tests/data/logs): mostly the lines of benign start-ups and serving,
with the lines of failure excerpts sprinkled in (about one line in a hundred), repeated to the size
asked for. Prints one result line per run and the best.

    PYTHONPATH=src python bench/bench_classify.py [--lines 1000000] [--repeat 3] [--failure-share 0.01]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from vllm_guard.core.classify import classify

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "logs"


def _excerpt(path: Path) -> list[str]:
    """The log lines of a corpus file, without its leading ``#`` header (source and notes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return lines[start:]


def build_log(n_lines: int, failure_share: float, seed: int = 1) -> list[str]:
    benign: list[str] = []
    failing: list[str] = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        for path in sorted(folder.glob("*.log")):
            (benign if folder.name == "none" else failing).extend(_excerpt(path))
    if not benign or not failing:
        raise SystemExit(f"the corpus under {CORPUS} needs benign and failing logs")
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n_lines:
        if rng.random() < failure_share:  # a burst of ~20 failure lines
            start = rng.randrange(len(failing))
            out.extend(failing[start : start + 20])
        else:
            start = rng.randrange(len(benign))
            out.extend(benign[start : start + 20])
    return out[:n_lines]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--failure-share", type=float, default=0.01, help="share of lines from failure excerpts")
    args = ap.parse_args()
    log = build_log(args.lines, args.failure_share)
    chars = sum(len(line) for line in log)
    print(f"log: {len(log):,} lines, {chars / len(log):.0f} chars/line on average")
    best = 0.0
    for i in range(args.repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        failure = classify(log)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        rate = len(log) / cpu
        best = max(best, rate)
        print(
            f"run {i + 1}: {cpu:.2f} s CPU ({wall:.2f} s wall), {rate:,.0f} lines/s per core "
            f"(verdict: {failure.kind.value})"
        )
    print(f"best: {best:,.0f} lines/s per core (CPU time of this process, one thread)")


if __name__ == "__main__":
    main()
