"""Each static invariant on a real linear: a passing plan, and a hand-corrupted plan or linear it must catch.

Most cases lower a captured program without compiling it (no kernel is built); the end-to-end ones run the #16571
step through PlannedJit and tinygrad's own TinyJit, and share their few kernels.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, nn

from oracle import invariants as inv
from planner import HoldContext, Lowered, MemoryPlan, PlannedBuffer, PlannedJit, buffer_name, lower, plan_from_linear, tg
from planner.jit import realize_returned
from planner.policies import live_tensors
from tests.programs import step_16571


def data(*shape: int, seed: int = 0) -> Tensor:
  return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32)).realize()


def static_lower(fn: Any, *args: Tensor) -> tuple[Lowered, Any]:
  """Capture fn once and lower it with 0.14.0's hold policy, compile=False: a real planned linear, no kernel built."""
  inputs = tg.prepare_inputs(args, {})
  with tg.capturing() as collector:
    ret = fn(*args)
    realize_returned(ret)
  captured = tg.make_linear([call for linear in collector.linears for call in linear.src])
  held = live_tensors(HoldContext(ret, captured, tuple(inputs.buffers)))
  return lower(captured, held, inputs.buffers, compile=False), ret


def chain(x: Tensor) -> Tensor:
  """Steps: 0 writes a, 1 updates a in place, 2 a -> b, 3 b -> c, 4 c -> d, 5 sums d. c and d reuse a's and b's bytes."""
  a = (x + 1).contiguous().realize()
  a.assign(a * 2).realize()
  b = (a * 2).contiguous()
  c = (b + 3).contiguous()
  return (c * 2).contiguous().sum()


def pure_write(x: Tensor, y: Tensor) -> Tensor:
  x.assign(y * 2).realize()
  return (y + 1).realize()


def read_write(x: Tensor, y: Tensor) -> Tensor:
  x.assign(x + y).realize()
  return (y + 1).realize()


def captured_jit(fn: Any, n_inputs: int = 1, **kw: Any) -> PlannedJit:
  """A PlannedJit of fn after its eager and capture calls on 64-element inputs."""
  jit = PlannedJit(fn, **kw)
  for k in range(2): jit(*(data(64, seed=10 * k + i) for i in range(n_inputs)))
  return jit


def with_buffers(plan: MemoryPlan, *bufs: PlannedBuffer) -> MemoryPlan: return dataclasses.replace(plan, buffers=bufs)


def moved(plan: MemoryPlan, p: PlannedBuffer, **changes: Any) -> MemoryPlan:
  """The plan with one record changed."""
  return with_buffers(plan, *(dataclasses.replace(b, **changes) if b is p else b for b in plan.buffers))


def graph(*calls: Any) -> Any: return tg.UOp(tg.Ops.CUSTOM_FUNCTION, src=(tg.make_linear(calls),), arg="graph").call()


def kinds_and_subjects(found: list) -> set[tuple[str, str]]: return {(f.kind, f.subject) for f in found}


@pytest.fixture(scope="module")
def chained() -> tuple[Lowered, Any, dict[str, PlannedBuffer]]:
  lowered, ret = static_lower(chain, data(64))
  by_first = {p.first: p for p in lowered.plan.buffers}
  return lowered, ret, {"a": by_first[0], "b": by_first[2], "c": by_first[3], "d": by_first[4]}


def test_chain_plan_shares_bytes(chained: tuple) -> None:
  """The passing cases below are only worth something if the plan really reuses bytes across lifetimes."""
  lowered, _, bufs = chained
  assert len(lowered.plan.buffers) == 4 and len(lowered.plan.arenas) == 1
  assert bufs["c"].offset == bufs["a"].offset and bufs["a"].last < bufs["c"].first


# ---------- 1. live-planned ----------

def test_live_planned_passes_for_held_tensors(chained: tuple) -> None:
  lowered, ret, _ = chained
  assert inv.live_buffer_planned(lowered.plan, {"ret": ret}) == []


def test_live_planned_names_the_tensor_path() -> None:
  lowered, ret = static_lower(chain, data(64))
  planned = lowered.plan.buffers[0]
  leak = data(64) + Tensor(planned.buffer)  # lazy: it reaches the buffer only deep in its graph, like a .grad from backward()
  found = inv.live_buffer_planned(lowered.plan, {"ret": ret, "model.leak": leak})
  assert kinds_and_subjects(found) == {(inv.LIVE_PLANNED, "model.leak")}
  assert found[0].details["buffers"] == [planned.name]


