"""planfuzz's reimplementation of tinygrad's JIT lowering: inspectable stages, pluggable policies and planners.

Names load on first use, so `from planner import tg` (the adapter, whose portable part the dynamic oracle uses on any
tinygrad) works where the planner itself cannot: the planner's modules call `tg.require()` when they load.
"""
from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
  "PlannedJit": "jit", "Arena": "memplan", "MemoryPlan": "memplan", "PlannedBuffer": "memplan", "buffer_name": "memplan",
  "plan_from_linear": "memplan", "plan_memory": "packer", "planfuzz_planner": "packer", "PlanfuzzUsageError": "plugins",
  "DEFAULT_POLICY": "policies", "POLICIES": "policies", "HoldContext": "policies", "get_policy": "registry",
  "DEFAULT_PLANNER": "stages", "PLANNERS": "stages", "Lowered": "stages", "PlannerError": "stages", "get_graph_splitter": "registry",
  "get_planner": "registry", "get_copy_rule": "registry", "lower": "stages", "parametrize": "stages", "plan": "stages",
  "UnsupportedTinygrad": "tg",
}
__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
  if name not in _WHERE: raise AttributeError(f"module 'planner' has no attribute {name!r}")
  return getattr(importlib.import_module(f"planner.{_WHERE[name]}"), name)
