"""`jit.reset()` and the capture after it: the oracle judges every call against the capture that governs it
(oracle.schedule), so a correct JIT is clean under either target, a JIT that ignores its reset is caught, and repro
scripts carry the reset."""
import subprocess
import sys
from dataclasses import replace

import pytest
from tinygrad import TinyJit

from fuzz.campaign.example import run_example
from fuzz.gen.printer import to_script
from oracle.compare import judge
from oracle.runs import FRESH, SAME_BUFFER, reference, run
from oracle.schedule import Schedule
from oracle.targets import Target
from tests.programs import closure_counter, python_argument
from tests.test_steps import TRAIN_EVAL


def test_a_schedule_names_every_call() -> None:
  assert [Schedule().phase(k) for k in range(4)] == ["eager", "capture", "replay 1", "replay 2"]
  after = Schedule(3)
  assert [after.phase(k) for k in range(6)] == ["eager", "capture", "replay 1", "eager after reset", "capture after reset",
                                                 "replay 1 after reset"]
  assert [after.capture(k) for k in range(6)] == [1, 1, 1, 4, 4, 4]


def test_a_reset_before_the_first_capture_is_refused() -> None:
  with pytest.raises(ValueError, match="reset before call 2 or later"): Schedule(1)


def with_reset(make, call: int):
  return lambda: replace(make(), reset=call)


@pytest.mark.parametrize("target", ["tinyjit", "planner"])
@pytest.mark.parametrize("make", [closure_counter, python_argument], ids=lambda m: m.__name__)
@pytest.mark.parametrize("call", [2, 3])
def test_python_values_freeze_again_at_the_new_capture(target: str, make, call: int) -> None:
  """A closure counter and a Python argument, frozen at call 1 and then again at the capture after the reset: the
  reference models both freezes, so tinygrad's TinyJit and PlannedJit are clean over 7 calls."""
  factory = with_reset(make, call)
  t = Target(target)
  verdict = judge(reference(factory, 7, SAME_BUFFER), run(factory, t.wrap, 7, SAME_BUFFER), SAME_BUFFER)
  assert verdict.rejected is None and not verdict.findings, [f.message for f in verdict.findings]
  assert verdict.compared == 7


class IgnoresReset:
  """TinyJit with a `reset()` that does nothing: it keeps replaying its first capture."""
  def __init__(self, fn, prune: bool) -> None: self.jit = TinyJit(fn, prune=prune)
  def __call__(self, *args): return self.jit(*args)
  def reset(self) -> None: pass


def test_a_jit_that_ignores_its_reset_is_caught() -> None:
  """The counter reads 4 at the eager call after the reset and 5 at the new capture; a JIT still replaying call 1's
  capture computes with 3, and the findings name the calls after the reset."""
  factory = with_reset(closure_counter, 3)
  verdict = judge(reference(factory, 5, SAME_BUFFER), run(factory, IgnoresReset, 5, SAME_BUFFER), SAME_BUFFER)
  assert {(f.subject, f.call, f.phase) for f in verdict.findings} == {("ret", 3, "eager after reset"), ("ret", 4, "capture after reset")}


@pytest.mark.parametrize("target", ["tinyjit", "planner"])
@pytest.mark.parametrize("mode", [SAME_BUFFER, FRESH])
def test_a_generated_train_eval_loop_with_a_reset_is_clean(target: str, mode: str, tmp_path) -> None:
  """Backward, an SGD step and an eval JIT beside a train JIT reset before call 2: the capture at call 3 plans anew
  with the live grads of then. Clean in the oracle, and in its repro script, which resets its JIT too."""
  program = replace(TRAIN_EVAL, reset=2)
  verdict = run_example(program, Target(target), 6, mode)
  assert verdict.rejected is None and not verdict.findings, [f.message for f in verdict.findings]
  script = to_script(program, Target(target), mode, 6)
  assert "for k in range(6):" in script and "if jit and k == 2: step.reset()" in script
  (path := tmp_path / "repro.py").write_text(script)
  out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr
