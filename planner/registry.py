"""The names a user gives for each pluggable part (on the command line, to PlannedJit, in a Target), resolved to it.

A name is a built-in (planner/stages.py, planner/policies.py), a mutant of that kind (planner/mutants.py), or a user's
`module:function`. Resolving lives here, above the stages and the mutants, so neither imports the other.
"""
from __future__ import annotations

from planner.mutants import of_kind
from planner.plugins import resolve
from planner.policies import POLICIES, Policy
from planner.stages import DEFAULT_COPY_RULE, GRAPH_SPLITTERS, PLANNERS, CopyRule, GraphSplitter, Planner, written_buffers


def get_policy(spec: str | Policy) -> tuple[str, Policy]:
  """A built-in policy, a policy mutant, or a user's `module:function`."""
  return resolve(spec, POLICIES | of_kind("policy"), "policy")


def get_planner(spec: str | Planner) -> tuple[str, Planner]:
  """A built-in planner, a planner mutant, or a user's `module:function`."""
  return resolve(spec, PLANNERS | of_kind("planner"), "planner")


def get_graph_splitter(spec: str | GraphSplitter) -> tuple[str, GraphSplitter]:
  """tinygrad's graph splitter, a graph mutant, or a user's `module:function`."""
  return resolve(spec, GRAPH_SPLITTERS | of_kind("graph"), "graph splitter")


def get_copy_rule(spec: str | CopyRule) -> tuple[str, CopyRule]:
  """Which replay inputs are copied first: tinygrad's rule (`written_buffers`), a copy-rule mutant, or `module:function`."""
  return resolve(spec, {DEFAULT_COPY_RULE: written_buffers} | of_kind("copy"), "copy rule")
