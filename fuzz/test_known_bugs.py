"""Every known tinygrad bug still reproduces: a strict xfail, so the day tinygrad fixes one, this turns red.

Only the repro's own verdict counts as the expected failure (exit 1 with a MISMATCH line): a repro that crashes
for another reason is a real failure, never hidden behind the xfail."""
import subprocess
import sys

import pytest

from fuzz.known_bugs import KNOWN_BUGS


class StillReproduces(AssertionError):
  pass


@pytest.mark.parametrize("bug", KNOWN_BUGS, ids=lambda b: b.name)
@pytest.mark.xfail(strict=True, raises=StillReproduces, reason="a known tinygrad bug: see fuzz/known_bugs.py")
def test_known_bug_is_fixed(bug) -> None:
  out = subprocess.run([sys.executable, str(bug.repro)], capture_output=True, text=True, timeout=300)
  if out.returncode == 1 and "MISMATCH" in out.stdout: raise StillReproduces(out.stdout)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr
