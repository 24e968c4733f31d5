"""Building the packages once per test session, and a throwaway systemd that can install a .deb.

The system tier's containers boot the host's own ``/usr`` read-only on a fresh tmpfs root; a package
needs a writable ``/usr`` and dpkg's database. ``PackageBox`` adds both: an overlay on ``/usr`` whose
upper folder lives in a temporary folder on the host (the host's ``/usr`` is never written), and a
copy of the host's ``/var/lib/dpkg``, so dpkg and apt see the dependencies the image already has.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
BOOT_TIMEOUT_S = 90.0  # a boot takes about 5 s on 2 idle cores; much longer when the host is busy
POWEROFF_TIMEOUT_S = 20.0  # a clean poweroff takes 1-2 s
INSIDE_PKG_DIR = "/run/vllm-guard-pkg"  # where the built packages and test files are bound, read-only


def build_deps_missing() -> str | None:
    """Install what building the packages needs (packaging/build-deps); a reason to skip if that fails."""
    if shutil.which("apt-get") is None:
        return "not a Debian-like host (no apt-get)"
    proc = subprocess.run([str(PACKAGING / "build-deps")], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return f"packaging/build-deps failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}"
    return None


def build(kind: str, out: Path) -> Path:
    """Run packaging/build-deb or packaging/build-rpm into ``out``; the one package it made."""
    env = dict(os.environ, LINTIAN="0")
    proc = subprocess.run(
        [str(PACKAGING / f"build-{kind}"), str(out)], capture_output=True, text=True, check=False, env=env, timeout=900
    )
    assert proc.returncode == 0, f"build-{kind} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    pattern = "vllm-guard_*.deb" if kind == "deb" else "vllm-guard-*.rpm"
    found = sorted(out.glob(pattern))
    assert len(found) == 1, f"build-{kind} made {found}"
    return found[0]


def sandbox_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (systemd-nspawn)"
    for tool in ("systemd-nspawn", "nsenter", "dpkg"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


@dataclass
class PackageBox:
    """A booted container with a writable /usr overlay and its own copy of dpkg's database."""

    name: str
    nspawn: subprocess.Popen[bytes]
    leader: int
    work: Path

    def run(self, *argv: str, check: bool = True, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["nsenter", "-t", str(self.leader), "-a", "--", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"`{' '.join(argv)}` failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def sh(self, script: str, *, check: bool = True, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        return self.run("/bin/sh", "-c", script, check=check, timeout=timeout)

    def exists(self, path: str) -> bool:
        return self.run("test", "-e", path, check=False).returncode == 0

    def show(self, unit: str, *props: str) -> dict[str, str]:
        out = self.run("systemctl", "show", unit, *(f"--property={p}" for p in props)).stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def journal_text(self, lines: int = 200) -> str:
        return self.run("journalctl", "--no-pager", "-n", str(lines), check=False).stdout


def _find_leader(nspawn_pid: int) -> int | None:
    """The container's systemd: the child of systemd-nspawn."""
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{nspawn_pid}/task/{nspawn_pid}/children").read_text().split():
            if Path(f"/proc/{child}/comm").read_text().strip() == "systemd":
                return int(child)
    return None


@contextlib.contextmanager
def package_box(name: str, shared: Path) -> Iterator[PackageBox]:
    """Boot a container with ``shared`` bound read-only at INSIDE_PKG_DIR; always torn down."""
    work = Path(tempfile.mkdtemp(prefix=f"{name}-"))
    upper = work / "usr-upper"
    upper.mkdir()
    dpkg_db = work / "dpkg"
    shutil.copytree("/var/lib/dpkg", dpkg_db, symlinks=True)
    # The container's /etc is fresh: its groups are systemd's basic ones, so the host's overrides
    # for other accounts (e.g. ssl-cert) would make dpkg refuse to run.
    (dpkg_db / "statoverride").write_text("")
    (dpkg_db / "lock").unlink(missing_ok=True)
    argv = [
        "systemd-nspawn",
        "--quiet",
        "--keep-unit",
        "--register=no",
        "--volatile=yes",
        "-D",
        "/",
        "--boot",
        f"--machine={name}",
        "--console=read-only",
        f"--overlay=/usr:{upper}:/usr",
        f"--bind={dpkg_db}:/var/lib/dpkg",
        f"--bind-ro={shared}:{INSIDE_PKG_DIR}",
        "--bind-ro=/etc/apt:/etc/apt",
        "--",
        "systemd.firstboot=off",
    ]
    console = (work / "console.log").open("wb")
    nspawn = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT)
    box: PackageBox | None = None
    try:
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while True:
            assert nspawn.poll() is None, f"systemd-nspawn exited: {(work / 'console.log').read_text()[-2000:]}"
            leader = _find_leader(nspawn.pid)
            if leader is not None:
                box = PackageBox(name, nspawn, leader, work)
                state = box.run("systemctl", "is-system-running", check=False, timeout=30).stdout.strip()
                if state in ("running", "degraded"):
                    break
            assert time.monotonic() < deadline, f"{name} did not boot in {BOOT_TIMEOUT_S:.0f} s"
            time.sleep(0.5)
        yield box
    finally:
        if box is not None and nspawn.poll() is None:
            with contextlib.suppress(Exception):
                box.run("systemctl", "poweroff", "--no-block", check=False, timeout=10)
        try:
            nspawn.wait(timeout=POWEROFF_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            nspawn.send_signal(signal.SIGTERM)
            try:
                nspawn.wait(timeout=POWEROFF_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                nspawn.kill()
                nspawn.wait()
        console.close()
        shutil.rmtree(work, ignore_errors=True)
