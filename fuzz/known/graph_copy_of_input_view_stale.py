#!/usr/bin/env python3
"""tinygrad TinyJit on a device with graphs (HCQGraph): a copy of an input's view to another device replays the
capture call's input.

The step copies a slice of its input to a second device of the default's kind (`x[1:5].to("AMD:1")`; `.shard` does
the same), and is called with a new input tensor each call. With graphs (JIT=1) every replay returns the capture
call's values: the graphed copy keeps reading the capture call's input. It is right with JIT=2 (no graphs), without
the slice (`x.to(...)`), and on the CPU device (no graph). Found on tinygrad's emulated AMD GPU (DEV=MOCKKFD+AMD);
not tried on a real GPU yet. Exit status 1: reproduced; 0: fixed (or no graph here).
"""
import sys

import numpy as np
from tinygrad import Context, Device, Tensor, TinyJit

SECOND = f"{Device.DEFAULT.split(':')[0]}:1"


def run(jit: bool) -> list[np.ndarray]:
  def step(x: Tensor) -> Tensor: return (x[1:5].to(SECOND) * 2).contiguous()
  step = TinyJit(step) if jit else step
  return [step(Tensor(np.arange(8, dtype=np.float32) + 10 * k).realize()).numpy() for k in range(4)]


with Context(JIT=0): want = run(False)
got = run(True)
bad = [k for k in range(4) if not np.array_equal(got[k], want[k])]
for k in bad: print(f"MISMATCH at call {k}: jit {got[k]} eager {want[k]}")
print(f"{len(bad)} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
