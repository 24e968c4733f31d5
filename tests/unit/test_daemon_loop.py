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
from tests.unit.test_daemon_apply import KV_LINES, AnswersAtOnce, FakeSystemctl, env_of
from vllm_guard.app import daemon as daemon_mod
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import Entry
from vllm_guard.core.events import Event, EventKind

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
