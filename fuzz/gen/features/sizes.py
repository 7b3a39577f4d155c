"""Both ends of the size range: buffers of 4 KiB to 256 KiB, and buffers of one element.

Big: a new (n, n) float32 input, n in 32, 64, 128, 256, through two or three kernels that each write a buffer of its size
(elementwise ops, sometimes a matmul with a new (n, n) parameter), reduced back to a palette shape and combined with
`a`. Two big buffers live at once put arena offsets past 64 KiB. Tiny: `y = op(a).contiguous()`, its total
`y.sum().reshape(1)` in a buffer of its own, negated into another, broadcast back over `y`. Two features (big is heavy, tiny cheap); few
shapes, so kernels stay cached.
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.gen.builder import F32, RESHAPES, Builder, Value, promote
from fuzz.gen.features.feature import Feature, Row
from fuzz.gen.ops import unary
from fuzz.gen.single_ops import draw_op, elementwise
from oracle.device import emulated

# 4 KiB to 256 KiB of float32. On an emulated GPU each instruction of each wave runs in Python (~6 us): there the
# palette stops at 128 and no big buffer is multiplied, since even a 32x32 matmul launches 1024 workgroups (a third of
# a second a kernel, 77% of the emulator's time at seed 0 when it was drawn); elementwise kernels still write them
BIG = (32, 64, 128) if emulated() else (32, 64, 128, 256)
BIG_MATMUL = 0 if emulated() else max(BIG)
TINY_BYTES, BIG_BYTES = 8, 4096


def draw_big(b: Builder, a: Value) -> Value:
  n = b.draw(st.sampled_from(BIG))
  h = b.leaf("x", (n, n), F32, pool=False)
  for _ in range(b.draw(st.integers(2, 3))):
    if b.draw(st.integers(0, 2)) == 2 and n <= BIG_MATMUL:
      w = b.leaf("p", (n, n), F32, pool=False)
      h = b.emit("matmul", (h.name, w.name), (n, n), F32, [h, w])
    else: h = draw_op(b, h, b.draw(st.sampled_from(elementwise(h))))
    h = draw_op(b, h, "contiguous")
  row = b.emit("sum", (h.name, 0, False), (n,), F32, [h])
  shape = b.draw(st.sampled_from([s for s in RESHAPES[n] if len(s) > 1]))
  back = b.emit("reshape", (row.name, shape), shape, F32, [row], pooled=True)
  return b.emit("mul", (back.name, a.name), back.shape, promote(a.dtype, F32), [back, a]) if a.shape == shape else back


def draw_tiny(b: Builder, a: Value) -> Value:
  """`y = op(a).contiguous()`, its total in a buffer of its own, negated into a second one, then `y * -total`: the
  one-element buffers are made while y's is still to be read. The first backward() starts from the product, so they
  are captured; the total's buffer is read by the negation only (whose gradient needs no operand), so no lazy grad
  or returned view of y holds it and the planner gets a 4-byte buffer to place."""
  y = draw_op(b, draw_op(b, a, b.draw(st.sampled_from(elementwise(a)))), "contiguous")
  t = draw_op(b, b.emit("total", (y.name,), (1,), y.dtype, [y]), "contiguous")
  t = draw_op(b, draw_op(b, t, "neg"), "contiguous")
  return b.as_loss(b.emit("mul", (y.name, t.name), y.shape, y.dtype, [y, t]))


def _big(rows: tuple[Row, ...]) -> bool: return any(r.nbytes >= BIG_BYTES for r in rows)
def _tiny(rows: tuple[Row, ...]) -> bool: return any(r.nbytes <= TINY_BYTES for r in rows)


BIG_FEATURE = Feature("big buffers", None, _big, "planned a buffer of at least 4 KiB", draw_big, heavy=True)
TINY_FEATURE = Feature("one-element buffers", None, _tiny, "planned a buffer of at most 8 B", draw_tiny,
                       ops={"total": unary("{0}.sum().reshape(1)")})  # one element
FEATURES = (TINY_FEATURE, BIG_FEATURE)
