"""A missing clang is named with its fix before any tinygrad traceback."""
import os
from pathlib import Path

import pytest

from oracle import device


def test_missing_clang_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setattr(device.shutil, "which", lambda name: None)
  assert "apt-get install -y clang" in device.missing_compiler({"DEV": "CPU"})
  assert device.missing_compiler({"DEV": "CUDA"}) is None


def test_clang_present_here() -> None:
  assert device.missing_compiler({}) is None


def test_the_device_kind_and_emulation_are_read_off_dev() -> None:
  assert device.device_kind({"DEV": "MOCKKFD+AMD:gfx1100"}) == "AMD" and device.emulated({"DEV": "MOCKKFD+AMD"})
  assert device.device_kind({}) == "CPU" and not device.emulated({"DEV": "CUDA"})


def test_a_missing_mock_driver_or_llvm_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setattr(device.importlib.util, "find_spec", lambda name: None)
  monkeypatch.setattr(device, "SHARED_MOCK", Path("/nowhere"))
  assert "set TINYGRAD_REPO" in device.missing_compiler({"DEV": "MOCKKFD+AMD"})  # no files anywhere: where to get them
  monkeypatch.setattr(device.importlib.util, "find_spec", lambda name: object())
  monkeypatch.setattr(device.ctypes.util, "find_library", lambda name: None)
  assert "apt-get install -y libllvm19" in device.missing_compiler({"DEV": "MOCKKFD+AMD"})


def test_an_error_inside_the_emulator_is_told_by_its_chain() -> None:
  try:
    try: raise RuntimeError("[emu] Failed to compile v_exp_f16_e32: CalledProcessError")
    except RuntimeError as inner: raise ValueError("AMD synchronization failed") from inner
  except ValueError as e: outer = e
  assert device.emulator_failure(outer) and not device.emulator_failure(ValueError("no")) and not device.emulator_failure(None)


def test_a_hang_is_the_emulators_only_on_an_emulated_device(monkeypatch: pytest.MonkeyPatch) -> None:
  """A queue that never finished: the emulator's on the emulated GPU (its queues hang now and then), a finding on a
  real one."""
  hang = RuntimeError("Wait timeout: 30000 ms! (the signal is not set to 51546, but 51545)")
  from oracle.compare import rejection
  monkeypatch.setenv("DEV", "MOCKKFD+AMD")
  assert device.emulator_failure(hang) and rejection(hang).startswith("emulator: RuntimeError: Wait timeout")
  monkeypatch.setenv("DEV", "AMD")
  assert not device.emulator_failure(hang)


def test_a_tinygrad_checkout_named_by_tinygrad_repo_comes_first(tmp_path: Path) -> None:
  """As tinygrad's own CI has the mock driver: in its checkout's test/mockgpu/."""
  assert device.mock_root({"TINYGRAD_REPO": str(tmp_path)}) != tmp_path
  (tmp_path / "test" / "mockgpu").mkdir(parents=True)
  (tmp_path / "test" / "mockgpu" / "mockgpu.py").write_text("")
  assert device.mock_root({"TINYGRAD_REPO": str(tmp_path)}) == tmp_path.resolve()


def test_an_emulator_failure_is_a_rejection_of_its_own_in_any_run() -> None:
  from oracle.compare import rejection
  assert rejection(RuntimeError("[emu] Failed to compile v_exp_f16_e32")).startswith("emulator: RuntimeError")
  assert rejection(ValueError("cycle detected in assign graph")).startswith("eager: ValueError")


def test_an_emulated_subprocess_gets_its_environment_or_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
  """One answer for every test that starts a process on the emulated GPU: its environment, or why there is none."""
  monkeypatch.setattr(device, "SHARED_MOCK", tmp_path)
  monkeypatch.delenv("TINYGRAD_REPO", raising=False)
  env, why = device.emulated_process("/extra")
  assert env is None and "mock GPU files were not found" in why
  (tmp_path / "test" / "mockgpu").mkdir(parents=True)
  (tmp_path / "test" / "mockgpu" / "mockgpu.py").touch()
  monkeypatch.setattr(device.ctypes.util, "find_library", lambda name: None)
  env, why = device.emulated_process("/extra")
  assert env is None and "libllvm19" in why  # the mock files are on the subprocess's path: what it lacks is libLLVM
  monkeypatch.setattr(device.ctypes.util, "find_library", lambda name: "libLLVM-19.so")
  env, why = device.emulated_process("/extra")
  assert env is not None and why == ""
  assert env["DEV"] == "MOCKKFD+AMD" and env["PYTHONPATH"] == f"{tmp_path.resolve()}{os.pathsep}/extra"
