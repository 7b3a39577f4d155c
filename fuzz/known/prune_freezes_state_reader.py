#!/usr/bin/env python3
"""tinygrad TinyJit(prune=True): a kernel that reads state before the call that writes it from the input runs once.

The step reads state s into y (a kernel of its own), then assigns s from the input x. y depends on the previous call's
x, so it depends on the explicit inputs; but prune walks the captured calls once, in order, and when it meets y's
kernel s is not yet known to depend on x: the kernel is pruned, runs once at capture, and every replay returns the
capture call's y. Documented prune freezing covers only what does not depend on the inputs. Exit status 1:
reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit


def run(jit: bool) -> list[np.ndarray]:
  s = Tensor(np.ones(8, np.float32)).realize()
  def step(x: Tensor) -> Tensor:
    y = (s * 2).contiguous().realize()
    s.assign(x + 1).realize()
    return (y + x).realize()
  step = TinyJit(step, prune=True) if jit else step
  return [step(Tensor(np.full(8, k, np.float32)).realize()).numpy().copy() for k in range(5)]


with Context(JIT=0, NO_MEMORY_PLANNER=1): want = run(False)
got = run(True)
bad = [k for k, (w, g) in enumerate(zip(want, got, strict=True)) if not np.array_equal(w, g)]
for k in bad: print(f"MISMATCH ret at call {k}: jit {got[k][:2]} eager {want[k][:2]}")
print(f"{len(bad)} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
