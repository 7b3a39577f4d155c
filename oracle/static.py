"""The static path: capture one call, lower it without compiling, and check the plan's invariants.

Nothing is compiled or run (the capture hook collects every schedule instead of running it), so a planner or
policy is checked at the speed of Python. The capture is of the program's first call: a real JIT captures its
second, after an eager call, which differs only where the first call creates state (lazy grads from call 0).
"""
from __future__ import annotations

from tinygrad import Tensor

from oracle.compare import Verdict, error_text
from oracle.findings import JIT_ERROR, Finding
from oracle.runs import FRESH, InputTensors
from oracle.subject import Program
from oracle.targets import Target


def check_static(program: Program, target: Target) -> Verdict:
  """The invariants on `target`'s plan for `program` (the planner target's policy and planner)."""
  from oracle.invariants import check_lowered
  from planner import get_policy, lower, tg
  from planner.jit import realize_returned
  from planner.policies import HoldContext
  from planner.stages import prune
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
  inputs = [tg.storage(t) for t in args if isinstance(t, Tensor)]
  once: set = set()
  pruned = None
  if subject.prune if target.prune is None else target.prune:  # the one-time calls would run now: their buffers exist
    whole = captured
    captured, one_time = prune(captured, inputs)
    pruned = (whole, one_time)
    once = {b for call in one_time.src for arg in tg.call_args(call) for b in tg.arg_buffers(arg)}
  held = get_policy(target.policy)[1](HoldContext(ret, captured, tuple(inputs))) | once
  try: lowered = lower(captured, held, inputs, target.planner, compile=False)
  except Exception as e:  # the planner under test broke: that is what the static path is for
    return Verdict(findings=[Finding(JIT_ERROR, "planner", None, "static", {"error": error_text(e)})])
  live = {p: t for p, t in subject.observe().items() if t is not None}
  return Verdict(findings=check_lowered(lowered, live, pruned), compared=len(lowered.plan.buffers))
