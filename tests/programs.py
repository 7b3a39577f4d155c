"""Small hand-written programs for the oracle's own tests: one documented JIT behaviour or one bug mechanism each."""
from __future__ import annotations

import numpy as np
from tinygrad import Context, Tensor, TinyJit, Variable, nn

from oracle.subject import PythonState, Subject


def arrays(k: int, *shapes: tuple[int, ...]) -> list[np.ndarray]:
  rng = np.random.default_rng(1000 + k)
  return [rng.standard_normal(s, dtype=np.float32) for s in shapes]


def param(seed: int, *shape: int) -> Tensor: return Tensor(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)).realize()


def step_16571(conv: nn.Conv2d):
  """The #16571 step from the facts file: two backward passes, the weight grad reset between them, grads left lazy."""
  def step(x: Tensor, y: Tensor) -> Tensor:
    loss = (conv(x.permute(0, 3, 1, 2).contiguous()) - y).square()
    loss.sum().backward()
    conv.weight.grad = None
    (loss * 0.5).sum().backward()
    return loss.mean().realize()
  return step


def conv_16571() -> Subject:
  """The #16571 step on seeded weights and inputs, observing both grads."""
  conv = nn.Conv2d(3, 4, 3)
  conv.weight.assign(param(1, *conv.weight.shape)).realize()
  conv.bias.assign(param(2, *conv.bias.shape)).realize()
  return Subject(step_16571(conv), lambda k, _: arrays(k, (2, 8, 8, 3), (2, 4, 6, 6)),
                 lambda: {"conv.weight.grad": conv.weight.grad, "conv.bias.grad": conv.bias.grad})


def returns_input_view() -> Subject:
  """Returns an input unchanged and a reshape of it next to a real result: replays hand back the capture-time objects."""
  return Subject(lambda x: (x, x.reshape(2, 8), (x * 2).realize()), lambda k, _: arrays(k, (16,)))


def kept_lazy() -> Subject:
  """A lazy tensor stored outside the step and read after the call: with fresh inputs the JIT leaves it undefined."""
  w, kept = param(3, 8, 8), []
  def step(x: Tensor) -> Tensor:
    h = (x @ w).relu()
    kept[:] = [h * 3]
    return h.sum().realize()
  return Subject(step, lambda k, _: arrays(k, (4, 8)), lambda: {"kept[0]": kept[0]})


def implicit_state() -> Subject:
  """State reached through a closure, updated in place inside the step: an implicit input bound by buffer identity."""
  s = param(4, 8)
  def step(x: Tensor) -> Tensor:
    s.assign(s * 0.5 + x).realize()
    return (s * 2).realize()
  return Subject(step, lambda k, _: arrays(k, (8,)), lambda: {"s": s})


def seeded_rand() -> Subject:
  """Tensor.rand draws anew on each replay; with the same seed and draw order the stream equals eager's."""
  Tensor.manual_seed(7)
  return Subject(lambda x: (x + Tensor.rand(8)).realize(), lambda k, _: arrays(k, (8,)))


def duplicate_inputs() -> Subject:
  """The same tensor twice as explicit inputs: TinyJit refuses it (JitError), an expected rejection."""
  return Subject(lambda a, b: (a + b).realize(), lambda k, prev: [t := Tensor(arrays(k, (8,))[0]).realize(), t])


def eager_error() -> Subject:
  """Invalid in eager already (a shape mismatch): the program is rejected, never a finding."""
  return Subject(lambda a: (a + Tensor.ones(3)).realize(), lambda k, _: arrays(k, (8,)))


def item_in_capture() -> Subject:
  """.item() during capture raises JitError by design."""
  return Subject(lambda a: (a * float(a.sum().item())).realize(), lambda k, _: arrays(k, (8,)))


def pruned_closure() -> Subject:
  """With prune=True the input-independent update of a closure tensor runs once: it freezes (documented)."""
  c = param(5, 8)
  def step(x: Tensor) -> Tensor:
    c.assign(c + 1).realize()
    return (x * c).realize()
  return Subject(step, lambda k, _: arrays(k, (8,)), prune=True)


def grad_read_after_update() -> Subject:
  """SGD-like update after backward, grads realized before the update (the facts' rule for tinygrad#17074)."""
  w = param(6, 8, 4)
  def step(x: Tensor) -> Tensor:
    w.grad = None
    loss = (x @ w).square().mean()
    loss.backward()
    w.grad.realize()
    w.assign(w - w.grad * 0.1).realize()
    return loss.realize()
  return Subject(step, lambda k, _: arrays(k, (2, 8)), lambda: {"w": w, "w.grad": w.grad})


