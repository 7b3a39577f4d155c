#!/usr/bin/env python3
"""tinygrad, eager (no JIT): a replicated sharding of a lazy op over an expanded buffer fails.

`(x.expand((16, 2, 16)) * 2.0).shard(("CPU", "CPU:1"), axis=None) * 1.0` with x a (16, 1, 16) buffer of ones should
be all 2.0; realizing it raises "UOp verification failed ... Ops.EXPAND". Split on an axis (axis=0), without the op
after the shard, with the expand made contiguous first, or broadcast by an add with a full buffer, it works.
Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor


def main() -> int:
  x = Tensor(np.ones((16, 1, 16), np.float32)).realize()
  y = ((x.expand((16, 2, 16)) * 2.0).shard(("CPU", "CPU:1"), axis=None) * 1.0).to("CPU")
  try: got = y.numpy()
  except RuntimeError as e:
    print(f"MISMATCH: realizing it raised RuntimeError: {str(e).splitlines()[0][:120]}; expected all 2.0")
    return 1
  if not np.allclose(got, 2.0):
    print(f"MISMATCH: {got.ravel()[:4]}, expected all 2.0")
    return 1
  print("OK: the replicated shard of an expanded buffer times 2 is all 2.0")
  return 0


if __name__ == "__main__":
  sys.exit(main())
