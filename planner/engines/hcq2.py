"""The HCQ2 engine: the whole capture as one 'hcq' call (`HCQ2=1` in tinygrad 0.14.0; what tinygrad keeps).

With `HCQ2=1` (read once at import: a process's setting) tinygrad compiles and links a capture into one CALL of a
CUSTOM_FUNCTION 'hcq' (`hcq_compile`, `hcq_link` in runtime/support/hcq2.py) whose executor (`realize.exec_hcq`)
runs on every call: it writes the inputs' addresses into a table (views of inputs resolved to their base's address
plus offset), hands over the Variables' values and submits prebuilt command buffers. 0.14.0's CPU device is an HCQ2
device, so this engine runs here without an emulator; eager runs go through it too, once per schedule.

What ran: `spy_hcq`, each 'hcq' call a JIT executed, read off the executor as it runs, and each capture's inputs that
its linear writes. What to plant: mutants wrong along one dimension of what an 'hcq' call patches per call. Both go
through `executing`, which routes every 'hcq' call `run_linear` executes through a function of ours: tinygrad's
pattern matchers run copies of their functions (a patched `exec_hcq` goes unseen), but `run_linear` looks its
matcher up anew on every call.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from planner import tg
from planner.engines import Engine, Mutant

Exec = Callable[[Any, Any], Any]  # (call, ExecContext) -> what executing it returns


ENV_KEYS = ("HCQ2", "HCQ_RUNTIME_DEV")  # what makes a process run HCQ2 (`process_env`)


def active() -> bool:
  """Whether this process's tinygrad runs HCQ2 (it reads `HCQ2` once, at import)."""
  return bool(tg.environment_knobs().get("HCQ2"))


def is_hcq_call(call: Any) -> bool:
  ast = call.src[0]
  return ast.op is tg.Ops.CUSTOM_FUNCTION and ast.arg == "hcq"


class _Routed:
  """Stands in for `realize.pm_exec`: 'hcq' calls go through `through(call, ctx, run)`, everything else as before."""
  def __init__(self, real: Any, through: Callable[[Any, Any, Exec], Any]) -> None: self.real, self.through = real, through
  def rewrite(self, call: Any, ctx: Any = None) -> Any:
    if is_hcq_call(call): return self.through(call, ctx, self.real.rewrite)
    return self.real.rewrite(call, ctx)


@contextlib.contextmanager
def executing(through: Callable[[Any, Any, Exec], Any]) -> Iterator[None]:
  """Every 'hcq' call executed while active goes through `through(call, ctx, run)`, which decides what `run` (tinygrad's
  own executor) is given: how the census watches HCQ2 run, and how a test plants a fault in its replay."""
  tg.require()
  realize = importlib.import_module("tinygrad.engine.realize")
  real = realize.pm_exec
  realize.pm_exec = _Routed(real, through)
  try: yield
  finally: realize.pm_exec = real


@dataclass(frozen=True)
class HcqCall:
  """One 'hcq' call a JIT ran (the capture call's run, then each replay's): what it patches on every call."""
  kernels: int  # kernel launches and copies it submits, across its devices
  devices: int
  variables: bool  # Variable values handed over on every call
  inputs: int  # explicit inputs whose addresses it writes into its table on every call
  runs: int = 0  # times a JIT ran it
  written_inputs: int = 0  # the most inputs of one run that are buffers the capture writes (its own output fed back)


@dataclass(frozen=True)
class Captured:
  """One capture lowered for HCQ2: how many of its explicit inputs it takes through a view (their addresses resolved
  as base plus offset on every call)."""
  view_inputs: int


def _slots(call: Any) -> set[int]: return {k for _, idxs in call.arg.aux.input_idxs for k in idxs}


def _hcq_call(call: Any, ctx: Any) -> HcqCall:
  info = call.arg.aux
  return HcqCall(len(info.kernels), len({d for devs, _, _ in info.kernels for d in devs}), bool(ctx.var_vals), len(_slots(call)))