def test_live_planned_checks_unnamed_live_tensors() -> None:
  lowered, ret = static_lower(chain, data(64))
  leak = Tensor(lowered.plan.buffers[0].buffer)  # alive, in no dict: only the scan of all live tensors can find it
  assert kinds_and_subjects(inv.live_buffer_planned(lowered.plan, {"ret": ret})) == {(inv.LIVE_PLANNED, "live tensor (64,) float")}
  assert inv.live_buffer_planned(lowered.plan, {"ret": ret}, unnamed=False) == []
  del leak  # the check above needed it alive; drop it before another test scans live tensors


# ---------- 2. overlap ----------

def test_overlap_passes_for_reused_bytes(chained: tuple) -> None:
  assert inv.overlapping_lifetimes(chained[0].plan) == []


def test_overlap_catches_a_shifted_offset(chained: tuple) -> None:
  plan, bufs = chained[0].plan, chained[2]
  found = inv.overlapping_lifetimes(moved(plan, bufs["b"], offset=bufs["a"].offset))
  pairs = {(f.kind, f.subject, f.details["other"], f.details["shared_steps"]) for f in found}
  assert pairs == {(inv.OVERLAP, bufs["b"].name, bufs["a"].name, "[2, 2]"), (inv.OVERLAP, bufs["c"].name, bufs["b"].name, "[3, 3]")}


def test_overlap_judges_true_lifetimes_and_the_copy_hold_is_an_advisory(chained: tuple) -> None:
  """A hold (tinygrad's copy-lane contract) over bytes reused after the last use is no overlap, but the copy-lane
  advisory names it, and that the copied buffer shares its arena with compute buffers."""
  plan, bufs = chained[0].plan, chained[2]
  held = moved(plan, bufs["a"], hold=1)
  assert inv.overlapping_lifetimes(held) == []
  found = inv.copy_lane_contract(held)
  assert all(f.advisory for f in found)
  assert kinds_and_subjects(found) == {(inv.COPY_LANE, bufs["c"].name), (inv.COPY_LANE, "arena 0")}
  assert inv.copy_lane_contract(plan) == []


def test_overlap_never_pairs_a_buffer_with_itself(chained: tuple) -> None:
  plan, bufs = chained[0].plan, chained[2]
  assert inv.overlapping_lifetimes(with_buffers(plan, *plan.buffers, bufs["a"])) == []


# ---------- 3. bounds ----------

def test_bounds_pass(chained: tuple) -> None:
  assert inv.slices_in_bounds(chained[0].plan, chained[0].planned) == []


def test_bounds_catch_a_slice_past_its_arena(chained: tuple) -> None:
  lowered, _, bufs = chained
  found = inv.slices_in_bounds(moved(lowered.plan, bufs["d"], offset=lowered.plan.arenas[0].nbytes - 128), lowered.planned)
  record = [f for f in found if f.subject == bufs["d"].name]
  assert len(record) == 1 and record[0].kind == inv.BOUNDS and "outside arena" in record[0].details["problems"][0]


@pytest.mark.parametrize("change, problem", [({"nbytes": 128}, "slice of 128 bytes"), ({"dtype": "dtypes.int"}, "slice dtype")])
def test_bounds_catch_a_record_unlike_its_buffer(chained: tuple, change: dict, problem: str) -> None:
  lowered, _, bufs = chained
  found = inv.slices_in_bounds(moved(lowered.plan, bufs["b"], **change), lowered.planned)
  record = [f for f in found if f.subject == bufs["b"].name]
  assert [f.kind for f in record] == [inv.BOUNDS] and any(problem in p for p in record[0].details["problems"])


def test_bounds_catch_a_linear_slice_the_plan_lacks(chained: tuple) -> None:
  lowered, _, bufs = chained
  b = bufs["b"]
  arena = buffer_name(lowered.plan.arenas[b.arena].buffer)
  found = inv.slices_in_bounds(with_buffers(lowered.plan, *(p for p in lowered.plan.buffers if p is not b)), lowered.planned)
  assert kinds_and_subjects(found) == {(inv.BOUNDS, f"{arena}[{b.offset}:{b.offset + b.nbytes}]")}
  assert found[0].details["steps"] == [2, 3]


