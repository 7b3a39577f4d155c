"""The fuzzer's verdict on one example: the oracle's verdict, unchanged, wrapped with what a campaign adds to it.

The oracle decides what is wrong (oracle/compare.py `Verdict`); a campaign then tells which of those findings are
known tinygrad bugs (fuzz/known/bugs.py), and keeps what its census counts: the capture's plan rows and what each
replay engine ran. Those are the campaign's, so they live here, never written into the oracle's verdict.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from fuzz.known.bugs import known_bug
from oracle.compare import Verdict
from oracle.findings import JIT_ERROR, Finding

KNOWN = "known tinygrad bug"
ERROR = "error"  # a finding's kind where judging the example raised (fuzz/campaign/explore.py)


@dataclass
class Outcome:
  verdict: Verdict  # the oracle's, as it judged
  findings: list[Finding] = field(default_factory=list)  # the verdict's findings no known tinygrad bug explains
  known: list[tuple[str, Finding]] = field(default_factory=list)  # (known bug's name, finding) for the others
  plan: tuple = ()  # the capture's planned buffers (`MemoryPlan.placements()`): what the census counts
  ran: dict = field(default_factory=dict)  # engine name -> what it ran in the target run (planner/engines/): the census's proof

  @classmethod
  def of(cls, verdict: Verdict) -> Outcome:
    """The outcome of a verdict before any finding is matched to a known bug."""
    return cls(verdict, list(verdict.findings))

  @property
  def ok(self) -> bool: return not self.findings
  @property
  def rejected(self) -> str | None: return self.verdict.rejected
  @property
  def advisories(self) -> list[Finding]: return self.verdict.advisories
  @property
  def compared(self) -> int: return self.verdict.compared
  @property
  def run_seconds(self) -> float: return self.verdict.run_seconds
  @property
  def raised(self) -> bool:
    """Whether the run behind it raised: a rejection, or a finding that is an error."""
    return self.rejected is not None or any(f.kind in (JIT_ERROR, ERROR) for f in self.findings)

  @property
  def skipped(self) -> Counter:
    """What the oracle skipped (documented behaviour), and the findings of known bugs, counted by name."""
    return self.verdict.skipped + Counter(f"{KNOWN} {name}" for name, _ in self.known)

  def plain(self) -> Outcome:
    """This outcome with every finding through JSON, so every detail pickles across the process boundary."""
    through = lambda f: Finding(**json.loads(f.to_json()))
    verdict = replace(self.verdict, findings=[through(f) for f in self.verdict.findings],
                      advisories=[through(f) for f in self.verdict.advisories])
    return replace(self, verdict=verdict, findings=[through(f) for f in self.findings],
                   known=[(name, through(f)) for name, f in self.known])


def without_known(verdict: Verdict, program: Any, rerun: Callable[[Any], Outcome] | None = None) -> Outcome:
  """The outcome of `verdict` with the findings of known tinygrad bugs set apart; `rerun` judges a variant of the program,
  for a known bug told by its mechanism."""
  outcome = Outcome(verdict)
  for f in verdict.findings:
    if (bug := known_bug(f, program, rerun)) is None: outcome.findings.append(f)
    else: outcome.known.append((bug.name, f))
  return outcome
