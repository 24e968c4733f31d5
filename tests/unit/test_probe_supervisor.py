"""Probe supervision, driven directly: the start probe verifies a start, liveness failures in a row restart a
dead engine within the budget, a probe that crashes or belongs to an older start changes nothing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_config
from tests.unit.test_daemon_apply import FakeSystemctl
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import AttemptStarted
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.probe import ProbeResult, ProbeStep, TransportError

pytestmark = pytest.mark.unit

NOW = 1_800_000_000.0
UNIT = "vllm-qwen.service"
OK = ProbeResult(True, ProbeStep.DONE, "answered", model_root="/models/tiny")
HUNG = ProbeResult(
    False, ProbeStep.CHAT, "no answer in time", kind=FailureKind.ENGINE_DEAD, transport_error=TransportError.TIMEOUT
)
DEAD_500 = ProbeResult(False, ProbeStep.CHAT, "HTTP 500: EngineDeadError", kind=FailureKind.ENGINE_DEAD)
UNAUTHORIZED = ProbeResult(False, ProbeStep.MODELS, "HTTP 401: the server refused the API key", status_code=401)
START_LINES = [
    "INFO [kv_cache_utils.py:1087] GPU KV cache size: 32,640 tokens",
    "INFO [kv_cache_utils.py:1091] Maximum concurrency for 4,096 tokens per request: 7.97x",
    "INFO [default_loader.py:267] Loading weights took 1.50 seconds",
]


class Probes:
    """A probes module whose answers the test sets (or a probe that raises)."""

    def __init__(self) -> None:
        self.start: ProbeResult | Exception = OK
        self.live: ProbeResult | Exception = OK
        self.calls: list[str] = []

    def _give(self, what: ProbeResult | Exception) -> ProbeResult:
        if isinstance(what, Exception):
            raise what
        return what

    def wait_until_answers(self, target: Any, api_key: Any, **_: Any) -> ProbeResult:
        self.calls.append("start")
        return self._give(self.start)

    def probe_once(self, target: Any, api_key: Any, **_: Any) -> ProbeResult:
        self.calls.append("live")
        return self._give(self.live)


@pytest.fixture
def guard(fake_root: Path) -> tuple[Daemon, FakeSystemctl, list[Event], Probes, dict[str, float]]:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.probe]\ninterval_s = 30\nfailures_allowed = 2\n[target.budget]\nmax_remedies = 2\n",
    )
    sc, events, probes, clock = FakeSystemctl(), [], Probes(), {"now": NOW}
    deps = Deps(
        systemctl=sc,
        send=events.append,
        clock=lambda: clock["now"],
        gpus=lambda: None,
        notifier=Notifier(address=""),
        probes=lambda: probes,
    )
    d = Daemon(Paths(fake_root), None, deps)
    d.reconcile()
    return d, sc, events, probes, clock


def _collect(d: Daemon) -> None:
    """Wait for the probe thread, then hand its result to the loop's side."""
    live = d.live["vllm-qwen"]
    for _ in range(200):
        if live.probe is None or live.probe.done():
            break
        time.sleep(0.005)
    d.collect_probes()


def _kinds(events: list[Event]) -> list[EventKind]:
    return [e.kind for e in events]


def _started(d: Daemon, inv: str = "inv-1", at: float = NOW - 10) -> None:
    d.on_event(AttemptStarted(UNIT, inv, int(at * 1e6)))
    d.live["vllm-qwen"].lines.extend(START_LINES)  # what the start printed before it answered


def test_a_start_that_answers_is_verified_with_what_vllm_reported_and_filed_as_known_good(guard: Any) -> None:
    d, _, events, probes, _ = guard
    _started(d)
    _collect(d)
    assert probes.calls == ["start"]
    verified = [e for e in events if e.kind is EventKind.VERIFIED_HEALTHY]
    assert len(verified) == 1
    f = verified[0].fields
    assert f["KV_CACHE_TOKENS"] == "32640" and f["MAX_CONCURRENCY"] == "7.97" and f["LOAD_S"] == "1.50"
    assert f["TIME_TO_READY_S"] == "10.0" and "--max-model-len=4096" in f["FLAGS_AFTER"]
    ts = d.state.targets["vllm-qwen"]
    assert ts.last_verified is not None and ts.last_verified.evidence["kv_cache_tokens"] == 32640
    assert ts.known_good and ts.healthy_since == NOW
    assert d.live["vllm-qwen"].next_live_probe == NOW + 30
    assert "vllm-qwen: healthy" in d.status_line()


