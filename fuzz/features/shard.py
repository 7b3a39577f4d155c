"""Sharded multi-device tensors: `a.shard(devices, axis)` over 2 or 4 devices of the default device's kind.

`a` is sharded (split on an axis its size divides, or replicated with axis None), combined with a sharded parameter
(its .grad is sharded too, and an optimizer may step it) or a sharded explicit input (refilled in place, shard by
shard), sometimes put through an elementwise op and a reduction over the split axis (an all-reduce across the devices),
then brought back with `.to(DEFAULT)`; the sharded value is sometimes kept outside the step. The capture holds
multi-device BUFFERs read through MSELECT/MSTACK, which tinygrad plans into per-device-tuple arenas.

Rules kept: the split axis's size is divisible by the device count (tinygrad raises "multi axis uneven" otherwise);
operands of one op share one sharding; sharded values never feed state updates or feedback (those live on the default
device).
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.builder import DEFAULT, F32, Builder, Value, promote
from fuzz.features.feature import Feature, Row
from fuzz.single_ops import ELEMENTWISE, draw_op

COUNTS = (2, 4)


def draw_shard(b: Builder, a: Value) -> Value:
  n = b.draw(st.sampled_from(COUNTS))
  axis = b.draw(st.sampled_from([None, *(i for i, d in enumerate(a.shape) if d % n == 0)]))
  role = f"SHARD{n}:{axis}"  # values of one sharding mix only with each other
  v = b.emit("shard", (a.name, n, axis), a.shape, a.dtype, [a], role, pooled=False)
  other = b.leaf(b.draw(st.sampled_from(("p", "x"))), a.shape, F32, pool=False, shard=(n, axis), device=role)
  v = b.emit(b.draw(st.sampled_from(("mul", "add"))), (v.name, other.name), a.shape, promote(a.dtype, F32), [v, other])
  if b.draw(st.booleans()): v = draw_op(b, v, b.draw(st.sampled_from(ELEMENTWISE)))
  if axis is not None and b.draw(st.booleans()):
    v = b.emit("sum", (v.name, axis, True), v.shape[:axis] + (1,) + v.shape[axis + 1:], v.dtype, [v])
  if b.draw(st.integers(0, 2)) == 2: b.keep.append(v.name)
  return b.emit("to", (v.name, DEFAULT), v.shape, v.dtype, [v], DEFAULT, pooled=True)


def _multi_device(rows: tuple[Row, ...]) -> bool: return any(not isinstance(r[0], str) for r in rows)


FEATURE = Feature("sharded", None, _multi_device, "planned a multi-device buffer", draw_shard)
