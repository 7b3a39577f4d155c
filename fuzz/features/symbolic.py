"""A reduction over the first `n` rows of a value, `n` a Variable bound anew on every call (a step argument).

`cache[:n].sum(0)` (or mean) realized: `a` when it has 8 rows, else a new (8, 4) input. Realized at once, so no
symbolic view, pad or lazy graph with the capture-time bound value escapes the step (documented to freeze). Not drawn
when pruned: prune freezes a bound Variable.
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.builder import Builder, Value
from fuzz.features.feature import Feature


def draw_symbolic(b: Builder, a: Value) -> Value:
  fits = len(a.shape) >= 2 and a.shape[0] == 8 and b.can_realize(a)
  cache = a if fits and b.draw(st.booleans()) else b.leaf("x", (8, 4))
  b.symbolic = True
  return b.emit("symbolic", (cache.name, b.draw(st.sampled_from(("sum", "mean"))), "n"), cache.shape[1:], cache.dtype, [cache])


FEATURE = Feature("symbolic", lambda p: p.variable is not None, draw=draw_symbolic, applies=lambda b, a: not b.pruned)
