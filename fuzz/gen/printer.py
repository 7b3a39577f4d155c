"""Write a failing program as a standalone repro script: rebuild, run reference and JIT, compare, exit 1 on a mismatch.

For the `tinyjit` target the script needs only tinygrad and numpy (it is meant to be pasted into a tinygrad bug
report), so the few oracle rules it needs are inlined: snapshot after every call, realize the reference's returned
tensors together as TinyJit does, skip lazy escapes with fresh inputs, and compare with the capture call's value
what the JIT documents as frozen then (a pending assign made at capture; a returned view of a fresh input).
For the `planner` target it builds planfuzz's PlannedJit through the same `oracle.targets.Target` (its repr is a
constructor call), so every knob of the target (policy, planner, graph splitter, arena poisoning) carries over.
"""
from __future__ import annotations

import inspect
from dataclasses import replace

from fuzz.gen.compat import Sharded, param, second_device, training
from fuzz.gen.interpret import data
from fuzz.gen.program import OPTIMIZERS, Program
from fuzz.gen.render import build_lines, sharded
from oracle.findings import JIT_ERROR, VALUE_KINDS, Finding
from oracle.runs import REFERENCE_CONTEXT
from oracle.targets import Target
from planner import tg

HARNESS = '''
def paths(ret, path="ret"):
  if isinstance(ret, Tensor): yield path, ret
  elif isinstance(ret, (list, tuple)):
    for i, x in enumerate(ret): yield from paths(x, f"{path}[{i}]")


def tensor(kept, i, a):
  """Input i as a tensor: a new one each call (fresh), or the first call's refilled in place (same-buffer)."""
  fresh = a.to_tensor() if hasattr(a, "to_tensor") else Tensor(a)
  if MODE == "fresh" or i not in kept: kept[i] = fresh.realize()
  else: kept[i].assign(fresh).realize()
  return kept[i]


def capture_of(k):
  """The capture call whose replays call k belongs to: 1, or after the reset before call RESET, the call after it."""
  return RESET + 1 if RESET is not None and k >= RESET else 1


def phase(k):
  cap = capture_of(k)
  name = "eager" if k < cap else "capture" if k == cap else f"replay {k - cap}"
  return name + (" after reset" if cap > 1 else "")


def run(jit):
  """Call the step CALLS times; after each call snapshot every observable: (value, lazy, pending assign, input view)."""
  step, observe, inputs, evaluate = build()
  step = make_jit(step) if jit else step
  evaluate = make_jit(evaluate, False) if jit and evaluate else evaluate  # an eval step: a JIT of its own
  kept, calls, ret = {}, [], None
  for k in range(CALLS):
    if jit and k == RESET: step.reset()  # jit.reset(): the next call runs eagerly, the one after captures anew
    args = [tensor(kept, i, a) if isinstance(a, np.ndarray) or hasattr(a, "to_tensor") else a for i, a in enumerate(inputs(k, ret))]
    prev, ret = ret, step(*args)
    if not jit and (ts := get_parameters(ret)): Tensor.realize(*ts)  # TinyJit realizes the returned tensors together
    eargs = args
    if not jit and k > capture_of(k):  # documented: the JIT's returned objects are rewritten by each replay, fed-back ones too
      before, now = {id(t): p for p, t in paths(prev)}, dict(paths(ret))
      eargs = [now[before[id(a)]] if id(a) in before else a for a in args]
    ev = evaluate(*eargs) if evaluate else None
    if not jit and (ts := get_parameters(ev)): Tensor.realize(*ts)
    bases = {t.uop.base for t in args if isinstance(t, Tensor)}
    named = dict(paths(ret)) | dict(paths(ev, "eval")) | {p: t for p, t in observe().items() if t is not None}
    # what each observable is (lazy, a pending assign, an input's view) before any read: a read realizes it
    kinds = {p: (not t.uop.is_realized, not t.uop.is_realized and t.uop.op.name in ("AFTER", "ASSIGN"), t.uop.base in bases)
             for p, t in named.items()}
    calls.append({p: (t.numpy().copy(), *kinds[p]) for p, t in named.items()})
  return calls


def close(got, want):
  if want.dtype.kind != "f": return got == want
  rtol, atol = {8: (1e-9, 1e-12), 4: (1e-5, 1e-6)}.get(want.dtype.itemsize, (1e-2, 1e-3))
  return np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)


def main():
  with Context(**REFERENCE): ref = run(False)
  with Context(**KNOBS): got = run(True)
  bad = 0
  for k, (want, have) in enumerate(zip(ref, got)):
    for path, (value, *_) in want.items():
      if ONLY is not None and path not in ONLY: continue  # a pruned step: the others may be frozen by prune, as documented
      if path not in have:
        print(f"MISMATCH {path} at call {k}: not observable after the JIT call"); bad += 1; continue
      g, lazy, _, _ = have[path]
      cap = capture_of(k)
      if MODE == "fresh" and k >= cap and (lazy or got[cap][path][1]): continue  # lazy escapes: defined only when refilled
      _, _, pending, view = got[cap][path] if k > cap else (None, None, False, False)
      # a pending assign or (fresh inputs) an input view; a pending assign on an input refilled in place is not frozen
      frozen = (pending or view) if MODE == "fresh" else (pending and not view)
      expect = ref[cap][path][0] if frozen else value  # documented: frozen at capture
      ok = g.shape == expect.shape and close(g, expect).all()
      if not ok:
        err = "shape " + str(g.shape) if g.shape != expect.shape else f"max abs err {np.abs(g.astype(np.float64) - expect).max():.4g}"
        print(f"MISMATCH {path} at call {k} ({phase(k)}): {err}; jit {g.ravel()[:4]} ref {expect.ravel()[:4]}")
        bad += 1
  for f in static_findings():
    print(f"MISMATCH (static) {f.message}"); bad += 1
  print(f"{bad} mismatches" if bad else f"OK: the JIT agrees with the reference on every observable over {CALLS} calls")
  sys.exit(1 if bad else 0)


if __name__ == "__main__":
  main()
'''


