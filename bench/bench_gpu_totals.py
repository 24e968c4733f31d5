"""A card named by its size against the total vLLM printed for it.

`plan --gpu 24GB` (a card as it is sold) plans on what CUDA will report of the card: its GB as GiB, less what the
driver keeps (planner.driver_reserve), less ECC's 1/16 on the data-centre GDDR cards when --gpu-name names one
(planner.gpu_card). Every published start in the planner's cases that names its card and prints the total vLLM
saw (total_gpu_memory, or a total capacity) is checked here: the card's size as sold and its name go in, and the
estimate is compared with the printed total. A positive error is the unsafe side (more memory planned than CUDA
has).

    PYTHONPATH=src python bench/bench_gpu_totals.py

The cards are read from each case's own description of its GPU (``Case.gpu``, else its title); a case whose card
is not named, or whose size as sold is not known (a vGPU profile, a memory-modded card), is listed as skipped.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from planner_cases import CASES as FIRST_CASES
from planner_cases_sealed import SEALED

from vllm_guard.core.planner import GiB, gpu_card

# (pattern on the case's GPU text, the card's size as sold in GB, the name nvidia-smi gives it), first match wins.
CARDS: tuple[tuple[str, int, str], ...] = (
    (r"A40-48Q", 0, ""),  # a vGPU profile: its size is the profile's, not a card's
    (r"2080 Ti.*22", 0, ""),  # a card with its memory replaced (sold as 11 GB)
    (r"RTX 4070 Laptop", 8, "NVIDIA GeForce RTX 4070 Laptop GPU"),
    (r"RTX 3060", 12, "NVIDIA GeForce RTX 3060"),
    (r"RTX 2060", 12, "NVIDIA GeForce RTX 2060"),
    (r"\bT4\b", 16, "Tesla T4"),
    (r"RTX 5060 Ti", 16, "NVIDIA GeForce RTX 5060 Ti"),
    (r"RTX A4000", 16, "NVIDIA RTX A4000"),
    (r"\bL4\b", 24, "NVIDIA L4"),
    (r"\bA10\b", 24, "NVIDIA A10"),
    (r"RTX A5000", 24, "NVIDIA RTX A5000"),
    (r"RTX 3090", 24, "NVIDIA GeForce RTX 3090"),
    (r"RTX 4090", 24, "NVIDIA GeForce RTX 4090"),
    (r"RTX 5090", 32, "NVIDIA GeForce RTX 5090"),
    (r"V100 32GB|V100\b", 32, "Tesla V100-SXM2-32GB"),
    (r"A100[- ](?:SXM4-)?40GB|A100 40GB", 40, "NVIDIA A100-SXM4-40GB"),
    (r"L40S", 48, "NVIDIA L40S"),
    (r"RTX A6000", 48, "NVIDIA RTX A6000"),
    (r"A100[- ](?:SXM4-|PCIe-)?80GB|A100 80GB", 80, "NVIDIA A100 80GB PCIe"),
    (r"H100", 80, "NVIDIA H100 80GB HBM3"),
    (r"RTX PRO 6000", 96, "NVIDIA RTX PRO 6000 Blackwell"),
    (r"H200", 141, "NVIDIA H200"),
)


def card_of(text: str) -> tuple[int, str] | None:
    for pattern, size, name in CARDS:
        if re.search(pattern, text):
            return (size, name) if size else None
    return None


def main() -> int:
    rows: dict[tuple[str, float], int] = {}
    skipped: dict[str, int] = {}
    for case in FIRST_CASES + SEALED:
        if not case.gpu_gib:
            continue
        text = case.gpu or case.name
        card = card_of(text)
        if card is None:
            skipped[text[:60]] = skipped.get(text[:60], 0) + 1
            continue
        key = (card[1], round(case.gpu_gib, 2))
        rows[key] = rows.get(key, 0) + 1
    print("| card (as named to --gpu-name) | --gpu | CUDA total printed | estimate | error | cases |")
    print("|---|---|---:|---:|---:|---:|")
    size_of = {name: size for _, size, name in CARDS if size}
    errors = []
    for (name, printed), count in sorted(rows.items(), key=lambda r: (size_of[r[0][0]], r[0])):
        c = gpu_card(f"{size_of[name]}GB", name)
        estimate = (c.total - c.reserved) / GiB
        errors.append(estimate - printed)
        print(
            f"| {name} | {size_of[name]}GB | {printed:.2f} GiB | {estimate:.2f} GiB | {estimate - printed:+.2f} GiB "
            f"| {count} |"
        )
    print()
    print(
        f"{len(errors)} card/total pairs ({sum(rows.values())} cases): error from {min(errors):+.2f} to "
        f"{max(errors):+.2f} GiB; above the printed total in {sum(e > 0 for e in errors)}"
    )
    print("skipped (card not named, or not sold at that size): " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
