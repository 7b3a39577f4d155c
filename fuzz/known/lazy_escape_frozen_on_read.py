#!/usr/bin/env python3
"""tinygrad TinyJit: a tensor left lazy by the capture call freezes at its first read.

Two lazy escapes of the capture call: p.grad, whose graph reads CONTIGUOUS(relu(x)), and kept[0], itself a
CONTIGUOUS. Nothing realized them during capture. The first read after the capture call realizes the CONTIGUOUS
into a fresh buffer (and the kept tensor in place); replays never write those buffers, so every later read shows
the capture call's value, although x is refilled in place before each call (the mode in which TinyJit defines lazy
escapes). Also with NO_MEMORY_PLANNER=1 and with JIT=2. Exit status 1: reproduced; 0: fixed.
"""
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit


def run(jit: bool) -> list[dict[str, np.ndarray]]:
  p, kept = Tensor(np.linspace(-1, 1, 8, dtype=np.float32)).realize(), []
  def step(x: Tensor) -> Tensor:
    p.grad = None
    h = x.relu().contiguous()
    (h * p).sum().backward()
    kept[:] = [(x * 2).contiguous()]
    return x.relu().realize()
  step = TinyJit(step) if jit else step
  x, seen = Tensor(np.zeros(8, np.float32)).realize(), []
  for k in range(5):
    x.assign(Tensor(np.arange(8, dtype=np.float32) - k)).realize()
    step(x)
    seen.append({"p.grad": p.grad.numpy().copy(), "kept[0]": kept[0].numpy().copy()})
  return seen


with Context(JIT=0, NO_MEMORY_PLANNER=1): want = run(False)
got = run(True)
bad = [(k, name) for k, (w, g) in enumerate(zip(want, got, strict=True)) for name in w if not np.array_equal(w[name], g[name])]
for k, name in bad: print(f"MISMATCH {name} at call {k}: jit {got[k][name][:4]} eager {want[k][name][:4]}")
print(f"{len(bad)} mismatches" if bad else "OK")
sys.exit(1 if bad else 0)
