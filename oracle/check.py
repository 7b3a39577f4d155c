"""The judge for one program and one target: reference run, target run, static invariants, attribution.

`check(program, target)` is the whole judgement in one call, a Verdict whose findings are plain data, each blamed on a
stage. The fuzzer calls its two parts (fuzz/campaign/example.py): `judge_program`, with the reference run of the
previous target when it judged the same program, then `blame` only where a finding needs it.
"""
from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tinygrad import Tensor

from oracle.attribution import attribute
from oracle.compare import Verdict, judge, rejection
from oracle.findings import Finding
from oracle.runs import SAME_BUFFER, Hooks, Trace, reference, returned_paths, run
from oracle.subject import Subject, SubjectFactory
from oracle.targets import Target

DEFAULT_CALLS = 5  # eager, capture, three replays
# told the capture's plan (a thunk: rebuilding a TinyJit's costs, and only a finding's picture wants it) and the
# BUFFERs live tensors reach, so a plan picture shows the very capture a finding came from
PlanSink = Callable[[Callable[[], Any], frozenset], None]


def live_paths(subject: Subject, ret: Any) -> dict[str, Any]:
  """Every tensor a user can still reach after a call, by the path the findings name it with."""
  return dict(returned_paths(ret)) | {p: t for p, t in subject.observe().items() if t is not None}


def live_buffers(live: dict[str, Any]) -> frozenset:
  from planner import tg
  return frozenset(b for t in live.values() for b in tg.tensor_buffers(t))


@functools.cache
def static_unavailable(why: str) -> None:
  """Said once per process: the static invariants need planfuzz's adapter, which this tinygrad does not support."""
  print(f"planfuzz: static plan invariants skipped: {why.splitlines()[0]}", file=sys.stderr)


@contextlib.contextmanager
def target_hooks(target: Target, found: list[Finding], static: bool = True, on_plan: PlanSink | None = None) -> Iterator[Hooks]:
  """The invariants, into `found`: the capture's (plan, prune split, graph order) right after capture, and each
  replay's input copies right after it; and, for tinygrad's own TinyJit, arena poisoning before every run (PlannedJit
  poisons through its own before_run hook); the capture's plan to `on_plan`. None of it where this tinygrad's internals
  are unsupported."""
  try:
    from oracle import invariants, poison
    from planner import plan_from_linear, tg
    tg.require()
  except ImportError as e:  # an unsupported tinygrad: the dynamic comparison still runs
    static_unavailable(str(e))
    yield Hooks()
    return
  seen: set[tuple[str, str]] = set()  # an input-copy finding once per input, not once per replay

  def replay_copies(final: Any, inputs: tuple, copied: Any, replay: int) -> None:
    for f in invariants.written_inputs_copied(final, inputs, copied, replay):
      if (f.kind, f.subject) not in seen: seen.add((f.kind, f.subject)), found.append(f)

  if target.kind == "planner":
    def planned(step: Any, subject: Subject, ret: Any) -> None:
      live = live_paths(subject, ret)
      found.extend(invariants.check_lowered(step.lowered, live, step.pruned))
      if on_plan is not None: on_plan(lambda: step.lowered.plan, live_buffers(live))
    def replayed(step: Any, n: int, args: list) -> None: replay_copies(step.lowered.final, step.last_inputs, step.last_copied, n)
    yield Hooks(planned, None, replayed) if static else Hooks()
    return
  with tg.spy_tinyjit(poison.poison_planned_linear if target.poison else None) as records:
    def real(step: Any, subject: Subject, ret: Any) -> None:
      if not records: return
      rec, live = records[-1], live_paths(subject, ret)
      found.extend(invariants.check_tinyjit_record(rec, live))
      if on_plan is not None and rec.planned is not None:
        on_plan(lambda: plan_from_linear(rec.planned, rec.parametrized, rec.held), live_buffers(live))
    def repoison() -> None:
      if target.poison and records and records[-1].planned is not None: poison.poison_planned_linear(records[-1].planned)
      if records: records[-1].copies.clear()
    def replayed(step: Any, n: int, args: list) -> None:
      if records and records[-1].final is not None:
        inputs = tuple(tg.storage(t) for t in args if isinstance(t, Tensor))
        replay_copies(records[-1].final, inputs, set(records[-1].copies), n)
    yield Hooks(real if static else None, repoison, replayed if static else None)


@dataclass
class Judged:
  """A verdict with the two traces behind it, so attribution can be asked for later (it costs three more runs)."""
  verdict: Verdict
  ref: Trace
  got: Trace | None


def judge_program(program: SubjectFactory, target: Target, calls: int = DEFAULT_CALLS, mode: str = SAME_BUFFER, static: bool = True,
                  ref: Trace | None = None, on_plan: PlanSink | None = None) -> Judged:
  """Reference run (or `ref`, the same program's, to judge several targets against one), target run (with the
  static invariants at capture), and the judge's verdict, unattributed."""
  start = time.perf_counter()
  ref = reference(program, calls, mode) if ref is None else ref
  if ref.error is not None:  # invalid: no target run
    return Judged(Verdict(rejected=rejection(ref.error), run_seconds=time.perf_counter() - start), ref, None)
  found: list[Finding] = []
  with target_hooks(target, found, static, on_plan) as hooks:
    got = run(program, target.wrap, calls, mode, target.context, hooks)
  seconds = time.perf_counter() - start
  verdict = judge(ref, got, mode)
  verdict.run_seconds = seconds
  if verdict.rejected is None:  # the invariants' findings first: they name the cause, the values its effect
    dynamic, verdict.findings = verdict.findings, []
    verdict.take(found + dynamic)
  return Judged(verdict, ref, got)


def blame(program: SubjectFactory, target: Target, calls: int, mode: str, judged: Judged) -> Verdict:
  """The verdict with every finding blamed on a stage (see oracle/attribution.py)."""
  v = judged.verdict
  if v.rejected is not None or not v.findings or judged.got is None: return v
  return attribute(program, target, calls, mode, judged.ref, judged.got, v)


def check(program: SubjectFactory, target: Target, calls: int = DEFAULT_CALLS, mode: str = SAME_BUFFER, static: bool = True) -> Verdict:
  """Judge `program` under `target`: every undocumented difference from the reference, and every unsound plan, blamed."""
  return blame(program, target, calls, mode, judge_program(program, target, calls, mode, static))
