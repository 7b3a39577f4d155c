"""planfuzz's reimplementation of tinygrad's JIT lowering: inspectable stages, pluggable policies and planners."""
from planner.jit import PlannedJit
from planner.memplan import Arena, MemoryPlan, PlannedBuffer, buffer_name, plan_from_linear
from planner.packer import plan_memory, planfuzz_planner
from planner.plugins import PlanfuzzUsageError
from planner.policies import DEFAULT_POLICY, POLICIES, HoldContext, get_policy
from planner.stages import DEFAULT_PLANNER, PLANNERS, Lowered, PlannerError, get_graph_splitter, get_planner, lower, parametrize, plan
from planner.tg import UnsupportedTinygrad

__all__ = ["PlannedJit", "Arena", "MemoryPlan", "PlannedBuffer", "buffer_name", "plan_from_linear", "plan_memory", "planfuzz_planner",
           "PlanfuzzUsageError", "DEFAULT_POLICY", "POLICIES", "HoldContext", "get_policy", "DEFAULT_PLANNER", "PLANNERS", "Lowered",
           "PlannerError", "get_graph_splitter", "get_planner", "lower", "parametrize", "plan", "UnsupportedTinygrad"]
