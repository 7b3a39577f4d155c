#!/usr/bin/env python3
"""tinygrad, eager (no JIT): the grad of a tensor sharded along an axis cannot be computed.

`p.shard(("CPU", "CPU:1"), axis=0).to("CPU").sum().backward()` should give p.grad = ones; realizing it raises
"RuntimeError: unbound Variable '_device_num' used by E_4_4": the backward of a split shard gathers the parts with
a kernel indexed by the device number, a Variable nothing binds. Replicated (axis=None) works.
Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Tensor


def main() -> int:
  p = Tensor(np.ones((4, 4), np.float32))
  p.shard(("CPU", "CPU:1"), axis=0).to("CPU").sum().backward()
  try: got = p.grad.numpy()
  except RuntimeError as e:
    print(f"MISMATCH: realizing p.grad raised RuntimeError: {e}; expected all ones")
    return 1
  if not np.allclose(got, 1.0):
    print(f"MISMATCH: p.grad {got.ravel()[:4]}, expected all ones")
    return 1
  print("OK: the grad through a split shard is all ones")
  return 0


if __name__ == "__main__":
  sys.exit(main())
