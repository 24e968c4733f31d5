"""state.json across versions: older schemas migrated step by step, a newer one refused and kept aside.

Schema 1 is the only schema a released vllm-guard has written, so the real table of steps is empty; the
mechanism is tested with steps made here, registered in ``MIGRATIONS`` for the test (monkeypatch), on a
document of the previous schema built from a real state: a renamed key and a dropped counter, as a real
step would have to undo.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vllm_guard.app.statefile import StateStore
from vllm_guard.consts import STATE_SCHEMA
from vllm_guard.core.config import Flags
from vllm_guard.core.state import (
    MIGRATIONS,
    AttemptRecord,
    Current,
    Pending,
    Remedy,
    State,
    StateError,
    StateTooNew,
    dumps,
    loads,
    migrate,
)

pytestmark = pytest.mark.unit

BASE = Current(model="/models/qwen", flags=Flags(gpu_memory_utilization=0.9, max_model_len=32768))
HEALED = Current(model="/models/qwen", flags=Flags(gpu_memory_utilization=0.9, max_model_len=28720))


def a_state() -> State:
    """A state as a guard leaves it after one KV-cache remedy, a verified start and an intent still pending."""
    st = State(cursor="s=abc;i=12")
    ts = st.target("vllm-qwen")
    ts.base_hash = "0123456789abcdef"
    ts.current = HEALED
    rem = Remedy(
        at=1000.0,
        invocation_id="inv-1",
        kind="kv_cache_insufficient",
        action="change_flags",
        change="max_model_len 32768 -> 28720",
        reason="KV cache holds 30240 tokens",
        before=BASE.flags.describe(),
        after=HEALED.flags.describe(),
    )
    ts.add_remedy(rem)
    ts.rungs["kv_cache_insufficient"] = 1
    ts.remember_attempt(AttemptRecord(invocation_id="inv-1", started=990.0, ended=999.0, kind="kv_cache_insufficient"))
    ts.mark_handled("inv-1")
    ts.known_good["/models/qwen|gpu|0.8.5"] = HEALED
    ts.log_env(900.0, BASE)
    ts.log_env(1000.0, HEALED)
    ts.pending = Pending(invocation_id="inv-2", action="restart", restart_unit=True, at=1100.0)
    return st


def as_previous_schema(st: State) -> dict[str, Any]:
    """The state in the shape of the schema before: ``known_good`` was ``good_flags``, no ``remedy_counts``."""
    doc = json.loads(dumps(st))
    doc["schema"] = STATE_SCHEMA - 1
    for ts in doc["targets"].values():
        ts["good_flags"] = ts.pop("known_good")
        del ts["remedy_counts"]
    return doc


def step_from_previous(doc: dict[str, Any]) -> dict[str, Any]:
    """What a real step does: rename, and rebuild what the older schema did not keep from what it did."""
    for ts in doc["targets"].values():
        ts["known_good"] = ts.pop("good_flags")
        counts: dict[str, int] = {}
        for rem in ts["remedies"]:
            counts[rem["kind"]] = counts.get(rem["kind"], 0) + 1
        ts["remedy_counts"] = counts
    return doc


def test_the_real_table_is_one_unbroken_chain_ending_at_the_current_schema() -> None:
    steps = sorted(MIGRATIONS)
    assert steps == list(range(STATE_SCHEMA - len(steps), STATE_SCHEMA)), steps
    assert all(callable(f) for f in MIGRATIONS.values())


def test_a_current_document_loads_as_it_was_written() -> None:
    st = a_state()
    again = loads(dumps(st))
    assert again == st
    assert dumps(again) == dumps(st)
    assert again.targets["vllm-qwen"].below_base_since(BASE) == 1000.0  # the env log came through


def test_a_previous_schema_document_is_migrated_to_the_current_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MIGRATIONS, STATE_SCHEMA - 1, step_from_previous)
    st = a_state()
    old = as_previous_schema(st)
    text = json.dumps(old)

    got = loads(text)

    assert got.schema_ == STATE_SCHEMA
    ts = got.targets["vllm-qwen"]
    # the last-known-good flags, the remedies and their counts, the intent to finish: all still there
    assert ts.known_good == {"/models/qwen|gpu|0.8.5": HEALED}
    assert ts.remedy_counts == {"kv_cache_insufficient": 1}
    assert [r.invocation_id for r in ts.remedies] == ["inv-1"]
    assert ts.pending is not None and ts.pending.invocation_id == "inv-2"
    assert ts.handled == ["inv-1"]
    assert got == st
    # written again, it is a current document; the old text was not changed in place
    assert json.loads(dumps(got))["schema"] == STATE_SCHEMA
    assert json.loads(text) == old


def test_without_the_step_the_previous_schema_is_refused_clearly() -> None:
    old = as_previous_schema(a_state())
    with pytest.raises(StateError, match=rf"schema {STATE_SCHEMA - 1} is older than any this vllm-guard reads"):
        loads(json.dumps(old))


def test_steps_run_in_order_each_on_the_output_of_the_one_before(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, int]] = []

    def step(n: int) -> Any:
        def run(doc: dict[str, Any]) -> dict[str, Any]:
            seen.append((n, doc["schema"]))
            doc.setdefault("trail", []).append(n)
            return doc

        return run

    steps = {n: step(n) for n in (3, 4, 5)}
    doc = migrate({"schema": 3, "targets": {}}, to=6, steps=steps)
    assert doc == {"schema": 6, "targets": {}, "trail": [3, 4, 5]}
    assert seen == [(3, 3), (4, 4), (5, 5)]  # the number is set after each step, before the next
    # from the middle of the chain: only the steps still needed
    seen.clear()
    assert migrate({"schema": 5}, to=6, steps=steps)["trail"] == [5]
    assert seen == [(5, 5)]
    # older than the chain reaches
    with pytest.raises(StateError, match=r"schema 2 is older than any this vllm-guard reads \(schema 3 to 6\)"):
        migrate({"schema": 2}, to=6, steps=steps)


@pytest.mark.parametrize("newer", [STATE_SCHEMA + 1, STATE_SCHEMA + 7])
def test_a_newer_schema_is_refused_with_the_advice_to_upgrade(newer: int) -> None:
    doc = json.loads(dumps(a_state()))
    doc["schema"] = newer
    with pytest.raises(StateTooNew) as err:
        loads(json.dumps(doc))
    assert err.value.schema == newer
    msg = str(err.value)
    assert f"schema {newer} was written by a newer vllm-guard" in msg
    assert f"reads schema {STATE_SCHEMA} and older" in msg
    assert "upgrade vllm-guard" in msg


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        ({"targets": {}}, "no schema number"),
        ({"schema": "1"}, "schema '1': not a schema number"),
        ({"schema": 1.0}, "schema 1.0: not a schema number"),
        ({"schema": True}, "schema True: not a schema number"),
        ({"schema": None}, "schema None: not a schema number"),
    ],
)
def test_a_missing_or_odd_schema_number_is_refused(doc: dict[str, Any], words: str) -> None:
    with pytest.raises(StateError) as err:
        loads(json.dumps(doc))
    assert str(err.value) == words
    assert not isinstance(err.value, StateTooNew)


def test_a_step_that_fails_on_the_document_is_a_clear_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MIGRATIONS, STATE_SCHEMA - 1, step_from_previous)
    doc = as_previous_schema(a_state())
    del doc["targets"]["vllm-qwen"]["good_flags"]  # damaged: what the step expects is not there
    with pytest.raises(StateError, match=rf"cannot migrate it from schema {STATE_SCHEMA - 1} to {STATE_SCHEMA}: "):
        loads(json.dumps(doc))

    monkeypatch.setitem(MIGRATIONS, STATE_SCHEMA - 1, lambda d: [d])
    with pytest.raises(StateError, match="the step made no JSON object"):
        loads(json.dumps(as_previous_schema(a_state())))


def test_a_migrated_document_still_goes_through_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MIGRATIONS, STATE_SCHEMA - 1, lambda d: {**d, "targets": {"u": {"rungs": "many"}}})
    with pytest.raises(StateError, match=r"invalid: \('targets', 'u', 'rungs'\)"):
        loads(json.dumps({"schema": STATE_SCHEMA - 1}))


# ------------------------------------------------------------------------------ the file on disk


def test_the_store_migrates_an_older_file_and_writes_it_back_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(MIGRATIONS, STATE_SCHEMA - 1, step_from_previous)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(as_previous_schema(a_state())))
    store = StateStore(path)
    st = store.load()
    assert st == a_state()
    assert store.warnings == []
    assert list(tmp_path.iterdir()) == [path]  # nothing kept aside: nothing was wrong
    store.save(st)
    assert json.loads(path.read_text())["schema"] == STATE_SCHEMA


def test_a_newer_file_is_kept_aside_whole_under_its_schema_and_the_guard_starts_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "state.json"
    doc = json.loads(dumps(a_state()))
    doc["schema"] = STATE_SCHEMA + 1
    text = json.dumps(doc)
    path.write_text(text)
    store = StateStore(path)

    assert store.load() == State()

    assert not path.exists()
    kept = list(tmp_path.glob(f"state.json.schema-{STATE_SCHEMA + 1}-*"))
    assert len(kept) == 1 and kept[0].read_text() == text  # not lost: byte for byte
    assert not list(tmp_path.glob("state.json.corrupt-*"))
    (warning,) = store.warnings
    assert f"kept it as {kept[0]}" in warning
    assert "written by a newer vllm-guard" in warning and "upgrade vllm-guard" in warning
    assert warning in capsys.readouterr().err
    # moved back after an upgrade, a guard that reads that schema goes on from it
    kept[0].rename(path)
    assert json.loads(path.read_text())["targets"]["vllm-qwen"]["known_good"]


def test_a_corrupt_file_is_still_kept_aside_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"schema": 1, "targets": ')
    store = StateStore(path)
    assert store.load() == State()
    assert len(list(tmp_path.glob("state.json.corrupt-*"))) == 1
    assert "not JSON" in store.warnings[0]
