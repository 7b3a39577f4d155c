"""Every corpus program, under both input modes, passes the oracle against planfuzz's PlannedJit and tinygrad's TinyJit:
no findings, not rejected, and something was actually compared."""
from __future__ import annotations

import pytest

from oracle.compare import judge
from oracle.runs import MODES
from oracle.targets import Target
from tests.corpus import CALLS, CORPUS

TARGETS = {"planner": Target(), "tinyjit": Target("tinyjit")}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_program_passes_oracle(traced, name: str, mode: str, target: str) -> None:
  ref, got = traced(name, None, mode), traced(name, TARGETS[target], mode)
  assert ref.error is None, f"{name}: the eager reference failed: {ref.error!r}"
  assert len(got.calls) == CALLS, f"{name}: the {target} run stopped early: {got.error!r}"
  verdict = judge(ref, got, mode)
  assert verdict.rejected is None, f"{name} was rejected: {verdict.rejected}"
  assert verdict.ok, f"{name} under {target} ({mode}):\n" + "\n".join(f.message for f in verdict.findings)
  assert verdict.compared > 0, f"{name}: nothing was compared (skipped: {dict(verdict.skipped)})"


def test_corpus_is_large_and_covers_the_brief() -> None:
  assert len(CORPUS) >= 32
  for name in ("conv_16571", "mlp_sgd", "mlp_adam", "grads_lazy", "grads_realized", "nested_return", "slice_assign",
               "feedback_matmul", "prune_all_input", "copy_second_device", "symbolic_kv_attention", "rand_seeded", "kept_lazy"):
    assert name in CORPUS, name
  assert sum(CORPUS[n]().prune for n in ("prune_all_input", "prune_constant_part")) == 2
