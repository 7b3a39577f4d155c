"""The plain engine: a captured linear replayed call by call (`run_linear` over its kernels and copies).

What tinygrad 0.14.0 replays on a device without a graph runner (the CPU device) or with `JIT=2`, HCQ2 off. A replay
patches nothing into prebuilt queues: each call resolves the explicit inputs' buffers anew, and an input that the
linear writes is copied first (`CapturedJit._written_uops`, `_copy_input`).

What ran: `spy_replays`, each captured linear a JIT replayed this way, with the inputs a replay copied first. What to
plant: nothing yet; the planner target's copy rules (planner/stages.py) are planfuzz's own version of that copy.
"""
from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from planner import tg
from planner.engines import Engine


@dataclass(frozen=True)
class PlainReplay:
  """One captured linear a JIT ran call by call: its calls, the inputs its replays copied first, and its runs."""
  calls: int
  copied: int  # input copies before its replays, all replays together
  runs: int = 0


def _plain(linear: Any) -> bool:
  return not any(c.src[0].op is tg.Ops.CUSTOM_FUNCTION and c.src[0].arg in ("graph", "hcq") for c in linear.src)


@contextlib.contextmanager
def spy_replays() -> Iterator[list[PlainReplay]]:
  """The captured linears TinyJits ran call by call while active, filled in on exit; nothing where this tinygrad's
  internals are unsupported."""
  found: list[PlainReplay] = []
  if tg.MISSING:
    yield found
    return
  jit_mod = importlib.import_module("tinygrad.engine.jit")
  real_copy = jit_mod._copy_input
  runs: dict[int, list] = {}  # id(captured jit) -> [it (kept, so its id is not reused), calls, copies, runs]
  current: list[list] = []

  def counted(real_call: Callable) -> Callable:
    def call(self: Any, input_uops: list, var_vals: dict) -> Any:
      if not _plain(self.linear): return real_call(self, input_uops, var_vals)
      seen = runs.setdefault(id(self), [self, len(self.linear.src), 0, 0])
      seen[3] += 1
      current.append(seen)
      try: return real_call(self, input_uops, var_vals)
      finally: current.pop()
    return call

  def copy_input(u: Any) -> Any:
    if current: current[-1][2] += 1
    return real_copy(u)
  jit_mod._copy_input = copy_input
  try:
    with tg.calls_through([jit_mod.CapturedJit], counted): yield found
  finally:
    jit_mod._copy_input = real_copy
    found.extend(PlainReplay(n, copies, r) for _, n, copies, r in runs.values())


ROWS = (
  ("a capture replayed call by call", lambda rs: any(r.runs >= 2 for r in rs)),
  ("a replay that copied a written input first", lambda rs: any(r.copied for r in rs)),
)

def active() -> bool:
  from planner.engines import hcq2
  return not hcq2.active()


ENGINE = Engine("plain", "plain", spy_replays, ROWS, "none ran (every capture replayed through a graph runner, or none replayed)", active)
