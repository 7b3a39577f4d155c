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

from fuzz.gen.program import Program
from fuzz.gen.render import bound_variable, indexed, input_data, observables, returned_reads, setup_lines, sharding, step_args
from oracle.runs import FRESH
from oracle.targets import Target


def fits(program: Program, target: Target, static: bool) -> bool:
  """Whether the short form says all the script must: TinyJit on a plain step (no method, no eval step, no plan
  checks)."""
  return target.kind == "tinyjit" and not static and not program.method and program.evaluate is None


def run_source(program: Program, target: Target, mode: str, calls: int) -> str:
  """`run(jit)`: the program's setup, then each call's inputs, the call, and every observable read after it."""
  lines = ["def run(jit):", *("  " + line for line in setup_lines(program)),
           f"  step, seen = ({tinyjit('step', target.prunes(program.prune))} if jit else step), []", f"  for k in range({calls}):",
           *reset_lines(program), *(f"    {line}" for line in input_lines(program, mode))]
  reads = "{" + ", ".join(f"{p!r}: {e}" for p, e in (returned_reads(program) | observables(program)).items()) + "}"
  lines += [f"    ret = step({', '.join(step_args(program))})", realize_line("ret", grouped(program)), read_line(reads), "  return seen"]
  return "\n".join(lines)


def input_lines(program: Program, mode: str) -> list[str]:
  """Call k's inputs, each realized before the next is made: a fresh tensor, or (same-buffer) call 0's tensor refilled
  in place; a fed-back input is the previous call's return from call 1 on; then the bound Variable."""
  fb = program.feedback
  lines = []
  for i, x in enumerate(program.inputs):
    new = f"Tensor({input_data(x)}){sharding(x)}"
    if fb is not None and fb.input == i:
      lines.append(f"{x.name} = ret{indexed(fb.path)} if k else {new}.realize()  # the previous call's return")
    elif mode == FRESH: lines.append(f"{x.name} = {new}.realize()")
    else: lines += [f"new = {new}", f"{x.name} = ({x.name}.assign(new) if k else new).realize()  # call 0's tensor, refilled in place"]
  return lines + ([f"{program.variable.name} = {bound_variable(program)}"] if program.variable is not None else [])


# the pieces of a call's lines both forms write (the full harness, `fuzz.gen.harness`, builds on them)

def tinyjit(fn: str, prune: bool) -> str: return f"TinyJit({fn}, prune=True)" if prune else f"TinyJit({fn})"


def reset_lines(program: Program) -> list[str]:
  if program.reset is None: return []
  return [f"    if jit and k == {program.reset}: step.reset()  # jit.reset(): this call runs eagerly, the next captures anew"]


def grouped(program: Program) -> bool: return not isinstance(program.returns, str)


def realize_line(value: str, several: bool = False) -> str:
  """The reference realizes what a call returned (`value`; `several`: a tuple or list of tensors) together, as TinyJit
  does."""
  realize = f"Tensor.realize(*get_parameters({value}))" if several else f"{value}.realize()"
  return f"    if not jit: {realize}  # TinyJit realizes what a call returns together"


def read_line(reads: str) -> str:
  """`seen` gets every observable `reads` names after a call, each read on its own, in the oracle's order."""
  return f"    seen.append({{p: t.numpy().copy() for p, t in {reads}.items() if isinstance(t, Tensor)}})" \
         "  # each read alone, in the oracle's order"
