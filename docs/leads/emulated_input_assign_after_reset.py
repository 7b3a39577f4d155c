#!/usr/bin/env python3
"""planfuzz repro (a planner campaign's, its TARGET switched to kind='tinyjit': tinygrad's own TinyJit): GRAPH_ONE_KERNEL=0 JIT=1 JIT_BATCH_SIZE=32 NO_MEMORY_PLANNER=0, inputs same-buffer; calls 0 eager, 1 capture, 2 eager after reset, 3 capture after reset, 4 replay 1 after reset.
Every observable is read after each call, under the JIT and with the step run eagerly (the reference); each value
in CHECKS (observable, after call, reference's call, rtol, atol) is compared as planfuzz's oracle compared it.
Exit status 1: the JIT differs (reproduced); 0: it agrees."""
# finding: [wrong-values] x1 at call 4 (replay 1 after reset): capture=3; compared_with=[4, 1e-05, 1e-06]; differing=512; examples=[[[0, 0, 0], -0.16832292079925537, 0.0], [[0, 0, 1], 0.6796339750289917, 0.0], [[0, 0, 2], 1.2578363418579102, 0.0]]; lazy=False; lazy_at_capture=True; max_abs_err=2.1764678359031677; max_rel_err=7.238054035400826e+307; of=512. Blamed on: graph.
import os
os.environ.update({'GRAPH_ONE_KERNEL': '0'})  # read by tinygrad once per process
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit, nn
from tinygrad.nn.state import get_parameters

from oracle.targets import Target  # planfuzz: PlannedJit with this policy and planner

TARGET = Target(kind='tinyjit', policy='live-tensors', planner='planfuzz', graph='tinygrad', copy='tinygrad', knobs=(('GRAPH_ONE_KERNEL', 0), ('JIT', 1), ('JIT_BATCH_SIZE', 32), ('NO_MEMORY_PLANNER', 0)), prune=None, poison=True)

CHECKS = [('x1', 4, 4, 1e-05, 1e-06)]  # replay 1 after reset


def data(seed, shape, dtype):
  rng = np.random.default_rng(seed)
  return (rng.standard_normal(shape) * 0.5).astype(dtype)


def param(array):
  try: return Tensor(array, requires_grad=True)
  except TypeError: pass  # not `return Tensor(array)` here: an error tinygrad raises and keeps inside it would chain
  return Tensor(array)    # this one, whose traceback holds the caller's frame and every tensor in it


def training():
  return Tensor.train() if hasattr(Tensor, "train") else Context(TRAINING=1)


def build():
  p0 = param(data(2, (4, 16, 8), 'float32')).realize()
  opt = nn.optim.Adam([p0], lr=0.01)
  assigned = []
  def step(x0, x1):
    p0.grad = x0.grad = x1.grad = None
    v0 = x0.pad(((0, 0), (4, 4), (0, 0)))
    v1 = v0 * p0
    (v1 * 0.5).sum().backward()
    p0.grad = None
    (v1 * 1.0).sum().backward()
    p0.grad = None
    (v1 * 1.0).sum().backward()
    Tensor.realize(p0.grad)
    with training(): opt.step()
    x1.assign(v0.detach())
    assigned[:] = [x1]
    return v1
  observe = lambda: {'p0.grad': p0.grad, 'p0': p0, 'x1': assigned[0]}
  inputs = lambda k, prev=None: [data((1, k), (4, 8, 8), 'float32'), data((3, k), (4, 16, 8), 'float32')]
  return step, observe, inputs, None


def make_jit(step, prune=False):
  """The step as a model's __call__, jitted with the decorator form."""
  decorate = lambda f: TARGET.wrap(f, prune)

  class Model:
    @decorate
    def __call__(self, *args): return step(*args)

    def reset(self): vars(Model)["__call__"].reset()

  return Model()


def tensor(kept, i, a):  # input i: the first call's tensor, refilled in place by every later call (same-buffer)
  t = Tensor(a)
  if i not in kept: kept[i] = t.realize()
  else: kept[i].assign(t).realize()
  return kept[i]


def run(jit):
  step, observe, inputs, evaluate = build()
  step = make_jit(step) if jit else step
  kept, seen, ret = {}, [], None
  for k in range(5):
    if jit and k == 2: step.reset()  # jit.reset(): this call runs eagerly, the next captures anew
    args = [tensor(kept, i, a) if isinstance(a, np.ndarray) else a for i, a in enumerate(inputs(k, ret))]
    ret = step(*args)
    if not jit: Tensor.realize(*get_parameters(ret))  # TinyJit realizes what a call returns together
    # each observable read alone, in the oracle's order
    seen.append({p: t.numpy().copy() for p, t in ({'ret': ret} | observe()).items() if isinstance(t, Tensor)})
  return seen


def same(g, w, rtol, atol):
  if g is None or g.shape != w.shape: return False
  return np.array_equal(g, w) if rtol == atol == 0 else np.allclose(g.astype(np.float64), w.astype(np.float64), rtol, atol, equal_nan=True)


with Context(**{'JIT': 0, 'NO_MEMORY_PLANNER': 1}): want = run(False)  # the reference
with Context(**{'JIT': 1, 'JIT_BATCH_SIZE': 32, 'NO_MEMORY_PLANNER': 0}): got = run(True)
bad = [(p, k, s) for p, k, s, rtol, atol in CHECKS if not same(got[k].get(p), want[s][p], rtol, atol)]
for p, k, s in bad: print(f"MISMATCH {p} at call {k}: jit {np.ravel(got[k].get(p))[:4]}, "
                          f"reference after call {s} {want[s][p].ravel()[:4]}")
print(f"{len(bad)} of {len(CHECKS)} values differ" if bad else f"OK: the JIT agrees on the {len(CHECKS)} value(s) compared")
sys.exit(1 if bad else 0)
