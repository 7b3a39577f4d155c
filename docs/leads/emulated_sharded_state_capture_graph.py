#!/usr/bin/env python3
"""planfuzz repro: tinygrad TinyJit GRAPH_ONE_KERNEL=1 JIT=1 JIT_BATCH_SIZE=2 NO_MEMORY_PLANNER=0, inputs fresh; calls 0 eager, 1 capture, 2 replay 1, 3 replay 2, 4 replay 3.
Every observable is read after each call, under the JIT and with the step run eagerly (the reference); each value
in CHECKS (observable, after call, reference's call, rtol, atol) is compared as planfuzz's oracle compared it.
Exit status 1: the JIT differs (reproduced); 0: it agrees."""
# finding: [wrong-values] s1 at call 1 (capture): compared_with=[1, 1e-05, 1e-06]; differing=4; examples=[[[0, 0], -0.1782354861497879, -0.04489701986312866], [[0, 1], -0.5017637014389038, -0.1912022829055786], [[1, 0], -0.45140478014945984, -0.40593546628952026]]; lazy=False; lazy_at_capture=False; max_abs_err=0.3105614185333252; max_rel_err=2.9698734279724976; of=4. Blamed on: graph.
import os
os.environ.update({'GRAPH_ONE_KERNEL': '1'})  # read by tinygrad once per process
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit
from tinygrad.nn.state import get_parameters

CHECKS = [('s1', 1, 1, 1e-05, 1e-06)]  # capture


def data(seed, shape, dtype):
  rng = np.random.default_rng(seed)
  return (rng.standard_normal(shape) * 0.5).astype(dtype)


def param(array):
  try: return Tensor(array, requires_grad=True)
  except TypeError: pass  # not `return Tensor(array)` here: an error tinygrad raises and keeps inside it would chain
  return Tensor(array)    # this one, whose traceback holds the caller's frame and every tensor in it


def second_device(default):
  kind = default.split(":")[0]
  try: Device[f"{kind}:1"]
  except Exception: return "CPU"  # no second device of this kind here
  return f"{kind}:1"


def build():
  from tinygrad import Device
  DEFAULT = Device.DEFAULT
  SECOND = second_device(DEFAULT)
  shards = lambda n: tuple(DEFAULT if i == 0 else f"{DEFAULT.split(':')[0]}:{i}" for i in range(n))
  p0 = param(data(2, (2, 2), 'float32')).realize()
  p1 = param(data(4, (4, 8, 8), 'float32')).shard(shards(4), axis=2).realize()
  s0 = Tensor(data(5, (2, 2), 'float32')).realize()
  s1 = Tensor(data(6, (2, 2), 'float32')).realize()
  kept = []
  def step(x0, x1):
    p0.grad = p1.grad = x0.grad = x1.grad = s0.grad = s1.grad = None
    v0 = x0 * 0.5
    v1 = v0.contiguous().realize()
    v2 = v1 * 0.5
    v3 = x0 + v1
    v4 = v3.cat(p0, dim=0)
    v5 = v3 * 0.5
    v6 = v5.contiguous()
    v7 = -v6
    v8 = v7.contiguous()
    v9 = x1.shard(shards(4), axis=2)
    v10 = v9 + p1
    v11 = v10.contiguous()
    v12 = v11 * 0.5
    v13 = v12.contiguous()
    v14 = v11 * v13
    v15 = v14.sum(axis=2, keepdim=True)
    v16 = v15.to(DEFAULT).contiguous_backward()
    v17 = x0 - v3
    (v16 * 0.5).sum().backward()
    Tensor.realize(s0.assign(s0 * 0.5 + v0.detach()), s1.assign(s1 * 0.5 + v17.detach()))
    kept[:] = [v2]
    return v4, v6
  observe = lambda: {'p1.grad': p1.grad, 's0': s0, 's1': s1, 'kept[0]': kept[0]}
  inputs = lambda k, prev=None: [data((1, k), (2, 2), 'float32'), data((3, k), (4, 8, 8), 'float32')]
  return step, observe, inputs, None


def run(jit):
  step, observe, inputs, evaluate = build()
  step = TinyJit(step) if jit else step
  kept, seen, ret = {}, [], None
  for k in range(5):
    args = [(Tensor(a)).realize() if isinstance(a, np.ndarray) else a for i, a in enumerate(inputs(k, ret))]
    ret = step(*args)
    if not jit: Tensor.realize(*get_parameters(ret))  # TinyJit realizes what a call returns together
    # each observable read alone, in the oracle's order
    seen.append({p: t.numpy().copy() for p, t in ({'ret[0]': ret[0], 'ret[1]': ret[1]} | observe()).items() if isinstance(t, Tensor)})
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
