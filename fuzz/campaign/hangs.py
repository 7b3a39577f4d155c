"""How long one JIT call of an example may run before the parent calls it a hang.

A replay that never finishes (a hung device queue, a planted fault in graph replay on the emulated GPU) used to wait
out the example's whole `--timeout` (300 s). The worker now says when each JIT call starts and ends (`Calling`), and
the parent bounds a replay by what the example's first eager step took: its eager calls (a train/eval program's two
JITs each have one) and the reads of what they left, up to the first capture (its kernels compiled then; an eager call
may return lazy tensors that only the oracle's reads realize, where a replay runs that work inside the call). A
replay does the same work with nothing to compile; a step of a few milliseconds still gives it 15 s. A capture lowers
and may compile what eager did not, so it gets the room of an eager call; eager calls (call 0, the call after a
reset) are bounded by `--timeout` alone. A hang found so says which call hung and what it was allowed. The times are
the example's own clock (fuzz/campaign/example_clock.py), which a busy machine slows.
"""
from __future__ import annotations

from dataclasses import dataclass

from oracle.schedule import Schedule

REPLAY_SLACK_S, CAPTURE_SLACK_S, FACTOR = 15.0, 120.0, 10.0


@dataclass
class CallClock:
  """The JIT call an example is in now, and what its first eager step took."""
  reset: int | None = None  # the program's jit.reset() call, which decides each call's phase
  jit: int | None = None
  call: int | None = None  # the call running now
  returned: int | None = None  # the call of `jit` that returned last
  since: float = 0.0  # when the call running now started, or the last one returned
  eager_since: float | None = None  # when the first eager call started
  first_eager_s: float | None = None  # from then to the first capture's start: the eager calls and the reads after them

  def start(self, jit: int, call: int, now: float) -> None:
    eager = Schedule(self.reset).replay(call) < 0  # a train/eval program's second JIT has its own eager call 0
    if eager and self.eager_since is None: self.eager_since = now
    elif not eager and self.first_eager_s is None and self.eager_since is not None: self.first_eager_s = now - self.eager_since
    self.jit, self.call, self.since = jit, call, now

  def end(self, now: float) -> None: self.returned, self.call, self.since = self.call, None, now

  def where(self, now: float) -> str:
    """Where an example that ran past its whole timeout was: in which JIT call, or how long after which returned."""
    if self.jit is None: return "before its first JIT call: the reference or the program's set-up"
    if self.call is not None: return f"in {self._named(self.call)} for {now - self.since:.0f}s"
    return f"{now - self.since:.0f}s after {self._named(self.returned)} returned: the oracle's reads, attribution or a rerun"

  def _named(self, call: int | None) -> str: return f"call {call} ({Schedule(self.reset).phase(call)}) of JIT {self.jit}"

  def budget(self) -> float | None:
    """Seconds the call running now may take, or None where only the example's timeout bounds it."""
    if self.call is None or self.first_eager_s is None: return None
    n = Schedule(self.reset).replay(self.call)
    if n < 0: return None
    return (CAPTURE_SLACK_S if n == 0 else REPLAY_SLACK_S) + FACTOR * self.first_eager_s

  def overran(self, now: float) -> str | None:
    """Why the call running now is a hang, or None."""
    if (budget := self.budget()) is None or now - self.since <= budget: return None
    return (f"{self._named(self.call)} ran past its {budget:.0f}s ({self.first_eager_s:.2f}s the first "
            f"eager step took, x{FACTOR:g}, plus {budget - FACTOR * self.first_eager_s:.0f}s)")
