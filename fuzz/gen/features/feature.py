"""What a feature of the generator is: a strategy for part of a program, and how a census tells it was reached.

A feature is drawn (a compound draw on a value of the pool, several ops that make one situation the planner must
handle) or is a property of the whole step (backward, feedback, prune, ...). Either way the census asks two
questions of every example: did the program have it (`has`), and did the capture plan a buffer of it (`planned`, on
the plan's rows, `planner.memplan.MemoryPlan.rows()`); a green run shows with these what it covered.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fuzz.gen.builder import Builder, Value
from fuzz.gen.program import Program

Row = tuple  # (device, lane, dtype, nbytes, first, last): one planned buffer
FLOATS = ("dtypes.float", "dtypes.half")


@dataclass(frozen=True)
class Feature:
  name: str
  has: Callable[[Program], bool] | None = None  # None: a compound draw, recorded by name in `Program.features`
  planned: Callable[[tuple[Row, ...]], bool] | None = None  # None: the feature makes no buffer of its own to plan
  planned_what: str = ""  # how the census says it: "planned a multi-device buffer"
  draw: Callable[[Builder, Value], Value] | None = None  # a compound draw on a pool value
  applies: Callable[[Builder, Value], bool] = lambda b, a: True  # for a compound draw: may it start from `a`?
  heavy: bool = False  # costs a second or more a program: at most one heavy draw a program, so rates hold

  def seen(self, program: Program) -> bool: return self.has(program) if self.has is not None else self.name in program.features