def realize_cuts_autograd() -> Subject:
  """.realize() on an intermediate cuts autograd through it, in eager and JIT alike: w0 gets no grad."""
  w0, w1 = param(7, 8, 8), param(8, 8, 8)
  def step(x: Tensor) -> Tensor:
    w0.grad = w1.grad = None
    h = (x @ w0).realize()
    loss = (h @ w1).sum()
    loss.backward()
    return loss.realize()
  return Subject(step, lambda k, _: arrays(k, (2, 8)), lambda: {"w0.grad": w0.grad, "w1.grad": w1.grad})


# ---------- Python state, frozen at capture (documented) ----------

def counter_state(count: list[int]) -> PythonState:
  return PythonState(lambda: count[0], lambda v: count.__setitem__(0, v))


def closure_counter(declared: bool = True) -> Subject:
  """A closure counter the step bumps and multiplies by: TinyJit runs the bump on calls 0 and 1 only."""
  count = [1]
  def step(x: Tensor) -> Tensor:
    count[0] += 1
    return (x * count[0]).realize()
  return Subject(step, lambda k, _: arrays(k, (8,)), python_state=counter_state(count) if declared else None)


def undeclared_closure_counter() -> Subject:
  """The same step, its Python state not declared: the oracle cannot know it is frozen, so it must report it."""
  return closure_counter(declared=False)


def python_argument() -> Subject:
  """A Python float argument that changes every call: TinyJit sees only tensors, so replays keep call 1's value."""
  return Subject(lambda x, scale: (x * scale).realize(), lambda k, _: [*arrays(k, (8,)), float(k + 1)])


def python_branch() -> Subject:
  """An `if` on a Python flag that the caller flips between calls: replays keep the branch call 1 took."""
  flag = [True]
  def inputs(k: int, _: object) -> list:
    flag[0] = k % 2 == 0
    return arrays(k, (8,))
  def step(x: Tensor) -> Tensor: return (x + 1).realize() if flag[0] else (x * 2).realize()
  return Subject(step, inputs, python_state=PythonState(lambda: flag[0], lambda v: flag.__setitem__(0, v)))


def python_side_effect() -> Subject:
  """The step appends to a Python list and scales by its length: the append runs on calls 0 and 1 only."""
  log: list[int] = []
  def step(x: Tensor) -> Tensor:
    log.append(len(log))
    return (x * len(log)).realize()
  return Subject(step, lambda k, _: arrays(k, (8,)), python_state=PythonState(lambda: list(log), lambda v: log.__setitem__(slice(None), v)))


def rebound_implicit_input() -> Subject:
  """A weight the caller rebinds to a new tensor before every call: TinyJit keeps reading the one bound at capture."""
  class Holder: w = param(9, 8)
  h = Holder()
  def inputs(k: int, _: object) -> list:
    h.w = param(20 + k, 8)
    return arrays(k, (8,))
  return Subject(lambda x: (x * h.w).realize(), inputs, python_state=PythonState(lambda: h.w, lambda v: setattr(h, "w", v)))


# ---------- symbolic views (documented: the capture call's bound value is baked in) ----------

def symbolic_pad_view(values: tuple[int, ...] = (3, 5, 7, 2, 6)) -> Subject:
  """A symbolic-shaped kernel output returned as a pad view to a fixed shape, next to the same pad made contiguous."""
  def step(x: Tensor, n: object) -> tuple[Tensor, Tensor]:
    out = (x[:n] + 1).contiguous()
    return out.pad(((0, 8 - n), (0, 0))), out.pad(((0, 8 - n), (0, 0))).contiguous()
  return Subject(step, lambda k, _: [*arrays(k, (8, 4)), Variable("n", 1, 8).bind(values[k % len(values)])])


def symbolic_pad_view_one_value() -> Subject:
  """The same program with the Variable bound to one value on every call: the pad view is exact, so it is compared."""
  return symbolic_pad_view((5,))


def variable_escape(values: tuple[int, ...] = (3, 5, 7, 2, 6)) -> Subject:
  """A lazy sum over the first n rows kept outside the step, and a parameter's lazy .grad through x[:n]: both graphs
  hold n's capture-time value, which replays keep (the step's Python, and so the bind, never runs again)."""
  w, kept = param(5, 4, 4), []
  def step(x: Tensor, n: object) -> Tensor:
    w.grad = None
    kept[:] = [(x[:n] * 3).sum(0)]
    (x[:n] @ w).sum().backward()
    return (x * 2).realize()
  return Subject(step, lambda k, _: [*arrays(k, (8, 4)), Variable("n", 1, 8).bind(values[k % len(values)])],
                 lambda: {"kept[0]": kept[0], "w.grad": w.grad})


