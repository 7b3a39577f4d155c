"""An intermediate realized inside the step, often with a lazy tensor over it kept outside.

`a.contiguous().realize()` (backward() stops there), after an elementwise op when `a` is a view (which may realize to
no kernel) or already has a `.contiguous()` (the same UOp: realizing it would cut the grads of a loss drawn over
that); the kept lazy tensor is an escape that is not a .grad and reads a planned buffer. Realized only where no
`.contiguous()` of a leaf view lies in its lazy graph (`Builder.can_realize`), so `fuzz.gen.program.reaches` knows exactly
which parameters get a .grad.
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.gen.builder import Builder, Value
from fuzz.gen.features.feature import Feature
from fuzz.gen.single_ops import draw_op, elementwise


def draw_realize(b: Builder, a: Value) -> Value:
  """Of `a`, or where `a` may not be realized, of a new input of its shape, added to `a`."""
  start = a if b.can_realize(a) else b.leaf("x", a.shape, a.dtype)
  # a view may realize to no kernel; an earlier `start.contiguous()` is the UOp this realizes, so the loss or update
  # already drawn over it would lose its grads
  if start.view or any(op.kind == "contiguous" and op.args[0] == start.name for op in b.body):
    start = draw_op(b, start, b.draw(st.sampled_from(elementwise(start))))
  r = b.emit("realize", (start.name,), start.shape, start.dtype, [start])
  if b.draw(st.integers(0, 3)) < 3: b.keep.append(draw_op(b, r, "scale").name)  # mostly: the escape is the point
  return r if start is a or r.shape != a.shape else b.emit("add", (a.name, r.name), a.shape, a.dtype, [a, r])


FEATURE = Feature("realize", draw=draw_realize)
