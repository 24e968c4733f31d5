"""The .deb, end to end: built from this tree, checked by lintian, installed with dpkg into a throwaway
systemd, started with ``systemctl start`` (active only through sd_notify READY=1), its journal event
explained by ``journalctl -x`` from the shipped catalog, then removed and purged without leftovers.

The steps run in order on one container (module scope): install, start, reinstall, remove.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.system.packages import INSIDE_PKG_DIR, REPO, package_box
from tests.system.packages import sandbox_missing as _sandbox_missing
from tests.unit.test_packaging import parse_catalog
from vllm_guard import __version__
from vllm_guard.app.sandbox import Container
from vllm_guard.core.events import EventKind

pytestmark = pytest.mark.system

CATALOG = parse_catalog((REPO / "packaging/catalog/vllm-guard.catalog").read_text(encoding="utf-8"))
START_TIMEOUT_S = 60.0  # the guard reports READY within a few seconds; a busy 2-core host is slower
# A config the guard can load inside the container: the model folder is bound read-only, the GPU
# is the emulated one the shared test contract defines (VLLM_GUARD_FAKE_GPUS).
CONFIG = f"""\
[guard]
metrics = true

[[target]]
unit = "vllm-pkgtest"
model = "{INSIDE_PKG_DIR}/models/tiny"
port = 8123
[target.flags]
max_model_len = 2048
"""
GPUS = {"gpus": [{"index": 0, "name": "Emulated 24 GiB", "total_mib": 24576, "driver": "emulated", "processes": []}]}


@pytest.fixture(scope="module")
def box(built_deb: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    reason = _sandbox_missing()
    if reason:
        pytest.skip(reason)
    shared = tmp_path_factory.mktemp("pkg-shared")
    shutil.copy(built_deb, shared / built_deb.name)
    shutil.copytree(REPO / "tests/data/models/tiny-qwen2", shared / "models/tiny")
    (shared / "gpus.json").write_text(json.dumps(GPUS))
    with package_box(f"vg-deb-{int(time.time()) % 100000}", shared) as b:
        yield b


def test_lintian_reports_no_errors(built_deb: Path) -> None:
    if shutil.which("lintian") is None:
        pytest.skip("lintian is not installed (packaging/build-deps installs it)")
    proc = subprocess.run(
        ["lintian", "--fail-on", "error", "--no-tag-display-limit", str(built_deb)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    errors = [line for line in proc.stdout.splitlines() if line.startswith("E:")]
    assert proc.returncode == 0 and not errors, proc.stdout + proc.stderr


def test_the_package_holds_what_a_host_needs(built_deb: Path) -> None:
    files = subprocess.run(["dpkg-deb", "-c", str(built_deb)], capture_output=True, text=True, check=True).stdout
    for path in (
        "./usr/bin/vllm-guard",
        "./usr/lib/systemd/system/vllm-guard.service",
        "./usr/lib/systemd/system/vllm-guard.service.d/wait-for-config.conf",
        "./usr/lib/systemd/catalog/vllm-guard.catalog",
        "./usr/lib/sysusers.d/vllm-guard.conf",
        "./usr/share/man/man8/vllm-guard.8.gz",
        "./usr/share/bash-completion/completions/vllm-guard",
        "./etc/vllm-guard/config.toml.example",
        "./usr/lib/vllm-guard/venv/pyvenv.cfg",
        # The unit templates and static units, inside the installed package (render.data_dir).
        "/site-packages/vllm_guard/_data/templates/vllm-unit.service.j2",
        "/site-packages/vllm_guard/_data/units/vllm-guard.service",
    ):
        assert path in files, f"{path} is not in the package"
    assert "__pycache__" not in files, "byte code is made at install time, not shipped"
    conffiles = subprocess.run(
        ["dpkg-deb", "-f", str(built_deb), "Depends"], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"\bpython3\.\d+\b", conffiles), f"the venv's interpreter is not a dependency: {conffiles}"


def test_install_enables_the_service_and_waits_for_a_config(box: Container, built_deb: Path) -> None:
    # Images made for containers forbid service starts in maintainer scripts; a host does not.
    box.run("rm", "-f", "/usr/sbin/policy-rc.d")
    # apt resolves the dependencies against the image's packages (the container has no network:
    # every dependency must already be there, as on an offline host with the same release).
    box.run("mkdir", "-p", "/var/cache/apt/archives/partial", "/var/lib/apt/lists/partial")
    proc = box.run("apt-get", "install", "-y", f"{INSIDE_PKG_DIR}/{built_deb.name}", check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    status = box.run("dpkg-query", "-W", "-f=${Status} ${Version}", "vllm-guard").stdout
    assert status == f"install ok installed {__version__}-1"

    # The account the vLLM units run as, from sysusers.d.
    assert box.run("getent", "passwd", "vllm").stdout.split(":")[6].strip() in ("/usr/sbin/nologin", "/sbin/nologin")
    # Enabled on install; without a config it stays inactive with a named unmet condition, not failed.
    assert box.run("systemctl", "is-enabled", "vllm-guard.service").stdout.strip() == "enabled"
    shown = box.show("vllm-guard.service", "ActiveState", "ConditionResult", "Result", "Type")
    assert shown["ActiveState"] == "inactive", shown
    assert shown["ConditionResult"] == "no", f"postinst did not try to start the service: {shown}"
    assert shown["Type"] == "notify"
    # The catalog is in journald's index, the man page and the completion where their tools look.
    listed = box.run("journalctl", "--list-catalog").stdout
    assert {k.message_id for k in EventKind} <= {line.split()[0] for line in listed.splitlines() if line}
    assert box.run("zcat", "/usr/share/man/man8/vllm-guard.8.gz").stdout.startswith('.\\" vllm-guard(8)')
    assert box.exists("/usr/share/bash-completion/completions/vllm-guard")
    assert box.exists("/etc/vllm-guard/config.toml.example")
    # The packaged command runs from its private venv and finds its templates there.
    assert box.run("vllm-guard", "--version").stdout.strip() == f"vllm-guard {__version__}"


def wait_for_event(box: Container, kind: EventKind, after_pid: str | None = None) -> dict[str, str]:
    """The guard's latest journal entry of this kind (from a process other than ``after_pid``)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        out = box.run(
            "journalctl", "--no-pager", "-o", "json", "SYSLOG_IDENTIFIER=vllm-guard", f"MESSAGE_ID={kind.message_id}"
        ).stdout
        entries = [json.loads(line) for line in out.splitlines() if line.strip()]
        fresh = [e for e in entries if e.get("_PID") != after_pid]
        if fresh:
            return dict(fresh[-1])
        assert time.monotonic() < deadline, f"the guard sent no {kind.name.lower()} event"
        time.sleep(1)


