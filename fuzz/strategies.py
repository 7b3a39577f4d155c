"""Hypothesis strategies that build valid programs by construction: shapes and dtypes are inferred while drawing.

Every op is drawn for an operand it applies to, and a second operand it needs is either an earlier value of a
fitting shape, a new leaf made to fit or (sometimes) a fresh `Tensor.rand`; nothing is filtered. Shapes come from a
small palette (leaf dims 2, 4, 8; views and cats make 1 and 16; at most 3-D; float32 mostly, some float16), so
compiled kernels recur across examples and a program costs milliseconds once its kernels are cached. Each draw is a
small integer range or a short list, so Hypothesis shrinks a failure to a handful of ops.

Besides single ops, a few compound draws make what the planner's harder cases need: a trip to a second device
(`.to(SECOND)`, compute there, `.to(DEFAULT)`; its values there may be kept or returned), a 3x3 conv with a bias,
a chain of kernel-separated (`.contiguous()`) intermediates up to 256 elements (what the planner packs), an
intermediate realized inside the step (often with a lazy tensor over it kept outside), and a reduction over the
first `n` rows of a value, `n` a Variable bound anew on every call. A returned tensor may be fed back as the next
call's input.

Rules from the JIT's documented behaviour (shared/TINYGRAD_JIT_FACTS.md) that programs keep:
- grads are realized before any in-place parameter update (a lazy grad read after it is recomputed from the new
  value, tinygrad#17074), which `fuzz.render` does whenever a program has an update;
- with prune=True nothing is random, no Variable is bound and no optimizer steps: prune runs what does not depend on
  the explicit inputs once (documented freezing, which the oracle drops after attribution when the prune split is
  sound), and those would make nearly every pruned program a documented difference; state tensors and their updates
  are drawn, so a state read before an input-dependent update tests the split itself;
- `Tensor.rand` is realized where it is drawn, after `Tensor.manual_seed` at build time, so eager and the JIT draw
  the same stream and no lazy escape re-draws it;
- a symbolic (Variable-shaped) value is reduced to a fixed shape and realized at once: no symbolic view, pad or
  lazy graph with the capture-time bound value escapes the step (documented to freeze at capture);
- an intermediate is realized only when no `.contiguous()` of a leaf view lies in its lazy graph (whether such a
  contiguous gets a buffer, and so cuts backward(), depends on tinygrad's view folding), so `fuzz.program.reaches`
  knows exactly which parameters get a .grad;
- with feedback, grads are realized inside the step and no lazy escape or returned view reads the fed-back input:
  eager feeds a new tensor each call where the JIT feeds back the same one, so a frozen graph over the capture
  call's input is not the "same buffer refilled in place" that makes a lazy escape's value defined.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

from fuzz.program import (
  Backward,
  Bound,
  Feedback,
  Group,
  Leaf,
  Op,
  Program,
  Returned,
  Shape,
  StateUpdate,
  Update,
  lazy_graph,
  reaches,
  realized_values,
  returned_names,
  returned_paths,
)

LEAF_DIMS = (2, 4, 8)
VIEW_DIMS = (1, 2, 4, 8, 16)
MAX_DIM, MAX_NDIM, MAX_OPS = 16, 3, 8
F32, F16 = "float32", "float16"
DEFAULT, SECOND = "DEFAULT", "SECOND"  # device roles, rendered as names `fuzz.render` defines
MOVEMENT = ("contiguous", "reshape", "permute", "expand", "unsqueeze", "flip", "pad", "shrink")
UNARY = ("relu", "neg", "exp", "sqrt", "sigmoid", "scale", "cast", "contiguous")
ELEMENTWISE = ("relu", "neg", "exp", "sqrt", "sigmoid", "scale")
# simplest first: Hypothesis shrinks a sampled kind towards the front
KINDS = ("relu", "add", "mul", "sum", "matmul", "sub", "neg", "exp", "sqrt", "sigmoid", "scale", "cast", "contiguous", "max",
         "reshape", "permute", "expand", "unsqueeze", "flip", "pad", "shrink", "cat", "where")
COMPOUND = ("device", "realize", "chain", "conv", "symbolic", "state")  # draws of several ops, one feature each; one op in COMPOUND_ONE_IN
COMPOUND_ONE_IN = 4
BIG_SHAPES = ((8, 16), (4, 8, 8))  # over 64 float32 elements: planned buffers bigger than the arena's 256-byte block
CONVS = (((1, 2, 4, 4), 2), ((2, 3, 8, 8), 2))  # (NCHW input, output channels); the first reshapes a 32-element value
RESHAPES: dict[int, list[Shape]] = {}
for _n in range(1, MAX_NDIM + 1):
  for _s in itertools.product(VIEW_DIMS, repeat=_n): RESHAPES.setdefault(int(math.prod(_s)), []).append(_s)


@dataclass(frozen=True)
class Value:
  name: str
  shape: Shape
  dtype: str
  is_op: bool = True
  view: bool = True  # only movement ops of a leaf: realizing it may run no kernel
  device: str = DEFAULT


def broadcast(a: Shape, b: Shape) -> Shape | None:
  """numpy broadcasting of two shapes, or None when they do not broadcast."""
  n = max(len(a), len(b))
  a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
  if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)): return None
  return tuple(max(x, y) for x, y in zip(a, b, strict=True))


def promote(*dtypes: str) -> str: return F16 if all(d == F16 for d in dtypes) else F32


@dataclass
class Builder:
  """The values and leaves drawn so far for one program. `values` holds what later ops may use (palette shapes);
  the pool is its part on the default device: values on the second device are only kept or returned, never mixed."""
  draw: st.DrawFn
  pruned: bool
  params: list[Leaf] = field(default_factory=list)
  inputs: list[Leaf] = field(default_factory=list)
  state: list[Leaf] = field(default_factory=list)
  values: list[Value] = field(default_factory=list)
  body: list[Op] = field(default_factory=list)
  keep: list[str] = field(default_factory=list)  # kept outside the step whatever is drawn: lazies over realized or SECOND values
  symbolic: bool = False

  def leaf(self, role: str, shape: Shape, dtype: str | None = None, pool: bool = True) -> Value:
    """A new leaf; with pool=False (an NCHW input, a conv weight) no other op sees it."""
    if dtype is None: dtype = F16 if self.draw(st.integers(0, 7)) == 7 else F32
    group = {"p": self.params, "x": self.inputs, "s": self.state}[role]
    leaf = Leaf(f"{role}{len(group)}", shape, F32 if role == "s" else dtype, len(self.params) + len(self.inputs) + len(self.state) + 1)
    group.append(leaf)
    value = Value(leaf.name, shape, leaf.dtype, is_op=False)
    if pool: self.values.append(value)
    return value

  def new_leaf(self, shape: Shape, dtype: str | None = None) -> Value:
    """Mostly a parameter (so backward has something to fill), sometimes an input, rarely a state tensor."""
    roll = self.draw(st.integers(0, 9))
    role = "p" if roll < 6 else "x" if roll < 9 else "s"
    return self.leaf(role, shape, dtype)

  def pool(self) -> list[Value]: return [v for v in self.values if v.device == DEFAULT]

  def operand(self, fits: list[Value], shape: Shape, dtype: str | None = None) -> Value:
    """An earlier value that fits, or (always possible) a new leaf of `shape`, or sometimes a fresh rand."""
    if fits and not self.draw(st.booleans()): return self.draw(st.sampled_from(fits))
    if not self.pruned and dtype != F16 and self.draw(st.integers(0, 2)) == 2: return self.emit("rand", (shape,), shape, F32, [])
    return self.new_leaf(shape, dtype)

  def emit(self, kind: str, args: tuple, shape: Shape, dtype: str, srcs: list[Value], device: str | None = None) -> Value:
    view = kind in MOVEMENT and srcs[0].view
    value = Value(f"v{len(self.body)}", shape, dtype, view=view, device=device or (srcs[0].device if srcs else DEFAULT))
    self.body.append(Op(kind, args, value.name))
    self.values.append(value)
    return value

  def by_name(self) -> dict[str, Value]: return {v.name: v for v in self.values}

  def can_realize(self, a: Value) -> bool:
    """Realizing `a` cuts backward() exactly where `fuzz.program.realized_values` says: no `.contiguous()` of a leaf
    view is in its lazy graph (tinygrad may fold one into a view of the leaf, keeping its grad)."""
    ops, values = {op.out: op for op in self.body}, self.by_name()
    graph = lazy_graph(ops, [a.name], realized_values(self.body))
    return not any(ops[n].kind == "contiguous" and values[ops[n].args[0]].view for n in graph)

  def reach(self) -> dict[str, set[str]]:
    return reaches([leaf.name for leaf in self.params + self.inputs + self.state], self.body)


# ops that mix a float constant into a float16 value: clang 14 rejects tinygrad 0.14.0's CPU code for some of them
# ("invalid conversion between ext-vector type '__fp164' and 'float4'"), an eager compile error, so a rejection
HALF_CONSTANT_OPS = {"scale", "pad", "where", "sigmoid", "exp", "sqrt"}


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


def compound(b: Builder, a: Value) -> list[str]:
  """The compound draws that apply to `a`: rand and Variables are not drawn when pruned (prune freezes them)."""
  ok = {"chain", "device", "conv", "state"} | ({"realize"} if b.can_realize(a) else set()) | (set() if b.pruned else {"symbolic"})
  return [k for k in COMPOUND if k in ok]


def draw_kind(b: Builder, a: Value) -> str:
  """Mostly a single op, one in COMPOUND_ONE_IN a compound draw (the draw shrinks towards single ops)."""
  if b.draw(st.integers(1, COMPOUND_ONE_IN)) == COMPOUND_ONE_IN: return b.draw(st.sampled_from(compound(b, a)))
  return b.draw(st.sampled_from(applicable(a)))


def draw_op(b: Builder, a: Value, kind: str) -> Value:
  """Choose the op's constants and second operands for `a`, and infer its shape and dtype."""
  draw, s, n = b.draw, a.shape, len(a.shape)
  if kind in COMPOUND: return {"device": draw_device, "chain": draw_chain, "realize": draw_realize, "conv": draw_conv,
                               "symbolic": draw_symbolic, "state": draw_state_read}[kind](b, a)
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
    lo = draw(st.integers(0, s[axis] - size))
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


