"""A trip through another dtype: every element width in one program, so buffers of 1, 2, 4 and 8 bytes share arenas.

`a` goes into D (a float cast; for integers a clipped, scaled cast; for bool a `> 0` mask), gets a buffer of its own
(`.contiguous()`), takes zero to two ops that keep D (with an earlier D value or a new input of D; one op at least for
8-byte elements, so two such buffers are live at once), gets another buffer, and comes back to float32 (for bool: the
mask picks between `a` and `-a`). The first backward() starts there, so the trip is captured rather than left dead
code, on a tinygrad whose backward() passes it (0.14.0 does; 0.12.0 raises over a bool or integer one). The D value
is sometimes kept outside the step, and it may be returned: integer and bool observables are compared exactly. Every
dtype here is one tinygrad 0.14.0's CPU renderer lists in `supported_dtypes()`; those the device cannot build are left out, once per
process (`planner.tg.usable_dtypes`: clang 14 has no bfloat16 on x86). On tinygrad's emulated GPU bfloat16 is left out
whatever the probe says: the emulator builds each instruction as C with the host's clang, so a bfloat16 cast passes,
but a kernel that fuses more bfloat16 work fails ("__bf16 is not supported on this target"; a realize of grads and
kept tensors together, planner clean run seed 20261206, whose known-bug mechanism rerun it thereby hid).

Rules kept: integer casts are clipped first (a float out of an integer's range converts to anything in C); `.grad`
through an integer cast is zero in eager and JIT alike, so a parameter behind one still gets a (zero) grad; bfloat16
has no numpy dtype, so it is never a leaf (only a cast), and tinygrad reads it back as float32.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import strategies as st

from fuzz.gen.builder import BIG_SHAPES, F32, Builder, Value
from fuzz.gen.features.feature import FLOATS, Feature, Row
from fuzz.gen.ops import OpSpec, binary, unary
from oracle.device import emulated

# simplest first: a failure shrinks towards int32
DTYPES = tuple(d for d in ("int32", "bool", "float64", "int64", "uint8", "bfloat16", "float16") if not (emulated() and d == "bfloat16"))
INTEGERS = ("int32", "int64", "uint8")
WIDE = ("int64", "float64")
WIDE_ONE_IN = 2  # the width is a draw of its own: one pick from the whole list left 8-byte elements undrawn for a seed


def into(b: Builder, a: Value, d: str) -> Value:
  if d == "bool": return b.emit("mask", (a.name,), a.shape, d, [a], pooled=False)
  if d in INTEGERS: return b.emit("quantize", (a.name, d), a.shape, d, [a], pooled=False)
  return b.emit("cast_to", (a.name, d), a.shape, d, [a], pooled=False)


def operand(b: Builder, v: Value) -> Value:
  """An earlier value of v's dtype and shape, or a new input of it (bfloat16 has no numpy data: a cast of a new one)."""
  fits = [u for u in b.values if u.dtype == v.dtype and u.shape == v.shape and u is not v]
  if fits and b.draw(st.booleans()): return b.draw(st.sampled_from(fits))
  if v.dtype != "bfloat16": return b.leaf("x", v.shape, v.dtype, pool=False)
  return into(b, b.leaf("x", v.shape, F32, pool=False), v.dtype)


def op_in(b: Builder, v: Value) -> Value:
  """One op whose result keeps v's dtype."""
  kinds = ("and", "or") if v.dtype == "bool" else ("add", "mul", "max") + (() if v.dtype == "uint8" else ("neg",))
  kind = b.draw(st.sampled_from(kinds))
  if kind == "neg": return b.emit(kind, (v.name,), v.shape, v.dtype, [v])
  if kind == "max":
    axis = b.draw(st.integers(0, len(v.shape) - 1))
    return b.emit(kind, (v.name, axis, True), v.shape[:axis] + (1,) + v.shape[axis + 1:], v.dtype, [v])
  other = operand(b, v)
  return b.emit(kind, (v.name, other.name), v.shape, v.dtype, [v, other])


