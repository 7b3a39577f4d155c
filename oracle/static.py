"""The static path: capture one call, lower it, and check the plan's invariants.

Nothing runs (the capture hook collects every schedule instead of running it), and on a device without a graph (the
CPU) nothing is compiled either, so a planner or policy is checked at the speed of Python; on one with a graph (NULL,
a GPU) the plan is compiled and graph-split, with no kernel run. The capture is of the program's first call: a real JIT captures its
second, after an eager call, which differs only where the first call creates state (lazy grads from call 0).
"""
from __future__ import annotations

from typing import Any

from tinygrad import Tensor

from oracle.compare import Verdict, error_text
from oracle.findings import JIT_ERROR, Finding
from oracle.runs import FRESH, InputTensors
from oracle.subject import Subject, SubjectFactory
from oracle.targets import Target


def check_static(program: SubjectFactory, target: Target, on_plan: Any = None) -> Verdict:
  """The invariants on `target`'s plan for `program` (the planner target's policy, planner and graph splitter), under its
  knobs. Where the default device has a graph (the NULL device, a GPU) the plan is compiled and graph-split too, so the
  graph-order invariant sees real batches: `DEV=NULL` checks a graph splitter with no device at all. `on_plan` is
  an `oracle.check.PlanSink`."""
  from planner import tg
  with tg.knobs(target.context):
    captured = capture(program)
    if isinstance(captured, Verdict): return captured
    return check_capture(*captured, target, compile=tg.default_device_graphs(), on_plan=on_plan)


def capture(program: SubjectFactory) -> Verdict | tuple:
  """(subject, returned value, captured linear, input BUFFERs) of the program's first call captured, or a rejection."""
  from planner import tg
  from planner.jit import realize_returned
  subject = program()
  try:
    args = InputTensors(FRESH)(subject.inputs(0, None))
    with tg.capturing() as collector:
      ret = subject.step(*args)
      realize_returned(ret)
  except Exception as e:  # invalid programs are rejected, as in the dynamic path
    return Verdict(rejected=f"capture: {error_text(e)}")
  if not collector.linears: return Verdict(rejected="capture: nothing to capture")
  captured = tg.make_linear([c for linear in collector.linears for c in linear.src])
  return subject, ret, captured, [tg.storage(t) for t in args if isinstance(t, Tensor)]


def check_capture(subject: Subject, ret: Any, captured: Any, inputs: list, target: Target, compile: bool,
                  on_plan: Any = None) -> Verdict:
  """Prune (when asked), hold, lower and check; a planner or splitter that raises is a finding."""
  from oracle.check import live_buffers, live_paths
  from oracle.invariants import check_lowered
  from planner import get_graph_splitter, get_planner, get_policy, lower, tg
  from planner.policies import HoldContext
  from planner.stages import prune
  once: set = set()
  pruned = None
  if target.prunes(subject.prune):  # the one-time calls would run now: their buffers exist
    kept, one_time = prune(captured, inputs)
    pruned, captured = (captured, one_time), kept
    once = {b for call in one_time.src for arg in tg.call_args(call) for b in tg.arg_buffers(arg)}
  held = get_policy(target.policy)[1](HoldContext(ret, captured, tuple(inputs))) | once
  (name, planner), splitter = get_planner(target.planner), get_graph_splitter(target.graph)[1]
  try: lowered = lower(captured, held, inputs, planner, compile=compile, graph_splitter=splitter, planner_name=name)
  except Exception as e:  # the planner under test broke: that is what the static path is for
    return Verdict(findings=[Finding(JIT_ERROR, "planner", None, "static", {"error": error_text(e)})])
  live = {p: t for p, t in subject.observe().items() if t is not None}
  if on_plan is not None: on_plan(lambda: lowered.plan, live_buffers(live_paths(subject, ret)))
  verdict = Verdict(compared=len(lowered.plan.buffers))
  verdict.take(check_lowered(lowered, live, pruned))
  return verdict
