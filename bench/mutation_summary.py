"""The figures of a mutmut run, per file and overall (run by bench/mutation.sh in the folder mutmut ran in).

    python mutation_summary.py [--equivalent FILE] [--survivors OUT.diff] [--mutmut BIN] SOURCE.py...

Reads mutants/<SOURCE>.meta (mutmut's record of each mutant's exit code) and prints killed / survived /
timeout / no tests / total and the share killed. A mutant named in the equivalent file (one name a line,
then `#` and the reason) is counted as equivalent, not as a survivor, and left out of the share; a name there
that was killed or no longer exists is reported, since the list is then out of date.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code  # type: ignore[import-not-found]

COLUMNS = ("killed", "survived", "timeout", "no tests", "other", "equivalent", "total")


def read_equivalent(path: Path | None) -> dict[str, str]:
    if path is None or not path.exists():
        return {}
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, why = line.partition("#")
        if name.strip():
            out[name.strip()] = why.strip()
    return out


def count(source: str, equivalent: dict[str, str]) -> tuple[Counter[str], list[str], list[str], set[str]]:
    meta = Path("mutants") / (source + ".meta")
    if not meta.exists():
        sys.exit(f"{meta} is missing: did `mutmut run` finish here?")
    codes: dict[str, int | None] = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    c: Counter[str] = Counter()
    survivors, stale = [], []
    for name, code in sorted(codes.items()):
        status = status_by_exit_code[code]
        c["total"] += 1
        if name in equivalent:
            if status != "survived":
                stale.append(f"{name} is listed as equivalent but was {status}")
            else:
                c["equivalent"] += 1
                continue
        if status in ("killed", "survived", "timeout", "no tests"):
            c[status] += 1
        else:
            c["other"] += 1
        if status == "survived":
            survivors.append(name)
    return c, survivors, stale, set(codes)


def share(c: Counter[str]) -> str:
    judged = c["total"] - c["equivalent"]
    return f"{100 * c['killed'] / judged:.1f} %" if judged else "n/a"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--equivalent", type=Path)
    ap.add_argument("--survivors", type=Path)
    ap.add_argument("--mutmut", default="mutmut")
    args = ap.parse_args()
    equivalent = read_equivalent(args.equivalent)
    total: Counter[str] = Counter()
    all_survivors: list[str] = []
    stale_all: list[str] = []
    all_names: set[str] = set()
    rows = []
    for source in args.sources:
        c, survivors, stale, names = count(source, equivalent)
        all_names |= names
        total.update(c)
        all_survivors += survivors
        stale_all += stale
        rows.append((source, c))
    rows.append(("overall", total))
    print(f"{'file':45} " + " ".join(f"{h:>10}" for h in COLUMNS) + "     killed")
    for name, c in rows:
        print(f"{name:45} " + " ".join(f"{c[h]:>10}" for h in COLUMNS) + f" {share(c):>10}")
    for name in sorted(set(equivalent) - all_names):
        stale_all.append(f"{name} is listed as equivalent but no such mutant exists (the source changed?)")
    for line in stale_all:
        print("stale equivalent entry:", line)
    print(f"survivors ({len(all_survivors)}):")
    for name in all_survivors:
        print("   ", name)
    if args.survivors is not None:
        with args.survivors.open("w", encoding="utf-8") as out:
            for name in all_survivors:
                shown = subprocess.run([args.mutmut, "show", name], capture_output=True, text=True, check=False)
                out.write(shown.stdout + "\n")
        print(f"their diffs: {args.survivors}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