def draw_dtype(b: Builder, a: Value) -> Value:
  """From `a`, or (when `a` is small: always for 8-byte elements, else often) from a new input of 64 or 256 elements:
  an 8-byte element type then outgrows the arena's 256-byte block, where element widths matter to a planner."""
  from planner import tg
  usable = tg.usable_dtypes(DTYPES)
  wide, narrow = [d for d in usable if d in WIDE], [d for d in usable if d not in WIDE]
  group = wide if wide and (not narrow or b.draw(st.integers(1, WIDE_ONE_IN)) == WIDE_ONE_IN) else narrow
  d = b.draw(st.sampled_from(group))
  if math.prod(a.shape) <= 32 and (d in WIDE or b.draw(st.booleans())): a = b.leaf("x", b.draw(st.sampled_from(BIG_SHAPES)), F32)
  q = into(b, a, d)
  v = b.emit("contiguous", (q.name,), q.shape, d, [q])
  for _ in range(b.draw(st.integers(int(d in WIDE), 2))): v = op_in(b, v)  # wide: two 8-byte buffers live at once
  v = b.emit("contiguous", (v.name,), v.shape, d, [v])
  if b.draw(st.integers(0, 2)) == 2: b.keep.append(v.name)
  if d == "bool":
    neg = b.emit("neg", (a.name,), a.shape, a.dtype, [a])
    out = b.emit("select", (v.name, a.name, neg.name), a.shape, a.dtype, [v, a, neg], pooled=True)
  else: out = b.emit("cast_to", (v.name, F32), v.shape, F32, [v], pooled=True)
  return b.as_loss(out) if differentiable(d) else out


@functools.cache
def differentiable(d: str) -> bool:
  """Whether this tinygrad's backward() passes a trip through `d`, probed once per process with the feature's own
  ops: tinygrad 0.12.0 raises "only float Tensors have gradient" over a bool mask or an integer product, so there the
  trip is not made a loss (it would make the program invalid)."""
  from fuzz.gen.compat import param
  p = param(np.linspace(-1, 1, 4, dtype=np.float32))
  if d == "bool": trip = [m := (p > 0).contiguous(), m.where(p, -p)]
  elif d in INTEGERS: trip = [q := (p.abs().clip(0, 63) * 4).cast(d).contiguous(), r := q * 2, r.cast(F32)]
  else: trip = [c := p.cast(d).contiguous(), c.cast(F32)]
  back = trip[-1]  # the trip's values stay alive, as a step's locals do: 0.12.0's backward() looks at live tensors
  try:
    (back * p).sum().backward()
    p.grad.realize()
    return True
  except RuntimeError: return False


def _other_width(rows: tuple[Row, ...]) -> bool: return any(r.dtype not in FLOATS for r in rows)


def _usable(b: Builder, a: Value) -> bool:
  from planner import tg
  return bool(tg.usable_dtypes(DTYPES))


OPS = {
  "cast_to": unary("{0}.cast({1!r})"),  # to any dtype by name: float64, bfloat16, and back to float32 from any
  # into an integer dtype: clipped first, so no float out of the integer's range is converted (undefined in C)
  "quantize": OpSpec(1, lambda v, c: f"({v[0]}.abs().clip(0, 63) * 4).cast('uint8')" if c[0] == "uint8"
                     else f"({v[0]}.clip(-64, 64) * 4).cast({c[0]!r})"),
  "mask": unary("({0} > 0)"),  # a bool mask
  "and": binary("&"),
  "or": binary("|"),
  "select": OpSpec(3, lambda v, c: f"{v[0]}.where({v[1]}, {v[2]})"),  # a bool mask picks between two values
}
FEATURE = Feature("dtypes", None, _other_width, "planned a buffer of another dtype", draw_dtype, applies=_usable, ops=OPS)
