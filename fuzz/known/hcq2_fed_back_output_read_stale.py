#!/usr/bin/env python3
"""tinygrad TinyJit under HCQ2=1: a returned tensor fed back as the next call's input is read stale on replay.

The step returns (-x, x.max() * p); from call 1 on, x is the previous call's first returned tensor, the JIT's own
output buffer. Without HCQ2 a replay copies that input first (a buffer the linear writes: `CapturedJit._written_uops`)
and the kernels read the copy. With HCQ2=1 the whole JIT is one 'hcq' call, for which `get_call_outs_ins` gives
`((), ())`, so nothing is copied: `-x` rewrites the output buffer before `x.max()` reads it as this call's input (here
every replay gives 6, where eager gives 2). Across two devices' queues (a copy of the fed-back input to CPU:1) the
same missing copy is a race instead. Also with NO_MEMORY_PLANNER=1 and JIT=2; fine with HCQ2 unset. Exit status 1:
reproduced; 0: fixed.
"""
import os

os.environ["HCQ2"] = "1"  # read by tinygrad once, at import
import sys  # noqa: E402

import numpy as np  # noqa: E402
from tinygrad import Context, Tensor, TinyJit  # noqa: E402


def run(jit: bool) -> list[np.ndarray]:
  p = Tensor(np.full(1, 2.0, np.float32)).realize()
  def step(x: Tensor) -> tuple[Tensor, Tensor]:
    return (-x).realize(), (x.max(axis=0, keepdim=True) * p).realize()
  step = TinyJit(step) if jit else step
  x, seen = Tensor(np.array([1.0, -3.0], np.float32)).realize(), []
  for _ in range(5):
    x, y = step(x)
    seen.append(y.numpy().copy())
  return seen


with Context(JIT=0, NO_MEMORY_PLANNER=1): want = run(False)
got = run(True)
bad = [k for k, (w, g) in enumerate(zip(want, got, strict=True)) if not np.array_equal(w, g)]
for k in bad: print(f"MISMATCH ret[1] at call {k}: jit {got[k]} eager {want[k]}")
print(f"{len(bad)} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
