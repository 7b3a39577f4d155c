"""Small hand-written programs for the oracle's own tests: one documented JIT behaviour or one bug mechanism each."""
from __future__ import annotations

import numpy as np
from tinygrad import Tensor, nn

from oracle.subject import Subject


def arrays(k: int, *shapes: tuple[int, ...]) -> list[np.ndarray]:
  rng = np.random.default_rng(1000 + k)
  return [rng.standard_normal(s, dtype=np.float32) for s in shapes]


def param(seed: int, *shape: int) -> Tensor: return Tensor(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)).realize()


def step_16571(conv: nn.Conv2d):
  """The #16571 step from the facts file: two backward passes, the weight grad reset between them, grads left lazy."""
  def step(x: Tensor, y: Tensor) -> Tensor:
    loss = (conv(x.permute(0, 3, 1, 2).contiguous()) - y).square()
    loss.sum().backward()
    conv.weight.grad = None
    (loss * 0.5).sum().backward()
    return loss.mean().realize()
  return step


def conv_16571() -> Subject:
  """The #16571 step on seeded weights and inputs, observing both grads."""
  conv = nn.Conv2d(3, 4, 3)
  conv.weight.assign(param(1, *conv.weight.shape)).realize()
  conv.bias.assign(param(2, *conv.bias.shape)).realize()
  return Subject(step_16571(conv), lambda k, _: arrays(k, (2, 8, 8, 3), (2, 4, 6, 6)),
                 lambda: {"conv.weight.grad": conv.weight.grad, "conv.bias.grad": conv.bias.grad})


def returns_input_view() -> Subject:
  """Returns an input unchanged and a reshape of it next to a real result: replays hand back the capture-time objects."""
  return Subject(lambda x: (x, x.reshape(2, 8), (x * 2).realize()), lambda k, _: arrays(k, (16,)))


def kept_lazy() -> Subject:
  """A lazy tensor stored outside the step and read after the call: with fresh inputs the JIT leaves it undefined."""
  w, kept = param(3, 8, 8), []
  def step(x: Tensor) -> Tensor:
    h = (x @ w).relu()
    kept[:] = [h * 3]
    return h.sum().realize()
  return Subject(step, lambda k, _: arrays(k, (4, 8)), lambda: {"kept[0]": kept[0]})


def implicit_state() -> Subject:
  """State reached through a closure, updated in place inside the step: an implicit input bound by buffer identity."""
  s = param(4, 8)
  def step(x: Tensor) -> Tensor:
    s.assign(s * 0.5 + x).realize()
    return (s * 2).realize()
  return Subject(step, lambda k, _: arrays(k, (8,)), lambda: {"s": s})


def seeded_rand() -> Subject:
  """Tensor.rand draws anew on each replay; with the same seed and draw order the stream equals eager's."""
  Tensor.manual_seed(7)
  return Subject(lambda x: (x + Tensor.rand(8)).realize(), lambda k, _: arrays(k, (8,)))


def duplicate_inputs() -> Subject:
  """The same tensor twice as explicit inputs: TinyJit refuses it (JitError), an expected rejection."""
  return Subject(lambda a, b: (a + b).realize(), lambda k, prev: [t := Tensor(arrays(k, (8,))[0]).realize(), t])


def eager_error() -> Subject:
  """Invalid in eager already (a shape mismatch): the program is rejected, never a finding."""
  return Subject(lambda a: (a + Tensor.ones(3)).realize(), lambda k, _: arrays(k, (8,)))


def item_in_capture() -> Subject:
  """.item() during capture raises JitError by design."""
  return Subject(lambda a: (a * float(a.sum().item())).realize(), lambda k, _: arrays(k, (8,)))


def pruned_closure() -> Subject:
  """With prune=True the input-independent update of a closure tensor runs once: it freezes (documented)."""
  c = param(5, 8)
  def step(x: Tensor) -> Tensor:
    c.assign(c + 1).realize()
    return (x * c).realize()
  return Subject(step, lambda k, _: arrays(k, (8,)), prune=True)


def grad_read_after_update() -> Subject:
  """SGD-like update after backward, grads realized before the update (the facts' rule for tinygrad#17074)."""
  w = param(6, 8, 4)
  def step(x: Tensor) -> Tensor:
    w.grad = None
    loss = (x @ w).square().mean()
    loss.backward()
    w.grad.realize()
    w.assign(w - w.grad * 0.1).realize()
    return loss.realize()
  return Subject(step, lambda k, _: arrays(k, (2, 8)), lambda: {"w": w, "w.grad": w.grad})


def realize_cuts_autograd() -> Subject:
  """.realize() on an intermediate cuts autograd through it, in eager and JIT alike: w0 gets no grad."""
  w0, w1 = param(7, 8, 8), param(8, 8, 8)
  def step(x: Tensor) -> Tensor:
    w0.grad = w1.grad = None
    h = (x @ w0).realize()
    loss = (h @ w1).sum()
    loss.backward()
    return loss.realize()
  return Subject(step, lambda k, _: arrays(k, (2, 8)), lambda: {"w0.grad": w0.grad, "w1.grad": w1.grad})