def draw_device(b: Builder, a: Value) -> Value:
  """`a.to(SECOND)`, one to three elementwise ops (or `.contiguous()`) there, and back with `.to(DEFAULT)`: copy
  kernels, and second-device buffers that are held whenever a value there is kept (sometimes the last one is) or
  returned. A view `a` often gets an op first, so the copy reads a planned buffer: the copy lane's hold is visible
  only between planned buffers."""
  if a.view and b.draw(st.booleans()): a = draw_op(b, a, b.draw(st.sampled_from(ELEMENTWISE)))
  v = b.emit("to", (a.name, SECOND), a.shape, a.dtype, [a], SECOND)
  for _ in range(b.draw(st.integers(1, 3))): v = draw_op(b, v, b.draw(st.sampled_from((*ELEMENTWISE, "contiguous"))))
  if b.draw(st.integers(0, 2)) == 2: b.keep.append(v.name)
  return b.emit("to", (v.name, DEFAULT), v.shape, v.dtype, [v], DEFAULT)


def draw_chain(b: Builder, a: Value) -> Value:
  """Two or three kernels, each writing its own buffer (`.contiguous()`) that the next reads in another order: the
  intermediates a planner packs, often over 64 elements (a small one may start from a new input of a big shape)."""
  if math.prod(a.shape) <= 64 and b.draw(st.booleans()): a = b.leaf("x", b.draw(st.sampled_from(BIG_SHAPES)), F32)
  for i in range(b.draw(st.integers(2, 3))):
    kinds = ELEMENTWISE if i == 0 else ("flip", *ELEMENTWISE) + (("permute",) if len(a.shape) >= 2 else ())
    a = draw_op(b, draw_op(b, a, b.draw(st.sampled_from(kinds))), "contiguous")
  return a


