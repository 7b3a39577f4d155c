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


@pytest.mark.parametrize("target", ["planner", "tinyjit"])
def test_an_unsound_prune_is_the_known_prune_bug(target: str) -> None:
  """Every finding the prune bug's mechanism produces, once blamed, is that known bug and nothing else."""
  from fuzz.known_bugs import known_bug
  from oracle.check import check
  from oracle.targets import Target
  from tests.programs import prune_reads_updated_state
  verdict = check(prune_reads_updated_state, Target(target))
  assert len(verdict.findings) == 4
  assert {known_bug(f).name for f in verdict.findings} == {"prune-freezes-state-reader"}