def test_liveness_failures_in_a_row_restart_the_engine_and_one_alone_probes_again_sooner(guard: Any) -> None:
    d, sc, events, probes, clock = guard
    _started(d)
    _collect(d)
    probes.live = HUNG
    clock["now"] = NOW + 31
    d.timers()  # the liveness probe is due
    _collect(d)
    assert probes.calls == ["start", "live"]
    assert _kinds(events).count(EventKind.PROBE_FAILED) == 1 and sc.calls == []
    assert d.live["vllm-qwen"].next_live_probe == NOW + 31 + 15  # sooner than the 30 s interval

    clock["now"] = NOW + 47
    d.timers()
    _collect(d)
    assert sc.calls == [("restart", UNIT)]  # the second in a row: the engine is hung
    restarted = [e for e in events if e.kind is EventKind.RESTARTED_UNIT]
    assert len(restarted) == 1 and restarted[0].fields["KIND"] == "engine_dead"
    assert "2 liveness probes failed in a row" in restarted[0].fields["REASON"]
    assert d.state.targets["vllm-qwen"].last_failure is not None
    assert d.live["vllm-qwen"].next_live_probe is None


@pytest.mark.parametrize("active", ["deactivating", "inactive", "failed"])
def test_probes_failing_while_the_unit_is_being_stopped_restart_nothing(guard: Any, active: str) -> None:
    # `systemctl stop` with streams in flight: vLLM closes its port, then waits for the streams, so every probe is
    # refused while it drains. A restart would cancel the person's stop job; the journal tells how it ended.
    d, sc, events, probes, clock = guard
    _started(d)
    _collect(d)
    probes.live = ProbeResult(
        False, ProbeStep.MODELS, "cannot connect: [Errno 111] Connection refused", kind=FailureKind.ENGINE_DEAD
    )
    sc.active = active
    for step in (31, 47):
        clock["now"] = NOW + step
        d.live["vllm-qwen"].next_live_probe = clock["now"]
        d.timers()
        _collect(d)
    assert sc.calls == []
    assert EventKind.RESTARTED_UNIT not in _kinds(events) and EventKind.FAILURE_DETECTED not in _kinds(events)
    assert d.live["vllm-qwen"].next_live_probe is None  # no more probes of that start

    sc.active = "active"  # the same failures on a unit systemd still runs: the engine is dead
    d.live["vllm-qwen"].liveness = None
    for step in (63, 79):
        clock["now"] = NOW + step
        d.live["vllm-qwen"].next_live_probe = clock["now"]
        d.timers()
        _collect(d)
    assert sc.calls == [("restart", UNIT)]


def test_a_live_server_that_refuses_the_key_is_not_restarted(guard: Any) -> None:
    d, sc, events, probes, clock = guard
    _started(d)
    _collect(d)
    probes.live = UNAUTHORIZED  # it answers: alive, and a restart would not change a wrong key
    for step in (31, 47, 63):
        clock["now"] = NOW + step
        d.live["vllm-qwen"].next_live_probe = clock["now"]
        d.timers()
        _collect(d)
    assert sc.calls == [] and _kinds(events).count(EventKind.PROBE_FAILED) == 3


def test_a_start_probe_that_finds_a_dead_engine_brings_it_back_and_another_failure_only_reports(
    guard: Any,
) -> None:
    d, sc, events, probes, _ = guard
    probes.start = DEAD_500
    _started(d)
    _collect(d)
    assert sc.calls == [("restart", UNIT)]
    assert "the first chat request failed" in next(e for e in events if e.kind is EventKind.RESTARTED_UNIT).message

    probes.start = UNAUTHORIZED
    _started(d, "inv-2", NOW - 5)
    _collect(d)
    assert sc.calls == [("restart", UNIT)]  # nothing more: it answers, the key is wrong
    assert [e.fields["PROBE_STEP"] for e in events if e.kind is EventKind.PROBE_FAILED] == ["chat", "models"]


