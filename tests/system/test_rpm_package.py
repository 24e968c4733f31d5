"""The .rpm: built with rpmbuild from packaging/rpm/vllm-guard.spec, its file list and its scriptlets.

Debian's rpm has no systemd macros, so the spec defines them where they are missing: the scriptlets
of the built package must hold the real systemctl commands, never an unexpanded ``%systemd_*``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.system.packages import REPO, build, build_deps_missing

pytestmark = pytest.mark.system

UNIT = "vllm-guard.service"


@pytest.fixture(scope="session")
def built_rpm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The .rpm, built once per test session."""
    reason = build_deps_missing()
    if reason:
        pytest.skip(reason)
    if shutil.which("rpmbuild") is None:
        pytest.skip("rpmbuild is not installed (packaging/build-deps installs Debian's rpm)")
    return build("rpm", tmp_path_factory.mktemp("rpm"))


def rpm_query(rpm: Path, *args: str) -> str:
    return subprocess.run(["rpm", "-qp", *args, str(rpm)], capture_output=True, text=True, check=True).stdout


def test_rpm_holds_the_same_content_as_the_deb(built_rpm: Path) -> None:
    files = set(rpm_query(built_rpm, "--list").splitlines())
    for path in (
        "/usr/bin/vllm-guard",
        f"/usr/lib/systemd/system/{UNIT}",
        f"/usr/lib/systemd/system/{UNIT}.d/wait-for-config.conf",
        "/usr/lib/systemd/system-preset/80-vllm-guard.preset",
        "/usr/lib/systemd/catalog/vllm-guard.catalog",
        "/usr/lib/sysusers.d/vllm-guard.conf",
        "/usr/share/bash-completion/completions/vllm-guard",
        "/etc/vllm-guard/config.toml.example",
        "/etc/vllm-guard/config.d",
        "/usr/lib/vllm-guard/venv/pyvenv.cfg",
    ):
        assert path in files, f"{path} is not in the rpm"
    assert any(re.fullmatch(r"/usr/share/man/man8/vllm-guard\.8(\.gz)?", f) for f in files)
    assert any(f.endswith("/site-packages/vllm_guard/_data/templates/vllm-unit.service.j2") for f in files)
    assert any(f.endswith("/site-packages/vllm_guard/_data/units/vllm-guard.service") for f in files)
    assert not any("__pycache__" in f or f.startswith("/usr/lib/.build-id") for f in files)
    assert rpm_query(built_rpm, "--configfiles").split() == ["/etc/vllm-guard/config.toml.example"]
    # The example is %config(noreplace): an edited copy survives upgrades.
    flags = rpm_query(built_rpm, "--qf", "[%{FILEFLAGS:fflags} %{FILENAMES}\n]")
    assert re.search(r"^cn\S* /etc/vllm-guard/config.toml.example$", flags, flags=re.M), flags


def test_rpm_requires_its_interpreter_and_provides_no_bundled_module(built_rpm: Path) -> None:
    requires = rpm_query(built_rpm, "--requires").split("\n")
    assert any(re.fullmatch(r"/usr/bin/python3\.\d+", r.strip()) for r in requires), requires
    assert "systemd" in [r.strip() for r in requires]
    provides = rpm_query(built_rpm, "--provides")
    assert "python3" not in provides and "dist(" not in provides, provides


def test_rpm_scriptlets_are_real_systemctl_commands(built_rpm: Path) -> None:
    scripts = rpm_query(built_rpm, "--scripts")
    assert "%" not in scripts.replace("%%", ""), f"unexpanded macros in the scriptlets:\n{scripts}"
    sections = dict(
        re.findall(r"^(\w+) scriptlet \(using /bin/sh\):\n(.*?)(?=^\w+ scriptlet|\Z)", scripts, flags=re.M | re.S)
    )
    assert set(sections) == {"preinstall", "postinstall", "preuninstall", "postuninstall"}, scripts
    # %systemd_post: on first installation, enable as the presets say (the package's preset enables it).
    assert f"systemctl --no-reload preset {UNIT}" in sections["postinstall"]
    assert "journalctl --update-catalog" in sections["postinstall"]
    # %systemd_preun: on removal (not upgrade), stop and disable.
    assert f"systemctl --no-reload disable --now {UNIT}" in sections["preuninstall"]
    assert "if [ $1 -eq 0 ]" in sections["preuninstall"]
    # %systemd_postun_with_restart: reload, and restart on upgrade.
    assert "systemctl daemon-reload" in sections["postuninstall"]
    assert f"systemctl try-restart {UNIT}" in sections["postuninstall"]
    assert "if [ $1 -ge 1 ]" in sections["postuninstall"]
    # The account exists before the files land, from the same line as the package's sysusers.d file.
    sysusers = [
        line
        for line in (REPO / "packaging/debian/vllm-guard.sysusers").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert "systemd-sysusers" in sections["preinstall"]
    for line in sysusers:
        assert line in sections["preinstall"]


def test_rpm_scripts_are_valid_shell(built_rpm: Path) -> None:
    scripts = rpm_query(built_rpm, "--scripts")
    for name, body in re.findall(
        r"^(\w+) scriptlet \(using /bin/sh\):\n(.*?)(?=^\w+ scriptlet|\Z)", scripts, flags=re.M | re.S
    ):
        proc = subprocess.run(["sh", "-n"], input=body, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{name}: {proc.stderr}"


def test_rpmlint_finds_nothing_beyond_the_written_reasons(built_rpm: Path) -> None:
    # packaging/rpm/rpmlint.toml filters each finding that is so on purpose (packaging/README.md says why)
    if shutil.which("rpmlint") is None:
        pytest.fail("rpmlint is not installed: run ./scripts/setup (Debian's rpmlint)")
    done = subprocess.run(
        ["rpmlint", "-c", str(REPO / "packaging/rpm/rpmlint.toml"), str(built_rpm)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors, 0 warnings" in done.stdout, done.stdout
