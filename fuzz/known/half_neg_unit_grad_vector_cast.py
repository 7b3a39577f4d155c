#!/usr/bin/env python3
"""tinygrad, eager (no JIT), CPU device: the grad of a subtracted float16 tensor under a unit loss does not compile.

`(x - p).float().sum().backward()` with `p` a float16 tensor of 4 elements should give p.grad = -1 everywhere; the
CPU (clang) renderer writes the constant grad as `(__fp164)((float4){-1.0f, ...})`, a conversion between vector types
clang rejects ("invalid conversion between ext-vector type '__fp164' ... and 'float4'"), so realizing p.grad raises
CalledProcessError. A scale other than 1 (`* 0.5` before the sum: -0.5), a float32 `p`, or a single element work.
Exit status 1: reproduced; 0: fixed.
"""
import subprocess
import sys

import numpy as np
from tinygrad import Tensor


def main() -> int:
  p = Tensor(np.ones(4, np.float16)).realize()
  x = Tensor(np.full(4, 3.0, np.float16)).realize()
  (x - p).float().sum().backward()
  try: got = p.grad.numpy()
  except subprocess.CalledProcessError as e:
    print(f"MISMATCH: realizing p.grad raised CalledProcessError ({e.cmd[0]} exit status {e.returncode}); expected all -1.0")
    return 1
  if not np.allclose(got, -1.0):
    print(f"MISMATCH: p.grad {got}, expected all -1.0")
    return 1
  print("OK: the grad of a subtracted float16 tensor is all -1.0")
  return 0


if __name__ == "__main__":
  sys.exit(main())
