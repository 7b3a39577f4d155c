"""The numbers a fuzz session reports: examples, rejections and why, findings, the census, the bug book, time.

The summary is printed at the end of every pytest session and `planfuzz run`, so a run that found nothing still shows
how much it ran, what it rejected and why, and how long an example took.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

from fuzz.campaign.bugbook import Bug, BugBook, Sample
from fuzz.campaign.census import Census
from fuzz.campaign.outcome import Outcome
from fuzz.gen.program import Program


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
  replaced: Counter = field(default_factory=Counter)  # why a worker retired and a fresh process took its place -> times

  def record(self, outcome: Outcome, seconds: float, sample: Sample | None = None, program: Program | None = None) -> Bug | None:
    """Count one example (and, given its program, take its census); the new Bug when its findings have a signature not
    seen before."""
    self.examples += 1
    if program is not None and outcome.rejected is None: self.census.record(program, outcome.plan, outcome.ran)
    self.compared += outcome.compared
    self.seconds.append(seconds)
    self.run_seconds += outcome.run_seconds
    self.skipped.update(outcome.skipped)
    if outcome.rejected is not None: self.rejected[reason_class(outcome.rejected)] += 1
    self.findings.update(f.kind for f in outcome.findings)
    if outcome.findings and self.first_finding is None: self.first_finding = self.examples
    self.advisories.update(f.kind for f in outcome.advisories)
    now = time.time()
    self.span = (min(self.span[0], now - seconds) if self.span else now - seconds, now)
    return self.bugs.record(outcome, self.examples, now - self.span[0], sample)

  def to_plain(self) -> dict:
    """Plain data (dicts, lists, numbers), which pytest-xdist carries from a worker to the controller."""
    plain = {k: dict(v) if isinstance(v, Counter) else v for k, v in vars(self).items()}
    return plain | {"bugs": self.bugs.to_plain(), "census": self.census.to_plain()}

  def figures(self) -> dict:
    """`to_plain` without the bug book: what a report.json carries beside its own bug entries, and `merge` adds up."""
    return {k: v for k, v in self.to_plain().items() if k != "bugs"}

  def merge(self, plain: dict) -> None:
    """Add a worker's stats (`to_plain`) to these, as examples of one campaign run side by side."""
    other = Stats(**{k: Counter(v) if isinstance(getattr(self, k), Counter) else v for k, v in plain.items()
                     if k not in ("bugs", "census")})
    if not other.examples: return
    if "bugs" in plain: self.bugs.merge(plain["bugs"], offset=self.examples)
    self.census.merge(plain["census"])
    if other.first_finding is not None and self.first_finding is None: self.first_finding = self.examples + other.first_finding
    self.workers = self.workers + other.workers if self.examples else other.workers
    for name in ("examples", "compared", "rejected", "findings", "skipped", "seconds", "run_seconds", "repros", "advisories", "replaced"):
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
    if self.replaced:
      why = ", ".join(f"{n} x {k}" for k, n in self.replaced.most_common())
      lines.append(f"workers replaced: {sum(self.replaced.values())} ({why})")
    if self.skipped: lines.append("skipped: " + ", ".join(f"{n} x {k}" for k, n in self.skipped.items()))
    if self.advisories:
      lines.append("advisories (tinygrad contracts a plan departs from, same values here; they fail a run only under --strict): "
                   + ", ".join(f"{n} x {k}" for k, n in self.advisories.most_common()))
    lines += self.bugs.summary()
    lines += [f"repro: {p}" for p in self.repros]
    return lines


STATS = Stats()

