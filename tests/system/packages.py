"""Building the packages once per test session, and a throwaway systemd that can install a .deb.

The system tier's containers boot the host's own ``/usr`` read-only on a fresh tmpfs root; a package
needs a writable ``/usr`` and dpkg's database. ``package_box`` boots the same sandbox with both: an
overlay on ``/usr`` whose upper folder lives in a temporary folder on the host (the host's ``/usr`` is
never written), and a copy of the host's ``/var/lib/dpkg``, so dpkg and apt see the dependencies the
image already has.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from vllm_guard.app.sandbox import Bind, Container, Sandbox, booted

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
INSIDE_PKG_DIR = "/run/vllm-guard-pkg"  # where the built packages and test files are bound, read-only


def emulator_target_toml(unit: str, port: int, restart_sec: int) -> str:
    """A ``[[target]]`` running the emulator bound at INSIDE_PKG_DIR, whose KV cache is too small for 32768 tokens
    at 0.7 of an emulated 24 GiB GPU: the emulator prints vLLM's "the estimated maximum model length is 30240", and
    the guard lowers max_model_len 5 % below it (28720)."""
    return f"""
[[target]]
unit = "{unit}"
model = "{INSIDE_PKG_DIR}/models/qwen"
port = {port}
command = ["/usr/bin/python3", "{INSIDE_PKG_DIR}/vllm_emulator.py"]
environment = {{ VLLM_GUARD_FAKE_GPUS = "{INSIDE_PKG_DIR}/gpus.json", PYTHONUNBUFFERED = "1" }}
startup_timeout_s = 60

[target.flags]
gpu_memory_utilization = 0.7
max_model_len = 32768

[target.restart]
restart_sec = {restart_sec}
"""


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


def source_copy(dest: Path) -> Path:
    """This checkout as packaging/build-deb copies it (what git tracks, and new files it does not ignore), in
    ``dest``: a tree to change before building, the checkout staying as it is."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = REPO / name
        if src.is_file():  # a file deleted but not yet committed is listed and gone
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name, follow_symlinks=False)
    return dest