def _lowered(linear: Any, written: set) -> Captured:
  """What a parametrized linear does with its explicit inputs: the PARAM slots some call takes through a view; the
  BUFFERs its calls write go into `written` (an input that is one of them at a replay must be copied first)."""
  viewed = set()
  for call in linear.src:
    if call.src[0].op not in (tg.Ops.SINK, tg.Ops.PROGRAM, tg.Ops.COPY): continue
    args, (outs, _) = tg.call_args(call), tg.call_effects(call)
    written |= {u for k in outs for u in args[k].toposort() if u.op is tg.Ops.BUFFER}
    viewed |= {u.arg.slot for a in args if a.op not in (tg.Ops.PARAM, tg.Ops.BUFFER, tg.Ops.MSELECT, tg.Ops.MSTACK)
               for u in a.toposort() if u.op is tg.Ops.PARAM}
  return Captured(len(viewed))


@contextlib.contextmanager
def spy_hcq() -> Iterator[list]:
  """The 'hcq' calls JITs ran while active (each with how many times it ran and the inputs it was given that a capture
  writes) and what each HCQ2 capture takes through views, filled in on exit. Nothing where this process runs without
  HCQ2 or this tinygrad's internals are unsupported."""
  found: list = []
  if tg.MISSING or not active():
    yield found
    return
  runs: dict[int, list] = {}  # id(call) -> [call (kept, so its id is not reused), record, runs, written inputs]
  written: set = set()  # BUFFERs the captures' linears write
  jit_mod = importlib.import_module("tinygrad.engine.jit")
  real_compile = jit_mod.compile_linear

  def through(call: Any, ctx: Any, run: Exec) -> Any:
    if ctx.jit:
      seen = runs.setdefault(id(call), [call, _hcq_call(call, ctx), 0, 0])
      seen[2] += 1
      seen[3] = max(seen[3], sum(ctx.input_uops[k] in written for k in _slots(call) if k < len(ctx.input_uops)))
    return run(call, ctx)

  def compile_linear(linear: Any, *args: Any, **kwargs: Any) -> Any:
    found.append(_lowered(linear, written))
    return real_compile(linear, *args, **kwargs)
  jit_mod.compile_linear = compile_linear
  try:
    with executing(through): yield found
  finally:
    jit_mod.compile_linear = real_compile
    found.extend(dataclasses.replace(record, runs=n, written_inputs=w) for _, record, n, w in runs.values())


def _calls(records: tuple) -> list[HcqCall]: return [r for r in records if isinstance(r, HcqCall)]
def _replayed(records: tuple) -> bool: return any(c.runs >= 2 for c in _calls(records))


ROWS = (
  ("an 'hcq' call replayed", lambda rs: any(c.runs >= 2 for c in _calls(rs))),
  ("a Variable in an 'hcq' call", lambda rs: any(c.variables and c.runs >= 2 for c in _calls(rs))),
  ("2+ inputs patched into one 'hcq' call", lambda rs: any(c.inputs >= 2 and c.runs >= 2 for c in _calls(rs))),
  ("an input addressed through a view", lambda rs: _replayed(rs) and any(isinstance(r, Captured) and r.view_inputs for r in rs)),
  ("a replay given an input the capture writes", lambda rs: any(c.written_inputs and c.runs >= 2 for c in _calls(rs))),
  ("a multi-device 'hcq' call", lambda rs: any(c.devices >= 2 and c.runs >= 2 for c in _calls(rs))),
)


# ---------- mutants: faults in what an 'hcq' call patches per call ----------

def per_call(change: Callable[[Any, Callable[[Any], Any], dict], Any]) -> contextlib.AbstractContextManager:
  """A mutant that changes a JIT's runs of an 'hcq' call: `change(ctx, run, state)`, `run` executing the call with
  the context it is given and `state` what the mutant keeps for that call (empty on its first run)."""
  kept: dict[int, tuple[Any, dict]] = {}  # id(call) -> (the call, kept so its id is not reused; its state)

  def through(call: Any, ctx: Any, run: Exec) -> Any:
    if not ctx.jit: return run(call, ctx)
    _, state = kept.setdefault(id(call), (call, {}))
    return change(ctx, lambda c: run(call, c), state)
  return executing(through)


