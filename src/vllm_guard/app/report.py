"""What `status` and `history` show: built from the config and the state file."""

from __future__ import annotations

import datetime as dt
from typing import Any

from vllm_guard.consts import GUARD_UNIT, JSON_SCHEMA
from vllm_guard.core.config import Config
from vllm_guard.core.state import State, TargetState, base_current
from vllm_guard.core.where import Where


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
