"""A program as Python source: the build lines (leaves, optimizer, `step`, `observe`, `inputs`) and their parts.

This text is what runs: `fuzz.gen.interpret` executes it and `fuzz.gen.printer` pastes it into a repro script, so the
two can never disagree. Each op is rendered from the op table the feature registry completes (`fuzz.gen.features.OPS`).
Names used and not defined here (`Tensor`, `Device`, `nn`, `Context`, `data`) are provided by whoever executes it, with
`param`, `training` and `second_device` from `fuzz.gen.compat`.
"""
from __future__ import annotations

from fuzz.gen.features import OPS
from fuzz.gen.program import OPTIMIZERS, Leaf, Op, Path, Program, Returned, needed_ops, returned_paths

SEED = 1  # Tensor.manual_seed at build time: the reference and every JIT run draw the same rand stream
# the two devices copies go between: the default one, and a second one of its kind (CPU:1, AMD:1) or, beside a GPU
# alone on its runner, the CPU, so a one-GPU runner has a copy lane too (`fuzz.gen.compat.second_device`)
DEVICE_LINES = ["DEFAULT = Device.DEFAULT", "SECOND = second_device(DEFAULT)"]


SHARD_LINES = ["shards = lambda n: tuple(DEFAULT if i == 0 else f\"{DEFAULT.split(':')[0]}:{i}\" for i in range(n))"]


def op_source(op: Op) -> str:
  """The expression an op stands for: its spec renders the names its leading args give and the constants after them."""
  spec = OPS[op.kind]
  return spec.render(list(op.args[:spec.arity]), tuple(op.args[spec.arity:]))


def leaf_line(leaf: Leaf, make: str = "Tensor") -> str:
  return f"{leaf.name} = {make}(data({leaf.seed}, {leaf.shape}, {leaf.dtype!r})){sharding(leaf)}.realize()"


def sharding(leaf: Leaf) -> str:
  """What shards a leaf's tensor over its devices (nothing for a leaf on one device)."""
  return "" if leaf.shard is None else f".shard(shards({leaf.shard[0]}), axis={leaf.shard[1]})"


def uses_devices(program: Program) -> bool:
  """Whether the program names devices (a copy to the second one, a shard over several): it needs `Device`."""
  return any(op.kind == "to" for op in program.body) or sharded(program)


def sharded(program: Program) -> bool:
  return any(leaf.shard for leaf in program.params + program.inputs + program.state) or any(op.kind == "shard" for op in program.body)


def returned_source(r: Returned, top: bool = True) -> str:
  if isinstance(r, str): return r
  inner = ", ".join(returned_source(i, False) for i in r.items)
  if r.kind == "list": return f"[{inner}]"
  if len(r.items) == 1: inner += ","
  return inner if top else f"({inner})"


def indexed(path: Path) -> str:
  """The subscripts that reach `path` in a returned value: `[1][0]`."""
  return "".join(f"[{i}]" for i in path)


def returned_reads(program: Program) -> dict[str, str]:
  """Observable path -> the expression that reads it from what a call returned (`ret`, `ret[0]`, ...)."""
  return {p: p for p in ("ret" + indexed(path) for path, _ in returned_paths(program.returns))}


def observables(program: Program) -> dict[str, str]:
  """Observable path -> the expression that reads it after a call: grads, updated parameters, state, kept lazies."""
  out = {f"{p}.grad": f"{p}.grad" for p in program.grads_at_end()}
  if program.update is not None: out |= {p: p for p in program.update.params}
  out |= {s.name: s.name for s in program.state}
  if program.input_assign is not None: out[program.input_assign.input] = "assigned[0]"
  return out | {f"kept[{i}]": f"kept[{i}]" for i in range(len(program.kept))}


def step_lines(program: Program) -> list[str]:
  """The body of `step`: reset grads (the JIT freezes Python state, so a step starts from none), forward,
  backward calls, then realized grads, state and parameter updates, kept tensors and the return."""
  leaves = [leaf.name for leaf in program.params + program.inputs + program.state]
  lines = [" = ".join(f"{n}.grad" for n in leaves) + " = None"]
  lines += [f"{op.out} = {op_source(op)}" for op in program.body]
  for b in program.backward:
    if b.clear: lines.append(" = ".join(f"{p}.grad" for p in b.clear) + " = None")
    lines.append(f"({b.value}{'.float()' if b.upcast else ''} * {b.scale}).sum().backward()")
  grads = program.grads_at_end()
  if (program.realize_grads or program.update is not None) and grads:
    lines.append(f"Tensor.realize({', '.join(f'{p}.grad' for p in grads)})")
  if program.state_updates:
    assigns = []
    for u in program.state_updates:
      src = "1.0" if u.source is None else f"{u.source}.detach()" + (".float()" if u.cast else "")
      assigns.append(f"{u.state}.assign({u.state} * 0.5 + {src})")
    lines.append(f"Tensor.realize({', '.join(assigns)})")
  if (up := program.update) is not None:
    if up.kind == "assign":
      lines += [f"{p}.assign({p}.detach() - {up.lr} * {p}.grad)" for p in up.params]
      lines.append(f"Tensor.realize({', '.join(up.params)})")
    else:
      lines.append("with training(): opt.step()")
  if (ia := program.input_assign) is not None:  # left lazy: nothing the step returns reaches it (tinygrad#16618)
    lines += [f"{ia.input}.assign({ia.source}.detach()){'.realize()' if program.realize_escapes else ''}", f"assigned[:] = [{ia.input}]"]
  if program.kept: lines.append(f"kept[:] = [{', '.join(program.kept)}]")
  if program.realize_escapes and (escapes := [f"{p}.grad" for p in grads] + [f"kept[{i}]" for i in range(len(program.kept))]):
    lines.append(f"Tensor.realize({', '.join(escapes)})")
  lines.append(f"return {returned_source(program.returns)}")
  return lines


