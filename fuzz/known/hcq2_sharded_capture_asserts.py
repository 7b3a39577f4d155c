#!/usr/bin/env python3
"""tinygrad TinyJit under HCQ2=1: capturing a step that uses a sharded (multi-device) tensor fails.

The step shards its input over CPU and CPU:1 (replicated), adds a sharded parameter and copies the sum back to CPU.
Eager and the JIT without HCQ2 give x + 1 on every call; with HCQ2=1 the capture call raises
"AssertionError: must be BUFFER Ops.PARAM" in tinygrad's hcq lowering, which does not take a multi-device PARAM.
Also with NO_MEMORY_PLANNER=1 and JIT=2. Exit status 1: reproduced; 0: fixed.
"""
import os

os.environ["HCQ2"] = "1"  # read by tinygrad once, at import
import sys  # noqa: E402

import numpy as np  # noqa: E402
from tinygrad import Tensor, TinyJit  # noqa: E402

DEVICES = ("CPU", "CPU:1")


def main() -> int:
  w = Tensor(np.ones((4, 8), np.float32)).shard(DEVICES, axis=None).realize()
  step = TinyJit(lambda x: (x.shard(DEVICES, axis=None) + w).to("CPU").realize())
  for k in range(4):
    try: got = step(Tensor(np.full((4, 8), k, np.float32)).realize()).numpy()
    except AssertionError as e:
      print(f"MISMATCH at call {k}: the JIT raised AssertionError: {e}; eager gives {k + 1.0}")
      return 1
    if not np.allclose(got, k + 1.0):
      print(f"MISMATCH at call {k}: jit {got.ravel()[:2]} eager {k + 1.0}")
      return 1
  print("OK: the JIT agrees with eager on every call")
  return 0


if __name__ == "__main__":
  sys.exit(main())
