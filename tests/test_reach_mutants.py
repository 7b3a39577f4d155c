"""Issue 10's proof of power, first half: each reach mutant (planner/mutants.py, wrong along one dimension only)
corrupts a hand-written program under tinygrad's own TinyJit, which the correct planner runs clean. The second half,
a fixed-seed campaign killing each blind, is in tests/test_campaigns.py."""
import pytest

from oracle.check import judge_program
from oracle.runs import SAME_BUFFER
from oracle.targets import Target
from planner import tg
from planner.mutants import MUTANTS
from planner.packer import planfuzz_planner
from tests.reach_programs import REACH


def run_under_tinyjit(name: str, planner) -> list:
  with tg.tinyjit_planner(planner):
    return judge_program(REACH[name], Target("tinyjit"), 5, SAME_BUFFER, static=False).verdict.findings


@pytest.mark.parametrize("name", list(REACH))
def test_a_reach_mutant_corrupts_tinyjit(name: str) -> None:
  found = run_under_tinyjit(name, MUTANTS[name].fn)
  assert any(f.kind in ("wrong-values", "all-zeros", "stale", "non-finite") for f in found), (name, [f.message for f in found])


@pytest.mark.parametrize("name", list(REACH))
def test_its_program_is_clean_under_a_correct_planner(name: str) -> None:
  assert run_under_tinyjit(name, planfuzz_planner) == []
