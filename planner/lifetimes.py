"""Lifetime analysis of a linear: the first and last step each plannable buffer appears at."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner import tg

tg.require()  # the planner needs tinygrad's internals: one clear error on a tinygrad without them


@dataclass(frozen=True)
class Lifetime:
  """Steps [first, last] a buffer is used at. copy: it appears in a COPY call, so it goes to the copy lane; hold:
  extra steps it stays reserved after `last` (copy-lane buffers, for as long again as they live, so copies never
  wait on later compute)."""
  first: int
  last: int
  copy: bool
  hold: int = 0


def plannable(buf: Any, held: set | frozenset) -> bool:
  """A buffer may move into an arena unless it is held or lives on a device without views."""
  if buf in held: return False
  return not any(d.startswith(tg.UNPLANNABLE_DEVICE_PREFIXES) for d in tg.devices_of(buf))


def lifetimes(linear: Any, can_plan: Callable[[Any], bool]) -> dict[Any, Lifetime]:
  """Lifetimes of every buffer `can_plan` accepts, in order of first appearance (the order planning visits them)."""
  first: dict[Any, int] = {}
  last: dict[Any, int] = {}
  copies: set = set()
  for step, call in enumerate(linear.src):
    for buf in (b for arg in tg.call_args(call) for b in tg.arg_buffers(arg) if can_plan(b)):
      first.setdefault(buf, step)
      last[buf] = step
      if tg.is_copy(call): copies.add(buf)
  return {b: Lifetime(first[b], last[b], b in copies, last[b] - first[b] + 1 if b in copies else 0) for b in first}
