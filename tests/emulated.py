"""Running planfuzz on tinygrad's emulated AMD GPU from a test: the environment a subprocess needs, or a plain skip.

The emulator (a tinygrad checkout's test/mockgpu/, or ../shared/tinygrad-mockgpu) runs tinygrad's real AMD runtime,
HCQGraph included, on the CPU; a test that needs it runs it in a subprocess, since DEV is read once per process.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oracle.device import emulated_process

ROOT = Path(__file__).resolve().parent.parent


def emulated_env() -> dict[str, str]:
  """The environment of a planfuzz subprocess on the emulated GPU; the test is skipped, saying why, without one."""
  env, why = emulated_process(str(ROOT))
  if env is None: pytest.skip(f"the emulated-GPU checks did not run: {why}")
  return {k: v for k, v in env.items() if not k.startswith("PYTEST_")}  # a session of its own, not an xdist worker's


def run_emulated(args: list[str], timeout: float) -> subprocess.CompletedProcess:
  """`python ARGS` in the project root on the emulated GPU."""
  return subprocess.run([sys.executable, *args], cwd=ROOT, env=emulated_env(), capture_output=True, text=True, timeout=timeout)
