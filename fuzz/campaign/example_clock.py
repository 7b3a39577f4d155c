"""An example's clock for its deadlines: the wall's, slowed while the machine has more runnable work than CPUs.

A campaign beside other jobs (a CI run, a bisect) gets a share of the machine, and its examples take longer on the
wall for it. The emulated-GPU campaign at seed 33003 took 98-293 s on its examples 697-735, the 15 minutes a `make
test` ran beside it (its median example took 5 s), and an earlier run at that seed, with a bisect beside it, passed the
300 s `--timeout` on one example: a new 'hang', whose repro finished alone in 13 s. So `--timeout` and the per-call
bounds (fuzz/campaign/hangs.py) count time on this clock: each moment of the wall counts 1 / (load / CPUs) while the
run-queue load average is above the CPUs this process may use, at most MAX_STRETCH times slower, so a hang on a busy
machine is still told. A campaign's own workers count in the load, so a hang on a machine they fill is told on time.
Where the load is unknown the clock is the wall's.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

MAX_STRETCH = 4.0  # a deadline is never more than this many times as long on the wall


def machine_load() -> float:
  """The run-queue load average over the last minute, per CPU this process may use (0 where it is unknown)."""
  try: return os.getloadavg()[0] / len(os.sched_getaffinity(0))
  except (AttributeError, OSError): return 0.0


class ExampleClock:
  """Seconds since an example began, each wall second counted at 1 / max(1, load per CPU). `now()` must be read
  often (the pool's poll reads it every 0.2 s) for the load to be sampled along the way."""

  def __init__(self, wall: Callable[[], float] = time.perf_counter, load: Callable[[], float] = machine_load) -> None:
    self.wall, self.load = wall, load
    self.last = self.started = wall()
    self.elapsed = 0.0

  def now(self) -> float:
    """The example's seconds so far on this clock (the deadlines compare it)."""
    t = self.wall()
    self.elapsed += (t - self.last) / min(max(1.0, self.load()), MAX_STRETCH)
    self.last = t
    return self.elapsed

  def on_wall(self) -> float: return self.wall() - self.started

  def stretched(self) -> str:
    """How the clock differs from the wall, for a hang's message ('' where it did not)."""
    wall = self.on_wall()
    return f"{wall:.0f}s on the wall, the machine busier than its CPUs" if wall > self.elapsed + 1 else ""
