#!/usr/bin/env python3
"""tinygrad, eager (no JIT): sharding a lazy copy of a kernel made on another device fails.

`(x.to("CPU:1").relu().to("CPU").shard(("CPU", "CPU:1")) + 1).to("CPU")` should be relu(x) + 1; realizing it raises
"UOp verification failed ... Ops.RANGE". Without the relu on CPU:1 (a plain round trip) it works, and so does
realizing the copy before sharding it. Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor


def main() -> int:
  x = Tensor(np.full((4, 8), -2.0, np.float32)).realize()
  y = (x.to("CPU:1").relu().to("CPU").shard(("CPU", "CPU:1"), axis=None) + 1).to("CPU")
  try: got = y.numpy()
  except RuntimeError as e:
    print(f"MISMATCH: realizing it raised RuntimeError: {str(e).splitlines()[0]}; expected all 1.0")
    return 1
  if not np.allclose(got, 1.0):
    print(f"MISMATCH: {got.ravel()[:4]}, expected all 1.0")
    return 1
  print("OK: the shard of a copied kernel is relu(x) + 1")
  return 0


if __name__ == "__main__":
  sys.exit(main())
