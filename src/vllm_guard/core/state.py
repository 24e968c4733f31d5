"""The guard's state: what it changed, why, and what it still has to finish.

Pure: (de)serialisation to and from JSON text. ``vllm_guard.app.statefile`` writes it atomically to
``/var/lib/vllm-guard/state.json``. The file is meant to be read by people too: flat, named keys,
times in seconds since the epoch with an ISO copy beside them.

Versioned (``schema``): a file of an older schema is migrated step by step to ``STATE_SCHEMA`` through
``MIGRATIONS`` (one function per step, kept forever), so an upgraded guard goes on from what the last one
wrote. A file of a newer schema (a downgraded guard) is refused with ``StateTooNew``, a corrupt one with
``StateError``; the caller keeps either aside and starts clean.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vllm_guard.consts import STATE_SCHEMA
from vllm_guard.core.config import Flags, Target

HISTORY_LIMIT = 50  # attempts and remedies kept per target: enough for a week of incidents, a few KiB
HANDLED_LIMIT = 200  # invocation ids remembered as handled (exactly-once across restarts)


class StateError(ValueError):
    """The state file cannot be used."""


class StateTooNew(StateError):
    """The state file was written by a newer vllm-guard (a schema this one does not know)."""

    def __init__(self, schema: int) -> None:
        self.schema = schema
        super().__init__(
            f"schema {schema} was written by a newer vllm-guard; this one reads schema {STATE_SCHEMA} and older: "
            "upgrade vllm-guard to use it"
        )


class _M(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Current(_M):
    """What the vLLM unit runs with now (what the env file holds)."""

    model: str
    fallback_index: int | None = None  # None: the target's own model; i: target.fallback[i]
    flags: Flags


class Remedy(_M):
    at: float
    invocation_id: str | None = None
    kind: str
    action: str
    change: str
    reason: str
    before: str = ""
    after: str = ""
    holders: str = ""  # a VRAM wait: the processes NVML lists on the GPUs (pid command MiB)


class AttemptRecord(_M):
    invocation_id: str
    started: float | None = None
    ended: float | None = None
    result: str | None = None
    kind: str = "none"
    phase: str = "unknown"
    numbers: dict[str, float | int | str] = Field(default_factory=dict)
    evidence: list[str] = Field(default_factory=list)
    hint: str = ""
    action: str | None = None
    # the model and flags the attempt started with (the env file at its start), None where not known
    ran_model: str | None = None
    ran_flags: str | None = None


class EnvWrite(_M):
    """The env file's content from ``at`` on: what a start at or after that moment ran with."""

    at: float
    model: str
    flags: str  # Flags.describe()


ENV_LOG_LIMIT = 32


class Pending(_M):
    """An intent recorded before acting, so a crash between two steps neither loses nor repeats one."""

    invocation_id: str | None
    action: str  # change_flags, switch_model, give_up, wait_for_vram, restart, start
    current: Current | None = None  # the env file to write (None: leave it)
    stop_unit: bool = False
    start_unit: bool = False
    reset_failed: bool = False
    restart_unit: bool = False
    remedy: Remedy | None = None
    at: float


class Verified(_M):
    at: float
    invocation_id: str | None = None
    time_to_ready_s: float | None = None
    model: str
    flags: str
    evidence: dict[str, Any] = Field(default_factory=dict)


