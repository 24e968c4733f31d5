"""The planner accuracy bench: its pure helpers, and the published cases it is run on (bench/planner_cases.py)."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_planner_accuracy as bench
from planner_cases import CASES as FIRST_CASES
from planner_cases import MOVED, SPLIT_DATE, Case
from planner_cases_sealed import MOVED as SEALED_MOVED
from planner_cases_sealed import SEALED, SEALED_DATE

CASES = FIRST_CASES + SEALED

pytestmark = pytest.mark.unit

GiB = 1 << 30


def case(**kw: object) -> Case:
    base = Case("c", "https://example.invalid/c", {}, 23.58, 0.9, 30000, max_model_len=20000, engine="v0")
    return replace(base, **kw)  # type: ignore[arg-type]


# --- helpers -------------------------------------------------------------------------------------------------


def test_relative_error_is_signed_and_refuses_an_empty_report() -> None:
    assert bench.relative_error(110, 100) == pytest.approx(0.10)
    assert bench.relative_error(95, 100) == pytest.approx(-0.05)
    with pytest.raises(ValueError, match="positive"):
        bench.relative_error(10, 0)


def test_share_within_counts_both_signs_and_the_edge() -> None:
    assert bench.share_within([0.10, -0.10, 0.1001, -0.2, 0.0], 0.10) == (3, 5)
    assert bench.share_within([], 0.05) == (0, 0)


def test_identity_is_one_log_on_both_sides() -> None:
    a = case(name="a", log="thread#1 start A")
    b = case(name="b", log="thread#1 start B")
    assert bench.identity(a, a)
    assert not bench.identity(a, b)
    assert bench.identity(a, replace(b, log="thread#1 start A"))
    assert not bench.identity(replace(a, log=""), replace(b, log=""))


def test_source_folds_keep_a_sources_cases_together_in_order() -> None:
    cs = [case(name="1", source="s1"), case(name="2", source="s2"), case(name="3", source="s1")]
    folds = bench.source_folds(cs)
    assert list(folds) == ["s1", "s2"]
    assert [c.name for c in folds["s1"]] == ["1", "3"]


def test_fitted_fields_reads_fit_words_and_case_citations() -> None:
    source = """
class P:
    engine: str = "v1"  # not fitted
    # the fit to the published start-up logs
    act: float = 2.0
    # vllm/distributed/custom_all_reduce.py: from the code
    buffer: int = 8
    # worked out from the two figures of vllm-project/vllm#2031
    context: int = 3
    # another PR, vllm-project/vllm#9999, no case of ours
    other: int = 4
    scale: float = 1.0  # fits bench/RESULTS-planner.md
