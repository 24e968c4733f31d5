"""`swap --apply` for real: a 64 MiB scratch swap file under /var/tmp, switched on, checked, removed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from vllm_guard.adapters import host
from vllm_guard.app.swap import KernelSwap, apply, make_plan
from vllm_guard.consts import Paths
from vllm_guard.errors import OSFailure

pytestmark = pytest.mark.system

SIZE = 64 << 20


@pytest.mark.skipif(os.geteuid() != 0, reason="swapon needs root")
@pytest.mark.skipif(shutil.which("swapon") is None or shutil.which("mkswap") is None, reason="util-linux not installed")
def test_swap_apply_on_a_scratch_file() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="vllm-guard-swap-", dir="/var/tmp"))
    root = scratch / "root"
    (root / "proc/sys/vm").mkdir(parents=True)
    (root / "proc/self").mkdir(parents=True)
    (root / "etc").mkdir()
    # the fake root sees the real mount table (so the real file system is checked) and a fake swappiness
    shutil.copy("/proc/self/mounts", root / "proc/self/mounts")
    shutil.copy("/proc/meminfo", root / "proc/meminfo")
    (root / "proc/sys/vm/swappiness").write_text("60\n")
    paths = Paths(root)
    file = root / "var/tmp/vllm-guard-test.swap"
    kernel = KernelSwap()
    try:
        plan = make_plan(paths, "/var/tmp/vllm-guard-test.swap", SIZE, "test", 10)
        try:
            done = apply(plan, paths, kernel, force=True)
        except OSFailure as err:
            if err.ref == "swapon-failed":
                pytest.skip(f"the kernel refuses swap here: {err.message}")
            raise
        active = {s.path: s for s in host.read_swaps(Path("/"))}
        assert str(file) in active, active
        assert active[str(file)].size >= SIZE - (1 << 20)
        assert (file.stat().st_mode & 0o777) == 0o600
        assert "/var/tmp/vllm-guard-test.swap none swap sw 0 0" in (root / "etc/fstab").read_text()
        assert (root / "proc/sys/vm/swappiness").read_text().strip() == "10"
        assert any("listed in /proc/swaps" in d for d in done)
        # idempotent against the real kernel too
        again = apply(plan, paths, kernel, force=True)
        assert any("already an active swap" in d for d in again)
    finally:
        if str(file) in {s.path for s in host.read_swaps(Path("/"))}:
            subprocess.run(["swapoff", str(file)], check=True)
        shutil.rmtree(scratch)
    assert str(file) not in Path("/proc/swaps").read_text()
    assert not scratch.exists()
