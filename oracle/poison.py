"""Poisoning: fill every arena with a sentinel before capture's run and before each replay.

0xFF bytes read as NaN in every float dtype and as -1 in signed integers, so a planned buffer read before
anything wrote it this run is unmistakable (`non-finite`), and a truly zero grad is never taken for #16571.
A sound plan never reads an arena byte it did not write in the same run (invariant: first access is a write).
"""
from __future__ import annotations

from typing import Any

SENTINEL = 0xFF


def poison_plan(plan: Any) -> None:
  """Fill every arena of a MemoryPlan with the sentinel (allocating it when the linear has not run yet)."""
  from planner import tg
  for arena in plan.arenas: tg.fill_buffer(arena.buffer, SENTINEL)


def poison_arenas(lowered: Any) -> None:
  """PlannedJit's before_run hook."""
  poison_plan(lowered.plan)


def poison_planned_linear(planned: Any) -> None:
  """For tinygrad's own TinyJit: the arenas of its planned linear, found by their slices."""
  from planner.memplan import plan_from_linear
  poison_plan(plan_from_linear(planned))
