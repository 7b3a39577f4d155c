"""Run one program under one JIT (or none) for a number of calls, snapshotting every observable after each call.

Snapshots are numpy copies taken right after each call, since a JIT overwrites its returned tensors on the
next call. Each observable is marked lazy when it was an unrealized tensor right after the call: the JIT
defines a lazy escape's value only when inputs are refilled in place (the same-buffer mode).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tinygrad import Tensor
from tinygrad.nn.state import get_parameters

from oracle.schedule import Schedule
from oracle.subject import Subject, SubjectFactory
from planner import tg

FRESH, SAME_BUFFER = "fresh", "same-buffer"
MODES = (FRESH, SAME_BUFFER)
REFERENCE_CONTEXT = {"JIT": 0, "NO_MEMORY_PLANNER": 1}
PYTHON_VALUES = (bool, int, float, complex, str, bytes, type(None))  # arguments TinyJit does not see: frozen at capture
Wrap = Callable[[Callable[..., Any], bool], Callable[..., Any]]  # (step, prune) -> jitted step


@dataclass
class CallRecord:
  """One call's snapshots. lazy: observables unrealized right after the call; pending_assigns: those of them that are
  a lazy in-place assign; input_views: pure views of an explicit input; symbolic_views: realized views whose view
  depends on a Variable; variable_escapes: lazy ones whose graph reads a Variable; bound: the call's bound Variables;
  fed_back: the previous call's returned paths passed to this call as arguments."""
  index: int
  values: dict[str, np.ndarray] = field(default_factory=dict)
  lazy: frozenset[str] = frozenset()
  input_views: frozenset[str] = frozenset()
  pending_assigns: frozenset[str] = frozenset()
  symbolic_views: frozenset[str] = frozenset()
  bound: dict[str, int] = field(default_factory=dict)
  variable_escapes: frozenset[str] = frozenset()
  fed_back: frozenset[str] = frozenset()
  error: BaseException | None = None


@dataclass
class Trace:
  calls: list[CallRecord]
  jit: Any = None
  prune: bool = False
  schedule: Schedule = field(default_factory=Schedule)

  def capture_record(self, call: int) -> CallRecord:
    """The snapshots of the capture that governs `call` (an empty record when the run ended before it)."""
    k = self.schedule.capture(call)
    return self.calls[k] if k < len(self.calls) else CallRecord(k)

  @property
  def error(self) -> BaseException | None: return next((c.error for c in self.calls if c.error is not None), None)


@dataclass
class Hooks:
  """What the oracle does inside a target run: `on_capture(step, subject, ret)` right after each capture call, before
  anything is read (static checks see the plan there); `before_replay()` before every replay (poisoning a real
  TinyJit's arenas); `after_replay(step, n, args)` right after replay n of its capture (the input-copy check)."""
  on_capture: Callable[[Any, Subject, Any], None] | None = None
  before_replay: Callable[[], None] | None = None
  after_replay: Callable[[Any, int, list], None] | None = None


def returned_paths(ret: Any, path: str = "ret") -> Iterator[tuple[str, Tensor]]:
  """Every Tensor in a returned value, one level of nesting at a time: ret, ret[0], ret['k'][1], ..."""
  if isinstance(ret, Tensor): yield path, ret
  elif isinstance(ret, (list, tuple)):
    for i, x in enumerate(ret): yield from returned_paths(x, f"{path}[{i}]")
  elif isinstance(ret, dict):
    for k, x in ret.items(): yield from returned_paths(x, f"{path}[{k!r}]")


