"""tinygrad's GPU emulator (a tinygrad checkout's test/mockgpu/amd/emu.py): made faster without changing a result, and
told apart when it stopped working.

Profiled on the default emulated campaign (40 examples at seed 5, one process): 28% of the time went to decoding
instructions, because the emulator's table of decoded instructions lives for one dispatch, so every kernel launch
decodes its whole program again (~0.2 ms an instruction). Decoding is a pure function of the instruction's bytes, so
planfuzz memoizes it by them, across dispatches; the emulator's files stay as tinygrad ships them.

The mock driver also slows down as a process lives: it watches every uncached allocation (signals, a graph's kernel
arguments) for writes and never stops watching a freed one, and every memoryview made anywhere (two per emulated
wave) searches that list. One entry a JIT capture: a worker at 1,200 examples of the seed-20261211 tinyjit campaign ran
at a third of its first rate, 83% of its time in that search. planfuzz stops watching an allocation when it is freed.
"""
from __future__ import annotations

import ctypes
import functools
import importlib
from typing import Any

from tinygrad import Tensor

from fuzz.campaign.outcome import Outcome
from oracle.compare import Verdict, rejection
from oracle.device import EMULATOR, emulated, emulator_failure

INSTRUCTION_BYTES = 16  # what the emulator reads at a pc to decode one instruction (its longest, with a literal)


@functools.cache
def speed_up() -> bool:
  """Memoize the emulator's instruction decode in this process (once); False where no emulator runs here."""
  if not emulated(): return False
  try: emu = importlib.import_module("test.mockgpu.amd.emu")
  except ImportError: return False
  decode, decoded = emu._decode_at, {}

  def decode_at(pc: int, arch: str) -> Any:
    key = (bytes((ctypes.c_char * INSTRUCTION_BYTES).from_address(pc).raw), arch)
    if (hit := decoded.get(key)) is None: hit = decoded[key] = decode(pc, arch)  # a failure raises, and is not kept
    return hit
  emu._decode_at = decode_at
  _untrack_freed(importlib.import_module("test.mockgpu.amd.amddriver"))
  return True


def _untrack_freed(amd: Any) -> None:
  """The AMD mock driver drops its write watch on an allocation when the allocation is freed."""
  free, real = amd.kfd_ioctls.AMDKFD_IOC_FREE_MEMORY_OF_GPU, amd.AMDDriver.kfd_ioctl

  def kfd_ioctl(self: Any, req: int, argp: int) -> Any:
    if req & 0xFF != free: return real(self, req, argp)
    freed = self.object_by_handle.get(amd.kfd_headers[free].from_address(argp).handle)
    ret = real(self, req, argp)
    if freed is not None:
      watched = (freed.va_addr, freed.va_addr + freed.size)
      self.tracked_addresses[:] = [t for t in self.tracked_addresses if t[:2] != watched]
    return ret
  amd.AMDDriver.kfd_ioctl = kfd_ioctl


def rejected(e: BaseException) -> Outcome | None:
  """The outcome of an example whose run raised `e` inside tinygrad's GPU emulator (its limit: rejected), or None where
  `e` is not the emulator's (then it is the oracle's own error)."""
  return Outcome.of(Verdict(rejected=rejection(e))) if emulator_failure(e) else None


def unusable_after(outcome: Outcome, planted: str | None = None) -> str | None:
  """Why this process's emulated device can run no further example after `outcome` (None: it still can). A program
  with an instruction the emulator cannot run leaves it in an error state; so may any program that raised. And a
  replay mutant `planted` in this process that showed (a finding) replayed kernels on buffers it should not have: on
  the emulated device that can leave its memory corrupt without raising, and every later example of the process then
  fails in eager too (RecursionError, 'Allocation of 8 B failed on AMD': seen after graph-stale-inputs showed)."""
  if (outcome.rejected or "").startswith(EMULATOR): return f"its emulated device stopped working ({outcome.rejected[:160]})"
  if outcome.raised and device_broken(): return "its emulated device stopped working"
  if planted is not None and outcome.findings and emulated():
    return f"the planted {planted} showed: its replays may have left the emulated device's memory corrupt"
  return None


def device_broken() -> bool:
  """Whether the emulated device stopped working, probed with one tiny kernel after an example that raised: an
  instruction it cannot run leaves it in an error state (it raises at once), a queue that never finishes makes every
  later wait time out (30 s each). Either way every later program in the process fails too, so the worker retires
  (fuzz/campaign/explore.py). Never on a real device: there an error is the program's."""
  if not emulated(): return False
  try: Tensor([1.0, 2.0]).contiguous().add(1).numpy()
  except Exception: return True
  return False
