"""PlannedJit: a drop-in for TinyJit that lowers through planfuzz's stages with a chosen policy and planner.

Same call semantics as TinyJit: call 0 runs eagerly, call 1 captures, lowers and runs the lowered linear,
later calls replay it (an explicit input that is one of the linear's own outputs, a returned tensor fed back, is
copied first); the same returned objects come back every call, and bad inputs raise the same JitErrors. What a
checker needs is kept in public attributes: `lowered` (every stage), `pruned` (the prune split) and, for the last
run, `last_inputs` and `last_copied`.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from planner import stages, tg
from planner.policies import DEFAULT_POLICY, HoldContext, Policy
from planner.registry import get_copy_rule, get_graph_splitter, get_planner, get_policy
from planner.stages import Lowered, lower, prune

R = TypeVar("R")


def realize_returned(ret: Any) -> None:
  """TinyJit realizes every tensor the step returns, together, in one schedule."""
  if params := tg.get_parameters(ret): tg.Tensor.realize(*params)


class PlannedJit(Generic[R]):
  def __init__(self, fn: Callable[..., R], prune: bool = False, policy: str | Policy = DEFAULT_POLICY,
               planner: str | stages.Planner = stages.DEFAULT_PLANNER, before_run: Callable[[Lowered], None] | None = None,
               graph_splitter: str | stages.GraphSplitter = stages.DEFAULT_GRAPH_SPLITTER,
               copy_rule: str | stages.CopyRule = stages.DEFAULT_COPY_RULE) -> None:
    """before_run, when given, sees the lowering before capture's run and before each replay (the oracle poisons arenas there)."""
    self.fn, self.prune, self.before_run = fn, prune, before_run
    self.policy_name, self.policy = get_policy(policy)
    self.planner_name, self.planner = get_planner(planner)  # resolved now, so a bad name fails before any call
    self.graph_splitter_name, self.graph_splitter = get_graph_splitter(graph_splitter)
    self.copy_rule_name, self.copy_rule = get_copy_rule(copy_rule)
    self.cnt = 0
    self.lowered: Lowered | None = None
    self._linear: Any = None
    self._ret: Any = None
    self._expected: tuple[list, list] = ([], [])
    self._copied: set = set()
    self.pruned: tuple[Any, Any] | None = None  # (the captured linear, its one-time calls) when prune=True
    self.last_inputs: tuple = ()
    self.last_copied: frozenset = frozenset()

  def __call__(self, *args: Any, **kwargs: Any) -> R:
    with tg.disable_gc():
      inputs = tg.prepare_inputs(args, kwargs)
      if not tg.jit_level() or self.cnt == 0: ret = self._eager(args, kwargs)
      elif self.cnt == 1: ret = self._capture(inputs, args, kwargs)
      else: ret = self._replay(inputs)
    self.cnt += 1
    return ret

  def __get__(self, obj: Any, objtype: Any = None) -> Callable[..., R]:
    """As TinyJit's: a PlannedJit in a class is a method, called with the object first."""
    return functools.partial(self.__call__, obj)

  def reset(self) -> None:
    """As TinyJit's `reset()`: drop the capture, so the next call runs eagerly and the one after captures anew."""
    self.cnt, self.lowered, self._linear, self._ret, self.pruned = 0, None, None, None, None
    self._expected, self._copied = ([], []), set()

  def _eager(self, args: tuple, kwargs: dict) -> R:
    ret = self.fn(*args, **kwargs)
    realize_returned(ret)
    return ret

  def _capture(self, inputs: tg.JitInputs, args: tuple, kwargs: dict) -> R:
    with tg.capturing() as collector:
      ret = self.fn(*args, **kwargs)
      realize_returned(ret)
    if not collector.linears: raise tg.JitError("didn't JIT anything!")
    tg.check_tensor_return(ret)
    captured = tg.make_linear([call for linear in collector.linears for call in linear.src])
    if self.prune:
      whole = captured
      captured, once = prune(captured, inputs.buffers)
      self.pruned = (whole, once)
      tg.run_linear(once, inputs.var_vals)
    held = self.policy(HoldContext(ret, captured, tuple(inputs.buffers)))
    self.lowered = lower(captured, held, inputs.buffers, self.planner, graph_splitter=self.graph_splitter, planner_name=self.planner_name)
    self._linear = tg.link_linear(self.lowered.final)
    self._copied = self.copy_rule(self._linear)
    self._ret, self._expected = ret, (inputs.names, inputs.info)
    return self._run(inputs)

  def _replay(self, inputs: tg.JitInputs) -> R:
    names, info = self._expected
    if names != inputs.names: raise tg.JitError(f"args mismatch in JIT: expected names {names} != {inputs.names}")
    if info != inputs.info: raise tg.JitError(f"args mismatch in JIT: expected input info {info} != {inputs.info}")
    return self._run(inputs)

  def _run(self, inputs: tg.JitInputs) -> R:
    concrete = [tg.copy_of(u) if u in self._copied else u for u in inputs.buffers]
    self.last_inputs, self.last_copied = tuple(inputs.buffers), frozenset(u for u in inputs.buffers if u in self._copied)
    if self.before_run is not None and self.lowered is not None: self.before_run(self.lowered)
    tg.run_linear(self._linear, inputs.var_vals, concrete, jit=True)
    return self._ret