class InputTensors:
  """Turns a call's input arrays into tensors: new ones each call (fresh) or the first call's refilled in place."""
  def __init__(self, mode: str) -> None:
    if mode not in MODES: raise ValueError(f"unknown input mode {mode!r}: choose one of {', '.join(MODES)}")
    self.mode, self.kept = mode, {}

  def __call__(self, raw: list) -> list:
    """The call's arguments, its tensors realized in one schedule (they are independent copies in: one schedule
    costs what one of them alone does)."""
    args = [self._tensor(i, x) if isinstance(x, np.ndarray) or hasattr(x, "to_tensor") else x for i, x in enumerate(raw)]
    if tensors := [t for t in args if isinstance(t, Tensor)]: Tensor.realize(*tensors)
    return args

  def _tensor(self, i: int, arr: Any) -> Tensor:
    """`arr` is an array, or an object that makes its own tensor (`to_tensor()`: a sharded input); left lazy."""
    fresh = arr.to_tensor() if hasattr(arr, "to_tensor") else Tensor(arr)
    if self.mode == FRESH or i not in self.kept:
      self.kept[i] = fresh
      return fresh
    return self.kept[i].assign(fresh)


def input_views(named: dict[str, Tensor], inputs: list) -> frozenset[str]:
  """Observables that are pure views of an explicit input (no kernel made them), returned or kept: a JIT hands
  back the capture-time object, so with fresh inputs its replays show the capture call's data (documented)."""
  bases = {tg.storage(t) for t in inputs if isinstance(t, Tensor)}
  return frozenset(p for p, t in named.items() if tg.storage(t) in bases)


def snapshot(ret: Any, subject: Subject, inputs: list, evaluated: Any = None) -> CallRecord:
  """Every observable's value after a call, each read on its own, as a user reads them, in the reference and the
  target alike: how lazy tensors are grouped into realizes changes values (tinygrad's fusion drops a float16 round
  trip unless the half value gets a buffer in the same schedule), so both sides must read the same way."""
  named = dict(returned_paths(ret)) | dict(returned_paths(evaluated, "eval"))
  named |= {p: t for p, t in subject.observe().items() if isinstance(t, Tensor)}
  lazy = frozenset(p for p, t in named.items() if tg.is_lazy(t))
  assigns = frozenset(p for p in lazy if tg.is_pending_assign(named[p]))
  symbolic = frozenset(p for p, t in named.items() if p not in lazy and tg.is_symbolic_view(t))
  variables = frozenset(p for p in lazy if tg.reads_variable(named[p]))
  return CallRecord(-1, {p: t.numpy().copy() for p, t in named.items()}, lazy, input_views(named, inputs), assigns, symbolic,
                    tg.bound_values(inputs), variables)


class FrozenPython:
  """The reference's model of TinyJit freezing Python at capture: at every replay the step runs with the Python values
  its capture call started from (the subject's PythonState restored) and that call's non-Tensor arguments."""
  def __init__(self, subject: Subject, schedule: Schedule) -> None:
    self.state, self.schedule, self.saved, self.args = subject.python_state, schedule, None, None

  def __call__(self, k: int, raw: list) -> list:
    if self.schedule.replay(k) == 0:
      self.saved, self.args = (self.state.save() if self.state else None), list(raw)
    elif self.schedule.replay(k) > 0 and self.args is not None:
      if self.state: self.state.restore(self.saved)
      raw = [self.args[i] if isinstance(x, PYTHON_VALUES) and i < len(self.args) else x for i, x in enumerate(raw)]
    return raw


