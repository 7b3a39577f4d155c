#!/usr/bin/env python3
"""planfuzz repro (a planner campaign's, its TARGET switched to kind='tinyjit': tinygrad's own TinyJit): GRAPH_ONE_KERNEL=0 JIT=1 JIT_BATCH_SIZE=2 NO_MEMORY_PLANNER=1, inputs fresh; calls 0 eager, 1 capture, 2 replay 1, 3 replay 2, 4 replay 3.
Every observable is read after each call, under the JIT and with the step run eagerly (the reference); each value
in CHECKS (observable, after call, reference's call, rtol, atol) is compared as planfuzz's oracle compared it.
Exit status 1: the JIT differs (reproduced); 0: it agrees."""
# finding: [wrong-values] ret[0][0] at call 2 (replay 1): compared_with=[2, 0.01, 0.001]; differing=4; examples=[[[0], 0.141845703125, 0.09423828125], [[1], 0.038482666015625, 0.1346435546875], [[2], 0.0014429092407226562, -0.0012712478637695312]]; lazy=False; lazy_at_capture=False; max_abs_err=0.202392578125; max_rel_err=2.1350337584396097; of=4. Blamed on: graph.
import os
os.environ.update({'GRAPH_ONE_KERNEL': '0'})  # read by tinygrad once per process
import sys

import numpy as np
from tinygrad import Context, Tensor, TinyJit
from tinygrad.nn.state import get_parameters

from oracle.targets import Target  # planfuzz: PlannedJit with this policy and planner

TARGET = Target(kind='tinyjit', policy='live-tensors', planner='planfuzz', graph='tinygrad', copy='tinygrad', knobs=(('GRAPH_ONE_KERNEL', 0), ('JIT', 1), ('JIT_BATCH_SIZE', 2), ('NO_MEMORY_PLANNER', 1)), prune=None, poison=True)

CHECKS = [('ret[0][0]', 2, 2, 0.01, 0.001)]  # replay 1


def data(seed, shape, dtype):
  rng = np.random.default_rng(seed)
  return (rng.standard_normal(shape) * 0.5).astype(dtype)


def param(array):
  try: return Tensor(array, requires_grad=True)
  except TypeError: pass  # not `return Tensor(array)` here: an error tinygrad raises and keeps inside it would chain
  return Tensor(array)    # this one, whose traceback holds the caller's frame and every tensor in it


class Sharded:
  def __init__(self, array, devices, axis): self.array, self.devices, self.axis = array, devices, axis
  def to_tensor(self): return Tensor(self.array).shard(self.devices, self.axis)


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
  p0 = param(data(3, (4,), 'float16')).realize()
  s0 = Tensor(data(4, (4,), 'float32')).realize()
  s1 = Tensor(data(5, (4,), 'float32')).realize()
  kept = []
  assigned = []
  def step(x0, x1, x2):
    p0.grad = x0.grad = x1.grad = x2.grad = s0.grad = s1.grad = None
    v0 = x0[1:5]
    v1 = v0.shard(shards(2), axis=0)
    v2 = v1 * x1
    v3 = v2.to(DEFAULT).contiguous_backward()
    v4 = v3 * p0
    (v4 * 1.0).sum().backward()
    p0.grad = None
    (v4 * 0.5).sum().backward()
    (v4 * 0.5).sum().backward()
    Tensor.realize(s0.assign(s0 * 0.5 + v3.detach()), s1.assign(s1 * 0.5 + 1.0))
    x2.assign(v0.detach())
    assigned[:] = [x2]
    kept[:] = [v2, v0, v3]
    return [(p0.grad, v3), (v1,), [v0, v2]]
  observe = lambda: {'p0.grad': p0.grad, 's0': s0, 's1': s1, 'x2': assigned[0], 'kept[0]': kept[0], 'kept[1]': kept[1], 'kept[2]': kept[2]}
  inputs = lambda k, prev=None: [data((1, k), (8,), 'float16'), Sharded(data((2, k), (4,), 'float32'), shards(2), 0), data((6, k), (4,), 'float16')]
  return step, observe, inputs, None


def run(jit):
  step, observe, inputs, evaluate = build()
  step = TARGET.wrap(step, False) if jit else step
  kept, seen, ret = {}, [], None
  for k in range(5):
    args = [(a.to_tensor() if isinstance(a, Sharded) else Tensor(a)).realize() if isinstance(a, (np.ndarray, Sharded)) else a for i, a in enumerate(inputs(k, ret))]
    ret = step(*args)
    if not jit: Tensor.realize(*get_parameters(ret))  # TinyJit realizes what a call returns together
    # each observable read alone, in the oracle's order
    seen.append({p: t.numpy().copy() for p, t in ({'ret[0][0]': ret[0][0], 'ret[0][1]': ret[0][1], 'ret[1][0]': ret[1][0], 'ret[2][0]': ret[2][0], 'ret[2][1]': ret[2][1]} | observe()).items() if isinstance(t, Tensor)})
  return seen


def same(g, w, rtol, atol):
  if g is None or g.shape != w.shape: return False
  return np.array_equal(g, w) if rtol == atol == 0 else np.allclose(g.astype(np.float64), w.astype(np.float64), rtol, atol, equal_nan=True)


with Context(**{'JIT': 0, 'NO_MEMORY_PLANNER': 1}): want = run(False)  # the reference
with Context(**{'JIT': 1, 'JIT_BATCH_SIZE': 2, 'NO_MEMORY_PLANNER': 1}): got = run(True)
bad = [(p, k, s) for p, k, s, rtol, atol in CHECKS if not same(got[k].get(p), want[s][p], rtol, atol)]
for p, k, s in bad: print(f"MISMATCH {p} at call {k}: jit {np.ravel(got[k].get(p))[:4]}, "
                          f"reference after call {s} {want[s][p].ravel()[:4]}")
print(f"{len(bad)} of {len(CHECKS)} values differ" if bad else f"OK: the JIT agrees on the {len(CHECKS)} value(s) compared")
sys.exit(1 if bad else 0)
