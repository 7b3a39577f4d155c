"""The whole judge on the #16571 step: static invariant 1 and the reference comparison both catch returned-only."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tinygrad import Tensor

from oracle.check import check
from oracle.poison import SENTINEL, poison_arenas
from oracle.runs import SAME_BUFFER
from oracle.targets import Target, TargetError
from planner import PlannedJit, tg
from planner.engines import hcq2
from tests import programs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def returned_only_verdict():
  return check(programs.conv_16571, Target(policy="returned-only"), mode=SAME_BUFFER)


def test_invariant_names_the_grad_before_any_replay(returned_only_verdict) -> None:
  static = [f for f in returned_only_verdict.findings if f.call is None]
  assert any(f.kind == "invariant:live-planned" and f.subject == "conv.weight.grad" for f in static)
  assert all(f.attribution == "planner" for f in static)


def test_replays_differ_from_reference_and_blame_the_planner(returned_only_verdict) -> None:
  dynamic = [f for f in returned_only_verdict.findings if f.subject == "conv.weight.grad" and f.call is not None]
  assert {f.call for f in dynamic} >= {2, 3, 4}
  assert all(f.attribution == "planner" and f.kind in ("all-zeros", "wrong-values", "non-finite") for f in dynamic)
  assert "conv.weight.grad at call 2 (replay 1)" in next(f for f in dynamic if f.call == 2).message


def test_live_tensors_policy_passes_every_check() -> None:
  verdict = check(programs.conv_16571, Target(), mode=SAME_BUFFER)
  assert verdict.findings == [] and verdict.rejected is None and verdict.compared == 15


def test_poison_fills_every_arena_with_the_sentinel() -> None:
  seen = []
  def spy(lowered) -> None:
    poison_arenas(lowered)
    seen.append([np.frombuffer(bytes(tg.device_buffer(a.buffer).as_memoryview()), np.uint8) for a in lowered.plan.arenas])
  jit = PlannedJit(lambda x: ((x + 1).contiguous() * 2).sum().realize(), policy="returned-only", before_run=spy)
  for k in range(3): out = jit(Tensor(np.full(16, k, np.float32)).realize())
  assert len(seen) == 2 and all(len(arenas) == 1 and (arenas[0] == SENTINEL).all() for arenas in seen)
  assert out.numpy() == pytest.approx(16 * 3 * 2)  # the poisoned bytes were all written before they were read


def test_unknown_target_names_the_choices() -> None:
  with pytest.raises(TargetError, match="choose one of planner, tinyjit"): Target("nope")


def test_tinyjit_arenas_are_poisoned_before_capture_run_and_each_replay(monkeypatch: pytest.MonkeyPatch) -> None:
  from oracle.subject import Subject
  filled = []
  real_fill = tg.fill_buffer
  monkeypatch.setattr(tg, "fill_buffer", lambda u, byte: (filled.append(byte), real_fill(u, byte)))
  def chain():  # intermediates no live tensor reaches: tinygrad's own planner packs them
    return Subject(lambda x: ((x + 1).contiguous() * 2).contiguous().sum().realize(), lambda k, _: programs.arrays(k, (64,)))
  verdict = check(chain, Target("tinyjit"))
  assert verdict.findings == [] and filled.count(SENTINEL) >= 4  # capture's run and three replays, one arena each


@pytest.mark.parametrize("target", [Target(), Target("tinyjit")], ids=lambda t: t.kind)
def test_an_unsound_prune_split_is_reported_not_excused(target: Target) -> None:
  """tinygrad's one-pass prune runs a read of input-dependent state only once: the split invariant names the one-time
  call, and the replays it freezes stay findings blamed on prune instead of being dropped as documented freezing."""
  verdict = check(programs.prune_reads_updated_state, target)
  assert [(f.kind, f.subject) for f in verdict.findings if f.call is None] == [("invariant:prune-split", "one-time kernel at step 0")]
  assert {f.call for f in verdict.findings if f.kind == "wrong-values"} == {2, 3, 4}
  assert all(f.attribution == "prune" for f in verdict.findings) and not verdict.skipped


def test_blame_reruns_jit2_only_where_a_graph_can_batch() -> None:
  """JIT=2 changes nothing where tinygrad's splitter meets a device without a graph (the CPU): attribution leaves that
  rerun out there, and keeps it for a splitter of the user's own, or where the device has a graph (NULL)."""
  from tinygrad import Context

  from oracle.attribution import _stages
  stages = lambda target: [name for name, _ in _stages(target, pruned=True)]
  assert not tg.default_device_graphs() and stages(Target()) == ["planner", "prune"]
  assert stages(Target.for_mutant("reorder-dependent")) == ["planner", "graph", "prune"]
  with Context(DEV="NULL"): assert stages(Target("tinyjit")) == ["planner", "graph", "prune"]


def test_blame_reruns_no_jit2_under_hcq2() -> None:
  """Under HCQ2 a capture is one 'hcq' call, which no graph batches, so JIT=2 changes nothing even on a device with a
  graph (NULL here): attribution leaves that rerun out (HCQ2 is a process's setting, so a process of its own)."""
  code = ("from tinygrad import Context; from oracle.attribution import _stages; from oracle.targets import Target\n"
          "with Context(DEV='NULL'): print([name for name, _ in _stages(Target('tinyjit'), pruned=True)])")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, **hcq2.process_env(os.environ), "PYTHONPATH": str(ROOT)})
  assert out.returncode == 0, out.stderr[-600:]
  assert out.stdout.split("\n")[-2] == "['planner', 'prune']", out.stdout