def assert_explained(box: Container, entry: dict[str, str]) -> None:
    """journalctl -x shows the entry with its catalog text, the entry's fields substituted."""
    explained = box.run(
        "journalctl", "--no-pager", "-x", f"MESSAGE_ID={entry['MESSAGE_ID']}", f"_PID={entry['_PID']}"
    ).stdout
    subject = re.sub(
        r"@([A-Z0-9_]+)@",
        lambda m: str(entry.get(m.group(1), m.group(1))),
        CATALOG[entry["MESSAGE_ID"]]["headers"]["Subject"],
    )
    assert f"Subject: {subject}" in explained, explained
    assert "Defined-By: vllm-guard" in explained, explained
    first_body_line = CATALOG[entry["MESSAGE_ID"]]["body"].splitlines()[0]
    assert first_body_line.split("@")[0].strip() in explained, explained
    assert "@VLLM_GUARD_" not in explained


def test_start_reaches_active_through_sd_notify_and_journalctl_explains_its_event(box: Container) -> None:
    box.sh(f"install -D -m 0644 /dev/stdin /etc/vllm-guard/config.toml <<'EOF'\n{CONFIG}EOF")
    box.sh(
        "install -D -m 0644 /dev/stdin /etc/systemd/system/vllm-guard.service.d/fake-gpu.conf <<'EOF'\n"
        f"[Service]\nEnvironment=VLLM_GUARD_FAKE_GPUS={INSIDE_PKG_DIR}/gpus.json\nEOF"
    )
    # node_exporter's textfile folder (its package makes it); the unit may write there and nowhere else.
    box.run("mkdir", "-p", "/var/lib/prometheus/node-exporter")
    box.run("vllm-guard", "install", "--no-reload")
    assert box.exists("/etc/systemd/system/vllm-pkgtest.service")
    box.run("systemctl", "daemon-reload")

    start = box.run("systemctl", "start", "vllm-guard.service", check=False, timeout=START_TIMEOUT_S + 30)
    shown = box.show("vllm-guard.service", "ActiveState", "SubState", "ExecMainStatus", "StatusText", "Result")
    if start.returncode != 0 and "error[not-built-yet]" in box.journal_text():
        pytest.skip("`vllm-guard run` is not built in this version")
    # Type=notify: `systemctl start` returns once the guard sent READY=1, so active means notified.
    assert start.returncode == 0, f"{start.stderr}\n{shown}\n{box.journal_text(80)}"
    assert (shown["ActiveState"], shown["SubState"]) == ("active", "running"), shown
    assert shown["StatusText"], "the guard sends a STATUS= line with READY=1"

    started = wait_for_event(box, EventKind.GUARD_STARTED)
    assert started["VLLM_GUARD_VERSION"] == __version__
    assert_explained(box, started)
    # A reload (SIGHUP) is another event, explained the same way.
    box.run("systemctl", "reload", "vllm-guard.service")
    assert_explained(box, wait_for_event(box, EventKind.CONFIG_RELOADED))


