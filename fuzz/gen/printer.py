"""Write a program as a standalone repro script: its build lines, its calls, and what planfuzz's oracle compared.

The script (in its short form, `fuzz.gen.inline`, or where the finding needs it the full harness, `fuzz.gen.harness`)
runs the step with the JIT and memory planner off (the reference) and under the JIT, reads every observable
after each call as the oracle does, and compares the values in its CHECKS: each with the reference's value after the
call the oracle chose (the capture's, for what the JIT documents as frozen then) at the oracle's tolerance
(`oracle.expected`), written in as data. It restates no rule of the judge, so the two cannot drift apart: the oracle is
the one judge, and a script carries its decision. For a value finding CHECKS is that one value; the judge recorded its
decision in the finding (`oracle.compare.COMPARED_WITH`), so a campaign's parent writes it without running the program
again; a finding without one (made elsewhere) has its program judged once more here (memoized).

A finding that is no value (an error the JIT raised, a crash, a hang) needs nothing compared: the calls show it. Nor
does a program with no finding recorded (pytest's in-flight file, written before the example runs, which must not run
it): its script runs the calls, so a crash shows. The planner target's script also runs planfuzz's own plan checks
(`static_findings`) where the finding is one or none is recorded. tests/test_repro_verdicts.py shows a script written
with every value the oracle compared reaches the oracle's verdict, in either form. A script holds only what its
program uses: no integer data where every leaf is a float, no helper's docstring. `jit_off_script` writes a
finding's repro with TinyJit off, which a campaign off the CPU runs to tell the device's bugs from the JIT's.

For the `tinyjit` target a script needs only tinygrad and numpy: it is meant to be pasted into a tinygrad bug report.
For the `planner` target it builds planfuzz's PlannedJit through the same `oracle.targets.Target` (its repr is a
constructor call), so every knob of the target (policy, planner, graph splitter, arena poisoning) carries over.
"""
from __future__ import annotations

import ast
import functools
import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from fuzz.gen import harness, inline
from fuzz.gen.compat import Sharded, param, second_device, training
from fuzz.gen.interpret import data, to_subject
from fuzz.gen.program import OPTIMIZERS, Program
from fuzz.gen.render import build_lines, uses_devices
from oracle.check import judge_program
from oracle.compare import COMPARED_WITH
from oracle.expected import Expected, expected
from oracle.findings import JIT_ERROR, VALUE_KINDS, Finding
from oracle.runs import REFERENCE_CONTEXT, Trace
from oracle.schedule import Schedule
from oracle.targets import Target
from planner import tg

PASTED = (data, param, training, Sharded, second_device)  # what a script may hold by source (tests/test_pasted.py)
SAME = '''
def same(g, w, rtol, atol):
  if g is None or g.shape != w.shape: return False
  return np.array_equal(g, w) if rtol == atol == 0 else np.allclose(g.astype(np.float64), w.astype(np.float64), rtol, atol, equal_nan=True)
'''


def to_script(program: Program, target: Target, mode: str, calls: int, finding: Finding | None = None) -> str:
  """A script that exits 1 while `target` still shows `finding` on `program`, printing it (see the module's doc)."""
  if finding is None: return compare_script(program, target, mode, calls, [], "(no finding recorded: nothing compared)", static=True)
  if not is_value(finding):
    return compare_script(program, target, mode, calls, [], finding.message, static=finding.call is None, raised=raised_type(finding))
  try: check = recorded(finding) or decision(program, target, mode, calls, finding.subject, finding.call)
  except Exception as e:  # the program no longer runs here: the script shows what it does alone
    return compare_script(program, target, mode, calls, [], f"{finding.message}\n(not compared: judging it again failed: {e!r})")
  return compare_script(program, target, mode, calls, [check], finding.message)


def jit_off_script(program: Program, target: Target, mode: str, calls: int, finding: Finding) -> str:
  """`finding`'s repro with TinyJit off (JIT=0: every call runs the step eagerly, memory-planned as eager runs are)
  and its value compared with the reference's after the same call, since nothing is documented to differ without a
  JIT. A difference that still shows there is the device's (or its emulator's), not the JIT's
  (fuzz/campaign/confirm.py `locate`)."""
  off = Target("tinyjit", knobs=(("JIT", 0),))
  if not is_value(finding): return compare_script(program, off, mode, calls, [], finding.message)
  check = recorded(finding) or decision(program, target, mode, calls, finding.subject, finding.call)
  return compare_script(program, off, mode, calls, [replace(check, source=check.call)], f"{finding.message}\n(with the JIT off)")


