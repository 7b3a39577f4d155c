"""Planner plugins for the worker-process tests of `planfuzz run`: most take the process down on purpose."""
import atexit
import os
import time
from typing import Any


def plan(linear: Any, held: set) -> Any:
  """Aborts the process (SIGABRT), as a segfaulting native planner would."""
  os.abort()


def hang(linear: Any, held: set) -> Any:
  """Never returns."""
  while True: time.sleep(1)


def emulator_fails(linear: Any, held: set) -> Any:
  """Fails as tinygrad's GPU emulator does on an instruction it cannot compile, noting which process it failed in
  (the file PLANFUZZ_TEST_PIDS names): a worker that meets it must be retired, never used again."""
  with open(os.environ["PLANFUZZ_TEST_PIDS"], "a") as f: f.write(f"{os.getpid()}\n")
  raise RuntimeError("[emu] Failed to compile v_exp_f16_e32: CalledProcessError: clang exited with status 1")


def breaks_device(linear: Any, held: set) -> Any:
  """Fails as a hung emulated queue does, and leaves every later read in its process failing the same way (a broken
  device), noting the process it ran in (the file PLANFUZZ_TEST_PIDS names), and, at that process's exit, whether its
  finalizers ran (tinygrad's would wait on the broken device)."""
  from tinygrad import Tensor
  with open(os.environ["PLANFUZZ_TEST_PIDS"], "a") as f: f.write(f"{os.getpid()}\n")
  atexit.register(lambda: open(os.environ["PLANFUZZ_TEST_PIDS"], "a").write(f"finalized-{os.getpid()}\n"))
  def hung(*args: Any, **kwargs: Any) -> Any: raise RuntimeError("Wait timeout: 30000 ms! (simulated)")
  Tensor.numpy = hung
  hung()


def noting_pid(linear: Any, held: set) -> Any:
  """planfuzz's own planner, noting which process it ran in (the file PLANFUZZ_TEST_PIDS names)."""
  from planner.packer import planfuzz_planner
  with open(os.environ["PLANFUZZ_TEST_PIDS"], "a") as f: f.write(f"{os.getpid()}\n")
  return planfuzz_planner(linear, held)


def asserts(linear: Any, held: set) -> Any:
  """Raises AssertionError, as tinygrad's own lowering asserts on a capture it cannot take (a JIT error finding)."""
  raise AssertionError("planted: this planner cannot take the capture")


def key_error(linear: Any, held: set) -> Any:
  """Raises KeyError: what a script of an AssertionError finding must not take for its bug (a changed API, say)."""
  raise KeyError("planted")
