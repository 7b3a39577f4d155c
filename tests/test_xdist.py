"""`pytest fuzz/ -n W` (pytest-xdist): the property split into shards runs exactly the examples one process runs."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.campaign.outcome import Outcome
from fuzz.campaign.stats import Stats
from oracle.compare import Verdict

ROOT = Path(__file__).resolve().parent.parent


def test_stats_merge_adds_workers_side_by_side() -> None:
  a, b, total = Stats(), Stats(), Stats()
  a.record(Outcome.of(Verdict(compared=3)), 0.5)
  b.record(Outcome.of(Verdict(compared=4, rejected="JitError: refused")), 1.5)
  for s in (a, b): total.merge(s.to_plain())
  assert (total.examples, total.compared, total.workers, sum(total.rejected.values())) == (2, 7, 2, 1)
  assert total.span[0] <= min(a.span[0], b.span[0]) and total.span[1] >= max(a.span[1], b.span[1])
  assert any(line.startswith("wall clock:") and "over 2 workers" in line for line in total.summary())


def _session(workers: int, tmp_path: Path) -> str:
  cmd = [sys.executable, "-m", "pytest", "fuzz/test_fuzz.py", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=3",
         "--examples", "16", "-n", str(workers), "--repro-dir", str(tmp_path)]
  out = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PLANFUZZ_PROFILE": "ci"}, capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
  return out.stdout


@pytest.mark.slow
def test_two_workers_run_the_examples_one_process_runs(tmp_path: Path) -> None:
  one, two = _session(0, tmp_path), _session(2, tmp_path)
  counts = [re.search(r"^(\d+) examples in .*; (\d+) observables compared$", out, re.M) for out in (one, two)]
  assert all(counts) and counts[0].groups() == counts[1].groups() and counts[0].group(1) == "16", one + two
  assert "2 passed" in two and re.search(r"^wall clock: .* over 2 workers", two, re.M), two
