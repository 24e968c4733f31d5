"""Journal events: one MESSAGE_ID per kind of event (a contract: the catalog, dashboards and
people's journalctl queries use them), and the ``VLLM_GUARD_*`` fields they carry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum


class EventKind(Enum):
    """Each value is the event's journal MESSAGE_ID (128-bit, hex)."""

    GUARD_STARTED = "9b1629ae236f4256b9578cbcbcf4fe61"
    GUARD_STOPPING = "44ecaf59860c48c4b7f7a8fb5a5128f8"
    CONFIG_RELOADED = "62577b5b868944fd9cf6aca71d5687f4"
    CONFIG_RELOAD_FAILED = "446b00194360442e97500942a873426c"
    FAILURE_DETECTED = "d1042897beb04e61bb97e9f9ab7682c0"
    REMEDY_APPLIED = "f547434f00194697a2d82262a0ce476b"
    WAITING_FOR_VRAM = "6eecb3d2d84a4af88447179da9d8a0e9"
    GAVE_UP = "35db0ff675494371b00b187563d64f54"
    RESTARTED_UNIT = "d453747115e7495aab3063fbb6479f37"
    VERIFIED_HEALTHY = "b2a0a79d4da047918004e36817157ce6"
    PROBE_FAILED = "f62602677b82468a865d038759ffe950"
    RESET = "9a928faa3914442d9a30ff636b38e8bc"
    MEMORY_PRESSURE = "d4b8d2a5784e473baadcf39c4bef753f"
    TARGET_WAITING = "b69769ea29f34a77ae0d98268e94d78c"
    TARGET_READY = "eb672e7b58b84598b87a303ac0322d7b"
    PREFLIGHT = "d155db2ac69e437dbd99045275ed084f"

    @property
    def message_id(self) -> str:
        return self.value

    @property
    def priority(self) -> int:
        """syslog priority of the event (3 err, 4 warning, 5 notice, 6 info)."""
        return _PRIORITY.get(self, 6)


_PRIORITY = {
    EventKind.CONFIG_RELOAD_FAILED: 4,
    EventKind.FAILURE_DETECTED: 4,
    EventKind.REMEDY_APPLIED: 5,
    EventKind.WAITING_FOR_VRAM: 4,
    EventKind.GAVE_UP: 3,
    EventKind.RESTARTED_UNIT: 5,
    EventKind.PROBE_FAILED: 4,
    EventKind.MEMORY_PRESSURE: 4,
    EventKind.RESET: 5,
    EventKind.TARGET_WAITING: 4,
    EventKind.PREFLIGHT: 5,
    EventKind.TARGET_READY: 5,
}

# Every VLLM_GUARD_* field an event may carry (a contract for dashboards and the catalog).
FIELDS = {
    "UNIT": "the vLLM unit the event is about",
    "EVENT": "the event kind in words (failure_detected, remedy_applied, ...)",
    "KIND": "the failure kind (kv_cache_insufficient, cuda_oom_profile, ...)",
    "PHASE": "load, profile, serve or unknown",
    "CONFIDENCE": "how strong the verdict's evidence is: high, medium or low",
    "BASIS": "what the verdict rests on: message, frame, milestone, allocator, observed or bare",
    "OBSERVED": "what the guard saw of the attempt beyond its lines (a probe that passed, when it died, the GPUs' "
    "holders, the kernel's log) and how it weighed a weak verdict",
    "UNSURE": "what the guard is unsure of about the verdict (empty when its evidence is strong)",
    "INVOCATION_ID": "systemd's invocation id of the attempt",
    "ATTEMPT": "the attempt's number since the last healthy start",
    "FLAGS_BEFORE": "the tunable flags before the remedy",
    "FLAGS_AFTER": "the tunable flags after the remedy",
    "CHANGE": "what the remedy changed, in words",
    "ENV_FILE": "the env file the guard rewrote (the vLLM unit's EnvironmentFile=)",
    "EVIDENCE": "the log line(s) the verdict rests on",
    "HINT": "what a person should do",
    "REASON": "why the guard decided what it decided",
    "PROBE_STEP": "health, models or chat",
    "TIME_TO_READY_S": "seconds from the start of the attempt to the verified answer",
    "KV_CACHE_TOKENS": "KV cache capacity vLLM reported (tokens)",
    "LOAD_S": "weight loading time vLLM reported (s)",
    "WEIGHTS_GIB": "weight memory vLLM reported (GiB)",
    "MAX_CONCURRENCY": "maximum concurrency vLLM reported",
    "HOLDERS": "processes holding GPU memory (pid command MiB)",
    "SWAP_IN_PER_S": "MiB swapped in per second",
    "SWAP_OUT_PER_S": "MiB swapped out per second",
    "PSI_SOME_AVG10": "memory pressure (PSI some avg10, %)",
    "MEM_AVAILABLE_MIB": "host memory available (MiB)",
    "VERSION": "the guard's version",
}


@dataclass(frozen=True)
class Event:
    """One thing the guard tells the journal."""

    kind: EventKind
    message: str
    fields: Mapping[str, str] = field(default_factory=dict)  # keys from FIELDS, without the prefix

    def journal_fields(self) -> dict[str, str]:
        """The fields as python-systemd's ``journal.send`` takes them (MESSAGE excluded)."""
        out = {
            "MESSAGE_ID": self.kind.message_id,
            "PRIORITY": str(self.kind.priority),
            "SYSLOG_IDENTIFIER": "vllm-guard",
            "VLLM_GUARD_EVENT": self.kind.name.lower(),
        }
        for key, value in self.fields.items():
            if key not in FIELDS:
                raise ValueError(f"unknown event field {key!r}")
            out[f"VLLM_GUARD_{key}"] = value
        return out
