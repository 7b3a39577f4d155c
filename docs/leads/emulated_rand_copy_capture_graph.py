#!/usr/bin/env python3
"""planfuzz repro: tinygrad TinyJit GRAPH_ONE_KERNEL=0 JIT=1 JIT_BATCH_SIZE=0 NO_MEMORY_PLANNER=0, inputs fresh; calls 0 eager, 1 capture, 2 replay 1, 3 replay 2, 4 replay 3.
Every observable is read after each call, under the JIT and with the step run eagerly (the reference); each value
in CHECKS (observable, after call, reference's call, rtol, atol) is compared as planfuzz's oracle compared it.
Exit status 1: the JIT differs (reproduced); 0: it agrees."""
# finding: [wrong-values] ret at call 1 (capture): compared_with=[1, 1e-05, 1e-06]; differing=128; examples=[[[0, 0, 0], 1.1254674196243286, 1.1069971323013306], [[0, 0, 1], 1.27323317527771, 1.2964487075805664], [[0, 0, 2], 1.0444800853729248, 1.2809648513793945]]; lazy=False; lazy_at_capture=False; max_abs_err=0.41253864765167236; max_rel_err=0.40135631614949374; of=128. Blamed on: graph.
import os
os.environ.update({'GRAPH_ONE_KERNEL': '0'})  # read by tinygrad once per process
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit, nn
from tinygrad.nn.state import get_parameters

CHECKS = [('ret', 1, 1, 1e-05, 1e-06)]  # capture


def data(seed, shape, dtype):
  rng = np.random.default_rng(seed)
  return (rng.standard_normal(shape) * 0.5).astype(dtype)


def param(array):
  try: return Tensor(array, requires_grad=True)
  except TypeError: pass  # not `return Tensor(array)` here: an error tinygrad raises and keeps inside it would chain
  return Tensor(array)    # this one, whose traceback holds the caller's frame and every tensor in it


def training():
  return Tensor.train() if hasattr(Tensor, "train") else Context(TRAINING=1)


def second_device(default):
  kind = default.split(":")[0]
  try: Device[f"{kind}:1"]
  except Exception: return "CPU"  # no second device of this kind here
  return f"{kind}:1"


def build():
  from tinygrad import Device
  DEFAULT = Device.DEFAULT
  SECOND = second_device(DEFAULT)
  Tensor.manual_seed(1)
  p0 = param(data(2, (8, 2, 8), 'float32')).realize()
  opt = nn.optim.SGD([p0], lr=0.01)
  kept = []
  def step(x0):
    p0.grad = x0.grad = None
    v0 = x0.permute((0, 1, 2))
    v1 = Tensor.rand((8, 2, 8)).realize()
    v2 = v0 + v1
    v3 = v2 * v1
    v4 = v0 - v2
    v5 = v0.permute((0, 2, 1))
    v6 = v4.to(SECOND)
    v7 = -v6
    v8 = (v7.abs() + 1).sqrt()
    v9 = v8.to(DEFAULT)
    v10 = v9 * p0
    (v10 * 2.0).sum().backward()
    Tensor.realize(p0.grad)
    with training(): opt.step()
    kept[:] = [v8, v0]
    return v8
  observe = lambda: {'p0.grad': p0.grad, 'p0': p0, 'kept[0]': kept[0], 'kept[1]': kept[1]}
  inputs = lambda k, prev=None: [data((1, k), (8, 2, 8), 'float32')]
  return step, observe, inputs, None


def make_jit(step, prune=False):
  """The step as a model's __call__, jitted with the decorator form."""
  try: decorate = TinyJit(prune=prune)
  except TypeError: decorate = lambda f: TinyJit(f, prune=prune)  # before 0.14

  class Model:
    @decorate
    def __call__(self, *args): return step(*args)

    def reset(self): vars(Model)["__call__"].reset()

  return Model()


def run(jit):
  step, observe, inputs, evaluate = build()
  step = make_jit(step) if jit else step
  kept, seen, ret = {}, [], None
  for k in range(5):
    args = [(Tensor(a)).realize() if isinstance(a, np.ndarray) else a for i, a in enumerate(inputs(k, ret))]
    ret = step(*args)
    if not jit: Tensor.realize(*get_parameters(ret))  # TinyJit realizes what a call returns together
    # each observable read alone, in the oracle's order
    seen.append({p: t.numpy().copy() for p, t in ({'ret': ret} | observe()).items() if isinstance(t, Tensor)})
  return seen


def same(g, w, rtol, atol):
  if g is None or g.shape != w.shape: return False
  return np.array_equal(g, w) if rtol == atol == 0 else np.allclose(g.astype(np.float64), w.astype(np.float64), rtol, atol, equal_nan=True)


with Context(**{'JIT': 0, 'NO_MEMORY_PLANNER': 1}): want = run(False)  # the reference
with Context(**{'JIT': 1, 'JIT_BATCH_SIZE': 0, 'NO_MEMORY_PLANNER': 0}): got = run(True)
bad = [(p, k, s) for p, k, s, rtol, atol in CHECKS if not same(got[k].get(p), want[s][p], rtol, atol)]
for p, k, s in bad: print(f"MISMATCH {p} at call {k}: jit {np.ravel(got[k].get(p))[:4]}, "
                          f"reference after call {s} {want[s][p].ravel()[:4]}")
print(f"{len(bad)} of {len(CHECKS)} values differ" if bad else f"OK: the JIT agrees on the {len(CHECKS)} value(s) compared")
sys.exit(1 if bad else 0)
