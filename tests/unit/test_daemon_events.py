"""The daemon's answers to what the journal reports, driven directly: stops someone asked for, a unit's stop, events
of units the config no longer names, a start reported twice, the grace before a weak verdict, late lines of an
attempt (during its grace and after it was decided), a clean exit, and what reconcile does at the guard's start."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_config
from tests.unit.test_daemon_apply import (
    BAD_ARG_LINES,
    KV_LINES,
    NOW,
    VRAM_LINES,
    AnswersAtOnce,
    FakeSystemctl,
    attempt,
    env_of,
)
from tests.unit.test_probe_supervisor import Probes
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.app.guard_core import CLASSIFY_GRACE_S
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import Attempt, AttemptAmended, AttemptEnded, AttemptStarted, UnitStopped
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.state import base_current
from vllm_guard.core.where import Where

pytestmark = pytest.mark.unit

UNIT = "vllm-qwen.service"
ONE = (
    '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
    "[target.floors]\nmax_model_len = 256\n"
)
TWO = ONE + '[[target]]\nunit = "vllm-other"\nport = 8001\nmodel = "/models/tiny"\nuser = "root"\n'
# what systemd's PID 1 prints for a failed attempt when vLLM printed nothing the classifier knows
BARE = (f"{UNIT}: Main process exited, code=exited, status=1/FAILURE",)


def _guard(
    root: Path,
    events: list[Event],
    *,
    sc: FakeSystemctl | None = None,
    probes: Any = AnswersAtOnce,
    reconciled: bool = True,
    **deps: Any,
) -> Daemon:
    d = Daemon(
        Paths(root),
        None,
        Deps(
            systemctl=sc or FakeSystemctl(),
            send=events.append,
            clock=lambda: NOW,
            gpus=lambda: None,
            notifier=Notifier(address=""),
            probes=lambda: probes,
            **deps,
        ),
    )
    if reconciled:
        d.reconcile()
    return d


@pytest.fixture
def root(fake_root: Path) -> Path:
    write_config(fake_root, ONE)
    return fake_root


def _kinds(events: list[Event]) -> list[EventKind]:
    return [e.kind for e in events]


def _end(d: Daemon, a: Attempt) -> None:
    d.on_event(AttemptEnded(a))
    d.flush_held(force=True)


# --- stops ------------------------------------------------------------------------------------------------------


def test_an_attempt_a_stop_job_ended_is_recorded_as_a_persons_stop_and_not_watched_for_a_restart(root: Path) -> None:
    events: list[Event] = []
    d = _guard(root, events)
    before = env_of(root)
    stopped = dataclasses.replace(attempt(KV_LINES), stop_requested=True)
    d.on_event(AttemptEnded(stopped))
    assert d.live["vllm-qwen"].fast_until == 0.0 and not d._starting()  # no restart follows a stop job
    d.flush_held(force=True)
    ts = d.state.targets["vllm-qwen"]
    assert ts.attempts[-1].action == "stopped_by_person" and "inv-1" in ts.handled
    assert EventKind.FAILURE_DETECTED not in _kinds(events) and ts.remedies == [] and env_of(root) == before


def test_an_attempt_that_failed_on_its_own_is_watched_for_systemds_restart(root: Path) -> None:
    d = _guard(root, [])
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    # RestartSec (10 s by default) and a little more: the loop looks at the journal often meanwhile
    assert d.live["vllm-qwen"].fast_until > time.monotonic() + 10.0 and d._starting()


def test_an_attempt_that_ended_after_the_guard_stopped_the_unit_is_the_guards_own_stop(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = _guard(root, events, sc=sc)
    ts = d.state.targets["vllm-qwen"]
    ts.guard_stopped = True  # e.g. the guard stopped it to wait for VRAM
    _end(d, attempt(KV_LINES))
    assert ts.attempts[-1].action == "stopped_by_guard"
    assert EventKind.FAILURE_DETECTED not in _kinds(events) and ts.remedies == [] and sc.calls == []


@pytest.mark.parametrize(
    ("by_request", "guard_stopped", "persons"),
    [(True, False, True), (True, True, False), (False, False, False)],
    ids=["a-persons-stop", "the-guards-stop", "not-asked-for"],
)
def test_a_units_stop_is_a_persons_only_when_a_job_asked_for_it_and_the_guard_did_not(
    root: Path, by_request: bool, guard_stopped: bool, persons: bool
) -> None:
    d = _guard(root, [])
    ts, live = d.state.targets["vllm-qwen"], d.live["vllm-qwen"]
    ts.guard_stopped = guard_stopped
    live.next_live_probe = NOW + 30
    d.dirty = False
    d.on_event(UnitStopped(UNIT, int(NOW * 1e6), by_request=by_request))
    assert ts.stopped_by_person is persons and d.dirty is persons
    assert live.next_live_probe is None  # a stopped unit is not probed
    assert ("stopped by a person" in d.status_line()) is persons


# --- units the config does not name -----------------------------------------------------------------------------


def test_events_of_a_unit_the_config_no_longer_names_change_nothing(root: Path) -> None:
    events: list[Event] = []
    probes = Probes()
    d = _guard(root, events, probes=probes)
    d.on_event(AttemptStarted("vllm-gone.service", "inv-9", int(NOW * 1e6)))
    assert probes.calls == [] and d.live["vllm-qwen"].invocation is None and "vllm-gone" not in d.state.targets
    # an attempt held for its grace when a reload dropped its unit: dropped with it
    gone = dataclasses.replace(attempt(KV_LINES, "inv-9"), unit="vllm-gone.service")
    d.held["inv-9"] = (gone, 0.0, None)
    assert d.flush_held(force=True) is None
    assert d.held == {} and events == [] and "vllm-gone" not in d.state.targets


# --- starts -----------------------------------------------------------------------------------------------------


def test_the_same_start_reported_twice_is_probed_once_and_keeps_its_lines(root: Path) -> None:
    probes = Probes()
    d = _guard(root, [], probes=probes)
    live = d.live["vllm-qwen"]
    d.on_event(AttemptStarted(UNIT, "inv-1", int((NOW - 5) * 1e6)))
    live.lines.append("INFO:     Application startup complete.")
    for _ in range(200):
        if live.probe is None or live.probe.done():
            break
        time.sleep(0.005)
    d.on_event(AttemptStarted(UNIT, "inv-1", int((NOW - 5) * 1e6)))  # a replayed journal
    assert list(live.lines) == ["INFO:     Application startup complete."] and live.started_at == NOW - 5
    assert probes.calls == ["start"]


# --- the grace before a weak verdict ----------------------------------------------------------------------------


def test_a_decisive_failure_is_acted_on_at_once_while_a_weak_one_waits_out_its_grace(fake_root: Path) -> None:
    write_config(fake_root, TWO)
    events: list[Event] = []
    d = _guard(fake_root, events)
    d.on_event(AttemptEnded(attempt(KV_LINES, "inv-a")))  # vLLM's own numbers: decisive
    d.on_event(AttemptEnded(dataclasses.replace(attempt(BARE, "inv-b"), unit="vllm-other.service")))
    left = d.flush_held()
    assert left is not None and 0.0 < left <= CLASSIFY_GRACE_S
    assert list(d.held) == ["inv-b"]
    assert [e.fields["UNIT"] for e in events if e.kind is EventKind.FAILURE_DETECTED] == [UNIT]
    assert d.flush_held(force=True) is None and d.held == {}
    detected = [e for e in events if e.kind is EventKind.FAILURE_DETECTED]
    assert [(e.fields["UNIT"], e.fields["KIND"]) for e in detected] == [
        (UNIT, "kv_cache_insufficient"),
        ("vllm-other.service", "unknown_failure"),
    ]


def test_late_lines_within_the_grace_are_classified_with_the_attempt_and_no_plain_retry_comes_first(
    root: Path,
) -> None:
    events: list[Event] = []
    d = _guard(root, events)
    d.on_event(AttemptEnded(attempt(BARE)))
    d.on_event(AttemptAmended(attempt(BARE + KV_LINES)))  # journald delivered vLLM's last lines after PID 1's
    held, due, verdict = d.held["inv-1"]
    assert held.lines == BARE + KV_LINES and verdict is None and due > time.monotonic()
    d.flush_held(force=True)
    ts = d.state.targets["vllm-qwen"]
    assert [r.action for r in ts.remedies] == ["change_flags"]
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()
    assert _kinds(events).count(EventKind.FAILURE_DETECTED) == 1


# --- late lines of an attempt already decided ------------------------------------------------------------------


def test_late_lines_of_an_attempt_the_guard_never_saw_end_change_nothing(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = _guard(root, events, sc=sc)
    d.on_event(AttemptAmended(attempt(BARE + VRAM_LINES, "inv-unseen")))
    ts = d.state.targets["vllm-qwen"]
    assert ts.remedies == [] and ts.attempts == [] and events == [] and sc.calls == []


def test_late_lines_that_still_name_no_cause_keep_the_plain_retry(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = _guard(root, events, sc=sc)
    _end(d, attempt(BARE))
    n = len(events)
    d.on_event(AttemptAmended(attempt((*BARE, "INFO:     Shutting down"))))
    ts = d.state.targets["vllm-qwen"]
    assert [r.action for r in ts.remedies] == ["let_retry"] and ts.remedy_counts == {"unknown_failure": 1}
    assert len(events) == n and sc.calls == []


def test_late_lines_of_an_older_attempt_do_not_take_back_a_later_retry(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = _guard(root, events, sc=sc)
    _end(d, attempt(BARE, "inv-1"))
    _end(d, attempt(BARE, "inv-2"))
    n = len(events)
    d.on_event(AttemptAmended(attempt(BARE + VRAM_LINES, "inv-1")))  # systemd has started inv-2 since
    ts = d.state.targets["vllm-qwen"]
    assert [r.invocation_id for r in ts.remedies] == ["inv-1", "inv-2"]
    assert ts.remedy_counts == {"unknown_failure": 2} and len(events) == n and sc.calls == []


def test_taking_back_one_of_several_plain_retries_keeps_the_count_of_the_others(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = _guard(root, events, sc=sc)
    _end(d, attempt(BARE, "inv-1"))
    _end(d, attempt(BARE, "inv-2"))
    d.on_event(AttemptAmended(attempt(BARE + VRAM_LINES, "inv-2")))
    ts = d.state.targets["vllm-qwen"]
    assert [(r.invocation_id, r.action) for r in ts.remedies] == [("inv-1", "let_retry"), ("inv-2", "wait_for_vram")]
    assert ts.remedy_counts == {"unknown_failure": 1, "vram_held": 1}
    assert ts.rungs == {"unknown_failure": 1, "vram_held": 1}
    assert sc.calls == [("stop", UNIT)]


# --- a clean exit and a give-up ---------------------------------------------------------------------------------


def test_a_clean_exit_nobody_asked_for_is_started_again(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = _guard(root, events, sc=sc)
    _end(d, dataclasses.replace(attempt(()), result="success", exit_status=0))
    detected = [e for e in events if e.kind is EventKind.FAILURE_DETECTED]
    assert len(detected) == 1 and detected[0].fields["KIND"] == "engine_dead"
    assert detected[0].message == f"{UNIT}: vLLM exited with status 0 without being asked to stop"
    assert sc.calls == [("start", UNIT)] and events[-1].kind is EventKind.RESTARTED_UNIT


def test_the_status_line_says_when_the_guard_gave_up(root: Path) -> None:
    d = _guard(root, [])
    assert d.status_line() == "vllm-qwen: watching"
    _end(d, attempt(BAD_ARG_LINES))
    assert d.status_line() == "vllm-qwen: gave up"


# --- reconcile at the guard's start -----------------------------------------------------------------------------


def test_a_target_removed_from_the_config_is_dropped_from_the_state(fake_root: Path) -> None:
    write_config(fake_root, TWO)
    _guard(fake_root, []).save()
    write_config(fake_root, ONE)
    d = _guard(fake_root, [], reconciled=False)
    assert set(d.state.targets) == {"vllm-qwen", "vllm-other"}
    d.dirty = False
    d.reconcile()
    assert set(d.state.targets) == {"vllm-qwen"} and d.dirty


def test_an_env_file_deleted_while_the_guard_was_down_is_written_again_with_the_current_flags(root: Path) -> None:
    d = _guard(root, [])
    _end(d, attempt(KV_LINES))
    d.save()
    env = root / "var/lib/vllm-guard/vllm-qwen.env"
    env.unlink()
    _guard(root, [])
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()  # not the base 4096


def test_a_state_without_current_flags_begins_from_the_base_flags(root: Path) -> None:
    d = _guard(root, [])
    d.state.targets["vllm-qwen"].current = None
    d.save()
    d2 = _guard(root, [])
    ts = d2.state.targets["vllm-qwen"]
    assert ts.current == base_current(d2.targets[0]) and d2.dirty


def test_a_unit_moved_while_on_the_base_flags_keeps_them_and_says_nothing(root: Path) -> None:
    from tests.unit.test_daemon_apply import _verify

    place = {"now": Where("NVIDIA L4 23034MiB", "0.11.0")}
    events: list[Event] = []
    d = _guard(root, events, where=lambda t, g: place["now"])
    _verify(d, "inv-1")  # the base flags verified on the small GPU
    d.save()
    env = root / "var/lib/vllm-guard/vllm-qwen.env"
    text, mtime = env.read_text(), env.stat().st_mtime_ns
    place["now"] = Where("NVIDIA A100-SXM4-80GB 81920MiB", "0.11.0")
    n = len(events)
    d2 = _guard(root, events, where=lambda t, g: place["now"])
    ts = d2.state.targets["vllm-qwen"]
    assert ts.flags_where == "NVIDIA A100-SXM4-80GB 81920MiB|0.11.0"  # the flags now belong to the new place
    assert ts.current == base_current(d2.targets[0])
    assert events[n:] == [] and env.read_text() == text and env.stat().st_mtime_ns == mtime


def test_a_state_without_a_log_of_the_env_file_dates_its_flags_from_the_files_last_write(root: Path) -> None:
    d = _guard(root, [])
    _end(d, attempt(KV_LINES))
    d.state.targets["vllm-qwen"].env_log = []  # a state file written before the guard kept that log
    d.save()
    env = root / "var/lib/vllm-guard/vllm-qwen.env"
    ts = _guard(root, []).state.targets["vllm-qwen"]
    assert [(e.at, e.model) for e in ts.env_log] == [(env.stat().st_mtime, "/models/tiny")]
    assert "--max-model-len=960" in ts.env_log[0].flags  # what the file holds: the lowered flags
