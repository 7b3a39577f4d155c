"""Hypothesis strategies that build valid programs by construction: shapes and dtypes are inferred while drawing.

A program is a chain of draws on the values made so far: mostly single ops (`fuzz.gen.single_ops`), one in
COMPOUND_ONE_IN a compound draw of a feature (`fuzz.gen.features`: a second device, chains, convs, other dtypes, big and
tiny buffers, deep models, ...), then the step's own parts drawn here: 1..3 backward() calls, state updates, an
in-place update or optimizer step, the returned value, kept tensors, feedback, a bound Variable and sometimes an eval
step jitted apart (`fuzz.gen.features.loop`). What the step needs from the features it asks their objects and
their ops' specs (`fuzz.gen.features.OPS`: a bound Variable when an op reads one), never their names.

Rules from the JIT's documented behaviour (shared/TINYGRAD_JIT_FACTS.md) that programs keep:
- grads are realized before any in-place parameter update (a lazy grad read after it is recomputed from the new
  value, tinygrad#17074), which `fuzz.gen.render` does whenever a program has an update;
- with prune=True nothing is random, no Variable is bound and no optimizer steps: prune runs what does not depend on
  the explicit inputs once (documented freezing, which the oracle drops after attribution when the prune split is
  sound), and those would make nearly every pruned program a documented difference; state tensors and their updates
  are drawn, so a state read before an input-dependent update tests the split itself;
- `Tensor.rand` is realized where it is drawn, after `Tensor.manual_seed` at build time, so eager and the JIT draw
  the same stream and no lazy escape re-draws it;
- with feedback, grads are realized inside the step and no lazy escape or returned view reads the fed-back input:
  eager feeds a new tensor each call where the JIT feeds back the same one, so a frozen graph over the capture
  call's input is not the "same buffer refilled in place" that makes a lazy escape's value defined;
- a float16 loss is never scaled by 1.0 (a drawn 1.0 becomes 2.0, the same draw): the grad of a subtracted float16
  value under it is the constant -1, which tinygrad 0.14.0's clang renderer cannot build
  (`fuzz.known.bugs` half-neg-unit-grad-vector-cast; a constant -1 float16 grad reached another way stays a
  rejection, none seen).
- under HCQ2 a shrink starts a multiple of 16 bytes into its buffer (`fuzz.gen.single_ops.aligned_start`): a kernel
  given a view at another offset kills the process there (`fuzz.known.bugs` hcq2-misaligned-view-kernel-segfault).
Each feature module states the rules its own draw keeps; AVOIDS names the tinygrad bugs (fuzz.known.avoided.AVOIDED_BUGS)
the step's own rules avoid, as a feature's `avoids` does for its draw.
"""
from __future__ import annotations

from hypothesis import strategies as st

from fuzz.gen.builder import DEFAULT, F16, F32, LEAF_DIMS, MAX_NDIM, MAX_OPS, Builder, Value, broadcast, promote
from fuzz.gen.features import COMPOUND, OPS, dtypes, loop
from fuzz.gen.ops import MOVEMENT
from fuzz.gen.program import Backward, Bound, Feedback, Group, Program, Returned, StateUpdate, Update, returned_names, returned_paths
from fuzz.gen.single_ops import applicable, draw_op

AVOIDS = ("half-neg-unit-grad-vector-cast", "hcq2-misaligned-view-kernel-segfault")
COMPOUND_ONE_IN = 2
HEAVY_ONE_IN = 2


def draw_kind(b: Builder, a: Value) -> Value:
  """Mostly a single op, one in COMPOUND_ONE_IN a compound draw (the draw shrinks towards single ops): a heavy one
  (deep, sharded, big buffers) one time in HEAVY_ONE_IN and at most once a program, else a light one. Two small
  uniform choices, not one long weighted list: Hypothesis's choices over a long list are far from uniform, and a
  feature with one slot in it could go undrawn for a whole seeded campaign."""
  if b.draw(st.integers(1, COMPOUND_ONE_IN)) == COMPOUND_ONE_IN:
    fits = [f for f in COMPOUND if f.applies(b, a)]
    heavy = [f for f in fits if f.heavy] if not any(f.heavy and f.name in b.features for f in COMPOUND) else []
    light = [f for f in fits if not f.heavy]
    group = heavy if heavy and (not light or b.draw(st.integers(1, HEAVY_ONE_IN)) == HEAVY_ONE_IN) else light
    feature = b.draw(st.sampled_from(group))
    b.features.append(feature.name)
    return feature.draw(b, a)
  return draw_op(b, a, b.draw(st.sampled_from(applicable(a))))


