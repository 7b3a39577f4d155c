"""A finding is plain data: what kind of wrong, where (observable path or buffer), when (call and phase), and details.

The fuzzer, the tests and the CLI print and save the same record; `message` is its one-paragraph reading.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

# value kinds, from comparing a JIT run with the reference
ALL_ZEROS, STALE, NON_FINITE, WRONG_VALUES, JIT_ERROR = "all-zeros", "stale", "non-finite", "wrong-values", "jit-error"
VALUE_KINDS = (ALL_ZEROS, STALE, NON_FINITE, WRONG_VALUES, JIT_ERROR)
CRASH, HANG = "crash", "hang"  # a worker process an example killed, or one that ran past its time (fuzz/campaign/workers.py)
ADVISORY = "advisory:"  # kinds that deviate from a tinygrad contract without a wrong value: reported, failing only under --strict


@dataclass(frozen=True)
class Finding:
  """kind: a value kind above, or `invariant:<name>` for a static plan check.
  subject: the observable path (`conv.weight.grad`, `ret[1]`) or buffer name it is about.
  call: the call index it showed at (None for static checks); phase: `capture`, `replay 1`, ..., or `static`.
  attribution: which stage is to blame, filled in by attribution re-runs (planner, graph, prune, capture, eager)."""
  kind: str
  subject: str
  call: int | None = None
  phase: str = "static"
  details: dict[str, Any] = field(default_factory=dict)
  attribution: str | None = None

  @property
  def message(self) -> str:
    when = ("statically, before anything ran" if self.phase == "static" else f"while running ({self.phase})") if self.call is None \
      else f"at call {self.call} ({self.phase})"
    blame = f" Blamed on: {self.attribution}." if self.attribution else ""
    detail = "; ".join(f"{k}={v}" for k, v in self.details.items())
    return f"[{self.kind}] {self.subject} {when}: {detail}.{blame}"

  @property
  def advisory(self) -> bool: return self.kind.startswith(ADVISORY)

  def to_json(self) -> str: return json.dumps(asdict(self), default=str, sort_keys=True)

  def blamed(self, stage: str) -> Finding: return replace(self, attribution=stage)
