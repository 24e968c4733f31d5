"""What a vLLM start says it was started with: its own echo of its arguments.

vLLM's API server logs the arguments that differ from its defaults once, before the engine starts
(``non-default args: {...}``, a Python dict literal; vllm/entrypoints/utils.py and api_utils.py, 0.8 on).
That is the truth about the flags an attempt ran with, whatever the env file held when the guard looked:
the guard compares it with the flags it has set since, so that a failure of a start that read an older
env file is no reason for another step.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from vllm_guard.core.config import Flags
from vllm_guard.core.state import Current

_ECHO = re.compile(r"non-default args: (\{.*\})\s*$")
# the flags vLLM echoes under the names the config uses (cpu_kvcache_space_gib is an environment variable)
_ECHOED = tuple(name for name in Flags.model_fields if name != "cpu_kvcache_space_gib")


def echoed_args(lines: Iterable[str]) -> dict[str, Any] | None:
    """The last ``non-default args`` dict among the lines (a literal only: nothing is evaluated), or None."""
    found: dict[str, Any] | None = None
    for line in lines:
        if "non-default args:" not in line:
            continue
        m = _ECHO.search(line)
        if m is None:
            continue
        try:
            value = ast.literal_eval(m.group(1))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            found = value
    return found


def ran_on(echo: dict[str, Any], current: Current) -> Current:
    """The model and flags the echoing start ran with, on the flags the guard sets: ``current`` where the echo
    agrees or cannot tell, the echo's value where it does not agree.

    A flag in the echo is what the start ran with. A flag left out had vLLM's default: for the flags whose
    default the config shares with vLLM (0.9, auto, tp 1, no --enforce-eager) that is a value to compare; for
    the ones the config leaves unset (vLLM sizes max_num_seqs itself; swap_space is 4 GiB in V0 and gone in
    V1) it tells nothing, since the guard may have passed exactly vLLM's value. Flags the guard leaves at their
    default are not compared: an ``extra_args`` entry may set them, and that is no step of the guard's."""
    ran = {
        name: echo.get(name, field.default)
        for name, field in Flags.model_fields.items()
        if name in _ECHOED
        and getattr(current.flags, name) != field.default
        and (name in echo or field.default is not None)
    }
    try:
        flags = Flags.model_validate({**current.flags.model_dump(), **ran})
    except ValueError:
        flags = current.flags
    model = echo.get("model")
    same_model = not isinstance(model, str) or model.rstrip("/") == current.model.rstrip("/")
    return Current(
        model=current.model if same_model else str(model), fallback_index=current.fallback_index, flags=flags
    )
