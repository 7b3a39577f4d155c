"""What each op kind means, as the Python source it stands for.

An op is rendered to one line of tinygrad code, and that line is the op's only definition: the interpreter
executes the rendered step and the repro printer writes the same text, so a repro script runs exactly the
program that failed. Shape and dtype inference live in the generator (`fuzz.gen.strategies`), next to the choice
of each op's constants.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class OpSpec:
  arity: int  # how many leading args name values; the rest are constants
  render: Callable[[list[str], tuple], str]  # (value names, constants) -> a Python expression
  cuts: bool = False  # its result is realized inside the step: backward() stops there (no grads behind it)


def _slice(axis: int, lo: int, hi: int) -> str: return ", ".join([":"] * axis + [f"{lo}:{hi}"])


def _unary(fmt: str, cuts: bool = False) -> OpSpec: return OpSpec(1, lambda v, c: fmt.format(*v, *c), cuts)
def _binary(sym: str) -> OpSpec: return OpSpec(2, lambda v, c: f"{v[0]} {sym} {v[1]}")


OPS: dict[str, OpSpec] = {
  "relu": _unary("{0}.relu()"),
  "neg": _unary("-{0}"),
  "exp": _unary("{0}.clip(-2, 2).exp()"),  # clipped: chains of exp stay finite in float16
  "sqrt": _unary("({0}.abs() + 1).sqrt()"),
  "sigmoid": _unary("{0}.sigmoid()"),
  "scale": _unary("{0} * {1}"),
  "cast": _unary("{0}.{1}()"),  # half / float
  "contiguous": _unary("{0}.contiguous()"),
  "sum": _unary("{0}.sum(axis={1}, keepdim={2})"),
  "max": _unary("{0}.max(axis={1}, keepdim={2})"),
  "reshape": _unary("{0}.reshape({1})"),
  "permute": _unary("{0}.permute({1})"),
  "expand": _unary("{0}.expand({1})"),
  "unsqueeze": _unary("{0}.unsqueeze({1})"),
  "flip": _unary("{0}.flip({1})"),
  "pad": _unary("{0}.pad({1})"),
  "shrink": OpSpec(1, lambda v, c: f"{v[0]}[{_slice(*c)}]"),
  "add": _binary("+"),
  "sub": _binary("-"),
  "mul": _binary("*"),
  "matmul": _binary("@"),
  "cat": OpSpec(2, lambda v, c: f"{v[0]}.cat({v[1]}, dim={c[0]})"),
  "where": OpSpec(3, lambda v, c: f"({v[0]} > 0).where({v[1]}, {v[2]})"),
  "to": _unary("{0}.to({1})"),  # a copy to the second device (SECOND) or back (DEFAULT): names the program defines
  "cast_to": _unary("{0}.cast({1!r})"),  # to any dtype by name: float64, bfloat16, and back to float32 from any
  # into an integer dtype: clipped first, so no float out of the integer's range is converted (undefined in C)
  "quantize": OpSpec(1, lambda v, c: f"({v[0]}.abs().clip(0, 63) * 4).cast('uint8')" if c[0] == "uint8"
                     else f"({v[0]}.clip(-64, 64) * 4).cast({c[0]!r})"),
  "mask": _unary("({0} > 0)"),  # a bool mask
  "and": _binary("&"),
  "or": _binary("|"),
  "select": OpSpec(3, lambda v, c: f"{v[0]}.where({v[1]}, {v[2]})"),  # a bool mask picks between two values
  "total": _unary("{0}.sum().reshape(1)"),  # one element
  "shard": _unary("{0}.shard(shards({1}), axis={2})"),  # over n devices of the default device's kind (`fuzz.gen.render`)
  # a sharded value back on one device, its grad made contiguous before it goes to the shards (tinygrad 0.14.0 cannot
  # copy an expanded grad, or one copied from another device, into a multi-device tensor: fuzz.known.bugs.AVOIDED_BUGS)
  "unshard": _unary("{0}.to({1}).contiguous_backward()"),
  # an nn.Conv2d(cin, cout, 3, padding=1) on `x` seen as NCHW, flattened back to a palette shape
  "conv2d": OpSpec(3, lambda v, c: f"{v[0]}.reshape({c[0]}).conv2d({v[1]}, {v[2]}, padding=1).reshape({c[1]})"),
  # realized where drawn: a lazy rand would be re-drawn whenever a lazy escape holding it is read
  "rand": OpSpec(0, lambda v, c: f"Tensor.rand({c[0]}).realize()", cuts=True),
  "realize": _unary("{0}.contiguous().realize()", cuts=True),  # contiguous first: realize() alone rewrites `{0}` itself
  # a reduction over the first n rows, n a bound Variable (a step argument): realized, left lazy (it may escape), or
  # through a Variable-shaped buffer of its own (sized at the Variable's maximum)
  "symbolic": _unary("{0}[:{2}].{1}(0).contiguous().realize()", cuts=True),
  "symbolic_lazy": _unary("{0}[:{2}].{1}(0)"),
  "symbolic_buffer": _unary("({0}[:{2}] * 2).contiguous().{1}(0)"),
  # a KV-cache write: row `{1}` into row n-1 of the state `{0}`, realized (backward never passes an assign)
  "kv_write": OpSpec(2, lambda v, c: f"{v[0]}[{c[0]} - 1:{c[0]}].assign({v[1]}.detach().float().reshape(1, -1)).realize()", cuts=True),
  "kv_read": _unary("{0}[:{1}].sum(0)"),
}


def render(kind: str, args: tuple) -> str:
  spec = OPS[kind]
  return spec.render(list(args[:spec.arity]), tuple(args[spec.arity:]))
