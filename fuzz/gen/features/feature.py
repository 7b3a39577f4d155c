"""What a feature of the generator is: everything about one situation the planner must handle, declared in one module.

A feature is drawn (a compound draw on a value of the pool, several ops that make one situation the planner must
handle) or is a property of the whole step (backward, feedback, prune, ...). Its module declares its draw, the ops it
owns (each op's rendering, whether an eval step may run it, whether it reads the step's Variable; their shapes are
inferred by the draw that emits them), the tinygrad bugs its rules avoid (`avoids`: names of
`fuzz.known.avoided.AVOIDED_BUGS`, whose rule the module's docstring states) and its census entry. The census asks two
questions of every example: did the program have it (`has`), and did the capture plan a buffer of it (`planned`, on
the plan's placements, `planner.memplan.MemoryPlan.placements()`); a green run shows with these what it covered. Registered in
`fuzz.gen.features`, a feature's ops join the op table, its draw the generator and its entry the census.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fuzz.gen.builder import Builder, Value
from fuzz.gen.ops import OpSpec
from fuzz.gen.program import Program

# one planned buffer as plain data, fields by name: a planner.memplan.Placement (not imported: planner.memplan needs a
# tinygrad the planner supports, and the generator serves the tinyjit target on older ones too)
Row = Any
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
  ops: dict[str, OpSpec] = field(default_factory=dict, hash=False)  # the op kinds only this feature emits
  avoids: tuple[str, ...] = ()  # fuzz.known.avoided.AVOIDED_BUGS entries whose rule this feature's draw keeps

  def seen(self, program: Program) -> bool: return self.has(program) if self.has is not None else self.name in program.features
