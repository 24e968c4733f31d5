"""Planner accuracy: predicted KV cache capacity against what real vLLM reported.

Each case (bench/planner_cases.py) is a published start-up of vLLM: vLLM's own KV figure ("GPU KV cache size: N
tokens", "# GPU blocks: N", "the rest of the memory reserved for KV Cache is X GiB", ...) quoted with its source,
the GPU, util, flags, model and vLLM version the source states. The planner sees only what a person has before the
first start: the model's config.json, the GPU size, util, TP, max_model_len, the flags and the vLLM release. It
never sees vLLM's own weight or activation figures.

The cases fall in two parts, split by source on planner_cases.SPLIT_DATE before the planner was run on the new
ones: ``tune`` (the constants of PlannerParams were fitted on them) and ``held-out`` (used to set nothing). Each part
is reported apart. The tuning part has a leave-one-source-out column: every constant fitted to published cases is
refitted without the cases of the left-out source, which are then predicted. Calibration pairs (the planner
calibrated on one start predicts another start of the same model) leave out identity pairs: two cases of one log.

    python bench/bench_planner_accuracy.py          # all tables; exits 1 if a planned max_model_len is above
                                                    # vLLM's limit, or a measured error leaves its band
    python bench/bench_planner_accuracy.py --fit    # also the constants refitted on the whole tuning part, and
                                                    # the held-out part predicted with them
    python bench/bench_planner_accuracy.py --part held-out   # one part's table only

Run from the repository root with PYTHONPATH=src.
"""

from __future__ import annotations

import argparse
import inspect
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from planner_cases import BLOCK, LEFT_OUT, MOVED, SPLIT_DATE, Case
from planner_cases import CASES as FIRST_CASES
from planner_cases_sealed import CORRECTED as SEALED_CORRECTED
from planner_cases_sealed import (
    FIFTH,
    FIFTH_GATHERED,
    FOURTH,
    FOURTH_GATHERED,
    RULES_AFTER,
    SEALED,
    SEALED_DATE,
    SECOND,
    THIRD,
    THIRD_GATHERED,
)
from planner_cases_sealed import LEFT_OUT as SEALED_LEFT_OUT
from planner_cases_sealed import MOVED as SEALED_MOVED

from vllm_guard.core.calibrate import LogReading
from vllm_guard.core.modelinfo import ModelInfo, model_info_from_config
from vllm_guard.core.planner import (
    CALIBRATED_MARGIN,
    KV_MARGIN,
    MULTIMODAL_MARGIN,
    GiB,
    PlannerParams,
    Reported,
    budget,
    calibrate,
    first_fit,
    kv_band,
    kv_bytes_per_token,
    kv_tokens_at,
)

CASES = FIRST_CASES + SEALED
PARAM_FIELDS = {f.name for f in fields(PlannerParams)}
V0_CHUNKED_ABOVE = 32768  # V0 switched chunked prefill on above this max_model_len (0.5.3+)

# --- pure helpers --------------------------------------------------------------------------------------------


def relative_error(predicted: int, reported: int) -> float:
    """(predicted - reported) / reported: positive when the planner promises more KV cache than vLLM had."""
    if reported <= 0:
        raise ValueError(f"a reported KV capacity must be positive, got {reported}")
    return (predicted - reported) / reported


def share_within(errors: Sequence[float], limit: float) -> tuple[int, int]:
    """How many of ``errors`` are within +-``limit``, and of how many."""
    return sum(abs(e) <= limit + 1e-12 for e in errors), len(errors)


def identity(a: Case, b: Case) -> bool:
    """Two cases of one vLLM start: a figure recomputed from itself measures nothing."""
    return a is b or (bool(a.log) and a.log == b.log)


def source_folds(cases: Iterable[Case]) -> dict[str, list[Case]]:
    """The cases grouped by source (thread or document), in first-seen order: one leave-out fold per source."""
    folds: dict[str, list[Case]] = {}
    for c in cases:
        folds.setdefault(c.source or c.name, []).append(c)
    return folds