shapes = st.lists(st.sampled_from(LEAF_DIMS), min_size=1, max_size=MAX_NDIM).map(tuple)


def draw_returned(draw: st.DrawFn, names: list[str]) -> Returned:
  """A single value, or a tuple or list of values and one level of nested groups."""
  pick = st.sampled_from(names)
  top = draw(st.integers(0, 2))
  if top == 0: return draw(pick)
  items: list[Returned] = []
  for _ in range(draw(st.integers(1, 3))):
    items.append(Group(draw(st.sampled_from(("tuple", "list"))), tuple(draw(st.lists(pick, min_size=1, max_size=2))))
                 if draw(st.integers(0, 3)) == 3 else draw(pick))
  return Group("tuple" if top == 1 else "list", tuple(items))


def one_device(draw: st.DrawFn, b: Builder, names: list[str]) -> list[str]:
  """The parameters of one device (or one sharding) among `names`: an optimizer keeps its lr and step count on its
  first parameter's device, so one over a sharded and a plain parameter fails in eager ("all buffers must be on the
  same device")."""
  shard_of = {p.name: p.shard for p in b.params}
  homes = sorted({shard_of[n] for n in names}, key=lambda s: (s is not None, repr(s)))
  if len(homes) < 2: return names  # one device already (or none): nothing to draw
  home = draw(st.sampled_from(homes))
  return [n for n in names if shard_of[n] == home]


def draw_feedback(b: Builder, returns: Returned, reach: dict[str, set[str]]) -> Feedback | None:
  """Sometimes: an explicit input that, from call 1 on, is the previous call's returned tensor of its shape and dtype.
  The returned tensor must be a kernel's own output on the default device (not a view: inputs are real buffers), and no returned
  view may read the input it replaces. Nor may it come from an op that reads the step's Variable: the KV cache's window
  write is a view of its state at the call's `n`, and fed back it carries that binding into a call with another
  ("bind mismatch on n", a rejection in the emulated clean runs of 2026-12-05)."""
  values, paths = b.by_name(), returned_paths(returns)
  views = [n for _, n in paths if n in values and values[n].view]
  fits = [Feedback(i, path) for i, x in enumerate(b.inputs) for path, n in paths
          if x.shard is None and n in values and (v := values[n]).is_op and v.device == DEFAULT
          and (op := b.body[int(n[1:])].kind) not in MOVEMENT and not OPS[op].variable
          and (v.shape, v.dtype) == (x.shape, x.dtype) and not any(x.name in reach[m] for m in views)]
  return b.draw(st.sampled_from(fits)) if fits and b.draw(st.integers(0, 3)) == 0 else None


def programs() -> st.SearchStrategy[Program]:
  """Programs over the dtypes this device computes (probed once per process, here rather than mid-draw: the probe
  compiles kernels, which would count as slow data generation)."""
  from planner import tg
  tg.usable_dtypes(dtypes.DTYPES)
  return _programs()


def loss_scale(drawn: float, dtype: str) -> float:
  """The drawn scale, but 2.0 for a unit float16 loss (half-neg-unit-grad-vector-cast): mapping the value rather
  than drawing another keeps every seed's draws, so only the constant a float16 backward() multiplies by changes."""
  return 2.0 if dtype == F16 and drawn == 1.0 else drawn


