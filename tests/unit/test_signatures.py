"""The signature tables (core/signatures.py): every entry names where its text comes from."""

from __future__ import annotations

import dataclasses

import pytest

from vllm_guard.core import signatures as sig
from vllm_guard.core.classify import classify
from vllm_guard.core.kinds import FailureKind

pytestmark = pytest.mark.unit


def test_every_entry_names_its_project_file_function_and_versions() -> None:
    assert sig.problems() == []


@pytest.mark.parametrize("field", ["project", "file", "function", "versions"])
def test_an_entry_without_its_source_is_caught(field: str) -> None:
    first = sig.SIGNATURES[0]
    bare = dataclasses.replace(first, source=dataclasses.replace(first.source, **{field: " "}))
    assert sig.problems((bare,), ()) == [f"{first.name}: no {field} in its source"]


def test_a_malformed_version_range_or_pattern_is_caught() -> None:
    first = sig.SIGNATURES[0]
    odd = dataclasses.replace(first, source=dataclasses.replace(first.source, versions="recent"), pattern="(")
    found = sig.problems((odd,), ())
    assert any("versions 'recent'" in p for p in found)
    assert any("does not compile" in p for p in found)


def test_the_tables_cover_every_kind_but_none() -> None:
    kinds = {s.kind for s in sig.SIGNATURES}
    assert kinds >= set(FailureKind) - {FailureKind.NONE}


def test_a_wording_is_a_data_change() -> None:
    # A new signature in the table is all it takes for the classifier to know a new wording.
    line = "ERROR 01-01 00:00:00 [x.py:1] RuntimeError: frobnicator ran out of quux"
    assert classify([line]).kind is not FailureKind.HOST_OOM_KILLED
    extra = sig.Signature(
        "test-quux",
        FailureKind.HOST_OOM_KILLED,
        sig.ROOT,
        ("ran out of quux",),
        sig.Source("test", "tests/unit/test_signatures.py", "test_a_wording_is_a_data_change", "all"),
    )
    from vllm_guard.core import classify as module

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "_TABLES", module._tables((extra, *sig.SIGNATURES)))
        assert classify([line]).kind is FailureKind.HOST_OOM_KILLED