_FIT_WORDS = re.compile(
    r"(?<!not )(?<!no )\bfit(?:s|ted|ting)?\b|RESULTS-planner|bench_planner_accuracy", re.IGNORECASE
)
_REFS = re.compile(r"(?:#|/issues/|/pull/)(\d{3,6})\b")


def fitted_fields(class_source: str, case_refs: Iterable[str] = ()) -> list[str]:
    """The fields of a dataclass whose comments say they were fitted to published cases.

    A field counts when the comment lines right above it (or on its own line) say fit/fits/fitted, name the
    accuracy bench or its results, or cite an issue or pull request number that is the source of a case
    (``case_refs``): a value worked out from a case's own numbers is fitted to that case."""
    refs = set(case_refs)
    found: list[str] = []
    comment: list[str] = []
    for raw in class_source.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            comment.append(line)
            continue
        m = re.match(r"^([a-z_][a-z0-9_]*)\s*:", line)
        if m:
            text = " ".join(comment) + " " + (line.split("#", 1)[1] if "#" in line else "")
            cited = set(_REFS.findall(text))
            if _FIT_WORDS.search(text) or (cited & refs):
                found.append(m.group(1))
        comment = []
    return found


def case_refs(cases: Iterable[Case]) -> set[str]:
    """The issue / pull request numbers that are the sources of cases."""
    out: set[str] = set()
    for c in cases:
        out.update(_REFS.findall(c.url))
        out.update(_REFS.findall(c.source))
    return out


def capacity_at(case: Case, length: int, cases: Sequence[Case]) -> int | None:
    """vLLM's KV capacity for this case's start had it run at ``length`` instead of its own max_model_len; None
    when the published numbers cannot tell.

    V1 and the CPU backend: the same (the profile run does not depend on max_model_len). V0 at 32K and below
    profiles max_model_len tokens, so its KV cache falls linearly with the length: between two reported starts of
    the same model, GPU and util it is their line; a shorter start than the only one reported holds at least as
    much (returned: the reported figure, a lower bound). A V0 start above 32K (one chunk profiled) says nothing
    of a length at or below 32K, which profiles the whole length."""
    own = case.max_model_len
    if case.engine != "v0" or own is None or length == own:
        return case.reported_tokens
    if own > V0_CHUNKED_ABOVE:
        return case.reported_tokens if length > V0_CHUNKED_ABOVE else None
    if length > V0_CHUNKED_ABOVE:
        return None
    siblings = [
        c
        for c in cases
        if c is not case
        and c.model == case.model
        and (c.gpu_gib, c.util, c.tp, c.engine) == (case.gpu_gib, case.util, case.tp, case.engine)
        and c.max_model_len is not None
        and c.max_model_len != own
        and c.max_model_len <= V0_CHUNKED_ABOVE
    ]
    if siblings:
        other = siblings[0]
        assert other.max_model_len is not None
        slope = (other.reported_tokens - case.reported_tokens) / (other.max_model_len - own)
        return int(case.reported_tokens + slope * (length - own))
    return case.reported_tokens if length < own else None


def accepted(capacity: int | None, length: int, block_size: int) -> bool | None:
    """Whether vLLM starts at ``length``: its KV cache must hold one request of that length in whole blocks.
    None: vLLM's capacity at that length is not known."""
    if capacity is None:
        return None
    if length <= 0:
        return True  # nothing recommended: nothing above the limit
    return math.ceil(length / block_size) * block_size <= capacity


# --- the planner on a case -----------------------------------------------------------------------------------

_INFO: dict[str, ModelInfo] = {}


def info_of(case: Case) -> ModelInfo:
    if case.name not in _INFO:
        _INFO[case.name] = model_info_from_config(case.model)
    return _INFO[case.name]