def variable_escape_one_value() -> Subject:
  """The same with n bound to one value every call: the escapes are exact, so they are compared."""
  return variable_escape((5,))


def symbolic_mean_fed_back() -> Subject:
  """Returns the mean of the first n rows of a buffer, which TinyJit returns lazy and wrong on replays at another n
  (known tinygrad bug symbolic-mean-left-lazy), and takes it back as its first argument on the next call: p.grad,
  realized in the step from that argument, is exact where the argument was, and not comparable after."""
  p = param(6, 4)
  def step(h: Tensor, x: Tensor, n: object) -> Tensor:
    p.grad = None
    ((h.abs() + 1).sqrt() * p).sum().backward()
    p.grad.realize()
    return (x[:n] * 2).contiguous().mean(0)
  def inputs(k: int, prev: Tensor | None) -> list:
    return [prev if prev is not None else arrays(k, (4,))[0], *arrays(k, (8, 4)), Variable("n", 1, 8).bind(k * 3 % 8 + 1)]
  return Subject(step, inputs, lambda: {"p.grad": p.grad})


# ---------- refusals by design, and programs eager tinygrad already rejects ----------

def nested_jit() -> Subject:
  """A TinyJit inside the step: refused by design (RuntimeError), in TinyJit and PlannedJit alike."""
  inner = TinyJit(lambda a: (a * 2).realize())
  return Subject(lambda x: (inner(x) + 1).realize(), lambda k, _: arrays(k, (8,)))


def non_tensor_return() -> Subject:
  return Subject(lambda x: ((x * 2).realize(), 3), lambda k, _: arrays(k, (8,)))


def nothing_captured() -> Subject:
  return Subject(lambda x: x, lambda k, _: arrays(k, (8,)))


def tolist_in_capture() -> Subject:
  return Subject(lambda a: (a * float(sum(a.tolist()))).realize(), lambda k, _: arrays(k, (8,)))


def virtual_input() -> Subject:
  """`Tensor.arange(n).contiguous().realize()` is still virtual on 0.14.0: not a real buffer, refused."""
  return Subject(lambda a: (a * 2).realize(), lambda k, _: [Tensor.arange(8).contiguous().realize()])


def const_input() -> Subject:
  return Subject(lambda a: (a * 2).realize(), lambda k, _: [Tensor(3.0)])


def two_views_of_one_base() -> Subject:
  """Two views of one realized tensor as two inputs: duplicate inputs, refused."""
  def inputs(k: int, _: object) -> list:
    base = Tensor(arrays(k, (16,))[0]).realize()
    return [base[:8], base[8:]]
  return Subject(lambda a, b: (a + b).realize(), inputs)


def optimizer_assign_cycle() -> Subject:
  """SGD on a loss `(b*w).sum()`: the two updates read each other, "cycle detected in assign graph" in eager."""
  b, w = param(10, 4), param(11, 4)
  opt = nn.optim.SGD([b, w], lr=0.1)
  def step(x: Tensor) -> Tensor:
    opt.zero_grad()
    loss = (b * w).sum() + x.sum()
    loss.backward()
    with Context(TRAINING=1): opt.step()
    return loss.realize()
  return Subject(step, lambda k, _: arrays(k, (4,)))


def backward_through_slice_assign() -> Subject:
  """backward() through a slice-assigned buffer: "failed to compute gradient for AFTER" in eager."""
  w = param(12, 8)
  def step(x: Tensor) -> Tensor:
    w.grad = None
    s = Tensor.zeros(8).contiguous().realize()
    s[2:4].assign(w[2:4] * 2)
    (s * w * x).sum().backward()
    return w.grad.realize()
  return Subject(step, lambda k, _: arrays(k, (8,)))


def prune_reads_updated_state() -> Subject:
  """With prune=True, a kernel that reads state s before the call that writes s from the input: it depends on the
  previous call's input, yet tinygrad's one-pass prune runs it only once (an unsound prune split, not documented)."""
  s = param(13, 8)
  def step(x: Tensor) -> Tensor:
    y = (s * 2).contiguous().realize()
    s.assign(x + 1).realize()
    return (y + x).realize()
  return Subject(step, lambda k, _: arrays(k, (8,)), prune=True)
