"""A read of a state tensor before the step's state update, in a kernel of its own.

`(s * c).contiguous().realize()` combined with `a`: the update may write the state from the inputs, and with
prune=True tinygrad's one-pass split runs such a read only once (documented freezing when the split is sound).
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.gen.builder import F32, Builder, Value, promote
from fuzz.gen.features.feature import Feature
from fuzz.gen.single_ops import draw_op


def draw_state_read(b: Builder, a: Value) -> Value:
  scaled = draw_op(b, b.leaf("s", a.shape, F32), "scale")
  r = b.emit("realize", (scaled.name,), a.shape, F32, [scaled])
  return b.emit(b.draw(st.sampled_from(("add", "mul"))), (a.name, r.name), a.shape, promote(a.dtype, F32), [a, r])


FEATURE = Feature("state read", draw=draw_state_read)
