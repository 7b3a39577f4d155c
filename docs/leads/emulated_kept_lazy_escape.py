#!/usr/bin/env python3
"""planfuzz repro (a planner campaign's, its TARGET switched to kind='tinyjit': tinygrad's own TinyJit): GRAPH_ONE_KERNEL=0 JIT=1 JIT_BATCH_SIZE=2 NO_MEMORY_PLANNER=0, inputs same-buffer; calls 0 eager, 1 capture, 2 replay 1, 3 replay 2, 4 replay 3.
Every observable is read after each call, under the JIT and with the step run eagerly (the reference); each value
in CHECKS (observable, after call, reference's call, rtol, atol) is compared as planfuzz's oracle compared it.
Exit status 1: the JIT differs (reproduced); 0: it agrees."""
# finding: [wrong-values] kept[0] at call 2 (replay 1): compared_with=[2, 1e-05, 1e-06]; differing=256; examples=[[[0, 0, 0], 9.69481372833252, 7.553000450134277], [[0, 0, 1], 8.316668510437012, 6.4793195724487305], [[0, 0, 2], -1.0510649681091309, -0.818859875202179]]; lazy=True; lazy_at_capture=True; max_abs_err=4.140620231628418; max_rel_err=0.2835713642943948; of=256. Blamed on: capture.
import os
os.environ.update({'GRAPH_ONE_KERNEL': '0'})  # read by tinygrad once per process
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit
from tinygrad.nn.state import get_parameters

from oracle.targets import Target  # planfuzz: PlannedJit with this policy and planner

TARGET = Target(kind='tinyjit', policy='live-tensors', planner='planfuzz', graph='tinygrad', copy='tinygrad', knobs=(('GRAPH_ONE_KERNEL', 0), ('JIT', 1), ('JIT_BATCH_SIZE', 2), ('NO_MEMORY_PLANNER', 0)), prune=None, poison=True)

CHECKS = [('kept[0]', 2, 2, 1e-05, 1e-06)]  # replay 1


def data(seed, shape, dtype):
  rng = np.random.default_rng(seed)
  return (rng.standard_normal(shape) * 0.5).astype(dtype)


def param(array):
  try: return Tensor(array, requires_grad=True)
  except TypeError: pass  # not `return Tensor(array)` here: an error tinygrad raises and keeps inside it would chain
  return Tensor(array)    # this one, whose traceback holds the caller's frame and every tensor in it


def build():
  p0 = param(data(2, (8, 8, 4), 'float32')).realize()
  p1 = param(data(3, (8, 8, 4), 'float32')).realize()
  kept = []
  def step(x0):
    p0.grad = p1.grad = x0.grad = None
    v0 = x0.cast('bfloat16')
    v1 = v0.contiguous()
    v2 = v1.contiguous()
    v3 = v2.cast('float32')
    v4 = v3 * p0
    v5 = -v3
    v6 = v5.contiguous()
    v7 = v6.sum().reshape(1)
    v8 = v7.contiguous()
    v9 = -v8
    v10 = v9.contiguous()
    v11 = v6 * v10
    v12 = v11 * p1
    v13 = v8.clip(-2, 2).exp()
    v14 = v10.max(axis=0, keepdim=True)
    v15 = v14 * 2.0
    (v4 * 0.5).sum().backward()
    (v4 * 2.0).sum().backward()
    kept[:] = [v12, v13]
    return [v9, p0.grad, v2]
  observe = lambda: {'p0.grad': p0.grad, 'kept[0]': kept[0], 'kept[1]': kept[1]}
  inputs = lambda k, prev=None: [data((1, k), (8, 8, 4), 'float32')]
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
    args = [tensor(kept, i, a) if isinstance(a, np.ndarray) else a for i, a in enumerate(inputs(k, ret))]
    ret = step(*args)
    if not jit: Tensor.realize(*get_parameters(ret))  # TinyJit realizes what a call returns together
    # each observable read alone, in the oracle's order
    seen.append({p: t.numpy().copy() for p, t in ({'ret[0]': ret[0], 'ret[1]': ret[1], 'ret[2]': ret[2]} | observe()).items() if isinstance(t, Tensor)})
  return seen


def same(g, w, rtol, atol):
  if g is None or g.shape != w.shape: return False
  return np.array_equal(g, w) if rtol == atol == 0 else np.allclose(g.astype(np.float64), w.astype(np.float64), rtol, atol, equal_nan=True)


with Context(**{'JIT': 0, 'NO_MEMORY_PLANNER': 1}): want = run(False)  # the reference
with Context(**{'JIT': 1, 'JIT_BATCH_SIZE': 2, 'NO_MEMORY_PLANNER': 0}): got = run(True)
bad = [(p, k, s) for p, k, s, rtol, atol in CHECKS if not same(got[k].get(p), want[s][p], rtol, atol)]
for p, k, s in bad: print(f"MISMATCH {p} at call {k}: jit {np.ravel(got[k].get(p))[:4]}, "
                          f"reference after call {s} {want[s][p].ravel()[:4]}")
print(f"{len(bad)} of {len(CHECKS)} values differ" if bad else f"OK: the JIT agrees on the {len(CHECKS)} value(s) compared")
sys.exit(1 if bad else 0)