class TargetState(_M):
    base_hash: str = ""
    current: Current | None = None
    rungs: dict[str, int] = Field(default_factory=dict)  # remedies per failure kind since the last healthy start
    remedies: list[Remedy] = Field(default_factory=list)
    remedy_counts: dict[str, int] = Field(default_factory=dict)  # per failure kind, never trimmed (metrics)
    attempts: list[AttemptRecord] = Field(default_factory=list)
    handled: list[str] = Field(default_factory=list)
    pending: Pending | None = None
    last_failure: AttemptRecord | None = None
    last_verified: Verified | None = None
    known_good: dict[str, Current] = Field(default_factory=dict)  # "model|hardware|vllm version" -> flags
    flags_where: str | None = None  # "hardware|vllm version" the current flags were verified at (or chosen for)
    gave_up: Remedy | None = None
    guard_stopped: bool = False  # the guard stopped the unit (VRAM wait, gave up), not a person
    stopped_by_person: bool = False
    waiting_vram_since: float | None = None
    # waiting without a GPU view (NVML unreadable): why, when the next unchanged retry is due, how many so far
    vram_blind: str | None = None
    vram_blind_since: float | None = None  # the first failure of this blind wait (unchanged retries keep it)
    vram_retry_at: float | None = None
    vram_blind_retries: int = 0

    def end_blind_wait(self) -> None:
        self.vram_blind = self.vram_blind_since = self.vram_retry_at = None
        self.vram_blind_retries = 0

    healthy_since: float | None = None
    platform: str | None = None  # "cuda", "cpu", ... as vLLM printed it
    step_back_from: Current | None = None  # trying the base flags again; return here at once if that fails
    budget_from: float | None = None  # `vllm-guard reset` cleared the budget: remedies before this do not count
    env_log: list[EnvWrite] = Field(default_factory=list)  # each content the env file held, from when
    waiting: str | None = None  # why the target waits for its files (a model folder not mounted yet), or None
    waiting_stopped: bool = False  # the guard stopped the unit while it waited: it starts it once they are there

    def log_env(self, at: float, current: Current) -> None:
        """The env file holds ``current`` from ``at`` on (logged only when it differs from the last entry)."""
        flags = current.flags.describe()
        last = self.env_log[-1] if self.env_log else None
        if last is not None and (last.model, last.flags) == (current.model, flags):
            return
        self.env_log.append(EnvWrite(at=at, model=current.model, flags=flags))
        del self.env_log[:-ENV_LOG_LIMIT]

    def env_at(self, started: float | None) -> EnvWrite | None:
        """What the env file held when a start at ``started`` read it; None when the log does not reach back."""
        if started is None:
            return None
        found: EnvWrite | None = None
        for e in self.env_log:  # the latest write at or before the start; of equal times, the one logged last
            if e.at <= started and (found is None or e.at >= found.at):
                found = e
        return found

    def below_base_since(self, base: Current) -> float | None:
        """Since when the current model and flags differ from ``base`` (the env log's first write of the current
        departure from it); None while on the base. Before the log reaches back: the first remedy still logged."""
        cur = self.current
        if cur is None or (cur.model, cur.flags) == (base.model, base.flags):
            return None
        at_base = (base.model, base.flags.describe())
        since: float | None = None
        for e in reversed(self.env_log):
            if (e.model, e.flags) == at_base:
                break
            since = e.at
        if since is None and self.remedies:
            since = self.remedies[0].at
        return since

    def remember_attempt(self, rec: AttemptRecord) -> None:
        self.attempts = [a for a in self.attempts if a.invocation_id != rec.invocation_id]
        self.attempts.append(rec)
        del self.attempts[:-HISTORY_LIMIT]

    def add_remedy(self, rem: Remedy) -> None:
        self.remedy_counts[rem.kind] = self.remedy_counts.get(rem.kind, 0) + 1
        self.remedies.append(rem)
        del self.remedies[:-HISTORY_LIMIT]

    def mark_handled(self, invocation_id: str | None) -> None:
        if invocation_id and invocation_id not in self.handled:
            self.handled.append(invocation_id)
            del self.handled[:-HANDLED_LIMIT]

    def remedies_since(self, since: float) -> int:
        """Remedies that count against the budget: in the window, after the last reset by a person, and not the
        give-ups themselves (a give-up spends nothing; counting it kept a reset unit given up)."""
        cleared = self.budget_from
        return sum(
            1
            for r in self.remedies
            if r.at >= since and (cleared is None or r.at > cleared) and r.action not in ("none", "give_up")
        )


class State(_M):
    schema_: int = Field(default=STATE_SCHEMA, alias="schema")
    cursor: str | None = None
    tracker: dict[str, Any] = Field(default_factory=dict)
    targets: dict[str, TargetState] = Field(default_factory=dict)

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    def target(self, unit: str) -> TargetState:
        if unit not in self.targets:
            self.targets[unit] = TargetState()
        return self.targets[unit]


def base_hash(target: Target) -> str:
    """A fingerprint of what the admin configured that the guard may change (model, flags, fallbacks)."""
    data = {
        "model": target.model,
        "flags": target.flags.model_dump(mode="json"),
        "fallback": [f.model_dump(mode="json") for f in target.fallback],
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def base_current(target: Target) -> Current:
    return Current(model=target.model, fallback_index=None, flags=target.flags)


def dumps(state: State) -> str:
    return json.dumps(state.model_dump(mode="json", by_alias=True), indent=2, sort_keys=False) + "\n"


Migration = Callable[[dict[str, Any]], dict[str, Any]]

# MIGRATIONS[n] turns a schema-n document into the shape of schema n + 1 (``migrate`` sets the number).
# When STATE_SCHEMA is bumped, the step from the previous schema (what the last released package wrote)
# is added here, and every step stays: a guard upgraded across several releases migrates one step at a time.
# Empty: schema 1 is the only schema a released vllm-guard has written.
MIGRATIONS: dict[int, Migration] = {}


def migrate(
    raw: dict[str, Any], *, to: int = STATE_SCHEMA, steps: Mapping[int, Migration] | None = None
) -> dict[str, Any]:
    """A state document of any known schema brought to schema ``to``, one step at a time (``raw`` is not changed)."""
    steps = MIGRATIONS if steps is None else steps
    if "schema" not in raw:
        raise StateError("no schema number")
    schema = raw["schema"]
    if isinstance(schema, bool) or not isinstance(schema, int):
        raise StateError(f"schema {schema!r}: not a schema number")
    if schema > to:
        raise StateTooNew(schema)
    oldest = to
    while oldest - 1 in steps:
        oldest -= 1
    if schema < oldest:
        known = f"schema {to} only" if oldest == to else f"schema {oldest} to {to}"
        raise StateError(f"schema {schema} is older than any this vllm-guard reads ({known})")
    if schema == to:
        return raw
    doc = copy.deepcopy(raw)
    for n in range(schema, to):
        try:
            doc = steps[n](doc)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
            raise StateError(f"cannot migrate it from schema {n} to {n + 1}: {type(err).__name__}: {err}") from None
        if not isinstance(doc, dict):
            raise StateError(f"cannot migrate it from schema {n} to {n + 1}: the step made no JSON object")
        doc["schema"] = n + 1
    return doc


def loads(text: str) -> State:
    try:
        raw = json.loads(text)
    except ValueError as err:
        raise StateError(f"not JSON: {err}") from None
    if not isinstance(raw, dict):
        raise StateError("not a JSON object")
    raw = migrate(raw)
    try:
        return State.model_validate(raw)
    except ValidationError as err:
        raise StateError(f"invalid: {err.errors()[0]['loc']}: {err.errors()[0]['msg']}") from None
