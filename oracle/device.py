"""Checks on the machine before anything runs: tinygrad's CPU device compiles with the `clang` binary."""
from __future__ import annotations

import os
import shutil

CLANG_FIX = "tinygrad's CPU device needs the clang binary: install it with `apt-get install -y clang` (or run `make setup`)"


def missing_compiler(env: dict[str, str] | None = None) -> str | None:
  """The fix to print when the device tinygrad will use cannot compile kernels here, else None."""
  dev = (env if env is not None else os.environ).get("DEV", "CPU").split(":")[0].upper()
  return CLANG_FIX if dev == "CPU" and shutil.which("clang") is None else None
