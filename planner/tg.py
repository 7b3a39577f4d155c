"""The one module that touches tinygrad internals.

Everything planfuzz needs from inside tinygrad (UOp, Ops, the capture hook, the memory planner, the
TLSF allocator, compile and graph-split) is imported and wrapped here, so a new tinygrad version is a
one-file change. It has two parts:
- portable: what the dynamic oracle reads off a Tensor (lazy or realized, which memory it views, a bound
  Variable's value), written against what every tinygrad from 0.12.0 on has, so the `tinyjit` target runs on them;
- internals: the lowering pipeline's pieces. Importing this module never fails; `require()` (which planfuzz's
  planner modules call when they load) raises one `UnsupportedTinygrad` naming the version found, the versions
  supported and every missing name.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import os
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tinygrad import Context, Tensor

SUPPORTED_VERSIONS = ("0.14.0",)

_NEEDED: dict[str, tuple[str, ...]] = {
  "tinygrad.tensor": ("all_tensors",),
  "tinygrad.uop.ops": ("UOp", "Ops", "buffers"),
  "tinygrad.dtype": ("dtypes", "DType"),
  "tinygrad.helpers": ("Context", "getenv", "JIT", "JIT_BATCH_SIZE", "BEAM", "NO_MEMORY_PLANNER", "CAPTURING", "disable_gc"),
  "tinygrad.engine.realize": ("capturing", "link_linear", "run_linear", "get_call_outs_ins", "get_call_arg_uops"),
  "tinygrad.engine.jit": ("JitError", "compile_linear", "GraphRunner", "graph_split_rewrite", "create_graph_call", "jit_lower",
                          "prune_linear", "_copy_input", "_prepare_jit_inputs", "_check_no_non_tensor_return"),
  "tinygrad.schedule.memory": ("memory_plan_rewrite",),
  "tinygrad.runtime.support.memory": ("TLSFAllocator",),
  "tinygrad.nn.state": ("get_parameters",),
}


class UnsupportedTinygrad(ImportError):
  """The installed tinygrad lacks internals planfuzz's planner needs."""


def installed_version() -> str:
  try: return importlib.metadata.version("tinygrad")
  except importlib.metadata.PackageNotFoundError: return "not installed"


def _load() -> tuple[dict[str, Any], list[str]]:
  """(found names, missing dotted names); warns when all are there but the version is not one planfuzz was written for."""
  found: dict[str, Any] = {}
  missing: list[str] = []
  for module, names in _NEEDED.items():
    try: mod = importlib.import_module(module)
    except ImportError:
      missing += [f"{module}.{n}" for n in names]
      continue
    for n in names:
      if hasattr(mod, n): found[n] = getattr(mod, n)
      else: missing.append(f"{module}.{n}")
  if not missing and (version := installed_version()) not in SUPPORTED_VERSIONS:
    warnings.warn(f"planfuzz was written against tinygrad {', '.join(SUPPORTED_VERSIONS)}, found {version}", stacklevel=2)
  return found, missing


def unsupported(missing: list[str]) -> UnsupportedTinygrad:
  return UnsupportedTinygrad(f"planfuzz's planner supports tinygrad {', '.join(SUPPORTED_VERSIONS)}; found tinygrad "
                             f"{installed_version()}, which lacks: {', '.join(missing)}. Install a supported version "
                             f"(pip install tinygrad=={SUPPORTED_VERSIONS[-1]}) or port planner/tg.py. "
                             "The tinyjit target needs only tinygrad's public API.")


_tg, MISSING = _load()


def require() -> None:
  """Raise UnsupportedTinygrad unless this tinygrad has every internal the planner and the static checks use."""
  if MISSING: raise unsupported(MISSING)


# ---------- portable: the dynamic oracle's view of a Tensor (tinygrad 0.12.0 on) ----------

def _unsharded(t: Tensor) -> Any:
  """A tensor's uop, seen through the UNSHARD a realized sharded (split-axis) tensor wears over its multi-device buffer."""
  return t.uop.src[0] if t.uop.op.name == "UNSHARD" else t.uop


