"""Held-buffer policies: which buffers the planner must leave where they are.

A policy is a plain function of a HoldContext returning a set of BUFFER UOps. The three here are the semantics of
tinygrad releases: `live-tensors` is 0.14.0's (correct, and the one registered policy), `returned-only` is 0.13.0's
(bug #16571: lazy tensors kept alive by the program, such as `.grad` from backward(), read buffers the planner reuses)
and `allocated-only` holds less still; those two are registered as policy mutants (planner/mutants.py).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner import tg

tg.require()  # the planner needs tinygrad's internals: one clear error on a tinygrad without them


@dataclass(frozen=True)
class HoldContext:
  """What a policy may look at, taken right after capture, before lowering."""
  ret: Any
  captured: Any
  inputs: tuple


Policy = Callable[[HoldContext], set]


def allocated_only(ctx: HoldContext) -> set:
  """Only buffers that already have memory: returned and lazily-kept tensors are fair game for the arena."""
  return tg.allocated_buffers()


def returned_only(ctx: HoldContext) -> set:
  """tinygrad 0.13.0: allocated buffers plus the returned tensors' own buffers (bug #16571)."""
  returned = (tg.tensor_buf_uop(t) for t in tg.get_parameters(ctx.ret))
  return tg.allocated_buffers() | {u for u in returned if u is not None}


def live_tensors(ctx: HoldContext) -> set:
  """tinygrad 0.14.0: allocated buffers plus every BUFFER any live Tensor's graph reaches."""
  return tg.allocated_buffers() | {u for t in tg.live_tensors() for u in tg.tensor_buffers(t)}


POLICIES: dict[str, Policy] = {"live-tensors": live_tensors}  # 0.13.0's and a stricter one are mutants (planner/mutants.py)
DEFAULT_POLICY = "live-tensors"
