"""The daemon's loop, run for real on a scripted journal: what was logged while the guard was down is acted on
before READY=1 (so a vLLM start waiting for the guard reads the new flags), then new starts are probed and
verified, a SIGHUP reloads the config, and SIGTERM ends the loop with STOPPING=1."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_config
from tests.unit.test_attempt import INV1, INV2, Feed
from tests.unit.test_daemon_apply import BAD_ARG_LINES, KV_LINES, AnswersAtOnce, FakeSystemctl, env_of
from vllm_guard.app import daemon as daemon_mod
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.app.guard_core import CLASSIFY_GRACE_S
from vllm_guard.app.statefile import StateStore
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import Entry
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.probe import ProbeResult, ProbeStep
from vllm_guard.core.where import Where

pytestmark = pytest.mark.unit

U = "vllm-qwen.service"


class Script:
    """A journal follower that hands out prepared batches; ``None`` in the script is "caught up, nothing new"
    and runs the step given with it (a signal, the end)."""

    def __init__(self, steps: list[list[Entry] | tuple[None, Any]]) -> None:
        self.steps = steps
        self.cursor: str | None = None
        self.caught_up = False
        self._r, self._w = os.pipe()
        self.closed = 0

    def fileno(self) -> int:
        return self._r

    def wait(self, timeout_s: float) -> bool:
        return True

    def read(self, max_entries: int = 1000) -> list[Entry]:
        if not self.steps:
            self.caught_up = True
            return []
        step = self.steps.pop(0)
        if isinstance(step, tuple):
            self.caught_up = True
            step[1]()
            return []
        self.caught_up = False
        self.cursor = step[-1].cursor if step else self.cursor
        return step

    def close(self) -> None:
        self.closed += 1


class Notes:
    """The notify protocol's messages, in order, beside the events."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def ready(self, status: str = "") -> bool:
        self.log.append("READY")
        return True

    def status(self, status: str) -> bool:
        self.log.append(f"STATUS={status}")
        return True

    def watchdog(self) -> bool:
        self.log.append("WATCHDOG")
        return True

    def stopping(self, status: str = "") -> bool:
        self.log.append("STOPPING")
        return True


@pytest.fixture
def signals_restored() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)
    signal.set_wakeup_fd(-1)


def test_the_loop_acts_on_the_backlog_before_ready_then_verifies_reloads_and_stops(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch, signals_restored: None
) -> None:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.floors]\nmax_model_len = 256\n",
    )
    feed = Feed()
    # while the guard was down: a start that failed on the KV cache, and systemd's restart scheduled
    feed.started(INV1)
    for line in KV_LINES:
        feed.line(line, INV1)
    feed.exited(INV1)
    feed.failed(INV1)
    feed.restart(INV1, 1)
    backlog = list(feed.out)
    feed.out.clear()
    # live: the restart (on the new flags) starts
    feed.started(INV2)
    feed.line("INFO:     Application startup complete.", INV2)
    live = list(feed.out)

    log: list[str] = []
    events: list[Event] = []
    d: Daemon

    def send(e: Event) -> None:
        events.append(e)
        log.append(e.kind.name)

    def reload_then_stop() -> None:
        write_config(
            fake_root,
            '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 2048\n'
            "[target.floors]\nmax_model_len = 256\n",
        )
        script.steps += [(None, lambda: os.kill(os.getpid(), signal.SIGTERM))]
        os.kill(os.getpid(), signal.SIGHUP)

    def verified_then_reload() -> None:
        for _ in range(200):  # the start probe runs in a thread: wait for its answer, as the loop would
            d.collect_probes()
            if EventKind.VERIFIED_HEALTHY in [e.kind for e in events]:
                break
            time.sleep(0.005)
        script.steps += [(None, reload_then_stop)]
        d.wake()

    script = Script([backlog, (None, lambda: d.wake()), live, (None, verified_then_reload)])
    monkeypatch.setattr(Daemon, "_open_journal", lambda self, fresh_tracker=False: setattr(self, "follower", script))
    sc = FakeSystemctl()
    sc.invocation = INV2
    deps = Deps(
        systemctl=sc,
        send=send,
        notifier=Notes(log),  # type: ignore[arg-type]
        gpus=lambda: None,
        probes=lambda: AnswersAtOnce,
    )
    d = Daemon(Paths(fake_root), None, deps)
    assert d.run() == 0

    kinds = [e.kind for e in events]
    # the backlog's failure was remedied before READY=1: the restart waiting for the guard reads the new flags
    assert log.index("REMEDY_APPLIED") < log.index("READY"), log
    assert kinds[0] is EventKind.GUARD_STARTED and EventKind.VERIFIED_HEALTHY in kinds
    assert EventKind.CONFIG_RELOADED in kinds and EventKind.GUARD_STOPPING in kinds
    assert log.index("READY") < log.index("STOPPING")
    assert any(entry.startswith("STATUS=vllm-qwen: healthy") for entry in log), log
    # the reload's new base flags are in the env file, and the state is saved with the journal's cursor
    assert "--max-model-len=2048" in env_of(fake_root)["VLLM_GUARD_ARGS"].split()
    assert d.state.cursor == live[-1].cursor
    assert daemon_mod.CATCH_UP_S > 0


