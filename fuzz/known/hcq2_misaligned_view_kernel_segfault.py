#!/usr/bin/env python3
"""tinygrad under HCQ2=1 on the CPU: a kernel reading a buffer view whose byte offset is not a multiple of 16 crashes.

`a[1:5].contiguous()` of a realized 1-D float tensor is a view of its buffer 4 bytes in (no kernel runs for it);
`* 2` on it is a kernel given that view. Eagerly, with no JIT at all, the process dies of SIGSEGV with HCQ2=1; with
HCQ2 unset it gives [2, 4, 6, 8]. Offsets of 16, 32, ... bytes (`a[4:8]`) work. Run in a child process, since the
crash takes the process down. Exit status 1: reproduced; 0: fixed.
"""
import os
import subprocess
import sys

CHILD = "import numpy as np; from tinygrad import Tensor; a = Tensor(np.arange(8, dtype=np.float32)).realize(); " \
        "print((a[1:5].contiguous() * 2).numpy().tolist())"


def main() -> int:
  out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env={**os.environ, "HCQ2": "1"})
  if out.returncode < 0:
    print(f"MISMATCH at call 0: the eager kernel killed the process with signal {-out.returncode}; without HCQ2 it gives [2, 4, 6, 8]")
    return 1
  if out.returncode != 0 or out.stdout.split() != ["[2.0,", "4.0,", "6.0,", "8.0]"]:
    print(f"MISMATCH at call 0: rc {out.returncode}, {out.stdout.strip()} {out.stderr.strip()[-300:]}")
    return 1
  print("OK: the kernel reads the view right")
  return 0


if __name__ == "__main__":
  sys.exit(main())
