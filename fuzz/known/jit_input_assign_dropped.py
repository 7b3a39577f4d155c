#!/usr/bin/env python3
"""tinygrad TinyJit (tinygrad#16618, open): an explicit input assigned inside the step and left lazy keeps the
caller's data on replay.

`step(x)` ends with `x.assign(x * 2)` and returns `(x + 1).realize()`. Nothing the step returns reaches the assign,
so the capture never schedules it: reading x after the eager call and after the capture call realizes it outside
the JIT (x doubles), but a replay never runs it and x keeps the data it was called with. Realizing the assign inside
the step (`x.assign(x * 2).realize()`) makes every call double x. Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor, TinyJit


def main() -> int:
  @TinyJit
  def step(x: Tensor) -> Tensor:
    out = (x + 1).realize()
    x.assign(x * 2)
    return out

  x = Tensor(np.zeros(4, np.float32)).contiguous().realize()
  for k in range(4):
    x.assign(Tensor(np.full(4, k + 1.0, np.float32))).realize()  # this call's data, refilled in place
    step(x)
    got = x.numpy()
    if not np.allclose(got, 2.0 * (k + 1)):
      print(f"MISMATCH: after call {k} x is {got[0]}, expected {2.0 * (k + 1)} (the input assign was dropped)")
      return 1
  print("OK: every call doubled its input")
  return 0


if __name__ == "__main__":
  sys.exit(main())
