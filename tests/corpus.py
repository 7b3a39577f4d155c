"""A corpus of hand-written step programs: each name maps to a zero-arg factory that builds a fresh `Subject`.

Every factory makes its own parameters and state from seeded numpy arrays, so the reference run and each JIT
run never share a buffer and every run of a program sees the same numbers. Steps are pure functions of their
tensors (the JIT freezes Python state at capture): training steps reset grads first, assigns are realized
inside the step, and no step branches on the call count. `observe()` names what a user can read outside
the return value: `.grad`s, assigned state, optimizer state and lazy tensors kept in `kept[0]`.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tinygrad import Context, Tensor, Variable, dtypes, nn

from oracle.subject import Subject, SubjectFactory
from tests.programs import step_16571

CALLS = 5  # calls per run in the corpus tests: eager, capture, three replays
CORPUS: dict[str, SubjectFactory] = {}
# programs whose JIT runs disagree with the reference in a way we believe is a genuine tinygrad bug (see the report)
SUSPECTED_BUGS: dict[str, SubjectFactory] = {}


def program(fn: SubjectFactory) -> SubjectFactory:
  CORPUS[fn.__name__] = fn
  return fn


# ---------- helpers ----------

def arr(seed: int, *shape: int, scale: float = 1.0, dtype: type = np.float32) -> np.ndarray:
  return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def param(seed: int, *shape: int, scale: float = 0.5) -> Tensor:
  return Tensor(arr(seed, *shape, scale=scale)).realize()


def load(t: Tensor, seed: int, scale: float = 0.5) -> Tensor:
  """Overwrite an nn layer's (lazily random) weight in place with seeded numbers, keeping the Tensor object.

  The lazy random init is swapped for an empty buffer first: assigning straight over it works too, but schedules the
  whole threefry graph (about 5x slower), and this runs for every parameter of every program build."""
  return t.replace(Tensor.empty(*t.shape, dtype=t.dtype)).assign(Tensor(arr(seed, *t.shape, scale=scale))).realize()


def load_layers(*layers: object, seed: int = 0) -> list[Tensor]:
  params = nn.state.get_parameters(list(layers))
  for i, p in enumerate(params): load(p, seed + i)
  return params


def per_call(*shapes: tuple[int, ...], seed: int = 0) -> Callable[[int, object], list]:
  """Call k's inputs: one seeded float32 array per shape, different on every call."""
  return lambda k, prev: [arr(seed + 100 * k + i, *s) for i, s in enumerate(shapes)]


def feedback(first: tuple[int, ...], *extra: tuple[int, ...], seed: int = 0) -> Callable[[int, object], list]:
  """Call 0 gets an array; every later call gets the previous call's returned tensor back, then fresh extras."""
  rest = per_call(*extra, seed=seed + 1)
  return lambda k, prev: [arr(seed, *first) if k == 0 else prev, *rest(k, prev)]


def grads(named: dict[str, Tensor]) -> dict[str, Tensor]:
  return {f"{n}.grad": t.grad for n, t in named.items() if t.grad is not None}


def reset(params: list[Tensor]) -> None:
  for p in params: p.grad = None


# ---------- the #16571 family ----------

@program
def conv_16571() -> Subject:
  """tinygrad#16571 exactly: two backward() calls with conv.weight.grad reset between, grads left lazy, no reset at the
  start (conv.bias.grad accumulates into a pending assign made at capture). Fixed in 0.14.0 by holding live tensors."""
  conv = nn.Conv2d(3, 4, 3)
  load(conv.weight, 1)
  load(conv.bias, 2)
  return Subject(step_16571(conv), per_call((2, 8, 8, 3), (2, 4, 6, 6), seed=10),
                 lambda: grads({"conv.weight": conv.weight, "conv.bias": conv.bias}))


@program
def grads_lazy() -> Subject:
  """Linear regression whose grads stay lazy after the step: frozen graphs over capture-time buffers."""
  w, b = param(20, 8, 4), param(21, 4)

  def step(x: Tensor, y: Tensor) -> Tensor:
    reset([w, b])
    loss = ((x @ w + b) - y).square().mean()
    loss.backward()
    return loss.realize()
  return Subject(step, per_call((4, 8), (4, 4), seed=22), lambda: grads({"w": w, "b": b}))


