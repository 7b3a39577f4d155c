"""A planner that is wrong only after a process has planned a few captures: its bugs depend on what ran before, so a
fresh process running one repro never shows them (the context-dependent case of fuzz/campaign/confirm.py)."""
from __future__ import annotations

from typing import Any

from tests.planners.correct import _planner, first_fit

WARM = 10  # a fresh process plans a repro's capture a few times (the JIT run, the static check): fewer than this
planned = 0
stacked = _planner(lambda lives: {b: (b.device, 0) for b in lives})  # every buffer at offset 0: lifetimes overlap


def after_warmup(linear: Any, held: set) -> Any:
  global planned
  planned += 1
  return (stacked if planned > WARM else first_fit)(linear, held)