"""
    assert bench.fitted_fields(source, {"2031"}) == ["act", "context", "scale"]
    assert bench.fitted_fields(source) == ["act", "scale"]


def test_fitted_fields_finds_the_planners_own_fitted_constants() -> None:
    names, stuck = bench.refit_fields()
    for name in ("act_hidden_copies", "act_intermediate_copies", "non_torch_bytes"):
        assert name in names
    assert stuck == [], f"fitted constants the bench cannot refit: {stuck}"


def test_default_grid_spans_a_numeric_default_and_skips_the_rest() -> None:
    assert bench.default_grid(2.0) == [0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0]
    assert bench.default_grid(400) == [0, 200, 300, 400, 500, 600, 800]
    assert bench.default_grid(True) is None
    assert bench.default_grid("v1") is None


def test_capacity_at_v1_does_not_depend_on_the_length() -> None:
    c = case(engine="v1", max_model_len=40960, reported_tokens=72064)
    assert bench.capacity_at(c, 8192, [c]) == 72064


def test_capacity_at_v0_is_a_lower_bound_below_the_start_and_unknown_above() -> None:
    c = case(max_model_len=20000, reported_tokens=31232)
    assert bench.capacity_at(c, 20000, [c]) == 31232
    assert bench.capacity_at(c, 16384, [c]) == 31232
    assert bench.capacity_at(c, 24576, [c]) is None


def test_capacity_at_v0_follows_the_line_through_two_starts() -> None:
    a = case(name="20k", max_model_len=20000, reported_tokens=31232)
    b = case(name="29k", max_model_len=29000, reported_tokens=23648)
    got = bench.capacity_at(b, 24576, [a, b])
    assert got is not None
    assert 23648 < got < 31232
    assert got == int(23648 + (31232 - 23648) / (20000 - 29000) * (24576 - 29000))


def test_capacity_at_v0_above_32k_tells_nothing_of_a_whole_length_profile() -> None:
    c = case(max_model_len=131072, reported_tokens=37696)
    assert bench.capacity_at(c, 65536, [c]) == 37696  # one chunk profiled either way
    assert bench.capacity_at(c, 18432, [c]) is None  # the whole 18K length profiled


def test_accepted_needs_whole_blocks_and_says_when_it_cannot_tell() -> None:
    assert bench.accepted(16384, 16384, 16)
    assert not bench.accepted(16384, 16385, 16)
    assert bench.accepted(16000, 15873, 128)  # 125 blocks of 128 hold it
    assert not bench.accepted(15872, 15873, 128)  # 124 blocks do not
    assert bench.accepted(None, 4096, 16) is None
    assert bench.accepted(100, 0, 16)  # nothing recommended: nothing above the limit


def test_same_model_ignores_the_dtype_a_start_ran_with() -> None:
    a = case(model={"hidden_size": 8, "torch_dtype": "bfloat16"})
    b = case(model={"hidden_size": 8, "torch_dtype": "float16"})
    assert bench.same_model(a, b)
    assert not bench.same_model(a, case(model={"hidden_size": 16, "torch_dtype": "bfloat16"}))


def test_fit_moves_a_constant_towards_the_cases() -> None:
    tune = [c for c in CASES if c.part == "tune" and c.known and not c.outside]
    start = replace(bench.PlannerParams(), non_torch_bytes=1 << 30)
    fitted = bench.fit(tune, start, ["non_torch_bytes"], sweeps=2)
    assert bench.loss(fitted, tune) < bench.loss(start, tune)
    assert fitted.non_torch_bytes < 1 << 30


# --- the case data -------------------------------------------------------------------------------------------


def test_the_split_is_dated_and_nothing_was_moved_silently() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", SPLIT_DATE) and re.fullmatch(r"\d{4}-\d\d-\d\d", SEALED_DATE)
    assert all(reason.strip() for reason in {**MOVED, **SEALED_MOVED}.values())
    assert {c.part for c in FIRST_CASES} == {"tune", "held-out"}
    assert all(c.part == "sealed" for c in SEALED)


def test_every_case_names_its_source_quote_and_settings() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    for c in CASES:
        assert c.url and c.source and c.log and c.quote, c.name
        assert c.gpu and c.flags and c.model_source, c.name
        assert c.engine in ("v0", "v1"), c.name


def test_the_parts_share_no_source() -> None:
    tune = {c.source for c in CASES if c.part == "tune"}
    held = {c.source for c in CASES if c.part == "held-out"}
    sealed = {c.source for c in CASES if c.part == "sealed"}
    assert not tune & held and not tune & sealed and not held & sealed


def test_at_least_25_cases_and_10_held_out_with_gpu_and_util_known() -> None:
    assert len(CASES) >= 25
    assert sum(c.part == "held-out" and c.known and not c.apart for c in CASES) >= 10


def test_a_qwen25_vl_7b_case_is_reported_apart() -> None:
    vl = [c for c in CASES if c.model.get("architectures") == ["Qwen2_5_VLForConditionalGeneration"]]
    assert vl and all(c.apart for c in vl)


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name[:60])
def test_the_reported_figure_is_the_quoted_one(c: Case) -> None:
    """The number the bench scores against is the one vLLM printed in the quote (or follows from it)."""
    text = " ".join(c.quote)
    if c.reported == "tokens":
        assert f"{c.reported_tokens:,}" in text or f"({c.reported_tokens})" in text
    elif c.reported == "blocks":
        assert c.reported_tokens % c.block_size == 0
        assert re.search(rf"blocks: \**{c.reported_tokens // c.block_size}\b", text), text
    elif c.reported == "max-seq-len":
        assert f"stored in KV cache ({c.reported_tokens})" in text
    else:  # GiB printed: the tokens are the whole blocks that many GiB hold
        per = bench.kv_bytes_per_token(bench.info_of(c), c.kv_cache_dtype, tp=c.tp)
        gib = [float(x) for x in re.findall(r"(\d+\.\d\d) ?GiB", text) + re.findall(r"\| (\d+\.\d\d) \| \d \|", text)]
        assert any(int(g * GiB) // (per * c.block_size) * c.block_size == c.reported_tokens for g in gib), gib
