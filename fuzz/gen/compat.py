"""What a program needs that tinygrad spells differently across versions (0.12.0 on), as plain functions.

Their source is pasted into every repro script beside `data`, so a script pasted into a tinygrad bug report runs on
the reporter's version too. Only tinygrad's public API is used, and only names a script imports at its top
(`fuzz.gen.printer.imports_line`): a pasted helper that looked for another would find nothing in the script
(tests/test_pasted.py runs each one alone in such a namespace).
"""
from tinygrad import Context, Device, Tensor


def param(array):
  """A parameter leaf: tinygrad before 0.14 fills .grad only for tensors made with requires_grad=True; 0.14 dropped it."""
  return Tensor(array, requires_grad=True) if "requires_grad" in Tensor.__init__.__code__.co_varnames else Tensor(array)


def training():
  """Training mode, which an optimizer's step requires: `Tensor.train()` before 0.14, `Context(TRAINING=1)` from it."""
  return Tensor.train() if hasattr(Tensor, "train") else Context(TRAINING=1)


class Sharded:
  """An explicit input sharded over several devices: its array split on `axis` (None: a copy on each device). The
  caller makes its tensor (`Tensor(array).shard(devices, axis)`) and refills it in place on later calls."""
  def __init__(self, array, devices, axis): self.array, self.devices, self.axis = array, devices, axis
  def to_tensor(self): return Tensor(self.array).shard(self.devices, self.axis)


def second_device(default):
  """The device copies go to: a second one of the default's kind (CPU:1, AMD:1), so peer copies and the graphs that
  batch them are exercised; the CPU beside a GPU that is alone on its runner."""
  kind = default.split(":")[0]
  try: Device[f"{kind}:1"]
  except (RuntimeError, ExceptionGroup): return "CPU"  # tinygrad's 'No device found for 1' (one interface, or several)
  return f"{kind}:1"
