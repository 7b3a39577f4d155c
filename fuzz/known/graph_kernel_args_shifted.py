#!/usr/bin/env python3
"""tinygrad TinyJit on a device with graphs (HCQGraph): a kernel whose code dropped one of its buffers reads the wrong
buffers.

`x - (x + y)` simplifies to `-y`, so the kernel compiled for it takes only `y` (and its output): its `Program.globals`
name the call arguments it reads. Eager runs and JIT=2 pass it just those; `GraphRunner` passes it every argument of
the call, in order, so the graphed kernel reads `x` where it reads `y`. Wrong from the capture call on, on every call.
Right with JIT=2 (no graphs) and on the CPU device (no graph). Found on tinygrad's emulated AMD GPU
(DEV=MOCKKFD+AMD); not tried on a real GPU yet. Exit status 1: reproduced; 0: fixed (or no graph here).
"""
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit


def step(x: Tensor) -> Tensor:
  y = (x * 2).contiguous().realize()  # a second kernel: by default tinygrad graphs no capture of one
  return (x - (x + y)).contiguous()   # -2x; the graphed kernel computes -x


def run(jit: bool) -> list[np.ndarray]:
  f = TinyJit(step) if jit else step
  return [f(Tensor(np.arange(4, dtype=np.float32) + 10 * k).realize()).numpy() for k in range(4)]


with Context(JIT=0): want = run(False)
got = run(True)
bad = [k for k in range(4) if not np.array_equal(got[k], want[k])]
for k in bad: print(f"MISMATCH at call {k}: jit {got[k]} eager {want[k]}")
print(f"{len(bad)} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
