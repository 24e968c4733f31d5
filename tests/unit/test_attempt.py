"""AttemptTracker: journal entries in, attempts and events out (pure, no journal needed).

systemd's lines below are what systemd 252 writes (recorded from a real PID 1 in a container);
the "old" variants drop MESSAGE_ID and the structured fields, as older systemd versions do, so the
tracker has to read the text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from vllm_guard.core.attempt import (
    Attempt,
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
    kernel_line_pid,
    kernel_line_unit,
)

pytestmark = pytest.mark.unit

U = "vllm-qwen.service"
V = "vllm-coder.service"
INV1 = "29ee58dc29824f7abb707cb0cd237ca8"
INV2 = "6ab206424c8e4a48999e742e7e3c0e0c"
INV3 = "2ea13fbbde334793917e6b5f6e76387f"


@dataclass
class Feed:
    """Builds entries with growing times, with (modern) or without (old) systemd's structured fields."""

    modern: bool = True
    t: int = 1_796_016_463_000_000
    n: int = 0
    out: list[Entry] = field(default_factory=list)

    def _entry(self, source: str, unit: str, inv: str | None, pid: int | None, msg: str, **fields: str) -> Entry:
        self.t += 1000
        self.n += 1
        e = Entry(f"c{self.n}", self.t, None, None, source, unit, inv, pid, msg, fields)
        self.out.append(e)
        return e

    def line(self, msg: str, inv: str | None = INV1, unit: str = U, pid: int = 100) -> Entry:
        return self._entry("unit", unit, inv if self.modern else None, pid, msg)

    def pid1(self, msg: str, inv: str | None, unit: str = U, **fields: str) -> Entry:
        if not self.modern:
            fields = {}
            inv = None
        return self._entry("pid1", unit, inv, 1, msg, **fields)

    def kernel(self, msg: str, unit: str = "") -> Entry:
        return self._entry("kernel", unit, None, None, msg)

    # systemd's messages
    def started(self, inv: str, unit: str = U) -> Entry:
        return self.pid1(f"Started {unit} - vLLM.", inv, unit, MESSAGE_ID="39f53479d3a045ac8e11786248231fbf",
                         JOB_TYPE="start")  # fmt: skip

    def exited(self, inv: str, status: int = 1, unit: str = U) -> Entry:
        return self.pid1(f"{unit}: Main process exited, code=exited, status={status}/FAILURE", inv, unit,
                         MESSAGE_ID="98e322203f7a4ed290d09fe03c09fe15", EXIT_CODE="exited", EXIT_STATUS=str(status))  # fmt: skip

    def killed(self, inv: str, sig: int = 9, name: str = "KILL", unit: str = U) -> Entry:
        return self.pid1(f"{unit}: Main process exited, code=killed, status={sig}/{name}", inv, unit,
                         MESSAGE_ID="98e322203f7a4ed290d09fe03c09fe15", EXIT_CODE="killed", EXIT_STATUS=str(sig))  # fmt: skip

    def failed(self, inv: str, result: str = "exit-code", unit: str = U) -> Entry:
        return self.pid1(f"{unit}: Failed with result '{result}'.", inv, unit,
                         MESSAGE_ID="d9b373ed55a64feb8242e02dbe79a49c", UNIT_RESULT=result)  # fmt: skip

    def restart(self, inv: str, n: int, unit: str = U) -> Entry:
        return self.pid1(f"{unit}: Scheduled restart job, restart counter is at {n}.", inv, unit,
                         MESSAGE_ID="5eb03494b6584870a536b337290809b3", N_RESTARTS=str(n))  # fmt: skip

    def stopped(self, inv: str, job: str, unit: str = U) -> Entry:
        return self.pid1(f"Stopped {unit} - vLLM.", inv, unit, MESSAGE_ID="9d1aaa27d60140bd96365438aad20286",
                         JOB_TYPE=job)  # fmt: skip

    def stopping(self, inv: str, unit: str = U) -> Entry:
        return self.pid1(f"Stopping {unit} - vLLM...", inv, unit, MESSAGE_ID="de5b426a63be47a7b6ac3eaac82e2f6f",
                         JOB_TYPE="stop")  # fmt: skip

    def deactivated(self, inv: str, unit: str = U) -> Entry:
        return self.pid1(f"{unit}: Deactivated successfully.", inv, unit,
                         MESSAGE_ID="7ad2d189f7e94e70a38c781354912448")  # fmt: skip


