"""The follower on real journal files (systemd-journal-remote), read through python-systemd."""

from __future__ import annotations

import select
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.journal.export import JournalScript, new_invocation, requires_journal_remote, write_journal
from tests.journal.scenarios import (
    CUDA_OOM,
    KERNEL_MEMCG_OOM,
    KERNEL_OOM,
    KV_FAILURE,
    OTHER,
    READY,
    START_LINES,
    UNIT,
    fill,
    restarts_then_stop,
)

pytestmark = [pytest.mark.journal, requires_journal_remote]
pytest.importorskip("systemd.journal", reason="python-systemd (systemd-python) is not installed")

from vllm_guard.adapters.journal import JournalFollower  # noqa: E402
from vllm_guard.core.attempt import (  # noqa: E402
    AttemptAmended,
    AttemptEnded,
    AttemptReady,
    AttemptStarted,
    AttemptTracker,
    Entry,
    RestartScheduled,
    StartLimitHit,
    TrackerEvent,
    UnitStopped,
)

Build = Callable[..., Path]


def read_all(follower: JournalFollower, batch: int = 1000) -> list[Entry]:
    out: list[Entry] = []
    while True:
        out += follower.read(batch)
        if follower.caught_up:
            return out


def kinds(events: list[TrackerEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_several_attempts_in_a_row(script: JournalScript, build: Build, journal_dir: Path) -> None:
    run = restarts_then_stop(script)
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        entries = read_all(follower)
    assert len(entries) == len(script.entries)
    events = AttemptTracker([UNIT]).feed_all(entries)

    assert kinds(events) == [
        "AttemptStarted",
        "AttemptEnded",
        "RestartScheduled",
        "AttemptStarted",
        "AttemptEnded",
        "RestartScheduled",
        "AttemptStarted",
        "AttemptReady",
        "AttemptEnded",
        "UnitStopped",
    ]
    ended = [e.attempt for e in events if isinstance(e, AttemptEnded)]
    assert [a.invocation_id for a in ended] == run.invocations
    assert [a.result for a in ended] == ["exit-code", "exit-code", "success"]
    assert [a.exit_status for a in ended] == [1, 1, None]
    assert [a.main_pid for a in ended] == run.main_pids
    assert [a.stop_requested for a in ended] == [False, False, True]
    assert fill(KV_FAILURE, core=run.core_pids[0])[0] in ended[0].lines
    assert CUDA_OOM[0] in ended[1].lines
    assert not any("CUDA out of memory" in line for line in ended[0].lines)
    assert ended[0].outcome().result == "exit-code" and ended[0].outcome().exit_status == 1
    restarts = [e for e in events if isinstance(e, RestartScheduled)]
    assert [(r.invocation_id, r.restart_counter) for r in restarts] == [
        (run.invocations[0], 1),
        (run.invocations[1], 2),
    ]
    stopped = [e for e in events if isinstance(e, UnitStopped)]
    assert stopped == [UnitStopped(UNIT, stopped[0].at_us, by_request=True)]


def test_entries_are_decoded(script: JournalScript, build: Build, journal_dir: Path) -> None:
    run = restarts_then_stop(script)
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        entries = read_all(follower)
    first_unit_line = next(e for e in entries if e.source == "unit")
    assert first_unit_line.unit == UNIT
    assert first_unit_line.invocation_id == run.invocations[0]
    assert first_unit_line.pid == run.main_pids[0]
    assert first_unit_line.boot_id == script.boot_id
    assert first_unit_line.realtime_us == int(script.entries[1]["__REALTIME_TIMESTAMP"])
    exited = next(e for e in entries if "Main process exited" in e.message)
    assert exited.source == "pid1"
    assert exited.invocation_id == run.invocations[0]
    assert exited.fields["EXIT_CODE"] == "exited" and exited.fields["EXIT_STATUS"] == "1"
    assert exited.fields["MESSAGE_ID"] == "98e322203f7a4ed290d09fe03c09fe15"
    assert len({e.cursor for e in entries}) == len(entries)


@pytest.mark.parametrize("batch", [1, 3, 7, 1000])
def test_resume_from_a_cursor_loses_and_repeats_nothing(
    script: JournalScript, build: Build, journal_dir: Path, batch: int
) -> None:
    restarts_then_stop(script)
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        everything = [e.cursor for e in read_all(follower)]

    for cut in range(len(everything) + 1):
        seen: list[str] = []
        cursor = None
        first = JournalFollower([UNIT], path=journal_dir)
        while len(seen) < cut:
            got = first.read(min(batch, cut - len(seen)))
            seen += [e.cursor for e in got]
        cursor = first.cursor
        first.close()
        with JournalFollower([UNIT], path=journal_dir, cursor=cursor) as second:
            seen += [e.cursor for e in read_all(second, batch)]
        assert seen == everything, f"cut after {cut} entries"


def test_resume_with_the_tracker_snapshot_gives_the_same_events(
    script: JournalScript, build: Build, journal_dir: Path
) -> None:
    restarts_then_stop(script)
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        entries = read_all(follower)
    expected = AttemptTracker([UNIT]).feed_all(entries)

    for cut in (4, 9, 15):
        tracker = AttemptTracker([UNIT])
        with JournalFollower([UNIT], path=journal_dir) as first:
            events = tracker.feed_all(first.read(cut))
            saved_cursor, saved_state = first.cursor, tracker.snapshot()
        again = AttemptTracker([UNIT])
        again.restore(saved_state)
        with JournalFollower([UNIT], path=journal_dir, cursor=saved_cursor) as second:
            events += again.feed_all(read_all(second))
        assert kinds(events) == kinds(expected), f"cut after {cut}"
        ended = [e.attempt for e in events if isinstance(e, AttemptEnded)]
        assert [a.lines for a in ended] == [e.attempt.lines for e in expected if isinstance(e, AttemptEnded)]


def test_new_entries_wake_the_follower(script: JournalScript, build: Build, journal_dir: Path) -> None:
    restarts_then_stop(script)
    half = len(script.entries) // 2
    build(script, 0, half)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        assert len(read_all(follower)) == half
        assert follower.wait(0.05) is False
        assert follower.read() == []
        build(script, half)  # appended to the same file
        poller = select.poll()
        poller.register(follower.fileno(), select.POLLIN)
        assert poller.poll(5000), "the follower's descriptor did not become readable"
        assert follower.wait(1.0) is True
        rest = read_all(follower)
    assert [e.message for e in rest] == [e["MESSAGE"] for e in script.entries[half:]]


def test_rotation_in_the_middle(script: JournalScript, build: Build, journal_dir: Path) -> None:
    """journald archives system.journal under a new name and starts a fresh one."""
    restarts_then_stop(script)
    half = len(script.entries) // 2
    build(script, 0, half)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        before = read_all(follower)
        archived = journal_dir / "system@8a3e9a6c2f8d4e5a9b7c1d2e3f4a5b6c-0000000000000001-000641c6a1b2c3d4.journal"
        shutil.move(journal_dir / "system.journal", archived)
        build(script, half)
        deadline = 50
        while not follower.wait(0.1) and deadline:
            deadline -= 1
        after = read_all(follower)
        assert follower.reopens >= 1
    got = [e.message for e in before + after]
    assert got == [e["MESSAGE"] for e in script.entries]
    events = AttemptTracker([UNIT]).feed_all(before + after)
    assert kinds(events).count("AttemptEnded") == 3


def test_a_cursor_from_before_the_rotation_still_resumes(
    script: JournalScript, build: Build, journal_dir: Path
) -> None:
    restarts_then_stop(script)
    half = len(script.entries) // 2
    build(script, 0, half, name="system@0001.journal")
    build(script, half)
    with JournalFollower([UNIT], path=journal_dir) as first:
        head = first.read(half - 2)
        cursor = first.cursor
    with JournalFollower([UNIT], path=journal_dir, cursor=cursor) as second:
        rest = read_all(second)
    assert [e.message for e in head + rest] == [e["MESSAGE"] for e in script.entries]


def test_explicit_files(script: JournalScript, build: Build) -> None:
    restarts_then_stop(script)
    path = build(script)
    with JournalFollower([UNIT], files=[path]) as follower:
        assert len(read_all(follower)) == len(script.entries)


def test_interleaved_units_do_not_mix(script: JournalScript, build: Build, journal_dir: Path) -> None:
    a, b = new_invocation(), new_invocation()
    script.started(UNIT, a)
    script.started(OTHER, b)
    kv = fill(KV_FAILURE, core=3155)
    ready = fill(READY, main=4101)
    for i in range(max(len(kv), len(ready))):
        if i < len(kv):
            script.line(UNIT, a, 3101, kv[i])
        script.other("cron.service", "(root) CMD (run-parts /etc/cron.hourly)")
        if i < len(ready):
            script.line(OTHER, b, 4101, ready[i])
    script.main_exited(UNIT, a, status=1)
    script.failed(UNIT, a, "exit-code")
    script.stopping(OTHER, b)
    script.deactivated(OTHER, b)
    script.stopped(OTHER, b)
    build(script)

    with JournalFollower([UNIT, OTHER], path=journal_dir) as follower:
        entries = read_all(follower)
    assert not any("CMD" in e.message for e in entries), "an unrelated unit's line was handed out"
    events = AttemptTracker([UNIT, OTHER]).feed_all(entries)
    ended = {e.attempt.unit: e.attempt for e in events if isinstance(e, AttemptEnded)}
    assert ended[UNIT].result == "exit-code"
    assert ended[OTHER].result == "success"
    assert all(line in ended[UNIT].lines for line in kv)
    assert not any(line in ended[UNIT].lines for line in ready)
    assert not any(line in ended[OTHER].lines for line in kv)
    assert [e.unit for e in events if isinstance(e, AttemptReady)] == [OTHER]

    with JournalFollower([OTHER], path=journal_dir) as only_other:
        assert {e.unit for e in read_all(only_other)} == {OTHER}


@pytest.mark.parametrize(
    ("kernel_line", "owner"),
    [
        (KERNEL_OOM.format(pid=5155), UNIT),  # the engine core of vllm-qwen, named in its "(EngineCore_DP0 pid=N)"
        (KERNEL_MEMCG_OOM.format(pid=6101), OTHER),  # the main process of vllm-coder (its _PID)
        (KERNEL_OOM.format(pid=7777), None),  # a PID of neither unit
    ],
)
def test_kernel_oom_line_goes_to_the_unit_of_the_pid(
    script: JournalScript, build: Build, journal_dir: Path, kernel_line: str, owner: str | None
) -> None:
    a, b = new_invocation(), new_invocation()
    script.started(UNIT, a)
    script.started(OTHER, b)
    script.lines(UNIT, a, 5101, fill(START_LINES, core=5155))
    script.lines(OTHER, b, 6101, fill(READY, main=6101))
    script.kernel("usb 1-1: new high-speed USB device number 3 using xhci_hcd", priority="6")
    script.kernel(kernel_line)
    for unit, inv in ((UNIT, a), (OTHER, b)):
        script.main_exited(unit, inv, status=9, killed=True)
        script.failed(unit, inv, "signal")
    build(script)

    with JournalFollower([UNIT, OTHER], path=journal_dir) as follower:
        entries = read_all(follower)
    assert not any("USB" in e.message for e in entries), "unrelated kernel lines must be dropped"
    kernel = [e for e in entries if e.source == "kernel"]
    assert [e.unit or None for e in kernel] == [owner]

    events = AttemptTracker([UNIT, OTHER]).feed_all(entries)
    ended = {e.attempt.unit: e.attempt for e in events if isinstance(e, AttemptEnded)}
    assert ended[UNIT].signal == "KILL" and ended[OTHER].signal == "KILL"
    for unit in (UNIT, OTHER):
        assert (kernel_line in ended[unit].lines) == (unit == owner)
        assert ended[unit].kernel_oom == (unit == owner)


def test_kernel_line_after_the_result_amends_the_attempt(
    script: JournalScript, build: Build, journal_dir: Path
) -> None:
    a = new_invocation()
    script.started(UNIT, a)
    script.lines(UNIT, a, 5101, fill(START_LINES, core=5155))
    script.main_exited(UNIT, a, status=9, killed=True)
    script.failed(UNIT, a, "oom-kill")
    script.kernel(KERNEL_OOM.format(pid=5101))
    build(script)
    tracker = AttemptTracker([UNIT])
    with JournalFollower([UNIT], path=journal_dir) as follower:
        first = tracker.feed_all(follower.read(len(script.entries) - 1))
        late = tracker.feed_all(read_all(follower))
    assert kinds(first) == ["AttemptStarted", "AttemptEnded"]
    assert kinds(late) == ["AttemptAmended"]
    assert isinstance(late[0], AttemptAmended) and late[0].attempt.kernel_oom
    assert late[0].attempt.result == "oom-kill"


def test_a_persons_stop(script: JournalScript, build: Build, journal_dir: Path) -> None:
    a = new_invocation()
    script.started(UNIT, a)
    script.lines(UNIT, a, 8101, fill(READY, main=8101))
    script.stopping(UNIT, a)
    script.main_exited(UNIT, a, status=15, killed=True)
    script.failed(UNIT, a, "signal")
    script.stopped(UNIT, a)
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        events = AttemptTracker([UNIT]).feed_all(read_all(follower))
    assert kinds(events) == ["AttemptStarted", "AttemptReady", "AttemptEnded", "UnitStopped"]
    ended = events[2]
    assert isinstance(ended, AttemptEnded)
    assert ended.attempt.stop_requested and ended.attempt.signal == "TERM"
    assert isinstance(events[3], UnitStopped) and events[3].by_request


def test_start_limit_hit(script: JournalScript, build: Build, journal_dir: Path) -> None:
    invs = [new_invocation() for _ in range(3)]
    for n, inv in enumerate(invs, start=1):
        script.started(UNIT, inv)
        script.lines(UNIT, inv, 9000 + n, fill(KV_FAILURE, core=9100 + n))
        script.main_exited(UNIT, inv, status=1)
        script.failed(UNIT, inv, "exit-code")
        script.restart_scheduled(UNIT, inv, n)
    script.start_limit_hit(UNIT, invs[-1])
    script.failed(UNIT, invs[-1], "exit-code")  # systemd repeats the result for the old invocation
    script.pid1(UNIT, invs[-1], f"Failed to start {UNIT} - vLLM server.", "be02cf6855d2428ba40df7e9d022f03d")
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        events = AttemptTracker([UNIT]).feed_all(read_all(follower))
    assert kinds(events).count("AttemptEnded") == 3
    assert kinds(events)[-1] == "StartLimitHit"
    assert isinstance(events[-1], StartLimitHit)


def test_since_now_skips_the_past(script: JournalScript, build: Build, journal_dir: Path) -> None:
    restarts_then_stop(script)
    half = len(script.entries) // 2
    build(script, 0, half)
    with JournalFollower([UNIT], path=journal_dir, since_now=True) as follower:
        assert read_all(follower) == []
        build(script, half)
        for _ in range(50):
            if follower.wait(0.1):
                break
        got = read_all(follower)
    assert [e.message for e in got] == [e["MESSAGE"] for e in script.entries[half:]]


def test_a_read_that_stops_at_its_budget_keeps_the_descriptor_readable(
    script: JournalScript, build: Build, journal_dir: Path
) -> None:
    a = new_invocation()
    script.started(UNIT, a)
    for i in range(40):
        script.kernel(f"audit: type=1400 audit({i}.0:1): apparmor=STATUS", priority="6")
    script.line(UNIT, a, 1234, "(APIServer pid=1234) INFO:     Application startup complete.")
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        first = follower.read(2)  # looks at 8 entries at most
        assert not follower.caught_up
        poller = select.poll()
        poller.register(follower.fileno(), select.POLLIN)
        assert poller.poll(0), "a pending read must keep the descriptor readable"
        assert follower.wait(10.0) is True
        rest = read_all(follower)
        assert follower.caught_up
        assert poller.poll(0) == []
    assert [e.source for e in first + rest] == ["pid1", "unit"]


def test_attempt_started_reports_the_new_invocation(script: JournalScript, build: Build, journal_dir: Path) -> None:
    run = restarts_then_stop(script)
    build(script)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        events = AttemptTracker([UNIT]).feed_all(read_all(follower))
    started = [e.invocation_id for e in events if isinstance(e, AttemptStarted)]
    assert started == run.invocations


def test_resume_when_the_cursor_entry_was_vacuumed(script: JournalScript, build: Build, journal_dir: Path) -> None:
    restarts_then_stop(script)
    half = len(script.entries) // 2
    archived = build(script, 0, half, name="system@0001.journal")
    build(script, half)
    with JournalFollower([UNIT], path=journal_dir) as first:
        first.read(half - 3)
        cursor = first.cursor
    archived.unlink()  # journald's vacuum removes the oldest archived files
    with JournalFollower([UNIT], path=journal_dir, cursor=cursor) as second:
        rest = read_all(second)
    assert [e.message for e in rest] == [e["MESSAGE"] for e in script.entries[half:]]


def test_vacuum_while_following_repeats_nothing(script: JournalScript, build: Build, journal_dir: Path) -> None:
    restarts_then_stop(script)
    half = len(script.entries) // 2
    archived = build(script, 0, half, name="system@0001.journal")
    build(script, half)
    with JournalFollower([UNIT], path=journal_dir) as follower:
        assert len(read_all(follower)) == len(script.entries)
        archived.unlink()
        for _ in range(50):
            if follower.wait(0.1):
                break
        assert read_all(follower) == []
        assert follower.reopens >= 1


RECORDED = Path(__file__).parent / "data" / "systemd-252-restarts-and-stops.export"


def test_a_recorded_systemd_252_journal(journal_dir: Path) -> None:
    """Real PID 1 output: restarts to the start limit, a SIGKILL, a manual restart, stops."""
    write_journal(RECORDED.read_bytes(), journal_dir / "system.journal")
    units = ["vfail.service", "vok.service", "vkill.service", "vdone.service"]
    with JournalFollower(units, path=journal_dir) as follower:
        entries = read_all(follower)
    assert len(entries) == RECORDED.read_bytes().count(b"\n\n")
    events = AttemptTracker(units).feed_all(entries)

    def of(unit: str) -> list[TrackerEvent]:
        return [e for e in events if getattr(e, "unit", None) == unit or (
            isinstance(e, AttemptEnded) and e.attempt.unit == unit)]  # fmt: skip

    vfail = of("vfail.service")
    assert kinds(vfail) == ["AttemptStarted", "AttemptEnded", "RestartScheduled"] * 3 + ["StartLimitHit"]
    assert [e.restart_counter for e in vfail if isinstance(e, RestartScheduled)] == [1, 2, 3]
    for e in vfail:
        if isinstance(e, AttemptEnded):
            assert (e.attempt.result, e.attempt.exit_status) == ("exit-code", 1)
            assert e.attempt.lines.count("boom") == 1 and "starting" in e.attempt.lines

    vkill = of("vkill.service")
    assert kinds(vkill) == ["AttemptStarted", "AttemptEnded", "RestartScheduled", "AttemptStarted", "AttemptEnded",
                            "UnitStopped"]  # fmt: skip
    first_kill = next(e.attempt for e in vkill if isinstance(e, AttemptEnded))
    assert (first_kill.result, first_kill.signal) == ("signal", "KILL")

    vok = of("vok.service")  # systemctl restart, then systemctl stop
    assert kinds(vok) == ["AttemptStarted", "AttemptEnded", "AttemptStarted", "AttemptEnded", "UnitStopped"]
    assert all(e.attempt.stop_requested and e.attempt.result == "success" for e in vok if isinstance(e, AttemptEnded))

    vdone = of("vdone.service")  # its one line came without _SYSTEMD_INVOCATION_ID
    assert kinds(vdone) == ["AttemptStarted", "AttemptEnded"]
    done = next(e.attempt for e in vdone if isinstance(e, AttemptEnded))
    assert done.result == "success" and "done" in done.lines


def test_since_now_on_a_journal_with_nothing_of_the_unit_yet(
    script: JournalScript, build: Build, journal_dir: Path
) -> None:
    script.other("cron.service", "(root) CMD (run-parts /etc/cron.hourly)")
    build(script)
    a = new_invocation()
    script.started(UNIT, a)
    script.line(UNIT, a, 1234, "(APIServer pid=1234) INFO:     Application startup complete.")
    with JournalFollower([UNIT], path=journal_dir, since_now=True) as follower:
        assert read_all(follower) == []
        assert follower.cursor is None
        build(script, 1)
        for _ in range(50):
            if follower.wait(0.1):
                break
        got = read_all(follower)
    assert [e.source for e in got] == ["pid1", "unit"]


def test_since_now_keeps_what_the_unit_wrote_before_the_first_read(
    script: JournalScript, build: Build, journal_dir: Path
) -> None:
    # a start that fails within 0.1 s of the guard opening the journal: nothing of the unit existed at the
    # open, everything it wrote before the first read must still be read
    script.other("cron.service", "(root) CMD (run-parts /etc/cron.hourly)")
    build(script)
    a = new_invocation()
    script.started(UNIT, a)
    script.line(UNIT, a, 1234, "ValueError: To serve at least one request with the model's max seq len (4096)")
    with JournalFollower([UNIT], path=journal_dir, since_now=True) as follower:
        build(script, 1)  # written after the open, before any read
        for _ in range(50):
            if follower.wait(0.1):
                break
        got = read_all(follower)
    assert [e.source for e in got] == ["pid1", "unit"]


def test_the_local_system_journal_opens_and_reads() -> None:
    unit = f"vllm-guard-test-{new_invocation()}.service"  # no entries anywhere
    with JournalFollower([unit]) as follower:
        assert read_all(follower) == []
        assert follower.wait(0.01) is False
