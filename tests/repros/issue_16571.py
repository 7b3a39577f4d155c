#!/usr/bin/env python3
"""tinygrad #16571: a .grad left lazy by backward() during TinyJit's capture reads buffers the memory planner moved
into an arena, so after the capture it reads zeros (0.13.0 has it; "jit: don't memplan buffers reachable from live
tensors", tinygrad#16588, fixed it). The step gets the same inputs every call, so every call's grad must equal the
eager step's. Public API only, so it runs on 0.12.0 and later. Exit status 1: reproduced; 0: fixed.
`planfuzz bisect` puts it between 0.12.0 and 0.13.0 at 409bb0c9ad "requires_grad cannot be None (#16212)" (the
first commit where this step's lazy grad reads a planned buffer; the held-buffer rule itself is older) and its fix
at 76c10cd635 (#16588)."""
import sys

import numpy as np
from tinygrad import Tensor, TinyJit, nn


def step(lin: nn.Linear, x: Tensor, y: Tensor) -> Tensor:
  per_example = ((x.permute(1, 0).contiguous() @ lin.weight.T).relu() * y).sum(axis=1)  # a fresh BUFFER of a view
  per_example.sum().backward()
  lin.weight.grad = None
  (per_example * 0.5).sum().backward()  # the grad it leaves lazy reads buffers made during the capture
  return per_example.mean().realize()


Tensor.manual_seed(0)
lin = nn.Linear(8, 6)
lin.weight.requires_grad = lin.bias.requires_grad = True  # 0.12.0 needs it; later releases take it as set
rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((8, 4)).astype(np.float32)).realize()
y = Tensor(rng.standard_normal((4, 6)).astype(np.float32)).realize()
step(lin, x, y)
want = lin.weight.grad.numpy()
jit, zeros = TinyJit(step), []
for k in range(4):
  jit(lin, x, y)
  if not (got := lin.weight.grad.numpy()).any() and want.any(): zeros.append(k)
  elif not np.allclose(got, want, rtol=1e-4, atol=1e-4): print(f"call {k}: the grad differs from eager's, but is not zeros")
for k in zeros: print(f"MISMATCH lin.weight.grad at call {k}: the JIT reads zeros, eager {want.ravel()[:3]}")
print(f"{len(zeros)} calls read zeros" if zeros else "OK")
sys.exit(1 if zeros else 0)
