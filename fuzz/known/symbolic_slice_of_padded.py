#!/usr/bin/env python3
"""tinygrad, eager (no JIT): the first n rows of a lazily padded 3-d tensor, n a bound Variable, fail to schedule.

`x.pad(((3, 1), (0, 0), (0, 0)))[:n].sum(0)` with x of shape (4, 2, 8) and n = Variable('n', 1, 8).bind(3) should
be three rows of zeros summed (the padding); it raises "AssertionError: val is only for CONST, got Ops.PARAM". The
same on a 2-d tensor, with a `.contiguous()` after the pad, or with the pad on another axis works. A step reducing
the first n rows of such a value fails the same way, in eager as under TinyJit. Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor, Variable


def main() -> int:
  x = Tensor(np.ones((4, 2, 8), np.float32)).realize()
  n = Variable("n", 1, 8).bind(3)
  try: got = x.pad(((3, 1), (0, 0), (0, 0)))[:n].sum(0).realize().numpy()
  except AssertionError as e:
    print(f"MISMATCH: realizing the sum raised AssertionError: {str(e).splitlines()[0]}; expected zeros of shape (2, 8)")
    return 1
  if got.shape != (2, 8) or not np.allclose(got, 0.0):
    print(f"MISMATCH: got {got.ravel()[:4]} of shape {got.shape}, expected zeros of shape (2, 8)")
    return 1
  print("OK: the first n rows of the padded tensor sum to zeros")
  return 0


if __name__ == "__main__":
  sys.exit(main())