def is_lazy(t: Tensor) -> bool:
  """Not realized yet: reading it schedules its graph."""
  return not _unsharded(t).is_realized


def is_pending_assign(t: Tensor) -> bool:
  """A lazy in-place assign (what backward() makes when it accumulates into an existing .grad): its first read
  realizes it into the target's buffer."""
  return is_lazy(t) and t.uop.op.name in ("AFTER", "ASSIGN")


def storage(t: Tensor) -> Any:
  """The identity of the memory a tensor views: equal for a tensor and every view of it."""
  return _unsharded(t).base


def is_symbolic_view(t: Tensor) -> bool:
  """A realized view (not its own buffer) whose view depends on a Variable: a JIT bakes the capture call's bound
  value into such a view."""
  u = t.uop
  return u.is_realized and u is not u.base and bool(u.variables())


def reads_variable(t: Tensor) -> bool:
  """Its graph reads a Variable: a lazy escape over one keeps the bound value it was made with."""
  return bool(_unsharded(t).variables())


def bound_values(args: list | tuple) -> dict[str, int]:
  """Variable name -> value for every bound Variable among a call's arguments."""
  out: dict[str, int] = {}
  for a in args:
    try: var, val = a.unbind()
    except (AttributeError, AssertionError, TypeError): continue  # not a bound Variable
    out[str(var.expr)] = int(val)
  return out


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
  """File descriptor 2 muted: a compiler subprocess's errors for a probe that is expected to fail."""
  saved = os.dup(2)
  with open(os.devnull, "w") as null:
    os.dup2(null.fileno(), 2)
    try: yield
    finally: os.dup2(saved, 2), os.close(saved)


PROBED_DTYPES = "PLANFUZZ_DTYPES"  # a process's environment: dtypes its parent probed, as "name=0|1,..." (`probed_env`)


@functools.cache
def usable_dtypes(names: tuple[str, ...]) -> tuple[str, ...]:
  """Those of `names` the default device computes: each probed once per process by a cast to it and back, unless the
  process's parent probed it already (`probed_env`). The renderer's list is not enough: tinygrad 0.14.0 lists bfloat16
  for clang, which clang 14 cannot build for x86 ("__bf16 is not supported on this target")."""
  told = dict(pair.split("=") for pair in os.environ.get(PROBED_DTYPES, "").split(",") if "=" in pair)
  def works(name: str) -> bool:
    if name in told: return told[name] == "1"
    try:
      with _quiet_stderr(), _compile_here(): Tensor([1.0, 2.0]).cast(name).contiguous().float().realize()
      return True
    except Exception: return False
  return tuple(n for n in names if works(n))


def probed_env(names: tuple[str, ...]) -> dict[str, str]:
  """`names` probed here, as the environment of a child process on the same device, which then probes none: a probe
  is a kernel compiled and run, and under HCQ2 each costs about a second more to lower (7 s a worker process on CPU).
  Whether a dtype compiles is the device's renderer and compiler's, the same for both replay engines."""
  usable = usable_dtypes(names)
  return {PROBED_DTYPES: ",".join(f"{n}={int(n in usable)}" for n in names)}


def _compile_here() -> contextlib.AbstractContextManager:
  """Compile in this process (a compile pool's workers keep the stderr they started with); tinygrad before 0.14 has
  no PARALLEL and compiles here anyway."""
  from tinygrad.helpers import ContextVar
  return Context(PARALLEL=0) if "PARALLEL" in getattr(ContextVar, "_cache", {}) else contextlib.nullcontext()


# ---------- internals ----------

# knobs tinygrad reads with getenv (cached for the process), unlike the ContextVars a Context sets: `knobs` switches
# them for one run, so a fuzzer can draw them per example. HCQ2 is not one of them: tinygrad picks its compile and link
# at import, and switching it inside a process hangs the CPU device (its HCQ queue waits forever; seen on 0.14.0), so
# it is a campaign's environment (`HCQ2=1 make fuzz`), read once at start like tinygrad reads it.
PROCESS_KNOBS = ("GRAPH_ONE_KERNEL",)
ENVIRONMENT_KNOBS = ("HCQ2",)


