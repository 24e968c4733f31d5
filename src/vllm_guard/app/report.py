"""What `status` and `history` show: built from the config and the state file, or (``--journal-dir``) from the
guard's events in a collector's journal folder."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vllm_guard.consts import GUARD_UNIT, JSON_SCHEMA
from vllm_guard.core.config import Config
from vllm_guard.core.state import State, TargetState, base_current
from vllm_guard.core.where import Where

if TYPE_CHECKING:
    from vllm_guard.adapters.journal import GuardEntry


def when(ts: float | None) -> str:
    if ts is None:
        return "never"
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


_SYSTEMD_PROPS = ("ActiveState", "SubState", "Result", "NRestarts", "ExecMainStatus")


def systemd_view(units: list[str]) -> dict[str, dict[str, str]]:
    """What systemd says of each unit now (empty where it cannot be asked)."""
    from vllm_guard.adapters import systemctl
    from vllm_guard.errors import GuardError

    out: dict[str, dict[str, str]] = {}
    for unit in units:
        try:
            out[unit] = systemctl.show(unit, *_SYSTEMD_PROPS)
        except (GuardError, OSError):
            continue
    return out


def _word(ts: TargetState, sd: dict[str, str]) -> str:
    """The target's state: the guard's record, corrected by what systemd says is happening now."""
    active = sd.get("ActiveState")
    if ts.waiting is not None:
        return f"waiting for its files ({ts.waiting})"
    if ts.gave_up is not None:
        # the guard gave up, but systemd is running or retrying it now (a person fixed and started it)
        return "retrying after the guard gave up" if active in ("active", "activating") else "gave_up"
    if ts.waiting_vram_since is not None or ts.vram_blind is not None:
        return f"waiting_for_vram (the GPUs cannot be seen: {ts.vram_blind})" if ts.vram_blind else "waiting_for_vram"
    if ts.stopped_by_person or (active == "inactive" and ts.last_verified is not None):
        return "stopped"
    if ts.last_verified is not None and (
        ts.last_failure is None or (ts.last_failure.ended or 0) <= ts.last_verified.at
    ):
        return "healthy" if active in (None, "active") else active
    if ts.last_failure is not None:
        return "recovering"
    if active is not None:
        return {"inactive": "not started", "activating": "starting", "failed": "failed"}.get(active, active)
    return "unknown"


def target_status(
    config: Config | None,
    state: State,
    *,
    systemd: dict[str, dict[str, str]] | None = None,
    config_error: str | None = None,
    serving: dict[str, dict[str, str | None]] | None = None,
) -> dict[str, Any]:
    """``serving``: per unit file, what its running server answered on /v1/models (``probe.models_view``)."""
    systemd = systemd or {}
    serving = serving or {}
    guard = systemd.get(GUARD_UNIT)
    out: list[dict[str, Any]] = []
    if config is None:  # an invalid config: what the state file knows
        for unit, ts in state.targets.items():
            sd = systemd.get(f"{unit}.service", {})
            out.append(
                {
                    "unit": f"{unit}.service",
                    "state": _word(ts, sd),
                    "flags": ts.current.flags.describe() if ts.current else None,
                    "systemd": sd or None,
                    "last_failure": ts.last_failure.model_dump(mode="json") if ts.last_failure else None,
                    "last_verified": ts.last_verified.model_dump(mode="json") if ts.last_verified else None,
                    "gave_up": ts.gave_up.model_dump(mode="json") if ts.gave_up else None,
                }
            )
        return {"schema": JSON_SCHEMA, "config_error": config_error, "guard": guard, "targets": out}
    for t in config.target:
        ts = state.targets.get(t.unit) or TargetState()
        cur = ts.current or base_current(t)
        sd = systemd.get(t.unit_file, {})
        word = _word(ts, sd)
        # the flags the server runs with: those of its verified start when the env file has moved on since
        running = ts.last_verified.flags if ts.last_verified and sd.get("ActiveState") == "active" else None
        if running is not None and running == cur.flags.describe():
            running = None
        out.append(
            {
                "unit": t.unit_file,
                "state": word,
                "model": cur.model,
                "base_model": t.model,
                "flags": cur.flags.describe(),
                "running_flags": running,
                "serving": serving.get(t.unit_file),
                "base_flags": t.flags.describe(),
                "systemd": sd or None,
                "degraded": cur.flags != t.flags or cur.model != t.model,
                "last_failure": ts.last_failure.model_dump(mode="json") if ts.last_failure else None,
                "last_verified": ts.last_verified.model_dump(mode="json") if ts.last_verified else None,
                "gave_up": ts.gave_up.model_dump(mode="json") if ts.gave_up else None,
                "remedies": len(ts.remedies),
                # where the flags were verified (hardware, vLLM version); None: not yet
                "verified_on": Where.parse(ts.flags_where).describe() if ts.flags_where else None,
                "known_good_places": len(ts.known_good),
            }
        )
    return {"schema": JSON_SCHEMA, "config_error": None, "guard": guard, "targets": out}


def format_status(data: dict[str, Any]) -> str:
    lines = []
    if data.get("config_error"):
        lines.append(f"the config is invalid: {data['config_error']}")
        lines.append("  (a running guard keeps its last good config; below is what the state file records)")
    guard = data.get("guard")
    if guard is not None and guard.get("ActiveState") not in ("active", "reloading"):
        lines.append(
            f"vllm-guard.service is {guard.get('ActiveState', 'unknown')}: nothing is being guarded "
            "(systemctl enable --now vllm-guard)"
        )
    for t in data["targets"]:
        sd = t.get("systemd") or {}
        said = (
            f" (systemd: {sd['ActiveState']}/{sd.get('SubState', '')}, {sd.get('NRestarts', '0')} restarts)"
            if sd.get("ActiveState")
            else ""
        )
        lines.append(f"{t['unit']}: {t['state']}{said}")
        if "base_flags" not in t:  # from the state file alone
            if t.get("flags"):
                lines.append(f"  flags: {t['flags']}")
            continue
        served = t.get("serving")
        if served and served.get("problem"):
            lines.append(f"  /v1/models: {served['problem']} ({served['url']})")
        elif served:
            lines.append(f"  /v1/models: serves the weights in {served['root']}")
        if t.get("running_flags"):
            lines.append(f"  running with: {t['running_flags']} (its next start uses the flags below)")
        if t["degraded"]:
            lines.append(f"  flags: {t['flags']}")
            lines.append(f"  base:  {t['base_flags']}")
            if t["model"] != t["base_model"]:
                lines.append(f"  model: {t['model']} (base {t['base_model']})")
        else:
            lines.append(f"  flags: {t['flags']} (the base flags)")
        lf = t["last_failure"]
        if lf:
            lines.append(f"  last failure: {lf['kind']} ({lf['phase']}) at {when(lf.get('ended'))}")
            if lf.get("evidence"):
                lines.append(f"    {lf['evidence'][0]}")
        lv = t["last_verified"]
        if lv:
            ttr = lv.get("time_to_ready_s")
            lines.append(
                f"  last verified start: {when(lv['at'])}" + (f" ({ttr:.1f} s to ready)" if ttr is not None else "")
            )
        if t.get("verified_on"):
            lines.append(f"  flags belong to: {t['verified_on']}")
        if t["gave_up"]:
            lines.append(f"  gave up: {t['gave_up']['reason']}")
            lines.append(f"  (after fixing it: `vllm-guard reset {t['unit'].removesuffix('.service')}`)")
    return "\n".join(lines)


def target_history(state: State, unit: str) -> dict[str, Any]:
    ts = state.targets.get(unit.removesuffix(".service")) or TargetState()
    return {
        "schema": JSON_SCHEMA,
        "unit": unit if unit.endswith(".service") else f"{unit}.service",
        "attempts": [a.model_dump(mode="json") for a in ts.attempts],
        "remedies": [r.model_dump(mode="json") for r in ts.remedies],
    }


def format_history(data: dict[str, Any]) -> str:
    rows = []
    for a in data["attempts"]:
        stopped = {"stopped_by_person": "stopped by a person", "stopped_by_guard": "stopped by the guard"}
        if a["kind"] == "none" and a.get("action") in stopped:  # a stop or restart someone asked for
            text = f"attempt {a['invocation_id'][:12]}: {stopped[a['action']]} (result {a.get('result')})"
        else:
            text = f"attempt {a['invocation_id'][:12]}: {a['kind']} ({a['phase']}), result {a.get('result')}" + (
                f", action {a['action']}" if a.get("action") else ""
            )
        rows.append((a.get("ended") or a.get("started") or 0, text))
    for r in data["remedies"]:
        rows.append((r["at"], f"  {r['action']}: {r['change']} ({r['reason']})"))
    rows.sort(key=lambda x: x[0])
    if not rows:
        return f"{data['unit']}: no attempts recorded"
    return "\n".join(f"{when(t)}  {text}" for t, text in rows)


# -- many hosts: the guard's events in a collector's journal folder (`status`/`history --journal-dir`)

# What each event says of a unit's state; events not named here (memory_pressure, ...) leave it as it was.
_EVENT_STATE = {
    "verified_healthy": "healthy",
    "failure_detected": "recovering",
    "remedy_applied": "recovering",
    "restarted_unit": "recovering",
    "preflight": "starting",
    "reset": "starting over from the base flags",
    "target_ready": "starting",
    "target_waiting": "waiting for its files",
    "waiting_for_vram": "waiting_for_vram",
    "probe_failed": "probe failing",
    "gave_up": "gave_up",
}
_GUARD_EVENTS = ("guard_started", "guard_stopping", "config_reloaded", "config_reload_failed")


def read_journal_dir(folder: Path, *, unit: str | None = None, host: str | None = None) -> list[GuardEntry]:
    """The guard's events in a journal folder (a collector's /var/log/journal/remote/); GuardError when the
    folder holds nothing to read."""
    from vllm_guard.adapters.journal import journal_files, read_guard_events
    from vllm_guard.errors import GuardError
    from vllm_guard.exitcodes import ExitCode

    hint = "name the folder systemd-journal-remote writes to (e.g. /var/log/journal/remote)"
    if not folder.is_dir():
        why = "not a folder" if folder.exists() else "no such folder"
        raise GuardError("journal-dir-missing", f"--journal-dir {folder}: {why}", hint, exit_code=ExitCode.NOINPUT)
    try:
        files = journal_files(folder)
        if not files:
            raise GuardError(
                "journal-dir-empty", f"--journal-dir {folder}: no journal files (*.journal) in it", hint,
                exit_code=ExitCode.NOINPUT,
            )  # fmt: skip
        skipped: list[OSError] = []

        def skip(path: Path, err: OSError) -> None:
            skipped.append(err)
            print(
                f"vllm-guard: warning[journal-file-unreadable]: {path}: {err.strerror or err}: left out\n"
                f"  hint: check it with `journalctl --file {path} --verify`",
                file=sys.stderr,
            )

        entries = read_guard_events(folder, unit=unit, host=host, files=files, on_error=skip)
        if len(skipped) == len(files):
            if all(isinstance(err, PermissionError) for err in skipped):
                raise skipped[0]
            raise OSError(f"none of its {len(files)} journal file(s) can be read")
        return entries
    except PermissionError:
        raise GuardError(
            "journal-dir-unreadable",
            f"--journal-dir {folder}: cannot read its journal files: permission denied",
            "run as root, or as a member of the group that owns the journal files",
            exit_code=ExitCode.NOPERM,
        ) from None
    except OSError as err:
        raise GuardError(
            "journal-dir-unreadable",
            f"--journal-dir {folder}: {err.strerror or err}",
            f"check the files with `journalctl -D {folder} --verify`",
            exit_code=ExitCode.NOINPUT,
        ) from None


def _unit_file(unit: str) -> str:
    return unit if unit.endswith(".service") else f"{unit}.service"


def _said(e: GuardEntry) -> str:
    """The event's message without the unit it starts with (the unit has its own column)."""
    return e.message.removeprefix(f"{e.unit}: ") if e.unit else e.message


