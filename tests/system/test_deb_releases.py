"""The .deb for Debian 12 and 13, each built in a root of its release and installed on that release.

``packaging/build-deb --release`` builds inside a cached minimal root of the release (mmdebstrap);
``packaging/build-repo`` publishes both packages in one signed apt repository. For each release a
container boots that same root (a throwaway overlay, no network), adds the repository with its key
(``signed-by``), installs the guard with apt-get, starts it, lets it heal an emulated KV-cache failure,
and ``apt-get purge`` then leaves nothing on the file system that was not there before, but the
administrator's own config.toml.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.system.harness import EMULATOR_MODELS, Q7
from tests.system.packages import (
    INSIDE_PKG_DIR,
    PACKAGING,
    RELEASES,
    REPO,
    build_for_release,
    emulator_target_toml,
    release_box,
    release_root,
)
from tests.system.packages import sandbox_missing as _sandbox_missing
from vllm_guard import __version__
from vllm_guard.app.sandbox import Container

pytestmark = pytest.mark.system

PYTHON = {"bookworm": "python3.11", "trixie": "python3.13"}  # each release's python3
UNIT = "vllm-rel"
PORT = 8123
TIMEOUT_S = 90.0
CONFIG = "/etc/vllm-guard/config.toml"
REPO_INSIDE = f"{INSIDE_PKG_DIR}/repo"
KEYRING = f"{REPO_INSIDE}/vllm-guard-archive-keyring.gpg"
TARGET = emulator_target_toml(UNIT, PORT, 3)
HEALED_FLAG = "--max-model-len=28720"
# What changes on any system while packages come and go, or belongs to the administrator: left out of the
# before/after comparison of the file system.
NOT_COMPARED = (
    "/var/lib/dpkg",
    "/var/lib/apt",
    "/var/cache/apt",
    "/var/cache/debconf",
    "/var/cache/ldconfig",
    "/var/cache/man",  # man-db's index, rebuilt by its trigger
    "/var/log",
    "/var/lib/systemd",
    "/var/tmp",
    "/etc/apt/sources.list.d",
    # the account files' backups, written when sysusers adds the vllm account (which stays, by design)
    "/etc/passwd-",
    "/etc/group-",
    "/etc/shadow-",
    "/etc/gshadow-",
)


@pytest.fixture(scope="module")
def release_debs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """Each release's package and its build's output, both built at once (their roots made once, cached)."""
    reason = _sandbox_missing()
    if reason:
        pytest.skip(reason)
    if shutil.which("apt-get") is None:
        pytest.skip("not a Debian-like host (no apt-get)")
    out = tmp_path_factory.mktemp("release-debs")
    with ThreadPoolExecutor(max_workers=len(RELEASES)) as pool:
        jobs = {r: pool.submit(build_for_release, r, out / r) for r in RELEASES}
        return {r: job.result() for r, job in jobs.items()}


@pytest.fixture(scope="module")
def apt_repo(release_debs: dict[str, tuple[Path, str]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A signed apt repository holding both releases' packages (packaging/build-repo, a throwaway key)."""
    shared = tmp_path_factory.mktemp("release-shared")
    repo = shared / "repo"
    proc = subprocess.run(
        [str(PACKAGING / "build-repo"), str(repo), *(str(deb) for deb, _ in release_debs.values())],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shutil.copytree(EMULATOR_MODELS / Q7, shared / "models/qwen")
    shutil.copy(REPO / "tests/emulator/vllm_emulator.py", shared / "vllm_emulator.py")
    gpu = {"index": 0, "name": "Emulated 24 GiB", "total_mib": 24576, "driver": "emulated", "processes": []}
    (shared / "gpus.json").write_text(json.dumps({"gpus": [gpu]}))
    # apt reads file: repositories as its _apt account, the vLLM unit runs as vllm: all of it is readable
    subprocess.run(["chmod", "-R", "a+rX", str(shared)], check=True)
    return shared


@pytest.fixture(params=list(RELEASES))
def release(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def box(release: str, apt_repo: Path) -> Iterator[Container]:
    with release_box(f"vg-{release}-{int(time.time()) % 100000}", release_root(release), apt_repo) as b:
        yield b


def documented_lintian_tags() -> set[str]:
    """The lintian tags packaging/README.md gives a reason for (its "lintian" list: `- \\`tag\\`: why`)."""
    text = (PACKAGING / "README.md").read_text(encoding="utf-8")
    section = text.split("### lintian", 1)[1].split("\n#", 1)[0] if "### lintian" in text else ""
    return set(re.findall(r"^- `([a-z0-9-]+)`", section, flags=re.M))


def test_each_package_is_made_for_its_release(release: str, release_debs: dict[str, tuple[Path, str]]) -> None:
    deb, _ = release_debs[release]
    fields = {
        name: subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True, check=True).stdout
        for name in ("Version", "Depends")
    }
    assert fields["Version"].strip() == f"{__version__}-1{RELEASES[release]}"
    # the venv's interpreter is that release's python3.X, and the package depends on it
    python = PYTHON[release]
    assert (release_root(release) / "usr/bin/python3").resolve().name == python
    assert re.search(rf"(^|, ){re.escape(python)}(,|$)", fields["Depends"].strip()), fields["Depends"]
    files = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    assert f"./usr/lib/vllm-guard/venv/lib/{python}/site-packages/vllm_guard/" in files
    assert f"./usr/lib/vllm-guard/venv/bin/{python} -> ../../../../bin/{python}" in files
    # the release's changelog entry is the first one (added at build time; the committed changelog has none)
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as members:
        packed = members.extractfile("./usr/share/doc/vllm-guard/changelog.Debian.gz")
        assert packed is not None
        first = gzip.decompress(packed.read()).decode().splitlines()[0]
    assert first == f"vllm-guard ({__version__}-1{RELEASES[release]}) {release}; urgency=medium", first


def test_lintian_of_the_release_finds_no_error_and_only_documented_warnings(
    release: str, release_debs: dict[str, tuple[Path, str]]
) -> None:
    """build-deb ran the release's own lintian in its root (it fails the build on an error)."""
    _, printed = release_debs[release]
    errors = [line for line in printed.splitlines() if line.startswith("E: ")]
    assert not errors, printed
    warned = set(re.findall(r"^W: vllm-guard: ([a-z0-9-]+)", printed, flags=re.M))
    assert warned <= documented_lintian_tags(), (
        f"lintian warnings without a reason in packaging/README.md: {sorted(warned - documented_lintian_tags())}\n"
        + printed
    )


def files_now(box: Container) -> set[str]:
    """Every path on the container's own file system, but what NOT_COMPARED names."""
    prune = " -o ".join(f"-path {p}" for p in NOT_COMPARED)
    out = box.sh(f"find / -xdev \\( {prune} \\) -prune -o -print", timeout=120).stdout
    return set(out.splitlines())


def events(box: Container, event: str) -> list[dict[str, str]]:
    out = box.run(
        "journalctl", "--no-pager", "-o", "json", "SYSLOG_IDENTIFIER=vllm-guard", f"VLLM_GUARD_EVENT={event}"
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def wait_event(box: Container, event: str) -> dict[str, str]:
    def first() -> dict[str, str] | None:
        got = events(box, event)
        return got[0] if got else None

    return box.wait_until(f"the guard's {event} event", first, TIMEOUT_S)


def apt(box: Container, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """apt-get with only the vllm-guard repository as source (the container has no network for Debian's)."""
    return box.run(
        "apt-get", "-o", "Dir::Etc::SourceList=/dev/null", *args, check=check, timeout=300, env={"LC_ALL": "C"}
    )


def test_install_from_the_signed_repository_start_heal_and_purge(
    release: str, box: Container, release_debs: dict[str, tuple[Path, str]]
) -> None:
    python = PYTHON[release]
    assert box.run("readlink", "-f", "/usr/bin/python3").stdout.strip() == f"/usr/bin/{python}"
    before = files_now(box)

    # -- the repository, as an administrator adds it; apt checks its signature against the named key only
    source = f"deb [signed-by={KEYRING}] file:{REPO_INSIDE} {release} main\n"
    box.write("/etc/apt/sources.list.d/vllm-guard.list", source)
    wrong_key = source.replace(KEYRING, "/usr/share/keyrings/debian-archive-keyring.gpg")
    box.write("/run/wrong-key/vllm-guard.list", wrong_key)
    box.run("mkdir", "-p", "/run/wrong-key/lists/partial")
    refused = apt(
        box,
        "-o",
        "Dir::Etc::SourceParts=/run/wrong-key",
        "-o",
        "Dir::State::Lists=/run/wrong-key/lists",
        "update",
        check=False,
    )
    assert refused.returncode != 0 and "is not signed" in refused.stdout + refused.stderr, (
        refused.stdout + refused.stderr
    )
    update = apt(box, "update")
    assert "W:" not in update.stdout + update.stderr, update.stdout + update.stderr
    policy = apt_cache_policy(box)
    assert f"Candidate: {__version__}-1{RELEASES[release]}" in policy, policy

    # -- install: the dependencies come from the release itself (what the root holds)
    box.run("mkdir", "-p", "/var/cache/apt/archives/partial")
    install = apt(box, "install", "-y", "vllm-guard")
    assert "vllm-guard" in install.stdout
    status = box.run("dpkg-query", "-W", "-f=${Status} ${Version}", "vllm-guard").stdout
    assert status == f"install ok installed {__version__}-1{RELEASES[release]}"
    assert box.run("vllm-guard", "--version").stdout.strip() == f"vllm-guard {__version__}"
    venv_python = box.run("/usr/lib/vllm-guard/venv/bin/python3", "-c", "import sys; print(sys.version_info[:2])")
    assert venv_python.stdout.strip() == str(tuple(int(x) for x in python.removeprefix("python").split(".")))
    assert box.run("systemctl", "is-enabled", "vllm-guard.service").stdout.strip() == "enabled"
    assert box.show("vllm-guard.service", "ConditionResult")["ConditionResult"] == "no"  # no config yet

    # -- the config (the emulator as vLLM), the GPU the guard sees (a runtime drop-in), install, start
    box.write(CONFIG, TARGET)
    box.write(
        "/run/systemd/system/vllm-guard.service.d/fake-gpu.conf",
        f"[Service]\nEnvironment=VLLM_GUARD_FAKE_GPUS={INSIDE_PKG_DIR}/gpus.json\n",
    )
    out = box.run("vllm-guard", "install", "--enable", timeout=120)
    assert f"wrote /etc/systemd/system/{UNIT}.service" in out.stdout + out.stderr
    box.run("systemctl", "start", "vllm-guard.service", timeout=120)
    assert box.show("vllm-guard.service", "ActiveState")["ActiveState"] == "active"

    # -- vLLM fails for a KV cache too small; the guard lowers max_model_len and the next start serves
    box.run("systemctl", "start", "--no-block", f"{UNIT}.service")
    remedy = wait_event(box, "remedy_applied")
    assert remedy["VLLM_GUARD_KIND"] == "kv_cache_insufficient", remedy
    assert HEALED_FLAG in remedy["VLLM_GUARD_FLAGS_AFTER"], remedy
    healthy = wait_event(box, "verified_healthy")
    assert HEALED_FLAG in healthy["VLLM_GUARD_FLAGS_AFTER"], healthy

    # -- purge: the administrator stops vLLM, then purges; nothing the package or the guard made is left
    box.run("systemctl", "stop", f"{UNIT}.service", timeout=60)
    purge = apt(box, "purge", "-y", "vllm-guard")
    assert f"disabled and removed {UNIT}.service" in purge.stdout + purge.stderr
    assert box.run("dpkg-query", "-W", "vllm-guard", check=False).returncode != 0
    box.run("systemctl", "daemon-reload")
    assert box.run("systemctl", "is-enabled", f"{UNIT}.service", check=False).stdout.strip() != "enabled"
    assert box.show("vllm-guard.service", "LoadState")["LoadState"] == "not-found"
    left = sorted(files_now(box) - before)
    # the administrator's config stays (and its folder): dpkg never removes what it did not install
    assert left == ["/etc/vllm-guard", CONFIG], f"left after apt-get purge: {left}"
    for gone in ("/var/lib/vllm-guard", "/var/cache/vllm-guard", "/usr/lib/vllm-guard", "/etc/vllm-guard/config.d"):
        assert not box.exists(gone), f"{gone} is left after apt-get purge"


def apt_cache_policy(box: Container) -> str:
    return box.run(
        "apt-cache", "-o", "Dir::Etc::SourceList=/dev/null", "policy", "vllm-guard", env={"LC_ALL": "C"}
    ).stdout