@contextlib.contextmanager
def knobs(values: dict[str, int]) -> Iterator[None]:
  """tinygrad's knobs for one run: ContextVars through Context, PROCESS_KNOBS through the environment (getenv's cache
  cleared on the way in and out); ENVIRONMENT_KNOBS (HCQ2) may be named, as a finding's target carries its engine, but
  only as this process runs."""
  process = {k: v for k, v in values.items() if k in PROCESS_KNOBS}
  context = {k: v for k, v in values.items() if k not in PROCESS_KNOBS + ENVIRONMENT_KNOBS}
  if (differ := {k: v for k, v in values.items() if k in ENVIRONMENT_KNOBS and bool(v) != bool(environment_knobs().get(k))}):
    raise ValueError(f"{', '.join(f'{k}={v}' for k, v in differ.items())} is a process's setting (tinygrad reads it at import): "
                     "run it in a process started with it (planfuzz run --engine)")
  if process: require()
  saved = {k: os.environ.get(k) for k in process}
  try:
    _set_env(process)
    with Context(**context): yield
  finally:
    if process: _set_env(saved)


def _set_env(values: dict[str, Any]) -> None:
  for k, v in values.items():
    if v: os.environ[k] = str(v)
    else: os.environ.pop(k, None)
  _tg["getenv"].cache_clear()


UOp = _tg.get("UOp")
Ops = _tg.get("Ops")
dtypes = _tg.get("dtypes")
DType = _tg.get("DType")
JitError = _tg.get("JitError")
TLSFAllocator = _tg.get("TLSFAllocator")
get_parameters = _tg.get("get_parameters")
disable_gc = _tg.get("disable_gc")
tinygrad_memory_plan: Callable[[Any, set], Any] = _tg.get("memory_plan_rewrite")
check_tensor_return: Callable[[Any], None] = _tg.get("_check_no_non_tensor_return")

# devices whose buffers tinygrad never suballocates (no views on them)
UNPLANNABLE_DEVICE_PREFIXES = ("DISK", "TINYFS", "CL", "WEBGPU")
ARENA_BLOCK = 256
TLSF_LV2 = 32


# ---------- knobs ----------

def environment_knobs() -> dict[str, int]:
  """The ENVIRONMENT_KNOBS this process started with: part of every run's configuration, and of its repro."""
  return {k: int(v) for k in ENVIRONMENT_KNOBS if (v := os.environ.get(k, "0")) not in ("", "0")}


def default_device_graphs() -> bool:
  """Whether the default device batches kernels into graphs (NULL and the GPUs do; tinygrad 0.14.0's CPU does not)."""
  device = importlib.import_module("tinygrad").Device
  return device[device.DEFAULT].graph is not None


def jit_level() -> int: return int(_tg["JIT"].value)
def jit_batch_size() -> int: return int(_tg["JIT_BATCH_SIZE"].value)
def memory_planner_off() -> bool: return bool(_tg["NO_MEMORY_PLANNER"].value)


# ---------- linear structure ----------

def is_buffer(u: Any) -> bool: return u.op is Ops.BUFFER
def is_copy(call: Any) -> bool: return call.src[0].op is Ops.COPY
def call_args(call: Any) -> tuple:
  """The buffer-like arguments of a CALL (bound variables left out)."""
  return _tg["get_call_arg_uops"](call)
