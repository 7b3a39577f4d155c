#!/usr/bin/env python3
"""tinygrad TinyJit: a mean over the first n rows of a buffer (n a bound Variable) is returned lazy and reads wrong.

`(x[:n] * 2).contiguous().mean(0)` is a sum over a Variable-shaped buffer times 1/n. `realize()` leaves it lazy (its
uop stays a MUL, eagerly too), so TinyJit returns it unrealized: a graph over the JIT's buffers with the capture call's
n stored in it. Replays with another n read values of no call (neither eager's nor the capture call's). `x[:n].mean(0)`
without the buffer, or a `.contiguous()` after the mean, is exact. Also with NO_MEMORY_PLANNER=1 and with JIT=2.
Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit, Variable


def run(jit: bool) -> list[np.ndarray]:
  step = TinyJit(lambda x, n: (x[:n] * 2).contiguous().mean(0)) if jit else (lambda x, n: (x[:n] * 2).contiguous().mean(0))
  seen = []
  for k in range(5):
    x = Tensor(np.random.default_rng(k).standard_normal((8, 4)).astype(np.float32)).realize()
    seen.append(step(x, Variable("n", 1, 8).bind(k * 3 % 8 + 1)).numpy().copy())
  return seen


with Context(JIT=0, NO_MEMORY_PLANNER=1): want = run(False)
got = run(True)
bad = [k for k, (w, g) in enumerate(zip(want, got, strict=True)) if not np.allclose(w, g, rtol=1e-5, atol=1e-6)]
for k in bad: print(f"MISMATCH ret at call {k}: jit {got[k]} eager {want[k]}")
print(f"{len(bad)} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
