"""A written repro script, run in a fresh process, reproduces the finding it was written for, and only that.

The program is tinygrad#16571's mechanism on a matmul: forward through a non-returned contiguous buffer, two
backward() calls with `.grad = None` between, the grad left lazy, a reduction returned, inputs refilled in place.
Under the `returned-only` policy (0.13.0's held set) the lazy grad reads arena memory; under 0.14.0's it is right.
A script compares the finding's value as the oracle decided (tests/test_repro_verdicts.py shows the decisions carried
reach the oracle's verdict on a corpus and on planner mutants' first findings).
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fuzz.campaign.example import run_example
from fuzz.gen.printer import jit_off_script, to_script
from fuzz.gen.program import Backward, Group, Leaf, Op, Program, StateUpdate
from oracle.compare import COMPARED_WITH
from oracle.findings import JIT_ERROR, STALE, WRONG_VALUES, Finding
from oracle.runs import FRESH, SAME_BUFFER
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
def findings() -> list[Finding]:
  outcome = run_example(LAZY_GRAD, Target(policy="returned-only"), CALLS, SAME_BUFFER)
  assert outcome.rejected is None and outcome.findings, "returned-only must get the lazy grad wrong"
  return outcome.findings


@pytest.fixture(scope="module")
def finding(findings: list[Finding]) -> Finding:
  """The first wrong value: the lazy grad, read from arena memory."""
  return next(f for f in findings if f.call is not None)


def test_returned_only_repro_reproduces(tmp_path: Path, finding: Finding) -> None:
  assert finding.subject == "p0.grad"
  out = run_script(tmp_path, to_script(LAZY_GRAD, Target(policy="returned-only"), SAME_BUFFER, CALLS, finding))
  assert out.returncode == 1, out.stdout + out.stderr
  assert f"MISMATCH p0.grad at call {finding.call}" in out.stdout


def test_a_plan_findings_repro_runs_the_plan_checks(tmp_path: Path, findings: list[Finding]) -> None:
  """A finding on the plan (the lazy grad's buffer planned into the arena) has no value to compare: the script runs
  planfuzz's plan checks and prints the line confirmation looks for (fuzz/campaign/confirm.py `expected_line`)."""
  static = next(f for f in findings if f.call is None)
  text = to_script(LAZY_GRAD, Target(policy="returned-only"), SAME_BUFFER, CALLS, static)
  assert "CHECKS = []" in text
  out = run_script(tmp_path, text)
  assert out.returncode == 1 and f"MISMATCH (static) [{static.kind}]" in out.stdout, out.stdout + out.stderr


def test_default_policy_repro_prints_ok(tmp_path: Path, finding: Finding) -> None:
  assert run_example(LAZY_GRAD, Target(), CALLS, SAME_BUFFER).ok
  out = run_script(tmp_path, to_script(LAZY_GRAD, Target(), SAME_BUFFER, CALLS, finding))
  assert out.returncode == 0 and "OK: the JIT agrees on the 1 value(s) compared" in out.stdout, out.stdout + out.stderr


def test_tinyjit_repro_needs_only_tinygrad_and_is_short(tmp_path: Path, finding: Finding) -> None:
  """The script carries the oracle's decision as data, not the oracle: the full harness it replaced (which restated
  the judge's tolerances, capture schedule and frozen-value rules) was 138 lines for this finding, the first script
  carrying the decision 89, then 77, then 64 around a `build()`; in the short form (`fuzz.gen.inline`: the program's
  lines inline, each input made where the call takes it) 49. It holds only what this program uses (no integer data,
  ...) and no version shim longer than its line."""
  text = to_script(LAZY_GRAD, Target("tinyjit"), SAME_BUFFER, CALLS, finding)
  assert not any(f"{how} {pkg}" in text for how in ("import", "from") for pkg in ("planner", "oracle", "fuzz"))
  assert len(text.splitlines()) <= 49 and "def build" not in text
  assert "def data(seed, shape, dtype):\n  rng = " in text and "if dtype" not in text
  assert f"CHECKS = [('p0.grad', {finding.call}, {finding.call}, 1e-05, 1e-06)]" in text
  out = run_script(tmp_path, text, "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("blame", ["capture", "prune", "planner"])
def test_a_pruned_programs_repro_prunes_as_it_ran(finding: Finding, blame: str) -> None:
  """Whatever the finding is blamed on, the script prunes as the run did: it compares the finding's value alone, which
  prune's documented freezing of the rest leaves as it is."""
  text = to_script(replace(LAZY_GRAD, prune=True), Target("tinyjit"), SAME_BUFFER, CALLS, finding.blamed(blame))
  assert "step, seen = (TinyJit(step, prune=True) if jit else step), []" in text


def test_a_pruned_steps_repro_compares_only_the_findings_observable(tmp_path: Path) -> None:
  """Shared lead emulated_amd_state_frozen: a pruned step whose state update reads no input runs it once (prune's
  documented freezing). Its repro for a finding on another observable (there, a graph fault planted in the campaign)
  must not report the frozen state: it compares that observable only."""
  pruned = Program(params=(), inputs=(Leaf("x0", (8,), seed=2),), state=(Leaf("s0", (8,), seed=3),),
                   body=(Op("scale", ("x0", 2.0), "v0"),), backward=(), returns="v0", state_updates=(StateUpdate("s0"),),
                   prune=True)
  assert not run_example(pruned, Target("tinyjit"), CALLS, SAME_BUFFER).findings  # the oracle excuses the freeze
  on_ret = Finding(WRONG_VALUES, "ret", 2, "replay 1", {}).blamed("graph")
  text = to_script(pruned, Target("tinyjit"), SAME_BUFFER, CALLS, on_ret)
  assert "CHECKS = [('ret', 2, 2, 1e-05, 1e-06)]" in text
  out = run_script(tmp_path, text, "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def test_a_frozen_values_repro_compares_it_with_the_capture(tmp_path: Path) -> None:
  """With fresh inputs a returned view of the input shows the capture call's data on every replay (documented): the
  oracle compares it with the reference's value after the capture, and the script carries that choice. Compared with
  its own call's value, a correct TinyJit would print a mismatch."""
  view = Program(params=(), inputs=(Leaf("x0", (8,), seed=2),), state=(), backward=(), returns=Group("tuple", ("v0", "v1")),
                 body=(Op("reshape", ("x0", (2, 4)), "v0"), Op("scale", ("x0", 2.0), "v1")))
  assert not run_example(view, Target("tinyjit"), CALLS, FRESH).findings
  text = to_script(view, Target("tinyjit"), FRESH, CALLS, Finding(STALE, "ret[0]", 3, "replay 2"))
  assert "CHECKS = [('ret[0]', 3, 1, 1e-05, 1e-06)]  # replay 2, frozen at its capture (call 1)" in text
  out = run_script(tmp_path, text, "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def test_a_finding_without_a_value_compares_nothing_and_runs_the_calls(tmp_path: Path) -> None:
  """An error the JIT raised, or no finding recorded (pytest's in-flight file, written before the example runs, whose
  printing must not run it): nothing to compare, and the script runs the calls, where a crash or an error shows."""
  error = Finding(JIT_ERROR, "step", 1, "capture", {"error": "RuntimeError: boom"})
  texts = [to_script(LAZY_GRAD, Target("tinyjit"), SAME_BUFFER, CALLS, f) for f in (error, None)]
  assert all("CHECKS = []  # nothing to compare" in text for text in texts)
  out = run_script(tmp_path, texts[1], "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK: the JIT agrees on the 0 value(s) compared" in out.stdout, out.stdout + out.stderr


def test_the_judges_recorded_decision_is_written_without_running_the_program_again(monkeypatch: pytest.MonkeyPatch) -> None:
  """A value finding carries what the judge compared it with (oracle.compare.COMPARED_WITH), so a campaign's parent
  writes the worker's finding as a script without judging its program again (which might crash the parent)."""
  from fuzz.gen import printer
  target = Target(policy="returned-only")
  found = next(f for f in run_example(LAZY_GRAD, target, CALLS, SAME_BUFFER).findings if printer.is_value(f))
  printer.traces.cache_clear()
  monkeypatch.setattr(printer, "judge_program", lambda *a, **k: pytest.fail("the program was judged again"))
  script = to_script(LAZY_GRAD, target, SAME_BUFFER, CALLS, found)
  assert f"CHECKS = [{(found.subject, found.call, *found.details['compared_with'])!r}]" in script


def test_the_jit_off_script_compares_each_value_with_its_own_call(tmp_path: Path) -> None:
  """Off the CPU a confirmed bug's repro runs again with TinyJit off (fuzz/campaign/confirm.py `locate`): no value is
  documented to differ there, so even one the JIT freezes at its capture is compared with its own call's reference,
  and a correct eager run agrees."""
  view = Program(params=(), inputs=(Leaf("x0", (8,), seed=2),), state=(), backward=(), returns=Group("tuple", ("v0", "v1")),
                 body=(Op("reshape", ("x0", (2, 4)), "v0"), Op("scale", ("x0", 2.0), "v1")))
  text = jit_off_script(view, Target("tinyjit"), FRESH, CALLS, Finding(STALE, "ret[0]", 3, "replay 2", {COMPARED_WITH: [1, 1e-05, 1e-06]}))
  assert "CHECKS = [('ret[0]', 3, 3, 1e-05, 1e-06)]" in text and "with Context(JIT=0): got = run(True)" in text
  out = run_script(tmp_path, text, "-c", NO_PLANFUZZ)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def test_a_planner_bugs_jit_off_script_agrees(tmp_path: Path, finding: Finding) -> None:
  """The returned-only planner's wrong lazy grad is the JIT's: its repro reproduces (above), its JIT-off script agrees."""
  out = run_script(tmp_path, jit_off_script(LAZY_GRAD, Target(policy="returned-only"), SAME_BUFFER, CALLS, finding))
  assert out.returncode == 0 and "OK: the JIT agrees on the 1 value(s) compared" in out.stdout, out.stdout + out.stderr
