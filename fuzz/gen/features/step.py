"""Features of the whole step rather than of one draw: census entries only (`fuzz.gen.strategies.programs` draws them;
how loops call the step, an eval step, a reset, are `fuzz.gen.features.loop`'s).

Each respects a documented rule (shared/TINYGRAD_JIT_FACTS.md), kept where it is drawn: grads are realized before an
in-place update (tinygrad#17074); prune draws no rand, Variable or optimizer (prune freezes them); feedback realizes
grads inside the step (eager feeds a new tensor where the JIT refills the same one).
"""
from __future__ import annotations

from fuzz.gen.features.feature import Feature
from fuzz.gen.ops import MOVEMENT
from fuzz.gen.program import Program, returned_names


def _lazy_grad(p: Program) -> bool: return bool(p.grads_at_end()) and not (p.realize_grads or p.update is not None)


def _returned_view(p: Program) -> bool:
  kinds = {op.out: op.kind for op in p.body}
  return any(kinds.get(n) in MOVEMENT for n in returned_names(p.returns))


FEATURES = (
  Feature("backward x2+", lambda p: len(p.backward) > 1),
  Feature("lazy grad", _lazy_grad),
  Feature("optimizer", lambda p: p.update is not None and p.update.kind != "assign"),
  Feature("param assign", lambda p: p.update is not None and p.update.kind == "assign"),
  Feature("feedback", lambda p: p.feedback is not None),
  Feature("prune", lambda p: p.prune),
  Feature("state", lambda p: bool(p.state_updates)),
  Feature("kept", lambda p: bool(p.kept)),
  Feature("returned view", _returned_view),
  Feature("rand", lambda p: p.uses_rand),
)
