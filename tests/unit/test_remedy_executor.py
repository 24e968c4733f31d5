"""The remedy executor's paths that the scenarios of test_daemon_apply.py do not take: a VRAM wait that times
out, systemd's start limit with and without a step in hand, a superseded failure that exited 0, a model switch
told in the event."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.unit.test_daemon_apply import (
    KV_LINES,
    NOW,
    VRAM_LINES,
    FakeSystemctl,
    _at,
    attempt,
    env_of,
)
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.app.gpus import Gpu, Holder
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import AttemptEnded, StartLimitHit
from vllm_guard.core.events import Event, EventKind

pytestmark = pytest.mark.unit

UNIT = "vllm-qwen.service"


@pytest.fixture
def root(fake_root: Path) -> Path:
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[target.flags]\nmax_model_len = 4096\n'
        "[target.floors]\nmax_model_len = 256\n",
    )
    return fake_root


def _daemon(root: Path, sc: FakeSystemctl, events: list[Event], clock: dict[str, float], gpus: object = None) -> Daemon:
    deps = Deps(
        systemctl=sc,
        send=events.append,
        clock=lambda: clock["now"],
        gpus=lambda: gpus,  # type: ignore[arg-type,return-value]
        notifier=Notifier(address=""),
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    return d


def test_held_vram_that_never_comes_back_is_given_up_on_after_the_wait_naming_the_holders(
    fake_root: Path,
) -> None:
    write_config(fake_root, '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n[guard]\nvram_wait_timeout_s = 60\n')
    held = [Gpu(0, "NVIDIA L4", 23034, 10752, (Holder(4242, "stray.py", 12288),))]
    sc, events, clock = FakeSystemctl(), [], {"now": NOW}
    d = _daemon(fake_root, sc, events, clock, held)
    d.on_event(AttemptEnded(attempt(VRAM_LINES)))
    d.flush_held(force=True)
    wait = events[-1]
    assert wait.kind is EventKind.WAITING_FOR_VRAM and wait.fields["HOLDERS"] == "pid 4242 stray.py 12288 MiB on GPU 0"
    ts = d.state.targets["vllm-qwen"]
    clock["now"] += 30
    d.check_vram(d.targets[0], ts)
    assert events[-1].kind is EventKind.WAITING_FOR_VRAM and sc.calls == [("stop", UNIT)]  # still waiting
    clock["now"] += 31
    d.check_vram(d.targets[0], ts)
    gave_up = events[-1]
    assert gave_up.kind is EventKind.GAVE_UP, [e.kind for e in events]
    assert "pid 4242 stray.py" in gave_up.fields["REASON"]
    assert ts.waiting_vram_since is None and ("start", UNIT) not in sc.calls


def test_at_systemds_start_limit_the_guard_starts_the_unit_only_with_a_new_step_in_hand(root: Path) -> None:
    sc, events, clock = FakeSystemctl(), [], {"now": NOW}
    d = _daemon(root, sc, events, clock)
    d.on_event(StartLimitHit(UNIT, int(NOW * 1e6)))  # nothing changed yet: systemd's limit stands
    assert sc.calls == []
    d.on_event(AttemptEnded(attempt(KV_LINES)))
    d.flush_held(force=True)
    assert "--max-model-len=960" in env_of(root)["VLLM_GUARD_ARGS"]
    d.on_event(StartLimitHit(UNIT, int((NOW + 1) * 1e6)))  # a new step: the guard gives it its start
    assert sc.calls[-2:] == [("reset-failed", UNIT), ("start", UNIT)], sc.calls
    assert events[-1].kind is EventKind.RESTARTED_UNIT


def test_a_superseded_failure_that_exited_0_is_started_on_the_current_flags(root: Path) -> None:
    sc, events, clock = FakeSystemctl(), [], {"now": NOW}
    d = _daemon(root, sc, events, clock)
    d.on_event(AttemptEnded(_at(attempt(KV_LINES, "inv-a"), NOW - 20, NOW - 15)))
    d.flush_held(force=True)
    clean = attempt(KV_LINES, "inv-b")
    clean = _at(type(clean)(**{**clean.__dict__, "result": "success", "exit_status": 0}), NOW - 10, NOW - 5)
    d.on_event(AttemptEnded(clean))  # it ran on the file before the step, and exited 0
    d.flush_held(force=True)
    ts = d.state.targets["vllm-qwen"]
    assert [r.change for r in ts.remedies][-1] == "started it on the current flags"
    assert ("start", UNIT) in sc.calls and len([r for r in ts.remedies if r.action == "change_flags"]) == 1


def test_a_switch_to_the_fallback_names_both_models_in_the_event(fake_root: Path) -> None:
    import shutil

    shutil.copytree(fake_root / "models/tiny", fake_root / "models/tiny-awq")
    write_config(
        fake_root,
        '[[target]]\nmodel = "/models/tiny"\nuser = "root"\n'
        '[[target.fallback]]\nmodel = "/models/tiny-awq"\nquantization = "awq"\n',
    )
    sc, events, clock = FakeSystemctl(), [], {"now": NOW}
    d = _daemon(fake_root, sc, events, clock)
    load_oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of "
        "23.56 GiB of which 512.00 MiB is free.",
        '  File "/v/vllm/model_executor/model_loader/default_loader.py", line 1, in load_weights',
    )
    d.on_event(AttemptEnded(attempt(load_oom)))
    d.flush_held(force=True)
    applied = [e for e in events if e.kind is EventKind.REMEDY_APPLIED]
    assert len(applied) == 1, [(e.kind, e.message) for e in events]
    assert applied[0].fields["FLAGS_BEFORE"].startswith("model=/models/tiny ")
    assert applied[0].fields["FLAGS_AFTER"].startswith("model=/models/tiny-awq ")
    assert env_of(fake_root)["VLLM_GUARD_MODEL"] == "/models/tiny-awq"
