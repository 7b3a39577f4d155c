"""The graph engine: batches of calls replayed by a device's graph runner (`GraphRunner`; `HCQGraph` on AMD, NV, QCOM).

tinygrad 0.14.0 batches a capture's kernels into graph calls where the device has a graph runner and `JIT<2` (the CPU
device has none); each runner builds its command queues once and, on every replay, patches in only what changes:
input addresses, Variable values and launch sizes, per device of a multi-device batch. tinygrad removed graphs after
0.14.0 ("remove graphs", tinygrad#18364), but 0.14.0's users replay through them.

What ran: `spy_graphs`, the batches read off the runners as they run. What to plant: mutants wrong along one
dimension of graph replay only (a capture-time buffer or value read on replay), and `graph_kernel_args_by_program`,
the fix of a known graph bug that its mechanism check reruns a finding with.
"""
from __future__ import annotations

import contextlib
import importlib
import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from planner import tg
from planner.engines import Engine, Mutant


@dataclass(frozen=True)
class GraphBatch:
  """One graph runner a JIT built and ran (tinygrad's `GraphRunner`, `HCQGraph` on AMD, NV and QCOM): read from the
  runner itself, so a census of these proves graphs ran, not that a program could have made one."""
  calls: int  # linear calls it batches (a multi-device call once)
  kernels: int  # kernel launches across its devices
  devices: int
  variables: bool  # a Variable value or symbolic launch size it patches on every replay
  inputs: int  # explicit inputs whose addresses it patches on every replay
  batch_cap: int  # JIT_BATCH_SIZE when it was built (0: no cap)
  runs: int = 0  # times it ran: the capture call, then each replay


def _graph_batch(runner: Any) -> GraphBatch:
  devices = {b.device for _, _, bufs, _ in runner.calls for b in bufs}
  return GraphBatch(len(runner.linear.src), sum(r is not None for r in runner.runtimes), len(devices),
                    bool(runner.vars or runner.symbolic_dims), len({i for slots in runner.uop_replace for _, i in slots}),
                    tg.jit_batch_size())


GraphCall = Callable[[tuple, dict], Any]  # a graph runner's call: (input_uops, var_vals) -> its time or None


def _graph_classes() -> list[type]:
  """Every graph runner class loaded (the default device's opened first, so its class is among them) that defines its
  own call: GraphRunner's subclasses, HCQGraph among them on AMD, NV and QCOM."""
  device = importlib.import_module("tinygrad").Device
  device[device.DEFAULT]  # opening it loads its graph class
  def below(cls: type) -> list[type]: return [c for sub in cls.__subclasses__() for c in (sub, *below(sub))]
  return [c for c in below(tg.internal("GraphRunner")) if "__call__" in vars(c)]


@contextlib.contextmanager
def graph_calls_through(through: Callable[[Any, GraphCall, tuple, dict], Any]) -> Iterator[None]:
  """Every graph runner call made while active goes through `through(runner, call, input_uops, var_vals)`, which
  decides what `call` (the runner itself) is given: how the census watches graphs run, and how a test plants a fault
  in graph replay. The runner classes are patched, not realize's lookup of them: tinygrad's pattern matchers run
  copies of their functions with the module globals of their first use, so a patched module function goes unseen."""
  tg.require()

  def patched(call: Callable) -> Callable:
    def runner_call(self: Any, input_uops: tuple, var_vals: dict, wait: bool = False) -> Any:
      return through(self, lambda inputs, values: call(self, inputs, values, wait=wait), input_uops, var_vals)
    return runner_call
  with tg.calls_through(_graph_classes(), patched): yield


@contextlib.contextmanager
def spy_graphs() -> Iterator[list[GraphBatch]]:
  """The graph batches run while active, each with how many times it ran (filled in on exit). Nothing where this
  tinygrad's internals are unsupported."""
  found: list[GraphBatch] = []
  if tg.MISSING:
    yield found
    return
  runs: dict[int, list] = {}  # id(runner) -> [runner (kept, so its id is not reused), batch, runs]

  def count(runner: Any, call: GraphCall, inputs: tuple, var_vals: dict) -> Any:
    runs.setdefault(id(runner), [runner, _graph_batch(runner), 0])[2] += 1
    return call(inputs, var_vals)
  try:
    with graph_calls_through(count): yield found
  finally: found.extend(replace(batch, runs=n) for _, batch, n in runs.values())


@contextlib.contextmanager
def graph_batches_through(cut: Callable[[list], list]) -> Iterator[None]:
  """Every batch graph-split makes while active is built from `cut(batch)` (the calls it batches, in order)."""
  tg.require()
  jit_mod = importlib.import_module("tinygrad.engine.jit")
  real = jit_mod.create_graph_call
  jit_mod.create_graph_call = lambda batch: real(cut(list(batch)))
  try: yield
  finally: jit_mod.create_graph_call = real


