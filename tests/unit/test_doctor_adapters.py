"""The readers doctor relies on: NVML through a stand-in module, and /proc + /sys under a fake root."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from vllm_guard.adapters import host, nvml

pytestmark = pytest.mark.unit

GiB = 1 << 30


class NVMLError(Exception):
    pass


def fake_pynvml(*, init_error: str | None = None, devices: int = 1, procs: list[Any] | None = None) -> types.ModuleType:
    m = types.ModuleType("pynvml")

    def init() -> None:
        if init_error:
            raise NVMLError(init_error)

    m.nvmlInit = init  # type: ignore[attr-defined]
    m.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    m.nvmlSystemGetDriverVersion = lambda: b"550.54.15"  # type: ignore[attr-defined]
    m.nvmlDeviceGetCount = lambda: devices  # type: ignore[attr-defined]
    m.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    m.nvmlDeviceGetName = lambda h: "NVIDIA L40S"  # type: ignore[attr-defined]
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=48 * GiB, free=20 * GiB, used=28 * GiB)  # type: ignore[attr-defined]
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: procs or []  # type: ignore[attr-defined]

    def graphics(h: Any) -> list[Any]:
        raise NVMLError("Not Supported")

    m.nvmlDeviceGetGraphicsRunningProcesses = graphics  # type: ignore[attr-defined]
    return m


def test_nvml_tells_what_the_driver_keeps_where_the_driver_can(monkeypatch: pytest.MonkeyPatch) -> None:
    # R510 drivers on answer the second memory query with the reserved part apart; CUDA's total leaves it out
    m = fake_pynvml()
    m.nvmlMemory_v2 = 0x2000028  # type: ignore[attr-defined]

    def memory(h: Any, version: int | None = None) -> Any:
        if version is None:  # the first query counts the reserved part as used
            return types.SimpleNamespace(total=24564 << 20, free=24210 << 20, used=354 << 20)
        return types.SimpleNamespace(total=24564 << 20, reserved=354 << 20, free=24210 << 20, used=0)

    m.nvmlDeviceGetMemoryInfo = memory  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pynvml", m)
    d = nvml.read_gpus().devices[0]
    assert (d.total, d.reserved, d.cuda_total, d.used) == (24564 << 20, 354 << 20, 24210 << 20, 0)
    assert nvml.read_gpus().as_json()["devices"][0]["cuda_total_bytes"] == 24210 << 20

    def old_driver(h: Any, version: int | None = None) -> Any:
        if version is not None:
            raise NVMLError("Function Not Found")
        return types.SimpleNamespace(total=24576 << 20, free=24000 << 20, used=576 << 20)

    m.nvmlDeviceGetMemoryInfo = old_driver  # type: ignore[attr-defined]
    d = nvml.read_gpus().devices[0]
    assert (d.total, d.reserved, d.cuda_total) == (24576 << 20, 0, 24576 << 20)
    from vllm_guard.app import gpus

    m.nvmlDeviceGetMemoryInfo = memory  # type: ignore[attr-defined]
    g = gpus.read_gpus()
    assert g is not None and (g[0].total_mib, g[0].reserved_mib, g[0].cuda_total_mib) == (24564, 354, 24210)


def test_nvml_lists_devices_and_holders(monkeypatch: pytest.MonkeyPatch) -> None:
    me = os.getpid()
    procs = [
        types.SimpleNamespace(pid=me, usedGpuMemory=28 * GiB),
        types.SimpleNamespace(pid=999_999_999, usedGpuMemory=None),
    ]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(procs=procs))
    r = nvml.read_gpus()
    assert r.visible and r.driver_version == "550.54.15" and r.error is None
    d = r.devices[0]
    assert (d.name, d.total, d.free) == ("NVIDIA L40S", 48 * GiB, 20 * GiB)
    assert d.processes[0].used_mib == 28 * 1024 and "python" in d.processes[0].command
    assert d.processes[1].used_mib is None and d.processes[1].command == "?"  # gone or in another namespace
    assert r.as_json()["devices"][0]["processes"][0]["pid"] == me


@pytest.mark.parametrize(
    ("module", "needle"),
    [
        (fake_pynvml(init_error="NVML Shared Library Not Found"), "NVML Shared Library Not Found"),
        (fake_pynvml(devices=0), "0 devices"),
        (None, "not installed"),
    ],
)
def test_nvml_without_a_gpu_says_so(
    monkeypatch: pytest.MonkeyPatch, module: types.ModuleType | None, needle: str
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", module)  # None makes the import fail
    r = nvml.read_gpus()
    assert not r.visible and r.error is not None
    assert r.error.startswith("no NVIDIA GPU visible") and needle in r.error


def test_emulated_gpus_are_read_in_place_of_nvml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    gpus = tmp_path / "gpus.json"
    holder = {"pid": 4242, "command": "python -m vllm", "used_mib": 6144}
    gpus.write_text(
        json.dumps({"gpus": [{"name": "emulated L4", "total_mib": 23034, "unlisted_mib": 1024, "processes": [holder]}]})
    )
    monkeypatch.setitem(sys.modules, "pynvml", None)  # NVML is not consulted
    monkeypatch.setenv(nvml.FAKE_ENV, str(gpus))
    r = nvml.read_gpus()
    assert r.visible and not r.fake and r.driver_version == f"emulated ({nvml.FAKE_ENV})"
    d = r.devices[0]
    assert (d.name, d.total, d.used, d.free) == ("emulated L4", 23034 << 20, 7168 << 20, (23034 - 7168) << 20)
    assert d.processes[0].pid == 4242 and d.processes[0].used_mib == 6144
    gpus.write_text("{not json")
    r = nvml.read_gpus()
    assert not r.visible and r.error is not None and str(gpus) in r.error and nvml.FAKE_ENV in r.error
    gpus.write_text(json.dumps({"gpus": []}))
    assert nvml.read_gpus().error == f"the GPU file {gpus} ({nvml.FAKE_ENV}) lists no GPU"
    gpus.write_text(json.dumps({"gpus": [{"name": "emulated", "total_mib": 24564, "reserved_mib": 354}]}))
    d = nvml.read_gpus().devices[0]
    assert (d.reserved, d.cuda_total, d.free, d.used) == (354 << 20, 24210 << 20, 24210 << 20, 0)


def test_fake_gpus() -> None:
    r = nvml.FakeGpus([24 * GiB, 80 * GiB]).read()
    assert r.fake and [d.total for d in r.devices] == [24 * GiB, 80 * GiB] and all(d.free == d.total for d in r.devices)
    r = nvml.FakeGpus([24 * GiB], [GiB // 2]).read()
    assert (r.devices[0].cuda_total, r.devices[0].free) == (24 * GiB - GiB // 2, 24 * GiB - GiB // 2)


def test_swaps_with_spaces_and_partitions(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/swaps").write_text(
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/dev/nvme0n1p3                          partition\t8388604\t\t1024\t\t-2\n"
        "/srv/my\\040swap                         file\t\t1048572\t\t0\t\t-3\n"
    )
    swaps = host.read_swaps(tmp_path)
    assert [(s.path, s.kind) for s in swaps] == [("/dev/nvme0n1p3", "partition"), ("/srv/my swap", "file")]
    assert swaps[0].size == 8388604 * 1024 and swaps[0].used == 1024 * 1024


@pytest.mark.parametrize(
    ("device", "disk", "value", "expected"),
    [
        ("/dev/sda2", "sda", "1", True),
        ("/dev/nvme0n1p2", "nvme0n1", "0", False),
        ("/dev/vdb", "vdb", "1", True),
        ("/dev/mmcblk0p1", "mmcblk0", "0", False),
        ("/dev/sdz9", None, None, None),  # unknown: no sysfs entry
    ],
)
def test_rotational(tmp_path: Path, device: str, disk: str | None, value: str | None, expected: bool | None) -> None:
    if disk is not None:
        q = tmp_path / f"sys/class/block/{disk}/queue"
        q.mkdir(parents=True)
        (q / "rotational").write_text(value + "\n")  # type: ignore[operator]
    assert host.rotational(tmp_path, device) is expected


def test_rotational_follows_device_mapper_links(tmp_path: Path) -> None:
    (tmp_path / "dev/mapper").mkdir(parents=True)
    (tmp_path / "dev/mapper/vg-root").symlink_to("../dm-0")
    (tmp_path / "sys/class/block/dm-0/queue").mkdir(parents=True)
    (tmp_path / "sys/class/block/dm-0/queue/rotational").write_text("1\n")
    assert host.rotational(tmp_path, "/dev/mapper/vg-root") is True


def test_mount_of_picks_the_longest_prefix(tmp_path: Path) -> None:
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/self/mounts").write_text(
        "/dev/sda1 / ext4 rw 0 0\n/dev/sdb1 /var xfs rw 0 0\n/dev/sdc1 /var/lib/docker btrfs rw 0 0\n/dev/sdd1 /variable ext4 rw 0 0\n"
    )
    assert host.mount_of(tmp_path, "/swapfile").fstype == "ext4"  # type: ignore[union-attr]
    assert host.mount_of(tmp_path, "/var/swap.img").fstype == "xfs"  # type: ignore[union-attr]
    assert host.mount_of(tmp_path, "/var/lib/docker/swap").fstype == "btrfs"  # type: ignore[union-attr]
    assert host.mount_of(tmp_path, "/variable/x").device == "/dev/sdd1"  # type: ignore[union-attr]


def test_meminfo_and_swappiness_missing_are_empty(tmp_path: Path) -> None:
    assert host.read_meminfo(tmp_path) == {} and host.read_swappiness(tmp_path) is None
    assert host.shm_bytes(tmp_path) is None


def test_port_in_use() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert host.port_in_use("127.0.0.1", port) is True
    assert host.port_in_use("127.0.0.1", port) is False
    assert host.port_in_use("203.0.113.7", 8000) is None  # not an address of this host


def test_vllm_version_from_a_stand_in_python(tmp_path: Path) -> None:
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 0.11.0\n")
    fake.chmod(0o755)
    assert host.vllm_version(str(fake)) == ("0.11.0", None)
    broken = tmp_path / "python-broken"
    broken.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'vllm'\" >&2\nexit 1\n")
    broken.chmod(0o755)
    version, err = host.vllm_version(str(broken))
    assert version is None and err is not None and "No module named 'vllm'" in err
    assert host.vllm_version(str(tmp_path / "nope"))[1] is not None


def test_flashinfer_is_found_without_importing_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert host.installed_flashinfer(sys.executable) is False  # the test venv has no FlashInfer
    package = tmp_path / "flashinfer"
    package.mkdir()
    (package / "__init__.py").write_text("raise SystemExit('imported')\n")  # found, never imported
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert host.installed_flashinfer(sys.executable) is True
    assert host.installed_flashinfer(str(tmp_path / "no-python")) is None
