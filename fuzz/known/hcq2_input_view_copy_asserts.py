#!/usr/bin/env python3
"""tinygrad TinyJit under HCQ2=1: capturing a step that copies a view of its input to another device fails.

The step copies x[2:6] to CPU:1 and back. Eager and the JIT without HCQ2 give x[2:6] on every call; with HCQ2=1 the
capture call raises "AssertionError: must be BUFFER Ops.PARAM" in tinygrad's hcq lowering (`_get_call_bufs_by_lane`),
which takes a call's arguments as whole buffers or parameters, not a view of a parameter. Exit status 1: reproduced;
0: fixed.
"""
import os

os.environ["HCQ2"] = "1"  # read by tinygrad once, at import
import sys  # noqa: E402

import numpy as np  # noqa: E402
from tinygrad import Tensor, TinyJit  # noqa: E402


def main() -> int:
  step = TinyJit(lambda x: x[2:6].to("CPU:1").to("CPU") * 1)
  for k in range(4):
    x = np.arange(8, dtype=np.float32) + k
    try: got = step(Tensor(x).realize()).numpy()
    except AssertionError as e:
      print(f"MISMATCH at call {k}: the JIT raised AssertionError: {e}; eager gives {x[2:6]}")
      return 1
    if not np.array_equal(got, x[2:6]):
      print(f"MISMATCH at call {k}: jit {got} eager {x[2:6]}")
      return 1
  print("OK: the JIT agrees with eager on every call")
  return 0


if __name__ == "__main__":
  sys.exit(main())
