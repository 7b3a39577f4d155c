"""The last program's reference run, kept for the next target judged on the same program.

`fuzz.campaign.run` may check one program against several targets one after another; the eager reference is most of
an example's cost, so they share it. Only the last program's is kept: a campaign never comes back to an earlier one.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

_LAST: dict[tuple, Any] = {}


def reference_of(program: Any, mode: str, calls: int) -> Any | None:
  """The reference run (`oracle.runs.Run`) of `program` in `mode` for `calls` calls, when it was the last one judged."""
  return _LAST.get((program, mode, calls))


def keep(program: Any, mode: str, calls: int, ref: Any) -> None:
  """Keep `ref` as the last program's reference, without its step (which would keep the step's tensors alive)."""
  _LAST.clear()
  _LAST[(program, mode, calls)] = replace(ref, jit=None)
