"""Steps written as training loops write them: a train step and an eval step, each jitted on its own over the same
parameters and called alternately. The eval step's return is an observable like any other: clean under tinygrad's
TinyJit and PlannedJit, caught when an eval JIT goes stale, and carried into repro scripts."""
import subprocess
import sys

import pytest
from tinygrad import Tensor, TinyJit

from fuzz.campaign.example import run_example
from fuzz.gen.interpret import to_subject
from fuzz.gen.printer import to_script
from fuzz.gen.program import Backward, InputAssign, Leaf, Op, Program, Update
from oracle.compare import judge
from oracle.runs import SAME_BUFFER, reference, run
from oracle.targets import Target

# train: x*p0 through relu, backward, SGD step, return 2x; eval: x*p0 through relu again, from the updated p0
TRAIN_EVAL = Program(params=(Leaf("p0", (8,), seed=1),), inputs=(Leaf("x0", (8,), seed=2),), state=(),
                     body=(Op("mul", ("x0", "p0"), "v0"), Op("relu", ("v0",), "v1"), Op("scale", ("x0", 2.0), "v2")),
                     backward=(Backward("v1"),), returns="v2", update=Update("sgd", ("p0",)), evaluate="v1")


@pytest.mark.parametrize("target", ["tinyjit", "planner"])
@pytest.mark.parametrize("mode", ["same-buffer", "fresh"])
def test_a_train_eval_loop_is_clean(target: str, mode: str) -> None:
  verdict = run_example(TRAIN_EVAL, Target(target), 5, mode)
  assert verdict.rejected is None and not verdict.findings, verdict
  assert verdict.compared == 4 * 5  # ret, eval, p0.grad and p0 after each of 5 calls


def test_an_eval_jit_that_misses_the_parameter_update_is_caught() -> None:
  """A JIT for the eval step that kept its capture call's result (as one binding a copy of p0 would): from replay 1
  on the eval value is stale, and only the eval value."""
  def wrap(fn, prune):
    if fn.__name__ != "evaluate": return TinyJit(fn, prune=prune)
    first: list[Tensor] = []
    def stale(*args):
      if len(first) < 2: first.append(fn(*args).contiguous().realize())
      return first[-1]
    return stale
  factory = lambda: to_subject(TRAIN_EVAL)
  verdict = judge(reference(factory, 5, SAME_BUFFER), run(factory, wrap, 5, SAME_BUFFER), SAME_BUFFER)
  assert {(f.subject, f.call, f.kind) for f in verdict.findings} == {("eval", 2, "stale"), ("eval", 3, "stale"), ("eval", 4, "stale")}


def test_the_repro_script_runs_both_steps(tmp_path) -> None:
  script = tmp_path / "repro.py"
  script.write_text(to_script(TRAIN_EVAL, Target("tinyjit"), SAME_BUFFER, 5))
  assert "def evaluate(x0):" in script.read_text()
  out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("target", ["tinyjit", "planner"])
def test_a_fed_back_input_reaches_the_eval_step_rewritten(target: str, tmp_path) -> None:
  """Documented: a JIT returns the same objects every call and rewrites them; fed back as the input, the train step's
  return already holds this call's value when the eval step reads it. The reference models it (runs.overwritten), so
  neither the oracle nor the repro script reports it."""
  from dataclasses import replace

  from fuzz.gen.program import Feedback
  program = replace(TRAIN_EVAL, feedback=Feedback(0, ()), realize_grads=True)
  verdict = run_example(program, Target(target), 5, SAME_BUFFER)
  assert verdict.rejected is None and not verdict.findings, [f.message for f in verdict.findings]
  script = tmp_path / "repro.py"
  script.write_text(to_script(program, Target(target), SAME_BUFFER, 5))
  out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("target", ["tinyjit", "planner"])
@pytest.mark.parametrize("mode", ["same-buffer", "fresh"])
def test_a_model_method_jitted_with_the_decorator_form_is_clean(target: str, mode: str, tmp_path) -> None:
  """The train and eval steps as models' `__call__`, jitted where their classes are defined (`@TinyJit def
  __call__(self, x)`): each call reaches the JIT through the descriptor protocol with the model first. Clean in the
  oracle and in the repro script, which writes the decorator form."""
  from dataclasses import replace
  program = replace(TRAIN_EVAL, method=True)
  verdict = run_example(program, Target(target), 5, mode)
  assert verdict.rejected is None and not verdict.findings, [f.message for f in verdict.findings]
  assert verdict.compared == 4 * 5
  script = to_script(program, Target(target), mode, 5)
  assert "    @decorate\n    def __call__(self, *args): return step(*args)" in script
  (path := tmp_path / "repro.py").write_text(script)
  out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def test_planned_jit_in_a_class_is_a_method() -> None:
  """PlannedJit binds like TinyJit: held by a class, it is called with the object first, through capture and replay."""
  from planner.jit import PlannedJit
  seen: list[object] = []
  class Model:
    @PlannedJit
    def __call__(self, x: Tensor) -> Tensor:
      seen.append(self)
      return (x * 2).contiguous()
  model = Model()
  for k in range(4):
    x = Tensor([float(k), 1.0]).realize()
    assert model(x).tolist() == [2.0 * k, 2.0]
  assert seen == [model, model]  # the step's Python runs at the eager call and the capture only


# tinygrad#16618's step: x0 assigned from the step's relu at the end, left lazy; x0 observed after every call
INPUT_ASSIGN = Program(params=(Leaf("p0", (8,), seed=1),), inputs=(Leaf("x0", (8,), seed=2),), state=(),
                       body=(Op("mul", ("x0", "p0"), "v0"), Op("relu", ("v0",), "v1"), Op("scale", ("p0", 2.0), "v2")),
                       backward=(Backward("v1"),), returns="v2", realize_grads=True, input_assign=InputAssign("x0", "v1"))


@pytest.mark.parametrize("target", ["tinyjit", "planner"])
def test_an_input_assigned_in_the_step_is_the_known_tinygrad_bug(target: str) -> None:
  """Replays never run the lazy assign (tinygrad#16618): with inputs refilled in place the input keeps this call's
  data, a finding matched to jit-input-assign-dropped by its mechanism (gone once the step realizes the assign)."""
  verdict = run_example(INPUT_ASSIGN, Target(target), 5, SAME_BUFFER)
  assert verdict.rejected is None and not verdict.findings, [f.message for f in verdict.findings]
  assert {name for name, f in verdict.known} == {"jit-input-assign-dropped"}
  assert {(f.subject, f.call) for _, f in verdict.known} == {("x0", 2), ("x0", 3), ("x0", 4)}


@pytest.mark.parametrize("target", ["tinyjit", "planner"])
@pytest.mark.parametrize("mode", ["same-buffer", "fresh"])
def test_an_input_assign_realized_in_the_step_is_clean(target: str, mode: str) -> None:
  """The same step realizing its assign: every call assigns the input, and the oracle compares it every call (with
  fresh inputs the observable is the capture call's input object, frozen then)."""
  from dataclasses import replace
  verdict = run_example(replace(INPUT_ASSIGN, realize_escapes=True), Target(target), 5, mode)
  assert verdict.rejected is None and not verdict.findings and not verdict.known, [f.message for f in verdict.findings]
  assert verdict.compared == 3 * 5  # ret, p0.grad and x0 after each call
