"""End to end: the fuzzer finds #16571 blind in the real tinygrad 0.13.0, and nothing in 0.14.0 (`make reproduce-16571`)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_reproduce_16571_on_real_tinygrad() -> None:
  venv = subprocess.run(["make", "-s", "venv-0.13"], cwd=ROOT, capture_output=True, text=True)
  assert venv.returncode == 0, venv.stdout + venv.stderr
  out = subprocess.run([sys.executable, "scripts/reproduce_16571.py", "--old", str(ROOT / ".venv-0.13/bin/python"),
                        "--new", sys.executable], cwd=ROOT, capture_output=True, text=True, timeout=1200)
  assert out.returncode == 0, out.stdout + out.stderr
  assert "repro on 0.13.0: exit 1; on 0.14.0: exit 0" in out.stdout and "reproduce-16571: OK" in out.stdout
