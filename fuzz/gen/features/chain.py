"""A chain of kernel-separated (`.contiguous()`) intermediates: the buffers a planner packs and reuses.

Two or three kernels, each writing its own buffer that the next reads in another order, often over 64 elements (a
small operand may be replaced by a new input of a bigger shape, so the buffers outgrow the arena's 256-byte block).
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from fuzz.gen.builder import BIG_SHAPES, F32, Builder, Value
from fuzz.gen.features.feature import Feature, Row
from fuzz.gen.single_ops import draw_op, elementwise


def draw_chain(b: Builder, a: Value) -> Value:
  if math.prod(a.shape) <= 64 and b.draw(st.booleans()): a = b.leaf("x", b.draw(st.sampled_from(BIG_SHAPES)), F32)
  for i in range(b.draw(st.integers(2, 3))):
    kinds = elementwise(a) if i == 0 else ("flip", *elementwise(a)) + (("permute",) if len(a.shape) >= 2 else ())
    a = draw_op(b, draw_op(b, a, b.draw(st.sampled_from(kinds))), "contiguous")
  return a


def _reused(rows: tuple[Row, ...]) -> bool:
  """Two compute-lane buffers of one arena whose lifetimes do not meet: a region the planner reused."""
  compute = [r for r in rows if r.lane == 0]
  return any(a.device == b.device and a.last < b.first for a in compute for b in compute)


FEATURE = Feature("chain", None, _reused, "planned buffers with disjoint lifetimes (reuse possible)", draw_chain)
