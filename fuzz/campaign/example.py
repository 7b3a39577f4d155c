"""One example: a generated program run through a target next to the oracle's reference, as the campaign sees it.

The oracle judges (oracle/check.py); this adds what a campaign needs around it: the example's drawn knobs, the
emulator's speed-up, blame where a finding may be a known tinygrad bug, the known bugs set apart, and the plan rows and
graph batches its census counts (fuzz/campaign/outcome.py).
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import replace

from fuzz.campaign import emulator, references
from fuzz.campaign.engine_blame import blame_engine
from fuzz.campaign.outcome import Outcome, without_known
from fuzz.campaign.reference_server import reference_without_hcq2
from fuzz.gen.interpret import to_subject
from fuzz.gen.program import Program
from fuzz.known.bugs import maybe_known
from oracle.attribution import blame_static
from oracle.check import PlanSink, blame, judge_program
from oracle.compare import Verdict
from oracle.targets import Target
from planner import engines, tg


def under_knobs(target: Target, drawn: dict[str, int]) -> Target:
  """The target run with an example's drawn tinygrad knobs; knobs the target sets itself win."""
  return replace(target, knobs=tuple({**drawn, **target.context}.items()))


def run_example(program: Program, target: Target, calls: int, mode: str, attribute: bool = False, on_plan: PlanSink | None = None,
                strict: bool = False) -> Outcome:
  """The outcome of `target` running `program` for `calls` calls with inputs in `mode`, static invariants included.
  Findings are blamed on a stage when `attribute` is set, when the program is pruned (documented prune freezing is told
  apart only by the blame) or when one may be a known tinygrad bug; those that are known, or documented prune freezing,
  are set apart. `on_plan` is told the capture's plan; `strict` counts advisories as findings."""
  emulator.speed_up()
  try: return _outcome(program, target, calls, mode, attribute, on_plan, strict)
  finally:  # else they pile up and slow every later example of this process
    tg.forget_dead_tensors()
    tg.forget_uop_metadata()


def _outcome(program: Program, target: Target, calls: int, mode: str, attribute: bool, on_plan: PlanSink | None,
             strict: bool) -> Outcome:
  """The outcome, with its capture's plan rows for the census (the last capture's, when a program captures again)."""
  plans: list = []

  def sink(plan: Callable, live: frozenset) -> None:
    plans.append(plan)
    if on_plan is not None: on_plan(plan, live)
  outcome = _judged(program, target, calls, mode, attribute, sink, strict)
  return replace(outcome, plan=plans[-1]().placements()) if plans else outcome


def _judged(program: Program, target: Target, calls: int, mode: str, attribute: bool, on_plan: PlanSink, strict: bool) -> Outcome:
  factory = lambda: to_subject(program)
  settle = lambda v: v.strict() if strict else v
  if target.kind == "static":
    from oracle.static import check_static  # needs planfuzz's planner, so a supported tinygrad
    return without_known(settle(blame_static(check_static(factory, target, on_plan))), program)
  @functools.cache  # once per variant and patch
  def rerun(variant: Program, patch: Callable[[], contextlib.AbstractContextManager] | None = None) -> Outcome:
    with (patch or contextlib.nullcontext)(): return _outcome(variant, target, calls, mode, True, None, False)
  with engines.spied() as ran:
    ref = references.reference_of(program, mode, calls) or reference_without_hcq2(program, mode, calls)
    judged = judge_program(factory, target, calls, mode, ref=ref, on_plan=on_plan)
  references.keep(program, mode, calls, judged.ref)
  if attribute or program.prune or any(maybe_known(f, program) for f in judged.verdict.findings):
    verdict: Verdict = settle(blame(factory, target, calls, mode, judged))
    outcome = without_known(verdict, program, rerun)
    if attribute and outcome.findings: outcome = without_known(blame_engine(verdict, outcome.findings, program, target, calls, mode),
                                                               program, rerun)
    return replace(outcome, ran=recorded(ran))
  return replace(Outcome.of(settle(judged.verdict)), ran=recorded(ran))


def recorded(ran: dict[str, list]) -> dict[str, tuple]:
  """What each engine active in this process ran, as the census keeps it: an active engine that ran nothing stays
  (with no records), so its rows count over every example it could have run in."""
  return {name: tuple(records) for name, records in ran.items()}
