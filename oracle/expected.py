"""What the judge compares one observable with, as data a repro script can carry instead of the judge's rules.

After a call, an observable must equal the reference's value after the same call, except what the JIT documents as
frozen at the capture that governs the call (`compare.frozen_at`), which must equal the reference's value
after that capture; within the tolerance of its dtype (`compare.tolerance`). A repro script written for a finding
compares that one value: the call index to take the reference's value from and the tolerance are written into it,
so the script needs neither the judge's rules nor the traces behind them, and stays standalone.
"""
from __future__ import annotations

from dataclasses import dataclass

from oracle.compare import frozen_at, tolerance
from oracle.runs import Trace


@dataclass(frozen=True)
class Expected:
  """`path` after call `call` (its `phase`) must equal the reference's value after call `source` within (rtol, atol);
  rtol = atol = 0 means exactly."""
  path: str
  call: int
  source: int
  rtol: float
  atol: float
  phase: str


def expected(ref: Trace, got: Trace, path: str, call: int, mode: str) -> Expected:
  """The judge's decision for `path` after `call`, read off the reference and target traces it judged."""
  source = got.capture_record(call).index if path in frozen_at(got, call, mode) else call
  rtol, atol = tolerance(ref.calls[source].values[path].dtype)
  return Expected(path, call, source, rtol, atol, got.schedule.phase(call))
