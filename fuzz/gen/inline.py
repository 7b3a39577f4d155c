"""A repro's `run(jit)` in its short form: the program's lines inline, each input made where the call takes it.

This is what a tinygrad maintainer reads in a bug report: the step, then a loop of calls, with no `build()`, no
`observe`/`inputs` lambdas and no refill helper between the reader and the program. It runs exactly what the full
harness (`fuzz.gen.harness`) runs, in the same order: the same setup lines (`fuzz.gen.render.setup_lines`), each input
made and realized in turn (refilled in place in same-buffer mode, the previous call's return where fed back), every
observable read after each call in the oracle's order. tests/test_repro_verdicts.py holds both forms to the oracle's
verdict. It serves TinyJit itself on a plain step; a model's method, an eval step or planfuzz's plan checks take the
full harness.
"""
from __future__ import annotations

from fuzz.gen.program import Program, returned_paths
from fuzz.gen.render import bound_variable, observables, setup_lines
from oracle.runs import FRESH
from oracle.targets import Target


def fits(program: Program, target: Target, static: bool) -> bool:
  """Whether the short form says all the script must: TinyJit on a plain step (no method, no eval step, no plan
  checks)."""
  return target.kind == "tinyjit" and not static and not program.method and program.evaluate is None


def run_source(program: Program, target: Target, mode: str, calls: int) -> str:
  """`run(jit)`: the program's setup, then each call's inputs, the call, and every observable read after it."""
  step = "TinyJit(step, prune=True)" if target.prunes(program.prune) else "TinyJit(step)"
  args = [x.name for x in program.inputs] + ([program.variable.name] if program.variable is not None else [])
  lines = ["def run(jit):", *("  " + line for line in setup_lines(program)),
           f"  step, seen = ({step} if jit else step), []", f"  for k in range({calls}):"]
  if program.reset is not None:
    lines.append(f"    if jit and k == {program.reset}: step.reset()  # jit.reset(): this call runs eagerly, the next captures anew")
  lines += [f"    {line}" for line in input_lines(program, mode)]
  lines += [f"    ret = step({', '.join(args)})",
            f"    if not jit: {realize_returned(program)}  # TinyJit realizes what a call returns together"]
  named = {p: p for p in ("ret" + "".join(f"[{i}]" for i in path) for path, _ in returned_paths(program.returns))}
  read = "{" + ", ".join(f"{p!r}: {e}" for p, e in (named | observables(program)).items()) + "}"
  return "\n".join([*lines, f"    seen.append({{p: t.numpy().copy() for p, t in {read}.items() if isinstance(t, Tensor)}})"
                                "  # each read alone, in the oracle's order", "  return seen"])


def input_lines(program: Program, mode: str) -> list[str]:
  """Call k's inputs, each realized before the next is made: a fresh tensor, or (same-buffer) call 0's tensor refilled
  in place; a fed-back input is the previous call's return from call 1 on; then the bound Variable."""
  fb = program.feedback
  lines = []
  for i, x in enumerate(program.inputs):
    shard = "" if x.shard is None else f".shard(shards({x.shard[0]}), axis={x.shard[1]})"
    new = f"Tensor(data(({x.seed}, k), {x.shape}, {x.dtype!r})){shard}"
    if fb is not None and fb.input == i:
      lines.append(f"{x.name} = ret{''.join(f'[{j}]' for j in fb.path)} if k else {new}.realize()  # the previous call's return")
    elif mode == FRESH: lines.append(f"{x.name} = {new}.realize()")
    else: lines += [f"new = {new}", f"{x.name} = ({x.name}.assign(new) if k else new).realize()  # call 0's tensor, refilled in place"]
  return lines + ([f"{program.variable.name} = {bound_variable(program)}"] if program.variable is not None else [])


def realize_returned(program: Program) -> str:
  return "ret.realize()" if isinstance(program.returns, str) else "Tensor.realize(*get_parameters(ret))"