# ---------- 4. read-before-write ----------

def test_first_access_writes_passes(chained: tuple) -> None:
  assert inv.first_access_writes(chained[0].plan, chained[0].planned) == []


def test_first_access_catches_a_read(chained: tuple) -> None:
  lowered, _, bufs = chained
  found = inv.first_access_writes(moved(lowered.plan, bufs["b"], first=3), lowered.planned)
  assert kinds_and_subjects(found) == {(inv.READ_BEFORE_WRITE, bufs["b"].name)}
  assert found[0].details["problem"] == "read before any write"


def test_first_access_catches_an_in_place_update(chained: tuple) -> None:
  lowered, _, bufs = chained
  found = inv.first_access_writes(moved(lowered.plan, bufs["a"], first=1), lowered.planned)
  assert kinds_and_subjects(found) == {(inv.READ_BEFORE_WRITE, bufs["a"].name)}
  assert found[0].details["problem"].startswith("read and written")


def test_plan_checks_pass_on_a_rebuilt_plan(chained: tuple) -> None:
  """plan_from_linear's record of planfuzz's own plan must satisfy the same checks (it names the same slices)."""
  lowered, ret, _ = chained
  rebuilt = plan_from_linear(lowered.planned, lowered.parametrized, lowered.held)
  assert len(rebuilt.buffers) == 4
  assert inv.check_plan(rebuilt, lowered.planned, {"ret": ret}) == []


# ---------- 5. input-not-copied ----------

def feedback_step(x: Tensor) -> Tensor: return (x * 0.5 + 1).realize()


def test_fed_back_output_must_be_copied() -> None:
  """A replay given the JIT's own output back as its input: the linear writes that very buffer, so it must be copied."""
  jit = captured_jit(feedback_step)
  out = jit.lowered.final
  [written] = inv.pure_writes(out)
  assert inv.written_inputs_copied(out, (written,), {written}, 1) == []
  found = inv.written_inputs_copied(out, (written,), set(), 1)
  assert kinds_and_subjects(found) == {(inv.INPUT_NOT_COPIED, buffer_name(written))} and found[0].details["slot"] == 0
  graphed = tg.make_linear([graph(*out.src)])
  assert kinds_and_subjects(inv.written_inputs_copied(graphed, (written,), set(), 1)) == {(inv.INPUT_NOT_COPIED, buffer_name(written))}


def test_fresh_inputs_and_written_capture_inputs_need_no_copy() -> None:
  """A capture-time input the step writes is a PARAM, written through to the caller's tensor as in eager."""
  jit = captured_jit(pure_write, 2)
  assert not inv.pure_writes(jit.lowered.final) & set(jit.lowered.inputs)
  assert inv.written_inputs_copied(jit.lowered.final, tuple(data(64, seed=k) for k in range(2)), set(), 1) == []


def test_planned_jit_copies_a_fed_back_output() -> None:
  jit = captured_jit(feedback_step)
  x = jit(data(64))
  jit(x)
  assert jit.last_copied == {x.uop.base} and x.uop.base in inv.pure_writes(jit.lowered.final)


# ---------- 7. prune-split ----------

def state_then_update(s: Tensor) -> Any:
  """Reads state s before a kept call writes it from the input: tinygrad's one-pass prune runs the read only once."""
  def step(x: Tensor) -> Tensor:
    y = (s * 2).contiguous().realize()
    s.assign(x + 1).realize()
    return (y + x).realize()
  return step


def test_prune_split_flags_a_read_of_input_dependent_state() -> None:
  jit = captured_jit(state_then_update(data(64, seed=3)), prune=True)
  whole, once = jit.pruned
  assert len(once.src) == 1
  found = inv.prune_split_sound(whole, once, jit.lowered.inputs)
  assert [f.kind for f in found] == [inv.PRUNE_SPLIT] and found[0].details["reads"] and found[0].details["step"] == 0


def test_prune_split_passes_an_input_independent_constant() -> None:
  w = data(64, seed=4)
  def step(x: Tensor) -> Tensor:
    c = (w * 3).contiguous().realize()
    return (x + c).realize()
  jit = captured_jit(step, prune=True)
  whole, once = jit.pruned
  assert len(once.src) == 1 and inv.prune_split_sound(whole, once, jit.lowered.inputs) == []


