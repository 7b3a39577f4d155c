"""Power on the graph path: each graph-replay mutant corrupts a hand-written program under tinygrad's own TinyJit on the
emulated GPU, where the unpatched runtime agrees; and the census counts graph batches from what ran."""
from __future__ import annotations

import json

import pytest

from fuzz.campaign.census import Census
from fuzz.gen.program import Leaf, Program
from planner.engines import of_engine, planted
from planner.engines.graph import ROWS, GraphBatch
from tests.emulated import run_emulated
from tests.graph_programs import PROGRAMS


@pytest.fixture(scope="module")
def mutant_runs() -> dict[str, dict]:
  out = run_emulated(["-m", "tests.graph_programs"], timeout=600)
  assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
  return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_graph_mutant_has_a_program() -> None:
  assert set(PROGRAMS) == set(of_engine("graph"))


@pytest.mark.slow
@pytest.mark.parametrize("name", of_engine("graph"))
def test_graph_mutant_corrupts_its_program_under_tinyjit(name: str, mutant_runs: dict[str, dict]) -> None:
  run = mutant_runs[name]
  assert run["graph_runs"] >= 3, run  # graphed at capture and replayed: the program reaches the graph path
  assert run["clean_agrees"], run  # the unpatched runtime is right
  assert not run["mutant_agrees"], run  # the mutant corrupts it


def test_an_unknown_graph_mutant_names_the_known_ones() -> None:
  with pytest.raises(ValueError, match="graph-stale-inputs"): planted("graph-nope")


def test_the_census_counts_graph_rows_from_the_batches_that_ran() -> None:
  census, program = Census(), Program(params=(), inputs=(Leaf("x0", (8,), seed=1),), state=(), body=(), backward=(), returns="x0")
  multi = GraphBatch(calls=4, kernels=6, devices=2, variables=True, inputs=2, batch_cap=4, runs=3)
  one = GraphBatch(calls=1, kernels=1, devices=1, variables=False, inputs=1, batch_cap=0, runs=1)
  census.record(program, (), {"graph": (multi,)})
  census.record(program, (), {"graph": (one,)})
  census.record(program, (), {"graph": ()})
  assert census.engines["graphs"] == {name: 1 for name, _ in ROWS}  # every row once: the replayed batch, the one-kernel graph
  assert "33% of examples a graph batch replayed" in "\n".join(census.summary())
  none = Census()
  none.record(program, (), {"graph": ()})
  assert "graphs: none ran" in "\n".join(none.summary())
