"""Every documented TinyJit behaviour in the facts file is modelled by the oracle, never reported.

Each program runs under tinygrad's own TinyJit and under PlannedJit. Rule by rule (shared/TINYGRAD_JIT_FACTS.md,
"Documented behaviour"):
- returned tensors are the same objects, overwritten by the next call: `test_returned_objects_are_snapshotted`
- returning an input unchanged, or a pure view of it: `returns_input_view`
- Python state frozen at capture (closure values, non-Tensor arguments, `if` branches, side effects): the
  `PYTHON_STATE` programs, and `test_undeclared_python_state_is_reported` shows the model is no blanket excuse
- explicit inputs: duplicate inputs (also two views of one base), const and virtual inputs: `REFUSALS`
- implicit inputs bound by buffer identity, updated in place or rebound: `implicit_state`, `rebound_implicit_input`
- lazy side-effect tensors, fresh vs refilled inputs: `kept_lazy`, `test_fresh_inputs_skip_lazy_escapes_only`
- `Tensor.rand` under a seed: `seeded_rand`
- prune freezing: `test_prune_freezing_is_documented_but_counted` (and its limit in tests/test_invariants.py: an
  unsound prune split is reported)
- symbolic pad views and views of symbolic outputs: `test_symbolic_views_are_compared_only_at_the_capture_value`
- (not in the facts file, found by issue 10's research) a lazy escape over a bound Variable keeps the capture call's
  value, as any Python value frozen at capture: `test_variable_escapes_are_compared_only_at_the_capture_value`
- eager's own write-after-read hazard (tinygrad#17074): `grad_read_after_update`
- `.realize()` cuts autograd: `realize_cuts_autograd`
- eager errors make a program invalid: `EAGER_ERRORS`
- refusals by design (`.item()`/`.tolist()` in capture, non-Tensor return, nothing captured, nested TinyJit): `REFUSALS`
"""
import numpy as np
import pytest

from oracle.check import check
from oracle.compare import SYMBOLIC_VIEW, VARIABLE_ESCAPE, judge
from oracle.findings import WRONG_VALUES
from oracle.runs import FRESH, SAME_BUFFER, CallRecord, Trace
from oracle.targets import Target
from tests import programs

TARGETS = [Target(), Target("tinyjit")]
CLEAN = [programs.returns_input_view, programs.kept_lazy, programs.implicit_state, programs.seeded_rand,
         programs.grad_read_after_update, programs.realize_cuts_autograd, programs.conv_16571]
PYTHON_STATE = [programs.closure_counter, programs.python_argument, programs.python_branch, programs.python_side_effect,
                programs.rebound_implicit_input]
REFUSALS = {programs.duplicate_inputs: "JitError: duplicate", programs.two_views_of_one_base: "JitError: duplicate",
            programs.item_in_capture: "JitError: cannot access tensor data", programs.tolist_in_capture: "JitError: cannot access",
            programs.non_tensor_return: "JitError: JIT return contains non-Tensor", programs.nothing_captured: "JitError: didn't JIT",
            programs.virtual_input: "JitError: JIT inputs must be real buffers", programs.const_input: "JitError: JIT inputs must be real",
            programs.nested_jit: "RuntimeError: having TinyJit inside another TinyJit"}
EAGER_ERRORS = {programs.eager_error: "shape mismatch", programs.optimizer_assign_cycle: "cycle detected in assign graph",
                programs.backward_through_slice_assign: "failed to compute gradient for Ops.AFTER"}
name = lambda p: p.__name__


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.kind)
@pytest.mark.parametrize("mode", [SAME_BUFFER, FRESH])
@pytest.mark.parametrize("program", CLEAN + PYTHON_STATE, ids=name)
def test_documented_behaviour_is_not_reported(program, mode, target) -> None:
  verdict = check(program, target, mode=mode)
  assert verdict.rejected is None and verdict.findings == [] and verdict.compared > 0


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.kind)
def test_undeclared_python_state_is_reported(target) -> None:
  """Without the PythonState declaration the same closure counter differs from eager on every replay: the oracle
  models frozen Python only where the program says what it is, and the comparison itself still bites."""
  verdict = check(programs.undeclared_closure_counter, target)
  assert {(f.kind, f.subject, f.call) for f in verdict.findings} == {(WRONG_VALUES, "ret", k) for k in (2, 3, 4)}


