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
from tinygrad import Context, Tensor
from tinygrad.nn.state import get_parameters

from oracle.subject import Program, Subject

FRESH, SAME_BUFFER = "fresh", "same-buffer"
MODES = (FRESH, SAME_BUFFER)
REFERENCE_CONTEXT = {"JIT": 0, "NO_MEMORY_PLANNER": 1}
# a lazy tensor that is a pending in-place assign (what backward() makes when it accumulates into an existing .grad)
# is realized by its first read and is plain data from then on: made at capture, it never changes on replay
PENDING_ASSIGN_OPS = ("AFTER", "ASSIGN")
Wrap = Callable[[Callable[..., Any], bool], Callable[..., Any]]  # (step, prune) -> jitted step


@dataclass
class CallRecord:
  index: int
  values: dict[str, np.ndarray] = field(default_factory=dict)
  lazy: frozenset[str] = frozenset()
  input_views: frozenset[str] = frozenset()
  pending_assigns: frozenset[str] = frozenset()
  error: BaseException | None = None


@dataclass
class Trace:
  calls: list[CallRecord]
  jit: Any = None
  prune: bool = False

  @property
  def error(self) -> BaseException | None: return next((c.error for c in self.calls if c.error is not None), None)


def phase(call: int) -> str:
  """Calls as TinyJit numbers them: 0 eager, 1 capture, then replays."""
  return "eager" if call == 0 else "capture" if call == 1 else f"replay {call - 1}"


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
    return [self._tensor(i, x) if isinstance(x, np.ndarray) else x for i, x in enumerate(raw)]

  def _tensor(self, i: int, arr: np.ndarray) -> Tensor:
    if self.mode == FRESH or i not in self.kept:
      self.kept[i] = Tensor(arr).realize()
      return self.kept[i]
    return self.kept[i].assign(Tensor(arr)).realize()


def input_views(named: dict[str, Tensor], inputs: list) -> frozenset[str]:
  """Observables that are pure views of an explicit input (no kernel made them), returned or kept: a JIT hands
  back the capture-time object, so with fresh inputs its replays show the capture call's data (documented)."""
  bases = {t.uop.base for t in inputs if isinstance(t, Tensor)}
  return frozenset(p for p, t in named.items() if t.uop.base in bases)


def snapshot(ret: Any, subject: Subject, inputs: list, together: bool = False) -> CallRecord:
  """Every observable's value after a call. `together` realizes the lazy ones in one schedule first (each read of
  a lazy tensor schedules anew): only for eager runs, where one read or many give the same values."""
  named = dict(returned_paths(ret)) | {p: t for p, t in subject.observe().items() if isinstance(t, Tensor)}
  lazy = frozenset(p for p, t in named.items() if not t.uop.is_realized)
  assigns = frozenset(p for p in lazy if named[p].uop.op.name in PENDING_ASSIGN_OPS)
  if together and lazy: Tensor.realize(*{id(named[p]): named[p] for p in lazy}.values())
  return CallRecord(-1, {p: t.numpy().copy() for p, t in named.items()}, lazy, input_views(named, inputs), assigns)


OnCapture = Callable[[Any, Subject, Any], None]  # (jitted step, subject, returned value), right after call 1


def run(program: Program, wrap: Wrap | None, calls: int, mode: str = SAME_BUFFER, context: dict | None = None,
        on_capture: OnCapture | None = None, eager_reads: bool = False, before_replay: Callable[[], None] | None = None) -> Trace:
  """Build a fresh instance of `program`, call it `calls` times (jitted by `wrap`, or eagerly), snapshot each call.

  `context` is a tinygrad Context for the whole run; the reference passes JIT=0, NO_MEMORY_PLANNER=1.
  `on_capture` runs right after the capture call, before anything is read (static checks see the plan there);
  `before_replay` before every later call (the oracle poisons a real TinyJit's arenas there)."""
  with Context(**(context or {})):
    subject = program()
    step = subject.step if wrap is None else wrap(subject.step, subject.prune)
    to_tensors, records, ret = InputTensors(mode), [], None
    for k in range(calls):
      if k >= 2 and before_replay is not None: before_replay()
      try:
        args = to_tensors(subject.inputs(k, ret))
        ret = step(*args)
      except Exception as e:  # a program's error is data: the judge decides whether it is a rejection or a finding
        records.append(CallRecord(k, error=e))
        break
      if k == 1 and on_capture is not None: on_capture(step, subject, ret)  # the oracle's own errors are never data
      try: record = snapshot(ret, subject, args, eager_reads)
      except Exception as e:
        records.append(CallRecord(k, error=e))
        break
      record.index = k
      records.append(record)
  return Trace(records, step, subject.prune)


def eager(step: Callable[..., Any], prune: bool = False) -> Callable[..., Any]:
  """The step run eagerly, its returned tensors realized together in one schedule as TinyJit does: results depend
  on that grouping (a lazy .grad read after an in-place update is recomputed from the new value, tinygrad#17074)."""
  def call(*args: Any, **kwargs: Any) -> Any:
    ret = step(*args, **kwargs)
    if params := get_parameters(ret): Tensor.realize(*params)
    return ret
  return call


def reference(program: Program, calls: int, mode: str = SAME_BUFFER, planner_on: bool = False) -> Trace:
  """What is correct: the program with the JIT off and the memory planner off (or on, as a second reference)."""
  return run(program, eager, calls, mode, {"JIT": 0} if planner_on else REFERENCE_CONTEXT, eager_reads=True)