def eval_lines(program: Program, args: list[str]) -> list[str]:
  """The eval step: the forward ops its value needs, from the step's own arguments, no backward and no update."""
  ops = needed_ops(program.body, program.evaluate)
  return [f"def evaluate({', '.join(args)}):", *(f"  {op.out} = {op_source(op)}" for op in ops),
          f"  return {program.evaluate}"]


def input_exprs(program: Program) -> list[str]:
  """Call k's explicit inputs: seeded arrays, one replaced by the previous call's return from call 1 on (feedback),
  then the bound Variable. `prev` defaults to None, so a program without feedback also runs as `inputs(k)`."""
  arrays = [input_data(x) for x in program.inputs]
  arrays = [a if x.shard is None else f"Sharded({a}, shards({x.shard[0]}), {x.shard[1]})"
            for x, a in zip(program.inputs, arrays, strict=True)]
  if (fb := program.feedback) is not None:
    arrays[fb.input] = f"({arrays[fb.input]} if k == 0 else prev{indexed(fb.path)})"
  if program.variable is not None: arrays.append(bound_variable(program))
  return arrays


def input_data(x: Leaf) -> str:
  """Call k's seeded array for explicit input `x`."""
  return f"data(({x.seed}, k), {x.shape}, {x.dtype!r})"


def step_args(program: Program) -> list[str]:
  """The step's parameters: its explicit inputs, then the bound Variable."""
  return [x.name for x in program.inputs] + ([program.variable.name] if program.variable is not None else [])


def bound_variable(program: Program) -> str:
  """Call k's value of the step's Variable, bound anew each call as a caller binds a sequence position."""
  v = program.variable
  assert v is not None
  return f"Variable({v.name!r}, 1, {v.max}).bind((k * {v.stride} + {v.offset}) % {v.max} + 1)"


def program_lines(program: Program) -> list[str]:
  """Everything a repro's `build()` holds: leaves, optimizer, kept list, step, observe and the per-call inputs."""
  return [*setup_lines(program),
          "observe = lambda: {" + ", ".join(f"{k!r}: {v}" for k, v in observables(program).items()) + "}",
          f"inputs = lambda k, prev=None: [{', '.join(input_exprs(program))}]"]


def setup_lines(program: Program) -> list[str]:
  """What runs once before the calls: imports the program needs, leaves, optimizer, kept lists, `step` (and
  `evaluate`)."""
  lines = ["from tinygrad import Variable"] if program.variable is not None else []
  if uses_devices(program): lines += DEVICE_LINES
  if sharded(program): lines += SHARD_LINES
  if program.uses_rand: lines.append(f"Tensor.manual_seed({SEED})")
  lines += [leaf_line(leaf, "param") for leaf in program.params] + [leaf_line(leaf) for leaf in program.state]
  if program.update is not None and program.update.kind in OPTIMIZERS:
    lines.append(f"opt = nn.optim.{OPTIMIZERS[program.update.kind]}([{', '.join(program.update.params)}], lr={program.update.lr})")
  if program.kept: lines.append("kept = []")
  if program.input_assign is not None: lines.append("assigned = []")
  args = step_args(program)
  lines.append(f"def step({', '.join(args)}):")
  lines += ["  " + line for line in step_lines(program)]
  if program.evaluate is not None: lines += eval_lines(program, args)
  return lines


def build_lines(program: Program) -> list[str]:
  """`def build()`, returning (step, observe, inputs, evaluate or None): the program's lines as a repro holds them and
  the oracle runs them. Inside a function its tensors live in closure cells and die with the step when an example
  ends; at a module's top level they would be globals of a scope its own functions refer back to, left for Python's
  cycle collector, and every realize walks tinygrad's registry of live tensors."""
  built = "step, observe, inputs, " + ("evaluate" if program.evaluate else "None")
  return ["def build():", *("  " + line for line in program_lines(program)), f"  return {built}"]
