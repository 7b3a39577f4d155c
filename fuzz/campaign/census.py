"""The census of a campaign: for every feature, how many examples had it and how many planned a buffer of it.

A green run proves what it covered with these figures: `sharded: 14% of examples, 9% planned a multi-device buffer`.
It counts from each example's program and its capture's planned buffers (`Outcome.plan`, `planner.memplan.Placement`s),
so it needs no second run, and it merges across workers like the rest of `fuzz.campaign.stats.Stats`. It also counts
what each replay engine really ran (`Outcome.ran`, read off the engine as it ran, never the program text: the plain
replays, the graph runners' batches, HCQ2's 'hcq' calls; planner/engines/), in each engine's census rows.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fuzz.gen.features import FEATURES
from fuzz.gen.program import Program
from planner.engines import ENGINES, Engine, census_rows

if TYPE_CHECKING:  # planner.memplan needs a tinygrad the planner supports; the tinyjit target runs on older ones
  from planner.memplan import Placement

@dataclass
class Census:
  examples: int = 0
  had: Counter = field(default_factory=Counter)  # feature -> examples whose program had it
  planned: Counter = field(default_factory=Counter)  # feature -> examples whose capture planned a buffer of it
  buffers: list[int] = field(default_factory=list)  # planned buffers per capture
  largest: int = 0  # bytes of the largest planned buffer
  engines: dict[str, Counter] = field(default_factory=dict)  # engine label -> row name -> examples whose records showed it
  engine_examples: Counter = field(default_factory=Counter)  # engine label -> examples run where it was active

  def record(self, program: Program, rows: tuple[Placement, ...], ran: dict[str, tuple] | None = None) -> None:
    self.examples += 1
    for label, shown in census_rows(ran or {}).items():
      self.engine_examples[label] += 1
      self.engines.setdefault(label, Counter()).update(shown)
    self.buffers.append(len(rows))
    self.largest = max([self.largest, *(r.nbytes for r in rows)])
    for f in FEATURES:
      if not f.seen(program): continue
      self.had[f.name] += 1
      if f.planned is not None and f.planned(rows): self.planned[f.name] += 1

  def to_plain(self) -> dict: return {"examples": self.examples, "had": dict(self.had), "planned": dict(self.planned),
                                      "buffers": self.buffers, "largest": self.largest,
                                      "engines": {label: dict(rows) for label, rows in self.engines.items()},
                                      "engine_examples": dict(self.engine_examples)}

  def merge(self, plain: dict) -> None:
    self.examples += plain["examples"]
    self.had.update(plain["had"])
    self.planned.update(plain["planned"])
    self.buffers += plain["buffers"]
    self.largest = max(self.largest, plain["largest"])
    for label, rows in plain["engines"].items(): self.engines.setdefault(label, Counter()).update(rows)
    self.engine_examples.update(plain["engine_examples"])

  def share(self, name: str, counter: Counter | None = None) -> float:
    """The fraction of examples that had (or planned, with `planned`) feature `name`."""
    return (self.had if counter is None else counter)[name] / self.examples if self.examples else 0.0

  def summary(self) -> list[str]:
    if not self.examples: return []
    median = sorted(self.buffers)[len(self.buffers) // 2]
    lines = [f"census: {self.examples} programs; median {median} planned buffers a capture, largest planned buffer "
             f"{self.largest / 1024:.1f} KiB"]
    for f in FEATURES:
      line = f"  {f.name}: {100 * self.share(f.name):.0f}% of examples"
      if f.planned is not None: line += f", {100 * self.share(f.name, self.planned):.0f}% {f.planned_what}"
      lines.append(line)
    return lines + [line for e in ENGINES.values() for line in self.engine_summary(e)]

  def engine_summary(self, engine: Engine) -> list[str]:
    """An engine's rows, each a share of the examples run where it was active (`hcq2: 61% of examples an 'hcq' call
    replayed`; a mixed campaign says of how many), or why none ran."""
    label, n = engine.label, self.engine_examples[engine.label]
    if not n: return []
    if not +self.engines.get(label, Counter()): return [f"  {label}: {engine.none_ran}"]
    head = [f"  {label}: active in {n} of the {self.examples} examples"] if n != self.examples else []
    return head + [f"  {label}: {100 * self.engines[label][name] / n:.0f}% of examples {name}" for name, _ in engine.rows]
