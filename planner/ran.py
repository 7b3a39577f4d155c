"""What tinygrad ran in each JIT call: every kernel, copy, graph batch and 'hcq' call, with the devices it touched.

A repro script must run the very program the campaign judged. Recording what executed (not what the program text
says) in the campaign's process and in the script's, and comparing the two, is how tests hold a script to that
(tests/test_repro_verdicts.py): a copy that went to another device, a kernel more or fewer, a graph batch cut
elsewhere all show. Read off tinygrad's `track_stats`, which `run_linear` calls once for every call it executes, and
cut into JIT calls at TinyJit's and PlannedJit's `__call__`; what runs between two calls (the reference, the oracle's
reads) is not recorded.
"""
from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from planner import tg

NAME_SUFFIX = re.compile(r"n\d+$")  # tinygrad tells apart same-named kernels of one process by a count: not the program's


@dataclass(frozen=True)
class Ran:
  """One executed call: a kernel (its name), a copy, a graph batch or an HCQ2 'hcq' call (with what it ran inside)."""
  what: str
  devices: tuple[str, ...]  # a copy's (to, from); anything else's devices, sorted
  inner: tuple[Ran, ...] = ()


@dataclass
class JitCall:
  """Everything executed inside one call of one JIT (`jit`: which JIT of the run, in the order they were first called)."""
  jit: int
  call: int
  ran: list[Ran] = field(default_factory=list)


def as_data(calls: list[JitCall]) -> list[dict]:
  """`calls` as plain JSON-able data, the JITs numbered from 0 in the order `calls` first names them: what one process
  recorded, comparable with another's."""
  first: dict[int, int] = {}
  return [{"jit": first.setdefault(c.jit, len(first)), "call": c.call, "ran": [_data(r) for r in c.ran]} for c in calls]


def _data(r: Ran) -> list: return [r.what, list(r.devices), [_data(i) for i in r.inner]]


def _devices(u: Any) -> tuple[str, ...]: return tg.devices_of(u)


def describe(call: Any, inputs: tuple) -> Ran:
  """What one call of a linear is, its buffers resolved against the JIT call's inputs."""
  realize = importlib.import_module("tinygrad.engine.realize")
  ast = call.src[0]
  args = realize.resolve_params(call, inputs)
  if ast.op is tg.Ops.COPY: return Ran("copy", tuple(",".join(_devices(a)) for a in args[:2]))
  devices = tuple(sorted({d for a in args for d in _devices(a)}))
  if tg.is_graph_call(call): return Ran("graph", devices, tuple(describe(c, inputs) for c in ast.src[0].src))
  if ast.op is tg.Ops.CUSTOM_FUNCTION and ast.arg == "hcq":
    return Ran("hcq", devices, tuple(Ran(_kernel_name(k), tuple(devs)) for devs, k, _ in call.arg.aux.kernels))
  return Ran(NAME_SUFFIX.sub("", tg.call_name(call)), devices)


def _kernel_name(k: Any) -> str: return NAME_SUFFIX.sub("", re.sub(r"\x1b\[[0-9;]*m", "", str(k.arg.name)))


def jit_classes() -> list[type]:
  """The JIT classes whose calls are marked: tinygrad's TinyJit (a class of its own before 0.14, `_TinyJit` from it)
  and, where this tinygrad's internals are supported, planfuzz's PlannedJit."""
  jit_mod = importlib.import_module("tinygrad.engine.jit")
  classes = [getattr(jit_mod, "_TinyJit", None) or jit_mod.TinyJit]
  return classes if tg.MISSING else [*classes, importlib.import_module("planner.jit").PlannedJit]


@contextlib.contextmanager
def jit_calls(before: Callable[[int, int], None], after: Callable[[int, int], None]) -> Iterator[None]:
  """Every call of a JIT made while active told before it runs (`before(jit, call)`, the JITs numbered in the order
  they were first called, `call` counted per JIT) and after it returns or raises (`after`)."""
  jits: dict[int, list] = {}  # id(jit) -> [its index, calls so far, the JIT (kept, so its id is not reused)]

  def marked(real: Any) -> Any:
    def jit_call(self: Any, *args: Any, **kwargs: Any) -> Any:
      seen = jits.setdefault(id(self), [len(jits), 0, self])
      jit, call = seen[0], seen[1]
      seen[1] += 1
      before(jit, call)
      try: return real(self, *args, **kwargs)
      finally: after(jit, call)
    return jit_call
  with tg.calls_through(jit_classes(), marked): yield


@contextlib.contextmanager
def recording() -> Iterator[list[JitCall]]:
  """Every JIT call made while active, in order, with what tinygrad executed inside it."""
  tg.require()
  realize = importlib.import_module("tinygrad.engine.realize")
  calls: list[JitCall] = []
  open_call: list[JitCall] = []
  real_stats = realize.track_stats

  def track_stats(ctx: Any, call: Any, st: Any, ets: list) -> None:
    if open_call and ctx.update_stats: open_call[-1].ran.append(describe(call, ctx.input_uops))
    return real_stats(ctx, call, st, ets)

  def before(jit: int, call: int) -> None:
    calls.append(JitCall(jit, call))
    open_call.append(calls[-1])
  realize.track_stats = track_stats
  try:
    with jit_calls(before, lambda jit, call: open_call.pop()): yield calls
  finally: realize.track_stats = real_stats
