"""The fuzzer's program IR: plain frozen data, so a program can be printed, hashed, shrunk and rebuilt.

A program is one training-like step over explicit inputs (`x0`, ...), parameters (`p0`, ...) and state tensors
(`s0`, ...): a body of ops, 1..3 backward() calls, an optional in-place update, tensors kept alive outside the
step and a (possibly nested) return value. Optionally one input is the previous call's returned tensor from call 1
on (feedback), and a bound Variable `n`, different on every call, is one more positional argument. Nothing here
runs tinygrad: `fuzz.gen.interpret` builds a Subject from a program, `fuzz.gen.printer` writes it as a standalone
script, and both read op semantics from `fuzz.gen.ops`.
"""
from __future__ import annotations

from dataclasses import dataclass

from fuzz.gen.ops import OPS

Shape = tuple[int, ...]
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam"}


@dataclass(frozen=True)
class Leaf:
  """A tensor made from seeded numpy data: a parameter, an explicit input (new data each call) or a state tensor."""
  name: str
  shape: Shape
  dtype: str = "float32"
  seed: int = 0
  shard: tuple[int, int | None] | None = None  # (devices, axis): sharded over that many devices, split on axis (None: copied)


@dataclass(frozen=True)
class Op:
  """`out = kind(args)`: the first `fuzz.gen.ops.OPS[kind].arity` args name earlier values, the rest are constants."""
  kind: str
  args: tuple
  out: str


@dataclass(frozen=True)
class Backward:
  """`for p in clear: p.grad = None`, then `(value * scale).sum().backward()`, on `value.float()` when `upcast`: a
  float16 value's grads would be float constants cast to float16 vectors, which clang 14 rejects in tinygrad's CPU code."""
  value: str
  scale: float = 1.0
  clear: tuple[str, ...] = ()
  upcast: bool = False


@dataclass(frozen=True)
class StateUpdate:
  """`state.assign(state * 0.5 + source.detach())`, or `+ 1.0` without a source; realized inside the step."""
  state: str
  source: str | None = None
  cast: bool = False  # the source is float16: cast it to the state's float32 first


@dataclass(frozen=True)
class InputAssign:
  """`input.assign(source.detach())` on an explicit input at the end of the step, left lazy as tinygrad#16618's step
  leaves it; the input is observed after every call under its own name."""
  input: str
  source: str


@dataclass(frozen=True)
class Update:
  """An in-place parameter update after backward: a raw `p.assign(p - lr * p.grad)`, or an nn.optim step."""
  kind: str  # "assign", "sgd" or "adam"
  params: tuple[str, ...]
  lr: float = 0.01


@dataclass(frozen=True)
class Group:
  """A returned tuple or list of values and groups."""
  kind: str  # "tuple" | "list"
  items: tuple[Returned, ...]


Returned = str | Group
Path = tuple[int, ...]  # indices into a returned value: () is the value itself, (1, 0) is `ret[1][0]`


@dataclass(frozen=True)
class Feedback:
  """From call 1 on, explicit input number `input` is the previous call's returned tensor at `path`."""
  input: int
  path: Path


@dataclass(frozen=True)
class Bound:
  """`n = Variable("n", 1, 8).bind((k * stride + offset) % 8 + 1)` on call k, the step's last positional argument."""
  stride: int = 1
  offset: int = 0
  name: str = "n"
  max: int = 8


