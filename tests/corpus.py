"""The corpus of real vLLM logs (tests/data/logs/<kind>/*.log) and its split by source thread.

Every file is an excerpt of a public log whose first ``#`` lines name the source; the folder names the
kind it must get. ``tests/data/logs/split.toml`` says how the files split into a development part
(the rules may be tuned on it) and a sealed part (accuracy is reported on it, never tuned on).

    python -m tests.corpus            # prints the split and the accuracy per part and kind (markdown)
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from vllm_guard.core.failure import Failure
from vllm_guard.core.kinds import Confidence, FailureKind, Phase

CORPUS = Path(__file__).resolve().parent / "data" / "logs"
SPLIT_FILE = CORPUS / "split.toml"

DEV = "development"
SEALED = "sealed"


@dataclass(frozen=True)
class Case:
    kind: FailureKind
    path: Path
    thread: str  # the source thread (or, for a capture, the file itself)
    part: str  # DEV or SEALED
    baseline: bool  # in the corpus before the split

    @property
    def name(self) -> str:
        return f"{self.kind.value}/{self.path.name}"


def lines_of(path: Path) -> list[str]:
    """The log lines of a corpus file, without its ``#`` header (source and notes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return lines[start:]


def header_of(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        out.setdefault(key.strip(), value.strip())
    return out


_GITHUB_THREAD_RE = re.compile(r"^https://github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)")


def thread_of(source: str, relative: str) -> str:
    """The thread a source URL belongs to: an issue and its comments, a PR and its review are one."""
    m = _GITHUB_THREAD_RE.match(source)
    if m:
        return f"https://github.com/{m.group(1).lower()}/issues/{m.group(2)}"
    if source.startswith("https://"):
        return source.split("#", 1)[0].rstrip("/")
    return f"capture:{relative}"  # a capture of this project's own runs stands alone


def sealed_by_seed(thread: str, seed: str, one_in: int) -> bool:
    digest = hashlib.sha256(f"{seed}:{thread}".encode()).hexdigest()
    return int(digest, 16) % one_in == 0


def load() -> list[Case]:
    split = tomllib.loads(SPLIT_FILE.read_text(encoding="utf-8"))
    baseline = set(split["baseline"])
    moved = {thread_of(entry["thread"], entry["file"]) for entry in split.get("moved", [])}
    # a fresh file from a new thread takes a moved file's place in the sealed part
    replacements = {entry["replaced_by"] for entry in split.get("moved", []) if entry["replaced_by"]}
    cases: list[Case] = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        kind = FailureKind(folder.name)  # a folder that is not a kind is a mistake: fail loudly
        for path in sorted(folder.glob("*.log")):
            relative = f"{folder.name}/{path.name}"
            thread = thread_of(header_of(path).get("source", ""), relative)
            cases.append(Case(kind, path, thread, DEV, relative in baseline))
    # A thread quoted by a baseline file was tuned on: all its files are development files.
    tuned = {c.thread for c in cases if c.baseline}
    seed, one_in = str(split["seed"]), int(split["sealed_one_in"])
    return [
        Case(
            c.kind,
            c.path,
            c.thread,
            SEALED
            if c.thread not in moved
            and (c.name in replacements or (c.thread not in tuned and sealed_by_seed(c.thread, seed, one_in)))
            else DEV,
            c.baseline,
        )
        for c in cases
    ]


def accuracy_table(cases: list[Case], verdicts: dict[Path, FailureKind], title: str) -> list[str]:
    """A markdown table of right / total per kind for ``cases``."""
    right: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for case in cases:
        total[case.kind.value] += 1
        right[case.kind.value] += verdicts[case.path] is case.kind
    out = [f"{title}", "", "| kind | right | files | accuracy |", "|---|---:|---:|---:|"]
    for name in sorted(total):
        out.append(f"| {name} | {right[name]} | {total[name]} | {right[name] / total[name]:.1%} |")
    n_right, n_total = sum(right.values()), sum(total.values())
    if n_total:
        out.append(f"| **all** | **{n_right}** | **{n_total}** | **{n_right / n_total:.1%}** |")
    return out


def verdict_kind(case: Case, failure: Failure) -> FailureKind:
    """The kind a verdict counts as: a file marked ``phase-evidence: none`` is right with any OOM kind of
    unknown phase and low confidence (the text cannot say more), and counts as its own kind then."""
    if header_of(case.path).get("phase-evidence", "").startswith("none"):
        oom = failure.kind.value.startswith("cuda_oom")
        if oom and failure.phase is Phase.UNKNOWN and failure.confidence is Confidence.LOW:
            return case.kind
    return failure.kind


def main() -> None:
    from vllm_guard.core.classify import classify

    cases = load()
    verdicts = {c.path: verdict_kind(c, classify(lines_of(c.path))) for c in cases}
    threads = {c.thread for c in cases}
    sealed = [c for c in cases if c.part == SEALED]
    dev = [c for c in cases if c.part == DEV]
    print(
        f"corpus: {len(cases)} files from {len(threads)} threads; sealed {len(sealed)} files "
        f"({len({c.thread for c in sealed})} threads), development {len(dev)} "
        f"(of which {sum(c.baseline for c in dev)} from before the split)\n"
    )
    for title, part in (("Sealed part", sealed), ("Development part", dev)):
        print("\n".join(accuracy_table(part, verdicts, f"### {title}")))
        misses = [c for c in part if verdicts[c.path] is not c.kind]
        for c in misses:
            print(f"- miss: {c.name}: got {verdicts[c.path].value}")
        print()


if __name__ == "__main__":
    main()