def fleet_history(
    entries: Sequence[GuardEntry], *, folder: Path, unit: str | None = None, host: str | None = None
) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA,
        "journal_dir": str(folder),
        "unit": _unit_file(unit) if unit else None,
        "host": host,
        "events": [
            {
                "at": e.at,
                "host": e.host,
                "unit": e.unit or None,
                "event": e.event,
                "message": _said(e),
                "fields": e.fields,
            }
            for e in entries
        ],
    }


def format_fleet_history(data: dict[str, Any]) -> str:
    events = data["events"]
    if not events:
        what = f" of {data['unit']}" if data.get("unit") else ""
        where = f" from host {data['host']}" if data.get("host") else ""
        return f"no vllm-guard events{what}{where} in {data['journal_dir']}"
    width = max(len(e["host"] or "?") for e in events)
    unit_width = 0 if data.get("unit") else max(len(e["unit"] or "-") for e in events)
    lines = []
    for e in events:
        unit = "" if data.get("unit") else f"{(e['unit'] or '-'):<{unit_width}}  "
        lines.append(f"{when(e['at'])}  {(e['host'] or '?'):<{width}}  {unit}{e['event']}: {e['message']}")
    return "\n".join(lines)


def fleet_status(entries: Sequence[GuardEntry], *, folder: Path, host: str | None = None) -> dict[str, Any]:
    """Per host, per unit: what the latest events say (not a live view: the journal is as recent as its upload)."""
    hosts: dict[str, dict[str, Any]] = {}
    for e in entries:
        h = hosts.setdefault(e.host, {"host": e.host, "guard": None, "units": {}})
        if not e.unit:
            if e.event in _GUARD_EVENTS:
                guard = h["guard"] or {}
                if e.event == "guard_started":
                    guard = {"state": "running", "since": e.at, "version": e.fields.get("VERSION")}
                elif e.event == "guard_stopping":
                    guard = {**guard, "state": "stopped", "since": e.at}
                guard["last_event"] = {"at": e.at, "event": e.event}
                if e.event == "config_reload_failed":
                    guard["config_error"] = e.fields.get("REASON") or _said(e)
                elif e.event == "config_reloaded":
                    guard.pop("config_error", None)
                h["guard"] = guard
            continue
        t = h["units"].setdefault(
            e.unit,
            {"unit": e.unit, "state": "unknown", "flags": None, "last_failure": None, "last_verified": None,
             "gave_up": None, "remedies": 0, "last_event": None},
        )  # fmt: skip
        t["state"] = _EVENT_STATE.get(e.event, t["state"])
        t["last_event"] = {"at": e.at, "event": e.event, "message": _said(e)}
        if e.fields.get("FLAGS_AFTER"):
            t["flags"] = e.fields["FLAGS_AFTER"]
        if e.event == "failure_detected":
            t["last_failure"] = {
                "at": e.at,
                "kind": e.fields.get("KIND"),
                "phase": e.fields.get("PHASE"),
                "evidence": e.fields.get("EVIDENCE"),
            }
        elif e.event == "verified_healthy":
            ttr = e.fields.get("TIME_TO_READY_S")
            t["last_verified"] = {"at": e.at, "time_to_ready_s": _float(ttr)}
            t["gave_up"] = None
        elif e.event == "remedy_applied":
            t["remedies"] += 1
        elif e.event == "gave_up":
            t["gave_up"] = {"at": e.at, "reason": e.fields.get("REASON") or _said(e), "hint": e.fields.get("HINT")}
        elif e.event == "reset":
            t["gave_up"] = None
    out = []
    for name in sorted(hosts):
        h = hosts[name]
        out.append({"host": h["host"], "guard": h["guard"], "targets": [h["units"][u] for u in sorted(h["units"])]})
    return {"schema": JSON_SCHEMA, "journal_dir": str(folder), "host": host, "hosts": out}


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def format_fleet_status(data: dict[str, Any]) -> str:
    if not data["hosts"]:
        where = f" from host {data['host']}" if data.get("host") else ""
        return f"no vllm-guard events{where} in {data['journal_dir']}"
    lines = []
    for h in data["hosts"]:
        g = h["guard"]
        if g is None:
            said = "no start of vllm-guard in these files"
        elif g.get("state") == "stopped":
            said = f"vllm-guard stopped at {when(g['since'])}"
        elif g.get("state") == "running":
            version = f" {g['version']}" if g.get("version") else ""
            said = f"vllm-guard{version} started at {when(g['since'])}"
        else:
            said = f"vllm-guard: last {g['last_event']['event']} at {when(g['last_event']['at'])}"
        lines.append(f"{h['host'] or '(unnamed host)'}: {said}")
        if g and g.get("config_error"):
            lines.append(f"  the config is invalid: {g['config_error']}")
        for t in h["targets"]:
            lines.append(f"  {t['unit']}: {t['state']} (as of {when(t['last_event']['at'])})")
            if t["flags"]:
                lines.append(f"    flags: {t['flags']}")
            lf = t["last_failure"]
            if lf:
                lines.append(f"    last failure: {lf['kind']} ({lf['phase']}) at {when(lf['at'])}")
            lv = t["last_verified"]
            if lv:
                ttr = lv.get("time_to_ready_s")
                lines.append(
                    f"    last verified start: {when(lv['at'])}"
                    + (f" ({ttr:.1f} s to ready)" if ttr is not None else "")
                )
            if t["remedies"]:
                lines.append(f"    remedies: {t['remedies']}")
            if t["gave_up"]:
                lines.append(f"    gave up: {t['gave_up']['reason']}")
    return "\n".join(lines)