def method_lines(decorate: list[str], prune: bool) -> list[str]:
  """`make_jit` for a step jitted as a model's `__call__` with the decorator form (`decorate` lines set `decorate`)."""
  return ["", "", f"def make_jit(step, prune={prune}):",
          '  """The step as a model\'s __call__, jitted with the decorator form, called on the model object."""',
          *(f"  {line}" for line in decorate), "", "  class Model:", "    @decorate",
          "    def __call__(self, *args): return step(*args)", "",
          '    def reset(self): vars(Model)["__call__"].reset()', "", "  return Model()"]


TINYJIT_DECORATOR = ["try: decorate = TinyJit(prune=prune)",
                     "except TypeError: decorate = lambda f: TinyJit(f, prune=prune)  # before 0.14"]


def jit_lines(target: Target, prune: bool, method: bool = False) -> list[str]:
  """TinyJit itself, or planfuzz's PlannedJit built by the very Target (policy, planner, graph splitter, poisoning);
  for a `method` program the JIT decorates a model's `__call__`."""
  if target.kind == "tinyjit":
    pruned = target.prunes(prune)
    made = method_lines(TINYJIT_DECORATOR, pruned) if method else [f"make_jit = lambda step, prune={pruned}: TinyJit(step, prune=prune)"]
    return [*made, "static_findings = lambda: []  # the plan checks need planfuzz: this script needs only tinygrad and numpy"]
  made = (method_lines(["decorate = lambda f: TARGET.wrap(f, prune)"], prune) if method
          else [f"make_jit = lambda step, prune={prune}: TARGET.wrap(step, prune)"])
  return ["from oracle.targets import Target  # planfuzz: PlannedJit with this policy and planner", "",
          f"TARGET = {target!r}", *made, "", "",
          "def static_findings():", '  """planfuzz\'s plan invariants on this capture (unsound before any value is wrong)."""',
          "  from oracle.check import judge_program", "  from oracle.subject import Subject",
          "  subject = lambda: (lambda step, observe, inputs, evaluate:",
          f"                     Subject(step, inputs, observe, {prune}, evaluate=evaluate, reset=RESET, method={method}))(*build())",
          "  return [f for f in judge_program(subject, TARGET, CALLS, MODE).verdict.findings if f.call is None]"]


def unpruned(program: Program, target: Target, finding: Finding | None) -> bool:
  """A pruned program whose finding was blamed on capture runs unpruned: the attribution saw the finding persist
  without prune, and the script's harness cannot model prune's documented freezing (it needs tinygrad's internals
  to know which calls were pruned), so with prune on a fixed tinygrad would still print mismatches."""
  return target.prunes(program.prune) and finding is not None and finding.attribution == "capture"


def only_compared(program: Program, target: Target, finding: Finding | None) -> set[str] | None:
  """For a step still pruned, only the finding's own observable: prune runs what does not depend on the inputs once
  (documented freezing), which the oracle tells apart by blame and the script cannot, so comparing the rest would
  print mismatches that a correct tinygrad shows too."""
  if not target.prunes(program.prune) or finding is None or finding.kind not in VALUE_KINDS or finding.kind == JIT_ERROR: return None
  return {finding.subject}


def to_script(program: Program, target: Target, mode: str, calls: int, finding: Finding | None = None) -> str:
  """A script that exits 1 when `target` differs from the reference on `program`, printing each mismatch."""
  if unpruned(program, target, finding): program, target = replace(program, prune=False), replace(target, prune=None)
  about = finding.message if finding is not None else "(no finding recorded)"
  env = {k: v for k, v in target.context.items() if k in tg.PROCESS_KNOBS} | tg.environment_knobs()
  knobs = {k: v for k, v in target.context.items() if k not in env}
  set_env = ["import os", f"os.environ.update({ {k: str(v) for k, v in env.items()} !r})  # read by tinygrad once per process"]
  head = ["#!/usr/bin/env python3", f'"""planfuzz repro: {target.describe()}, inputs {mode}, {calls} calls.', "",
          "Runs the step below with the JIT and memory planner off (the reference) and under the JIT, snapshots every",
          "observable after each call and compares. Exit status 1: the JIT differs (reproduced); 0: it agrees.",
          '"""', *(f"# finding: {line}" for line in about.splitlines()),
          *(set_env if env else []), "import sys", "", "import numpy as np", "from tinygrad import Context, Device, Tensor, TinyJit, nn",
          "from tinygrad.nn.state import get_parameters", *jit_lines(target, program.prune, program.method), "",
          f"MODE, CALLS, RESET = {mode!r}, {calls}, {program.reset!r}", f"REFERENCE, KNOBS = {REFERENCE_CONTEXT!r}, {knobs!r}",
          f"ONLY = {only_compared(program, target, finding)!r}  # the observables compared (None: all)", "", ""]
  return "\n".join(head) + helpers(program) + "\n".join(build_lines(program)) + "\n\n" + HARNESS


def helpers(program: Program) -> str:
  """`data`, and the version-portable helpers the program's lines call (tinygrad 0.12.0 on)."""
  used = [data] + ([param] if program.params else []) + ([training] if program.update and program.update.kind in OPTIMIZERS else [])
  used += [Sharded] if any(x.shard for x in program.inputs) else []
  used += [second_device] if any(op.kind == "to" for op in program.body) or sharded(program) else []
  return "".join(inspect.getsource(f) + "\n\n" for f in used)