def run(program: SubjectFactory, wrap: Wrap | None, calls: int, mode: str = SAME_BUFFER, context: dict | None = None,
        hooks: Hooks | None = None, reference: bool = False) -> Trace:
  """Build a fresh instance of `program`, call it `calls` times (jitted by `wrap`, or eagerly), snapshot each call.

  `context` is a tinygrad Context for the whole run; the reference passes JIT=0, NO_MEMORY_PLANNER=1 and
  `reference=True`, which freezes Python state as TinyJit does (FrozenPython). A subject with a `reset` call has its
  step's JIT reset (`jit.reset()`) right before that call; the reference follows the same schedule.
  `hooks` are the oracle's, inside a target run; their own errors are never the program's."""
  hooks = hooks or Hooks()
  with tg.knobs(context or {}):
    subject = program()
    step, call = (subject.step, subject.step) if wrap is None else jitted(subject, wrap)
    evaluate = subject.evaluate if wrap is None or subject.evaluate is None else wrap(subject.evaluate, False)
    to_tensors, records, ret, evaluated, schedule = InputTensors(mode), [], None, None, Schedule(subject.reset)
    frozen = FrozenPython(subject, schedule) if reference else lambda k, raw: raw
    for k in range(calls):
      n = schedule.replay(k)  # -1 eager, 0 capture, then which replay
      if k == schedule.reset and wrap is not None: step.reset()
      if n > 0 and hooks.before_replay is not None: hooks.before_replay()
      try:
        args = to_tensors(frozen(k, subject.inputs(k, ret)))
        prev, ret = ret, call(*args)
        if evaluate is not None:  # its own JIT, right after the step: a train/eval loop
          evaluated = evaluate(*(overwritten(args, prev, ret) if reference and n > 0 else args))
      except Exception as e:  # a program's error is data: the judge decides whether it is a rejection or a finding
        records.append(CallRecord(k, error=e))
        break
      if n == 0 and hooks.on_capture is not None: hooks.on_capture(step, subject, ret)
      if n > 0 and hooks.after_replay is not None: hooks.after_replay(step, n, args)
      try: record = snapshot(ret, subject, args, evaluated)
      except Exception as e:
        records.append(CallRecord(k, error=e))
        break
      record.index, record.fed_back = k, fed_back(args, prev)
      records.append(record)
  return Trace(records, step, subject.prune, schedule)


def jitted(subject: Subject, wrap: Wrap) -> tuple[Any, Callable[..., Any]]:
  """The step's JIT, and what a call calls: the JIT itself, or for a `method` subject a model object whose class holds
  the JIT as its `__call__`, as tinygrad models write `@TinyJit def __call__(self, x)`: each call then reaches the JIT
  through the descriptor protocol, with the model as a first argument that is not a Tensor."""
  if not subject.method:
    jit = wrap(subject.step, subject.prune)
    return jit, jit
  step = subject.step
  model = type("Model", (), {"__call__": wrap(lambda self, *args: step(*args), subject.prune)})
  return vars(model)["__call__"], model()


def fed_back(args: list, prev: Any) -> frozenset[str]:
  """The previous call's returned paths whose tensor objects are among this call's arguments."""
  passed = {id(a) for a in args if isinstance(a, Tensor)}
  return frozenset(p for p, t in returned_paths(prev) if id(t) in passed)


def overwritten(args: list, prev: Any, ret: Any) -> list:
  """The reference's model of the documented overwrite, for an eval step after the train step: at every replay a JIT
  returns its capture's tensor objects, rewritten by every call, so an argument fed back from the previous call's return
  already holds this call's return when the eval step reads it."""
  before, now = {id(t): p for p, t in returned_paths(prev)}, dict(returned_paths(ret))
  return [now[before[id(a)]] if isinstance(a, Tensor) and id(a) in before else a for a in args]


def eager(step: Callable[..., Any], prune: bool = False) -> Callable[..., Any]:
  """The step run eagerly, its returned tensors realized together in one schedule as TinyJit does: results depend
  on that grouping (a lazy .grad read after an in-place update is recomputed from the new value, tinygrad#17074)."""
  def call(*args: Any, **kwargs: Any) -> Any:
    ret = step(*args, **kwargs)
    if params := get_parameters(ret): Tensor.realize(*params)
    return ret
  call.reset = lambda: None  # type: ignore[attr-defined]  # `jit.reset()`: eager has no capture to drop
  return call


def reference(program: SubjectFactory, calls: int, mode: str = SAME_BUFFER, planner_on: bool = False) -> Trace:
  """What is correct: the program with the JIT off and the memory planner off (or on, as a second reference)."""
  return run(program, eager, calls, mode, {"JIT": 0} if planner_on else REFERENCE_CONTEXT, reference=True)