def draw_realize(b: Builder, a: Value) -> Value:
  """`a.contiguous().realize()` inside the step (backward() stops there), after an elementwise op when `a` is a view
  (which may realize to no kernel); often a lazy tensor over it is kept outside the step, a lazy escape that is not a
  .grad and reads a planned buffer."""
  if a.view: a = draw_op(b, a, b.draw(st.sampled_from(ELEMENTWISE)))
  r = b.emit("realize", (a.name,), a.shape, a.dtype, [a])
  if b.draw(st.booleans()): b.keep.append(draw_op(b, r, "scale").name)
  return r


def draw_conv(b: Builder, a: Value) -> Value:
  """nn.Conv2d(cin, 2, 3, padding=1) with parameter weight and bias on an NCHW value: `a` reshaped when it has 32
  float32 elements, else a new (2, 3, 8, 8) input; the result is reshaped to a palette shape."""
  (nchw, cout) = CONVS[0] if a.dtype == F32 and math.prod(a.shape) == 32 and b.draw(st.booleans()) else CONVS[1]
  x = a if nchw == CONVS[0][0] else b.leaf("x", nchw, F32, pool=False)
  w, bias = b.leaf("p", (cout, nchw[1], 3, 3), F32, pool=False), b.leaf("p", (cout,), F32, pool=False)
  out = b.draw(st.sampled_from(RESHAPES[nchw[0] * cout * nchw[2] * nchw[3]]))
  return b.emit("conv2d", (x.name, w.name, bias.name, nchw, out), out, F32, [x, w, bias])


