"""Every documented TinyJit behaviour in the facts file is modelled by the oracle, never reported.

Each program runs under tinygrad's own TinyJit and under PlannedJit; a test also shows the modelling is not a
blanket excuse: the same comparison still flags a real difference where one exists.
"""
import pytest

from oracle.check import check
from oracle.runs import FRESH, SAME_BUFFER
from oracle.targets import Target
from tests import programs

TARGETS = [Target(), Target("tinyjit")]
CLEAN = [programs.returns_input_view, programs.kept_lazy, programs.implicit_state, programs.seeded_rand,
         programs.grad_read_after_update, programs.realize_cuts_autograd, programs.conv_16571]


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.kind)
@pytest.mark.parametrize("mode", [SAME_BUFFER, FRESH])
@pytest.mark.parametrize("program", CLEAN, ids=lambda p: p.__name__)
def test_documented_behaviour_is_not_reported(program, mode, target) -> None:
  verdict = check(program, target, mode=mode)
  assert verdict.rejected is None and verdict.findings == [] and verdict.compared > 0


def test_fresh_inputs_skip_lazy_escapes_only() -> None:
  verdict = check(programs.kept_lazy, Target(), mode=FRESH)
  assert verdict.skipped["lazy escape with fresh inputs"] == 4 and verdict.compared == 6


@pytest.mark.parametrize("program", [programs.duplicate_inputs, programs.item_in_capture], ids=lambda p: p.__name__)
def test_jit_rejections_are_rejections(program) -> None:
  verdict = check(program, Target("tinyjit"))
  assert verdict.rejected is not None and verdict.rejected.startswith("jit: JitError") and not verdict.findings


def test_eager_errors_reject_the_program() -> None:
  verdict = check(programs.eager_error, Target())
  assert verdict.rejected is not None and verdict.rejected.startswith("eager:")


def test_prune_freezing_is_documented_but_counted() -> None:
  verdict = check(programs.pruned_closure, Target(), mode=SAME_BUFFER)
  assert verdict.findings == [] and verdict.skipped["documented prune freezing"] > 0


def test_without_prune_the_same_program_is_clean() -> None:
  verdict = check(programs.pruned_closure, Target(prune=False), mode=SAME_BUFFER)
  assert verdict.findings == [] and not verdict.skipped
