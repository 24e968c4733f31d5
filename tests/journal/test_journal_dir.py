"""`status` and `history --journal-dir`: the guard's events of many hosts, read from a collector's folder.

The folder is laid out as systemd-journal-remote writes it (one remote-HOST.journal per sender, archived files
beside it as remote-HOST@....journal), each file made by systemd-journal-remote itself from export-format entries
whose fields are the guard's own (``Event.journal_fields()``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.journal.export import BOOT_ID, START_US, requires_journal_remote, write_journal
from vllm_guard.core.events import Event, EventKind

pytestmark = [pytest.mark.journal, requires_journal_remote]
pytest.importorskip("systemd.journal", reason="python-systemd (systemd-python) is not installed")

from vllm_guard.adapters.journal import file_host, read_guard_events  # noqa: E402

UNIT = "vllm-qwen.service"
OTHER_UNIT = "vllm-coder.service"
S = 1_000_000  # µs

Cli = Callable[..., CliResult]


def entry(at_s: float, event: Event, *, hostname: str | None, pid: int = 4242) -> dict[str, str]:
    """One guard event as journald stores it (the guard's fields plus what journald adds)."""
    fields = {
        "__REALTIME_TIMESTAMP": str(START_US + int(at_s * S)),
        "__MONOTONIC_TIMESTAMP": str(275_000_000 + int(at_s * S)),
        "_BOOT_ID": BOOT_ID,
        "_TRANSPORT": "journal",
        "_PID": str(pid),
        "_COMM": "vllm-guard",
        "_SYSTEMD_UNIT": "vllm-guard.service",
        "MESSAGE": event.message,
        **event.journal_fields(),
    }
    if hostname is not None:
        fields["_HOSTNAME"] = hostname
    return fields


def other_line(at_s: float, message: str, *, hostname: str | None, unit: str = UNIT) -> dict[str, str]:
    """A line that is not a guard event: the vLLM unit's output."""
    fields = {
        "__REALTIME_TIMESTAMP": str(START_US + int(at_s * S)),
        "__MONOTONIC_TIMESTAMP": str(275_000_000 + int(at_s * S)),
        "_BOOT_ID": BOOT_ID,
        "_TRANSPORT": "stdout",
        "_PID": "777",
        "SYSLOG_IDENTIFIER": "python3",
        "_SYSTEMD_UNIT": unit,
        "MESSAGE": message,
    }
    if hostname is not None:
        fields["_HOSTNAME"] = hostname
    return fields


def export(entries: list[dict[str, str]]) -> bytes:
    return "".join("".join(f"{k}={v}\n" for k, v in e.items()) + "\n" for e in entries).encode()


def started(version: str = "0.9.0") -> Event:
    return Event(EventKind.GUARD_STARTED, f"vllm-guard {version} guarding {UNIT}", {"VERSION": version})


def failure(unit: str = UNIT) -> Event:
    return Event(
        EventKind.FAILURE_DETECTED,
        f"{unit}: attempt failed: kv_cache_insufficient (profile)",
        {"UNIT": unit, "KIND": "kv_cache_insufficient", "PHASE": "profile"},
    )


def remedy(unit: str = UNIT) -> Event:
    return Event(
        EventKind.REMEDY_APPLIED,
        f"{unit}: max_model_len 32768 -> 28720 (vLLM estimates 30240 fit)",
        {
            "UNIT": unit,
            "KIND": "kv_cache_insufficient",
            "CHANGE": "max_model_len 32768 -> 28720",
            "FLAGS_BEFORE": "--max-model-len=32768",
            "FLAGS_AFTER": "--max-model-len=28720",
        },
    )


def healthy(unit: str = UNIT) -> Event:
    return Event(
        EventKind.VERIFIED_HEALTHY,
        f"{unit}: verified healthy: qwen answered a chat request 4.2 s after the start",
        {"UNIT": unit, "FLAGS_AFTER": "--max-model-len=28720", "TIME_TO_READY_S": "4.2"},
    )


def gave_up(unit: str = UNIT) -> Event:
    return Event(
        EventKind.GAVE_UP,
        f"{unit}: stopped restarting: the weights do not fit and no fallback is configured",
        {"UNIT": unit, "KIND": "cuda_oom_load", "REASON": "the weights do not fit and no fallback is configured"},
    )


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """A collector's folder: gpu-a (named by _HOSTNAME and file), gpu-b (its file named by address, split in an
    archived file and the live one) and 10.0.0.7 (an old sender without _HOSTNAME), interleaved in time."""
    folder = tmp_path / "remote"
    a = [
        entry(0, started(), hostname="gpu-a"),
        other_line(1, "INFO 11-30 05:27:44 [api_server.py:1] vLLM API server version 0.11.0", hostname="gpu-a"),
        entry(3, failure(), hostname="gpu-a"),
        entry(4, remedy(), hostname="gpu-a"),
        entry(9, healthy(), hostname="gpu-a"),
    ]
    write_journal(export(a), folder / "remote-gpu-a.journal")
    b_old = [entry(1, started(), hostname="gpu-b", pid=1), entry(2, failure(OTHER_UNIT), hostname="gpu-b", pid=1)]
    write_journal(export(b_old), folder / "remote-10.0.0.9@0123456789abcdef-0000000000000001-0005f1.journal")
    b_new = [entry(5, remedy(OTHER_UNIT), hostname="gpu-b", pid=1), entry(8, healthy(OTHER_UNIT), hostname="gpu-b")]
    write_journal(export(b_new), folder / "remote-10.0.0.9.journal")
    c = [entry(2.5, started("0.8.1"), hostname=None), entry(6, failure(), hostname=None)]
    c.append(entry(7, gave_up(), hostname=None))
    write_journal(export(c), folder / "remote-10.0.0.7.journal")
    return folder


def test_the_file_name_gives_the_sender() -> None:
    assert file_host(Path("remote-gpu-a.journal")) == "gpu-a"
    assert file_host(Path("remote-10.0.0.9@0123-0001-0005f1.journal")) == "10.0.0.9"
    assert file_host(Path("remote-gpu-a.journal~")) == "gpu-a"
    assert file_host(Path("system.journal")) == ""


def test_every_hosts_events_are_read_in_time_order_with_their_host(fleet: Path) -> None:
    got = read_guard_events(fleet)
    assert [(e.at - START_US / 1e6, e.host, e.event) for e in got] == [
        (0.0, "gpu-a", "guard_started"),
        (1.0, "gpu-b", "guard_started"),
        (2.0, "gpu-b", "failure_detected"),
        (2.5, "10.0.0.7", "guard_started"),
        (3.0, "gpu-a", "failure_detected"),
        (4.0, "gpu-a", "remedy_applied"),
        (5.0, "gpu-b", "remedy_applied"),
        (6.0, "10.0.0.7", "failure_detected"),
        (7.0, "10.0.0.7", "gave_up"),
        (8.0, "gpu-b", "verified_healthy"),
        (9.0, "gpu-a", "verified_healthy"),
    ]
    remedy_b = got[6]
    assert remedy_b.unit == OTHER_UNIT and remedy_b.file_host == "10.0.0.9"
    assert remedy_b.fields["CHANGE"] == "max_model_len 32768 -> 28720"


def test_history_lists_each_hosts_remedies_with_the_host_named(fleet: Path, cli: Cli) -> None:
    r = cli("history", "--journal-dir", fleet)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) == 11, r.out
    remedies = [line for line in lines if "remedy_applied" in line]
    assert len(remedies) == 2
    assert remedies[0].split()[3:5] == ["gpu-a", UNIT], remedies[0]
    assert remedies[1].split()[3:5] == ["gpu-b", OTHER_UNIT], remedies[1]
    assert remedies[0].endswith("remedy_applied: max_model_len 32768 -> 28720 (vLLM estimates 30240 fit)")
    assert "10.0.0.7" in next(line for line in lines if "gave_up" in line)


