"""A throwaway systemd to run vllm-guard in: used by the system tests, the benchmark and ``vllm-guard demo``.

It boots the host's own ``/usr`` in ``systemd-nspawn --volatile=yes`` (a fresh tmpfs root), reaches
``systemctl is-system-running``, runs commands inside with ``nsenter``, and always tears down (poweroff,
SIGTERM, SIGKILL of leftovers, removal of the memory cgroup), on failure and on Ctrl-C too::

    with booted(Sandbox(name="vg-demo", binds=[Bind(repo)])) as box:
        box.run("systemctl", "is-system-running")
        box.write("/run/systemd/system/x.service", text)

``GuardBox`` adds vllm-guard on top: the config, the fake GPU file, ``vllm-guard install``, the real
``vllm-guard.service`` from ``units/`` with a drop-in that only points ``ExecStart=`` at the source
checkout, and readers for the guard's journal events and the vLLM unit's state.

Needs root, ``systemd-nspawn`` (Debian: systemd-container) and a host whose memory cgroup v1 is
writable for OOM kills (see ``MemoryCgroup``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from vllm_guard.errors import GuardError
from vllm_guard.exitcodes import ExitCode

T = TypeVar("T")

BOOT_TIMEOUT_S = 90.0  # measured: a boot takes about 5 s on 2 idle cores; much longer under load
POWEROFF_TIMEOUT_S = 20.0  # a clean poweroff takes 1-2 s; then SIGTERM, then SIGKILL
CGROUP_V1_MEMORY = Path("/sys/fs/cgroup/memory")
INSIDE_TEST_DIR = "/run/vllm-guard-test"  # where the per-run folder (config, GPU file, models) is bound
INSIDE_MEMCG = "/run/vllm-guard-memcg"  # where the memory cgroup folder is bound, writable
GUARD_UNIT = "vllm-guard.service"


class SandboxError(GuardError):
    """The throwaway systemd could not be set up or did not answer."""

    def __init__(self, message: str, hint: str = "run as root on a host with systemd-nspawn installed") -> None:
        super().__init__("sandbox", message, hint, exit_code=ExitCode.UNAVAILABLE)


@dataclass(frozen=True)
class Bind:
    """A host folder bound into the container (at the same path unless ``inside`` is given)."""

    host: Path
    inside: str | None = None
    read_only: bool = True

    def option(self) -> str:
        flag = "--bind-ro" if self.read_only else "--bind"
        inside = self.inside or str(self.host)
        return f"{flag}={_escape_bind(str(self.host))}:{_escape_bind(inside)}"


def _escape_bind(path: str) -> str:
    return path.replace("\\", "\\\\").replace(":", "\\:")


def check_host() -> None:
    """Fail with one clear message when this host cannot run the sandbox."""
    if os.geteuid() != 0:
        raise SandboxError("the throwaway systemd needs root", "run with sudo")
    if shutil.which("systemd-nspawn") is None:
        raise SandboxError("systemd-nspawn is not installed", "apt-get install systemd-container (./scripts/setup)")
    if shutil.which("nsenter") is None:
        raise SandboxError("nsenter is not installed", "apt-get install util-linux")


class MemoryCgroup:
    """A child of this process's memory cgroup (v1) with a limit: the kernel OOM-kills what passes it.

    systemd's ``MemoryMax=`` is not enforced inside the container (it sees the host's cgroups read-only),
    so a process that must be OOM-killed writes its own PID into ``cgroup.procs`` of this folder, which
    is bound writable into the container.
    """

    def __init__(self, name: str, limit_bytes: int) -> None:
        own = _own_memory_cgroup()
        if own is None:
            raise SandboxError("no writable memory cgroup v1 on this host", "host OOM scenarios need cgroup v1 memory")
        self.path = CGROUP_V1_MEMORY / own.lstrip("/") / name
        self.path.mkdir(exist_ok=True)
        (self.path / "memory.limit_in_bytes").write_text(str(limit_bytes))
        with contextlib.suppress(OSError):  # no swap accounting on some kernels
            (self.path / "memory.memsw.limit_in_bytes").write_text(str(limit_bytes))

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def oom_kills(self) -> int:
        """How many processes the kernel OOM-killed in this cgroup (memory.oom_control's oom_kill)."""
        try:
            for line in (self.path / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        for _ in range(50):
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        print(f"sandbox: could not remove {self.path}", file=sys.stderr)


def _own_memory_cgroup() -> str | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                folder = CGROUP_V1_MEMORY / path.lstrip("/")
                return path if os.access(folder, os.W_OK) else None
    except OSError:
        return None
    return None


@dataclass
class Sandbox:
    """What to boot: a machine name (unique per run), the folders to bind, an optional OOM cgroup limit."""

    name: str
    binds: list[Bind] = field(default_factory=list)
    memory_limit_bytes: int | None = None
    boot_timeout_s: float = BOOT_TIMEOUT_S
    # Its own network namespace (only lo): ports cannot clash with the host or other containers.
    private_network: bool = True
    options: list[str] = field(default_factory=list)  # more systemd-nspawn options, e.g. an --overlay=


class Container:
    """A booted container: run commands inside, read and write its files, read its journal."""

    def __init__(self, spec: Sandbox, nspawn: subprocess.Popen[bytes], console: Path) -> None:
        self.spec = spec
        self.nspawn = nspawn
        self.console = console
        self.leader: int | None = None  # the container's systemd (PID 1 inside), as the host sees it
        self.pid_ns: str | None = None
        self.memcg: MemoryCgroup | None = None
        self.boot_cursor: str | None = None  # the journal's position once booted (for journal_text)

    @property
    def name(self) -> str:
        return self.spec.name

    # -- running things inside

    def run(
        self,
        *argv: str,
        check: bool = True,
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command inside the container (all its namespaces); output captured as text."""
        if self.leader is None:
            raise SandboxError(f"container {self.name} is not booted")
        prefix = ["nsenter", "-t", str(self.leader), "-a", "--"]
        if env:
            prefix += ["env", *(f"{k}={v}" for k, v in env.items())]
        try:
            proc = subprocess.run(
                [*prefix, *argv], capture_output=True, text=True, timeout=timeout, input=input, check=False
            )
        except subprocess.TimeoutExpired as err:
            raise SandboxError(f"`{' '.join(argv)}` inside {self.name} did not finish in {timeout:.0f} s") from err
        if check and proc.returncode != 0:
            raise SandboxError(
                f"`{' '.join(argv)}` inside {self.name} failed ({proc.returncode}): "
                f"{(proc.stderr or proc.stdout).strip()[-2000:]}"
            )
        return proc

    def sh(self, script: str, *, check: bool = True, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return self.run("/bin/sh", "-c", script, check=check, timeout=timeout)

    def exists(self, inside: str) -> bool:
        """Whether the path exists, as the container sees it (its symlinks resolved inside)."""
        return self.run("test", "-e", inside, check=False).returncode == 0

    def path(self, inside: str) -> Path:
        """The host's view of a path inside the container (through /proc/PID/root)."""
        if self.leader is None:
            raise SandboxError(f"container {self.name} is not booted")
        return Path(f"/proc/{self.leader}/root") / inside.lstrip("/")

    def write(self, inside: str, text: str, mode: int = 0o644) -> None:
        target = self.path(inside)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        target.chmod(mode)

    def read(self, inside: str) -> str:
        return self.path(inside).read_text(encoding="utf-8")

    # -- systemd inside

    def systemctl(self, *args: str, check: bool = True, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return self.run("systemctl", *args, check=check, timeout=timeout)

    def show(self, unit: str, *props: str) -> dict[str, str]:
        out = self.systemctl("show", unit, "-p", ",".join(props), check=False).stdout
        result: dict[str, str] = {}
        for line in out.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                result[key] = value
        return result

    def journal(self, *matches: str, since_cursor: str | None = None) -> list[dict[str, Any]]:
        """Journal entries inside, as ``journalctl -o json`` gives them (``matches``: FIELD=value)."""
        argv = ["journalctl", "--no-pager", "-o", "json", *matches]
        if since_cursor:
            argv += ["--after-cursor", since_cursor]
        out = self.run(*argv, check=False, timeout=60).stdout
        entries = []
        for line in out.splitlines():
            with contextlib.suppress(ValueError):
                entries.append(_decode_entry(json.loads(line)))
        return entries

    def journal_text(self, lines: int = 300, units: Sequence[str] = ()) -> str:
        """The tail of the journal since the boot finished (of these units only, if given), for a person."""
        argv = ["journalctl", "--no-pager", "-o", "short-precise", *(f"--unit={u}" for u in units)]
        argv += [f"--after-cursor={self.boot_cursor}"] if self.boot_cursor else ["-n", str(lines)]
        proc = self.run(*argv, check=False, timeout=60)
        return "\n".join((proc.stdout + proc.stderr).splitlines()[-lines:])

    def wait_until(self, what: str, predicate: Callable[[], T | None], timeout: float, interval: float = 0.5) -> T:
        """Poll ``predicate`` until it returns something truthy; SandboxError naming ``what`` on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise SandboxError(f"timed out after {timeout:.0f} s waiting for {what}", "see the container journal")
            if self.nspawn.poll() is not None:
                raise SandboxError(f"container {self.name} exited while waiting for {what}")
            time.sleep(interval)


def _decode_entry(raw: dict[str, Any]) -> dict[str, Any]:
    """journalctl -o json writes non-UTF-8 or binary values as byte arrays; make them text."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, list) and value and all(isinstance(x, int) for x in value):
            value = bytes(value).decode("utf-8", "replace")
        out[key] = value
    return out


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(x) for x in (task / "children").read_text().split()]
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _pid_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _find_leader(nspawn_pid: int) -> int | None:
    """The container's systemd: a descendant of systemd-nspawn named systemd."""
    queue = [nspawn_pid]
    seen = set()
    while queue:
        pid = queue.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        for child in _children(pid):
            if _comm(child) == "systemd":
                return child
            queue.append(child)
    return None


def _processes_in_ns(ns: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _pid_ns(int(entry.name)) == ns:
            pids.append(int(entry.name))
    return pids


@contextlib.contextmanager
def booted(spec: Sandbox) -> Iterator[Container]:
    """Boot a container, yield it once systemd is up, and always tear everything down afterwards."""
    check_host()
    workdir = Path(tempfile.mkdtemp(prefix=f"vllm-guard-{spec.name}-"))
    console = workdir / "console.log"
    memcg: MemoryCgroup | None = None
    container: Container | None = None
    old_term = signal.getsignal(signal.SIGTERM)
    if _main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)  # a SIGTERM to us tears down like Ctrl-C
    try:
        binds = list(spec.binds)
        if spec.memory_limit_bytes is not None:
            memcg = MemoryCgroup(f"vllm-guard-{spec.name}", spec.memory_limit_bytes)
            binds.append(Bind(memcg.path, INSIDE_MEMCG, read_only=False))
        argv = [
            "systemd-nspawn",
            "--quiet",
            "--keep-unit",
            "--register=no",
            "--volatile=yes",
            "-D",
            "/",
            "--boot",
            f"--machine={spec.name}",
            "--console=read-only",
            *(["--private-network"] if spec.private_network else []),
            *(b.option() for b in binds),
            *spec.options,
            "--",
            "systemd.firstboot=off",
        ]
        with console.open("wb") as log:
            nspawn = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        container = Container(spec, nspawn, console)
        container.memcg = memcg
        _wait_booted(container)
        yield container
    finally:
        if container is not None:
            _tear_down(container)
        if memcg is not None:
            memcg.remove()
        shutil.rmtree(workdir, ignore_errors=True)
        if _main_thread():
            signal.signal(signal.SIGTERM, old_term)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _wait_booted(c: Container) -> None:
    deadline = time.monotonic() + c.spec.boot_timeout_s
    while c.leader is None:
        if c.nspawn.poll() is not None:
            raise SandboxError(f"systemd-nspawn exited ({c.nspawn.returncode}): {_tail(c.console)}")
        c.leader = _find_leader(c.nspawn.pid)
        if time.monotonic() > deadline:
            raise SandboxError(f"no systemd appeared in container {c.name}: {_tail(c.console)}")
        time.sleep(0.1)
    c.pid_ns = _pid_ns(c.leader)
    state = ""
    while time.monotonic() < deadline:
        state = c.run("systemctl", "is-system-running", check=False, timeout=30).stdout.strip()
        if state in ("running", "degraded"):
            last = c.journal("-n", "1")
            c.boot_cursor = str(last[-1].get("__CURSOR")) if last else None
            return
        if c.nspawn.poll() is not None:
            break
        time.sleep(0.3)
    raise SandboxError(f"container {c.name} did not finish booting (state {state!r}): {_tail(c.console)}")


def _tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_bytes()[-n:].decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _tear_down(c: Container) -> None:
    """poweroff, then SIGTERM to nspawn, then SIGKILL of everything left in the container's PID namespace."""
    if c.nspawn.poll() is None and c.leader is not None:
        with contextlib.suppress(Exception):
            subprocess.run(
                ["nsenter", "-t", str(c.leader), "-a", "--", "systemctl", "poweroff", "--no-block"],
                capture_output=True,
                timeout=10,
                check=False,
            )
        _wait_exit(c.nspawn, POWEROFF_TIMEOUT_S)
    if c.nspawn.poll() is None:
        c.nspawn.terminate()
        _wait_exit(c.nspawn, 10)
    if c.nspawn.poll() is None:
        c.nspawn.kill()
        _wait_exit(c.nspawn, 5)
    if c.pid_ns is not None:
        for _ in range(20):
            left = _processes_in_ns(c.pid_ns)
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)


def _wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)


# ---------------------------------------------------------------- vllm-guard inside the container


def toml_value(value: Any) -> str:
    """A TOML literal for a str, bool, int, float, list or dict (inline table)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def toml_document(guard: Mapping[str, Any], targets: Sequence[Mapping[str, Any]]) -> str:
    """A config file: ``[guard]`` and one ``[[target]]`` per target; nested dicts become sub-tables,
    a list of dicts under ``fallback`` becomes ``[[target.fallback]]``."""
    lines: list[str] = []
    if guard:
        lines.append("[guard]")
        lines += [f"{k} = {toml_value(v)}" for k, v in guard.items()]
        lines.append("")
    for target in targets:
        lines.append("[[target]]")
        tables: list[tuple[str, Any]] = []
        for key, value in target.items():
            if (isinstance(value, dict) and key != "environment") or key == "fallback":
                tables.append((key, value))
            else:
                lines.append(f"{key} = {toml_value(value)}")
        for key, value in tables:
            if key == "fallback":
                for fb in value:
                    lines.append("")
                    lines.append("[[target.fallback]]")
                    lines += [f"{k} = {toml_value(v)}" for k, v in fb.items()]
            else:
                lines.append("")
                lines.append(f"[target.{key}]")
                lines += [f"{k} = {toml_value(v)}" for k, v in value.items()]
        lines.append("")
    return "\n".join(lines)


def fake_gpus(
    total_mib: int = 24576, holders: Sequence[Mapping[str, Any]] = (), unlisted_mib: int = 0
) -> dict[str, Any]:
    """The VLLM_GUARD_FAKE_GPUS document for one emulated GPU (``unlisted_mib``: in use by processes NVML does
    not list, as in a container)."""
    return {
        "gpus": [
            {
                "index": 0,
                "name": f"Emulated {total_mib // 1024} GiB",
                "total_mib": total_mib,
                "driver": "emulated",
                "processes": [dict(h) for h in holders],
                "unlisted_mib": unlisted_mib,
            }
        ]
    }


@dataclass
class GuardBox:
    """vllm-guard and a vLLM (emulator) unit in a booted container.

    ``host_dir`` is a host folder bound writable at ``INSIDE_TEST_DIR`` (config.toml, gpus.json, models,
    files the emulator writes); the source checkout ``repo`` and the venv ``venv`` are bound read-only at
    their own paths, and ``PYTHONPATH=repo/src`` makes the checkout's code the one that runs.
    """

    box: Container
    repo: Path
    venv: Path
    host_dir: Path

    @property
    def config_path(self) -> str:
        return f"{INSIDE_TEST_DIR}/config.toml"

    @property
    def gpus_path(self) -> str:
        return f"{INSIDE_TEST_DIR}/gpus.json"

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def emulator(self) -> str:
        return str(self.repo / "tests" / "emulator" / "vllm_emulator.py")

    def inside(self, name: str) -> str:
        """The path inside the container of a file in the test folder."""
        return f"{INSIDE_TEST_DIR}/{name}"

    def guard_env(self) -> dict[str, str]:
        return {"PYTHONPATH": str(self.repo / "src"), "VLLM_GUARD_FAKE_GPUS": self.gpus_path}

    def guard(self, *args: str, check: bool = True, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run ``vllm-guard ARGS`` inside the container (the checkout's code, the test config)."""
        return self.box.run(self.python, "-m", "vllm_guard", *args, check=check, timeout=timeout, env=self.guard_env())

    def write_gpus(self, doc: Mapping[str, Any]) -> None:
        """Rewrite the fake GPU file atomically (the guard and the emulator read it at any time)."""
        tmp = self.host_dir / "gpus.json.tmp"
        tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        tmp.replace(self.host_dir / "gpus.json")

    def write_config(self, guard: Mapping[str, Any], targets: Sequence[Mapping[str, Any]]) -> str:
        text = toml_document(guard, targets)
        (self.host_dir / "config.toml").write_text(text, encoding="utf-8")
        return text

    def emulator_target(
        self,
        *,
        unit: str = "vllm-emu",
        model: str,
        port: int = 8000,
        flags: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        restart_sec: int = 2,
        start_limit_burst: int = 5,
        start_limit_interval_sec: int = 600,
        **extra: Any,
    ) -> dict[str, Any]:
        """A ``[[target]]`` that runs the emulator as root, with a short RestartSec and a fast probe."""
        environment = {"VLLM_GUARD_FAKE_GPUS": self.gpus_path, "PYTHONUNBUFFERED": "1", **(env or {})}
        target: dict[str, Any] = {
            "unit": unit,
            "model": model,
            "port": port,
            "command": [self.python, self.emulator],
            "user": "root",
            "group": "root",
            "environment": environment,
            "startup_timeout_s": 60,
            "stop_timeout_s": 10,
            "flags": dict(flags or {}),
            "restart": {
                "restart_sec": restart_sec,
                "start_limit_burst": start_limit_burst,
                "start_limit_interval_sec": start_limit_interval_sec,
            },
            "probe": {"timeout_s": 5.0, "interval_s": 5.0, "failures_allowed": 2},
        }
        if "VLLM_EMU_MEMCG" in environment:
            # the emulator moves itself into the test's memory cgroup (a real unit has MemoryMax= instead): the
            # unit's read-only file system (ProtectSystem=strict) must let it write there
            target["hardening"] = {"ReadWritePaths": environment["VLLM_EMU_MEMCG"]}
        return with_overrides(target, extra)

    def install(self) -> str:
        """``vllm-guard install --config ...`` inside (renders the vLLM unit and its env file)."""
        return self.guard("install", "--config", self.config_path).stdout

    def install_guard_unit(self, *, extra_env: Mapping[str, str] | None = None) -> None:
        """The shipped ``units/vllm-guard.service``, plus a drop-in that only points ExecStart= here."""
        unit = (self.repo / "units" / GUARD_UNIT).read_text(encoding="utf-8")
        self.box.write(f"/run/systemd/system/{GUARD_UNIT}", unit)
        env = {**self.guard_env(), **(extra_env or {})}
        dropin = (
            "# Test drop-in: the guard from the source checkout, with the test config.\n"
            "[Service]\n"
            "ExecStart=\n"
            f"ExecStart={self.python} -m vllm_guard run --config {self.config_path}\n"
            "ExecReload=\n"
            f"ExecReload={self.python} -m vllm_guard run --check --config-only --config {self.config_path}\n"
            "ExecReload=/bin/kill -HUP $MAINPID\n" + "".join(f'Environment="{k}={v}"\n' for k, v in env.items())
        )
        self.box.write(f"/run/systemd/system/{GUARD_UNIT}.d/test.conf", dropin)
        self.box.systemctl("daemon-reload")

    def start_guard(self) -> None:
        self.box.systemctl("start", GUARD_UNIT, timeout=90)

    def events(self, unit: str | None = None, event: str | None = None) -> list[dict[str, Any]]:
        """The guard's journal events, oldest first (filtered by vLLM unit and event name)."""
        matches = ["SYSLOG_IDENTIFIER=vllm-guard"]
        if unit is not None:
            matches.append(f"VLLM_GUARD_UNIT={_unit_file(unit)}")
        if event is not None:
            matches.append(f"VLLM_GUARD_EVENT={event}")
        return [e for e in self.box.journal(*matches) if "VLLM_GUARD_EVENT" in e]

    def wait_event(self, event: str, unit: str | None = None, timeout: float = 120.0) -> dict[str, Any]:
        """The first guard event of this kind (for this unit); SandboxError on timeout."""

        def found() -> dict[str, Any] | None:
            got = self.events(unit, event)
            return got[0] if got else None

        return self.box.wait_until(f"the guard's {event} event", found, timeout)

    def unit_state(self, unit: str) -> dict[str, str]:
        return self.box.show(
            _unit_file(unit), "ActiveState", "SubState", "Result", "NRestarts", "ExecMainStatus", "InvocationID"
        )

    def starts(self, unit: str) -> int:
        """How many times the unit's main process started (distinct invocations that logged anything)."""
        seen = set()
        for entry in self.box.journal(f"_SYSTEMD_UNIT={_unit_file(unit)}"):
            inv = entry.get("_SYSTEMD_INVOCATION_ID")
            if inv and entry.get("_PID") != "1":
                seen.add(inv)
        return len(seen)

    def unit_log(self, unit: str) -> str:
        return "\n".join(str(e.get("MESSAGE", "")) for e in self.box.journal(f"_SYSTEMD_UNIT={_unit_file(unit)}"))

    def env_file(self, unit: str) -> dict[str, str]:
        """The env file the guard owns for the unit, parsed (quotes removed)."""
        text = self.box.read(f"/var/lib/vllm-guard/{_unit_file(unit).removesuffix('.service')}.env")
        out: dict[str, str] = {}
        for line in text.splitlines():
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, _, value = line.partition("=")
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            out[key] = value
        return out

    def flags(self, unit: str) -> list[str]:
        """The tunable flags in the env file (VLLM_GUARD_ARGS split into words)."""
        return self.env_file(unit).get("VLLM_GUARD_ARGS", "").split()

    def http(self, port: int, path: str, body: Mapping[str, Any] | None = None, timeout: float = 10.0) -> int:
        """An HTTP request from inside the container; returns the status (0 when no answer)."""
        script = (
            "import json,sys,urllib.request,urllib.error\n"
            f"data={json.dumps(json.dumps(body)) if body is not None else 'None'}\n"
            f"req=urllib.request.Request('http://127.0.0.1:{port}{path}',"
            " data=data.encode() if data else None, headers={'Content-Type':'application/json'})\n"
            "try:\n"
            f"  r=urllib.request.urlopen(req, timeout={timeout}); print(r.status)\n"
            "except urllib.error.HTTPError as e: print(e.code)\n"
            "except Exception: print(0)\n"
        )
        out = self.box.run("/usr/bin/python3", "-c", script, check=False, timeout=timeout + 10).stdout.strip()
        return int(out) if out.isdigit() else 0

    def chat(self, port: int, model: str, timeout: float = 10.0) -> int:
        body = {"model": model, "messages": [{"role": "user", "content": "Say ok"}], "max_tokens": 4}
        return self.http(port, "/v1/chat/completions", body, timeout)


def _unit_file(unit: str) -> str:
    return unit if unit.endswith(".service") else f"{unit}.service"


def with_overrides(target: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``target`` with the keys of ``extra``: a table (dict) is merged into the one there, anything else replaces."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            target[key] = {**target[key], **value}
        else:
            target[key] = value
    return target


@contextlib.contextmanager
def guard_box(
    name: str,
    *,
    repo: Path,
    venv: Path | None = None,
    memory_limit_bytes: int | None = None,
    keep_dir: Path | None = None,
    extra_binds: Sequence[Bind] = (),
) -> Iterator[GuardBox]:
    """Boot a container with the checkout, its venv and a fresh test folder bound in; tear down after."""
    venv = venv or Path(sys.prefix)
    # The guard's and the vLLM units have PrivateTmp=yes: a checkout under /tmp or /var/tmp is hidden from
    # them unless each service binds it back over its private /tmp (systemd mounts the longer path last).
    under_tmp = [str(f) for f in (repo, venv) if any(f.resolve().is_relative_to(t) for t in ("/tmp", "/var/tmp"))]
    host_dir = Path(tempfile.mkdtemp(prefix=f"vllm-guard-test-{name}-", dir=keep_dir))
    host_dir.chmod(0o755)
    binds = [Bind(repo), Bind(host_dir, INSIDE_TEST_DIR, read_only=False)]
    if not venv.resolve().is_relative_to(repo.resolve()):
        binds.append(Bind(venv))
    binds += list(extra_binds)
    try:
        with booted(Sandbox(name=name, binds=binds, memory_limit_bytes=memory_limit_bytes)) as box:
            gb = GuardBox(box=box, repo=repo, venv=venv, host_dir=host_dir)
            gb.write_gpus(fake_gpus())
            # The vLLM unit is After=network-online.target; the container's only link is lo, so
            # systemd-networkd-wait-online would hold every start for its 2-minute timeout.
            box.path("/run/systemd/system").mkdir(parents=True, exist_ok=True)
            box.path("/run/systemd/system/systemd-networkd-wait-online.service").symlink_to("/dev/null")
            if under_tmp:
                # a drop-in for every service (service.d/): the checkout stays visible behind PrivateTmp=
                box.write(
                    "/run/systemd/system/service.d/50-vllm-guard-test-checkout.conf",
                    "[Service]\nBindReadOnlyPaths=" + " ".join(under_tmp) + "\n",
                )
            box.systemctl("daemon-reload")
            yield gb
    finally:
        shutil.rmtree(host_dir, ignore_errors=True)
