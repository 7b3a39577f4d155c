"""The generator's working state for one program: the values drawn so far, with the shape, dtype and device each has.

Shapes come from a small palette (leaf dims 2, 4, 8; views and cats make 1 and 16; at most 3-D; float32 mostly,
some float16), so compiled kernels recur across examples and a program costs milliseconds once its kernels are
cached. Features (`fuzz.gen.features`) add values outside the palette (other dtypes, big or single-element buffers,
sharded tensors); those stay out of the pool the single ops draw from, so every single op keeps its simple rules.
Shapes more than one feature draws (BIG_SHAPES) live here too, never in one feature for another to borrow.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

from fuzz.gen.ops import MOVEMENT
from fuzz.gen.program import Leaf, Op, Shape, lazy_graph, lazy_kinds, reaches, realized_values

LEAF_DIMS = (2, 4, 8)
VIEW_DIMS = (1, 2, 4, 8, 16)
MAX_DIM, MAX_NDIM, MAX_OPS = 16, 3, 8
F32, F16 = "float32", "float16"
DEFAULT, SECOND = "DEFAULT", "SECOND"  # device roles, rendered as names `fuzz.gen.render` defines
BIG_SHAPES = ((8, 16), (4, 8, 8))  # over 64 float32 elements: planned buffers bigger than the arena's 256-byte block
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
  pooled: bool = True  # single ops may draw it: palette shape, float dtype, default device


def broadcast(a: Shape, b: Shape) -> Shape | None:
  """numpy broadcasting of two shapes, or None when they do not broadcast."""
  n = max(len(a), len(b))
  a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
  if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)): return None
  return tuple(max(x, y) for x, y in zip(a, b, strict=True))


def promote(*dtypes: str) -> str: return F16 if all(d == F16 for d in dtypes) else F32


@dataclass
class Builder:
  """The values and leaves drawn so far for one program. `values` holds every value; the pool is the part single ops
  may use (palette shapes and float dtypes on the default device): other values are only kept, returned or cast back."""
  draw: st.DrawFn
  pruned: bool
  params: list[Leaf] = field(default_factory=list)
  inputs: list[Leaf] = field(default_factory=list)
  state: list[Leaf] = field(default_factory=list)
  values: list[Value] = field(default_factory=list)
  body: list[Op] = field(default_factory=list)
  keep: list[str] = field(default_factory=list)  # kept outside the step whatever is drawn: lazies over realized or off-pool values
  features: list[str] = field(default_factory=list)  # compound draws made, by feature name
  losses: list[str] = field(default_factory=list)  # outputs the first backward() starts from, so a feature's kernels get captured

  def leaf(self, role: str, shape: Shape, dtype: str | None = None, pool: bool = True, shard: tuple | None = None,
           device: str = DEFAULT) -> Value:
    """A new leaf; with pool=False (an NCHW input, a conv weight, a big or integer input) no single op sees it;
    `shard` (devices, axis) makes a sharded one, whose device role is `device`."""
    if dtype is None: dtype = F16 if self.draw(st.integers(0, 7)) == 7 else F32
    group = {"p": self.params, "x": self.inputs, "s": self.state}[role]
    seed = len(self.params) + len(self.inputs) + len(self.state) + 1
    leaf = Leaf(f"{role}{len(group)}", shape, F32 if role == "s" else dtype, seed, shard)
    group.append(leaf)
    value = Value(leaf.name, shape, leaf.dtype, is_op=False, device=device, pooled=pool)
    self.values.append(value)
    return value

  def new_leaf(self, shape: Shape, dtype: str | None = None) -> Value:
    """Mostly a parameter (so backward has something to fill), sometimes an input, rarely a state tensor."""
    roll = self.draw(st.integers(0, 9))
    role = "p" if roll < 6 else "x" if roll < 9 else "s"
    return self.leaf(role, shape, dtype)

  def pool(self) -> list[Value]: return [v for v in self.values if v.pooled]

  def operand(self, fits: list[Value], shape: Shape, dtype: str | None = None) -> Value:
    """An earlier value that fits, or (always possible) a new leaf of `shape`, or sometimes a fresh rand."""
    if fits and not self.draw(st.booleans()): return self.draw(st.sampled_from(fits))
    if not self.pruned and dtype != F16 and self.draw(st.integers(0, 2)) == 2: return self.emit("rand", (shape,), shape, F32, [])
    return self.new_leaf(shape, dtype)

  def emit(self, kind: str, args: tuple, shape: Shape, dtype: str, srcs: list[Value], device: str | None = None,
           pooled: bool | None = None) -> Value:
    """Append `kind(args)`; its value is pooled when its first operand is (or as `pooled` says)."""
    view = kind in MOVEMENT and srcs[0].view
    pooled = (srcs[0].pooled if srcs else True) if pooled is None else pooled
    value = Value(f"v{len(self.body)}", shape, dtype, view=view, device=device or (srcs[0].device if srcs else DEFAULT), pooled=pooled)
    self.body.append(Op(kind, args, value.name))
    self.values.append(value)
    return value

  def by_name(self) -> dict[str, Value]: return {v.name: v for v in self.values}

  def can_realize(self, a: Value) -> bool:
    """Realizing `a` cuts backward() exactly where `fuzz.gen.program.realized_values` says: no `.contiguous()` of a leaf
    view is in its lazy graph (tinygrad may fold one into a view of the leaf, keeping its grad)."""
    ops, values = {op.out: op for op in self.body}, self.by_name()
    graph = lazy_graph(ops, [a.name], realized_values(self.body))
    return not any(ops[n].kind == "contiguous" and values[ops[n].args[0]].view for n in graph)

  def lazy_kinds(self, a: Value) -> set[str]: return lazy_kinds(self.body, a.name)

  def as_loss(self, v: Value) -> Value:
    """`v` made a start of the first backward(), so a feature's kernels are captured rather than left dead code:
    times a new parameter of its shape when no parameter reaches it (a loss needs one)."""
    if not self.reach()[v.name] & {p.name for p in self.params}:
      p = self.leaf("p", v.shape, F32, pool=False)
      v = self.emit("mul", (v.name, p.name), v.shape, promote(v.dtype, F32), [v, p])
    self.losses.append(v.name)
    return v

  def reach(self) -> dict[str, set[str]]:
    return reaches([leaf.name for leaf in self.params + self.inputs + self.state], self.body)