@program
def grads_realized() -> Subject:
  """Grads realized inside the step but not returned (`Tensor.realize(*grads)`): rewritten by every replay."""
  w, b = param(30, 8, 4), param(31, 4)

  def step(x: Tensor, y: Tensor) -> Tensor:
    reset([w, b])
    loss = ((x @ w + b).relu() - y).square().sum()
    loss.backward()
    Tensor.realize(loss, w.grad, b.grad)
    return loss
  return Subject(step, per_call((4, 8), (4, 4), seed=32), lambda: grads({"w": w, "b": b}))


@program
def grads_returned() -> Subject:
  """Grads returned with the loss as a tuple: the JIT realizes them together and hands back the same objects."""
  w, b = param(40, 8, 4), param(41, 4)

  def step(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    reset([w, b])
    loss = ((x @ w + b).sigmoid() - y).square().mean()
    loss.backward()
    return loss, w.grad, b.grad
  return Subject(step, per_call((4, 8), (4, 4), seed=42), lambda: grads({"w": w, "b": b}))


@program
def grads_deep_lazy() -> Subject:
  """A three-layer tanh network whose grads stay lazy: their graphs read many capture-time intermediates."""
  ws = [param(50 + i, 8, 8) for i in range(3)]

  def step(x: Tensor) -> Tensor:
    reset(ws)
    h = x
    for w in ws: h = (h @ w).tanh()
    loss = h.square().sum()
    loss.backward()
    return loss.realize()
  return Subject(step, per_call((4, 8), seed=53), lambda: grads({f"w{i}": w for i, w in enumerate(ws)}))


@program
def backward_twice_accumulate() -> Subject:
  """Two backward() calls without a reset between: the second accumulates into .grad (a pending assign)."""
  w, b = param(60, 8, 4), param(61, 4)

  def step(x: Tensor) -> Tensor:
    reset([w, b])
    out = x @ w + b
    out.square().sum().backward()
    (out * 2).sum().backward()
    return out.mean().realize()
  return Subject(step, per_call((4, 8), seed=62), lambda: grads({"w": w, "b": b}))


@program
def backward_twice_reset() -> Subject:
  """Two backward() calls with both grads set to None between: only the second pass's grads survive, lazily."""
  w, b = param(70, 8, 4), param(71, 4)

  def step(x: Tensor) -> Tensor:
    reset([w, b])
    out = (x @ w + b).relu()
    out.square().sum().backward()
    reset([w, b])
    (out * 3).sum().backward()
    return out.sum().realize()
  return Subject(step, per_call((4, 8), seed=72), lambda: grads({"w": w, "b": b}))


@program
def backward_three() -> Subject:
  """Three backward() calls: b.grad accumulates three times, w.grad is reset before the third and left lazy."""
  w, b = param(80, 8, 4), param(81, 4)

  def step(x: Tensor) -> Tensor:
    reset([w, b])
    out = (x @ w + b).tanh()
    out.sum().backward()
    out.square().sum().backward()
    w.grad = None
    (out * out * out).sum().backward()
    return out.mean().realize()
  return Subject(step, per_call((4, 8), seed=82), lambda: grads({"w": w, "b": b}))


@program
def conv_grad_realized() -> Subject:
  """The #16571 conv step with grads reset at the start and realized inside the step instead of left lazy."""
  conv = nn.Conv2d(3, 4, 3)
  params = load_layers(conv, seed=90)

  def step(x: Tensor, y: Tensor) -> Tensor:
    reset(params)
    loss = (conv(x.permute(0, 3, 1, 2).contiguous()) - y).square().mean()
    loss.backward()
    Tensor.realize(loss, *[p.grad for p in params])
    return loss
  return Subject(step, per_call((2, 8, 8, 3), (2, 4, 6, 6), seed=92),
                 lambda: grads({"conv.weight": conv.weight, "conv.bias": conv.bias}))


# ---------- training with optimizers ----------

def mlp(seed: int) -> tuple[nn.Linear, nn.Linear, list[Tensor]]:
  l1, l2 = nn.Linear(8, 16), nn.Linear(16, 4)
  return l1, l2, load_layers(l1, l2, seed=seed)


def train_step(opt: nn.optim.Optimizer, params: list[Tensor], loss_fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
  """One optimizer step; grads (and the loss) are realized before the update, as tinygrad#17074 requires."""
  def step(*args: Tensor) -> Tensor:
    with Context(TRAINING=1):
      opt.zero_grad()
      loss = loss_fn(*args)
      loss.backward()
      Tensor.realize(loss, *[p.grad for p in params])
      opt.step()
    return loss
  return step


@program
def mlp_sgd() -> Subject:
  """A two-layer MLP trained with plain nn.optim.SGD; observes weights and (pre-update) grads."""
  l1, l2, params = mlp(100)
  opt = nn.optim.SGD(params, lr=0.1)
  step = train_step(opt, params, lambda x, y: (l2(l1(x).relu()) - y).square().mean())
  named = {"l1.weight": l1.weight, "l1.bias": l1.bias, "l2.weight": l2.weight, "l2.bias": l2.bias}
  return Subject(step, per_call((4, 8), (4, 4), seed=104), lambda: named | grads(named))


@program
def mlp_sgd_momentum() -> Subject:
  """SGD with Nesterov momentum and weight decay: momentum buffers opt.b[i] are assigned state."""
  l1, l2, params = mlp(110)
  opt = nn.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=0.01, nesterov=True)
  step = train_step(opt, params, lambda x, y: (l2(l1(x).tanh()) - y).abs().mean())
  named = {"l1.weight": l1.weight, "l2.weight": l2.weight}
  return Subject(step, per_call((4, 8), (4, 4), seed=114), lambda: named | grads(named) | {f"opt.b[{i}]": b for i, b in enumerate(opt.b)})


@program
def mlp_adam() -> Subject:
  """A two-layer MLP trained with nn.optim.Adam: observes weights, grads and the m, v and b1_t optimizer state."""
  l1, l2, params = mlp(120)
  opt = nn.optim.Adam(params, lr=0.01)
  step = train_step(opt, params, lambda x, y: (l2(l1(x).relu()) - y).square().mean())
  named = {"l1.weight": l1.weight, "l1.bias": l1.bias, "l2.weight": l2.weight, "l2.bias": l2.bias}
  state = lambda: {f"opt.m[{i}]": m for i, m in enumerate(opt.m)} | {f"opt.v[{i}]": v for i, v in enumerate(opt.v)} | {"opt.b1_t": opt.b1_t}
  return Subject(step, per_call((4, 8), (4, 4), seed=124), lambda: named | grads(named) | state())


@program
def adamw_unobserved_grads() -> Subject:
  """AdamW whose grads are consumed by the update in the same schedule and never read outside (no #17074 hazard)."""
  l1, l2, params = mlp(130)
  opt = nn.optim.AdamW(params, lr=0.01, weight_decay=0.1)

  def step(x: Tensor, y: Tensor) -> Tensor:
    with Context(TRAINING=1):
      opt.zero_grad()
      loss = (l2(l1(x).gelu()) - y).square().mean()
      loss.backward()
      opt.step()
    return loss.realize()
  return Subject(step, per_call((4, 8), (4, 4), seed=134), lambda: {"l1.weight": l1.weight, "l2.bias": l2.bias, "opt.v[0]": opt.v[0]})


@program
def xent_sgd() -> Subject:
  """Classification with sparse_categorical_crossentropy on int32 labels, trained with SGD (an integer input)."""
  l1 = nn.Linear(8, 4)
  params = load_layers(l1, seed=140)
  opt = nn.optim.SGD(params, lr=0.5)
  step = train_step(opt, params, lambda x, y: l1(x).sparse_categorical_crossentropy(y))
  inputs = lambda k, prev: [arr(141 + k, 8, 8), np.random.default_rng(150 + k).integers(0, 4, (8,)).astype(np.int32)]
  return Subject(step, inputs, lambda: {"l1.weight": l1.weight, "l1.bias": l1.bias, **grads({"l1.weight": l1.weight})})


@program
def batchnorm_train() -> Subject:
  """BatchNorm2d in training mode: running stats and the int64 batch counter are assigned state, realized in the step."""
  conv, bn = nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4)
  load_layers(conv, seed=160)
  load(bn.weight, 162)
  load(bn.bias, 163)
  stats = [bn.running_mean, bn.running_var, bn.num_batches_tracked]
  for s in stats: s.realize()

  def step(x: Tensor) -> Tensor:
    with Context(TRAINING=1):
      out = bn(conv(x)).relu().mean(axis=(2, 3))
      Tensor.realize(out, *stats)
    return out
  names = ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked")
  return Subject(step, per_call((2, 4, 8, 8), seed=164), lambda: {n: getattr(bn, n.removeprefix("bn.")) for n in names})


