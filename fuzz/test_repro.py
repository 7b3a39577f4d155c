"""A written repro script, run in a fresh process, reproduces the finding it was written for, and only that.

The program is tinygrad#16571's mechanism on a matmul: forward through a non-returned contiguous buffer, two
backward() calls with `.grad = None` between, the grad left lazy, a reduction returned, inputs refilled in place.
Under the `returned-only` policy (0.13.0's held set) the lazy grad reads arena memory; under 0.14.0's it is right.
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fuzz.campaign.driver import check
from fuzz.gen.printer import to_script
from fuzz.gen.program import Backward, Leaf, Op, Program, StateUpdate
from oracle.runs import SAME_BUFFER
from oracle.targets import Target

CALLS = 5
LAZY_GRAD = Program(
  params=(Leaf("p0", (4, 4), seed=1),), inputs=(Leaf("x0", (4, 4), seed=2),), state=(),
  body=(Op("permute", ("x0", (1, 0)), "v0"), Op("contiguous", ("v0",), "v1"), Op("matmul", ("v1", "p0"), "v2"),
        Op("relu", ("v2",), "v3"), Op("sum", ("v3", 0, False), "v4")),
  backward=(Backward("v3"), Backward("v3", 0.5, clear=("p0",))), returns="v4")
# the script must not reach planfuzz: a tinyjit repro is pasted into tinygrad bug reports
NO_PLANFUZZ = ("import runpy, sys; sys.modules.update(planner=None, oracle=None, fuzz=None); "
               "runpy.run_path(sys.argv[1], run_name='__main__')")


def run_script(tmp_path: Path, text: str, *python_args: str) -> subprocess.CompletedProcess:
  path = tmp_path / "repro.py"
  path.write_text(text)
  return subprocess.run([sys.executable, *python_args, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path)


@pytest.fixture(scope="module")
def finding():
  verdict = check(LAZY_GRAD, Target(policy="returned-only"), SAME_BUFFER, CALLS)
  assert verdict.rejected is None and verdict.findings, "returned-only must get the lazy grad wrong"
  return verdict.findings[0]


def test_returned_only_repro_reproduces(tmp_path: Path, finding) -> None:
  assert finding.subject == "p0.grad"
  out = run_script(tmp_path, to_script(LAZY_GRAD, Target(policy="returned-only"), SAME_BUFFER, CALLS, finding))
  assert out.returncode == 1, out.stdout + out.stderr
  assert "MISMATCH p0.grad" in out.stdout


def test_default_policy_repro_prints_ok(tmp_path: Path, finding) -> None:
  assert check(LAZY_GRAD, Target(), SAME_BUFFER, CALLS).ok
  out = run_script(tmp_path, to_script(LAZY_GRAD, Target(), SAME_BUFFER, CALLS, finding))
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def test_tinyjit_repro_needs_only_tinygrad(tmp_path: Path, finding) -> None:
  text = to_script(LAZY_GRAD, Target("tinyjit"), SAME_BUFFER, CALLS, finding)
  assert "from planner" not in text and "import planner" not in text
  out = run_script(tmp_path, text, "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("blame, prune", [("capture", "False"), ("prune", "True"), ("planner", "True")])
def test_a_pruned_program_blamed_on_capture_repros_unpruned(finding, blame: str, prune: str) -> None:
  """The attribution saw a capture-blamed finding persist without prune, and the harness cannot model prune's
  documented freezing: its script runs unpruned; any other blame keeps prune as the run had it."""
  text = to_script(replace(LAZY_GRAD, prune=True), Target("tinyjit"), SAME_BUFFER, CALLS, finding.blamed(blame))
  assert f"make_jit = lambda step, prune={prune}: TinyJit(step, prune=prune)" in text


def test_a_pruned_steps_repro_compares_only_the_findings_observable(tmp_path: Path) -> None:
  """Shared lead emulated_amd_state_frozen: a pruned step whose state update reads no input runs it once (prune's
  documented freezing). Its repro for a finding on another observable (there, a graph fault planted in the campaign)
  must not report the frozen state: written for the finding, it compares that observable only; compared in full, a
  correct tinygrad prints the state's documented freeze as mismatches."""
  from oracle.findings import WRONG_VALUES, Finding
  pruned = Program(params=(), inputs=(Leaf("x0", (8,), seed=2),), state=(Leaf("s0", (8,), seed=3),),
                   body=(Op("scale", ("x0", 2.0), "v0"),), backward=(), returns="v0", state_updates=(StateUpdate("s0"),),
                   prune=True)
  assert not check(pruned, Target("tinyjit"), SAME_BUFFER, CALLS).findings  # the oracle excuses the freeze
  on_ret = Finding(WRONG_VALUES, "ret", 2, "replay 1", {}).blamed("graph")
  out = run_script(tmp_path, to_script(pruned, Target("tinyjit"), SAME_BUFFER, CALLS, on_ret), "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr
  full = run_script(tmp_path, to_script(pruned, Target("tinyjit"), SAME_BUFFER, CALLS), "-c", NO_PLANFUZZ)
  assert full.returncode == 1 and "MISMATCH s0 at call 2" in full.stdout, full.stdout + full.stderr


def test_a_fresh_input_repro_skips_the_lazy_grad_as_the_oracle_does(tmp_path: Path) -> None:
  """With fresh inputs a grad left lazy by the capture is undefined (documented), and the oracle skips it; the script
  must tell it is lazy before its first read realizes it (it read the value first, so it saw a realized grad and
  printed three MISMATCH lines for a correct tinygrad: a seed-20261205 emulated campaign 'confirmed' this program so)."""
  from oracle.runs import FRESH
  program = Program(params=(Leaf("p0", (2, 2, 2), seed=2),), inputs=(Leaf("x0", (2, 2, 2), seed=1),), state=(),
                    body=(Op("relu", ("x0",), "v0"), Op("contiguous", ("v0",), "v1"), Op("flip", ("v1", 0), "v2"),
                          Op("contiguous", ("v2",), "v3"), Op("mul", ("v3", "p0"), "v4")),
                    backward=(Backward("v4"), Backward("v4")), returns="v3")
  verdict = check(program, Target("tinyjit"), FRESH, CALLS)
  assert not verdict.findings and verdict.skipped, verdict  # the oracle: nothing wrong, the lazy grad skipped
  out = run_script(tmp_path, to_script(program, Target("tinyjit"), FRESH, CALLS), "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr
