"""Single ops: which apply to a value, their constants and second operands, and the shape and dtype they make.

Every op is drawn for an operand it applies to, and a second operand it needs is either an earlier value of a fitting
shape, a new leaf made to fit or (sometimes) a fresh `Tensor.rand`; nothing is filtered. Each draw is a small integer
range or a short list, so Hypothesis shrinks a failure to a handful of ops.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st
from tinygrad import dtypes

from fuzz.gen.builder import F16, F32, LEAF_DIMS, MAX_DIM, MAX_NDIM, RESHAPES, VIEW_DIMS, Builder, Value, broadcast, promote
from planner import tg

UNARY = ("relu", "neg", "exp", "sqrt", "sigmoid", "scale", "cast", "contiguous")
ELEMENTWISE = ("relu", "neg", "exp", "sqrt", "sigmoid", "scale")
# simplest first: Hypothesis shrinks a sampled kind towards the front
KINDS = ("relu", "add", "mul", "sum", "matmul", "sub", "neg", "exp", "sqrt", "sigmoid", "scale", "cast", "contiguous", "max",
         "reshape", "permute", "expand", "unsqueeze", "flip", "pad", "shrink", "cat", "where")


# ops that mix a float constant into a float16 value: clang 14 rejects tinygrad 0.14.0's CPU code for some of them
# ("invalid conversion between ext-vector type '__fp164' and 'float4'"), an eager compile error, so a rejection
HALF_CONSTANT_OPS = {"scale", "pad", "where", "sigmoid", "exp", "sqrt"}


def aligned_start(lo: int, row: int, dtype: str) -> int:
  """A shrink's start, moved down where needed so the view starts a multiple of 16 bytes into its buffer, in a process
  running HCQ2: there a kernel given a view at another offset kills the process (fuzz.known.bugs
  hcq2-misaligned-view-kernel-segfault). The same draw everywhere, so programs drawn without HCQ2 are unchanged."""
  if not tg.environment_knobs().get("HCQ2"): return lo
  size = getattr(dtypes, dtype).itemsize
  return next(s for s in range(lo, -1, -1) if s * row * size % 16 == 0)


def elementwise(a: Value) -> tuple[str, ...]:
  """The elementwise ops a feature may draw on `a`: not the float-constant ones on a float16 value, which clang 14
  rejects on the CPU and the emulated AMD GPU cannot compile (its float16 exp, v_exp_f16, under exp and sigmoid)."""
  return tuple(k for k in ELEMENTWISE if a.dtype != F16 or k not in HALF_CONSTANT_OPS)


def applicable(a: Value) -> list[str]:
  s, n = a.shape, len(a.shape)
  ok = set(UNARY) | {"add", "sub", "mul", "sum", "max", "flip", "where"}
  if len(RESHAPES[int(math.prod(s))]) > 1: ok.add("reshape")
  if n >= 2: ok |= {"permute", "matmul"}
  if 1 in s: ok.add("expand")
  if n < MAX_NDIM: ok.add("unsqueeze")
  if any(2 * d <= MAX_DIM for d in s): ok |= {"pad", "cat"}
  if any(d >= 2 for d in s): ok.add("shrink")
  if a.dtype == F16: ok -= HALF_CONSTANT_OPS
  return [k for k in KINDS if k in ok]


def draw_op(b: Builder, a: Value, kind: str) -> Value:
  """Choose the op's constants and second operands for `a`, and infer its shape and dtype."""
  draw, s, n = b.draw, a.shape, len(a.shape)
  if kind in ("relu", "neg", "exp", "sqrt", "sigmoid", "contiguous"): return b.emit(kind, (a.name,), s, a.dtype, [a])
  if kind == "scale": return b.emit(kind, (a.name, draw(st.sampled_from((0.5, 2.0, -1.0)))), s, a.dtype, [a])
  if kind == "cast": return b.emit(kind, (a.name, "half" if a.dtype == F32 else "float"), s, F16 if a.dtype == F32 else F32, [a])
  if kind in ("sum", "max"):
    axis = draw(st.integers(0, n - 1))
    keep = True if n == 1 else draw(st.booleans())
    out = s[:axis] + ((1,) if keep else ()) + s[axis + 1:]
    return b.emit(kind, (a.name, axis, keep), out, a.dtype, [a])
  if kind == "reshape":
    out = draw(st.sampled_from([t for t in RESHAPES[int(math.prod(s))] if t != s]))
    return b.emit(kind, (a.name, out), out, a.dtype, [a])
  if kind == "permute":
    perm = tuple(draw(st.permutations(range(n))))
    return b.emit(kind, (a.name, perm), tuple(s[i] for i in perm), a.dtype, [a])
  if kind == "expand":
    out = tuple(draw(st.sampled_from(LEAF_DIMS)) if d == 1 else d for d in s)
    return b.emit(kind, (a.name, out), out, a.dtype, [a])
  if kind == "unsqueeze":
    axis = draw(st.integers(0, n))
    return b.emit(kind, (a.name, axis), s[:axis] + (1,) + s[axis:], a.dtype, [a])
  if kind == "flip": return b.emit(kind, (a.name, draw(st.integers(0, n - 1))), s, a.dtype, [a])
  if kind == "pad":
    axis = draw(st.sampled_from([i for i, d in enumerate(s) if 2 * d <= MAX_DIM]))
    lo = draw(st.integers(0, s[axis]))
    pads = tuple((lo, s[axis] - lo) if i == axis else (0, 0) for i in range(n))
    return b.emit(kind, (a.name, pads), s[:axis] + (2 * s[axis],) + s[axis + 1:], a.dtype, [a])
  if kind == "shrink":
    axis = draw(st.sampled_from([i for i, d in enumerate(s) if d >= 2]))
    size = draw(st.sampled_from([d for d in VIEW_DIMS if d < s[axis]]))
    lo = aligned_start(draw(st.integers(0, s[axis] - size)), math.prod(s[axis + 1:]), a.dtype)
    return b.emit(kind, (a.name, axis, lo, lo + size), s[:axis] + (size,) + s[axis + 1:], a.dtype, [a])
  if kind in ("add", "sub", "mul"):
    # not `a - a`: tinygrad before 0.14 folds it to a constant, and a constant fed back as an input is refused
    other = b.operand([v for v in b.pool() if broadcast(s, v.shape) is not None and (kind != "sub" or v is not a)], s)
    return b.emit(kind, (a.name, other.name), broadcast(s, other.shape), promote(a.dtype, other.dtype), [a, other])
  if kind == "matmul":
    k = s[-1]
    other = b.operand([v for v in b.pool() if len(v.shape) == 2 and v.shape[0] == k], (k, draw(st.sampled_from(LEAF_DIMS))))
    return b.emit(kind, (a.name, other.name), s[:-1] + other.shape[1:], promote(a.dtype, other.dtype), [a, other])
  if kind == "cat":
    axis = draw(st.sampled_from([i for i, d in enumerate(s) if 2 * d <= MAX_DIM]))
    other = b.operand([v for v in b.pool() if v.shape == s and v.dtype == a.dtype], s, a.dtype)
    return b.emit(kind, (a.name, other.name, axis), s[:axis] + (2 * s[axis],) + s[axis + 1:], a.dtype, [a, other])
  if kind == "where":
    same = [v for v in b.pool() if v.shape == s]
    x, y = b.operand(same, s), b.operand(same, s)
    return b.emit(kind, (a.name, x.name, y.name), s, promote(x.dtype, y.dtype), [a, x, y])
  raise AssertionError(f"no rule for op kind {kind!r}")