def call_outs_ins(call: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
  """Indices into call_args that the call writes and reads (known for compiled programs and copies)."""
  return _tg["get_call_outs_ins"](call)
def call_effects(call: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
  """(written, read) argument indices of a CALL, compiled or not (a SINK is read off its STOREs and INDEXes)."""
  ast = call.src[0]
  if ast.op is not Ops.SINK: return call_outs_ins(call)
  outs, ins = set(), set()
  for u in ast.toposort():
    for k, s in enumerate(u.src):
      if s.op is Ops.INDEX and s.src[0].op is Ops.PARAM: (outs if u.op is Ops.STORE and k == 0 else ins).add(s.src[0].arg.slot)
  return tuple(sorted(outs)), tuple(sorted(ins))


def devices_of(u: Any) -> tuple[str, ...]: return (u.device,) if isinstance(u.device, str) else tuple(u.device)


def arg_buffers(arg: Any) -> list:
  """The BUFFER UOps an argument of a CALL names directly (through MSELECT/MSTACK for multi-device)."""
  if arg.op is Ops.BUFFER: return [arg]
  if arg.op in (Ops.MSELECT, Ops.MSTACK): return [b for s in arg.src for b in arg_buffers(s)]
  return []


def _windowed(index: Any) -> bool:
  """An index that adds a loop index to a bound Variable itself (`start + i`): a window of positions from a Variable offset."""
  return any(u.op is Ops.ADD and any(s.op is Ops.RANGE for s in u.src) and any(s in s.variables() for s in u.src)
             for u in index.toposort())


def window_store_buffers(call: Any) -> set:
  """The BUFFERs a kernel stores to through a window at a Variable offset: `cache[:, start:start + n].assign(new)`
  with n > 1 (a one-position write, `cache[n - 1:n]`, has no loop over the Variable's axis). Read off 0.14.0's kernel
  AST: a STORE to an INDEX of a PARAM whose index adds a RANGE to a Variable."""
  ast, args = call.src[0], call_args(call)
  if ast.op is not Ops.SINK: return set()
  stores = [u.src[0] for u in ast.toposort() if u.op is Ops.STORE and u.src[0].op is Ops.INDEX]
  return {b for idx in stores if idx.src[0].op is Ops.PARAM and _windowed(idx.src[1]) for b in arg_buffers(args[idx.src[0].arg.slot])}


def arg_memory(arg: Any) -> set:
  """Every BUFFER an argument of a CALL touches, through any view of it (bound Variables left out)."""
  return {u for u in arg.toposort() if u.op is Ops.BUFFER and not u.is_variable}


def call_memory(call: Any) -> tuple[set, set]:
  """(written, read) BUFFERs of a CALL, through views: what a dependency analysis over a linear needs."""
  args, (outs, ins) = call_args(call), call_effects(call)
  return set().union(*(arg_memory(args[k]) for k in outs)), set().union(*(arg_memory(args[k]) for k in ins))


def is_graph_call(call: Any) -> bool:
  """A batch of kernels made by graph-split: CALL(CUSTOM_FUNCTION 'graph', LINEAR of the batched calls)."""
  return call.src[0].op is Ops.CUSTOM_FUNCTION and call.src[0].arg == "graph"


def flat_calls(linear: Any) -> list:
  """The calls of a linear in run order, with every graph call replaced by the calls it batches."""
  return [c for call in linear.src for c in (flat_calls(call.src[0].src[0]) if is_graph_call(call) else [call])]


def call_name(call: Any) -> str:
  """A compiled kernel's name, `kernel` for one not compiled yet, or the kind of a copy or custom function."""
  ast = call.src[0]
  if ast.op is Ops.PROGRAM: return re.sub(r"\x1b\[[0-9;]*m", "", str(ast.arg.name))  # tinygrad colours its kernel names
  if ast.op is Ops.SINK: return "kernel"
  return ast.op.name.lower() + (f" {ast.arg}" if isinstance(ast.arg, str) else "")


def arena_slice(arena: Any, offset: int, nbytes: int, dtype: Any) -> Any:
  """The view of an int8 arena that a planned buffer becomes."""
  return arena[offset:offset + nbytes].bitcast(dtype)


def parse_arena_slice(u: Any) -> tuple[Any, int, int] | None:
  """(arena BUFFER, byte offset, byte size) when u is an arena slice made by a memory planner, else None."""
  if u.op is not Ops.BITCAST: return None
  shrink = u.src[0]
  if shrink.op is Ops.BUFFER and shrink.dtype == dtypes.int8: return shrink, 0, buffer_nbytes(shrink)  # a slice of the whole arena
  if shrink.op is not Ops.SHRINK: return None
  base = shrink.src[0]
  if base.op is not Ops.BUFFER or base.dtype != dtypes.int8 or len(shrink.src) != 3: return None
  start, size = shrink.src[1], shrink.src[2]  # a SHRINK of a 1-D buffer holds its start and its size
  if start.op is not Ops.CONST or size.op is not Ops.CONST: return None
  return base, int(start.arg), int(size.arg)


def buffer_size(u: Any) -> int: return int(u.max_numel())
def buffer_nbytes(u: Any) -> int: return int(u.max_numel()) * u.dtype.itemsize
def new_buffer(device: str, nbytes: int) -> Any: return UOp.new_buffer(device, nbytes, dtypes.int8)
def param(slot: int, u: Any) -> Any: return UOp.param(slot, u.dtype, u.shape, u.device)
def make_linear(calls: tuple | list) -> Any: return UOp(Ops.LINEAR, src=tuple(calls))
def is_linear(u: Any) -> bool: return isinstance(u, UOp) and u.op is Ops.LINEAR
def substitute(linear: Any, mapping: dict) -> Any: return linear.substitute(mapping, walk=True)


# ---------- buffers and tensors ----------

def allocated_buffers() -> set:
  """BUFFER UOps that already have device memory: a planner must never suballocate them."""
  return set(_tg["buffers"])


def live_tensors() -> list:
  return [t for ref in list(_tg["all_tensors"]) if (t := ref()) is not None]


def forget_dead_tensors() -> None:
  """Drop the entries of tinygrad's registry of live tensors whose tensor is gone.

  A tensor freed by Python's cycle collector (one a hand-written program keeps in a cycle, say a module-level step and
  its globals; generated programs keep none, see `fuzz.gen.render.build_lines`) leaves its entry behind: the collector
  clears weak references before `Tensor.__del__` runs, and the fresh `weakref.ref(self)` that `__del__` pops is not
  equal to the cleared one. Every realize and backward walks the whole registry, so a long campaign slows as they pile
  up (20,000 of them made 20 differential examples 22% slower). Portable: a tinygrad without the registry has nothing
  to drop."""
  registry = _tg.get("all_tensors")
  if registry is None: return
  for ref in [ref for ref in list(registry) if ref() is None]: registry.pop(ref, None)


def forget_uop_metadata() -> None:
  """Empty tinygrad's table of UOp metadata: which Tensor method made each UOp, read only by DEBUG output, VIZ and
  pickling.

  backward() appends its metadata to every UOp a gradient reaches, and hash-consed UOps that outlive a program (a
  constant, a common subgraph) keep gathering it from every later one, one tuple concatenation each time: after a
  few thousand examples a backward() copies tuples of 10,000 entries, which took a quarter of a differential
  worker's time. Portable: a tinygrad without the table has nothing to empty."""
  if (table := uop_metadata()) is not None: table.clear()


def uop_metadata() -> Any:
  """tinygrad's UOp -> metadata table (a WeakKeyDictionary), or None where this tinygrad has none."""
  return getattr(importlib.import_module("tinygrad.uop.ops"), "all_metadata", None)


def tensor_buffers(t: Any) -> set:
  """Every BUFFER UOp a tensor's graph reaches: the memory a lazy tensor reads when it is realized."""
  return {u for u in t.uop.toposort() if u.op is Ops.BUFFER}


def tensor_buf_uop(t: Any) -> Any | None:
  """The BUFFER a realized tensor is stored in (None for a lazy or multi-device one)."""
  u = t.uop.buf_uop
  return u if u.op is Ops.BUFFER else None


def device_buffer(u: Any) -> Any | None:
  """The device Buffer behind a BUFFER UOp, when it has one."""
  return _tg["buffers"].get(u)


# ---------- pipeline pieces that stay tinygrad's ----------

def compile_linear(linear: Any) -> Any:
  """tinygrad's compile of a JIT's linear, looked up in `tinygrad.engine.jit` at each call as TinyJit's lowering does:
  what watches TinyJit compile (the HCQ2 census, which reads the buffers a capture writes there) sees PlannedJit's too."""
  getenv, beam = _tg["getenv"], _tg["BEAM"]
  return importlib.import_module("tinygrad.engine.jit").compile_linear(linear, beam=getenv("JITBEAM", beam.value))


def tinygrad_graph_split(linear: Any) -> Any: return _tg["graph_split_rewrite"](linear, max_batch_size=jit_batch_size())
def link_linear(linear: Any) -> Any: return _tg["link_linear"](linear)


def run_linear(linear: Any, var_vals: dict[str, int] | None = None, inputs: tuple | list = (), jit: bool = False) -> None:
  _tg["run_linear"](linear, var_vals or {}, input_uops=tuple(inputs), jit=jit)


def copy_of(u: Any) -> Any:
  """A fresh buffer holding a copy of u: a replay must not clobber an input the linear writes."""
  new = UOp.new_buffer(u.device, u.max_numel(), u.dtype)
  run_linear(make_linear((u.copy_to_device(u.device).call(new, u),)))
  return new


# ---------- capture and inputs ----------

@dataclass(frozen=True)
class JitInputs:
  """The explicit inputs of one JIT call, as TinyJit sees them."""
  buffers: list
  var_vals: dict[str, int]
  names: list
  info: list


def prepare_inputs(args: tuple, kwargs: dict) -> JitInputs:
  """Realize and check the explicit inputs exactly as TinyJit does (same JitErrors for bad inputs)."""
  bufs, var_vals, names, info = _tg["_prepare_jit_inputs"](args, kwargs)
  return JitInputs(bufs, var_vals, names, info)


class _Collector:
  def __init__(self) -> None: self.linears: list = []
  def add_linear(self, linear: Any, var_vals: dict[str, int]) -> None: self.linears.append(linear)


NESTED_JIT = "having a JIT inside another JIT is not supported"


@contextlib.contextmanager
def capturing() -> Iterator[_Collector]:
  """While active, every schedule's LINEAR is collected instead of run: tinygrad's JIT capture hook."""
  hook = _tg["capturing"]
  if hook: raise RuntimeError(f"{NESTED_JIT} ({len(hook)} capturing)")
  collector = _Collector()
  hook.append(collector)
  try:
    with Context(CAPTURING=1): yield collector
  finally: hook.clear()


@dataclass
class TinyJitLowering:
  """What tinygrad's own TinyJit did with one capture: the captured linear, the held set, the planner's input and
  output, what it lowered to (`final`), its prune split (when pruned), and the inputs each later replay copied."""
  captured: Any = None
  held: frozenset = frozenset()
  inputs: tuple = ()
  parametrized: Any = None
  planned: Any = None
  compiled: Any = None
  final: Any = None
  pruned: tuple[Any, Any] | None = None  # (linear given to prune, one-time calls)
  copies: list = field(default_factory=list)  # BUFFERs _copy_input copied since the last `copies.clear()`


@contextlib.contextmanager
def spy_tinyjit(on_plan: Callable[[Any], None] | None = None) -> Iterator[list[TinyJitLowering]]:
  """Record what each real TinyJit capture prunes, lowers and copies, without changing what it does (for static
  checks of real plans); `on_plan` sees each planned linear before anything runs it (the oracle poisons its arenas there)."""
  require()
  jit_mod = importlib.import_module("tinygrad.engine.jit")
  records: list[TinyJitLowering] = []
  real = {n: getattr(jit_mod, n) for n in ("jit_lower", "memory_plan_rewrite", "compile_linear", "prune_linear", "_copy_input")}
  pending: list[tuple[Any, Any]] = []  # a prune split made before its capture's jit_lower

  def prune(linear: Any, needed: set) -> tuple[Any, Any]:
    kept, once = real["prune_linear"](linear, needed)
    pending[:] = [(linear, once)]
    return kept, once

  def lower(linear: Any, held_bufs: set, input_uops: list) -> Any:
    records.append(TinyJitLowering(linear, frozenset(held_bufs), tuple(input_uops), pruned=pending.pop() if pending else None))
    records[-1].final = real["jit_lower"](linear, held_bufs, input_uops)
    return records[-1].final

  def plan(linear: Any, held_bufs: set | None = None) -> Any:
    out = real["memory_plan_rewrite"](linear, held_bufs)
    if records: records[-1].parametrized, records[-1].planned = linear, out
    if on_plan is not None: on_plan(out)
    return out

  def compile_linear(linear: Any, *args: Any, **kwargs: Any) -> Any:
    out = real["compile_linear"](linear, *args, **kwargs)
    if records: records[-1].compiled = out
    return out

  def copy_input(u: Any) -> Any:
    if records: records[-1].copies.append(u)
    return real["_copy_input"](u)

  spies = {"jit_lower": lower, "memory_plan_rewrite": plan, "compile_linear": compile_linear, "prune_linear": prune,
           "_copy_input": copy_input}
  for n, fn in spies.items(): setattr(jit_mod, n, fn)
  try: yield records
  finally:
    for n, fn in real.items(): setattr(jit_mod, n, fn)


@contextlib.contextmanager
def tinyjit_planner(planner: Callable[[Any, set], Any]) -> Iterator[None]:
  """tinygrad's own TinyJit planning with `planner` (a `(linear, held) -> linear` function, a mutant say) in place of
  memory_plan_rewrite: how a test shows a planner bug corrupts a real TinyJit's results."""
  require()
  jit_mod = importlib.import_module("tinygrad.engine.jit")
  real = jit_mod.memory_plan_rewrite
  jit_mod.memory_plan_rewrite = lambda linear, held_bufs=None: planner(linear, set(held_bufs or ()))
  try: yield
  finally: jit_mod.memory_plan_rewrite = real


def fill_buffer(u: Any, byte: int) -> None:
  """Overwrite a BUFFER's device memory with one byte value, allocating it first if needed (for poisoning arenas)."""
  buf = device_buffer(u)
  if buf is None: buf = u.buffer
  for one in getattr(buf, "bufs", [buf]):  # a multi-device buffer: one Buffer per device
    one, data = one.ensure_allocated(), memoryview(bytearray([byte]) * one.nbytes)
    if _copies_in(one.allocator): one.allocator._copyin(one._buf, data)
    else: one.copy_from(type(one)("PYTHON", one.size, one.dtype, opaque=data))


def _copies_in(allocator: Any) -> bool:
  """Whether a device's allocator writes host bytes straight in (`_copyin`): HCQ2's AMD allocator has none (its data
  moves by copy linears only), where a direct write raised 'need copyin' mid-capture (the emulated HCQ2 lead of
  seed 60607: planfuzz's arena poisoning, not tinygrad)."""
  return type(allocator)._copyin is not importlib.import_module("tinygrad.device").Allocator._copyin


@contextlib.contextmanager
def calls_through(classes: list[type], wrap: Callable[[Callable], Callable]) -> Iterator[None]:
  """Each class's own `__call__` replaced by `wrap(that __call__)` while active: how the replay engines' spies and
  mutants, and planner/ran.py, watch a JIT or a graph runner run (the classes are patched, not the modules' lookups of
  them: tinygrad's pattern matchers run copies of their functions, which a patched module function goes unseen by)."""
  real = {cls: vars(cls)["__call__"] for cls in classes}
  for cls, call in real.items(): cls.__call__ = wrap(call)
  try: yield
  finally:
    for cls, call in real.items(): cls.__call__ = call


def internal(name: str) -> Any:
  """A tinygrad internal this module loaded (`_NEEDED`): for the replay engines' adapters (planner/engines/)."""
  require()
  return _tg[name]
