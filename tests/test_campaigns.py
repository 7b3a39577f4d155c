"""Proof the fuzzer works, on fixed seeds and budgets: blind detection, no false alarms, every mutant killed.

Marked slow (minutes): `make test` and CI run them. Budgets are the issue's: 300 clean examples per target."""
import subprocess
import sys

import pytest

from fuzz.campaign import run_campaign
from fuzz.printer import to_script
from oracle.targets import Target
from planner.mutants import MUTANTS

CLEAN_BUDGET, MUTANT_BUDGET = 300, 200


@pytest.mark.slow
def test_long_campaign_reports_nothing_but_known_bugs() -> None:
  """PlannedJit with the defaults and tinygrad's own TinyJit, each program judged against one shared reference run."""
  c = run_campaign((Target(), Target("tinyjit")), 0, CLEAN_BUDGET, stop_at_finding=False)
  assert c.found is None, c.found and f"{c.found.target.describe()}:\n" + "\n".join(f.message for f in c.found.verdict.findings[:3])
  assert c.stats.examples == 2 * CLEAN_BUDGET and c.stats.compared > 2 * CLEAN_BUDGET
  assert sum(c.stats.rejected.values()) < 0.01 * 2 * CLEAN_BUDGET, c.stats.rejected


@pytest.mark.slow
def test_returned_only_is_found_blind_and_its_repro_reproduces(tmp_path) -> None:
  target = Target(policy="returned-only")
  found = run_campaign(target, 0, 100).found
  assert found is not None and any(f.kind in ("all-zeros", "wrong-values", "non-finite", "invariant:live-planned")
                                   for f in found.verdict.findings)
  script = to_script(found.program, target, found.mode, 5, found.verdict.findings[0])
  program = script.split("def build():")[1].split("\ndef ")[0]
  assert len(program.strip().splitlines()) < 30
  path = tmp_path / "repro.py"
  path.write_text(script)
  out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
  assert out.returncode == 1 and "MISMATCH" in out.stdout, out.stdout + out.stderr


def _killed(name: str) -> bool:
  for kind in ("static", "planner"):
    if MUTANTS[name].kind in ("graph", "copy") and kind == "static": continue  # graph-split and replays need a run
    target = Target.for_mutant(name)
    if run_campaign(Target(kind, target.policy, target.planner, target.graph), 0, MUTANT_BUDGET).found is not None: return True
  return False


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MUTANTS))
def test_every_mutant_is_killed(name: str) -> None:
  assert _killed(name), f"mutant {name} ({MUTANTS[name].doc}) survived {MUTANT_BUDGET} static and dynamic examples"