def test_the_loop_respects_a_persons_stop_survives_a_broken_reload_follows_a_new_target_and_a_reset(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch, signals_restored: None
) -> None:
    import shutil

    from vllm_guard.cli import main

    one = '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
    write_config(fake_root, one)
    feed = Feed()
    feed.started(INV1)
    feed.line("INFO:     Application startup complete.", INV1)
    feed.stopping(INV1)
    feed.exited(INV1, status=0)
    feed.stopped(INV1, "stop")
    stop = list(feed.out)

    events: list[Event] = []
    opened: list[bool] = []

    def broken_reload() -> None:
        write_config(fake_root, one.replace("max_model_len", "max_modle_len"))
        script.steps += [(None, good_reload_with_a_second_target)]
        os.kill(os.getpid(), signal.SIGHUP)

    def good_reload_with_a_second_target() -> None:
        shutil.copytree(fake_root / "models/tiny", fake_root / "models/other")
        write_config(
            fake_root, one + '[[target]]\nunit = "vllm-other"\nport = 8001\nmodel = "/models/other"\nuser = "root"\n'
        )
        script.steps += [(None, reset_by_a_person)]
        os.kill(os.getpid(), signal.SIGHUP)

    def reset_by_a_person() -> None:
        assert main(["reset", "--root", str(fake_root), "vllm-qwen"]) == 0  # another process writes the state
        script.steps += [(None, lambda: os.kill(os.getpid(), signal.SIGTERM))]
        d.wake()

    script = Script([stop, (None, broken_reload)])

    def open_journal(self: Daemon, fresh_tracker: bool = False) -> None:
        opened.append(fresh_tracker)
        self.follower = script

    monkeypatch.setattr(Daemon, "_open_journal", open_journal)
    deps = Deps(systemctl=FakeSystemctl(), send=events.append, notifier=Notes([]), gpus=lambda: None,  # type: ignore[arg-type]
                probes=lambda: AnswersAtOnce)  # fmt: skip
    d = Daemon(Paths(fake_root), None, deps)
    assert d.run() == 0

    kinds = [e.kind for e in events]
    ts = d.state.targets["vllm-qwen"]
    assert ts.stopped_by_person and EventKind.FAILURE_DETECTED not in kinds  # a person's stop is no failure
    assert EventKind.CONFIG_RELOAD_FAILED in kinds and EventKind.CONFIG_RELOADED in kinds
    assert opened == [False, True]  # the second target's unit joined the journal's filter
    assert "vllm-other" in d.state.targets and "vllm-other" in d.live
    assert ts.budget_from is not None  # the reset another process wrote was merged, not overwritten


