"""Run one program through a target next to the oracle's reference, and keep the numbers a fuzz session reports.

The summary is printed at the end of every pytest session, so a run that found nothing still shows how much it
ran, what it rejected and why, and how long an example took.
"""
from __future__ import annotations

import functools
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from fuzz.campaign import emulator
from fuzz.campaign.bugbook import Bug, BugBook, Sample
from fuzz.campaign.census import Census
from fuzz.gen.interpret import to_subject
from fuzz.gen.program import Program
from fuzz.known.bugs import known_bug, maybe_known
from oracle.attribution import blame_static
from oracle.check import PlanSink, blame, judge_program
from oracle.compare import Verdict
from oracle.targets import Target
from planner import tg

KNOWN = "known tinygrad bug"
_REFERENCES: dict = {}  # the last program's reference run: targets checked one after another on one program share it


def under_knobs(target: Target, drawn: dict[str, int]) -> Target:
  """The target run with an example's drawn tinygrad knobs; knobs the target sets itself win."""
  return replace(target, knobs=tuple({**drawn, **target.context}.items()))


def check(program: Program, target: Target, mode: str, calls: int, attribute: bool = False, on_plan: PlanSink | None = None,
          strict: bool = False) -> Verdict:
  """The oracle's verdict on `target` running `program` for `calls` calls with inputs in `mode`, static invariants
  included. Findings are blamed on a stage when `attribute` is set, when the program is pruned (documented prune
  freezing is told apart only by the blame) or when one may be a known tinygrad bug; those that are known, or
  documented prune freezing, move to the verdict's skipped counts. `on_plan` is told the capture's plan; `strict`
  counts advisories as findings."""
  emulator.speed_up()
  try: verdict = _check(program, target, mode, calls, attribute, on_plan)
  finally:  # else they pile up and slow every later example of this process
    tg.forget_dead_tensors()
    tg.forget_uop_metadata()
  return verdict.strict() if strict else verdict


def _check(program: Program, target: Target, mode: str, calls: int, attribute: bool, on_plan: PlanSink | None) -> Verdict:
  """The verdict, with its capture's plan rows for the census (the last capture's, when a program captures again)."""
  plans: list = []

  def sink(plan: Callable, live: frozenset) -> None:
    plans.append(plan)
    if on_plan is not None: on_plan(plan, live)
  verdict = _judge(program, target, mode, calls, attribute, sink)
  if plans: verdict.plan = plans[-1]().rows()
  return verdict


def _judge(program: Program, target: Target, mode: str, calls: int, attribute: bool, on_plan: PlanSink) -> Verdict:
  factory = lambda: to_subject(program)
  if target.kind == "static":
    from oracle.static import check_static  # needs planfuzz's planner, so a supported tinygrad
    return without_known(blame_static(check_static(factory, target, on_plan)), program)
  rerun = functools.cache(lambda variant: _check(variant, target, mode, calls, True, None))  # once per variant, not per finding
  with tg.spy_graphs() as graphs:
    judged = judge_program(factory, target, calls, mode, ref=_REFERENCES.get((program, mode, calls)), on_plan=on_plan)
  judged.verdict.graphs = tuple(graphs)
  _REFERENCES.clear()
  _REFERENCES[(program, mode, calls)] = replace(judged.ref, jit=None)  # its step would keep the tensors alive
  if not (attribute or program.prune or any(maybe_known(f, program) for f in judged.verdict.findings)): return judged.verdict
  return without_known(blame(factory, target, calls, mode, judged), program, rerun)


def without_known(verdict: Verdict, program: Program, rerun: Callable[[Program], Verdict] | None = None) -> Verdict:
  """The verdict with findings of known tinygrad bugs moved to its skipped counts (and its `known` list); `rerun` judges
  a variant of the program, for a known bug told by its mechanism."""
  unknown = []
  for f in verdict.findings:
    if (bug := known_bug(f, program, rerun)) is None: unknown.append(f)
    else:
      verdict.skipped[f"{KNOWN} {bug.name}"] += 1
      verdict.known.append((bug.name, f))
  verdict.findings = unknown
  return verdict


def reason_class(rejected: str) -> str:
  """A rejection reason without its numbers and shapes, so equal causes count together."""
  return re.sub(r"\d+", "N", rejected.splitlines()[0])[:120]


