"""nn.Conv2d(cin, 2, 3, padding=1) with parameter weight and bias: the layer of tinygrad#16571's repro.

On `a` reshaped to NCHW when it has 32 float32 elements, else on a new (2, 3, 8, 8) input; the result is reshaped to
a palette shape.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from fuzz.gen.builder import F32, RESHAPES, Builder, Value
from fuzz.gen.features.feature import Feature
from fuzz.gen.ops import OpSpec

CONVS = (((1, 2, 4, 4), 2), ((2, 3, 8, 8), 2))  # (NCHW input, output channels); the first reshapes a 32-element value


def draw_conv(b: Builder, a: Value) -> Value:
  (nchw, cout) = CONVS[0] if a.dtype == F32 and math.prod(a.shape) == 32 and b.draw(st.booleans()) else CONVS[1]
  x = a if nchw == CONVS[0][0] else b.leaf("x", nchw, F32, pool=False)
  w, bias = b.leaf("p", (cout, nchw[1], 3, 3), F32, pool=False), b.leaf("p", (cout,), F32, pool=False)
  out = b.draw(st.sampled_from(RESHAPES[nchw[0] * cout * nchw[2] * nchw[3]]))
  return b.emit("conv2d", (x.name, w.name, bias.name, nchw, out), out, F32, [x, w, bias], pooled=True)


# an nn.Conv2d(cin, cout, 3, padding=1) on `x` seen as NCHW, flattened back to a palette shape
OPS = {"conv2d": OpSpec(3, lambda v, c: f"{v[0]}.reshape({c[0]}).conv2d({v[1]}, {v[2]}, padding=1).reshape({c[1]})")}
FEATURE = Feature("conv", draw=draw_conv, ops=OPS)