@st.composite
def _programs(draw: st.DrawFn) -> Program:
  prune = draw(st.integers(0, 4)) == 4
  b = Builder(draw, pruned=prune)
  b.leaf("x", draw(shapes))
  for _ in range(draw(st.integers(0, MAX_OPS))):
    draw_kind(b, draw(st.sampled_from(b.pool()[::-1])))  # newest first: shrinking keeps programs a chain
  param_names = lambda v: b.reach()[v.name] & {p.name for p in b.params}
  if not any(v.is_op and param_names(v) for v in b.pool()):  # the loss needs a parameter: multiply one into the newest value
    last = b.pool()[-1]
    p = b.leaf("p", last.shape)
    b.emit("mul", (last.name, p.name), last.shape, promote(last.dtype, p.dtype), [last, p])
  losses = [v for v in b.pool()[::-1] if v.is_op and param_names(v)]
  first = [v for v in losses if v.name in b.losses] or losses  # a deep model's or a one-element total's output
  backward, have = [], set()
  for i in range(draw(st.integers(1, 3))):
    clear = tuple(draw(st.lists(st.sampled_from(sorted(have)), unique=True, max_size=2))) if i and have else ()
    loss = draw(st.sampled_from(losses if i else first))
    backward.append(Backward(loss.name, loss_scale(draw(st.sampled_from((1.0, 0.5, 2.0))), loss.dtype), clear, upcast=loss.dtype == F16))
    have = (have - set(clear)) | param_names(loss)
  ops = [v for v in b.values if v.is_op]
  state_updates = []
  for _ in range(draw(st.integers(0, 2))): b.leaf("s", draw(st.sampled_from(ops)).shape)
  for s in b.state:
    fits = [v for v in ops if v.device == DEFAULT and v.dtype in (F32, F16) and broadcast(s.shape, v.shape) == s.shape]
    src = draw(st.sampled_from(fits)) if fits and draw(st.booleans()) else None
    state_updates.append(StateUpdate(s.name, None if src is None else src.name, src is not None and src.dtype == F16))
  update = None
  grads = [p.name for p in b.params if p.name in have]
  kind = draw(st.sampled_from((None, "assign", "sgd", "adam"))) if not b.pruned and grads else None
  if kind is not None:
    dtypes_of = {p.name: p.dtype for p in b.params}
    eligible = grads if kind == "assign" else one_device(draw, b, [g for g in grads if dtypes_of[g] == F32])
    if eligible: update = Update(kind, tuple(draw(st.lists(st.sampled_from(eligible), min_size=1, max_size=len(eligible), unique=True))))
  names = [v.name for v in ops]
  returns = draw_returned(draw, names + [f"{g}.grad" for g in grads])
  reach = b.reach()
  feedback = draw_feedback(b, returns, reach)
  fed = set() if feedback is None else {b.inputs[feedback.input].name}
  kept = tuple(dict.fromkeys(b.keep + draw(st.lists(st.sampled_from(names), max_size=2, unique=True))))
  kept = tuple(n for n in kept if not reach[n] & fed)
  realize_grads = feedback is not None or draw(st.booleans())
  views = {v.name for v in ops if v.view}
  if not (realize_grads or state_updates or update) and all(n in views for n in returned_names(returns)):
    realize_grads = True  # else the capture may schedule nothing, which TinyJit rejects ("didn't JIT anything")
  variable = Bound(draw(st.sampled_from((1, 3, 5))), draw(st.integers(0, 7))) if any(OPS[op.kind].variable for op in b.body) else None
  method, reset, evaluate = loop.draw_method(b), loop.draw_reset(b), loop.draw_eval(b)
  lazy = [*kept, *returned_names(returns), *([] if realize_grads else [bw.value for bw in backward])]
  read_later = set().union(*(reach[n] for n in lazy if n in reach))
  input_assign = loop.draw_input_assign(b, read_later, fed) if evaluate is None else None
  return Program(tuple(b.params), tuple(b.inputs), tuple(b.state), tuple(b.body), tuple(backward), returns, kept,
                 realize_grads, tuple(state_updates), update, prune, feedback, variable,
                 features=tuple(dict.fromkeys(b.features)), method=method, reset=reset, evaluate=evaluate,
                 input_assign=input_assign)


# tinygrad's knobs, drawn per example (the simplest first, so failures shrink towards the default): JIT=2 skips
# graph-split, the batch size bounds graph batches and GRAPH_ONE_KERNEL graphs lone kernels (graphs exist on GPUs and
# the NULL device; on CPU 0.14.0 has none), HCQ2 lowers the whole JIT to one 'hcq' call, NO_MEMORY_PLANNER=1 turns the
# planner off inside the JIT (one in four). HCQ2 and GRAPH_ONE_KERNEL are process-wide in tinygrad: `tg.knobs`
# switches them per run, where this tinygrad's internals are supported. On a device with graphs JIT=1 (graphs on) is
# drawn three times in four, so most captures are graphed and replayed by the device's graph runner.
KNOBS = {"JIT": (1, 2), "JIT_BATCH_SIZE": (0, 2, 32), "NO_MEMORY_PLANNER": (0, 0, 0, 1)}
GRAPHED_JIT = (1, 1, 1, 2)
PROCESS_KNOBS = {"GRAPH_ONE_KERNEL": (0, 1)}


def knob_settings() -> st.SearchStrategy[dict[str, int]]:
  """One example's tinygrad knobs."""
  from planner import tg
  drawn = KNOBS | (PROCESS_KNOBS if not tg.MISSING else {}) | ({"JIT": GRAPHED_JIT} if tg.default_device_graphs() else {})
  return st.fixed_dictionaries({k: st.sampled_from(v) for k, v in drawn.items()})
