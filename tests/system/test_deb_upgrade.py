"""Upgrading the .deb over a running guard keeps its state, restarts the guard once and no vLLM unit.

Two packages are built once per test session: this tree's (``built_deb``) and the same tree with a newer
Debian revision (a changelog entry and a changed config.toml.example in a copy; the committed changelog
stays). In one throwaway systemd the older one is installed and guards two emulated vLLM units, both
started with a KV cache too small for their ``max_model_len``: ``vllm-good`` is healed and verified before
the upgrade (its last-known-good flags are in the state), ``vllm-fail`` is mid-remedy: the guard has
rewritten its flags and it waits out a long ``RestartSec`` in systemd's auto-restart when the newer
package is installed with apt-get. Then the older one is installed over it: refused, and with
``VLLM_GUARD_ALLOW_DOWNGRADE=1`` done (packaging/README.md, "Upgrades and downgrades").
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from tests.system.harness import EMULATOR_MODELS, Q7
from tests.system.packages import (
    INSIDE_PKG_DIR,
    REPO,
    build_deps_missing,
    build_newer,
    emulator_target_toml,
    newer_version,
    package_box,
)
from tests.system.packages import sandbox_missing as _sandbox_missing
from vllm_guard.app.sandbox import Container
from vllm_guard.core.events import EventKind

pytestmark = pytest.mark.system

GOOD, FAIL = "vllm-good", "vllm-fail"
GUARD = "vllm-guard.service"
TIMEOUT_S = 90.0
# vllm-fail waits this long in auto-restart after its failure: the upgrade (unpack, byte-compiling, the
# guard's restart: about 2 s on 2 cores) happens well inside it
FAIL_RESTART_SEC = 30
# A KV cache too small for 32768 tokens at 0.7 of an emulated 24 GiB GPU: the emulator prints vLLM's
# "the estimated maximum model length is 30240", and the guard lowers max_model_len 5 % below it.
HEALED_FLAG = "--max-model-len=28720"
CONFIG = "/etc/vllm-guard/config.toml"
EXAMPLE = "/etc/vllm-guard/config.toml.example"
SYSTEMD_UNIT_STARTED = "39f53479d3a045ac8e11786248231fbf"  # PID 1: "Started UNIT" (systemd's catalog)


target = emulator_target_toml


# The administrator's own file, edited after installation (the comments and the second target are theirs).
ADMIN_CONFIG = (
    "# /etc/vllm-guard/config.toml: written by hand on this host, not by the package\n"
    "# 2026-11-30: a second server on port 8124\n" + target(GOOD, 8123, 2) + target(FAIL, 8124, FAIL_RESTART_SEC)
)


@pytest.fixture(scope="session")
def upgrade_debs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The older package (this tree's, shared with the other package tests) and a newer one, built at once."""
    reason = _sandbox_missing() or build_deps_missing()
    if reason:
        pytest.skip(reason)
    with ThreadPoolExecutor(max_workers=1) as pool:
        newer = pool.submit(build_newer, tmp_path_factory.mktemp("deb-newer"), newer_version())
        old: Path = request.getfixturevalue("built_deb")
        return old, newer.result()