def test_history_of_one_unit_and_one_host(fleet: Path, cli: Cli) -> None:
    r = cli("history", "vllm-qwen", "--journal-dir", fleet, "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["schema"] == 1 and data["unit"] == UNIT
    assert [(e["host"], e["event"]) for e in data["events"]] == [
        ("gpu-a", "failure_detected"),
        ("gpu-a", "remedy_applied"),
        ("10.0.0.7", "failure_detected"),
        ("10.0.0.7", "gave_up"),
        ("gpu-a", "verified_healthy"),
    ]
    # a host by its _HOSTNAME or by the name its file was given: the same entries, named by _HOSTNAME
    by_name = json.loads(cli("history", "--journal-dir", fleet, "--host", "gpu-b", "--json").out)["events"]
    by_file = json.loads(cli("history", "--journal-dir", fleet, "--host", "10.0.0.9", "--json").out)["events"]
    assert by_name == by_file
    assert [e["event"] for e in by_name] == ["guard_started", "failure_detected", "remedy_applied", "verified_healthy"]
    assert {e["host"] for e in by_name} == {"gpu-b"}
    none = cli("history", "vllm-qwen", "--journal-dir", fleet, "--host", "gpu-b")
    assert none.code == 0 and none.out.strip() == f"no vllm-guard events of {UNIT} from host gpu-b in {fleet}"


def test_status_says_per_host_what_the_latest_events_say(fleet: Path, cli: Cli) -> None:
    r = cli("status", "--journal-dir", fleet, "--json")
    assert r.code == 0, r.err
    hosts = {h["host"]: h for h in json.loads(r.out)["hosts"]}
    assert sorted(hosts) == ["10.0.0.7", "gpu-a", "gpu-b"]
    (a,) = hosts["gpu-a"]["targets"]
    assert (a["unit"], a["state"], a["flags"], a["remedies"]) == (UNIT, "healthy", "--max-model-len=28720", 1)
    assert a["last_failure"]["kind"] == "kv_cache_insufficient"
    assert a["last_verified"]["time_to_ready_s"] == 4.2
    assert hosts["gpu-a"]["guard"]["state"] == "running" and hosts["gpu-a"]["guard"]["version"] == "0.9.0"
    (b,) = hosts["gpu-b"]["targets"]
    assert (b["unit"], b["state"]) == (OTHER_UNIT, "healthy")
    (c,) = hosts["10.0.0.7"]["targets"]
    assert c["state"] == "gave_up" and "no fallback" in c["gave_up"]["reason"]

    text = cli("status", "--journal-dir", fleet).out
    assert "gpu-a: vllm-guard 0.9.0 started at" in text
    assert f"  {UNIT}: healthy (as of" in text and f"  {OTHER_UNIT}: healthy (as of" in text
    assert "    gave up: the weights do not fit and no fallback is configured" in text
    only = json.loads(cli("status", "--journal-dir", fleet, "--host", "10.0.0.7", "--json").out)
    assert [h["host"] for h in only["hosts"]] == ["10.0.0.7"]


def test_a_folder_that_cannot_be_read_is_one_clear_message(tmp_path: Path, cli: Cli) -> None:
    missing = cli("status", "--journal-dir", tmp_path / "nowhere")
    assert missing.code == 66 and "error[journal-dir-missing]" in missing.err and "hint:" in missing.err
    (tmp_path / "empty").mkdir()
    empty = cli("history", "--journal-dir", tmp_path / "empty")
    assert empty.code == 66 and "no journal files" in empty.err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "remote-gpu-a.journal").write_bytes(b"not a journal file")
    bad = cli("history", "--journal-dir", broken)
    assert bad.code == 66 and "Traceback" not in bad.err, bad.err
    assert "error[journal-dir-unreadable]" in bad.err and "none of its 1 journal file(s) can be read" in bad.err


def test_a_damaged_file_is_left_out_with_a_warning_and_the_rest_is_read(fleet: Path, cli: Cli) -> None:
    (fleet / "remote-gpu-c.journal~").write_bytes(b"\0" * 4096)
    r = cli("history", "--journal-dir", fleet, "--json")
    assert r.code == 0, r.err
    assert f"warning[journal-file-unreadable]: {fleet / 'remote-gpu-c.journal~'}" in r.err and "hint:" in r.err
    assert len(json.loads(r.out)["events"]) == 11


def test_host_needs_journal_dir_and_history_needs_a_unit_without_it(tmp_path: Path, cli: Cli) -> None:
    r = cli("status", "--root", tmp_path, "--host", "gpu-a")
    assert r.code == 64 and "--host needs --journal-dir" in r.err
    r = cli("history", "--root", tmp_path)
    assert r.code == 64 and "name the unit" in r.err
    # without the option: this host's state file, as before
    r = cli("history", "vllm-qwen", "--root", tmp_path)
    assert r.code == 0 and r.out.strip() == f"{UNIT}: no attempts recorded"
