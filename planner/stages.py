"""The lowering pipeline as separate stages, each taking and returning a tinygrad LINEAR UOp.

parametrize -> plan -> compile -> graph-split, as tinygrad 0.14.0's jit_lower runs them. `lower` composes the
stages and keeps every stage's output in a `Lowered` record, so a checker can compare the linear before and
after planning, and a tinygrad developer can swap the planner for their own.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner import tg
from planner.memplan import MemoryPlan, plan_from_linear
from planner.packer import plan_memory, planfuzz_planner
from planner.plugins import PlanfuzzUsageError

Planner = Callable[[Any, set], Any]
PLANNERS: dict[str, Planner] = {"planfuzz": planfuzz_planner, "tinygrad": tg.tinygrad_memory_plan}
DEFAULT_PLANNER = "planfuzz"
GraphSplitter = Callable[[Any], Any]
GRAPH_SPLITTERS: dict[str, GraphSplitter] = {"tinygrad": tg.tinygrad_graph_split}
DEFAULT_GRAPH_SPLITTER = "tinygrad"
CopyRule = Callable[[Any], set]  # final linear -> the BUFFERs a replay copies when one of them is passed as an input
DEFAULT_COPY_RULE = "tinygrad"


class PlannerError(RuntimeError):
  """A planner plugin broke its contract."""


@dataclass(frozen=True)
class Lowered:
  """Every stage's output for one capture; `final` is what runs."""
  captured: Any
  parametrized: Any
  planned: Any
  compiled: Any
  final: Any
  plan: MemoryPlan
  held: frozenset
  inputs: tuple


def parametrize(linear: Any, inputs: tuple | list) -> Any:
  """Explicit input BUFFERs become PARAM slots, so a replay can bind new buffers to them."""
  return tg.substitute(linear, {u: tg.param(i, u) for i, u in enumerate(inputs)})


def plan(linear: Any, held: set | frozenset, planner: Planner = planfuzz_planner, name: str | None = None) -> tuple[Any, MemoryPlan]:
  """Run a planner (`name` is how errors call it); planfuzz's returns its plan directly, any other one's plan is rebuilt
  from its output. NO_MEMORY_PLANNER=1 switches off every planner, a plugin too, as it does tinygrad's: attribution relies
  on it. Names are resolved to planners by planner/registry.py."""
  fn, name = planner, name or getattr(planner, "__name__", repr(planner))
  if fn is planfuzz_planner: return plan_memory(linear, held)
  if tg.memory_planner_off(): return linear, MemoryPlan((), (), frozenset(held))
  out = fn(linear, set(held))
  if not tg.is_linear(out):
    raise PlannerError(f"planner {name!r} returned {type(out).__name__}{'' if not hasattr(out, 'op') else ' ' + str(out.op)}, "
                       "expected a LINEAR UOp: a planner takes (linear, held_bufs) and returns the rewritten linear")
  if len(out.src) != len(linear.src):
    raise PlannerError(f"planner {name!r} changed the number of calls ({len(linear.src)} -> {len(out.src)}): a planner may only "
                       "substitute buffers, never add, drop or reorder calls")
  return out, plan_from_linear(out, linear, frozenset(held))


def compile_stage(linear: Any) -> Any:
  """tinygrad's codegen and compiler: not ours to redo."""
  return tg.compile_linear(linear)


def graph_split(linear: Any, splitter: GraphSplitter = tg.tinygrad_graph_split) -> Any:
  """Batch runs of kernels into graph calls (only with JIT<2; tinygrad's splitter only where the device has a graph)."""
  return linear if tg.jit_level() >= 2 else splitter(linear)


def lower(linear: Any, held: set | frozenset, inputs: tuple | list, planner: Planner = planfuzz_planner, compile: bool = True,
          graph_splitter: GraphSplitter = tg.tinygrad_graph_split, planner_name: str | None = None) -> Lowered:
  """All stages in order; with compile=False stop after planning (the static path: nothing compiled or run). Stages take
  planners and splitters themselves: `planner.registry` turns the names users give into them."""
  if not tg.is_linear(linear): raise PlanfuzzUsageError(f"lower() takes a LINEAR UOp, got {type(linear).__name__}")
  held = frozenset(held)
  parametrized = parametrize(linear, inputs)
  planned, memplan = plan(parametrized, held, planner, planner_name)
  compiled = compile_stage(planned) if compile else planned
  final = graph_split(compiled, graph_splitter) if compile else planned
  return Lowered(linear, parametrized, planned, compiled, final, memplan, held, tuple(inputs))


def prune(linear: Any, inputs: tuple | list) -> tuple[Any, Any]:
  """(kept, one-time): calls that touch nothing reachable from the inputs run once at capture and are dropped."""
  needed = set(inputs)
  kept, once = [], []
  for call in linear.src:
    bufs = {b for arg in tg.call_args(call) for b in tg.arg_buffers(arg)}
    (kept if bufs & needed else once).append(call)
    if bufs & needed: needed |= bufs
  return tg.make_linear(kept), tg.make_linear(once)


def written_buffers(linear: Any) -> set:
  """BUFFERs some call writes without reading (tinygrad's `_written_uops`): the JIT's own outputs. A replay given one of
  them as an explicit input (a returned tensor fed back) copies it first, so the linear never overwrites an input it is
  still reading. Capture-time inputs are PARAMs by now, so they are never among them: their writes reach the caller."""
  out: set = set()
  for call in (u for u in linear.toposort() if u.op is tg.Ops.CALL):
    args, (outs, ins) = tg.call_args(call), tg.call_outs_ins(call)
    for k in set(outs) - set(ins):
      view = args[k].contiguous_view()
      buf = args[k] if view is None else view[0]
      if tg.is_buffer(buf): out.add(buf)
  return out