@pytest.fixture(scope="module")
def box(upgrade_debs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    shared = tmp_path_factory.mktemp("upgrade-shared")
    for deb in upgrade_debs:
        shutil.copy(deb, shared / deb.name)
    shutil.copytree(EMULATOR_MODELS / Q7, shared / "models/qwen")
    shutil.copy(REPO / "tests/emulator/vllm_emulator.py", shared / "vllm_emulator.py")
    gpu = {"index": 0, "name": "Emulated 24 GiB", "total_mib": 24576, "driver": "emulated", "processes": []}
    (shared / "gpus.json").write_text(json.dumps({"gpus": [gpu]}))
    for path in [shared, *shared.rglob("*")]:  # the vLLM units run as vllm
        path.chmod(0o755 if path.is_dir() else 0o644)
    with package_box(f"vg-upg-{int(time.time()) % 100000}", shared) as b:
        yield b


# ---------------------------------------------------------------------------------------------- helpers


def apt_install(box: Container, deb: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """apt-get install of a .deb, as an unattended upgrade runs it: no terminal, stdin at its end (a conffile
    question would fail the run instead of waiting)."""
    proc = box.run(
        "apt-get",
        "install",
        "-y",
        *extra,
        f"{INSIDE_PKG_DIR}/{deb.name}",
        check=False,
        timeout=300,
        input="",
        env={"DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C", **(env or {})},
    )
    return proc.returncode, proc.stdout + proc.stderr


def version(box: Container) -> str:
    return box.run("dpkg-query", "-W", "-f=${Status} ${Version}", "vllm-guard").stdout


def journal_now(box: Container) -> int:
    """The journal's time now (of its last entry, in microseconds): what ``journal`` reads after."""
    last = box.run("journalctl", "--no-pager", "-n", "1", "-o", "json").stdout
    return int(json.loads(last)["__REALTIME_TIMESTAMP"])


def journal(box: Container, *matches: str, since: int = 0, until: int | None = None) -> list[dict[str, Any]]:
    """Entries written after ``since`` (and not after ``until``); journalctl's --after-cursor together with
    matches can skip the first entry that matches."""
    return [
        e
        for e in box.journal(*matches)
        if since < int(e["__REALTIME_TIMESTAMP"]) and (until is None or int(e["__REALTIME_TIMESTAMP"]) <= until)
    ]


def events(box: Container, kind: EventKind, unit: str | None = None, since: int = 0) -> list[dict[str, Any]]:
    matches = ["SYSLOG_IDENTIFIER=vllm-guard", f"MESSAGE_ID={kind.message_id}"]
    if unit:
        matches.append(f"VLLM_GUARD_UNIT={unit}.service")
    return journal(box, *matches, since=since)


def wait_event(box: Container, kind: EventKind, unit: str | None = None, since: int = 0) -> dict[str, Any]:
    def first() -> dict[str, Any] | None:
        got = events(box, kind, unit, since)
        return got[0] if got else None

    return box.wait_until(f"{kind.name.lower()} of {unit or 'the guard'}", first, TIMEOUT_S)


def unit(box: Container, name: str) -> dict[str, str]:
    return box.show(name, "ActiveState", "SubState", "NRestarts", "InvocationID", "MainPID")


def state(box: Container) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(box.read("/var/lib/vllm-guard/state.json"))
    return doc


def guard_restarts(box: Container, since: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """Since ``since``: PID 1's "Started vllm-guard.service" entries, the guard's guard_started events, and the
    invocation ids its process logged under."""
    started = journal(box, "_PID=1", f"MESSAGE_ID={SYSTEMD_UNIT_STARTED}", f"UNIT={GUARD}", since=since)
    said = events(box, EventKind.GUARD_STARTED, since=since)
    invocations = {str(e["_SYSTEMD_INVOCATION_ID"]) for e in journal(box, f"_SYSTEMD_UNIT={GUARD}", since=since)}
    return started, said, invocations


def pid1_jobs(box: Container, name: str, since: int, until: int | None = None) -> list[str]:
    """What PID 1 logged about a unit between ``since`` and ``until`` (its starts, stops, scheduled restarts)."""
    return [str(e.get("MESSAGE", "")) for e in journal(box, "_PID=1", f"UNIT={name}", since=since, until=until)]


def read_example(deb: Path) -> str:
    """config.toml.example as the package holds it."""
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(tar)) as members:
        packed = members.extractfile("." + EXAMPLE)
        assert packed is not None
        return packed.read().decode()


# ----------------------------------------------------------------------------------------------- tests


def test_upgrade_over_a_running_guard_mid_remedy_keeps_state_and_restarts_only_the_guard(
    box: Container, upgrade_debs: tuple[Path, Path]
) -> None:
    old_deb, new_deb = upgrade_debs
    old_version, new_version = (deb.name.split("_")[1] for deb in upgrade_debs)
    # -- the older package, guarding two units (images made for containers forbid service starts in
    # maintainer scripts; a host does not)
    box.run("rm", "-f", "/usr/sbin/policy-rc.d")
    box.run("mkdir", "-p", "/var/cache/apt/archives/partial", "/var/lib/apt/lists/partial")
    rc, out = apt_install(box, old_deb)
    assert rc == 0, out
    assert version(box) == f"install ok installed {old_version}"
    box.write(CONFIG, ADMIN_CONFIG)
    box.write(
        "/run/systemd/system/vllm-guard.service.d/fake-gpu.conf",
        f"[Service]\nEnvironment=VLLM_GUARD_FAKE_GPUS={INSIDE_PKG_DIR}/gpus.json\n",
    )
    box.run("vllm-guard", "install", "--enable", timeout=120)
    box.run("systemctl", "start", GUARD, timeout=120)
    box.run("systemctl", "start", "--no-block", f"{GOOD}.service", f"{FAIL}.service")

    # -- vllm-good healed and verified; vllm-fail remedied and waiting for systemd's restart
    wait_event(box, EventKind.VERIFIED_HEALTHY, GOOD)
    failed = wait_event(box, EventKind.REMEDY_APPLIED, FAIL)
    assert failed["VLLM_GUARD_KIND"] == "kv_cache_insufficient", failed
    assert HEALED_FLAG in failed["VLLM_GUARD_FLAGS_AFTER"], failed
    fail_before = unit(box, f"{FAIL}.service")
    assert (fail_before["ActiveState"], fail_before["SubState"]) == ("activating", "auto-restart"), fail_before
    good_before = unit(box, f"{GOOD}.service")
    assert good_before["ActiveState"] == "active", good_before
    guard_before = unit(box, GUARD)
    assert guard_before["ActiveState"] == "active", guard_before
    before = state(box)
    assert before["targets"][GOOD]["known_good"], before["targets"][GOOD]
    assert before["targets"][FAIL]["remedies"] and before["targets"][FAIL]["pending"] is None
    since = journal_now(box)

    # -- the upgrade
    t0 = time.monotonic()
    rc, out = apt_install(box, new_deb)
    took = time.monotonic() - t0
    good_after, fail_after = unit(box, f"{GOOD}.service"), unit(box, f"{FAIL}.service")
    assert rc == 0, out
    assert version(box) == f"install ok installed {new_version}"
    upgraded = journal_now(box)

    # no question about a configuration file; the administrator's config untouched; the example (a conffile
    # they did not edit) is the new package's
    assert "Configuration file" not in out and "conffile" not in out.lower(), out
    assert box.read(CONFIG) == ADMIN_CONFIG
    assert box.read(EXAMPLE) == read_example(new_deb) != read_example(old_deb)

    # the guard: restarted once, after the unpack (prerm did not stop it), by postinst
    wait_event(box, EventKind.GUARD_STARTED, since=since)
    started, said, invocations = guard_restarts(box, since)
    guard_after = unit(box, GUARD)
    assert len(started) == 1 and len(said) == 1, f"{started}\n{said}\n{out}\n{box.journal_text(200)}"
    assert guard_after["ActiveState"] == "active", guard_after
    assert guard_after["InvocationID"] != guard_before["InvocationID"]
    assert invocations <= {guard_before["InvocationID"], guard_after["InvocationID"]}, invocations
    assert said[0]["_PID"] == guard_after["MainPID"]
    assert guard_after["NRestarts"] == guard_before["NRestarts"] == "0", guard_after  # no crash on the way
    # stopped only once the new files were in place: after postinst's daemon-reload, not by prerm before the unpack
    pid1 = [str(e.get("MESSAGE", "")) for e in journal(box, "_PID=1", since=since)]
    reload_at = next((i for i, m in enumerate(pid1) if m.startswith("Reloading")), None)
    stop_at = next((i for i, m in enumerate(pid1) if m.startswith("Stopping vllm-guard.service")), None)
    assert reload_at is not None and stop_at is not None and reload_at < stop_at, pid1

    # the vLLM units: nothing done to them (vllm-fail still waits out its RestartSec from before)
    assert fail_after["SubState"] == "auto-restart", (
        f"vllm-fail's RestartSec ran out before the upgrade ({took:.0f} s) was over"
    )
    for key in ("InvocationID", "MainPID", "NRestarts", "ActiveState"):
        assert good_after[key] == good_before[key], (key, good_before, good_after)
    for key in ("InvocationID", "NRestarts", "SubState"):
        assert fail_after[key] == fail_before[key], (key, fail_before, fail_after)
    for name in (GOOD, FAIL):
        assert pid1_jobs(box, f"{name}.service", since, upgraded) == [], f"PID 1 acted on {name} during the upgrade"

    # the state went on: same remedies, same last-known-good flags
    after = state(box)
    for name in (GOOD, FAIL):
        assert after["targets"][name]["remedies"] == before["targets"][name]["remedies"], name
    assert after["targets"][GOOD]["known_good"] == before["targets"][GOOD]["known_good"]
    assert not box.run("sh", "-c", "ls /var/lib/vllm-guard/ | grep -E 'corrupt|schema-'", check=False).stdout

    # -- vllm-fail restarts on the remedied flags when its RestartSec is over, and the new guard verifies it
    healthy = wait_event(box, EventKind.VERIFIED_HEALTHY, FAIL)
    assert healthy["_PID"] == guard_after["MainPID"], "verified by the guard the upgrade started"
    assert HEALED_FLAG in healthy["VLLM_GUARD_FLAGS_AFTER"], healthy
    remedies = events(box, EventKind.REMEDY_APPLIED, FAIL)
    assert len(remedies) == 1, [r["MESSAGE"] for r in remedies]  # exactly once, across the guard's restart
    assert remedies[0]["VLLM_GUARD_INVOCATION_ID"] == fail_before["InvocationID"]
    assert len(events(box, EventKind.REMEDY_APPLIED, GOOD)) == 1
    env = box.read(f"/var/lib/vllm-guard/{FAIL}.env")
    assert HEALED_FLAG in env and "--max-model-len=32768" not in env, env
    # one restart, systemd's own after the failure; none made by the upgrade
    assert unit(box, f"{FAIL}.service")["NRestarts"] == "1"
    assert unit(box, f"{GOOD}.service")["MainPID"] == good_before["MainPID"]
    assert pid1_jobs(box, f"{GOOD}.service", upgraded) == []
    final = state(box)
    assert final["targets"][FAIL]["known_good"] and final["targets"][GOOD]["known_good"]
    print(f"\nupgrade {old_version} -> {new_version}: apt-get install took {took:.1f} s")


def test_a_downgrade_is_refused_unless_allowed_and_then_keeps_the_state(
    box: Container, upgrade_debs: tuple[Path, Path]
) -> None:
    old_deb, _ = upgrade_debs
    old_version, new_version = (deb.name.split("_")[1] for deb in upgrade_debs)
    if version(box) != f"install ok installed {new_version}":
        pytest.skip("the upgrade above did not happen")
    guard_before = unit(box, GUARD)
    units_before = {name: unit(box, f"{name}.service") for name in (GOOD, FAIL)}
    before = state(box)
    since = journal_now(box)

    # -- refused: the installed version stays, the running guard is not touched (postinst abort-upgrade)
    rc, out = apt_install(box, old_deb, "--allow-downgrades")
    assert rc != 0, out
    assert f"vllm-guard: refusing to downgrade from {new_version} to {old_version}" in out, out
    assert f"VLLM_GUARD_ALLOW_DOWNGRADE=1 apt-get install --allow-downgrades vllm-guard={old_version}" in out, out
    assert version(box) == f"install ok installed {new_version}"
    assert unit(box, GUARD) == guard_before
    started, said, _ = guard_restarts(box, since)
    assert started == [] and said == [], "a refused downgrade restarted the guard"
    # the byte code prerm removed is back
    assert box.run("find", "/usr/lib/vllm-guard", "-name", "__pycache__", "-print", "-quit").stdout.strip()

    # -- with the override: done, the guard restarted once, on the same state
    since = journal_now(box)
    rc, out = apt_install(box, old_deb, "--allow-downgrades", env={"VLLM_GUARD_ALLOW_DOWNGRADE": "1"})
    assert rc == 0, out
    assert f"vllm-guard: downgrading from {new_version} to {old_version}" in out, out
    assert version(box) == f"install ok installed {old_version}"
    wait_event(box, EventKind.GUARD_STARTED, since=since)
    started, said, _ = guard_restarts(box, since)
    assert len(started) == 1 and len(said) == 1, f"{started}\n{said}\n{out}\n{box.journal_text(200)}"
    assert unit(box, GUARD)["InvocationID"] != guard_before["InvocationID"]
    for name, was in units_before.items():
        now = unit(box, f"{name}.service")
        assert {k: now[k] for k in ("InvocationID", "MainPID", "NRestarts")} == {
            k: was[k] for k in ("InvocationID", "MainPID", "NRestarts")
        }, name
        assert pid1_jobs(box, f"{name}.service", since) == [], name
    # the same schema: the older guard reads the state as it is (nothing kept aside)
    after = state(box)
    for name in (GOOD, FAIL):
        assert after["targets"][name]["known_good"] == before["targets"][name]["known_good"], name
        assert after["targets"][name]["remedies"] == before["targets"][name]["remedies"], name
    assert not box.run("sh", "-c", "ls /var/lib/vllm-guard/ | grep -E 'corrupt|schema-'", check=False).stdout
    assert box.read(CONFIG) == ADMIN_CONFIG
