"""A deep model: 8 to 10 layers `h = (h @ W_i).relu()` with skip connections, and the first layer's activation read
again at the end, so a buffer made early is read many kernels later.

With its backward pass (the first backward() starts from the model's output) a capture holds well over 30 kernels,
and the first activation's buffer (and the skips') lives across most of them: long lifetimes, which a planner that
caps or misjudges them packs over.
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.gen.builder import F32, Builder, Value
from fuzz.gen.features.feature import Feature, Row

LAYERS = (8, 10)
LONG = 16  # steps a long-lived buffer spans


def draw_deep(b: Builder, a: Value) -> Value:
  """On `a` when it is 2-D float32 (rows, k), else on a new (4, 8) input: every layer a new (k, k) parameter; a skip
  from the first activation every few."""
  if len(a.shape) != 2 or a.dtype != F32: a = b.leaf("x", (4, 8), F32)
  k = a.shape[-1]
  h = first = None
  for i in range(b.draw(st.integers(*LAYERS))):
    w = b.leaf("p", (k, k), F32, pool=False)
    h = b.emit("matmul", ((h or a).name, w.name), a.shape, F32, [h or a, w])
    h = b.emit("relu", (h.name,), a.shape, F32, [h])
    if first is None: first = h
    elif i % 3 == 0 and b.draw(st.booleans()): h = b.emit("add", (h.name, first.name), a.shape, F32, [h, first])
  out = b.emit("add", (h.name, first.name), a.shape, F32, [h, first])
  b.losses.append(out.name)  # the first backward() starts here: else the model is often dead code, never captured
  return out


def _long_lived(rows: tuple[Row, ...]) -> bool: return any(r.last - r.first >= LONG for r in rows)


FEATURE = Feature("deep", None, _long_lived, f"planned a buffer live over {LONG}+ steps", draw_deep, heavy=True)
