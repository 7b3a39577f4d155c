#!/usr/bin/env python3
"""tinygrad TinyJit: a lazy .grad made at capture freezes once it is read, when its graph holds a .contiguous().

The grad's graph reads CONTIGUOUS(relu(x)), which nothing realized during capture. The first read after the
capture call realizes that CONTIGUOUS into a fresh buffer and rewires the graph to it; replays never write that
buffer, so every later read shows the capture call's value, although x is refilled in place before each call
(the mode in which TinyJit defines lazy escapes). Also with NO_MEMORY_PLANNER=1 and with JIT=2.
Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit


def run(jit: bool) -> list[np.ndarray]:
  p = Tensor(np.linspace(-1, 1, 8, dtype=np.float32)).realize()
  def step(x: Tensor) -> Tensor:
    p.grad = None
    (x.relu().contiguous() * p).sum().backward()
    return x.relu().realize()
  step = TinyJit(step) if jit else step
  x, grads = Tensor(np.zeros(8, np.float32)).realize(), []
  for k in range(5):
    x.assign(Tensor(np.arange(8, dtype=np.float32) - k)).realize()
    step(x)
    grads.append(p.grad.numpy().copy())
  return grads


with Context(JIT=0, NO_MEMORY_PLANNER=1): want = run(False)
got = run(True)
bad = [k for k, (w, g) in enumerate(zip(want, got, strict=True)) if not np.array_equal(w, g)]
for k in bad: print(f"MISMATCH p.grad at call {k}: jit {got[k][:4]} eager {want[k][:4]}")
print(f"{len(bad)} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