# ---------- returns ----------

@program
def multi_return() -> Subject:
  """A tuple of three results from different kernels (matmul, reduction, elementwise)."""
  w = param(200, 8, 4)

  def step(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    return x @ w, x.sum(axis=1), (x * 2 + 1).exp2()
  return Subject(step, per_call((4, 8), seed=201))


@program
def nested_return() -> Subject:
  """A tuple holding a list and a dict: one level of nesting in the return value."""
  def step(x: Tensor) -> tuple:
    return x.sum(0), [x.max(1), x.min(1)], {"mean": x.mean(), "sq": (x * x).sum(1)}
  return Subject(step, per_call((4, 8), seed=210))


@program
def returned_input_view() -> Subject:
  """Returns a pure view of an input (a shrink, no kernel) next to a computed result: documented capture-time object."""
  def step(x: Tensor) -> tuple[Tensor, Tensor]:
    return x[1:3], (x * 3).sum(0)
  return Subject(step, per_call((4, 8), seed=220))


# ---------- views and slices ----------

@program
def input_view_args() -> Subject:
  """Explicit inputs that are views of realized tensors (a row shrink and a column shrink of two bases), refilled in place."""
  base, other = Tensor(np.zeros((8, 4), np.float32)).realize(), Tensor(np.zeros((4, 16), np.float32)).realize()

  def inputs(k: int, prev: object) -> list:
    base.assign(Tensor(arr(230 + k, 8, 4))).realize()
    other.assign(Tensor(arr(240 + k, 4, 16))).realize()
    return [base[2:6], other[:, 4:8]]

  def step(a: Tensor, b: Tensor) -> Tensor:
    return (a * 2 + b).relu().contiguous()
  return Subject(step, inputs)


@program
def views_in_step() -> Subject:
  """Slices, strided slices, reshapes and transposes of an input inside the step, combined by kernels."""
  def step(x: Tensor) -> tuple[Tensor, Tensor]:
    a = x[1:5, ::2]
    b = x.reshape(4, 16)[:, 4:8]
    c = x.T[2:6, :4]
    return (a + b * c).contiguous(), x.reshape(2, 4, 8).permute(2, 0, 1)[1:5].sum(0)
  return Subject(step, per_call((8, 8), seed=250))


@program
def expand_permute() -> Subject:
  """Broadcasts by expand and reorders by permute before a reduction."""
  def step(x: Tensor, y: Tensor) -> Tensor:
    e = x.reshape(4, 1, 8).expand(4, 4, 8)
    return (e * y.reshape(1, 4, 8)).permute(2, 0, 1).sum(axis=2)
  return Subject(step, per_call((4, 8), (4, 8), seed=260))


# ---------- assigned state ----------

@program
def state_ema() -> Subject:
  """An exponential moving average kept in a state tensor with `state.assign(...).realize()`."""
  state = Tensor(np.zeros((8,), np.float32)).realize()

  def step(x: Tensor) -> Tensor:
    state.assign(state * 0.9 + x.mean(0)).realize()
    return (state * 2).sum()
  return Subject(step, per_call((4, 8), seed=270), lambda: {"state": state})


@program
def slice_assign() -> Subject:
  """Assigns into a slice of a state tensor (`state[2:6].assign(...).realize()`), then reads the whole state."""
  state = param(280, 8, 4)

  def step(x: Tensor) -> Tensor:
    state[2:6].assign(state[2:6] * 0.5 + x).realize()
    return state.sum(0)
  return Subject(step, per_call((4, 4), seed=281), lambda: {"state": state})


@program
def two_states() -> Subject:
  """Two state tensors updated in one schedule, the second reading the first's new value."""
  s1, s2 = Tensor(np.zeros((4, 8), np.float32)).realize(), Tensor(np.ones((4, 8), np.float32)).realize()

  def step(x: Tensor) -> Tensor:
    s1.assign(s1 + x).realize()
    s2.assign(s2 * 0.5 + s1).realize()
    return (s1 - s2).max()
  return Subject(step, per_call((4, 8), seed=290), lambda: {"s1": s1, "s2": s2})


# ---------- feedback ----------

@program
def feedback_matmul() -> Subject:
  """The previous call's returned tensor is the next call's input (the JIT copies an input its linear writes)."""
  w = param(300, 8, 8)

  def step(h: Tensor) -> Tensor:
    return (h @ w).tanh()
  return Subject(step, feedback((4, 8), seed=301))


@program
def feedback_rnn() -> Subject:
  """An RNN cell: the hidden state fed back, plus a fresh input each call."""
  wh, wx = param(310, 8, 8), param(311, 4, 8)

  def step(h: Tensor, x: Tensor) -> Tensor:
    return (h @ wh + x @ wx).tanh()
  return Subject(step, feedback((4, 8), (4, 4), seed=312))


@program
def feedback_tuple() -> Subject:
  """Two returned tensors, the first fed back, the second a reduction of it."""
  def step(h: Tensor) -> tuple[Tensor, Tensor]:
    nxt = (h.flip(1) * 0.5 + h.roll(1, 1) * 0.25).contiguous()
    return nxt, nxt.sum()
  return Subject(step, lambda k, prev: [arr(320, 4, 8) if k == 0 else prev[0]])


# ---------- prune ----------

@program
def prune_all_input() -> Subject:
  """prune=True where every kernel depends on the explicit input: nothing is pruned."""
  w = param(330, 8, 4)

  def step(x: Tensor) -> Tensor:
    return (x @ w).relu().sum(1)
  return Subject(step, per_call((4, 8), seed=331), prune=True)


@program
def prune_constant_part() -> Subject:
  """prune=True with an input-independent kernel (a reduction of a parameter that never changes): it runs once."""
  w = param(340, 8, 8)

  def step(x: Tensor) -> Tensor:
    scale = (w * w).sum(0).contiguous()
    return (x * scale).sum(1)
  return Subject(step, per_call((4, 8), seed=341), prune=True)


# ---------- devices ----------

@program
def copy_second_device() -> Subject:
  """A matmul on CPU:1 against a weight living there, its result copied back to CPU (copy-lane arenas)."""
  w = Tensor(arr(350, 8, 4, scale=0.5), device="CPU:1").realize()

  def step(x: Tensor) -> Tensor:
    h = (x.to("CPU:1") @ w).relu()
    return h.to("CPU").sum(1)
  return Subject(step, per_call((4, 8), seed=351))


@program
def copy_roundtrip() -> Subject:
  """CPU -> CPU:1 -> CPU with compute on both sides and a result left on CPU:1."""
  def step(x: Tensor) -> tuple[Tensor, Tensor]:
    y = (x.to("CPU:1") + 1).square()
    return (y.to("CPU") * 2 - x).contiguous(), y.sum()
  return Subject(step, per_call((4, 8), seed=360))


# ---------- sharded over several devices ----------

SHARDS = ("CPU", "CPU:1")


@program
def sharded_sgd() -> Subject:
  """A parameter split over two devices, the input sharded inside the step, a reduction over the split axis (an
  all-reduce) brought back to CPU, and an SGD step on the sharded parameter: multi-device BUFFERs, MSELECT, MSTACK."""
  w = Tensor(arr(370, 8, 4, scale=0.5)).shard(SHARDS, axis=0).realize()
  opt = nn.optim.SGD([w], lr=0.1)

  def step(x: Tensor) -> Tensor:
    w.grad = None
    h = (x.shard(SHARDS, axis=0) * w).relu()
    loss = h.sum(0)
    loss.sum().backward()
    with Context(TRAINING=1): opt.step()
    return loss.to("CPU").realize()
  return Subject(step, per_call((8, 4), seed=371), lambda: {"w": w, "w.grad": w.grad})


@program
def sharded_replicated_adam() -> Subject:
  """A replicated (axis=None) parameter and Adam's state on both devices, two sharded intermediates live at once."""
  w = Tensor(arr(380, 16, 8, scale=0.5)).shard(SHARDS, axis=None).realize()
  opt = nn.optim.Adam([w], lr=0.01)

  def step(x: Tensor) -> Tensor:
    w.grad = None
    xs = x.shard(SHARDS, axis=None)
    a, b = (xs * w).contiguous(), (xs + w).exp().contiguous()
    loss = (a * b).mean()
    loss.backward()
    with Context(TRAINING=1): opt.step()
    return loss.to("CPU").realize()
  return Subject(step, per_call((16, 8), seed=381), lambda: {"w": w, "w.grad": w.grad, "m": opt.m[0], "v": opt.v[0]})


# ---------- symbolic ----------

def bound_n(k: int) -> object:
  return Variable("n", 1, 8).bind(k % 8 + 1)


@program
def symbolic_kv_attention() -> Subject:
  """KV-cache-like attention over the first n rows of key/value caches, n a bound Variable passed positionally."""
  def step(q: Tensor, keys: Tensor, vals: Tensor, n: object) -> Tensor:
    scores = (keys[:n] @ q).softmax()
    return (scores.reshape(-1, 1) * vals[:n]).sum(0).contiguous()
  rest = per_call((4,), (8, 4), (8, 4), seed=370)
  return Subject(step, lambda k, prev: [*rest(k, prev), bound_n(k)])


@program
def symbolic_mean() -> Subject:
  """A mean over a symbolic number of rows (divides by the bound n) next to a fixed-shape result."""
  def step(x: Tensor, n: object) -> tuple[Tensor, Tensor]:
    return x[:n].mean(0).contiguous(), (x * 2).sum(1)
  return Subject(step, lambda k, prev: [arr(380 + k, 8, 4), bound_n(k + 3)])


# ---------- randomness ----------

@program
def rand_seeded() -> Subject:
  """Tensor.rand under a manual_seed set at build time: replays draw anew, in the same order as eager."""
  Tensor.manual_seed(1234)

  def step(x: Tensor) -> Tensor:
    return x + Tensor.rand(4, 8)
  return Subject(step, per_call((4, 8), seed=390))


@program
def dropout_train() -> Subject:
  """Dropout under TRAINING=1 (a random mask each call) inside a small network."""
  Tensor.manual_seed(99)
  w = param(400, 8, 8)

  def step(x: Tensor) -> Tensor:
    with Context(TRAINING=1):
      return (x @ w).relu().dropout(0.5).sum(0)
  return Subject(step, per_call((4, 8), seed=401))


# ---------- operations ----------

@program
def matmul_chain() -> Subject:
  """Two matmuls with a broadcast bias and a transpose."""
  w1, w2, b = param(410, 8, 16), param(411, 16, 4), param(412, 4)

  def step(x: Tensor) -> Tensor:
    return (x @ w1).relu() @ w2 + b - (x @ w1 @ w2).T.T
  return Subject(step, per_call((4, 8), seed=413))


@program
def conv_pool() -> Subject:
  """Conv2d forward with padding, relu, max-pool and avg-pool."""
  conv = nn.Conv2d(4, 8, 3, padding=1)
  load_layers(conv, seed=420)

  def step(x: Tensor) -> tuple[Tensor, Tensor]:
    h = conv(x).relu()
    return h.max_pool2d(2), h.avg_pool2d(2).sum(axis=(2, 3))
  return Subject(step, per_call((2, 4, 8, 8), seed=422))


@program
def reductions() -> Subject:
  """sum, max, min, mean, std, logsumexp, argmax (int32 result) and cumsum along different axes."""
  def step(x: Tensor) -> tuple:
    return x.sum(1), x.max(0), x.min(), x.mean(1), x.std(0), x.logsumexp(1), x.argmax(1), x.cumsum(1)
  return Subject(step, per_call((4, 8), seed=430))


@program
def cat_pad_flip() -> Subject:
  """cat along both axes, constant pad, flip."""
  def step(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    c = x.cat(y, dim=0).cat(y.flip(0).cat(x, dim=0), dim=1)
    return c.pad(((1, 1), (0, 2)), value=-1.0), (x.flip(1) - y).pad(((0, 4), (2, 2))).sum(0)
  return Subject(step, per_call((4, 8), (4, 8), seed=440))


@program
def where_masks() -> Subject:
  """where on comparisons, clamp, and a bool result."""
  def step(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    mask = x > y
    return mask.where(x, y * 0.1), (x.abs() < 0.5), x.clip(-0.5, 0.5) + (y >= 0).where(1.0, -1.0)
  return Subject(step, per_call((4, 8), (4, 8), seed=450))


@program
def half_casts() -> Subject:
  """float16 inputs and compute, casts to float32 and int32 and back (a dtypes program)."""
  w = Tensor(arr(460, 8, 4, scale=0.5, dtype=np.float16)).realize()

  def step(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    h = (x @ w).relu()
    return h, h.float().sum(0), (x.float() * 10).cast(dtypes.int32) + 1
  return Subject(step, lambda k, prev: [arr(461 + k, 4, 8, dtype=np.float16)])


@program
def int_gather() -> Subject:
  """An embedding lookup by int32 indices and an integer reduction (a dtypes program)."""
  emb = nn.Embedding(16, 4)
  load(emb.weight, 470)

  def step(idx: Tensor) -> tuple[Tensor, Tensor]:
    return emb(idx).sum(1), (idx * 3 + 1).sum(1)
  return Subject(step, lambda k, prev: [np.random.default_rng(471 + k).integers(0, 16, (4, 8)).astype(np.int32)])


@program
def layernorm_attention() -> Subject:
  """LayerNorm, scaled dot-product attention with a causal mask, and gelu."""
  ln = nn.LayerNorm(8)
  load(ln.weight, 480)
  load(ln.bias, 481)
  wq, wk, wv = param(482, 8, 8), param(483, 8, 8), param(484, 8, 8)

  def step(x: Tensor) -> Tensor:
    h = ln(x)
    att = (h @ wq).scaled_dot_product_attention(h @ wk, h @ wv, is_causal=True)
    return (att.gelu() + x).sum(-1)
  return Subject(step, per_call((2, 4, 8), seed=485))


# ---------- lazy tensors kept outside the step ----------

@program
def kept_lazy() -> Subject:
  """A lazy tensor stored outside the step (`kept[0]`), overwritten by the Python code on each eager call only."""
  w = param(500, 8, 4)
  kept: list[Tensor] = [Tensor(np.zeros((4, 4), np.float32)).realize()]

  def step(x: Tensor) -> Tensor:
    kept[0] = (x @ w).relu()
    return x.sum(1)
  return Subject(step, per_call((4, 8), seed=501), lambda: {"kept[0]": kept[0]})


@program
def kept_lazy_of_intermediate() -> Subject:
  """A kept lazy tensor reading an intermediate the step realizes by returning something made from it."""
  w = param(510, 8, 8)
  kept: list[Tensor] = [Tensor(np.zeros((4, 8), np.float32)).realize()]

  def step(x: Tensor) -> Tensor:
    h = (x @ w).contiguous()
    kept[0] = h * 3 + 1
    return h.sum(1)
  return Subject(step, per_call((4, 8), seed=511), lambda: {"kept[0]": kept[0]})


@program
def kept_lazy_grad() -> Subject:
  """A lazy tensor made from a lazy grad and kept outside: two levels of frozen graph over capture-time buffers."""
  w = param(520, 8, 4)
  kept: list[Tensor] = [Tensor(np.zeros((8, 4), np.float32)).realize()]

  def step(x: Tensor) -> Tensor:
    w.grad = None
    loss = (x @ w).square().sum()
    loss.backward()
    kept[0] = w.grad * 2 - w
    return loss.realize()
  return Subject(step, per_call((4, 8), seed=521), lambda: {"kept[0]": kept[0], **grads({"w": w})})