def test_a_metrics_file_that_cannot_be_written_is_one_warning_that_says_what_to_do(
    fake_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fake_root / "var/lib").mkdir(parents=True)
    (fake_root / "var/lib/prometheus").write_text("a file where the folder should be\n")
    write_config(fake_root, '[guard]\nmetrics = true\n[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    deps = Deps(systemctl=FakeSystemctl(), send=lambda e: None, notifier=Notes([]), gpus=lambda: None)  # type: ignore[arg-type]
    d = Daemon(Paths(fake_root), None, deps)
    d.reconcile()
    d.write_metrics()
    d.write_metrics()
    err = capsys.readouterr().err
    assert err.count("cannot write metrics") == 1  # once, not at every turn
    assert err.startswith("<4>vllm-guard: warning: cannot write metrics to ") and "(`vllm-guard run --check`" in err


def test_an_event_of_a_unit_the_config_does_not_name_is_ignored(fake_root: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    events: list[Event] = []
    deps = Deps(systemctl=FakeSystemctl(), send=events.append, notifier=Notes([]), gpus=lambda: None)  # type: ignore[arg-type]
    d = Daemon(Paths(fake_root), None, deps)
    d.reconcile()
    feed = Feed()
    feed.started(INV1, unit="vllm-unknown.service")
    for ev in d.tracker.feed_all(feed.out):
        d.on_event(ev)
    assert events == [] and d.live["vllm-qwen"].invocation is None


class AnswersWhenStopped:
    """A start probe that gets no answer until its start is over (the loop keeps polling fast meanwhile)."""

    @staticmethod
    def wait_until_answers(target: Any, api_key: Any, *, stop: Any, **_: Any) -> ProbeResult:
        for _ in range(1000):
            if stop():
                break
            time.sleep(0.01)
        return ProbeResult(False, ProbeStep.HEALTH, "connection refused")


def _loop_guard(root: Path, script: Script, log: list[str], events: list[Event], sc: FakeSystemctl) -> Daemon:
    def send(e: Event) -> None:
        events.append(e)
        log.append(e.kind.name)

    deps = Deps(
        systemctl=sc,
        send=send,
        notifier=Notes(log),  # type: ignore[arg-type]
        gpus=lambda: None,
        probes=lambda: AnswersWhenStopped,
        where=lambda t, g: Where(None, None),
    )
    return Daemon(Paths(root), None, deps)


def _stop_loop() -> None:
    os.kill(os.getpid(), signal.SIGTERM)


def test_the_loop_pets_the_watchdog_saves_the_cursor_of_plain_lines_and_acts_on_a_failure_in_the_same_turn(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch, signals_restored: None
) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    monkeypatch.setenv("WATCHDOG_USEC", "100000")  # WatchdogSec=100ms: a keep-alive at least every 50 ms
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    monkeypatch.setattr(daemon_mod, "CURSOR_SAVE_S", 0.0)  # the cursor alone is worth a save at once
    feed = Feed()
    feed.started(INV1)
    feed.line("the first line of the start", INV1)
    backlog = list(feed.out)
    feed.out.clear()
    feed.line("a line of the running start, nothing to decide", INV1)
    plain = list(feed.out)
    feed.out.clear()
    for line in BAD_ARG_LINES:
        feed.line(line, INV1)
    feed.exited(INV1, status=2)
    feed.failed(INV1)
    failure = list(feed.out)

    log: list[str] = []
    events: list[Event] = []
    seen: dict[str, Any] = {}
    store = StateStore(Paths(fake_root).state_file)

    def cursor_on_disk() -> None:
        seen["cursor"] = store.load().cursor

    def status_then_stop() -> None:
        seen["status"] = [x for x in log if x.startswith("STATUS=")]
        _stop_loop()

    script = Script([backlog, (None, lambda: None), plain, (None, cursor_on_disk), failure, (None, status_then_stop)])
    monkeypatch.setattr(Daemon, "_open_journal", lambda self, fresh_tracker=False: setattr(self, "follower", script))
    sc = FakeSystemctl()
    d = _loop_guard(fake_root, script, log, events, sc)
    assert d.run() == 0

    assert seen["cursor"] == plain[-1].cursor  # saved with nothing else to save
    # the give-up (a decisive verdict: no grace) was told to systemd in the turn that read the failure
    assert seen["status"][-1] == "STATUS=vllm-qwen: gave up", seen["status"]
    assert sc.calls == [("stop", U)] and EventKind.GAVE_UP in [e.kind for e in events]
    assert "WATCHDOG" in log[log.index("READY") :]


def test_the_loop_records_a_persons_stop_after_its_grace_merges_a_reset_and_ends_at_sigterm_while_idle(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch, signals_restored: None
) -> None:
    import threading

    from vllm_guard.cli import main

    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    feed = Feed()
    feed.started(INV1)
    feed.line("the first line of the start", INV1)
    feed.stopping(INV1)
    feed.exited(INV1, status=0)
    feed.deactivated(INV1)
    feed.stopped(INV1, "stop")
    stop = list(feed.out)

    log: list[str] = []
    events: list[Event] = []
    seen: dict[str, Any] = {"read_after_stop": []}
    d: Daemon

    def mark() -> None:
        seen["read"] = time.monotonic()
        d.wake()

    def wait_until_recorded() -> None:
        if "recorded" not in seen:
            if time.monotonic() - seen["read"] < 10.0:
                script.steps.append((None, wait_until_recorded))  # no wake-up: the loop sleeps as it would
            else:
                _stop_loop()  # never recorded: end the loop, the asserts say what is missing
            return
        script.steps.append((None, reset_by_a_person))
        d.wake()

    def reset_by_a_person() -> None:
        assert main(["reset", "--root", str(fake_root), "vllm-qwen"]) == 0  # another process writes the state
        script.steps.append((None, see_merged))
        d.wake()

    def see_merged() -> None:
        seen["merged"] = d.state.targets["vllm-qwen"].budget_from is not None
        threading.Timer(0.2, _stop_loop).start()  # SIGTERM while the loop sleeps with nothing due
        script.steps.append((None, lambda: seen["read_after_stop"].append(True)))

    script = Script([(None, mark), stop, (None, wait_until_recorded)])
    monkeypatch.setattr(Daemon, "_open_journal", lambda self, fresh_tracker=False: setattr(self, "follower", script))
    d = _loop_guard(fake_root, script, log, events, FakeSystemctl())
    real_save = d.store.save

    def save(state: Any) -> None:  # when the attempt is first recorded on disk
        attempts = state.targets["vllm-qwen"].attempts if "vllm-qwen" in state.targets else []
        if "recorded" not in seen and any(a.invocation_id == INV1 for a in attempts):
            seen["recorded"], seen["action"] = time.monotonic(), attempts[-1].action
            d.wake()  # on to the next step of the script at once
        real_save(state)

    monkeypatch.setattr(d.store, "save", save)
    assert d.run() == 0

    assert seen["action"] == "stopped_by_person"
    # held for its grace, then recorded at once: not at the next idle wake-up (5 s)
    assert CLASSIFY_GRACE_S <= seen["recorded"] - seen["read"] < 3.0
    assert seen["merged"]  # the reset was taken in before anything else was saved
    assert seen["read_after_stop"] == []  # SIGTERM: no more journal reading
    assert log[-2:] == ["STOPPING", "GUARD_STOPPING"]


def test_a_guard_restarted_between_a_starts_lines_and_its_end_judges_the_attempt_on_all_its_lines(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch, signals_restored: None
) -> None:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.floors]\nmax_model_len = 256\n",
    )
    state = fake_root / "var/lib/vllm-guard/state.json"
    state.parent.mkdir(parents=True)
    state.write_text("{ not json")
    feed = Feed()
    feed.started(INV1)
    for line in KV_LINES:
        feed.line(line, INV1)
    lines = list(feed.out)
    feed.out.clear()
    feed.exited(INV1)
    feed.failed(INV1)
    end = list(feed.out)

    def run(batch: list[Any]) -> list[Event]:
        log: list[str] = []
        events: list[Event] = []
        script = Script([batch, (None, _stop_loop)])
        with monkeypatch.context() as m:
            m.setattr(Daemon, "_open_journal", lambda self, fresh_tracker=False: setattr(self, "follower", script))
            assert _loop_guard(fake_root, script, log, events, FakeSystemctl()).run() == 0
        return events

    first = run(lines)  # the start and vLLM's lines; then the guard stops
    started = [e for e in first if e.kind is EventKind.GUARD_STARTED]
    assert len(started) == 2 and "kept it as" in started[1].message  # the corrupt state file, said at the start
    second = run(end)  # a new guard reads the end: the attempt's lines come from the saved tracker
    detected = [e for e in second if e.kind is EventKind.FAILURE_DETECTED]
    assert [e.fields["KIND"] for e in detected] == ["kv_cache_insufficient"]
    assert "--max-model-len=960" in env_of(fake_root)["VLLM_GUARD_ARGS"].split()
