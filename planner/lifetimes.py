"""Lifetime analysis of a linear: the first and last step each plannable buffer appears at."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner import tg


@dataclass(frozen=True)
class Lifetime:
  first: int
  last: int
  copy: bool  # appears in a COPY call: it goes to the copy lane

  @property
  def hold(self) -> int:
    """Copy-lane buffers stay reserved for as long again as they live, so copies never wait on later compute."""
    return self.last - self.first + 1 if self.copy else 0


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
  return {b: Lifetime(first[b], last[b], b in copies) for b in first}
