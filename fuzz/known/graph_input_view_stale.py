#!/usr/bin/env python3
"""tinygrad TinyJit on a device with graphs (HCQGraph): a buffer view of an input replays the capture call's input.

A slice of a step's input that is a contiguous range of its buffer (`x[1:5]`) is a view of that buffer, not a copy.
When a graphed call reads such a view (a kernel reading `x[1:5].contiguous()`, or a copy `x[1:5].to("AMD:1")`, or a
shard of it), the graph keeps the capture call's view: called with a new input tensor each call, every replay reads
the capture call's input there, while the rest of the step reads the new one. The graph runner updates only the
arguments that are the step's inputs themselves, not views of them. Right with JIT=2 (no graphs), without the
slice, and on the CPU device (no graph). Found on tinygrad's emulated AMD GPU (DEV=MOCKKFD+AMD); not tried on a real
GPU yet. Exit status 1: reproduced; 0: fixed (or no graph here).
"""
import sys

import numpy as np
from tinygrad import Context, Device, Tensor, TinyJit

SECOND = f"{Device.DEFAULT.split(':')[0]}:1"
STEPS = {  # each captures two calls: by default tinygrad graphs no capture of one
  "kernel reads the view": lambda x: x[1:5].contiguous() + x.sum().realize(),
  "copy of the view": lambda x: (x[1:5].to(SECOND) * 2).contiguous(),
}


def run(step, jit: bool) -> list[np.ndarray]:
  step = TinyJit(step) if jit else step
  return [step(Tensor(np.arange(8, dtype=np.float32) + 10 * k).realize()).numpy() for k in range(4)]


bad = 0
for name, step in STEPS.items():
  with Context(JIT=0): want = run(step, False)
  got = run(step, True)
  for k in range(4):
    if np.array_equal(got[k], want[k]): continue
    print(f"MISMATCH, {name}, at call {k}: jit {got[k]} eager {want[k]}")
    bad += 1
print(f"{bad} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
