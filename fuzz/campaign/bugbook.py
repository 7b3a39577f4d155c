"""Findings grouped into bugs by signature (oracle/signature.py): what a campaign hands over is bugs, not examples.

Each bug keeps its count, the example and time it was first seen, the program that first showed it and, once shrunk,
the smallest program that still shows it; its status says whether a fresh process confirmed it (fuzz/campaign/confirm.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from fuzz.campaign.confirm import UNCONFIRMED
from fuzz.campaign.outcome import Outcome
from oracle.findings import Finding
from oracle.signature import Signature, signature
from planner.engines import engine_of


@dataclass(frozen=True)
class Sample:
  """One program that shows a bug, with everything its repro needs: input mode, drawn knobs, the finding itself and
  the picture of its plan (plain JSON, or None)."""
  program: Any
  mode: str
  knobs: tuple[tuple[str, int], ...]
  finding: Finding
  plan: dict | None = None


@dataclass
class Bug:
  signature: Signature
  message: str
  count: int = 0
  first_example: int = 0
  first_seconds: float = 0.0
  first: Sample | None = None  # as first drawn
  shrunk: Sample | None = None  # the smallest program shrinking kept the signature in
  shrink_seconds: float = 0.0
  shrink_steps: int = 0  # programs shrinking ran
  shrink_note: str = ""  # why shrinking stopped early, when it did
  status: str = UNCONFIRMED
  confirm_note: str = ""  # what the fresh process did
  repro: str | None = None
  repro_lines: int = 0
  unshrunk_repro: str | None = None
  unshrunk_lines: int = 0
  picture: str | None = None
  context: str | None = None  # for a context-dependent bug: the script replaying the worker's preceding examples
  history: list = field(default_factory=list)  # (program, mode, knobs) the worker ran before it first showed: kept in memory
  engines: list[str] = field(default_factory=list)  # the process engines it was seen on (planner/engines: plain, hcq2)
  releases: dict[str, str] = field(default_factory=dict)  # tinygrad release -> whether its repro reproduces there (fuzz/history)
  bisect: dict | None = None  # the commit that brought (or fixed) it, with --tinygrad-repo (fuzz/history/bisect.py)

  @property
  def new(self) -> bool: return self.signature.known is None

  @property
  def best(self) -> Sample | None: return self.shrunk or self.first


_NOT_PLAIN = ("signature", "first", "shrunk", "history")  # programs, kept in the process that saw them


def signatures(outcome: Outcome) -> list[tuple[Signature, Finding]]:
  """Every (signature, finding) of an outcome, known tinygrad bugs included, the headline (first) finding first."""
  return [(signature(f), f) for f in outcome.findings] + [(signature(f, name), f) for name, f in outcome.known]


def headline(outcome: Outcome) -> tuple[Signature, Finding] | None:
  """The signature an example counts under: its first new finding (the invariants come first: they name the cause),
  else its first known one."""
  return next(iter(signatures(outcome)), None)


@dataclass
class BugBook:
  bugs: dict[Signature, Bug] = field(default_factory=dict)
  findings: int = 0  # examples with a finding, known ones included

  def record(self, outcome: Outcome, example: int, seconds: float, sample: Sample | None = None) -> Bug | None:
    """Count one example under its headline signature; the new Bug when this signature was not seen before."""
    if (head := headline(outcome)) is None: return None
    sig, finding = head
    self.findings += 1
    engine = [] if sample is None else [engine_of(sample.knobs)]
    if (bug := self.bugs.get(sig)) is not None:
      bug.count += 1
      bug.engines = sorted({*bug.engines, *engine})
      return None
    self.bugs[sig] = bug = Bug(sig, finding.message, 1, example, seconds, sample, engines=engine)
    return bug

  def sorted(self) -> list[Bug]: return sorted(self.bugs.values(), key=lambda b: (not b.new, b.first_example))
  def new(self) -> list[Bug]: return [b for b in self.sorted() if b.new]

  def to_plain(self) -> dict:
    """Plain data: what pytest-xdist carries to the controller and a resumed campaign reads back. No programs (a bug
    read back is never written again: its files are on disk), everything else the report says."""
    return {"findings": self.findings, "bugs": [
      {"signature": [b.signature.kind, b.signature.stage, b.signature.role, b.signature.known]} |
      {f.name: getattr(b, f.name) for f in fields(Bug) if f.name not in _NOT_PLAIN} for b in self.bugs.values()]}

  def merge(self, plain: dict, offset: int = 0) -> None:
    """Add another process's bugs (`to_plain`): counts add up, the earliest first sighting wins."""
    self.findings += plain["findings"]
    for d in plain["bugs"]:
      sig = Signature(*d["signature"])
      given = {k: v for k, v in d.items() if k != "signature"} | {"first_example": d["first_example"] + offset}
      if (bug := self.bugs.get(sig)) is None: self.bugs[sig] = Bug(sig, **given)
      else:
        bug.count += d["count"]
        if (d["first_seconds"], d["first_example"]) < (bug.first_seconds, bug.first_example):
          bug.first_example, bug.first_seconds, bug.message = given["first_example"], d["first_seconds"], d["message"]
        bug.repro = bug.repro or d["repro"]
        bug.engines = sorted({*bug.engines, *d.get("engines", [])})

  def summary(self) -> list[str]:
    if not self.bugs: return []
    new = self.new()
    lines = [f"bugs: {len(self.bugs)} distinct from {self.findings} example(s) with findings: {len(new)} new, "
             f"{len(self.bugs) - len(new)} known tinygrad bug(s)"]
    for b in self.sorted():
      where = f"; repro {b.repro} ({b.repro_lines} lines" + (f", shrunk from {b.unshrunk_lines})" if b.unshrunk_lines else ")") \
        if b.repro else ""
      lines.append(f"  {'NEW [' + b.status + ']' if b.new else 'KNOWN'} {b.signature}: {b.count} example(s), first at example "
                   f"{b.first_example} ({b.first_seconds:.1f}s){' on ' + ', '.join(b.engines) if b.engines else ''}{where}")
    return lines