def stale_inputs() -> contextlib.AbstractContextManager:
  """every replay of an 'hcq' call writes its first run's input addresses into its table: later inputs are never read"""
  return per_call(lambda ctx, run, state: run(dataclasses.replace(ctx, input_uops=state.setdefault("inputs", ctx.input_uops))))


def stale_variables() -> contextlib.AbstractContextManager:
  """every replay of an 'hcq' call hands over its first run's Variable values: kernel arguments and launch sizes keep
  the values bound at capture"""
  return per_call(lambda ctx, run, state: run(dataclasses.replace(ctx, var_vals=state.setdefault("vars", dict(ctx.var_vals)))))


def submit_twice() -> contextlib.AbstractContextManager:
  """every replay of an 'hcq' call is submitted twice: what a step updates in place (state, parameters) moves twice"""
  def change(ctx: Any, run: Callable[[Any], Any], state: dict) -> Any:
    if state.setdefault("ran", False): run(ctx)
    state["ran"] = True
    return run(ctx)
  return per_call(change)


def same_inputs_skipped() -> contextlib.AbstractContextManager:
  """a replay whose inputs are the very buffers and values of the last run is not submitted, as if nothing changed:
  inputs refilled in place (same buffers, new data) get the last call's results"""
  def change(ctx: Any, run: Callable[[Any], Any], state: dict) -> Any:
    now = (tuple(ctx.input_uops), tuple(sorted(ctx.var_vals.items())))
    if state.get("last") == now: return []
    state["last"] = now
    return run(ctx)
  return per_call(change)


def inputs_swapped() -> contextlib.AbstractContextManager:
  """in an 'hcq' call's address table the first two inputs of the same size and dtype get each other's address, on
  replay only: two inputs patched into one call read each other"""
  def change(ctx: Any, run: Callable[[Any], Any], state: dict) -> Any:
    if not state.setdefault("ran", False):
      state["ran"] = True
      return run(ctx)
    ins = list(ctx.input_uops)
    pair = next(((i, j) for i in range(len(ins)) for j in range(i + 1, len(ins)) if _same_kind(ins[i], ins[j])), None)
    if pair is not None: ins[pair[0]], ins[pair[1]] = ins[pair[1]], ins[pair[0]]
    return run(dataclasses.replace(ctx, input_uops=tuple(ins)))
  return per_call(change)


def _same_kind(a: Any, b: Any) -> bool:
  return a.op is tg.Ops.BUFFER and b.op is tg.Ops.BUFFER and a.dtype == b.dtype and a.max_numel() == b.max_numel() and a.device == b.device


def available(device: str) -> bool:
  """Whether tinygrad 0.14.0 has an HCQ2 device of `device`'s kind here: the CPU device is one; AMD's is in a tinygrad
  checkout's extra/hcq2 (on the path with the emulator's files)."""
  kind = device.split(":")[0].split("+")[-1]
  if kind == "CPU": return True
  return kind == "AMD" and importlib.util.find_spec("extra.hcq2") is not None


def process_env(env: Mapping[str, str] = os.environ) -> dict[str, str]:
  """What a process started from `env` needs in its environment to run HCQ2 (read by tinygrad at import): on the
  emulated GPU (`DEV=MOCKKFD+AMD`) its runtime runs on the PYTHON device, as tinygrad's own CI runs it."""
  return {"HCQ2": "1"} | ({"HCQ_RUNTIME_DEV": "PYTHON"} if "MOCK" in env.get("DEV", "") else {})


def without(env: Mapping[str, str]) -> dict[str, str]:
  """`env` for a process that runs without HCQ2."""
  return {k: v for k, v in env.items() if k not in ENV_KEYS}


ENGINE = Engine("hcq2", "hcq2", spy_hcq, ROWS, "none ran (no 'hcq' call was replayed)", active,
                tuple(Mutant(f"hcq2-{f.__name__.replace('_', '-')}", f.__doc__ or "", f)
                      for f in (stale_inputs, stale_variables, submit_twice, same_inputs_skipped, inputs_swapped)))