def test_returned_objects_are_snapshotted() -> None:
  """TinyJit hands back the same tensor every call and overwrites it: only a snapshot right after each call is right."""
  from oracle.runs import run
  trace = run(programs.closure_counter, Target("tinyjit").wrap, 4)
  values = [c.values["ret"] for c in trace.calls]
  assert not np.array_equal(values[0], values[1]) and not np.array_equal(values[2], values[3])  # new inputs each call


def test_fresh_inputs_skip_lazy_escapes_only() -> None:
  verdict = check(programs.kept_lazy, Target(), mode=FRESH)
  assert verdict.skipped["lazy escape with fresh inputs"] == 4 and verdict.compared == 6


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.kind)
@pytest.mark.parametrize("program", list(REFUSALS), ids=name)
def test_jit_refusals_are_rejections(program, target) -> None:
  verdict = check(program, target)
  assert verdict.rejected is not None and verdict.rejected.startswith("jit: " + REFUSALS[program]) and not verdict.findings


@pytest.mark.parametrize("program", list(EAGER_ERRORS), ids=name)
def test_eager_errors_reject_the_program(program) -> None:
  verdict = check(program, Target())
  assert verdict.rejected is not None and verdict.rejected.startswith("eager:") and EAGER_ERRORS[program] in verdict.rejected


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.kind)
def test_symbolic_views_are_compared_only_at_the_capture_value(target) -> None:
  """The pad view of a symbolic output is skipped on replays bound to another value (it reads the wrong rows there, as
  documented), compared where the value equals the capture's; its `.contiguous()` twin is compared on every call."""
  varying = check(programs.symbolic_pad_view, target)
  assert varying.findings == [] and varying.skipped[SYMBOLIC_VIEW] == 3 and varying.compared == 7
  fixed = check(programs.symbolic_pad_view_one_value, target)
  assert fixed.findings == [] and not fixed.skipped and fixed.compared == 10


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.kind)
def test_variable_escapes_are_compared_only_at_the_capture_value(target) -> None:
  """With inputs refilled in place, a kept lazy sum over x[:n] and a lazy .grad through x[:n] are skipped on replays
  bound to another n and compared on the rest; with one n on every call they are compared on every call."""
  varying = check(programs.variable_escape, target)
  assert varying.findings == [] and varying.skipped[VARIABLE_ESCAPE] == 6 and varying.compared == 9
  fixed = check(programs.variable_escape_one_value, target)
  assert fixed.findings == [] and not fixed.skipped and fixed.compared == 15


def test_a_symbolic_view_wrong_at_the_capture_value_is_reported() -> None:
  """The skip is no blanket excuse: at the capture's bound value a wrong symbolic view is a finding."""
  ok, bad = np.zeros(4, np.float32), np.ones(4, np.float32)
  def trace(replay: np.ndarray) -> Trace:
    calls = [CallRecord(k, {"ret": ok if k < 2 else replay}, symbolic_views=frozenset({"ret"}), bound={"n": 5}) for k in range(3)]
    return Trace(calls)
  assert judge(trace(ok), trace(bad), SAME_BUFFER).findings[0].call == 2
  assert judge(trace(ok), trace(ok), SAME_BUFFER).findings == []


def test_prune_freezing_is_documented_but_counted() -> None:
  verdict = check(programs.pruned_closure, Target(), mode=SAME_BUFFER)
  assert verdict.findings == [] and verdict.skipped["documented prune freezing"] > 0


def test_without_prune_the_same_program_is_clean() -> None:
  verdict = check(programs.pruned_closure, Target(prune=False), mode=SAME_BUFFER)
  assert verdict.findings == [] and not verdict.skipped
