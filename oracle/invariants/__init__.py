"""Static invariants of a lowering, checked on the lowered linears and the live tensors with nothing compiled or run.

`plan` holds the invariants of a memory plan (1-4, and the copy-lane advisory), `calls` those of the order of the
linear's calls (5-7); this module runs them together, on planfuzz's lowering or on what tinygrad's own TinyJit did.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tinygrad import Tensor

from oracle.findings import Finding
from oracle.invariants.calls import (
  GRAPH_ORDER,
  INPUT_NOT_COPIED,
  PRUNE_SPLIT,
  graph_split_preserves_order,
  prune_split_sound,
  pure_writes,
  written_inputs_copied,
)
from oracle.invariants.plan import (
  BOUNDS,
  COPY_LANE,
  LIVE_PLANNED,
  OVERLAP,
  READ_BEFORE_WRITE,
  copy_lane_contract,
  first_access_writes,
  live_buffer_planned,
  overlapping_lifetimes,
  slices_in_bounds,
)
from planner import tg
from planner.memplan import MemoryPlan, plan_from_linear
from planner.stages import Lowered

__all__ = ["BOUNDS", "COPY_LANE", "GRAPH_ORDER", "INPUT_NOT_COPIED", "LIVE_PLANNED", "OVERLAP", "PRUNE_SPLIT", "READ_BEFORE_WRITE",
           "check_lowered", "check_plan", "check_tinyjit_record", "copy_lane_contract", "first_access_writes",
           "graph_split_preserves_order", "live_buffer_planned", "overlapping_lifetimes",
           "prune_split_sound", "pure_writes", "slices_in_bounds", "written_inputs_copied"]


def check_plan(plan: MemoryPlan, planned_linear: Any, live: Mapping[str, Tensor | None], unnamed: bool = True) -> list[Finding]:
  """Invariants 1-4: what any planner's output must satisfy, whoever made it; and the copy-lane advisory."""
  return (live_buffer_planned(plan, live, unnamed) + overlapping_lifetimes(plan) + slices_in_bounds(plan, planned_linear)
          + first_access_writes(plan, planned_linear) + copy_lane_contract(plan))


def check_lowered(lowered: Lowered, live: Mapping[str, Tensor | None], pruned: tuple[Any, Any] | None = None,
                  unnamed: bool = True) -> list[Finding]:
  """Every invariant known at capture: the plan checks, the prune split when `pruned` (whole linear, one-time calls)
  is given, and graph-split order when the lowering was compiled (a static lowering has `compiled is planned`).
  Input copies are a replay's (`written_inputs_copied`)."""
  found = check_plan(lowered.plan, lowered.planned, live, unnamed)
  if pruned is not None: found += prune_split_sound(*pruned, lowered.inputs)
  if lowered.compiled is not lowered.planned: found += graph_split_preserves_order(lowered.compiled, lowered.final)
  return found


def check_tinyjit_record(rec: tg.TinyJitLowering, live: Mapping[str, Tensor | None], unnamed: bool = True) -> list[Finding]:
  """The capture's invariants on what tinygrad's own TinyJit did, rebuilt from what `tg.spy_tinyjit` recorded: the plan
  checks, its prune split, and graph-split order."""
  if rec.planned is None or rec.parametrized is None: raise ValueError("check_tinyjit_record: the record has no planner output")
  found = check_plan(plan_from_linear(rec.planned, rec.parametrized, rec.held), rec.planned, live, unnamed)
  if rec.pruned is not None: found += prune_split_sound(*rec.pruned, rec.inputs)
  if rec.compiled is not None and rec.final is not None: found += graph_split_preserves_order(rec.compiled, rec.final)
  return found