def names(events: list[TrackerEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


def ended(events: list[TrackerEvent]) -> list[Attempt]:
    return [e.attempt for e in events if isinstance(e, AttemptEnded)]


@pytest.mark.parametrize("modern", [True, False], ids=["systemd-252-fields", "text-only"])
def test_fail_restart_fail_restart_serve_stop(modern: bool) -> None:
    f = Feed(modern=modern)
    f.started(INV1)
    f.line("ValueError: To serve at least one request with the model's max seq len (131072) ...", INV1, pid=101)
    f.exited(INV1)
    f.failed(INV1)
    f.restart(INV1, 1)
    f.stopped(INV1, "restart")
    f.started(INV2)
    f.line("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.88 GiB.", INV2, pid=102)
    f.killed(INV2)
    f.failed(INV2, "oom-kill")
    f.restart(INV2, 2)
    f.stopped(INV2, "restart")
    f.started(INV3)
    f.line("(APIServer pid=103) INFO:     Application startup complete.", INV3, pid=103)
    f.stopping(INV3)
    f.deactivated(INV3)
    f.stopped(INV3, "stop")
    events = AttemptTracker([U]).feed_all(f.out)

    assert names(events) == [
        "AttemptStarted", "AttemptEnded", "RestartScheduled",
        "AttemptStarted", "AttemptEnded", "RestartScheduled",
        "AttemptStarted", "AttemptReady", "AttemptEnded", "UnitStopped",
    ]  # fmt: skip
    a1, a2, a3 = ended(events)
    assert (a1.result, a1.exit_status, a1.signal, a1.main_pid) == ("exit-code", 1, None, 101)
    assert (a2.result, a2.exit_status, a2.signal, a2.main_pid) == ("oom-kill", None, "KILL", 102)
    assert (a3.result, a3.stop_requested, a3.ready_us is not None) == ("success", True, True)
    assert a1.outcome().result == "exit-code" and a2.outcome().signal == "KILL"
    assert "CUDA out of memory" not in " ".join(a1.lines) and "CUDA out of memory" in " ".join(a2.lines)
    restarts = [e for e in events if isinstance(e, RestartScheduled)]
    assert [r.restart_counter for r in restarts] == [1, 2]
    if modern:
        assert [a.invocation_id for a in (a1, a2, a3)] == [INV1, INV2, INV3]
        assert [r.invocation_id for r in restarts] == [INV1, INV2]


@pytest.mark.parametrize(
    ("message", "fields", "result", "exit_status", "signal"),
    [
        ("u: Main process exited, code=exited, status=1/FAILURE", {"EXIT_CODE": "exited", "EXIT_STATUS": "1"},
         "exit-code", 1, None),
        ("u: Main process exited, code=killed, status=9/KILL", {"EXIT_CODE": "killed", "EXIT_STATUS": "9"},
         "signal", None, "KILL"),
        ("u: Main process exited, code=dumped, status=6/ABRT", {}, "core-dump", None, "ABRT"),
        ("u: Main process exited, code=exited, status=78/CONFIG", {}, "exit-code", 78, None),
        ("irrelevant text", {"EXIT_CODE": "killed", "EXIT_STATUS": "11"}, "signal", None, "SEGV"),
    ],
)  # fmt: skip
def test_exit_status_and_signal(
    message: str, fields: dict[str, str], result: str, exit_status: int | None, signal: str | None
) -> None:
    f = Feed()
    f.started(INV1)
    f.pid1(message, INV1, MESSAGE_ID="98e322203f7a4ed290d09fe03c09fe15", **fields)
    f.failed(INV1, result)
    (a,) = ended(AttemptTracker([U]).feed_all(f.out))
    assert (a.result, a.exit_status, a.signal) == (result, exit_status, signal)


def test_a_control_process_exit_does_not_hide_the_main_process_exit() -> None:
    f = Feed()
    f.started(INV1)
    f.exited(INV1, 1)
    f.pid1(f"{U}: Control process exited, code=exited, status=2/INVALIDARGUMENT", INV1,
           MESSAGE_ID="98e322203f7a4ed290d09fe03c09fe15", EXIT_CODE="exited", EXIT_STATUS="2")  # fmt: skip
    f.failed(INV1)
    (a,) = ended(AttemptTracker([U]).feed_all(f.out))
    assert a.exit_status == 1


def test_late_lines_in_the_same_batch_join_the_ended_attempt() -> None:
    f = Feed()
    f.started(INV1)
    f.line("INFO first line", INV1)
    f.exited(INV1)
    f.failed(INV1)
    f.line("RuntimeError: Engine core initialization failed. See root cause above.", INV1)
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted", "AttemptEnded"]
    assert ended(events)[0].lines[-1].startswith("RuntimeError: Engine core initialization failed")


def test_late_lines_in_a_later_batch_amend_the_attempt() -> None:
    f = Feed()
    f.started(INV1)
    f.exited(INV1)
    f.failed(INV1)
    tracker = AttemptTracker([U])
    assert names(tracker.feed_all(f.out)) == ["AttemptStarted", "AttemptEnded"]
    late = Feed(t=f.t, n=f.n)
    late.line("Traceback (most recent call last):", INV1)
    late.line("RuntimeError: Engine core initialization failed. See root cause above.", INV1)
    events = tracker.feed_all(late.out)
    assert names(events) == ["AttemptAmended"]  # one per batch, the latest state
    assert isinstance(events[0], AttemptAmended)
    assert events[0].attempt.lines[-2:] == tuple(e.message for e in late.out)
    assert events[0].attempt.result == "exit-code"


def test_a_late_line_of_the_previous_attempt_does_not_begin_a_new_one() -> None:
    f = Feed()
    f.started(INV1)
    f.exited(INV1)
    f.failed(INV1)
    f.restart(INV1, 1)
    f.started(INV2)
    f.line("late line of the first attempt", INV1)
    f.line("line of the second attempt", INV2)
    tracker = AttemptTracker([U])
    events = tracker.feed_all(f.out)
    # the late line is folded into the AttemptEnded of the same batch
    assert names(events) == ["AttemptStarted", "AttemptEnded", "RestartScheduled", "AttemptStarted"]
    assert ended(events)[0].lines[-1] == "late line of the first attempt"
    current = tracker.current(U)
    assert current is not None and current.invocation_id == INV2
    assert current.lines[-1] == "line of the second attempt"
    assert "late line of the first attempt" not in current.lines


def test_lines_without_invocation_id_go_to_the_latest_attempt() -> None:
    f = Feed()
    f.started(INV1)
    f.line("done", None)
    f.deactivated(INV1)
    (a,) = ended(AttemptTracker([U]).feed_all(f.out))
    assert "done" in a.lines and a.result == "success"


def test_a_new_invocation_closes_an_attempt_whose_end_was_missed() -> None:
    f = Feed()
    f.line("line of attempt 1", INV1)
    f.line("line of attempt 2", INV2)
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted", "AttemptEnded", "AttemptStarted"]
    assert ended(events)[0].result is None


def test_start_limit_after_the_last_failure() -> None:
    f = Feed()
    f.started(INV1)
    f.exited(INV1)
    f.failed(INV1)
    f.restart(INV1, 3)
    f.stopped(INV1, "restart")
    f.pid1(f"{U}: Start request repeated too quickly.", INV1)
    f.failed(INV1)  # repeated by systemd for the same invocation
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted", "AttemptEnded", "RestartScheduled", "StartLimitHit"]


def test_start_limit_hit_as_a_result() -> None:
    f = Feed()
    f.started(INV1)
    f.failed(INV1, "start-limit-hit")
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted", "AttemptEnded", "StartLimitHit"]
    assert isinstance(events[-1], StartLimitHit)


def test_a_manual_restart_is_not_a_stop() -> None:
    f = Feed()
    f.started(INV1)
    f.stopping(INV1)  # systemctl restart begins with a stop job message
    f.deactivated(INV1)
    f.stopped(INV1, "restart")
    f.started(INV2)
    events = AttemptTracker([U]).feed_all(f.out)
    assert "UnitStopped" not in names(events)
    assert ended(events)[0].stop_requested


def test_ready_is_reported_once() -> None:
    f = Feed()
    f.started(INV1)
    f.line("INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)", INV1)
    f.line("(APIServer pid=100) INFO:     Application startup complete.", INV1)
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted", "AttemptReady"]
    assert isinstance(events[1], AttemptReady)


def test_lines_are_capped_head_and_tail() -> None:
    f = Feed()
    f.started(INV1)
    for i in range(100):
        f.line(f"line {i}", INV1)
    f.exited(INV1)
    f.failed(INV1)
    (a,) = ended(AttemptTracker([U], head_lines=10, tail_lines=20).feed_all(f.out))
    assert len(a.lines) == 30
    assert a.lines[0] == f.out[0].message and a.lines[9] == "line 8"
    assert a.lines[-1] == f.out[-1].message
    assert a.lines_dropped == 101 + 2 - 30


def test_units_do_not_mix_and_unknown_units_are_ignored() -> None:
    f = Feed()
    f.started(INV1, U)
    f.started(INV2, V)
    f.line("qwen line", INV1, U)
    f.line("coder line", INV2, V)
    f.line("someone else", INV3, "cron.service")
    f.exited(INV1, unit=U)
    f.failed(INV1, unit=U)
    tracker = AttemptTracker([U, V])
    events = tracker.feed_all(f.out)
    (a,) = ended(events)
    assert a.unit == U and "coder line" not in a.lines and "qwen line" in a.lines
    coder = tracker.open_attempt(V)
    assert coder is not None and "coder line" in coder.lines and "qwen line" not in coder.lines
    assert all(getattr(e, "unit", U) != "cron.service" for e in events)


@pytest.mark.parametrize(
    ("line", "pid", "unit"),
    [
        ("Out of memory: Killed process 7899 (python) total-vm:26184840kB, anon-rss:15370088kB", 7899, None),
        ("Memory cgroup out of memory: Killed process 3412 (python3) total-vm:1204512kB", 3412, None),
        ("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
         "oom_memcg=/system.slice/vllm-qwen.service,task_memcg=/system.slice/vllm-qwen.service,task=python3,"
         "pid=3412,uid=0", 3412, "vllm-qwen.service"),
        ("oom_reaper: reaped process 3412 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB", 3412, None),
        ("NVRM: Xid (PCI:0000:3b:00): 79, pid=3412, name=python3, GPU has fallen off the bus.", 3412, None),
        ("usb 1-1: new high-speed USB device number 3 using xhci_hcd", None, None),
        ("python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0", None, None),
    ],
)  # fmt: skip
def test_kernel_lines(line: str, pid: int | None, unit: str | None) -> None:
    assert kernel_line_pid(line) == pid
    assert kernel_line_unit(line) == unit


def test_kernel_oom_attaches_by_pid_from_the_vllm_prefix() -> None:
    f = Feed()
    f.started(INV1, U)
    f.started(INV2, V)
    f.line("(EngineCore_DP0 pid=4242) INFO 10-21 09:11:57 [gpu_worker.py:298] Available KV cache memory", INV1, U)
    f.line("(APIServer pid=200) INFO:     Application startup complete.", INV2, V, pid=200)
    f.kernel("Out of memory: Killed process 4242 (python3) total-vm:26184840kB")
    tracker = AttemptTracker([U, V])
    tracker.feed_all(f.out)
    qwen, coder = tracker.open_attempt(U), tracker.open_attempt(V)
    assert qwen is not None and coder is not None
    assert qwen.kernel_oom and not coder.kernel_oom
    assert 4242 in qwen.pids


def test_snapshot_restore_round_trip_through_json() -> None:
    f = Feed()
    f.started(INV1)
    f.line("(EngineCore_DP0 pid=4242) INFO loading", INV1)
    f.exited(INV1)
    f.failed(INV1)
    f.restart(INV1, 1)
    f.started(INV2)
    f.line("INFO loading again", INV2, pid=300)
    tail = Feed(t=f.t, n=f.n)
    tail.kernel("Out of memory: Killed process 4242 (python3)")  # a PID of the earlier attempt
    tail.line("late line of attempt 1", INV1)  # previous attempts are not kept across a restore
    tail.killed(INV2)
    tail.failed(INV2, "signal")

    whole = AttemptTracker([U])
    expected = whole.feed_all(f.out + tail.out)
    first = AttemptTracker([U])
    got = first.feed_all(f.out)
    saved = json.loads(json.dumps(first.snapshot()))
    second = AttemptTracker([U])
    second.restore(saved)
    got += second.feed_all(tail.out)
    assert [n for n in names(got)] == [n for n in names(expected) if n != "AttemptAmended"]
    assert ended(got)[-1] == ended(expected)[-1]


def test_restore_refuses_an_unknown_version() -> None:
    with pytest.raises(ValueError, match="version"):
        AttemptTracker([U]).restore({"version": 99, "units": {}})


def test_events_carry_the_unit_and_time() -> None:
    f = Feed()
    e = f.started(INV1)
    (started,) = AttemptTracker([U]).feed(e)
    assert started == AttemptStarted(U, INV1, e.realtime_us)
    stop = Feed(t=f.t)
    s = stop.stopped(INV1, "stop")
    assert AttemptTracker([U]).feed(s) == [UnitStopped(U, s.realtime_us, by_request=True)]


def test_type_notify_starting_then_started_is_one_attempt() -> None:
    f = Feed()
    f.pid1(f"Starting {U} - vLLM...", INV1, MESSAGE_ID="7d4958e842da4a758f6c1cdc7b36dcc5", JOB_TYPE="start")
    f.line("INFO loading weights", INV1)
    f.started(INV1)  # after READY=1
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted"]
    assert isinstance(events[0], AttemptStarted) and events[0].at_us == f.out[0].realtime_us


def test_an_old_systemd_without_ids_takes_the_first_id_seen() -> None:
    f = Feed()
    f.out.append(Entry("c0", f.t, None, None, "pid1", U, None, 1, f"Started {U} - vLLM.", {}))
    f.line("INFO loading", INV1)
    f.exited(INV1)
    f.failed(INV1)
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted", "AttemptEnded"]
    assert ended(events)[0].invocation_id == INV1 and "INFO loading" in ended(events)[0].lines


def test_the_order_a_live_journald_gave() -> None:
    """Seen on systemd 252: "Started" after the unit's first lines, "Main process exited" before its last."""
    f = Feed()
    f.line("line 1", INV1, pid=69)
    f.started(INV1)
    f.line("line 2", INV1, pid=69)
    f.exited(INV1)
    f.line("Traceback-last", INV1, pid=69)
    f.failed(INV1)
    events = AttemptTracker([U]).feed_all(f.out)
    assert names(events) == ["AttemptStarted", "AttemptEnded"]
    (a,) = ended(events)
    assert a.started_us == f.out[0].realtime_us and a.main_pid == 69
    assert [line for line in a.lines if line.startswith(("line", "Trace"))] == ["line 1", "line 2", "Traceback-last"]