def raised_type(f: Finding) -> str | None:
  """The exception type a JIT error finding's step raised under the JIT (its `error` reads 'Type: message'), which its
  script catches by name and reports as the finding: any other exception propagates, so a tinygrad that lacks an API
  the script uses is told from one that shows the bug (fuzz/history/verdicts.py skips such a commit)."""
  if f.kind != JIT_ERROR or f.call is None or not isinstance(error := f.details.get("error"), str) or ":" not in error: return None
  return error.split(":", 1)[0].strip() or None


def is_value(f: Finding) -> bool:
  """A finding on one observable's value after one call: what a script compares."""
  return f.call is not None and f.kind in VALUE_KINDS and f.kind != JIT_ERROR


@functools.lru_cache(maxsize=4)
def traces(program: Program, target: Target, mode: str, calls: int) -> tuple[Trace, Trace]:
  """The reference and target traces of `program`, judged again here."""
  judged = judge_program(lambda: to_subject(program), target, calls, mode, static=False)
  if judged.got is None: raise ValueError(f"the program is rejected here: {judged.verdict.rejected}")
  return judged.ref, replace(judged.got, jit=None)  # the step would keep its tensors alive


def recorded(f: Finding) -> Expected | None:
  """The decision the judge recorded in the finding itself (`oracle.compare.COMPARED_WITH`): a campaign's parent writes
  a worker's finding without running its program again (it may be the one that crashes planfuzz)."""
  if (got := f.details.get(COMPARED_WITH)) is None: return None
  source, rtol, atol = got
  return Expected(f.subject, f.call, source, rtol, atol, f.phase)


def decision(program: Program, target: Target, mode: str, calls: int, path: str, call: int) -> Expected:
  """What the oracle compares `path` after `call` with (`oracle.expected`)."""
  return expected(*traces(program, target, mode, calls), path, call, mode)


def compare_script(program: Program, target: Target, mode: str, calls: int, checks: Sequence[Expected], about: str,
                   static: bool = False, raised: str | None = None) -> str:
  """A script that exits 1 when the JIT's value differs from the reference's for any of `checks`, each compared as the
  oracle decided, and (`static`, planner target only) when planfuzz's plan checks find the capture unsound. The short
  form (`fuzz.gen.inline`) where it says all the script must, else the full harness (`fuzz.gen.harness`)."""
  static = static and target.kind != "tinyjit"
  if target.kind == "static": target = replace(target, kind="planner")  # its plan checks on a run of the same planner
  short = inline.fits(program, target, static)
  parts = [head_lines(program, target, mode, calls, about), checks_lines(checks),
           *run_parts(program, target, mode, calls, static, short), [SAME.strip()], tail_lines(target, static, raised)]
  return "\n\n".join("\n".join(p).strip("\n") for p in parts if p) + "\n"


def run_parts(program: Program, target: Target, mode: str, calls: int, static: bool, short: bool) -> list[list[str]]:
  """The helpers the program calls and `run(jit)`: in the short form, or around `build()` with what the full harness
  adds (`make_jit` for a model's method, `static_findings` for the plan checks)."""
  if short: return [[helpers(program, short) + inline.run_source(program, target, mode, calls)]]
  return [[helpers(program, short) + "\n".join(build_lines(program))],
          harness.method_lines(target, program) if program.method else [],
          harness.static_lines(program, mode, calls) if static else [], [harness.run_source(program, target, mode, calls)]]


def head_lines(program: Program, target: Target, mode: str, calls: int, about: str) -> list[str]:
  """What the script is (target, input mode, each call's phase, the finding) and what it imports."""
  phases = ", ".join(f"{k} {Schedule(program.reset).phase(k)}" for k in range(calls))
  env = process_env(target)
  head = ["#!/usr/bin/env python3", f'"""planfuzz repro: {target.describe()}, inputs {mode}; calls {phases}.',
          "CHECKS: (observable, after call, reference's call, rtol, atol) as planfuzz's oracle compared them, the step run",
          'eagerly as the reference. Exit status 1: the JIT differs (reproduced); 0: it agrees."""',
          *(f"# finding: {line}" for line in about.splitlines())]
  if env: head += ["import os", f"os.environ.update({ {k: str(v) for k, v in env.items()} !r})  # read by tinygrad once per process"]
  head += ["import numpy as np", imports_line(program)]
  if inline.grouped(program): head.append("from tinygrad.nn.state import get_parameters")
  if target.kind != "tinyjit":
    head += ["", "from oracle.targets import Target  # planfuzz: PlannedJit with this policy and planner", "", f"TARGET = {target!r}"]
  return head


def imports_line(program: Program) -> str:
  """What the script imports from tinygrad: every name its program's lines and its pasted helpers use, and no other
  (`Device` where it names devices, `nn` for an optimizer). tests/test_pasted.py runs each helper with these alone."""
  names = ["Context", *(["Device"] if uses_devices(program) else []), "Tensor", "TinyJit", *(["nn"] if optimizer(program) else [])]
  return f"from tinygrad import {', '.join(names)}"


