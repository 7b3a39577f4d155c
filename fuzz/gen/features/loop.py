"""How training loops write and call their steps: a train step and an eval step, each jitted on its own over the same
parameters and called alternately (train, then eval, every call); and `jit.reset()` between two calls, after which
the step is captured again (a loop that changes its batch shape or learning-rate schedule resets its JIT); and the
step as a model's `__call__`, jitted with the decorator form (`@TinyJit(prune=...)`), called on the model object; and
an explicit input assigned at the end of the step and left lazy (`x.assign(v.detach())`, as tinygrad#16618's step
does), the input observed after every call.

The eval step recomputes one forward value of the train step from the same arguments: no backward, no update, no
state written. Its JIT is captured while the train step's lazy grads and kept tensors are alive and reads the
parameters the train step's optimizer updates in place (implicit inputs, bound by buffer identity), so a JIT that
binds or holds them wrongly shows stale or wrong eval values on replay.

A reset comes before call 2 or 3 (`oracle.schedule`): that call runs eagerly, the next captures anew with the live
tensors of then, and the rest replay the new capture, each judged against its own capture (Python values, bound
Variables, pending assigns and returned input views frozen then). Only the train step's JIT is reset.

Rules kept by the input assign: the input is unsharded, not fed back, and no value a later read computes lazily reads
it (a kept or returned value, a grad left lazy): those would read it before or after the assign depending on the
order of reads; the source has the input's shape, dtype and device; no eval step reads the assigned input; not in a
pruned program. tinygrad drops the assign on replay (fuzz.known.bugs: jit-input-assign-dropped).

Rules kept by the eval step: the value is computed by at least one kernel (a pure view captures nothing: TinyJit rejects it) and
reaches a parameter; it runs no op its spec keeps out of eval steps (`fuzz.gen.ops.OpSpec.in_eval`: a rand would
advance the generator's stream between train steps, a KV-cache write would write state, a shard leaves the default
device); no eval step in a pruned program (prune's freezing is the train step's).
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.gen.builder import DEFAULT, F16, F32, Builder
from fuzz.gen.features.feature import Feature
from fuzz.gen.ops import MOVEMENT, OPS
from fuzz.gen.program import InputAssign, needed_ops

EVAL_ONE_IN = 4
RESET_ONE_IN = 5
RESET_CALLS = (2, 3)  # before the first replay, or after one
METHOD_ONE_IN = 4
INPUT_ASSIGN_ONE_IN = 3


def draw_eval(b: Builder) -> str | None:
  """Sometimes: the value an eval step returns."""
  if b.pruned: return None
  params, body = {p.name for p in b.params}, tuple(b.body)
  fits = [v.name for v in b.values if v.is_op and v.device == DEFAULT and v.dtype in (F32, F16) and _evaluable(body, v.name, params)]
  return b.draw(st.sampled_from(fits)) if fits and b.draw(st.integers(1, EVAL_ONE_IN)) == EVAL_ONE_IN else None


def _evaluable(body: tuple, value: str, params: set[str]) -> bool:
  ops = needed_ops(body, value)
  reads = {a for op in ops for a in op.args[:OPS[op.kind].arity]}
  return (bool(reads & params) and any(op.kind not in MOVEMENT for op in ops)
          and all(OPS[op.kind].in_eval for op in ops))


def draw_reset(b: Builder) -> int | None:
  """Sometimes: the call before which the step's JIT is reset."""
  return b.draw(st.sampled_from(RESET_CALLS)) if b.draw(st.integers(1, RESET_ONE_IN)) == RESET_ONE_IN else None


def draw_method(b: Builder) -> bool:
  """Sometimes: the step is a model's jitted `__call__`."""
  return b.draw(st.integers(1, METHOD_ONE_IN)) == METHOD_ONE_IN


def draw_input_assign(b: Builder, read_later: set[str], fed: set[str]) -> InputAssign | None:
  """Sometimes: an explicit input assigned from a value of its shape at the end of the step; a new input of a
  computed value's shape when no existing input may be (the step then takes it only to assign it, as #16618's does).
  `read_later`: the leaves that lazy reads after the step reach; `fed`: the fed-back input."""
  if b.pruned or b.draw(st.integers(1, INPUT_ASSIGN_ONE_IN)) != INPUT_ASSIGN_ONE_IN: return None
  fits = [InputAssign(x.name, v.name) for x in b.inputs if x.shard is None and x.name not in read_later | fed
          for v in b.values if v.name != x.name and v.device == DEFAULT and (v.shape, v.dtype) == (x.shape, x.dtype)]
  if fits: return b.draw(st.sampled_from(fits))
  sources = [v for v in b.values if v.is_op and v.device == DEFAULT]
  if not sources: return None
  v = b.draw(st.sampled_from(sources))
  return InputAssign(b.leaf("x", v.shape, v.dtype, pool=False).name, v.name)


FEATURE = Feature("train/eval steps", lambda p: p.evaluate is not None)
RESET_FEATURE = Feature("jit reset", lambda p: p.reset is not None)
METHOD_FEATURE = Feature("model method", lambda p: p.method)
INPUT_ASSIGN_FEATURE = Feature("input assign", lambda p: p.input_assign is not None)
FEATURES = (FEATURE, RESET_FEATURE, METHOD_FEATURE, INPUT_ASSIGN_FEATURE)
