"""A repro's full harness: `build()` returning the step, its observables and its per-call inputs, and a `run(jit)`
that calls it as the oracle does.

The full form serves what the short one (`fuzz.gen.inline`) does not say: the step as a model's method jitted with the
decorator form (`make_jit`), an eval step with a JIT of its own (fed the previous call's return where the JIT rewrites
it), planfuzz's PlannedJit built from the very Target, and its plan checks on the capture (`static_findings`). A call's
lines both forms write (the reset, the reference's realize, the reads) are the short form's.
"""
from __future__ import annotations

from fuzz.gen.inline import grouped, read_line, realize_line, reset_lines, tinyjit
from fuzz.gen.program import Program
from fuzz.gen.render import indexed, returned_reads
from oracle.runs import FRESH
from oracle.schedule import Schedule
from oracle.targets import Target

REFILL = '''
def tensor(kept, i, a):  # input i: the first call's tensor, refilled in place by every later call (same-buffer)
  if i in kept: return kept[i].assign({make}).realize()
  return kept.setdefault(i, {made}.realize())
'''
TINYJIT_DECORATOR = ["try: decorate = TinyJit(prune=prune)",
                     "except TypeError: decorate = lambda f: TinyJit(f, prune=prune)  # before 0.14"]


def jitted(target: Target, program: Program, fn: str, prune: bool, method: bool = False) -> str:
  """The expression that jits `fn`: TinyJit itself, planfuzz's PlannedJit built by the very Target, or for a `method`
  program `make_jit` (the JIT on a model's `__call__`)."""
  if method: return f"make_jit({fn})"
  if target.kind != "tinyjit": return f"TARGET.wrap({fn}, {prune})"
  return tinyjit(fn, target.prunes(prune))


def method_lines(target: Target, program: Program) -> list[str]:
  """`make_jit`: the step as a model's `__call__`, jitted with the decorator form (`@TinyJit def __call__(self, ...)`)."""
  prune = target.prunes(program.prune) if target.kind == "tinyjit" else program.prune
  decorate = TINYJIT_DECORATOR if target.kind == "tinyjit" else ["decorate = lambda f: TARGET.wrap(f, prune)"]
  return [f"def make_jit(step, prune={prune}):", '  """The step as a model\'s __call__, jitted with the decorator form."""',
          *(f"  {line}" for line in decorate), "", "  class Model:", "    @decorate",
          "    def __call__(self, *args): return step(*args)", "", '    def reset(self): vars(Model)["__call__"].reset()', "",
          "  return Model()"]


def static_lines(program: Program, mode: str, calls: int) -> list[str]:
  """`static_findings()`: planfuzz's plan invariants on the capture (the planner target)."""
  return ["def static_findings():", '  """planfuzz\'s plan invariants on this capture (unsound before any value is wrong)."""',
          "  from oracle.check import judge_program", "  from oracle.subject import Subject",
          "  subject = lambda: (lambda step, observe, inputs, evaluate:",
          f"    Subject(step, inputs, observe, {program.prune}, evaluate=evaluate, reset={program.reset},",
          f"            method={program.method}))(*build())",
          f"  return [f for f in judge_program(subject, TARGET, {calls}, {mode!r}).verdict.findings if f.call is None]"]


def run_source(program: Program, target: Target, mode: str, calls: int) -> str:
  """`run(jit)`: the calls the oracle made, under the JIT or eagerly as its reference runs them, every observable read
  after each call in the oracle's order (returned, eval, observed); with `tensor`, an input as the oracle refills it."""
  shard = any(x.shard for x in program.inputs)
  step = jitted(target, program, "step", program.prune, program.method)
  lines = ["def run(jit):", "  step, observe, inputs, evaluate = build()"]
  if program.evaluate is None: lines.append(f"  step = {step} if jit else step")
  else:
    evaluate = jitted(target, program, "evaluate", False)
    lines.append(f"  step, evaluate = ({step}, {evaluate}) if jit else (step, evaluate)  # the eval step: a JIT of its own")
  lines += ["  kept, seen, ret = {}, [], None", f"  for k in range({calls}):", *reset_lines(program)]
  make = "a.to_tensor() if isinstance(a, Sharded) else Tensor(a)" if shard else "Tensor(a)"
  arrays = "(np.ndarray, Sharded)" if shard else "np.ndarray"
  made = f"({make})" if shard else make
  tensor = f"{made}.realize()" if mode == FRESH else "tensor(kept, i, a)"
  lines += [f"    args = [{tensor} if isinstance(a, {arrays}) else a for i, a in enumerate(inputs(k, ret))]",
            "    ret = step(*args)", realize_line("ret", grouped(program))]
  named = returned_reads(program)
  if program.evaluate is not None:
    lines += eval_call(program, calls)
    named["eval"] = "ev"
  lines += [read_line("({" + ", ".join(f"{p!r}: {e}" for p, e in named.items()) + "} | observe())"), "  return seen"]
  refill = "" if mode == FRESH else REFILL.format(make=make, made=made).strip("\n") + "\n\n"
  return refill + "\n".join(lines)


def eval_call(program: Program, calls: int) -> list[str]:
  """The eval step's call, right after the step's. With an input fed back from the previous call, the reference passes
  it this call's return at every replay: the JIT returns its capture's tensors, rewritten by every call (documented)."""
  lines = ["    ev = evaluate(*args)"]
  if (fb := program.feedback) is not None:
    at, replays = indexed(fb.path), [k for k in range(calls) if Schedule(program.reset).replay(k) > 0]
    lines = [f"    fed = args[:{fb.input}] + [ret{at}] + args[{fb.input + 1}:]  # what the JIT's rewritten return holds at a replay",
             f"    ev = evaluate(*(fed if not jit and k in {set(replays)!r} else args))"]
  return lines + [realize_line("ev")]
