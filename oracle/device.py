"""Checks on the machine before anything runs: the compiler or emulator the device tinygrad will use needs.

tinygrad's CPU device compiles with the `clang` binary. Its emulated GPUs (`DEV=MOCKKFD+AMD`, what tinygrad's own CI
runs its JIT and graph tests on) need the mock driver from a tinygrad checkout's `test/mockgpu/` (not in the wheel)
on the import path, and libLLVM 19 or newer for the AMD code generator.
"""
from __future__ import annotations

import ctypes.util
import importlib.util
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

CLANG_FIX = "tinygrad's CPU device needs the clang binary: install it with `apt-get install -y clang` (or run `make setup`)"
LLVM_FIX = "tinygrad's AMD code generator needs libLLVM 19 or newer: install it with `apt-get install -y libllvm19` " \
           "(or run `make fuzz-gpu`, which does)"
EMULATOR = "emulator"  # the rejection class of a program the emulated GPU could not run
HANG = "Wait timeout"  # what tinygrad's HCQ devices raise when a queue never reaches the signal value it waits for
SHARED_MOCK = Path(__file__).resolve().parent.parent.parent / "shared" / "tinygrad-mockgpu"


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]: return os.environ if env is None else env


def device_kind(env: dict[str, str] | None = None) -> str:
  """The kind of device tinygrad will use by default: AMD for DEV=MOCKKFD+AMD:gfx1100, CPU when DEV is unset."""
  dev = _env(env).get("DEV", "") or "CPU"
  return dev.split(";")[0].split("+")[-1].split(":")[0].upper()


def emulated(env: dict[str, str] | None = None) -> bool:
  """Whether DEV names one of tinygrad's mock drivers (MOCKKFD, MOCKPCI, ...): a GPU emulated on the CPU."""
  return (_env(env).get("DEV", "") or "").upper().startswith("MOCK")


def mock_root(env: dict[str, str] | None = None) -> Path | None:
  """Where tinygrad's mock GPU files are: the tinygrad checkout TINYGRAD_REPO names (as tinygrad's own CI has them),
  else the unmodified copy in ../shared/tinygrad-mockgpu; None when neither has them."""
  repo = _env(env).get("TINYGRAD_REPO")
  for root in ([Path(repo)] if repo else []) + [SHARED_MOCK]:
    if _has_mock(root): return root.resolve()
  return None


def emulated_environment(*paths: str) -> dict[str, str] | None:
  """DEV and PYTHONPATH for a process on tinygrad's emulated AMD GPU (the mock files first, then `paths`); None when the
  mock files are not found."""
  if (root := mock_root()) is None: return None
  return {"DEV": "MOCKKFD+AMD", "PYTHONPATH": os.pathsep.join([str(root), *paths])}


def emulated_process(*paths: str) -> tuple[dict[str, str] | None, str]:
  """This process's environment for a subprocess on tinygrad's emulated AMD GPU (`paths` after the mock files on its
  import path), or None and the reason it cannot run one here."""
  if (emulated_env := emulated_environment(*paths)) is None:
    return None, "tinygrad's mock GPU files were not found (set TINYGRAD_REPO, or provide ../shared/tinygrad-mockgpu)"
  env = dict(os.environ) | emulated_env
  if (fix := missing_compiler(env)) is not None: return None, fix
  return env, ""


def _mock_importable(env: dict[str, str] | None) -> bool:
  """Whether a process with `env` imports tinygrad's mock driver: from this process's path, or from its PYTHONPATH."""
  paths = [p for p in (_env(env).get("PYTHONPATH") or "").split(os.pathsep) if p]
  return importlib.util.find_spec("test.mockgpu") is not None or any(_has_mock(Path(p)) for p in paths)


def _has_mock(root: Path) -> bool: return (root / "test" / "mockgpu" / "mockgpu.py").is_file()


def missing_compiler(env: dict[str, str] | None = None) -> str | None:
  """The fix to print when the device tinygrad will use cannot compile or run kernels here, else None."""
  kind = device_kind(env)
  if kind == "CPU" or emulated(env):  # the emulator runs each instruction as a kernel on the CPU device
    if shutil.which("clang") is None: return CLANG_FIX
  if not emulated(env): return None
  if not _mock_importable(env):
    fix = f"run with PYTHONPATH={where} (or `make fuzz-gpu`)" if (where := mock_root(env)) else \
      "clone tinygrad and set TINYGRAD_REPO to it, or provide ../shared/tinygrad-mockgpu, then run `make fuzz-gpu`"
    return f"DEV={_env(env).get('DEV')} emulates a GPU with tinygrad's mock driver (test/mockgpu/), " \
           f"which is not on the import path: {fix}"
  if kind == "AMD" and not any(ctypes.util.find_library(f"LLVM-{v}") for v in range(19, 30)): return LLVM_FIX
  return None


def emulator_failure(e: BaseException | None) -> bool:
  """An error raised inside tinygrad's GPU emulator, anywhere in the chain of causes: the emulator's limit, not the
  program's nor the JIT's. Either an instruction it cannot compile or run ('[emu] ...'), or, on an emulated device, a
  queue that never finished (tinygrad's 'Wait timeout'): the emulator's queues hang now and then, in eager runs as in
  the JIT's (7 of about 2,700 examples of two emulated tinyjit campaigns; the one met in a JIT run did not hang again in
  a fresh process), so a hang there cannot be told from the emulator's own. On a real GPU a hang stays a finding. The
  emulated device may stay broken after either, so the process that met it is retired (fuzz/campaign/explore.py)."""
  seen: set[int] = set()
  while e is not None and id(e) not in seen:
    if "[emu]" in str(e) or (HANG in str(e) and emulated()): return True
    seen.add(id(e))
    e = e.__cause__ or e.__context__
  return False
