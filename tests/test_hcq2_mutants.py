"""Power on the HCQ2 path: each HCQ2 replay mutant corrupts a hand-written program under tinygrad's own TinyJit with
HCQ2=1 on the CPU, where the unpatched runtime agrees, and changes nothing where HCQ2 is off (it is wrong only
there); the census counts HCQ2's rows from the 'hcq' calls that ran."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.campaign.census import Census
from fuzz.gen.program import Leaf, Program
from planner.engines import ENGINES, of_engine
from planner.engines.hcq2 import ROWS, Captured, HcqCall
from tests.hcq2_programs import PROGRAMS

ROOT = Path(__file__).resolve().parent.parent


def mutant_runs(hcq2: bool) -> dict[str, dict]:
  env = {k: v for k, v in os.environ.items() if k != "HCQ2" and not k.startswith("PYTEST_")} | ({"HCQ2": "1"} if hcq2 else {})
  out = subprocess.run([sys.executable, "-m", "tests.hcq2_programs"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
  return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def under_hcq2() -> dict[str, dict]: return mutant_runs(True)


def test_every_hcq2_mutant_has_a_program() -> None:
  assert set(PROGRAMS) == set(of_engine("hcq2")) and len(PROGRAMS) >= 4


@pytest.mark.parametrize("name", of_engine("hcq2"))
def test_hcq2_mutant_corrupts_its_program_under_tinyjit(name: str, under_hcq2: dict[str, dict]) -> None:
  run = under_hcq2[name]
  assert run["hcq_runs"] >= 3, run  # one 'hcq' call run at capture and replayed: the program reaches HCQ2 replay
  assert run["clean_agrees"], run  # the unpatched runtime is right
  assert not run["mutant_agrees"], run  # the mutant corrupts it


def test_hcq2_mutants_change_nothing_without_hcq2() -> None:
  """Planted in a process without HCQ2 (the plain engine on the CPU), no mutant has anything to patch."""
  for name, run in mutant_runs(False).items():
    assert run == {"clean_agrees": True, "hcq_runs": 0, "mutant_agrees": True}, (name, run)


def test_the_census_counts_hcq2_rows_from_the_calls_that_ran() -> None:
  census, program = Census(), Program(params=(), inputs=(Leaf("x0", (8,), seed=1),), state=(), body=(), backward=(), returns="x0")
  every = (Captured(view_inputs=1), HcqCall(kernels=4, devices=2, variables=True, inputs=2, runs=3, written_inputs=1))
  census.record(program, (), {"hcq2": every})
  census.record(program, (), {"hcq2": (HcqCall(kernels=1, devices=1, variables=True, inputs=1, runs=1),)})  # captured, never replayed
  census.record(program, (), {"plain": ()})  # a worker of a mixed campaign that runs without HCQ2
  assert census.engines["hcq2"] == {name: 1 for name, _ in ROWS}
  text = "\n".join(census.summary())
  assert "hcq2: active in 2 of the 3 examples" in text and "hcq2: 50% of examples an 'hcq' call replayed" in text, text
  assert f"plain: {ENGINES['plain'].none_ran}" in text and "graphs" not in text, text  # the graph engine was never active


def test_a_campaign_kills_an_hcq2_mutant_and_blames_hcq2(tmp_path: Path) -> None:
  """A fixed-seed CPU campaign whose workers run HCQ2 finds the planted fault at once and blames HCQ2 replay: the
  finding survives every in-process stage and is gone in a process without HCQ2 (fuzz/campaign/engine_blame.py)."""
  env = {k: v for k, v in os.environ.items() if k != "HCQ2" and not k.startswith("PYTEST_")}
  out = subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", "run", "--target", "tinyjit", "--engine", "hcq2", "--hcq2-mutant",
                        "hcq2-stale-inputs", "--examples", "3", "--seed", "0", "--db", "none", "--no-confirm", "--shrink-budget", "0",
                        "--repro-dir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
  assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-2000:]
  new = [line for line in out.stdout.splitlines() if line.strip().startswith("NEW")]
  assert new and all("blamed on hcq2" in line and " on hcq2;" in line for line in new), out.stdout


def test_an_engine_that_ran_nothing_still_counts_its_example() -> None:
  """The census's rows are shares of the examples an engine was active in, those where it ran nothing included: a
  CPU example that only ran eagerly counts against 'a capture replayed call by call'."""
  from fuzz.campaign.example import run_example
  from fuzz.gen.program import Op
  from oracle.targets import Target
  once = Program(params=(), inputs=(Leaf("x0", (8,), seed=1),), state=(), body=(Op("scale", ("x0", 2.0), "v0"),), backward=(),
                 returns="v0")
  outcome = run_example(once, Target("tinyjit"), 1, "fresh")  # the eager call only: no capture ran
  assert outcome.ran == {"plain": ()}, outcome.ran
  census = Census()
  census.record(once, (), outcome.ran)
  assert census.engine_examples["plain"] == 1 and "plain: none ran" in "\n".join(census.summary())


FED_BACK = """
import json
import numpy as np
from tinygrad import Tensor, TinyJit
from planner.engines.hcq2 import HcqCall, spy_hcq
from planner.jit import PlannedJit
seen = {}
for name, jit in (("tinyjit", TinyJit), ("planner", PlannedJit)):
  with spy_hcq() as found:
    step, x = jit(lambda x: (x * 2 + 1).realize()), Tensor(np.ones(8, np.float32)).realize()
    for _ in range(5): x = step(x)
  seen[name] = max((r.written_inputs for r in found if isinstance(r, HcqCall) and r.runs >= 2), default=None)
print(json.dumps(seen))
"""


def test_the_census_sees_a_fed_back_input_under_both_jits() -> None:
  """A step fed its own output: each replay's input is a buffer the capture writes, under TinyJit and PlannedJit alike
  (PlannedJit's compile went round the seam the census watches, so its campaigns read 0% on that row)."""
  env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | {"HCQ2": "1"}
  out = subprocess.run([sys.executable, "-c", FED_BACK], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-3000:]
  assert json.loads(out.stdout.strip().splitlines()[-1]) == {"tinyjit": 1, "planner": 1}, out.stdout
