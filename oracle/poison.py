"""Poisoning: fill every arena with a sentinel before capture's run and before each replay.

0xFF bytes read as NaN in every float dtype and as -1 in signed integers, so a planned buffer read before
anything wrote it this run is unmistakable (`non-finite`), and a truly zero grad is never taken for #16571.
A sound plan never reads an arena byte it did not write in the same run (invariant: first access is a write).
"""
from __future__ import annotations

from typing import Any

SENTINEL = 0xFF


def poison_arenas(lowered: Any) -> None:
  """PlannedJit's before_run hook."""
  from planner import tg
  for arena in lowered.plan.arenas: tg.fill_buffer(arena.buffer, SENTINEL)
