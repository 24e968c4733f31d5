"""`vllm-guard swap`: the usual swap-file procedure, planned first and done safely with --apply.

Steps with --apply, each skipped when already done (the procedure is idempotent):

1. refuse a file at the path that is not already this swap, a disk without room, a rotational disk
   (unless --force) and file systems that cannot hold a swap file;
2. create the file: ``fallocate`` where the file system supports swap on preallocated files (ext4,
   xfs; swapon(8) NOTES), else written out with zeros like ``dd``; chmod 600; mkswap;
3. swapon, and check the kernel lists it in /proc/swaps;
4. add the fstab line once;
5. write /etc/sysctl.d/90-vllm-guard-swap.conf with vm.swappiness and apply it.

All paths are under ``root`` so tests run against a fake tree; the commands that need the kernel
(mkswap, swapon, swapoff, the /proc/swaps check) go through a ``SwapSystem``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from vllm_guard.adapters import host
from vllm_guard.adapters.files import atomic_write
from vllm_guard.consts import Paths
from vllm_guard.errors import GuardError, OSFailure
from vllm_guard.exitcodes import ExitCode

GiB = 1 << 30
MiB = 1 << 20

DEFAULT_PATH = "/swapfile"  # the path Debian's and Ubuntu's swap-file guides use
# 10: the usual advice for hosts serving a model (keep its pages in RAM; swap only under real pressure).
DEFAULT_SWAPPINESS = 10
SYSCTL_FILE = "etc/sysctl.d/90-vllm-guard-swap.conf"
DISK_RESERVE = 2 * GiB  # leave this much free on the disk after the swap file (logs, model updates)
# swapon(8): preallocated (fallocate) swap files work on ext4 and xfs; other file systems need the
# blocks written out (dd). btrfs needs NOCOW and its own tool; these cannot hold a swap file at all.
FALLOCATE_FS = ("ext4", "xfs")
WRITE_FS = ("ext2", "ext3", "f2fs", "jfs", "reiserfs")
UNSUPPORTED_FS = (
    "tmpfs",
    "ramfs",
    "overlay",
    "zfs",
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "squashfs",
    "fuse",
    "9p",
    "virtiofs",
)
SWAP_MAGIC = b"SWAPSPACE2"  # mkswap's signature, in the last 10 bytes of the first page


class SwapRefused(GuardError):
    exit_code = ExitCode.CANTCREAT


@dataclass(frozen=True)
class SwapPlan:
    path: str  # as the host sees it (/swapfile)
    size: int
    swappiness: int
    size_reason: str
    current_swap: int
    current_swappiness: int | None
    mem_total: int
    steps: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "size_bytes": self.size,
            "size_reason": self.size_reason,
            "swappiness": self.swappiness,
            "current_swap_bytes": self.current_swap,
            "current_swappiness": self.current_swappiness,
            "mem_total_bytes": self.mem_total,
            "steps": list(self.steps),
        }


def auto_size(mem_total: int, weights: int | None = None) -> tuple[int, str]:
    """About 1x RAM, at least 16 GiB and at most 64 GiB; more when RAM + swap could not hold the
    model's weights with 16 GiB to spare (a 32B model in BF16, 61 GiB, on a 64 GiB host)."""
    size = min(max(mem_total, 16 * GiB), 64 * GiB)
    size = -(-size // GiB) * GiB
    why = f"about 1x RAM ({mem_total / GiB:.0f} GiB), between 16 and 64 GiB"
    if weights is not None and mem_total + size < weights + 16 * GiB:
        size = -(-(weights + 16 * GiB - mem_total) // GiB) * GiB
        why = f"RAM + swap must hold the weights ({weights / GiB:.0f} GiB) with 16 GiB to spare"
    return size, why


def fstab_line(path: str) -> str:
    return f"{path} none swap sw 0 0"


def make_plan(paths: Paths, path: str, size: int, size_reason: str, swappiness: int) -> SwapPlan:
    mem = host.read_meminfo(paths.root)
    current = host.read_swappiness(paths.root)
    file = paths.under(path.lstrip("/"))
    steps = [
        f"check {path}: not an existing file unless it is already this swap",
        f"check free disk at {file.parent} >= {size / GiB:.1f} GiB + {DISK_RESERVE / GiB:.0f} GiB reserve",
        "check the disk is not rotational (unless --force) and the file system can hold a swap file",
        f"create {path} ({size / GiB:.1f} GiB; fallocate on ext4/xfs, else written with zeros), chmod 600, mkswap",
        f"swapon {path} and check /proc/swaps lists it",
        f"add '{fstab_line(path)}' to /etc/fstab once",
        f"write /{SYSCTL_FILE} with vm.swappiness = {swappiness} and apply it"
        + (f" (now {current})" if current is not None else ""),
    ]
    return SwapPlan(
        path=path,
        size=size,
        swappiness=swappiness,
        size_reason=size_reason,
        current_swap=mem.get("SwapTotal", 0),
        current_swappiness=current,
        mem_total=mem.get("MemTotal", 0),
        steps=tuple(steps),
    )


class SwapSystem(Protocol):
    def mkswap(self, file: Path) -> None: ...
    def swapon(self, file: Path) -> None: ...
    def swapoff(self, file: Path) -> None: ...
    def active(self) -> set[str]: ...
    def set_swappiness(self, root: Path, value: int) -> None: ...


def _run(cmd: list[str], what: str) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except FileNotFoundError:
        raise OSFailure("swap-tool-missing", f"{cmd[0]} is not installed", "install util-linux") from None
    if proc.returncode != 0:
        reason = (proc.stderr or proc.stdout).strip()
        raise OSFailure(f"{what}-failed", f"`{' '.join(cmd)}` failed: {reason}", "the kernel's reason is above")


@dataclass
class KernelSwap:
    """The real thing: mkswap/swapon/swapoff from util-linux and the kernel's /proc/swaps."""

    proc_root: Path = field(default_factory=lambda: Path("/"))

    def mkswap(self, file: Path) -> None:
        _run(["mkswap", str(file)], "mkswap")

    def swapon(self, file: Path) -> None:
        _run(["swapon", str(file)], "swapon")

    def swapoff(self, file: Path) -> None:
        _run(["swapoff", str(file)], "swapoff")

    def active(self) -> set[str]:
        return {s.path for s in host.read_swaps(self.proc_root)}

    def set_swappiness(self, root: Path, value: int) -> None:
        # under a test root the file is a plain file; on the host, /proc/sys applies it at once
        target = root / "proc/sys/vm/swappiness"
        target.write_text(f"{value}\n", encoding="ascii")


def has_swap_signature(file: Path) -> bool:
    page = os.sysconf("SC_PAGE_SIZE")
    try:
        with file.open("rb") as f:
            f.seek(page - len(SWAP_MAGIC))
            return f.read(len(SWAP_MAGIC)) == SWAP_MAGIC
    except OSError:
        return False


def _write_zeros(file: Path, size: int) -> None:
    chunk = b"\0" * (16 * MiB)
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        left = size
        while left > 0:
            n = os.write(fd, chunk[: min(left, len(chunk))])
            left -= n
        os.fsync(fd)
    finally:
        os.close(fd)


def _fallocate(file: Path, size: int) -> None:
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def apply(
    plan: SwapPlan, paths: Paths, system: SwapSystem, *, force: bool = False, disk_free: int | None = None
) -> list[str]:
    """Do the plan; return what was done. Raises SwapRefused (before any change) or OSFailure."""
    done: list[str] = []
    file = paths.under(plan.path.lstrip("/"))
    active = system.active()
    is_active = str(file) in active
    mount = host.mount_of(paths.root, plan.path)
    fstype = mount.fstype if mount else None
    create = False
    if file.exists() or file.is_symlink():
        if is_active:
            done.append(f"{plan.path} is already an active swap: kept")
        elif file.is_file() and not file.is_symlink() and has_swap_signature(file) and file.stat().st_size == plan.size:
            done.append(f"{plan.path} already holds a swap area of this size: reused")
        else:
            raise SwapRefused(
                "swap-path-exists",
                f"{plan.path} exists and is not a swap area of {plan.size / GiB:.1f} GiB",
                "pick another --path, or remove the file yourself if it is an old swap file",
            )
    else:
        create = True
        free = disk_free if disk_free is not None else host.disk_free(_existing_parent(file))
        if free < plan.size + DISK_RESERVE:
            raise SwapRefused(
                "swap-no-disk-space",
                f"{file.parent}: {free / GiB:.1f} GiB free, a {plan.size / GiB:.1f} GiB swap file needs "
                f"{(plan.size + DISK_RESERVE) / GiB:.1f} GiB with the reserve",
                "pick a smaller --size or another --path on a disk with room",
            )
        if mount is not None and host.rotational(paths.root, mount.device) and not force:
            raise SwapRefused(
                "swap-rotational",
                f"{plan.path} would be on {mount.device}, a rotational disk",
                "swapping to a spinning disk stalls the host; use an SSD path, or --force if you accept it",
            )
        if fstype is not None and (fstype in UNSUPPORTED_FS or fstype.startswith("fuse")):
            raise SwapRefused(
                "swap-fs-unsupported",
                f"{plan.path} would be on {fstype}, which cannot hold a swap file",
                "pick a --path on ext4 or xfs",
            )
        if fstype == "btrfs":
            raise SwapRefused(
                "swap-fs-btrfs",
                f"{plan.path} would be on btrfs, where a swap file needs NOCOW and no snapshots",
                "create it with `btrfs filesystem mkswapfile --size N PATH`, then rerun with that --path",
            )
    if create:
        file.parent.mkdir(parents=True, exist_ok=True)
        try:
            if fstype in FALLOCATE_FS:
                _fallocate(file, plan.size)
                done.append(f"created {plan.path} with fallocate ({plan.size / GiB:.2f} GiB)")
            else:
                _write_zeros(file, plan.size)
                done.append(
                    f"created {plan.path} by writing zeros ({plan.size / GiB:.2f} GiB, {fstype or 'unknown fs'})"
                )
            os.chmod(file, 0o600)
            system.mkswap(file)
            done.append(f"mkswap {plan.path}")
        except BaseException:
            with contextlib.suppress(OSError):
                file.unlink()
            raise
    if not is_active:
        system.swapon(file)
        if str(file) not in system.active():
            raise OSFailure(
                "swap-not-active",
                f"swapon {file} returned success but /proc/swaps does not list it",
                "check `swapon --show` and dmesg",
            )
        done.append(f"swapon {plan.path} (listed in /proc/swaps)")
    fstab = paths.under("etc/fstab")
    try:
        text = fstab.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if any(line.split()[:1] == [plan.path] for line in text.splitlines() if not line.lstrip().startswith("#")):
        done.append(f"/etc/fstab already has {plan.path}")
    else:
        new = text + ("" if text.endswith("\n") or not text else "\n") + fstab_line(plan.path) + "\n"
        atomic_write(fstab, new, mode=0o644)
        done.append(f"added '{fstab_line(plan.path)}' to /etc/fstab")
    conf = paths.under(SYSCTL_FILE)
    want = f"# written by vllm-guard swap\nvm.swappiness = {plan.swappiness}\n"
    if conf.exists() and conf.read_text(encoding="utf-8") == want:
        done.append(f"/{SYSCTL_FILE} already sets vm.swappiness = {plan.swappiness}")
    else:
        atomic_write(conf, want, mode=0o644)
        done.append(f"wrote /{SYSCTL_FILE}")
    if host.read_swappiness(paths.root) != plan.swappiness:
        system.set_swappiness(paths.root, plan.swappiness)
        done.append(f"vm.swappiness set to {plan.swappiness}")
    return done


def _existing_parent(p: Path) -> Path:
    for parent in [p.parent, *p.parents]:
        if parent.exists():
            return parent
    return Path("/")