@dataclass(frozen=True)
class Program:
  params: tuple[Leaf, ...]
  inputs: tuple[Leaf, ...]
  state: tuple[Leaf, ...]
  body: tuple[Op, ...]
  backward: tuple[Backward, ...]
  returns: Returned
  kept: tuple[str, ...] = ()
  realize_grads: bool = False
  state_updates: tuple[StateUpdate, ...] = ()
  update: Update | None = None
  prune: bool = False
  feedback: Feedback | None = None
  variable: Bound | None = None
  realize_escapes: bool = False  # realize every grad, kept tensor and input assign in the step: known bugs' mechanism variant
  features: tuple[str, ...] = ()  # the compound draws (`fuzz.gen.features`) the generator made it with, for the census
  evaluate: str | None = None  # an eval step, jitted on its own, returns this value recomputed from the same arguments
  reset: int | None = None  # the call before which the step's JIT is reset (`jit.reset()`): it captures again after
  method: bool = False  # the step is jitted as a model's __call__, with the decorator form, and called on the model
  input_assign: InputAssign | None = None

  @property
  def uses_rand(self) -> bool: return any(op.kind == "rand" for op in self.body)

  def grads_at_end(self) -> tuple[str, ...]:
    """Parameters whose .grad is set when the step returns (the generator tracks the same while building)."""
    reach = dependencies(self)
    have: set[str] = set()
    for b in self.backward:
      have -= set(b.clear)
      have |= reach[b.value] & {p.name for p in self.params}
    return tuple(p.name for p in self.params if p.name in have)


def returned_names(r: Returned) -> list[str]:
  return [r] if isinstance(r, str) else [n for item in r.items for n in returned_names(item)]


def returned_paths(r: Returned, path: Path = ()) -> list[tuple[Path, str]]:
  """Every returned value name with the path that reaches it in the returned value."""
  if isinstance(r, str): return [(path, r)]
  return [p for i, item in enumerate(r.items) for p in returned_paths(item, path + (i,))]


def lazy_graph(ops: dict[str, Op], names: list[str], realized: set[str]) -> set[str]:
  """The op values reachable from `names` without passing a realized one: what a realize of them computes."""
  seen: set[str] = set()
  todo = [n for n in names if n in ops and n not in realized]
  while todo:
    n = todo.pop()
    if n in seen: continue
    seen.add(n)
    todo += [a for a in ops[n].args[:OPS[ops[n].kind].arity] if a in ops and a not in realized]
  return seen


def lazy_kinds(body: tuple[Op, ...] | list[Op], name: str) -> set[str]:
  """The op kinds a realize of `name` computes: its lazy graph back to realized buffers and leaves (what tinygrad
  schedules, so what its bugs in one kernel's lowering can see)."""
  ops = {op.out: op for op in body}
  return {ops[n].kind for n in lazy_graph(ops, [name], realized_values(body))}


def realized_values(body: tuple[Op, ...] | list[Op]) -> set[str]:
  """Values that are realized buffers by the end of the body: each realizing op's result, and every `contiguous`
  in the lazy graph it realizes (tinygrad rewrites every tensor holding such a CONTIGUOUS to the new buffer). A
  `realize` op is `a.contiguous().realize()`: an earlier `a.contiguous()` is the same UOp, so it is that buffer too (a
  later one is a new CONTIGUOUS)."""
  ops: dict[str, Op] = {}
  done: set[str] = set()
  for op in body:
    ops[op.out] = op
    if OPS[op.kind].cuts:
      args = list(op.args[:OPS[op.kind].arity])
      twins = {n for n, o in ops.items() if op.kind == "realize" and o.kind == "contiguous" and o.args[0] in args}
      done |= {n for n in lazy_graph(ops, args, done) if ops[n].kind == "contiguous"} | twins | {op.out}
  return done


def reaches(leaves: list[str], body: tuple[Op, ...] | list[Op]) -> dict[str, set[str]]:
  """Value name -> every leaf its lazy graph reaches after the body ran: what backward() from it gives a .grad,
  and whose buffers a lazy escape of it reads. A realized value reaches nothing."""
  reach: dict[str, set[str]] = {name: {name} for name in leaves}
  realized = realized_values(body)
  for op in body:
    reach[op.out] = set() if op.out in realized else set().union(*(reach[a] for a in op.args[:OPS[op.kind].arity]))
  return reach


def dependencies(program: Program) -> dict[str, set[str]]:
  return reaches([leaf.name for leaf in program.params + program.inputs + program.state], program.body)


def needed_ops(body: tuple[Op, ...], value: str) -> list[Op]:
  """The ops of `body` that computing `value` runs, in order: an eval step recomputes these alone."""
  need, ops = {value}, []
  for op in reversed(body):
    if op.out in need:
      ops.append(op)
      need |= set(op.args[:OPS[op.kind].arity])
  return ops[::-1]