def newer_version() -> str:
    """The committed changelog's version with its Debian revision raised: 0.1.0-1 -> 0.1.0-2."""
    version = subprocess.run(
        ["dpkg-parsechangelog", "-l", str(PACKAGING / "debian/changelog"), "-S", "Version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    upstream, _, revision = version.rpartition("-")
    return f"{upstream}-{int(revision) + 1}" if upstream and revision.isdigit() else f"{version}+1"


def build_newer(out: Path, version: str) -> Path:
    """The .deb of ``version``, newer than the committed one: packaging/build-deb run on a copy of this tree
    whose changelog has an entry for it on top and whose config.toml.example (a conffile) names it. The
    committed changelog is not changed."""
    tree = source_copy(Path(tempfile.mkdtemp(prefix="vg-newer-src-")))
    try:
        changelog = tree / "packaging/debian/changelog"
        maintainer = subprocess.run(
            ["dpkg-parsechangelog", "-l", str(changelog), "-S", "Maintainer"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        date = email.utils.format_datetime(datetime.datetime.now(datetime.UTC))
        entry = f"vllm-guard ({version}) unstable; urgency=medium\n\n  * A newer build.\n\n -- {maintainer}  {date}\n\n"
        changelog.write_text(entry + changelog.read_text(encoding="utf-8"), encoding="utf-8")
        example = tree / "packaging/example-config.toml"
        example.write_text(example.read_text(encoding="utf-8") + f"# vllm-guard {version}\n", encoding="utf-8")
        env = dict(os.environ, LINTIAN="0")
        proc = subprocess.run(
            [str(tree / "packaging/build-deb"), str(out)],
            capture_output=True,
            text=True,
            check=False,
            env=env,
            timeout=900,
        )
        assert proc.returncode == 0, f"build-deb of {version} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    found = sorted(out.glob(f"vllm-guard_{version}_*.deb"))
    assert len(found) == 1, f"build-deb of {version} made {sorted(out.iterdir())}"
    return found[0]


def sandbox_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (systemd-nspawn)"
    for tool in ("systemd-nspawn", "nsenter", "dpkg"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


@contextlib.contextmanager
def package_box(
    name: str, shared: Path, *, inside: str = INSIDE_PKG_DIR, network_zone: str | None = None
) -> Iterator[Container]:
    """Boot a container that can install a .deb (a writable /usr overlay, a copy of the host's dpkg database), with
    ``shared`` bound read-only at ``inside``; on the host's network, or on the private bridge ``network_zone``.
    Always torn down."""
    work = Path(tempfile.mkdtemp(prefix=f"{name}-"))
    try:
        upper = work / "usr-upper"
        upper.mkdir()
        dpkg_db = work / "dpkg"
        shutil.copytree("/var/lib/dpkg", dpkg_db, symlinks=True)
        # The container's /etc is fresh: its groups are systemd's basic ones, so the host's overrides
        # for other accounts (e.g. ssl-cert) would make dpkg refuse to run.
        (dpkg_db / "statoverride").write_text("")
        (dpkg_db / "lock").unlink(missing_ok=True)
        spec = Sandbox(
            name,
            binds=[
                Bind(dpkg_db, "/var/lib/dpkg", read_only=False),
                Bind(shared, inside),
                Bind(Path("/etc/apt")),
            ],
            # apt resolves the dependencies the image already has, as on a host
            private_network=network_zone is not None,
            options=[f"--overlay=/usr:{upper}:/usr"] + ([f"--network-zone={network_zone}"] if network_zone else []),
        )
        with booted(spec) as box:
            yield box
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- packages for each Debian release

RELEASES = {"bookworm": "~deb12", "trixie": "~deb13"}  # the releases build-deb --release builds for
BUILD_CACHE = Path(os.environ.get("VLLM_GUARD_BUILD_CACHE", "/var/cache/vllm-guard-build"))


def release_root(release: str) -> Path:
    """The cached build root of a Debian release (packaging/build-deps --release makes it once)."""
    proc = subprocess.run(
        [str(PACKAGING / "build-deps"), "--release", release], capture_output=True, text=True, check=False, timeout=1800
    )
    assert proc.returncode == 0, f"build-deps --release {release} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    root = Path(proc.stdout.strip().splitlines()[-1])
    assert (root / "usr/bin/python3").exists(), f"{root} is no Debian root"
    return root


def build_for_release(release: str, out: Path) -> tuple[Path, str]:
    """packaging/build-deb --release RELEASE into ``out`` (lintian runs inside the root); the package and
    what the build printed (lintian's findings among it)."""
    proc = subprocess.run(
        [str(PACKAGING / "build-deb"), "--release", release, str(out)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    printed = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"build-deb --release {release} failed:\n{printed[-4000:]}"
    found = sorted(out.glob(f"vllm-guard_*{RELEASES[release]}_*.deb"))
    assert len(found) == 1, f"build-deb --release {release} made {sorted(out.iterdir())}"
    return found[0], printed


@contextlib.contextmanager
def release_box(name: str, root: Path, shared: Path) -> Iterator[Container]:
    """Boot the cached root of a release with ``shared`` bound read-only at INSIDE_PKG_DIR; torn down after.

    The sandbox boots the host's ``/`` volatile; the later ``--directory=``/``--volatile=`` options win
    (systemd-nspawn takes the last of each), so this boots ``root`` instead, read-only under a tmpfs
    overlay: what the test writes is gone afterwards, and the cached root is never changed. No network:
    apt resolves the package's dependencies from what the root holds.
    """
    spec = Sandbox(name, binds=[Bind(shared, INSIDE_PKG_DIR)], options=[f"--directory={root}", "--volatile=overlay"])
    with booted(spec) as box:
        yield box
