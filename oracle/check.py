"""The judge for one program and one target: reference run, target run, static invariants, attribution.

This is what the fuzzer, the tests and the CLI call: `check(program, target)` returns a Verdict whose
findings are plain data, each blamed on a stage.
"""
from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from oracle.attribution import attribute
from oracle.compare import Verdict, error_text, judge
from oracle.findings import Finding
from oracle.runs import SAME_BUFFER, OnCapture, Trace, reference, returned_paths, run
from oracle.subject import Program, Subject
from oracle.targets import Target

DEFAULT_CALLS = 5  # eager, capture, three replays


def live_paths(subject: Subject, ret: Any) -> dict[str, Any]:
  """Every tensor a user can still reach after a call, by the path the findings name it with."""
  return dict(returned_paths(ret)) | {p: t for p, t in subject.observe().items() if t is not None}


@functools.cache
def static_unavailable(why: str) -> None:
  """Said once per process: the static invariants need planfuzz's adapter, which this tinygrad does not support."""
  print(f"planfuzz: static plan invariants skipped: {why.splitlines()[0]}", file=sys.stderr)


@dataclass
class Hooks:
  """What the oracle does inside a target run: static checks right after capture, poisoning before each replay."""
  on_capture: OnCapture | None = None
  before_replay: Callable[[], None] | None = None


@contextlib.contextmanager
def target_hooks(target: Target, found: list[Finding], static: bool = True) -> Iterator[Hooks]:
  """Static invariants on the plan just made (into `found`) and, for tinygrad's own TinyJit, arena poisoning
  (PlannedJit poisons through its own before_run hook). Neither where this tinygrad is unsupported."""
  try:
    from oracle import invariants, poison
    from planner import tg
  except ImportError as e:  # an unsupported tinygrad: the dynamic comparison still runs
    static_unavailable(str(e))
    yield Hooks()
    return
  if target.kind == "planner":
    def planned(step: Any, subject: Subject, ret: Any) -> None:
      found.extend(invariants.check_lowered(step.lowered, live_paths(subject, ret)))
    yield Hooks(planned if static else None)
    return
  with tg.spy_tinyjit(poison.poison_planned_linear if target.poison else None) as records:
    def real(step: Any, subject: Subject, ret: Any) -> None:
      if records: found.extend(invariants.check_tinyjit_record(records[-1], live_paths(subject, ret)))
    def repoison() -> None:
      if records and records[-1].planned is not None: poison.poison_planned_linear(records[-1].planned)
    yield Hooks(real if static else None, repoison if target.poison else None)


@dataclass
class Judged:
  """A verdict with the two traces behind it, so attribution can be asked for later (it costs three more runs)."""
  verdict: Verdict
  ref: Trace
  got: Trace | None


def judge_program(program: Program, target: Target, calls: int = DEFAULT_CALLS, mode: str = SAME_BUFFER, static: bool = True,
                  ref: Trace | None = None) -> Judged:
  """Reference run (or `ref`, the same program's, to judge several targets against one), target run (with the
  static invariants at capture), and the judge's verdict, unattributed."""
  start = time.perf_counter()
  ref = reference(program, calls, mode) if ref is None else ref
  if ref.error is not None:  # invalid: no target run
    return Judged(Verdict(rejected=f"eager: {error_text(ref.error)}", run_seconds=time.perf_counter() - start), ref, None)
  found: list[Finding] = []
  with target_hooks(target, found, static) as hooks:
    got = run(program, target.wrap, calls, mode, target.context, on_capture=hooks.on_capture, before_replay=hooks.before_replay)
  seconds = time.perf_counter() - start
  verdict = judge(ref, got, mode)
  verdict.run_seconds = seconds
  if verdict.rejected is None: verdict.findings = found + verdict.findings
  return Judged(verdict, ref, got)


def blame(program: Program, target: Target, calls: int, mode: str, judged: Judged) -> Verdict:
  """The verdict with every finding blamed on a stage (see oracle/attribution.py)."""
  v = judged.verdict
  if v.rejected is not None or not v.findings or judged.got is None: return v
  return attribute(program, target, calls, mode, judged.ref, judged.got, v)


def check(program: Program, target: Target, calls: int = DEFAULT_CALLS, mode: str = SAME_BUFFER, static: bool = True) -> Verdict:
  """Judge `program` under `target`: every undocumented difference from the reference, and every unsound plan, blamed."""
  return blame(program, target, calls, mode, judge_program(program, target, calls, mode, static))