def draw_state_read(b: Builder, a: Value) -> Value:
  """A state tensor of `a`'s shape read into a kernel of its own (`(s * c).contiguous().realize()`) and combined with
  `a`: a read of state before the step's state update, which may write it from the inputs (with prune=True, tinygrad's
  one-pass split runs such a read only once)."""
  scaled = draw_op(b, b.leaf("s", a.shape, F32), "scale")
  r = b.emit("realize", (scaled.name,), a.shape, F32, [scaled])
  return b.emit(b.draw(st.sampled_from(("add", "mul"))), (a.name, r.name), a.shape, promote(a.dtype, F32), [a, r])


def draw_symbolic(b: Builder, a: Value) -> Value:
  """`cache[:n].sum(0)` (or mean) realized, `n` the bound Variable: `a` when it has 8 rows, else a new (8, 4) input."""
  fits = len(a.shape) >= 2 and a.shape[0] == 8 and b.can_realize(a)
  cache = a if fits and b.draw(st.booleans()) else b.leaf("x", (8, 4))
  b.symbolic = True
  return b.emit("symbolic", (cache.name, b.draw(st.sampled_from(("sum", "mean"))), "n"), cache.shape[1:], cache.dtype, [cache])


shapes = st.lists(st.sampled_from(LEAF_DIMS), min_size=1, max_size=MAX_NDIM).map(tuple)


def draw_returned(draw: st.DrawFn, names: list[str]) -> Returned:
  """A single value, or a tuple or list of values and one level of nested groups."""
  pick = st.sampled_from(names)
  top = draw(st.integers(0, 2))
  if top == 0: return draw(pick)
  items: list[Returned] = []
  for _ in range(draw(st.integers(1, 3))):
    items.append(Group(draw(st.sampled_from(("tuple", "list"))), tuple(draw(st.lists(pick, min_size=1, max_size=2))))
                 if draw(st.integers(0, 3)) == 3 else draw(pick))
  return Group("tuple" if top == 1 else "list", tuple(items))


def draw_feedback(b: Builder, returns: Returned, reach: dict[str, set[str]]) -> Feedback | None:
  """Sometimes: an explicit input that, from call 1 on, is the previous call's returned tensor of its shape and dtype.
  The returned tensor must be a kernel's own output on the default device (not a view: inputs are real buffers), and no returned
  view may read the input it replaces."""
  values, paths = b.by_name(), returned_paths(returns)
  views = [n for _, n in paths if n in values and values[n].view]
  fits = [Feedback(i, path) for i, x in enumerate(b.inputs) for path, n in paths
          if n in values and (v := values[n]).is_op and v.device == DEFAULT and b.body[int(n[1:])].kind not in MOVEMENT
          and (v.shape, v.dtype) == (x.shape, x.dtype) and not any(x.name in reach[m] for m in views)]
  return b.draw(st.sampled_from(fits)) if fits and b.draw(st.integers(0, 3)) == 0 else None


