"""A trip to a second device: `a.to(SECOND)`, one to three elementwise ops (or `.contiguous()`) there, and back.

Copy kernels, and second-device buffers that are held whenever a value there is kept (sometimes the last one is) or
returned. SECOND is a second device of the default's kind (CPU:1, AMD:1) or, beside a lone GPU, the CPU (`fuzz.gen.compat`).
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.gen.builder import DEFAULT, SECOND, Builder, Value
from fuzz.gen.features.feature import Feature, Row
from fuzz.gen.ops import unary
from fuzz.gen.single_ops import draw_op, elementwise


def draw_device(b: Builder, a: Value) -> Value:
  """A view `a` often gets an op first, so the copy reads a planned buffer: the copy lane's hold is visible only
  between planned buffers."""
  if a.view and b.draw(st.booleans()): a = draw_op(b, a, b.draw(st.sampled_from(elementwise(a))))
  v = b.emit("to", (a.name, SECOND), a.shape, a.dtype, [a], SECOND, pooled=False)
  for _ in range(b.draw(st.integers(1, 3))): v = draw_op(b, v, b.draw(st.sampled_from((*elementwise(v), "contiguous"))))
  if b.draw(st.integers(0, 2)) == 2: b.keep.append(v.name)
  return b.emit("to", (v.name, DEFAULT), v.shape, v.dtype, [v], DEFAULT, pooled=True)


def _off_default(rows: tuple[Row, ...]) -> bool:
  devices = [r.device for r in rows]
  return any(r.lane == 1 for r in rows) or len({d for d in devices if isinstance(d, str)}) > 1


OPS = {"to": unary("{0}.to({1})")}  # a copy to the second device (SECOND) or back (DEFAULT): names the program defines
FEATURE = Feature("second device", None, _off_default, "planned a copy-lane or second-device buffer", draw_device, ops=OPS)