def case_params(case: Case, params: PlannerParams) -> PlannerParams:
    """The planner's parameters at the case's own flags and release (only the fields this planner has)."""
    wanted: dict[str, Any] = {
        "engine": case.engine,
        "block_size": case.block_size,
        "max_num_batched_tokens": case.batched_tokens,
        "max_num_seqs": case.max_num_seqs,
        "estimate_cudagraphs": case.estimate_cudagraphs,
        "enforce_eager": case.enforce_eager,
        "vllm_version": case.vllm,
        # the card as the source names it: vLLM's batch defaults look for "a100", "h100", "h200" in the name
        "gpu_name": case.gpu or None,
        "usage_context": usage_of(case),
        **case.params,
    }
    return replace(params, **{k: v for k, v in wanted.items() if k in PARAM_FIELDS})


def seen_after(cases: Sequence[Case]) -> str:
    """Why a sealed batch's figure is no longer blind: facts added to its cases (CORRECTED), or planner rules added
    after their errors or logs were seen (RULES_AFTER); "" when neither."""
    names = {c.name for c in cases}
    why = [f"facts added to {src}'s cases" for src in SEALED_CORRECTED if any(c.source == src for c in cases)]
    why += [f"rule added after: {rule}" for rule, seen in RULES_AFTER.items() if names & set(seen)]
    if not why:
        return " (blind: its cases were committed before the planner ran on them, and nothing was changed after)"
    return (
        " (NOT blind: " + "; ".join(why) + ", each after the case's error or log was seen; the blind runs' figures "
        "are in bench/RESULTS-planner.md)"
    )


def usage_of(case: Case) -> str:
    """The Python LLM class ("llm") for a start whose flags quote the call, else the OpenAI server ("server")."""
    return "llm" if re.match(r"\s*(vllm\.)?LLM\(", case.flags) else "server"


def util_of(case: Case) -> float:
    util = case.util if case.util is not None else case.util_assumed
    if util is None:
        raise ValueError(f"{case.name}: no util stated and none assumed")
    return util


def predict_tokens(case: Case, params: PlannerParams) -> int:
    info = info_of(case)
    if case.kv_gib is not None:
        per = kv_bytes_per_token(info, case.kv_cache_dtype, tp=case.tp)
        return int(case.kv_gib * GiB) // (per * BLOCK) * BLOCK
    assert case.gpu_gib is not None
    return budget(
        info,
        int(case.gpu_gib * GiB),
        util_of(case),
        tp=case.tp,
        max_model_len=case.max_model_len,
        kv_cache_dtype=case.kv_cache_dtype,
        params=case_params(case, params),
    ).kv_tokens


def planned_length(case: Case, params: PlannerParams, margin: float | None = None) -> int:
    """The max_model_len the planner recommends for this start (first fit at the case's util and length), under the
    band ``plan`` keeps for the model (planner.kv_band) unless one is given."""
    info = info_of(case)
    if margin is None:
        margin = kv_band(info, case_params(case, params))
    if case.kv_gib is not None:
        return min(info.max_context, int(predict_tokens(case, params) / (1 + margin)))
    assert case.gpu_gib is not None
    plan = first_fit(
        info,
        [int(case.gpu_gib * GiB)] * case.tp,
        case.tp,
        max_model_len=case.max_model_len,
        kv_cache_dtype=case.kv_cache_dtype,
        util=util_of(case),
        params=case_params(case, params),
        margin=margin,
    )
    return plan.max_model_len if plan.fits else 0


@dataclass(frozen=True)
class Row:
    case: Case
    predicted: int | None
    error: float | None
    planned: int | None
    verdict: bool | None  # planned length accepted by vLLM's capacity; None: not known
    failure: str = ""  # the planner raised on this case


def evaluate(case: Case, params: PlannerParams, margin: float | None = None) -> Row:
    try:
        tokens = predict_tokens(case, params)
        planned = planned_length(case, params, margin)
    except Exception as exc:  # the planner is measured, not trusted: one case's failure is reported, not fatal
        return Row(case, None, None, None, False, f"{type(exc).__name__}: {exc}")
    verdict = accepted(capacity_at(case, planned, CASES), planned, case.block_size)
    return Row(case, tokens, relative_error(tokens, case.reported_tokens), planned, verdict)