# ---------- 6. graph-order ----------

def test_graph_order_passes(chained: tuple) -> None:
  calls = chained[0].planned.src
  graphed = tg.make_linear([graph(*calls[:3]), calls[3], graph(*calls[4:])])
  assert inv.graph_split_preserves_order(chained[0].planned, graphed) == []


def test_graph_order_catches_a_broken_dependency(chained: tuple) -> None:
  lowered, _, bufs = chained
  calls = lowered.planned.src
  graphed = tg.make_linear([graph(calls[0], calls[1], calls[3], calls[2]), *calls[4:]])
  found = inv.graph_split_preserves_order(lowered.planned, graphed)
  b = bufs["b"]
  b_slice = f"{buffer_name(lowered.plan.arenas[b.arena].buffer)}[{b.offset}:{b.offset + b.nbytes}]"
  raw = [f for f in found if f.details["dependency"] == "read-after-write"]
  assert [(f.kind, f.subject) for f in raw] == [(inv.GRAPH_ORDER, b_slice)]
  assert raw[0].details["before"].startswith("step 2") and raw[0].details["after"].startswith("step 3")


def test_graph_order_catches_a_lost_call(chained: tuple) -> None:
  calls = chained[0].planned.src
  found = inv.graph_split_preserves_order(chained[0].planned, tg.make_linear([graph(*calls[:4]), calls[5]]))
  assert [(f.kind, f.subject.split()[:2]) for f in found] == [(inv.GRAPH_ORDER, ["step", "4"])]


def test_graph_order_allows_reordering_independent_calls() -> None:
  lowered, _ = static_lower(pure_write, data(64), data(64, seed=1))
  first, second = lowered.planned.src
  assert inv.graph_split_preserves_order(lowered.planned, tg.make_linear([graph(second, first)])) == []


def test_check_lowered_passes_on_a_static_lowering(chained: tuple) -> None:
  lowered, ret, _ = chained
  assert lowered.compiled is lowered.planned
  assert inv.check_lowered(lowered, {"ret": ret}) == []


# ---------- end to end: the #16571 step ----------



def run_twice(jit: Any) -> None:
  """Call 0 runs eagerly, call 1 captures and runs the lowered linear."""
  for call in range(2): jit(data(2, 8, 8, 3, seed=2 * call), data(2, 4, 6, 6, seed=2 * call + 1))


def grads(conv: Any) -> dict[str, Tensor]: return {"conv.weight.grad": conv.weight.grad, "conv.bias.grad": conv.bias.grad}


def planned_jit(policy: str) -> tuple[PlannedJit, Any]:
  conv = nn.Conv2d(3, 4, 3)
  jit = PlannedJit(step_16571(conv), policy=policy)
  run_twice(jit)
  return jit, conv


def test_issue_16571_returned_only_policy_plans_the_grads_buffers() -> None:
  jit, conv = planned_jit("returned-only")
  assert jit.lowered is not None
  found = inv.check_lowered(jit.lowered, grads(conv))
  assert (inv.LIVE_PLANNED, "conv.weight.grad") in kinds_and_subjects(found)
  assert {f.kind for f in found} == {inv.LIVE_PLANNED}


def test_issue_16571_default_policy_passes_every_invariant() -> None:
  jit, conv = planned_jit("live-tensors")
  assert jit.lowered is not None and jit.lowered.compiled is not jit.lowered.planned
  assert inv.check_lowered(jit.lowered, grads(conv)) == []


def test_tinygrad_tinyjit_plan_of_issue_16571_passes() -> None:
  conv = nn.Conv2d(3, 4, 3)
  with tg.spy_tinyjit() as recs: run_twice(TinyJit(step_16571(conv)))
  assert len(recs) == 1 and recs[0].planned is not None
  assert inv.check_tinyjit_record(recs[0], grads(conv)) == []


def test_tinygrad_tinyjit_plan_with_reused_bytes_passes() -> None:
  with tg.spy_tinyjit() as recs:
    jit = TinyJit(chain)
    for call in range(2): ret = jit(data(64, seed=call))
  rebuilt = plan_from_linear(recs[0].planned, recs[0].parametrized, recs[0].held)
  assert len(rebuilt.buffers) == 4 and len({p.offset for p in rebuilt.buffers}) == 2
  assert inv.check_tinyjit_record(recs[0], {"ret": ret}) == []
