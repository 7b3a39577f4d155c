#!/usr/bin/env python3
"""tinygrad, eager (no JIT): a sharded tensor's grad cannot come back through a copy from another device.

`w` is sharded over CPU and CPU:1; `w.to("CPU").to("CPU:1").sum().backward()` should give w.grad = ones; realizing it
raises "UOp verification failed ... Ops.RANGE": the grad, a copy from CPU:1, is copied into the multi-device tensor's
shards by a kernel tinygrad's verifier rejects. `.contiguous_backward()` after the first copy avoids it (planfuzz's
sharded draws use that). Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor


def main() -> int:
  w = Tensor(np.ones((4, 4), np.float32)).shard(("CPU", "CPU:1"), axis=0).realize()
  w.to("CPU").to("CPU:1").sum().backward()
  try: got = w.grad.numpy()
  except RuntimeError as e:
    print(f"MISMATCH: realizing w.grad raised RuntimeError: {str(e).splitlines()[0]}; expected all ones")
    return 1
  if not np.allclose(got, 1.0):
    print(f"MISMATCH: w.grad {got.ravel()[:4]}, expected all ones")
    return 1
  print("OK: the grad through two copies is all ones")
  return 0


if __name__ == "__main__":
  sys.exit(main())