@st.composite
def programs(draw: st.DrawFn) -> Program:
  prune = draw(st.integers(0, 4)) == 4
  b = Builder(draw, pruned=prune)
  b.leaf("x", draw(shapes))
  for _ in range(draw(st.integers(0, MAX_OPS))):
    a = draw(st.sampled_from(b.pool()[::-1]))  # newest first: shrinking keeps programs a chain
    draw_op(b, a, draw_kind(b, a))
  param_names = lambda v: b.reach()[v.name] & {p.name for p in b.params}
  if not any(v.is_op and param_names(v) for v in b.pool()):  # the loss needs a parameter: multiply one into the newest value
    last = b.pool()[-1]
    p = b.leaf("p", last.shape)
    b.emit("mul", (last.name, p.name), last.shape, promote(last.dtype, p.dtype), [last, p])
  losses = [v for v in b.pool()[::-1] if v.is_op and param_names(v)]
  backward, have = [], set()
  for i in range(draw(st.integers(1, 3))):
    clear = tuple(draw(st.lists(st.sampled_from(sorted(have)), unique=True, max_size=2))) if i and have else ()
    loss = draw(st.sampled_from(losses))
    backward.append(Backward(loss.name, draw(st.sampled_from((1.0, 0.5, 2.0))), clear, upcast=loss.dtype == F16))
    have = (have - set(clear)) | param_names(loss)
  ops = [v for v in b.values if v.is_op]
  state_updates = []
  for _ in range(draw(st.integers(0, 2))): b.leaf("s", draw(st.sampled_from(ops)).shape)
  for s in b.state:
    fits = [v for v in ops if v.device == DEFAULT and broadcast(s.shape, v.shape) == s.shape]
    src = draw(st.sampled_from(fits)) if fits and draw(st.booleans()) else None
    state_updates.append(StateUpdate(s.name, None if src is None else src.name, src is not None and src.dtype == F16))
  update = None
  grads = [p.name for p in b.params if p.name in have]
  kind = draw(st.sampled_from((None, "assign", "sgd", "adam"))) if not b.pruned and grads else None
  if kind is not None:
    dtypes_of = {p.name: p.dtype for p in b.params}
    eligible = grads if kind == "assign" else [g for g in grads if dtypes_of[g] == F32]
    if eligible: update = Update(kind, tuple(draw(st.lists(st.sampled_from(eligible), min_size=1, max_size=len(eligible), unique=True))))
  names = [v.name for v in ops]
  returns = draw_returned(draw, names + [f"{g}.grad" for g in grads])
  reach = b.reach()
  feedback = draw_feedback(b, returns, reach)
  fed = set() if feedback is None else {b.inputs[feedback.input].name}
  kept = tuple(dict.fromkeys(b.keep + draw(st.lists(st.sampled_from(names), max_size=2, unique=True))))
  kept = tuple(n for n in kept if not reach[n] & fed)
  realize_grads = feedback is not None or draw(st.booleans())
  views = {v.name for v in ops if v.view}
  if not (realize_grads or state_updates or update) and all(n in views for n in returned_names(returns)):
    realize_grads = True  # else the capture may schedule nothing, which TinyJit rejects ("didn't JIT anything")
  variable = Bound(draw(st.sampled_from((1, 3, 5))), draw(st.integers(0, 7))) if b.symbolic else None
  return Program(tuple(b.params), tuple(b.inputs), tuple(b.state), tuple(b.body), tuple(backward), returns, kept,
                 realize_grads, tuple(state_updates), update, prune, feedback, variable)


# tinygrad's knobs, drawn per example (the simplest first, so failures shrink towards the default): JIT=2 skips
# graph-split, the batch size bounds graph batches and GRAPH_ONE_KERNEL graphs lone kernels (graphs exist on GPUs and
# the NULL device; on CPU 0.14.0 has none), HCQ2 lowers the whole JIT to one 'hcq' call, NO_MEMORY_PLANNER=1 turns the
# planner off inside the JIT (one in four). HCQ2 and GRAPH_ONE_KERNEL are process-wide in tinygrad: `tg.knobs`
# switches them per run, where this tinygrad's internals are supported.
KNOBS = {"JIT": (1, 2), "JIT_BATCH_SIZE": (0, 2, 32), "NO_MEMORY_PLANNER": (0, 0, 0, 1)}
PROCESS_KNOBS = {"GRAPH_ONE_KERNEL": (0, 1)}


def knob_settings() -> st.SearchStrategy[dict[str, int]]:
  """One example's tinygrad knobs."""
  from planner import tg
  drawn = KNOBS | (PROCESS_KNOBS if not tg.MISSING else {})
  return st.fixed_dictionaries({k: st.sampled_from(v) for k, v in drawn.items()})
