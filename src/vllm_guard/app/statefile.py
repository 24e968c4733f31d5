"""state.json on disk: atomic writes under a lock, corrupt or newer files kept aside, changes by other verbs seen."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from vllm_guard.adapters.files import atomic_write
from vllm_guard.core.state import State, StateError, StateTooNew, dumps, loads


class StateStore:
    """Reads and writes one state file. ``vllm-guard reset`` and the daemon share it through a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._seen: tuple[int, int] | None = None
        self.warnings: list[str] = []

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns)

    def load(self) -> State:
        """The state on disk; a missing file is a clean state; a corrupt one is kept aside with a warning."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._seen = None
            return State()
        except (OSError, UnicodeDecodeError) as err:
            return self._aside(f"cannot read it: {err}")
        try:
            state = loads(text)
        except StateTooNew as err:
            # A downgraded guard: the newer one's state is whole. Named by its schema, it waits there for an
            # upgrade (moved back to state.json, the newer guard goes on from it).
            return self._aside(str(err), f"schema-{err.schema}")
        except StateError as err:
            return self._aside(str(err))
        self._seen = self._stamp()
        return state

    def _aside(self, why: str, tag: str = "corrupt") -> State:
        aside = self.path.with_name(f"{self.path.name}.{tag}-{time.strftime('%Y%m%dT%H%M%S')}")
        with contextlib.suppress(OSError):
            os.replace(self.path, aside)
        msg = f"vllm-guard: warning: state file {self.path} is unusable ({why}); kept it as {aside} and started clean"
        self.warnings.append(msg)
        print(msg, file=sys.stderr)
        self._seen = None
        return State()

    def save(self, state: State) -> None:
        atomic_write(self.path, dumps(state), mode=0o640)
        self._seen = self._stamp()

    def changed_on_disk(self) -> bool:
        """True when another process (``vllm-guard reset``) wrote the file since our last load/save."""
        return self._stamp() != self._seen
