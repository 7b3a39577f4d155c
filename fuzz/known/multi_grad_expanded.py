#!/usr/bin/env python3
"""tinygrad, eager (no JIT): a sharded tensor's grad cannot be a broadcast buffer.

`w` is replicated over CPU and CPU:1; `(w.to("CPU") * c).sum().backward()` with `c` a one-element buffer should give
w.grad = c everywhere; realizing it raises "UOp verification failed ... Ops.EXPAND": the grad, `c` expanded, is
copied into the shards without being made contiguous. `.contiguous_backward()` after the copy avoids it (planfuzz's
sharded draws use that). Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor


def main() -> int:
  w = Tensor(np.ones((4, 4), np.float32)).shard(("CPU", "CPU:1"), axis=None).realize()
  c = Tensor(np.array([3.0], np.float32)).realize()
  (w.to("CPU") * c).sum().backward()
  try: got = w.grad.numpy()
  except RuntimeError as e:
    print(f"MISMATCH: realizing w.grad raised RuntimeError: {str(e).splitlines()[0]}; expected all 3.0")
    return 1
  if not np.allclose(got, 3.0):
    print(f"MISMATCH: w.grad {got.ravel()[:4]}, expected all 3.0")
    return 1
  print("OK: the grad of a broadcast product is all 3.0")
  return 0


if __name__ == "__main__":
  sys.exit(main())