# --- fitting the constants -----------------------------------------------------------------------------------

# The grid of each constant known to be fitted; a constant found fitted in planner.py without one here gets a
# grid around its default (``default_grid``).
FIT_GRID: dict[str, list[Any]] = {
    "act_hidden_copies": [1.0, 2.0, 3.0, 4.0, 6.0, 8.0],
    "act_intermediate_copies": [1.0, 1.5, 2.0, 2.5, 3.0, 4.0],
    "non_torch_bytes": [int(x * GiB) for x in (0.05, 0.15, 0.25, 0.35, 0.5, 0.7)],
    "non_torch_bytes_tp": [int(x * GiB) for x in (0.3, 0.6, 0.9, 1.2, 1.5, 2.0)],
}
# Constants the accuracy bench fitted before planner.py's comments said so (the activation copies were chosen by the
# first version's grid search): always refitted.
ALWAYS_FITTED = ("act_hidden_copies", "act_intermediate_copies")
ERROR_CAP = 0.20  # a case's error counts at most this much in the fit, so cases outside the model do not drag it


def default_grid(value: Any) -> list[Any] | None:
    """Multiples of a numeric default (0 to 2x); None for anything else (bools, strings, tuples)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    scale = [0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]
    if isinstance(value, int):
        return sorted({int(value * s) for s in scale})
    return sorted({value * s for s in scale})


def refit_fields(extra: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """The constants to refit: those planner.py's comments say were fitted (``fitted_fields``), the ones this bench
    always refits, and ``extra``; and the fitted ones that cannot be refitted (no numeric grid)."""
    names = list(dict.fromkeys([*ALWAYS_FITTED, *fitted_fields(inspect.getsource(PlannerParams), case_refs(CASES))]))
    names += [n for n in extra if n not in names]
    names = [n for n in names if n in PARAM_FIELDS]
    base = PlannerParams()
    refit, stuck = [], []
    for n in names:
        (refit if n in FIT_GRID or default_grid(getattr(base, n)) is not None else stuck).append(n)
    return refit, stuck


def loss(params: PlannerParams, cases: Sequence[Case]) -> float:
    total = 0.0
    for c in cases:
        try:
            total += min(abs(relative_error(predict_tokens(c, params), c.reported_tokens)), ERROR_CAP)
        except Exception:
            total += ERROR_CAP
    return total / max(1, len(cases))


def fit(cases: Sequence[Case], base: PlannerParams, names: Sequence[str], sweeps: int = 4) -> PlannerParams:
    """Coordinate descent over each constant's grid, from the shipped defaults, minimising the mean absolute
    relative error (each case's capped at ERROR_CAP). Deterministic: ties keep the current value."""
    best = base
    best_loss = loss(best, cases)
    for _ in range(sweeps):
        moved = False
        for name in names:
            grid = FIT_GRID.get(name) or default_grid(getattr(base, name)) or []
            for value in grid:
                if value == getattr(best, name):
                    continue
                trial = replace(best, **{name: value})
                trial_loss = loss(trial, cases)
                if trial_loss < best_loss - 1e-12:
                    best, best_loss, moved = trial, trial_loss, True
        if not moved:
            break
    return best


def band_of(rows: Iterable[Row]) -> float:
    """The largest over-prediction (planner above vLLM) among rows within the planner's model, at least 0."""
    return max([0.0, *(r.error for r in rows if r.error is not None and not r.case.outside)])


@dataclass(frozen=True)
class Fold:
    source: str
    params: PlannerParams
    margin: float
    rows: list[Row]


def leave_one_source_out(cases: Sequence[Case], names: Sequence[str]) -> list[Fold]:
    """Each source's cases predicted by constants refitted on the other sources' cases, with the error band the
    other sources give (the band a recommended length is planned under)."""
    out = []
    for source, held in source_folds(cases).items():
        train = [c for c in cases if c.source != source]
        p = fit(train, PlannerParams(), names)
        margin = max(KV_MARGIN, math.ceil(band_of(evaluate(c, p) for c in train) * 100) / 100)
        out.append(Fold(source, p, margin, [evaluate(c, p, margin) for c in held]))
    return out


# --- calibration pairs ---------------------------------------------------------------------------------------


def same_model(a: Case, b: Case) -> bool:
    drop = ("torch_dtype",)
    return {k: v for k, v in a.model.items() if k not in drop} == {k: v for k, v in b.model.items() if k not in drop}


def calibration_pairs(cases: Sequence[Case]) -> tuple[list[tuple[Case, Case]], list[tuple[Case, Case]]]:
    """Ordered pairs of known GPU starts of the same model (first calibrates, second is predicted); and the
    identity pairs left out."""
    usable = [c for c in cases if c.known and not c.apart]
    pairs, idents = [], []
    for a in usable:
        for b in usable:
            if a is b or not same_model(a, b) or a.kv_cache_dtype != b.kv_cache_dtype:
                continue
            (idents if identity(a, b) else pairs).append((a, b))
    return pairs, idents


def same_setup(a: Case, b: Case) -> bool:
    """Whether ``plan --calibrate-from`` a log of start ``a`` calibrates a plan for ``b``: the log states what the
    case does (its card, TP, release and eager mode), and the plan's own rule decides
    (LogReading.differences_from); a log of the other engine is not taken either."""
    assert a.gpu_gib is not None and b.gpu_gib is not None
    log = LogReading(total_bytes=int(a.gpu_gib * GiB), tp=a.tp, vllm_version=a.vllm, enforce_eager=a.enforce_eager)
    return a.engine == b.engine and not log.differences_from(int(b.gpu_gib * GiB), b.tp, 1, b.vllm, b.enforce_eager)


def calibrated_prediction(first: Case, second: Case, params: PlannerParams) -> int:
    info = info_of(first)
    assert first.gpu_gib is not None and second.gpu_gib is not None
    reported = Reported(
        gpu_bytes=int(first.gpu_gib * GiB),
        util=util_of(first),
        tp=first.tp,
        max_model_len=first.max_model_len,
        kv_tokens=first.reported_tokens,
        engine=first.engine,  # type: ignore[arg-type]
        block_size=first.block_size,
        max_num_seqs=first.max_num_seqs,
        max_num_batched_tokens=first.batched_tokens,
    )
    p = calibrate(info, reported, case_params(first, params))
    return kv_tokens_at(
        info_of(second),
        int(second.gpu_gib * GiB),
        util_of(second),
        second.tp,
        max_model_len=second.max_model_len,
        kv_cache_dtype=second.kv_cache_dtype,
        params=case_params(second, p),
    )


# --- report --------------------------------------------------------------------------------------------------


def show_value(name: str, value: Any) -> str:
    """A constant as the report prints it: byte counts in GiB."""
    if "bytes" in name and isinstance(value, int) and not isinstance(value, bool):
        return f"{name}={value / GiB:.2f} GiB"
    return f"{name}={value}"


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1%}"


