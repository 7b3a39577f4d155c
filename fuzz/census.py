"""The census of a campaign: for every feature, how many examples had it and how many planned a buffer of it.

A green run proves what it covered with these figures: `sharded: 14% of examples, 9% planned a multi-device
buffer`. It counts from each example's program and its capture's plan rows (`Verdict.plan`), so it needs no second
run, and it merges across workers like the rest of `fuzz.driver.Stats`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fuzz.features import FEATURES
from fuzz.program import Program


@dataclass
class Census:
  examples: int = 0
  had: Counter = field(default_factory=Counter)  # feature -> examples whose program had it
  planned: Counter = field(default_factory=Counter)  # feature -> examples whose capture planned a buffer of it
  buffers: list[int] = field(default_factory=list)  # planned buffers per capture
  largest: int = 0  # bytes of the largest planned buffer

  def record(self, program: Program, rows: tuple[tuple, ...]) -> None:
    self.examples += 1
    self.buffers.append(len(rows))
    self.largest = max([self.largest, *(r[3] for r in rows)])
    for f in FEATURES:
      if not f.seen(program): continue
      self.had[f.name] += 1
      if f.planned is not None and f.planned(rows): self.planned[f.name] += 1

  def to_plain(self) -> dict: return {"examples": self.examples, "had": dict(self.had), "planned": dict(self.planned),
                                      "buffers": self.buffers, "largest": self.largest}

  def merge(self, plain: dict) -> None:
    self.examples += plain["examples"]
    self.had.update(plain["had"])
    self.planned.update(plain["planned"])
    self.buffers += plain["buffers"]
    self.largest = max(self.largest, plain["largest"])

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
    return lines
