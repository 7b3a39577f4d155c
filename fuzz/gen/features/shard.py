"""Sharded multi-device tensors: `a.shard(devices, axis)` over 2 or 4 devices of the default device's kind.

`a` is sharded (split on an axis its size divides, or replicated with axis None), combined with a sharded parameter
(its .grad is sharded too, and an optimizer may step it) or a sharded explicit input (refilled in place, shard by
shard), sometimes put through an elementwise op and a reduction over the split axis (an all-reduce across the devices),
then brought back with `.to(DEFAULT)`; the sharded value is sometimes kept outside the step. The capture holds
multi-device BUFFERs read through MSELECT/MSTACK, which tinygrad plans into per-device-tuple arenas.

Rules kept: the split axis's size is divisible by the device count (tinygrad raises "multi axis uneven" otherwise);
operands of one op share one sharding; sharded values never feed state updates or feedback (those live on the default
device). Rules that avoid tinygrad bugs (`avoids`: fuzz.known.avoided.AVOIDED_BUGS, each a strict xfail): a value that
reaches a parameter is replicated, never split (shard-split-grad-unbound-variable: its grad would need the unbound
'_device_num'); a sharded value comes back with `.to(DEFAULT).contiguous_backward()` (multi-grad-expanded,
multi-grad-from-other-device: a grad that is a broadcast buffer, or a copy from another device, cannot be copied into
the shards); a value whose lazy graph holds a copy between devices (shard-of-copied-kernel) or an expand
(replicated-shard-of-lazy-expand) is never sharded, a new input is instead; a replicated sharding shards a lazy `a * 2`
that nothing else reads, never a buffer directly (replicated-unshard-beside-source-reader: a buffer's replicated shard
brought back, realized beside another reader of the buffer, fails UOp verification).
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from fuzz.gen.builder import DEFAULT, F32, Builder, Value, promote
from fuzz.gen.features.feature import Feature, Row
from fuzz.gen.ops import OpSpec
from fuzz.gen.single_ops import draw_op, elementwise

COUNTS = (2, 4)
SHARD_SHAPES = ((8, 16), (4, 8, 8), (8, 8, 8))  # palette shapes of 512 B to 2 KiB


def draw_shard(b: Builder, a: Value) -> Value:
  """From `a`, or (mostly, when `a` is small) from a new input of 128 to 512 elements, so each device's part of a
  sharded buffer outgrows the arena's 256-byte block. Two sharded intermediates are mostly live at once: `h1 = (v * other).contiguous()`,
  `h2 = op(h1).contiguous()`, then `h1 * h2`."""
  if b.lazy_kinds(a) & {"to", "unshard", "expand"} or (math.prod(a.shape) <= 64 and b.draw(st.integers(0, 3)) < 3):
    a = b.leaf("x", b.draw(st.sampled_from(SHARD_SHAPES)), F32)
  n = b.draw(st.sampled_from(COUNTS))
  splits = [] if b.reach()[a.name] & {p.name for p in b.params} else [i for i, d in enumerate(a.shape) if d % n == 0]
  axis = b.draw(st.sampled_from([None, *splits]))
  if axis is None: a = b.emit("scale", (a.name, 2.0), a.shape, a.dtype, [a], pooled=False)  # a lazy op, read only here
  role = f"SHARD{n}:{axis}"  # values of one sharding mix only with each other
  v = b.emit("shard", (a.name, n, axis), a.shape, a.dtype, [a], role, pooled=False)
  other = b.leaf(b.draw(st.sampled_from(("p", "x"))), a.shape, F32, pool=False, shard=(n, axis), device=role)
  v = b.emit(b.draw(st.sampled_from(("mul", "add"))), (v.name, other.name), a.shape, promote(a.dtype, F32), [v, other])
  if b.draw(st.integers(0, 3)) < 3:
    h1 = draw_op(b, v, "contiguous")
    h2 = draw_op(b, draw_op(b, h1, b.draw(st.sampled_from(elementwise(h1)))), "contiguous")
    v = b.emit("mul", (h1.name, h2.name), v.shape, v.dtype, [h1, h2])
  if axis is not None and b.draw(st.booleans()):
    v = b.emit("sum", (v.name, axis, True), v.shape[:axis] + (1,) + v.shape[axis + 1:], v.dtype, [v])
  if b.draw(st.integers(0, 2)) == 2: b.keep.append(v.name)
  return b.emit("unshard", (v.name, DEFAULT), v.shape, v.dtype, [v], DEFAULT, pooled=True)


def _multi_device(rows: tuple[Row, ...]) -> bool: return any(not isinstance(r.device, str) for r in rows)


OPS = {  # values off the default device: no eval step runs them
  # over n devices of the default device's kind (`shards`, defined by `fuzz.gen.render`)
  "shard": OpSpec(1, lambda v, c: f"{v[0]}.shard(shards({c[0]}), axis={c[1]})", in_eval=False),
  # back on one device, the grad made contiguous before it goes to the shards (multi-grad-expanded, multi-grad-from-other-device)
  "unshard": OpSpec(1, lambda v, c: f"{v[0]}.to({c[0]}).contiguous_backward()", in_eval=False),
}
FEATURE = Feature("sharded", None, _multi_device, "planned a multi-device buffer", draw_shard, heavy=True, ops=OPS,
                  avoids=("shard-split-grad-unbound-variable", "multi-grad-from-other-device", "multi-grad-expanded",
                          "shard-of-copied-kernel", "replicated-unshard-beside-source-reader", "replicated-shard-of-lazy-expand"))