def test_metrics_textfile_is_written_under_the_hardened_unit(box: Container) -> None:
    """guard.metrics = true: the textfile appears where node_exporter reads it, despite ProtectSystem=strict."""
    if "write_textfile" not in (REPO / "src/vllm_guard/app/daemon.py").read_text(encoding="utf-8"):
        pytest.skip("the daemon does not write the metrics textfile in this version")
    if box.show("vllm-guard.service", "ActiveState")["ActiveState"] != "active":
        pytest.skip("the guard is not running (see the test above)")

    def metrics() -> str:
        return box.run("cat", "/var/lib/prometheus/node-exporter/vllm_guard.prom", check=False).stdout

    deadline = time.monotonic() + START_TIMEOUT_S
    while "vllm_guard_up 1" not in metrics():
        assert time.monotonic() < deadline, f"no metrics textfile: {box.journal_text(40)}"
        time.sleep(1)


def test_reinstall_restarts_the_running_guard(box: Container, built_deb: Path) -> None:
    """An upgrade (here: the same version again) restarts the running guard, as dh_installsystemd does."""
    before = box.show("vllm-guard.service", "MainPID", "ActiveState")
    if before["ActiveState"] != "active":
        pytest.skip("the guard is not running (see the test above)")
    box.run("dpkg", "-i", f"{INSIDE_PKG_DIR}/{built_deb.name}", timeout=300)
    after = box.show("vllm-guard.service", "MainPID", "ActiveState")
    assert after["ActiveState"] == "active", after
    assert after["MainPID"] != before["MainPID"], "the guard was not restarted on upgrade"
    wait_for_event(box, EventKind.GUARD_STARTED, after_pid=before["MainPID"])


def test_remove_then_purge_leave_nothing_behind(box: Container) -> None:
    box.run("dpkg", "-r", "vllm-guard", timeout=300)
    assert box.run("dpkg-query", "-W", "-f=${Status}", "vllm-guard").stdout == "deinstall ok config-files"
    assert box.run("systemctl", "is-active", "vllm-guard.service", check=False).stdout.strip() in (
        "inactive",
        "unknown",
    )
    for gone in (
        "/usr/bin/vllm-guard",
        "/usr/lib/vllm-guard",  # including the byte code postinst made
        "/usr/lib/systemd/system/vllm-guard.service",
        "/usr/lib/systemd/catalog/vllm-guard.catalog",
    ):
        assert not box.exists(gone), f"{gone} is left after dpkg -r"
    listed = box.run("journalctl", "--list-catalog").stdout
    assert not any(k.message_id in listed for k in EventKind), "the catalog index still has the guard's entries"
    assert box.exists("/etc/vllm-guard/config.toml.example"), "dpkg -r keeps conffiles until --purge"

    # the vLLM unit the guard rendered, enabled as a sysadmin would: it reads its env file from /var/lib/vllm-guard
    box.run("systemctl", "enable", "vllm-pkgtest.service")
    purge = box.run("dpkg", "--purge", "vllm-guard", timeout=300)
    assert box.run("dpkg-query", "-W", "vllm-guard", check=False).returncode != 0
    assert "disabled and removed vllm-pkgtest.service" in purge.stdout + purge.stderr
    assert not box.exists("/etc/systemd/system/vllm-pkgtest.service")
    assert not box.exists("/etc/systemd/system/multi-user.target.wants/vllm-pkgtest.service")
    # nothing left that would fail at the next boot
    box.run("systemctl", "daemon-reload")
    assert box.run("systemctl", "is-enabled", "vllm-pkgtest.service", check=False).stdout.strip() != "enabled"
    for gone in (
        "/etc/vllm-guard/config.toml.example",
        "/etc/vllm-guard/config.d",
        "/var/lib/vllm-guard",
        "/var/lib/prometheus/node-exporter/vllm_guard.prom",
        "/etc/systemd/system/multi-user.target.wants/vllm-guard.service",
    ):
        assert not box.exists(gone), f"{gone} is left after dpkg --purge"
    # What the administrator wrote stays: their config.
    assert box.exists("/etc/vllm-guard/config.toml")
