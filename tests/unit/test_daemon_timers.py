"""The daemon's timers and its journal side, driven directly: the VRAM wait and the files wait look only when due,
a memory sample that cannot be read is skipped, the journal is (re)opened with the right filter and cursor, one
bad entry does not stop a batch, and a journal that never runs dry does not hold back READY=1."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.conftest import write_config
from tests.unit.test_attempt import INV1, INV2, Feed
from tests.unit.test_daemon_apply import NOW, VRAM_LINES, AnswersAtOnce, FakeSystemctl, attempt
from tests.unit.test_daemon_loop import Script
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.app.gpus import Gpu, Holder
from vllm_guard.app.guard_core import FILES_POLL_S, VRAM_POLL_S
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import AttemptEnded, Entry
from vllm_guard.core.events import Event, EventKind

pytestmark = pytest.mark.unit

UNIT = "vllm-qwen.service"
HELD = [Gpu(0, "NVIDIA L4", 23034, 10752, (Holder(4242, "stray.py", 12288),))]
FREE = [Gpu(0, "NVIDIA L4", 23034, 22800, ())]


class World:
    """The clock, the GPUs and systemd the guard sees; counts how often the GPUs are read."""

    def __init__(self) -> None:
        self.now = NOW
        self.gpus: list[Gpu] | None = None
        self.reads = 0
        self.sc = FakeSystemctl()
        self.events: list[Event] = []

    def read_gpus(self) -> list[Gpu] | None:
        self.reads += 1
        return self.gpus

    def guard(self, root: Path, **deps: Any) -> Daemon:
        deps.setdefault("probes", lambda: AnswersAtOnce)  # never the real probes: they would wait on the network
        d = Daemon(
            Paths(root),
            None,
            Deps(
                systemctl=self.sc,
                send=self.events.append,
                clock=lambda: self.now,
                gpus=self.read_gpus,
                notifier=Notifier(address=""),
                **deps,
            ),
        )
        d.reconcile()
        return d


@pytest.fixture
def root(fake_root: Path) -> Path:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    return fake_root


def test_the_vram_timer_looks_at_the_gpus_every_few_seconds_and_starts_the_unit_once_memory_is_back(
    root: Path,
) -> None:
    w = World()
    w.gpus = HELD
    d = w.guard(root)
    d.on_event(AttemptEnded(attempt(VRAM_LINES)))
    d.flush_held(force=True)
    ts = d.state.targets["vllm-qwen"]
    assert ts.waiting_vram_since == NOW and w.sc.calls == [("stop", UNIT)]
    assert "vllm-qwen: waiting for VRAM" in d.status_line()

    reads = w.reads
    assert d.timers() == pytest.approx(VRAM_POLL_S)  # due at once: looked, still held, next look in 2 s
    assert w.reads == reads + 1 and w.sc.calls == [("stop", UNIT)]
    w.now += VRAM_POLL_S / 2
    assert d.timers() == pytest.approx(VRAM_POLL_S / 2)  # not due: the GPUs are not read again
    assert w.reads == reads + 1

    w.gpus = FREE
    w.now += VRAM_POLL_S / 2
    d.timers()
    assert w.sc.calls == [("stop", UNIT), ("start", UNIT)]
    assert w.events[-1].kind is EventKind.RESTARTED_UNIT and "GPU memory is back" in w.events[-1].fields["REASON"]
    assert ts.waiting_vram_since is None
    reads = w.reads
    w.now += 10 * VRAM_POLL_S
    d.timers()  # the wait is over: no more looks
    assert w.reads == reads and w.sc.calls.count(("start", UNIT)) == 1


def test_the_vram_timer_stands_still_once_the_guard_gave_up(root: Path) -> None:
    w = World()
    w.gpus = HELD
    d = w.guard(root)
    d.on_event(AttemptEnded(attempt(VRAM_LINES)))
    d.flush_held(force=True)
    ts = d.state.targets["vllm-qwen"]
    ts.gave_up = ts.remedies[-1]  # e.g. `systemctl stop` by the guard for another reason
    reads = w.reads
    d.timers()
    assert w.reads == reads and w.sc.calls == [("stop", UNIT)]


def test_the_files_timer_looks_for_a_waiting_targets_model_only_when_due(fake_root: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/later"\nuser = "root"\n')
    w = World()
    d = w.guard(fake_root)
    ts = d.state.targets["vllm-qwen"]
    assert ts.waiting == "/models/later does not exist"
    d.timers()  # looked at once: still not there; the next look in FILES_POLL_S
    shutil.copytree(fake_root / "models/tiny", fake_root / "models/later")
    w.now += FILES_POLL_S / 2
    assert d.timers() == pytest.approx(FILES_POLL_S / 2)
    assert ts.waiting is not None and EventKind.TARGET_READY not in [e.kind for e in w.events]
    w.now += FILES_POLL_S / 2
    d.timers()
    assert ts.waiting is None and [e.kind for e in w.events].count(EventKind.TARGET_READY) == 1


def test_a_memory_sample_that_cannot_be_read_is_skipped_and_the_timers_go_on(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vllm_guard.adapters import host

    def unreadable(*_: Any, **__: Any) -> Any:
        raise PermissionError(13, "Permission denied", "/proc/pressure/memory")

    w = World()
    d = w.guard(root)
    monkeypatch.setattr(host, "read_memory_sample", unreadable)
    assert 0.0 < d.timers() <= d.loaded.config.guard.pressure_interval_s
    d.sample_pressure()
    assert d.pressure_warning == {} and EventKind.MEMORY_PRESSURE not in [e.kind for e in w.events]


class FakeFollower:
    """What ``JournalFollower`` is given, and whether it was closed."""

    made: ClassVar[list[FakeFollower]] = []

    def __init__(self, units: list[str], *, cursor: str | None, since_now: bool) -> None:
        self.units, self.cursor, self.since_now, self.closed = units, cursor, since_now, False
        FakeFollower.made.append(self)

    def close(self) -> None:
        self.closed = True


def test_the_journal_is_opened_for_the_configured_units_and_reopened_with_a_fresh_tracker_on_a_new_filter(
    fake_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vllm_guard.adapters import journal

    monkeypatch.setattr(journal, "JournalFollower", FakeFollower)
    monkeypatch.setattr(FakeFollower, "made", [])
    write_config(fake_root, '[guard]\nmetrics = true\n[[target]]\nmodel = "/models/tiny"\nuser = "root"\n')
    d = World().guard(fake_root)
    d._open_journal()
    first = FakeFollower.made[0]
    # no cursor yet: from now on (a first start does not replay the whole journal)
    assert (first.units, first.cursor, first.since_now) == ([UNIT], None, True)
    assert (fake_root / "var/lib/prometheus/node-exporter/vllm_guard.prom").exists()  # the metrics say it is up

    old_tracker = d.tracker
    d.state.cursor = "s=1;i=2"
    write_config(
        fake_root,
        '[guard]\nmetrics = true\n[[target]]\nmodel = "/models/tiny"\nuser = "root"\n'
        '[[target]]\nunit = "vllm-other"\nport = 8001\nmodel = "/models/tiny"\nuser = "root"\n',
    )
    d.reload()  # a new unit: the follower's filter changes
    assert first.closed and len(FakeFollower.made) == 2
    second = FakeFollower.made[1]
    assert (second.units, second.cursor, second.since_now) == ([UNIT, "vllm-other.service"], "s=1;i=2", False)
    assert d.tracker is not old_tracker and set(d.tracker.units) == {UNIT, "vllm-other.service"}


def test_one_entry_that_fails_to_be_handled_does_not_stop_the_batch(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class BrokenProbes:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError("the probes module is broken")

    w = World()
    d = w.guard(root, probes=BrokenProbes)
    feed = Feed()
    feed.line("a line of a unit the guard does not watch", "0" * 32, unit="vllm-unknown.service")
    feed.started(INV1)  # handling it raises: its start probe cannot be made
    feed.line("the second line of the start", INV1)
    feed.exited(INV1)
    feed.failed(INV1)
    batch: list[Entry] = list(feed.out)
    d.follower = Script([batch])
    assert d.take_journal() == len(batch)
    err = capsys.readouterr().err
    assert "vllm-guard: error handling AttemptStarted: " in err and "the probes module is broken" in err
    assert INV1 in d.held  # the entries after the bad one were still handled


def test_the_lines_of_a_start_read_in_the_same_batch_as_the_start_are_kept_as_its_evidence(root: Path) -> None:
    d = World().guard(root)
    feed = Feed()
    feed.started(INV1)
    feed.line("the first line of the start", INV1)
    d.follower = Script([list(feed.out)])
    d.take_journal()
    assert list(d.live["vllm-qwen"].lines) == ["the first line of the start"]
    # the next start, with the last line of the first one before it in the same batch: only its own lines
    feed.out.clear()
    feed.line("the last line of the first start", INV1)
    feed.exited(INV1)
    feed.failed(INV1)
    feed.started(INV2)
    feed.line("the first line of the second start", INV2)
    d.follower = Script([list(feed.out)])
    d.take_journal()
    assert list(d.live["vllm-qwen"].lines) == ["the first line of the second start"]


class Endless:
    """A journal that always has more to read (for 5 s, then it runs dry: a test must not hang)."""

    cursor = "c"

    def __init__(self) -> None:
        self.reads = 0
        self.feed = Feed()
        self.dry_at = time.monotonic() + 5.0

    @property
    def caught_up(self) -> bool:
        return time.monotonic() >= self.dry_at

    def wait(self, timeout_s: float) -> bool:
        return True

    def read(self, max_entries: int = 1000) -> list[Entry]:
        if self.caught_up:
            return []
        self.reads += 1
        self.feed.out.clear()
        self.feed.line("one more line of a busy unit", INV2)
        return list(self.feed.out)


def test_a_journal_that_never_runs_dry_does_not_hold_back_ready_past_the_limit(root: Path) -> None:
    d = World().guard(root)
    d.follower = journal = Endless()
    started = time.monotonic()
    d.catch_up(limit_s=0.2)
    assert time.monotonic() - started < 3.0 and not journal.caught_up
    assert journal.reads > 1
