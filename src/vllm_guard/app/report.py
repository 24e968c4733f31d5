"""What `status` and `history` show: built from the config and the state file."""

from __future__ import annotations

import datetime as dt
from typing import Any

from vllm_guard.consts import JSON_SCHEMA
from vllm_guard.core.config import Config
from vllm_guard.core.state import State, TargetState, base_current
from vllm_guard.core.where import Where


def when(ts: float | None) -> str:
    if ts is None:
        return "never"
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def target_status(config: Config, state: State) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for t in config.target:
        ts = state.targets.get(t.unit) or TargetState()
        cur = ts.current or base_current(t)
        if ts.gave_up is not None:
            word = "gave_up"
        elif ts.waiting_vram_since is not None:
            word = "waiting_for_vram"
        elif ts.stopped_by_person:
            word = "stopped"
        elif ts.last_verified is not None and (
            ts.last_failure is None or (ts.last_failure.ended or 0) <= ts.last_verified.at
        ):
            word = "healthy"
        elif ts.last_failure is not None:
            word = "recovering"
        else:
            word = "unknown"
        out.append(
            {
                "unit": t.unit_file,
                "state": word,
                "model": cur.model,
                "base_model": t.model,
                "flags": cur.flags.describe(),
                "base_flags": t.flags.describe(),
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
    return {"schema": JSON_SCHEMA, "targets": out}


def format_status(data: dict[str, Any]) -> str:
    lines = []
    for t in data["targets"]:
        lines.append(f"{t['unit']}: {t['state']}")
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
        rows.append(
            (
                a.get("ended") or a.get("started") or 0,
                f"attempt {a['invocation_id'][:12]}: {a['kind']} "
                f"({a['phase']}), result {a.get('result')}" + (f", action {a['action']}" if a.get("action") else ""),
            )
        )
    for r in data["remedies"]:
        rows.append((r["at"], f"  {r['action']}: {r['change']} ({r['reason']})"))
    rows.sort(key=lambda x: x[0])
    if not rows:
        return f"{data['unit']}: no attempts recorded"
    return "\n".join(f"{when(t)}  {text}" for t, text in rows)