def test_an_engine_a_probe_finds_dead_of_memory_is_remedied_as_a_memory_failure(guard: Any) -> None:
    # The engine ran out of memory on a request while the server stayed up: the start probe's chat gets a 500.
    # Its log says why (the lines of a public V0 log: vllm-project/vllm#10596, in tests/data/logs), so the guard
    # steps the flags down and restarts the unit on them, rather than restarting it on the same flags.
    from tests.conftest import DATA
    from tests.corpus import lines_of

    d, sc, events, probes, _ = guard
    probes.start = DEAD_500
    _started(d)
    d.live["vllm-qwen"].lines.extend(lines_of(DATA / "logs/cuda_oom_runtime/vllm-10596-echo-true-mqllmengine-dead.log"))
    _collect(d)
    assert sc.calls == [("restart", UNIT)]
    died = next(e for e in events if e.kind is EventKind.FAILURE_DETECTED)
    assert died.fields["KIND"] == "cuda_oom_runtime" and "engine died" in died.message
    assert "the first chat request failed" in died.message
    ts = d.state.targets["vllm-qwen"]
    assert ts.last_failure is not None and ts.last_failure.kind == "cuda_oom_runtime"
    assert ts.current is not None and ts.current.flags.max_num_seqs == 128  # stepped down from vLLM's 256
    changed = [e for e in events if e.kind is EventKind.REMEDY_APPLIED]
    assert changed and "restarted the unit" in changed[-1].fields["CHANGE"]


def test_a_dead_engine_past_the_budget_is_given_up_on(guard: Any) -> None:
    d, sc, events, probes, _ = guard
    probes.start = DEAD_500
    for n in range(3):  # the budget holds two remedies
        sc.invocation = f"inv-{n}"  # what systemd runs now: the guard restarts only that start
        _started(d, f"inv-{n}", NOW - 10 + n)
        _collect(d)
    assert sc.calls.count(("restart", UNIT)) == 2
    gave_up = [e for e in events if e.kind is EventKind.GAVE_UP]
    assert len(gave_up) == 1 and "budget spent" in gave_up[0].fields["REASON"]


def test_a_probe_that_crashes_or_belongs_to_an_older_start_changes_nothing(guard: Any) -> None:
    d, sc, events, probes, _ = guard
    probes.start = RuntimeError("a bug in a probe")
    _started(d)
    _collect(d)
    crashed = [e for e in events if e.kind is EventKind.PROBE_FAILED]
    assert len(crashed) == 1 and crashed[0].fields["PROBE_STEP"] == "crash"
    assert "a bug in a probe" in crashed[0].message

    probes.start = OK
    _started(d, "inv-2", NOW - 5)
    d.live["vllm-qwen"].invocation = "inv-3"  # a newer start began before the probe's answer was read
    _collect(d)
    assert EventKind.VERIFIED_HEALTHY not in _kinds(events) and sc.calls == []


def test_an_api_key_file_that_cannot_be_read_probes_without_a_key(fake_root: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\napi_key_file = "/etc/k"\n')
    (fake_root / "etc/k").write_text("secret\n")
    seen: list[Any] = []

    class KeyProbes(Probes):
        def wait_until_answers(self, target: Any, api_key: Any, **_: Any) -> ProbeResult:
            seen.append(api_key)
            return OK

    probes = KeyProbes()
    deps = Deps(
        systemctl=FakeSystemctl(), send=lambda e: None, clock=lambda: NOW, gpus=lambda: None,
        notifier=Notifier(address=""), probes=lambda: probes,
    )  # fmt: skip
    d = Daemon(Paths(fake_root), None, deps)
    d.reconcile()
    (fake_root / "etc/k").unlink()  # gone after the guard started: the probe goes ahead without it
    _started(d)
    _collect(d)
    assert seen == [None]
