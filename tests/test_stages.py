"""The lowering stages and PlannedJit's call semantics, checked against tinygrad's own behaviour."""
import numpy as np
import pytest
from tinygrad import Context, Tensor, TinyJit

from planner import PlannedJit, lower, plan_from_linear, tg
from planner.stages import prune, written_buffers


def chain(x: Tensor) -> Tensor:
  a = (x + 1).contiguous()
  b = (a * 2).half().contiguous()
  return (b.float() + a).sum().realize()


def arr(k: int, shape=(20,)) -> np.ndarray: return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * (k + 1) / 7


def captured(fn, *arrays, **kw) -> PlannedJit:
  jit = PlannedJit(fn, **kw)
  for _ in range(2): jit(*[Tensor(a).realize() for a in arrays])
  return jit


def test_lower_keeps_every_stage() -> None:
  low = captured(chain, arr(0), policy="allocated-only").lowered
  assert len(low.captured.src) == len(low.parametrized.src) == len(low.planned.src) == 3
  params = [a for c in low.parametrized.src for a in tg.call_args(c) if a.op is tg.Ops.PARAM]
  assert params and all(u.arg.slot == 0 for u in params) and not any(u in low.parametrized.toposort() for u in low.inputs)
  assert len(low.plan.buffers) == 3 and low.plan.arenas[0].nbytes == 768  # a(80 B) and b(40 B) share nothing: 3 slots of 256
  assert [p.offset for p in sorted(low.plan.buffers, key=lambda p: p.first)] == [0, 256, 512]
  assert all(c.src[0].op is tg.Ops.PROGRAM for c in low.compiled.src)


def test_static_lowering_compiles_nothing() -> None:
  low = captured(chain, arr(0)).lowered
  static = lower(low.captured, low.held | {b for b in tg.allocated_buffers()}, low.inputs, compile=False)
  assert static.final is static.planned and all(c.src[0].op is tg.Ops.SINK for c in static.final.src)


def test_plan_record_matches_plan_rebuilt_from_output() -> None:
  low = captured(chain, arr(0), policy="allocated-only").lowered
  assert plan_from_linear(low.planned, low.parametrized, low.held).layout() == low.plan.layout()


def test_no_memory_planner_is_honoured() -> None:
  with Context(NO_MEMORY_PLANNER=1):
    low = captured(chain, arr(0), policy="allocated-only").lowered
  assert low.planned is low.parametrized and not low.plan.buffers


def test_same_numbers_and_objects_as_tinyjit() -> None:
  ours, theirs = PlannedJit(chain), TinyJit(chain)
  outs = [(ours(Tensor(arr(k)).realize()), theirs(Tensor(arr(k)).realize())) for k in range(4)]
  assert outs[1][0] is outs[3][0] and outs[2][0] is outs[3][0]
  a, b = outs[3]
  assert np.array_equal(a.numpy(), b.numpy())


def test_duplicate_inputs_rejected_like_tinyjit() -> None:
  x = Tensor(arr(0)).realize()
  for jit in (PlannedJit(lambda a, b: (a + b).realize()), TinyJit(lambda a, b: (a + b).realize())):
    with pytest.raises(tg.JitError, match="duplicate"): jit(x, x)


def test_input_shape_change_rejected_on_replay() -> None:
  jit = PlannedJit(lambda a: (a * 2).realize())
  for k in range(2): jit(Tensor(arr(k)).realize())
  with pytest.raises(tg.JitError, match="mismatch"): jit(Tensor(arr(0, (4, 5))).realize())


def test_nothing_captured_raises() -> None:
  jit = PlannedJit(lambda a: a)
  jit(Tensor(arr(0)).realize())
  with pytest.raises(tg.JitError, match="didn't JIT"): jit(Tensor(arr(1)).realize())


def test_output_fed_back_as_input_matches_eager() -> None:
  def step(x: Tensor) -> Tensor: return (x * 0.5 + 1).realize()
  jit, x, want = PlannedJit(step), Tensor(arr(0)).realize(), arr(0)
  for _ in range(5):
    x, want = jit(x), want * 0.5 + 1
  assert np.allclose(x.numpy(), want)


def test_prune_splits_input_independent_calls() -> None:
  w = Tensor(arr(3)).realize()
  def step(x: Tensor) -> Tensor:
    c = (w * 3).contiguous().realize()
    return (x + c).realize()
  jit = captured(step, arr(0), prune=True)
  low = jit.lowered
  assert len(low.captured.src) == 1  # w*3 ran once at capture and was dropped
  kept, once = prune(tg.make_linear([]), low.inputs)
  assert not kept.src and not once.src
  assert np.allclose(jit(Tensor(arr(2)).realize()).numpy(), arr(2) + arr(3) * 3)


def test_written_buffers_are_pure_writes() -> None:
  low = captured(chain, arr(0), policy="allocated-only").lowered
  written = written_buffers(low.compiled)
  assert written and all(tg.is_buffer(b) for b in written)
  assert not any(b in written for b in low.inputs)


def test_static_path_on_null_compiles_and_graph_splits() -> None:
  """The NULL device has a graph and runs nothing: the static path lowers all the way there, graph batches included."""
  from oracle.static import capture, check_capture
  from oracle.subject import Subject
  from oracle.targets import Target
  program = lambda: Subject(chain, lambda k, _: [arr(k)])
  with Context(DEV="NULL"):
    assert tg.default_device_graphs()
    subject, ret, captured, inputs = capture(program)
    low = lower(captured, tg.allocated_buffers(), inputs, compile=True)
    assert any(tg.is_graph_call(c) for c in low.final.src) and len(tg.flat_calls(low.final)) == len(low.compiled.src)
    assert check_capture(subject, ret, captured, inputs, Target("static"), compile=True).findings == []
  assert not tg.default_device_graphs()  # the CPU of tinygrad 0.14.0 has none