def tail_lines(target: Target, static: bool, raised: str | None = None) -> list[str]:
  """The reference run, the JIT's run under the target's knobs, and each check compared as the oracle decided. For a
  finding that is an error the JIT raised (`raised`: its type's name), the JIT's run catches that type alone and
  exits 1 saying so: an exception of another type propagates (exit status 1 too, but a bisect runs scripts under a
  wrapper that tells an uncaught exception apart: fuzz/history/verdicts.py)."""
  env = process_env(target)
  knobs = {k: v for k, v in target.context.items() if k not in env and k not in tg.ENVIRONMENT_KNOBS}
  jit_run = f"with {context(knobs)}: got = run(True)" if knobs else "got = run(True)"
  if raised is not None:
    jit_run = "\n".join([f"try: {jit_run}", f"except Exception as e:  # the finding: the JIT raised {raised}",
                         f"  if type(e).__name__ != {raised!r}: raise", '  print(f"MISMATCH the JIT raised {type(e).__name__}: {e}")',
                         "  raise SystemExit(1)"])
  return [f"with {context(REFERENCE_CONTEXT)}: want = run(False)  # the reference",
          jit_run,
          "bad = [(p, k, s) for p, k, s, rtol, atol in CHECKS if not same(got[k].get(p), want[s][p], rtol, atol)]",
          'for p, k, s in bad: print(f"MISMATCH {p} at call {k}: jit {np.ravel(got[k].get(p))[:4]}, '
          'reference after call {s} {want[s][p].ravel()[:4]}")',
          *(['for f in static_findings(): print(f"MISMATCH (static) {f.message}"); bad.append(f)'] if static else []),
          'print(f"{len(bad)} of {len(CHECKS)} values differ" if bad else f"OK: the JIT agrees on the {len(CHECKS)} value(s) compared")',
          "raise SystemExit(1 if bad else 0)"]


def context(knobs: dict) -> str: return f"Context({', '.join(f'{k}={v!r}' for k, v in knobs.items())})"


def process_env(target: Target) -> dict[str, object]:
  """The target's knobs tinygrad reads once per process, set in the environment before it is imported."""
  engine = {k: v for k, v in target.context.items() if k in tg.ENVIRONMENT_KNOBS}  # the engine a finding was seen on
  env = {k: v for k, v in target.context.items() if k in tg.PROCESS_KNOBS} | tg.environment_knobs() | engine
  return {k: v for k, v in env.items() if v or k not in tg.ENVIRONMENT_KNOBS}


def checks_lines(checks: Sequence[Expected]) -> list[str]:
  """`CHECKS`, one value a line with the phase of its call (and, where it is frozen, of its capture) said beside it."""
  rows = [(f"({c.path!r}, {c.call}, {c.source}, {c.rtol!r}, {c.atol!r})",
           f"  # {c.phase}" + (f", frozen at its capture (call {c.source})" if c.source != c.call else "")) for c in checks]
  if len(rows) <= 1: return [f"CHECKS = [{''.join(r[0] for r in rows)}]" + ("".join(r[1] for r in rows) or "  # nothing to compare")]
  return ["CHECKS = [", *(f"  {value},{said}" for value, said in rows), "]"]


def helpers(program: Program, short: bool) -> str:
  """`data`, and the version-portable helpers the program's lines call (tinygrad 0.12.0 on); the short form makes a
  sharded input where it takes it, with no `Sharded` to hand it over."""
  used = ([param] if program.params else []) + ([training] if optimizer(program) else [])
  used += [Sharded] if not short and any(x.shard for x in program.inputs) else []
  used += [second_device] if uses_devices(program) else []
  return "".join(src + "\n\n" for src in [data_source(program), *map(pasted, used)])


def data_source(program: Program) -> str:
  """`data`, without the branches for integers and bools where the program's leaves are all floats."""
  lines, dtypes = pasted(data).splitlines(), set(re.findall(r"data\(.*?'(\w+)'\)", "\n".join(build_lines(program))))
  if dtypes <= {"float16", "float32", "float64"}: lines = [line for line in lines if not line.lstrip().startswith("if dtype")]
  return "\n".join(lines)


def pasted(f: Callable | type) -> str:
  """`f`'s source without its docstring: a script needs what a helper does, not why planfuzz has it."""
  lines = inspect.getsource(f).splitlines()
  first = ast.parse("\n".join(lines)).body[0].body[0]
  if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
    del lines[first.lineno - 1:first.end_lineno]
  return "\n".join(lines)


def optimizer(program: Program) -> bool: return program.update is not None and program.update.kind in OPTIMIZERS