@dataclass
class Stats:
  examples: int = 0
  compared: int = 0
  rejected: Counter = field(default_factory=Counter)
  findings: Counter = field(default_factory=Counter)
  skipped: Counter = field(default_factory=Counter)
  seconds: list[float] = field(default_factory=list)
  run_seconds: float = 0.0  # of those, spent running the programs themselves (reference and target)
  repros: list[str] = field(default_factory=list)
  first_finding: int | None = None  # the example (1-based) that first found something: how big a budget it took
  span: tuple[float, float] | None = None  # epoch seconds from the first example's start to the last one's end
  workers: int = 1  # processes whose examples these are
  advisories: Counter = field(default_factory=Counter)
  bugs: BugBook = field(default_factory=BugBook)
  census: Census = field(default_factory=Census)
  rejected_examples: dict[str, str] = field(default_factory=dict)  # reason -> a script of its first program (planfuzz run)

  def record(self, verdict: Verdict, seconds: float, sample: Sample | None = None, program: Program | None = None) -> Bug | None:
    """Count one example (and, given its program, take its census); the new Bug when its findings have a signature not
    seen before."""
    self.examples += 1
    if program is not None and verdict.rejected is None: self.census.record(program, verdict.plan, verdict.graphs)
    self.compared += verdict.compared
    self.seconds.append(seconds)
    self.run_seconds += verdict.run_seconds
    self.skipped.update(verdict.skipped)
    if verdict.rejected is not None: self.rejected[reason_class(verdict.rejected)] += 1
    self.findings.update(f.kind for f in verdict.findings)
    if verdict.findings and self.first_finding is None: self.first_finding = self.examples
    self.advisories.update(f.kind for f in verdict.advisories)
    now = time.time()
    self.span = (min(self.span[0], now - seconds) if self.span else now - seconds, now)
    return self.bugs.record(verdict, self.examples, now - self.span[0], sample)

  def to_plain(self) -> dict:
    """Plain data (dicts, lists, numbers), which pytest-xdist carries from a worker to the controller."""
    plain = {k: dict(v) if isinstance(v, Counter) else v for k, v in vars(self).items()}
    return plain | {"bugs": self.bugs.to_plain(), "census": self.census.to_plain()}

  def merge(self, plain: dict) -> None:
    """Add a worker's stats (`to_plain`) to these, as examples of one campaign run side by side."""
    other = Stats(**{k: Counter(v) if isinstance(getattr(self, k), Counter) else v for k, v in plain.items()
                     if k not in ("bugs", "census")})
    if not other.examples: return
    self.bugs.merge(plain["bugs"], offset=self.examples)
    self.census.merge(plain["census"])
    if other.first_finding is not None and self.first_finding is None: self.first_finding = self.examples + other.first_finding
    self.workers = self.workers + other.workers if self.examples else other.workers
    for name in ("examples", "compared", "rejected", "findings", "skipped", "seconds", "run_seconds", "repros", "advisories"):
      setattr(self, name, getattr(self, name) + getattr(other, name))
    spans = [s for s in (self.span, other.span) if s]
    self.span = (min(s[0] for s in spans), max(s[1] for s in spans))

  def _rejected_example(self, why: str) -> str:
    return f" (first: {self.rejected_examples[why]})" if why in self.rejected_examples else ""

  def summary(self) -> list[str]:
    if not self.examples: return ["no fuzz examples ran"]
    total, n_rej = sum(self.seconds), sum(self.rejected.values())
    median = sorted(self.seconds)[len(self.seconds) // 2]
    lines = [f"{self.examples} examples in {total:.1f}s ({self.examples / total:.2f}/s, median {median * 1e3:.0f} ms, "
             f"max {max(self.seconds):.2f}s); {self.compared} observables compared",
             f"rejected: {n_rej} ({100 * n_rej / self.examples:.1f}%)",
             *(f"  {n} x {why}{self._rejected_example(why)}" for why, n in self.rejected.most_common()),
             *self.census.summary()]
    if self.workers > 1 and self.span:
      wall = self.span[1] - self.span[0]
      lines.insert(1, f"wall clock: {wall:.1f}s over {self.workers} workers ({self.examples / wall:.2f} examples/s)")
    found = ", ".join(f"{n} x {k}" for k, n in self.findings.most_common())
    lines.append(f"findings: {found}, first at example {self.first_finding}" if found else "findings: none")
    if self.skipped: lines.append("skipped: " + ", ".join(f"{n} x {k}" for k, n in self.skipped.items()))
    if self.advisories:
      lines.append("advisories (tinygrad contracts a plan departs from, same values here; they fail a run only under --strict): "
                   + ", ".join(f"{n} x {k}" for k, n in self.advisories.most_common()))
    lines += self.bugs.summary()
    lines += [f"repro: {p}" for p in self.repros]
    return lines


STATS = Stats()

