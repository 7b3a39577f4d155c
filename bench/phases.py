#!/usr/bin/env python3
"""Where an in-process campaign's time goes, phase by phase (a script, not a test): speed work starts here.

Each phase's inclusive seconds and calls: the reference (in this process, or from the HCQ2 helper), the target run,
attribution and engine blame; inside them the oracle's reads of every live tensor (`snapshot`), the inputs made each
call, arena poisoning and the static checks, each named with the phase it ran in (`snapshot@target`). The engine is
this process's (`HCQ2=1` for HCQ2; on the emulated GPU also `HCQ_RUNTIME_DEV=PYTHON`), the device tinygrad's `DEV`.

    HCQ2=1 python bench/phases.py --seed 2 --examples 10
"""
from __future__ import annotations

import argparse
import functools
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fuzz.campaign.example  # noqa: E402
import oracle.check  # noqa: E402
import oracle.invariants  # noqa: E402
import oracle.poison  # noqa: E402
import oracle.runs  # noqa: E402
from fuzz.campaign.run import run_campaign  # noqa: E402
from oracle.targets import Target  # noqa: E402

# (owner, attribute, label, a phase of its own (else counted within the phase it runs in))
WATCHED: tuple[tuple[Any, str, str, bool], ...] = (
  (fuzz.campaign.example, "reference_without_hcq2", "reference from the helper", True),
  (oracle.check, "reference", "reference here", True),
  (oracle.check, "run", "target", True),
  (oracle.check, "attribute", "attribution", True),
  (fuzz.campaign.example, "blame_engine", "engine blame", True),
  (oracle.runs, "snapshot", "snapshot", False),
  (oracle.runs.InputTensors, "__call__", "inputs", False),
  (oracle.poison, "poison_planned_linear", "poison", False),
  (oracle.invariants, "check_tinyjit_record", "static", False),
)


class Phases:
  """Inclusive seconds and calls per label; a nested label is counted as `label@phase`."""

  def __init__(self) -> None:
    self.seconds: Counter = Counter()
    self.calls: Counter = Counter()
    self.phase = "campaign"

  def watch(self, owner: Any, name: str, label: str, own: bool) -> None:
    real: Callable = getattr(owner, name)

    @functools.wraps(real)
    def timed(*args: Any, **kwargs: Any) -> Any:
      start, outer = time.perf_counter(), self.phase
      key = label if own else f"{label}@{outer}"
      if own: self.phase = label
      try: return real(*args, **kwargs)
      finally:
        self.phase = outer
        self.seconds[key] += time.perf_counter() - start
        self.calls[key] += 1
    setattr(owner, name, timed)


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--examples", type=int, default=10)
  ap.add_argument("--target", default="tinyjit")
  args = ap.parse_args()
  phases = Phases()
  for watched in WATCHED: phases.watch(*watched)
  from tinygrad import Tensor
  Tensor.ones(4).contiguous().realize()  # the device open, outside the figures
  start = time.perf_counter()
  c = run_campaign(Target(args.target), args.seed, args.examples, stop_at_finding=False)
  phases.seconds["campaign"] = time.perf_counter() - start
  print(f"{c.stats.examples} examples{f', stopped: {c.stopped}' if c.stopped else ''}")
  for key, seconds in phases.seconds.most_common(): print(f"{seconds:8.2f} s {phases.calls[key]:6d}  {key}")


if __name__ == "__main__":
  main()
