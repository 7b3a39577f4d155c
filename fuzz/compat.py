"""What a program needs that tinygrad spells differently across versions (0.12.0 on), as plain functions.

Their source is pasted into every repro script beside `data`, so a script pasted into a tinygrad bug report runs on
the reporter's version too. Only tinygrad's public API is used.
"""
from tinygrad import Context, Tensor


def param(array):
  """A parameter leaf: tinygrad before 0.14 fills .grad only for tensors made with requires_grad=True; 0.14 dropped it."""
  try: return Tensor(array, requires_grad=True)
  except TypeError: return Tensor(array)


def training():
  """Training mode, which an optimizer's step requires: `Tensor.train()` before 0.14, `Context(TRAINING=1)` from it."""
  return Tensor.train() if hasattr(Tensor, "train") else Context(TRAINING=1)
