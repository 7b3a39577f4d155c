"""Targets: the JITs the oracle judges, as plain data, so any run can be repeated with one knob changed.

`tinyjit` is the installed tinygrad's own TinyJit and uses only tinygrad's public API (it runs on any tinygrad
from 0.12.0 on); `planner` is planfuzz's PlannedJit with a policy and a planner, imported only when used;
`static` captures and plans with that policy and planner, checks the invariants, and runs nothing (oracle/static.py).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

TARGET_KINDS = ("planner", "tinyjit", "static")


class TargetError(ValueError):
  """An unknown target kind: the message lists the known ones."""


@dataclass(frozen=True)
class Target:
  kind: str = "planner"
  policy: str = "live-tensors"
  planner: str = "planfuzz"
  graph: str = "tinygrad"  # planner target: the graph splitter
  copy: str = "tinygrad"  # planner target: which replay inputs are copied first (planner/stages.py get_copy_rule)
  knobs: tuple[tuple[str, int], ...] = ()  # tinygrad Context values for the whole run, e.g. (("JIT", 2),)
  prune: bool | None = None  # None: as the program asks
  poison: bool = True  # planner target: fill arenas with a sentinel before every run of the lowered linear

  def __post_init__(self) -> None:
    if self.kind not in TARGET_KINDS: raise TargetError(f"unknown target {self.kind!r}: choose one of {', '.join(TARGET_KINDS)}")
    if self.kind != "tinyjit":  # fail on a bad policy or planner now, with the plugin error, not in the middle of a run
      try:
        from planner import get_copy_rule, get_graph_splitter, get_planner, get_policy
        get_policy(self.policy), get_planner(self.planner), get_graph_splitter(self.graph), get_copy_rule(self.copy)
      except ImportError as e: raise TargetError(f"the {self.kind} target needs planfuzz's planner: {e}") from e
      except ValueError as e: raise TargetError(str(e)) from e  # PlanfuzzUsageError: an unknown name or a bad plugin

  def wrap(self, step: Callable[..., Any], prune: bool) -> Callable[..., Any]:
    if self.kind == "static": raise TargetError("the static target runs nothing: use oracle.static.check_static")
    prune = self.prunes(prune)
    if self.kind == "tinyjit":
      from tinygrad import TinyJit
      return TinyJit(step, prune=prune)
    from oracle.poison import poison_arenas
    from planner import PlannedJit
    return PlannedJit(step, prune=prune, policy=self.policy, planner=self.planner, graph_splitter=self.graph, copy_rule=self.copy,
                      before_run=poison_arenas if self.poison else None)

  @classmethod
  def for_mutant(cls, name: str) -> Target:
    """The planner target with one mutant (planner/mutants.py) in place of the default stage it replaces."""
    from planner.mutants import MUTANTS
    if name not in MUTANTS: raise TargetError(f"unknown mutant {name!r}: choose one of {', '.join(MUTANTS)}")
    return cls(**{MUTANTS[name].kind: name})  # a mutant's kind names the Target field it replaces

  @property
  def context(self) -> dict[str, int]: return dict(self.knobs)

  def prunes(self, asked: bool) -> bool:
    """Whether a run of a step that asks for `asked` prunes: the target's own setting, where it has one, wins."""
    return asked if self.prune is None else self.prune

  def with_knobs(self, **knobs: int) -> Target: return replace(self, knobs=tuple({**self.context, **knobs}.items()))

  def describe(self) -> str:
    from planner import tg
    knobs = " ".join(f"{k}={v}" for k, v in (tg.environment_knobs() | self.context).items())
    graph = "" if self.graph == "tinygrad" else f", graph={self.graph}"
    copy = "" if self.copy == "tinygrad" else f", copy={self.copy}"
    planned = f"(policy={self.policy}, planner={self.planner}{graph}{copy})"
    what = {"tinyjit": "tinygrad TinyJit", "static": f"static plan check{planned}"}.get(self.kind, f"PlannedJit{planned}")
    return f"{what}{' ' + knobs if knobs else ''}{'' if self.prune is None else f' prune={self.prune}'}"
