#!/usr/bin/env python3
"""tinygrad, eager (no JIT): a replicated shard brought back, realized together with another reader of its source, fails.

`u = (x.shard(("CPU", "CPU:1")) * 2).to("CPU")` realized in one `Tensor.realize(u, x + 1)` should give 2x and x + 1;
it raises "UOp verification failed ... Ops.RANGE". Realized alone, sharded on a split axis, or sharded from a lazy
kernel (`x.relu().shard(...)`) it works. TinyJit realizes a step's returned tensors together, so a step returning both
fails the same way. Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor


def main() -> int:
  x = Tensor(np.full((4, 8), 3.0, np.float32)).realize()
  u, other = (x.shard(("CPU", "CPU:1"), axis=None) * 2).to("CPU"), x + 1
  try: Tensor.realize(u, other)
  except RuntimeError as e:
    print(f"MISMATCH: realizing them together raised RuntimeError: {str(e).splitlines()[0]}; expected 6.0 and 4.0")
    return 1
  if not (np.allclose(u.numpy(), 6.0) and np.allclose(other.numpy(), 4.0)):
    print(f"MISMATCH: {u.numpy().ravel()[:2]} and {other.numpy().ravel()[:2]}, expected 6.0 and 4.0")
    return 1
  print("OK: the replicated shard brought back is 2x beside x + 1")
  return 0


if __name__ == "__main__":
  sys.exit(main())
