"""The census of a campaign: for every feature, how many examples had it and how many planned a buffer of it.

A green run proves what it covered with these figures: `sharded: 14% of examples, 9% planned a multi-device buffer`.
It counts from each example's program and its capture's planned buffers (`Outcome.plan`, `planner.memplan.Placement`s),
so it needs no second run, and it merges across workers like the rest of `fuzz.campaign.stats.Stats`. On a device
with a graph runner it also counts what the graphs really ran (`Outcome.graphs`, read off tinygrad's graph runners as
they ran, never the program text).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fuzz.gen.features import FEATURES
from fuzz.gen.program import Program
from planner.tg import GraphBatch

if TYPE_CHECKING:  # planner.memplan needs a tinygrad the planner supports; the tinyjit target runs on older ones
  from planner.memplan import Placement

# graph census rows: (name, whether an example's graph batches show it); "replayed" is the proof a capture was graphed
GRAPH_ROWS: tuple[tuple[str, Callable[[tuple[GraphBatch, ...]], bool]], ...] = (
  ("a graph batch replayed", lambda gs: any(g.runs >= 2 for g in gs)),
  ("a multi-device batch", lambda gs: any(g.devices >= 2 for g in gs)),
  ("a Variable in a batch", lambda gs: any(g.variables for g in gs)),
  ("2+ inputs patched into one batch", lambda gs: any(g.inputs >= 2 for g in gs)),
  ("a batch cut at JIT_BATCH_SIZE", lambda gs: any(g.batch_cap and g.calls == g.batch_cap for g in gs)),
  ("a one-kernel graph (GRAPH_ONE_KERNEL)", lambda gs: any(g.calls == 1 for g in gs)),
)


@dataclass
class Census:
  examples: int = 0
  had: Counter = field(default_factory=Counter)  # feature -> examples whose program had it
  planned: Counter = field(default_factory=Counter)  # feature -> examples whose capture planned a buffer of it
  buffers: list[int] = field(default_factory=list)  # planned buffers per capture
  largest: int = 0  # bytes of the largest planned buffer
  graphs: Counter = field(default_factory=Counter)  # GRAPH_ROWS name -> examples whose graph batches showed it

  def record(self, program: Program, rows: tuple[Placement, ...], graphs: tuple[GraphBatch, ...] = ()) -> None:
    self.examples += 1
    self.graphs.update(name for name, shows in GRAPH_ROWS if shows(graphs))
    self.buffers.append(len(rows))
    self.largest = max([self.largest, *(r.nbytes for r in rows)])
    for f in FEATURES:
      if not f.seen(program): continue
      self.had[f.name] += 1
      if f.planned is not None and f.planned(rows): self.planned[f.name] += 1

  def to_plain(self) -> dict: return {"examples": self.examples, "had": dict(self.had), "planned": dict(self.planned),
                                      "buffers": self.buffers, "largest": self.largest, "graphs": dict(self.graphs)}

  def merge(self, plain: dict) -> None:
    self.examples += plain["examples"]
    self.had.update(plain["had"])
    self.planned.update(plain["planned"])
    self.buffers += plain["buffers"]
    self.largest = max(self.largest, plain["largest"])
    self.graphs.update(plain["graphs"])

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
    return lines + self.graph_summary()

  def graph_summary(self) -> list[str]:
    if not self.graphs:
      return ["  graphs: none ran (the device has no graph runner, every example ran with JIT=2, or the target runs nothing)"]
    return [f"  graphs: {100 * self.share(name, self.graphs):.0f}% of examples {name}" for name, _ in GRAPH_ROWS]