@contextlib.contextmanager
def hcq_queue_values_through(change: Callable[[dict], dict]) -> Iterator[None]:
  """Every HCQ command queue submitted while active is patched with `change(var_vals)`: the values a graph replay
  writes into its prebuilt queues (input addresses, Variable values, launch sizes, signals)."""
  tg.require()
  hw_queue = importlib.import_module("tinygrad.runtime.support.hcq").HWQueue
  real = hw_queue.submit
  hw_queue.submit = lambda self, dev, var_vals=None: real(self, dev, None if var_vals is None else change(dict(var_vals)))
  try: yield
  finally: hw_queue.submit = real


INPUT_ADDRESS = re.compile(r"inp_(\d+)_(\d+)$")  # HCQGraph's name for input `i`'s address on device index `d`


def input_addresses(var_vals: dict[str, int]) -> dict[tuple[int, int], str]:
  """(input slot, device index) -> the name of the queue value holding that input's address on that device."""
  return {(int(m.group(1)), int(m.group(2))): k for k in var_vals if (m := INPUT_ADDRESS.match(k))}


@contextlib.contextmanager
def graph_kernel_args_by_program() -> Iterator[None]:
  """While active, graph runners give each kernel the buffers its program takes, as eager runs do (`Program.globals`,
  the call's arguments it reads), with input addresses patched at those positions. tinygrad 0.14.0's `GraphRunner`
  gives a kernel every argument of its call instead, so a kernel whose code dropped a read (`x - (x + y)` is `-y`) gets
  its buffers shifted: the known bug graph-kernel-args-shifted, told apart by rerunning a finding with this fix."""
  tg.require()
  runner = tg.internal("GraphRunner")
  real = runner.__init__

  def init(self: Any, linear: Any, input_uops: tuple = ()) -> None:
    real(self, linear, input_uops)
    for j, (dev_idx, prg, bufs, dev_vars) in enumerate(self.calls):
      if prg.op is not tg.Ops.PROGRAM or list(taken := prg.arg.globals) == list(range(len(bufs))): continue
      self.calls[j] = (dev_idx, prg, [bufs[i] for i in taken], dev_vars)
      self.uop_replace[j] = [(taken.index(pos), slot) for pos, slot in self.uop_replace[j] if pos in taken]
  runner.__init__ = init
  try: yield
  finally: runner.__init__ = real


# ---------- mutants: faults in graph replay ----------

def stale_inputs() -> contextlib.AbstractContextManager:
  """every replay of a batch is given the input buffers of its first run: later inputs' addresses are never patched in"""
  first: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  def through(runner: Any, call: GraphCall, inputs: tuple, var_vals: dict) -> Any:
    return call(first.setdefault(runner, inputs), var_vals)
  return graph_calls_through(through)


def stale_variables() -> contextlib.AbstractContextManager:
  """every replay of a batch runs with its first run's Variable values: kernel arguments and symbolic launch sizes
  keep the values bound at capture"""
  first: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  def through(runner: Any, call: GraphCall, inputs: tuple, var_vals: dict) -> Any:
    return call(inputs, first.setdefault(runner, dict(var_vals)))
  return graph_calls_through(through)


def shard_swap() -> contextlib.AbstractContextManager:
  """in a multi-device batch, devices 0 and 1 are each patched with the other's shard of every sharded input"""
  def swap(var_vals: dict) -> dict:
    addresses = input_addresses(var_vals)
    for (slot, dev), name in addresses.items():
      if dev == 0 and (other := addresses.get((slot, 1))) is not None:
        var_vals[name], var_vals[other] = var_vals[other], var_vals[name]
    return var_vals
  return hcq_queue_values_through(swap)


def batch_tail_dropped() -> contextlib.AbstractContextManager:
  """a batch that JIT_BATCH_SIZE filled loses its last call: a capture split by the batch size skips a kernel"""
  def cut(batch: list) -> list:
    cap = tg.jit_batch_size()
    return batch[:-1] if cap and len(batch) >= max(cap, 2) else batch
  return graph_batches_through(cut)


# census rows: "replayed" is the proof a capture was graphed
ROWS = (
  ("a graph batch replayed", lambda gs: any(g.runs >= 2 for g in gs)),
  ("a multi-device batch", lambda gs: any(g.devices >= 2 for g in gs)),
  ("a Variable in a batch", lambda gs: any(g.variables for g in gs)),
  ("2+ inputs patched into one batch", lambda gs: any(g.inputs >= 2 for g in gs)),
  ("a batch cut at JIT_BATCH_SIZE", lambda gs: any(g.batch_cap and g.calls == g.batch_cap for g in gs)),
  ("a one-kernel graph (GRAPH_ONE_KERNEL)", lambda gs: any(g.calls == 1 for g in gs)),
)

def active() -> bool:
  """Graphs replay where the device has a graph runner and HCQ2 does not replace them."""
  from planner.engines import hcq2
  return not hcq2.active() and not tg.MISSING and tg.default_device_graphs()


ENGINE = Engine("graph", "graphs", spy_graphs, ROWS,
                "none ran (every example ran with JIT=2, or the target runs nothing)", active,
                tuple(Mutant(f"graph-{f.__name__.replace('_', '-')}", f.__doc__ or "", f)
                      for f in (stale_inputs, stale_variables, shard_swap, batch_tail_dropped)))