def yes(flag: bool | None) -> str:
    return "?" if flag is None else ("yes" if flag else "**no**")


def number(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def case_table(rows: Sequence[Row], index: dict[str, int], loo: dict[str, Row] | None = None) -> str:
    head = (
        "| # | case | source | vLLM reported KV tokens | predicted | error | ≤10% | ≤5% | planned max_model_len | "
        "accepted by vLLM |"
    )
    rule = "|---|---|---|---:|---:|---:|:-:|:-:|---:|:-:|"
    if loo is not None:
        head += " leave-one-source-out error | its planned length accepted |"
        rule += "---:|:-:|"
    lines = [head, rule]
    for r in rows:
        c = r.case
        name = c.name + (f" — {c.note}" if c.note else "") + (f" — *outside: {c.outside}*" if c.outside else "")
        if not c.known and c.kv_gib is None:
            name += " — *GPU or util not known: not counted*"
        if r.failure:
            name += f" — **planner error: {r.failure}**"
        ok10 = None if r.error is None else abs(r.error) <= 0.10
        ok5 = None if r.error is None else abs(r.error) <= 0.05
        row = (
            f"| {index[c.name]} | {name} | {c.url} | {c.reported_tokens:,} | {number(r.predicted)} | {pct(r.error)} | "
            f"{yes(ok10)} | {yes(ok5)} | {number(r.planned)} | {yes(r.verdict)} |"
        )
        if loo is not None:
            lr = loo.get(c.name)
            row += f" {pct(lr.error) if lr else '—'} | {yes(lr.verdict) if lr else '—'} |"
        lines.append(row)
    return "\n".join(lines)


@dataclass(frozen=True)
class Summary:
    label: str
    within10: tuple[int, int]
    within5: tuple[int, int]
    above: int
    unknown: int
    failures: int

    def line(self) -> str:
        (a, n), (b, _) = self.within10, self.within5
        share = lambda k: f"{k / n:.0%}" if n else "—"  # noqa: E731
        return (
            f"{self.label}: within 10% {a}/{n} ({share(a)}), within 5% {b}/{n} ({share(b)}); planned max_model_len "
            f"above vLLM's limit: {self.above}; not verifiable: {self.unknown}; planner errors: {self.failures}"
        )


def summarize(label: str, rows: Sequence[Row], keep: Callable[[Case], bool] = lambda c: True) -> Summary:
    counted = [r for r in rows if r.case.known and keep(r.case)]
    errors = [r.error if r.error is not None else math.inf for r in counted]
    return Summary(
        label,
        share_within(errors, 0.10),
        share_within(errors, 0.05),
        sum(r.verdict is False and not r.failure for r in counted),
        sum(r.verdict is None for r in counted),
        sum(bool(r.failure) for r in counted),
    )


BAR_10, BAR_5, BAR_CASES = 0.90, 0.70, 10  # the acceptance bar for a part used to set no constant


def bar_met(s: Summary) -> bool:
    (a, n), (b, _) = s.within10, s.within5
    return n >= BAR_CASES and a >= BAR_10 * n and b >= BAR_5 * n and s.above == 0 and s.failures == 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fit", action="store_true", help="also refit the constants on the whole tuning part")
    ap.add_argument("--part", choices=("tune", "held-out", "sealed", "all"), default="all", help="which part's tables")
    args = ap.parse_args(argv)

    params = PlannerParams()
    index = {c.name: i for i, c in enumerate(CASES, 1)}
    tune = [c for c in CASES if c.part == "tune" and not c.apart]
    held = [c for c in CASES if c.part == "held-out" and not c.apart]
    sealed = [c for c in CASES if c.part == "sealed" and not c.apart]
    apart = [c for c in CASES if c.apart]
    names, stuck = refit_fields()
    print(
        f"split of {SPLIT_DATE}: {len(tune)} tuning cases, {len(held)} held-out; sealed on {SEALED_DATE} and {THIRD_GATHERED}: "
        f"{len(sealed)}; {len(apart)} apart (multimodal)"
    )
    moved = {**MOVED, **SEALED_MOVED}
    print("cases moved between parts after their error was seen: " + (", ".join(moved) if moved else "none"))
    print(f"constants refitted in each fold: {', '.join(names)}")
    if stuck:
        print(f"WARNING: fitted constants with no grid, not refitted (the leave-out column is not held-out): {stuck}")
    print("shipped values: " + ", ".join(show_value(n, getattr(params, n)) for n in names))
    print()

    rows = {c.name: evaluate(c, params) for c in CASES}
    gpu_tune = [c for c in tune if c.kv_gib is None]
    folds = leave_one_source_out([c for c in gpu_tune if c.known], names)
    loo = {r.case.name: r for f in folds for r in f.rows}
    status = 0

    if args.part in ("tune", "all"):
        print("## Tuning part (the constants were fitted on these cases)\n")
        print(case_table([rows[c.name] for c in tune], index, loo))
        print()
        for s in (
            summarize("tune, shipped constants, GPU and util known", [rows[c.name] for c in tune]),
            summarize(
                "tune, shipped constants, within the planner's model",
                [rows[c.name] for c in tune],
                lambda c: not c.outside,
            ),
            summarize("tune, leave-one-source-out (refitted without the case's source)", list(loo.values())),
            summarize(
                "tune, leave-one-source-out, within the planner's model", list(loo.values()), lambda c: not c.outside
            ),
        ):
            print(s.line())
        print()
    if args.part in ("held-out", "sealed", "all"):
        print(f"## Held-out part (added {SPLIT_DATE}; used to set no constant)\n")
        print(case_table([rows[c.name] for c in held], index))
        print()
        for s in (
            summarize("held-out, shipped constants, GPU and util known", [rows[c.name] for c in held]),
            summarize(
                "held-out, shipped constants, within the planner's model",
                [rows[c.name] for c in held],
                lambda c: not c.outside,
            ),
        ):
            print(s.line())
        print()
        print(
            f"## Sealed part (gathered {SEALED_DATE} after the held-out part was seen, the third batch on "
            f"{THIRD_GATHERED}, the fourth on {FOURTH_GATHERED}, the fifth on {FIFTH_GATHERED}; used to set no constant)\n"
        )
        print(case_table([rows[c.name] for c in sealed], index))
        print()
        for batch, names, after in (
            ("second", SECOND, "the first batch's run"),
            ("third", THIRD, "the second batch's fixes"),
            ("fourth", FOURTH, "the third batch's run and the changes that followed it"),
            ("fifth", FIFTH, "the fourth batch's run and the changes that followed it"),
        ):
            cases = [c for c in sealed if c.name in names]
            summary = summarize(
                f"sealed, {batch} batch (committed after {after}), GPU and util known", [rows[c.name] for c in cases]
            )
            print(summary.line())
            verdict = "met" if bar_met(summary) else "NOT MET"
            print(f"the bar on the {batch} batch alone: {verdict}" + seen_after(cases))
        sealed_summary = summarize("sealed, shipped constants, GPU and util known", [rows[c.name] for c in sealed])
        not_tuned = summarize(
            "held-out and sealed together, shipped constants, GPU and util known", [rows[c.name] for c in held + sealed]
        )
        for s in (sealed_summary, not_tuned):
            print(s.line())
        met = bar_met(sealed_summary)
        status |= 0 if met else 1
        print(
            f"the bar (within 10% in at least {BAR_10:.0%}, within 5% in at least {BAR_5:.0%}, no planned length above "
            f"vLLM's limit, at least {BAR_CASES} cases) on the sealed part: {'met' if met else 'NOT MET'}"
            + ("" if not SEALED_MOVED else " (NOT blind: cases were moved out after their error was seen)")
            + seen_after(sealed)
        )
        print()
        print("## Apart: multimodal models (the planner's multimodal term is measured here, not counted)\n")
        print(case_table([rows[c.name] for c in apart], index))
        print()
    if args.fit:
        full = fit([c for c in gpu_tune if c.known], params, names)
        print("refitted on the whole tuning part: " + ", ".join(show_value(n, getattr(full, n)) for n in names))
        print(summarize("held-out, constants refitted on the tuning part", [evaluate(c, full) for c in held]).line())
        print(summarize("sealed, constants refitted on the tuning part", [evaluate(c, full) for c in sealed]).line())
        print()

    # the safety rule: no recommended max_model_len above vLLM's limit, in any counted case
    counted = [rows[c.name] for c in CASES if c.known and not c.apart]
    above = [r for r in counted if r.verdict is False]
    broken = [r for r in counted if r.failure]
    if above or broken:
        status = 1
    print(
        f"planned max_model_len above vLLM's limit: {len(above)} of {len(counted)} counted cases"
        + (" (" + "; ".join(f"#{index[r.case.name]}" for r in above) + ")" if above else "")
        + (f"; planner errors: {len(broken)}" if broken else "")
    )
    band = band_of(rows[c.name] for c in gpu_tune if c.known)
    held_band = band_of(rows[c.name] for c in held if c.known)
    sealed_rows = [rows[c.name] for c in CASES if c.part == "sealed" and c.known and not c.apart]
    sealed_band = band_of(sealed_rows)
    beyond = [f"#{index[r.case.name]}" for r in sealed_rows if r.error is not None and r.error > KV_MARGIN]
    ok = band <= KV_MARGIN
    status |= 0 if ok else 1
    print(
        f"error band: at most {band:+.1%} above vLLM's on the tuning part's GPU cases within the model "
        f"(held-out: {held_band:+.1%}; sealed: {sealed_band:+.1%}); planner.KV_MARGIN = {KV_MARGIN:.0%}: "
        f"{'covered' if ok else 'NOT COVERED'} on the tuning part"
        f"{'' if held_band <= KV_MARGIN else ', NOT on the held-out part'}"
        f"{'' if not beyond else ', NOT on the sealed part (' + ', '.join(beyond) + ')'}"
    )
    apart_rows = [rows[c.name] for c in CASES if c.apart and c.known and not c.outside]
    apart_band = band_of(apart_rows)
    print(
        f"multimodal (apart): at most {apart_band:+.1%} above vLLM's; planner.MULTIMODAL_MARGIN = "
        f"{MULTIMODAL_MARGIN:.0%}: {'covered' if apart_band <= MULTIMODAL_MARGIN else 'NOT COVERED'}"
    )
    print()

    pairs, idents = calibration_pairs(CASES)
    print("`plan --calibrate-from` carries a log's corrections only to the setup it ran on (core/calibrate.py")
    print(
        "LogReading.differences_from: the card, TP, the release where both are known, enforce_eager); another setup is"
        " planned"
    )
    print("from config.json under planner.KV_MARGIN. A log from the planned card (its GPU total within")
    print("planner.SAME_CARD) narrows the band to planner.CALIBRATED_MARGIN.\n")
    print("| calibrated on | predicts | part of the predicted | setup | reported KV tokens | predicted | error |")
    print("|---|---|---|---|---:|---:|---:|")
    worst = {(part, same): 0.0 for part in ("tune", "held-out") for same in (True, False)}
    counts = {(part, same): 0 for part in ("tune", "held-out") for same in (True, False)}
    for a, b in pairs:
        same = same_setup(a, b)
        try:
            got = calibrated_prediction(a, b, params) if same else predict_tokens(b, params)
        except Exception as exc:
            print(f"| #{index[a.name]} | #{index[b.name]} | {b.part} | — | {b.reported_tokens:,} | error: {exc} | — |")
            continue
        err = relative_error(got, b.reported_tokens)
        part = "tune" if a.part == b.part == "tune" else "held-out"
        if not (a.outside or b.outside):
            worst[part, same] = max(worst[part, same], err)
            counts[part, same] += 1
        setup = "same: calibrated" if same else "other: not carried"
        print(
            f"| #{index[a.name]} | #{index[b.name]} | {part} | {setup} | {b.reported_tokens:,} | {got:,} | {err:+.1%} |"
        )
    print()
    print(f"identity pairs left out (one log on both sides): {len(idents)}")
    for same, limit, name in ((True, CALIBRATED_MARGIN, "CALIBRATED_MARGIN"), (False, KV_MARGIN, "KV_MARGIN")):
        ok_cal = worst["tune", same] <= limit
        status |= 0 if ok_cal else 1
        what = "same setup, calibrated" if same else "another setup, not carried"
        print(
            f"{what}: at most {worst['tune', same]:+.1%} above vLLM's on {counts['tune', same]} tuning pairs, "
            f"{worst['held-out', same]:+.1%} on {counts['held-out', same]} pairs with a not-tuned side; planner.{name} "
            f"= {limit:.0%}: {'covered' if ok_cal else 'NOT COVERED'} on the tuning pairs"
            + ("" if worst["held-out", same] <= limit else ", NOT on the others")
        )
    print()
    print(f"candidates left out before the planner ran on them: {len(LEFT_OUT) + len(SEALED_LEFT_OUT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
