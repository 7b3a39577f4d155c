"""What each op kind means, as the Python source it stands for: the core ops here, a feature's own ops in its module.

An op is rendered to one line of tinygrad code, and that line is the op's only definition: the interpreter
executes the rendered step and the repro printer writes the same text, so a repro script runs exactly the
program that failed. Shape and dtype inference live where each op is drawn (`fuzz.gen.single_ops` for the core ops,
the feature's draw for its own), next to the choice of each op's constants. The table is whole once the feature
registry (`fuzz.gen.features`) is imported: it adds every registered feature's ops (`register`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MOVEMENT = ("contiguous", "reshape", "permute", "expand", "unsqueeze", "flip", "pad", "shrink")  # ops whose result views their operand


@dataclass(frozen=True)
class OpSpec:
  arity: int  # how many leading args name values; the rest are constants
  render: Callable[[list[str], tuple], str]  # (value names, constants) -> a Python expression
  cuts: bool = False  # its result is realized inside the step: backward() stops there (no grads behind it)
  in_eval: bool = True  # an eval step may run it: no side effect (a write, a draw of the rand stream), on the default device
  variable: bool = False  # it reads the step's bound Variable, so a program with it takes one (`fuzz.gen.program.Bound`)


def unary(fmt: str, cuts: bool = False) -> OpSpec: return OpSpec(1, lambda v, c: fmt.format(*v, *c), cuts)
def binary(sym: str) -> OpSpec: return OpSpec(2, lambda v, c: f"{v[0]} {sym} {v[1]}")
def _slice(axis: int, lo: int, hi: int) -> str: return ", ".join([":"] * axis + [f"{lo}:{hi}"])


OPS: dict[str, OpSpec] = {
  "relu": unary("{0}.relu()"),
  "neg": unary("-{0}"),
  "exp": unary("{0}.clip(-2, 2).exp()"),  # clipped: chains of exp stay finite in float16
  "sqrt": unary("({0}.abs() + 1).sqrt()"),
  "sigmoid": unary("{0}.sigmoid()"),
  "scale": unary("{0} * {1}"),
  "cast": unary("{0}.{1}()"),  # half / float
  "contiguous": unary("{0}.contiguous()"),
  "sum": unary("{0}.sum(axis={1}, keepdim={2})"),
  "max": unary("{0}.max(axis={1}, keepdim={2})"),
  "reshape": unary("{0}.reshape({1})"),
  "permute": unary("{0}.permute({1})"),
  "expand": unary("{0}.expand({1})"),
  "unsqueeze": unary("{0}.unsqueeze({1})"),
  "flip": unary("{0}.flip({1})"),
  "pad": unary("{0}.pad({1})"),
  "shrink": OpSpec(1, lambda v, c: f"{v[0]}[{_slice(*c)}]"),
  "add": binary("+"),
  "sub": binary("-"),
  "mul": binary("*"),
  "matmul": binary("@"),
  "cat": OpSpec(2, lambda v, c: f"{v[0]}.cat({v[1]}, dim={c[0]})"),
  "where": OpSpec(3, lambda v, c: f"({v[0]} > 0).where({v[1]}, {v[2]})"),
  # realized where drawn: a lazy rand would be re-drawn whenever a lazy escape holding it is read
  "rand": OpSpec(0, lambda v, c: f"Tensor.rand({c[0]}).realize()", cuts=True, in_eval=False),
  "realize": unary("{0}.contiguous().realize()", cuts=True),  # contiguous first: realize() alone rewrites `{0}` itself
}


def register(ops: dict[str, OpSpec]) -> None:
  """Add a feature's own ops to the table. A kind names one op everywhere (a program stores only the kind), so a
  feature may not redefine a kind the table has."""
  if clash := sorted(ops.keys() & OPS.keys()): raise ValueError(f"op kinds defined twice: {', '.join(clash)}")
  OPS.update(ops)
