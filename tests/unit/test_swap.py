"""`vllm-guard swap`: the plan, every refusal, and the whole procedure against a fake root."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import CliResult
from vllm_guard.app.swap import (
    SWAP_MAGIC,
    SYSCTL_FILE,
    SwapRefused,
    apply,
    auto_size,
    fstab_line,
    make_plan,
)
from vllm_guard.consts import Paths

pytestmark = pytest.mark.unit

GiB = 1 << 30
MiB = 1 << 20
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class FakeKernel:
    """Records what the real kernel would be asked; mkswap writes the signature like the real one."""

    calls: list[str] = field(default_factory=list)
    swaps: set[str] = field(default_factory=set)
    refuse_swapon: bool = False

    def mkswap(self, file: Path) -> None:
        self.calls.append(f"mkswap {file.name}")
        with file.open("r+b") as f:
            f.seek(PAGE - len(SWAP_MAGIC))
            f.write(SWAP_MAGIC)

    def swapon(self, file: Path) -> None:
        self.calls.append(f"swapon {file.name}")
        if not self.refuse_swapon:
            self.swaps.add(str(file))

    def swapoff(self, file: Path) -> None:
        self.swaps.discard(str(file))

    def active(self) -> set[str]:
        return set(self.swaps)

    def set_swappiness(self, root: Path, value: int) -> None:
        self.calls.append(f"swappiness {value}")
        (root / "proc/sys/vm/swappiness").write_text(f"{value}\n")


def fake_root(root: Path, *, fs: str = "ext4", rotational: str = "0", swappiness: int = 60) -> Paths:
    (root / "proc/sys/vm").mkdir(parents=True)
    (root / "proc/self").mkdir(parents=True)
    (root / "etc").mkdir(parents=True)
    (root / "proc/meminfo").write_text("MemTotal:       65536000 kB\nMemAvailable:   60000000 kB\nSwapTotal: 0 kB\n")
    (root / "proc/sys/vm/swappiness").write_text(f"{swappiness}\n")
    (root / "proc/self/mounts").write_text(f"/dev/sda2 / {fs} rw,relatime 0 0\n")
    (root / "sys/class/block/sda/queue").mkdir(parents=True)
    (root / "sys/class/block/sda/queue/rotational").write_text(rotational + "\n")
    (root / "etc/fstab").write_text("UUID=1234 / ext4 defaults 0 1\n")
    return Paths(root)


SIZE = 8 * MiB


def plan_for(paths: Paths, path: str = "/swapfile", size: int = SIZE, swappiness: int = 10):  # type: ignore[no-untyped-def]
    return make_plan(paths, path, size, "test", swappiness)


def test_apply_does_every_step_once(tmp_path: Path) -> None:
    paths = fake_root(tmp_path)
    kernel = FakeKernel()
    done = apply(plan_for(paths), paths, kernel, disk_free=100 * GiB)
    f = tmp_path / "swapfile"
    assert f.stat().st_size == SIZE and (f.stat().st_mode & 0o777) == 0o600
    assert kernel.calls == ["mkswap swapfile", "swapon swapfile", "swappiness 10"]
    assert (tmp_path / "etc/fstab").read_text().splitlines()[-1] == fstab_line("/swapfile")
    assert "vm.swappiness = 10" in (tmp_path / SYSCTL_FILE).read_text()
    assert any("fallocate" in d for d in done)
    # again: nothing changes, nothing is run
    kernel.calls.clear()
    done = apply(plan_for(paths), paths, kernel, disk_free=100 * GiB)
    assert kernel.calls == []
    assert (tmp_path / "etc/fstab").read_text().count("/swapfile") == 1
    assert any("already an active swap" in d for d in done)


def test_an_inactive_swap_file_of_the_right_size_is_reused(tmp_path: Path) -> None:
    paths = fake_root(tmp_path)
    kernel = FakeKernel()
    apply(plan_for(paths), paths, kernel, disk_free=100 * GiB)
    kernel.swaps.clear()  # after a reboot without the fstab line, say
    kernel.calls.clear()
    done = apply(plan_for(paths), paths, kernel, disk_free=100 * GiB)
    assert kernel.calls == ["swapon swapfile"]
    assert any("reused" in d for d in done)


def test_other_file_systems_get_the_file_written_out(tmp_path: Path) -> None:
    paths = fake_root(tmp_path, fs="ext3")
    done = apply(plan_for(paths), paths, FakeKernel(), disk_free=100 * GiB)
    assert any("writing zeros" in d for d in done)
    assert (tmp_path / "swapfile").stat().st_blocks * 512 >= SIZE  # no holes


def refusal(
    tmp_path: Path,
    setup: Callable[[Path], None] = lambda r: None,
    *,
    fs: str = "ext4",
    rotational: str = "0",
    disk_free: int = 100 * GiB,
    force: bool = False,
) -> SwapRefused:
    paths = fake_root(tmp_path, fs=fs, rotational=rotational)
    setup(tmp_path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    fstab = (tmp_path / "etc/fstab").read_text()
    with pytest.raises(SwapRefused) as err:
        apply(plan_for(paths), paths, FakeKernel(), disk_free=disk_free, force=force)
    # a refusal changes nothing
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "etc/fstab").read_text() == fstab
    return err.value


REFUSALS = [
    ("an unrelated file at the path", dict(setup=lambda r: (r / "swapfile").write_text("my data")), "swap-path-exists"),
    (
        "a swap file of another size",
        dict(setup=lambda r: (r / "swapfile").write_bytes(b"\0" * (PAGE - 10) + SWAP_MAGIC + b"\0" * 100)),
        "swap-path-exists",
    ),
    ("a directory at the path", dict(setup=lambda r: (r / "swapfile").mkdir()), "swap-path-exists"),
    ("a symlink at the path", dict(setup=lambda r: (r / "swapfile").symlink_to("/etc/passwd")), "swap-path-exists"),
    ("no room on the disk", dict(disk_free=SIZE), "swap-no-disk-space"),
    ("a rotational disk", dict(rotational="1"), "swap-rotational"),
    ("tmpfs", dict(fs="tmpfs"), "swap-fs-unsupported"),
    ("zfs", dict(fs="zfs"), "swap-fs-unsupported"),
    ("nfs", dict(fs="nfs4"), "swap-fs-unsupported"),
    ("overlay (containers)", dict(fs="overlay"), "swap-fs-unsupported"),
    ("fuse", dict(fs="fuse.sshfs"), "swap-fs-unsupported"),
    ("btrfs", dict(fs="btrfs"), "swap-fs-btrfs"),
]


@pytest.mark.parametrize(("name", "kw", "ref"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals(tmp_path: Path, name: str, kw: dict, ref: str) -> None:  # type: ignore[type-arg]
    err = refusal(tmp_path, **kw)
    assert err.ref == ref and err.hint
    assert int(err.exit_code) == 73


def test_force_allows_a_rotational_disk(tmp_path: Path) -> None:
    paths = fake_root(tmp_path, rotational="1")
    apply(plan_for(paths), paths, FakeKernel(), disk_free=100 * GiB, force=True)
    assert (tmp_path / "swapfile").exists()


def test_swapon_that_does_not_show_in_proc_swaps_is_an_error_and_keeps_no_fstab_line(tmp_path: Path) -> None:
    from vllm_guard.errors import OSFailure

    paths = fake_root(tmp_path)
    with pytest.raises(OSFailure, match="does not list it"):
        apply(plan_for(paths), paths, FakeKernel(refuse_swapon=True), disk_free=100 * GiB)
    assert "/swapfile" not in (tmp_path / "etc/fstab").read_text()


def test_existing_fstab_line_is_kept(tmp_path: Path) -> None:
    paths = fake_root(tmp_path)
    (tmp_path / "etc/fstab").write_text("/swapfile  none  swap  defaults  0  0\n")
    apply(plan_for(paths), paths, FakeKernel(), disk_free=100 * GiB)
    assert (tmp_path / "etc/fstab").read_text() == "/swapfile  none  swap  defaults  0  0\n"


@pytest.mark.parametrize(
    ("ram_gib", "weights_gib", "expected_gib"),
    [
        (8, None, 16),  # small hosts get 16 GiB
        (24, None, 24),  # about 1x RAM
        (64, None, 64),
        (256, None, 64),  # at most 64 GiB
        (64, 61, 64),  # Qwen2.5-32B BF16 (61 GiB) on 64 GiB: 1x RAM already holds it with room
        (32, 61, 45),  # the same model on 32 GiB: RAM + swap >= weights + 16 GiB
    ],
)
def test_auto_size(ram_gib: int, weights_gib: int | None, expected_gib: int) -> None:
    size, why = auto_size(ram_gib * GiB, None if weights_gib is None else weights_gib * GiB)
    assert size == expected_gib * GiB and why


def test_cli_default_prints_the_plan_and_changes_nothing(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    fake_root(tmp_path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    r = cli("swap", "--root", tmp_path)
    assert r.code == 0, r.err
    assert (
        "nothing changed" in r.out and "mkswap" in r.out and "63.0 GiB" in r.out
    )  # 62.5 GiB of RAM, rounded up to whole GiB
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    r = cli("swap", "--root", tmp_path, "--size", "4GiB", "--swappiness", "5", "--path", "/var/swap.img", "--json")
    out = json.loads(r.out)
    assert out["schema"] == 1 and out["applied"] is False
    assert (
        out["plan"]["size_bytes"] == 4 * GiB
        and out["plan"]["swappiness"] == 5
        and out["plan"]["path"] == "/var/swap.img"
    )


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--size", "big"], "not a size"),
        (["--size", "4KiB"], "too small"),
        (["--swappiness", "300"], "0 and 200"),
        (["--path", "relative/swap"], "absolute"),
    ],
)
def test_cli_usage_errors(cli: Callable[..., CliResult], tmp_path: Path, argv: list[str], needle: str) -> None:
    fake_root(tmp_path)
    r = cli("swap", "--root", tmp_path, *argv)
    assert r.code == 64 and needle in r.err


def test_cli_apply_refusal_is_reported(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    fake_root(tmp_path)
    (tmp_path / "swapfile").write_text("precious")
    r = cli("swap", "--root", tmp_path, "--size", "8MiB", "--apply")
    assert r.code == 73 and "swap-path-exists" in r.err
    assert (tmp_path / "swapfile").read_text() == "precious"
