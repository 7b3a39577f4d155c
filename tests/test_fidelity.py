"""Fidelity: for every corpus program, PlannedJit with the defaults is tinygrad's TinyJit, number for number and plan
for plan; the returned-only policy reproduces #16571; bad policies, planners and targets fail with a message that
says how to fix them."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from tinygrad import Context, Device, Tensor

from oracle.compare import judge
from oracle.findings import ALL_ZEROS, STALE, WRONG_VALUES
from oracle.runs import FRESH, SAME_BUFFER, Trace, reference, run
from oracle.subject import Subject
from oracle.targets import Target, TargetError
from planner import PLANNERS, POLICIES, MemoryPlan, PlanfuzzUsageError, PlannedJit, PlannerError, plan_from_linear, plan_memory, tg
from planner.memplan import COPY_LANE
from planner.policies import HoldContext, allocated_only, live_tensors, returned_only
from tests.corpus import CALLS, CORPUS

PLANNER, TINYJIT = Target(), Target("tinyjit")
NAMES = sorted(CORPUS)


# ---------- a. the same numbers as TinyJit ----------

def assert_same_trace(ours: Trace, theirs: Trace, lazy_too: bool) -> int:
  """Bit-identical snapshots, the same paths and the same lazy sets on every call; returns how many values were compared."""
  assert ours.error is None and theirs.error is None, (ours.error, theirs.error)
  assert len(ours.calls) == len(theirs.calls) == CALLS
  compared = 0
  for a, b in zip(ours.calls, theirs.calls, strict=True):
    assert set(a.values) == set(b.values), f"call {a.index}: paths differ"
    assert a.lazy == b.lazy, f"call {a.index}: lazy sets differ: {sorted(a.lazy)} vs {sorted(b.lazy)}"
    for path, got in a.values.items():
      if not lazy_too and path in a.lazy: continue
      want = b.values[path]
      assert got.dtype == want.dtype and np.array_equal(got, want), f"call {a.index} {path}: {got} vs TinyJit's {want}"
      compared += 1
  return compared


@pytest.mark.parametrize("name", NAMES)
def test_same_numbers_as_tinyjit_same_buffer(traced, name: str) -> None:
  assert assert_same_trace(traced(name, PLANNER, SAME_BUFFER), traced(name, TINYJIT, SAME_BUFFER), lazy_too=True) > 0


@pytest.mark.parametrize("name", NAMES)
def test_same_numbers_as_tinyjit_fresh(traced, name: str) -> None:
  """With fresh inputs a lazy escape reads capture-time inputs that may since have been freed and recycled: not compared."""
  assert assert_same_trace(traced(name, PLANNER, FRESH), traced(name, TINYJIT, FRESH), lazy_too=False) > 0


# ---------- b. the same plans as tinygrad's memory_plan_rewrite ----------

@dataclass(frozen=True)
class Capture:
  lowered: Any  # PlannedJit's Lowered
  allocated: frozenset  # held sets of the other built-in policies, taken at the same moment as the default's
  returned: frozenset
  tinyjit: tg.TinyJitLowering  # what a real TinyJit lowered for another instance of the same program


@functools.cache
def captured(name: str) -> Capture:
  """Calls 0 and 1 under PlannedJit (default policy, recording the other policies' held sets) and under a spied TinyJit."""
  held: dict[str, frozenset] = {}

  def recording(ctx: HoldContext) -> set:
    held["allocated"], held["returned"] = frozenset(allocated_only(ctx)), frozenset(returned_only(ctx))
    return live_tensors(ctx)
  ours = run(CORPUS[name], lambda step, prune: PlannedJit(step, prune=prune, policy=recording), 2, SAME_BUFFER)
  with tg.spy_tinyjit() as spied:
    theirs = run(CORPUS[name], TINYJIT.wrap, 2, SAME_BUFFER)
  assert ours.error is None and theirs.error is None and len(spied) == 1, (ours.error, theirs.error, len(spied))
  return Capture(ours.jit.lowered, held["allocated"], held["returned"], spied[0])


def tinygrads_plan(linear: Any, held: frozenset) -> MemoryPlan:
  return plan_from_linear(tg.tinygrad_memory_plan(linear, set(held)), linear, held)


def placed(plan: MemoryPlan) -> dict[Any, tuple]:
  """Where each original BUFFER went: stronger than layout(), which forgets which buffer is which."""
  return {b.buffer: b.layout() for b in plan.buffers}


def assert_planners_agree(linear: Any, held: frozenset) -> MemoryPlan:
  """planfuzz's planner and tinygrad's on the same linear and held set: same arenas, same offsets, same buffers;
  and planfuzz's plan record is the plan rebuilt from its own output linear."""
  out, ours = plan_memory(linear, held)
  theirs = tinygrads_plan(linear, held)
  assert ours.layout() == theirs.layout()
  assert placed(ours) == placed(theirs)
  assert plan_from_linear(out, linear, held).layout() == ours.layout()
  return ours


@pytest.mark.parametrize("name", NAMES)
def test_default_plan_is_tinygrads(name: str) -> None:
  low = captured(name).lowered
  assert low.plan.layout() == tinygrads_plan(low.parametrized, low.held).layout()
  assert placed(low.plan) == placed(tinygrads_plan(low.parametrized, low.held))
  assert plan_from_linear(low.planned, low.parametrized, low.held).layout() == low.plan.layout()


@pytest.mark.parametrize("held", ["allocated", "returned"])
@pytest.mark.parametrize("name", NAMES)
def test_planners_agree_on_smaller_held_sets(name: str, held: str) -> None:
  """The default policy holds almost everything; allocated-only (and returned-only) leave the planner real work."""
  cap = captured(name)
  assert_planners_agree(cap.lowered.parametrized, getattr(cap, held))


@pytest.mark.parametrize("name", NAMES)
def test_plannedjit_plans_like_a_real_tinyjit(name: str) -> None:
  """Another instance of the program under tinygrad's own TinyJit: the same number of calls and the same plan layout,
  so PlannedJit's capture, held set and parametrization match TinyJit's, not just its planner."""
  cap = captured(name)
  real = cap.tinyjit
  assert len(real.parametrized.src) == len(cap.lowered.parametrized.src)
  assert plan_from_linear(real.planned, real.parametrized, real.held).layout() == cap.lowered.plan.layout()


def test_planning_is_not_vacuous() -> None:
  """The comparisons above would pass if nothing were ever planned: make sure most programs plan real buffers."""
  smaller = {n: plan_memory(captured(n).lowered.parametrized, captured(n).allocated)[1] for n in NAMES}
  assert sum(bool(p.buffers) for p in smaller.values()) >= 20
  assert sum(len(p.arenas) > 1 for p in smaller.values()) >= 2  # the copy programs plan CPU, CPU:1 and copy lanes
  assert any(a.lane == COPY_LANE for p in smaller.values() for a in p.arenas)
  assert sum(bool(captured(n).lowered.plan.buffers) for n in NAMES) >= 15  # the default policy still plans intermediates


@pytest.mark.parametrize("name, dropped", [("prune_constant_part", 1), ("prune_all_input", 0)])
def test_prune_programs_prune_as_described(name: str, dropped: int) -> None:
  """prune_constant_part's parameter reduction does not depend on the input: prune=True runs it once and drops it."""
  calls = {p: len(run(CORPUS[name], lambda step, _, p=p: PlannedJit(step, prune=p), 2).jit.lowered.captured.src) for p in (True, False)}
  assert CORPUS[name]().prune and calls[False] - calls[True] == dropped


# ---------- c. the returned-only policy is #16571 ----------

def run_16571(target: Target, fresh_memory: bool) -> tuple[Trace, Trace]:
  """With fresh_memory, the allocator's cache is emptied and LRU is off, so a buffer allocated late is fresh (zeroed) pages."""
  program = CORPUS["conv_16571"]
  if not fresh_memory: return reference(program, CALLS, SAME_BUFFER), run(program, target.wrap, CALLS, SAME_BUFFER)
  Device["CPU"].allocator.free_cache()
  with Context(LRU=0): return reference(program, CALLS, SAME_BUFFER), run(program, target.wrap, CALLS, SAME_BUFFER)


def weight_grad_findings(ref: Trace, got: Trace) -> list:
  verdict = judge(ref, got, SAME_BUFFER)
  assert verdict.rejected is None
  return [f for f in verdict.findings if f.subject == "conv.weight.grad"]


def test_returned_only_policy_reproduces_16571_all_zeros() -> None:
  """0.13.0's held set plans the BUFFERs the lazy conv.weight.grad reads into the arena: the JIT writes the arena, the
  grad reads the original BUFFERs, which nothing writes. Allocated fresh (LRU off, cache empty) they are zero pages,
  so the grad is all zeros from the capture call on, as the facts file says of 0.13.0."""
  ref, got = run_16571(Target(policy="returned-only"), fresh_memory=True)
  findings = weight_grad_findings(ref, got)
  assert {f.call for f in findings} == set(range(1, CALLS))
  assert {f.kind for f in findings} == {ALL_ZEROS}
  for k in range(2, CALLS):
    grad = got.calls[k].values["conv.weight.grad"]
    assert not grad.any() and not np.array_equal(grad, ref.calls[k].values["conv.weight.grad"])


def test_returned_only_policy_reproduces_16571_recycled_memory() -> None:
  """With tinygrad's default LRU allocator the unwritten BUFFERs get recycled memory of earlier freed buffers, so on
  this machine the grad shows `wrong-values` (or `stale`, or zeros, depending on what was freed before): the class
  depends on allocation history, the finding on every replay does not."""
  ref, got = run_16571(Target(policy="returned-only"), fresh_memory=False)
  findings = weight_grad_findings(ref, got)
  assert set(range(2, CALLS)) <= {f.call for f in findings}
  assert {f.kind for f in findings} <= {WRONG_VALUES, STALE, ALL_ZEROS}


@pytest.mark.parametrize("fresh_memory", [True, False])
def test_live_tensors_policy_fixes_16571(fresh_memory: bool) -> None:
  """The default policy holds every BUFFER a live tensor reaches: conv.weight.grad equals eager's bit for bit on every
  call. conv.bias.grad is a pending assign made at capture (the step never resets it, so backward() accumulates into
  it): its first read realizes it, and from then on it is the capture call's value, as documented; exactly that."""
  ref, got = run_16571(PLANNER, fresh_memory)
  assert not weight_grad_findings(ref, got) and judge(ref, got, SAME_BUFFER).ok
  assert "conv.bias.grad" in got.calls[1].pending_assigns
  for k in range(CALLS):
    assert np.array_equal(got.calls[k].values["conv.weight.grad"], ref.calls[k].values["conv.weight.grad"]), k
    assert np.array_equal(got.calls[k].values["conv.bias.grad"], ref.calls[min(k, 1)].values["conv.bias.grad"]), k
  assert not np.array_equal(ref.calls[2].values["conv.bias.grad"], ref.calls[1].values["conv.bias.grad"])  # eager keeps accumulating


# ---------- d. bad input ----------

def double(x: Tensor) -> Tensor: return (x * 2).contiguous()
def none_planner(linear: Any, held: set) -> None: return None
def dropping_planner(linear: Any, held: set) -> Any: return tg.make_linear(linear.src[:-1])
def two_kernels(x: Tensor) -> Tensor: return ((x + 1).contiguous() * 2).contiguous()


@pytest.mark.parametrize("kwargs, needles", [
  ({"policy": "nope"}, ["unknown policy 'nope': choose one of ", "allocated-only", "live-tensors", "returned-only", "'module:function'"]),
  ({"policy": 42}, ["policy must be a name or 'module:function', got int"]),
  ({"planner": "nope"}, ["unknown planner 'nope': choose one of ", "planfuzz", "tinygrad", "'module:function'"]),
  ({"planner": "no_such_module:fn"}, ["module 'no_such_module' does not import", "ModuleNotFoundError", "PYTHONPATH"]),
  ({"planner": "math:pi"}, ["'pi' is a float, not a callable"]),
  ({"planner": "os:nonexistent"}, ["module 'os' has no attribute 'nonexistent'"]),
  ({"policy": "os:nonexistent"}, ["policy 'os:nonexistent'", "has no attribute 'nonexistent'"]),
])
def test_bad_names_fail_at_construction(kwargs: dict, needles: list[str]) -> None:
  with pytest.raises(PlanfuzzUsageError) as e: PlannedJit(double, **kwargs)
  for needle in needles: assert needle in str(e.value)


def test_unknown_names_list_every_choice() -> None:
  """The list of choices is the registries' (built-ins and mutants alike), so the message never goes out of date."""
  for kind, registry in (("policy", POLICIES), ("planner", PLANNERS)):
    with pytest.raises(PlanfuzzUsageError) as e: PlannedJit(double, **{kind: "nope"})
    assert all(name in str(e.value) for name in registry), (kind, str(e.value))


@pytest.mark.parametrize("planner, needles", [
  (none_planner, ["planner 'none_planner' returned NoneType", "expected a LINEAR UOp", "returns the rewritten linear"]),
  # given as 'module:function', the message names the spec the user wrote
  (f"{__name__}:none_planner", [f"planner '{__name__}:none_planner' returned NoneType", "expected a LINEAR UOp"]),
  (dropping_planner, ["planner 'dropping_planner' changed the number of calls (2 -> 1)", "never add, drop or reorder calls"]),
])
def test_planner_breaking_its_contract_fails_at_capture(planner: Any, needles: list[str]) -> None:
  jit = PlannedJit(two_kernels, planner=planner)
  jit(Tensor(np.ones(8, np.float32)).realize())  # call 0 runs eagerly: no planner yet
  with pytest.raises(PlannerError) as e: jit(Tensor(np.ones(8, np.float32)).realize())
  for needle in needles: assert needle in str(e.value)


def test_bad_targets() -> None:
  with pytest.raises(TargetError, match="unknown target 'nope': choose one of planner, tinyjit"): Target("nope")
  with pytest.raises(TargetError, match="unknown policy 'nope'"): Target(policy="nope")
  with pytest.raises(TargetError, match="unknown planner 'nope'"): Target(planner="nope")


def test_a_subject_without_observables_is_fine() -> None:
  """Subject's observe defaults to nothing: the oracle then compares only the return value (guards the fidelity tests'
  assumption that `compared > 0` comes from the returns of programs without observe)."""
  subject = Subject(double, lambda k, prev: [np.full(4, k, np.float32)])
  assert subject.observe() == {}
  trace = run(lambda: subject, PLANNER.wrap, 3, SAME_BUFFER)
  assert [c.values["ret"].tolist() for c in trace.calls] == [[0.0] * 4, [2.0] * 4, [4.0] * 4]
