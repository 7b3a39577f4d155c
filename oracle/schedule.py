"""Which calls a JIT runs eagerly, captures and replays, `jit.reset()` included.

TinyJit counts its calls: call 0 runs the step eagerly, call 1 captures it, every later call replays the capture.
`jit.reset()` sets the count back to 0, so the call after a reset runs eagerly again, the next one captures anew and
the rest replay that new capture. What the oracle documents as frozen at capture (Python values and non-Tensor
arguments, a pending assign made then, a returned view of a fresh input, a Variable's bound value) is frozen at the
capture that governs a call: the last one before it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Schedule:
  """`reset`: the call before which the step's JIT is reset (at least 2: after its first capture), or None."""
  reset: int | None = None

  def __post_init__(self) -> None:
    if self.reset is not None and self.reset < 2:
      raise ValueError(f"a JIT reset before call {self.reset} comes before its first capture: reset before call 2 or later")

  def start(self, call: int) -> int:
    """The call this call's JIT life began at: 0, or the reset call."""
    return self.reset if self.reset is not None and call >= self.reset else 0

  def capture(self, call: int) -> int:
    """The capture call that governs `call` (its own index when it captures)."""
    return self.start(call) + 1

  def replay(self, call: int) -> int:
    """Which replay of its capture `call` is (1, 2, ...); 0 at a capture, -1 at an eager call."""
    return call - self.capture(call)

  def phase(self, call: int) -> str:
    """As a finding names it: eager, capture, replay N, each with "after reset" once the JIT was reset."""
    n = self.replay(call)
    name = "eager" if n < 0 else "capture" if n == 0 else f"replay {n}"
    return name if self.start(call) == 0 else f"{name} after reset"
