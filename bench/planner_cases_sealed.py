"""The sealed part of the planner's published cases: starts of vLLM gathered after the held-out part was seen.

The held-out part of bench/planner_cases.py stopped being blind once a term derived from vLLM's source (the dummy
sampler's memory) was added after its errors had been looked at. These cases were gathered on
``SEALED_DATE`` from sources used by no other case, written here and committed before the planner was run on any
of them (the commit that adds a case carries no change to src/). They set no constant of the planner. A case
moved out after its error was seen goes to ``MOVED`` with the reason; then the part's figure is no longer blind,
and the bench says so.

Same format and care as bench/planner_cases.py: vLLM's own lines quoted verbatim in ``quote``, the GPU, util,
flags, model and vLLM version as the source states them, and the source's address.
"""

from __future__ import annotations

from planner_cases import Case

SEALED_DATE = "2026-12-01"
# Cases moved between parts after their error was seen: name -> reason. Empty: none was moved.
MOVED: dict[str, str] = {}

SEALED: list[Case] = []

# Candidates seen and left out, with the reason (decided before the planner was run on them).
LEFT_OUT: dict[str, str] = {}
