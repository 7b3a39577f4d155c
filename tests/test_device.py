"""A missing clang is named with its fix before any tinygrad traceback."""
import pytest

from oracle import device


def test_missing_clang_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setattr(device.shutil, "which", lambda name: None)
  assert "apt-get install -y clang" in device.missing_compiler({"DEV": "CPU"})
  assert device.missing_compiler({"DEV": "CUDA"}) is None


def test_clang_present_here() -> None:
  assert device.missing_compiler({}) is None
