"""Hand-written programs, one per dimension of issue 10's reach, each the smallest step a planner wrong only along that
dimension corrupts: the proof (tests/test_reach_mutants.py) that each reach mutant is a real bug under tinygrad's own
TinyJit, before a campaign is asked to find it blind."""
from __future__ import annotations

import numpy as np
from tinygrad import Device, Tensor

from oracle.subject import Subject


def arr(seed: int, *shape: int) -> np.ndarray: return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def shards(n: int) -> tuple[str, ...]:
  base = Device.DEFAULT.split(":")[0]
  return tuple(Device.DEFAULT if i == 0 else f"{base}:{i}" for i in range(n))


def sharded_lazy_grad() -> Subject:
  """A sharded parameter's .grad left lazy: its graph reads sharded BUFFERs the capture made, which must stay held."""
  w = Tensor(arr(1, 8, 4)).shard(shards(2), axis=0).realize()
  def step(x: Tensor) -> Tensor:
    h = (x.shard(shards(2), axis=0) * w).relu().contiguous()
    (h * h).sum().backward()
    return h.sum(0).to(Device.DEFAULT).realize()
  return Subject(step, lambda k, _: [arr(100 + k, 8, 4)], lambda: {"w.grad": w.grad})


def two_sharded_live() -> Subject:
  """Two sharded intermediates of 1 KiB each live at once: sized as one device's share, they overlap."""
  w = Tensor(arr(2, 32, 16)).shard(shards(2), axis=0).realize()
  def step(x: Tensor) -> Tensor:
    xs = x.shard(shards(2), axis=0)
    a, b = (xs * w).contiguous(), (xs + w).exp().contiguous()
    return ((a * b).sum(0) + a.max(0)).to(Device.DEFAULT).realize()
  return Subject(step, lambda k, _: [arr(200 + k, 32, 16)])


def two_big_live() -> Subject:
  """Two 64 KiB intermediates live at once: the second starts 64 KiB into the arena."""
  def step(x: Tensor) -> Tensor:
    a, b = (x * 2).contiguous(), (x + 1).exp().contiguous()
    return (a * b).sum(0).realize()
  return Subject(step, lambda k, _: [arr(300 + k, 128, 128)])


def scalar_beside_buffer() -> Subject:
  """A one-element buffer made while a bigger one at the arena's start is still to be read."""
  def step(x: Tensor) -> Tensor:
    y = (x * 2).contiguous()
    t = y.sum().reshape(1).contiguous()
    return (y * t).sum(0).realize()
  return Subject(step, lambda k, _: [arr(400 + k, 8, 8)])


def wide_beside_narrow() -> Subject:
  """A 512-byte float64 buffer live while a float32 one is made after it."""
  def step(x: Tensor) -> Tensor:
    a = x.cast("float64").exp().contiguous()
    b = (x * 3).contiguous()
    return (a.cast("float32") * b).sum(0).realize()
  return Subject(step, lambda k, _: [arr(500 + k, 8, 8)])


def deep_skip() -> Subject:
  """A 20-layer model whose first activation is read again after the last layer (a skip over 20 steps)."""
  ws = [Tensor(arr(600 + i, 8, 8) * 0.3).realize() for i in range(20)]
  def step(x: Tensor) -> Tensor:
    first = h = (x @ ws[0]).relu().contiguous()
    for w in ws[1:]: h = (h @ w).relu().contiguous()
    return (h + first).sum(0).realize()
  return Subject(step, lambda k, _: [arr(700 + k, 4, 8)])


# mutant -> the program it corrupts under tinygrad's own TinyJit
REACH = {"held-single-device-only": sharded_lazy_grad, "shard-share-sizes": two_sharded_live, "offset-16bit": two_big_live,
         "scalars-unplaced": scalar_beside_buffer, "wide-as-4": wide_beside_narrow, "lifetime-window": deep_skip}
