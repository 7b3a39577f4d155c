"""Graph-replay mutants: faults planted in tinygrad's own graph runner, each wrong along one dimension of replay only.

tinygrad's graph runners (`HCQGraph` on AMD, NV, QCOM) build their command queues once and, on every replay, patch in
only what changes: input addresses, Variable values and launch sizes, per device of a multi-device batch. A mistake
there reads a capture-time buffer or value, only on replay, only where a graph runs. These mutants plant such a
mistake in the running process's tinygrad (through planner.tg), to show a campaign on a device with graphs (the
emulated GPU, `make fuzz-gpu`) judges the graph path: `planfuzz run --graph-mutant NAME`. Never active by default.
"""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner import tg


@dataclass(frozen=True)
class GraphMutant:
  name: str
  doc: str
  patch: Callable[[], contextlib.AbstractContextManager]  # while entered, tinygrad's graph replay has the fault


def stale_inputs() -> contextlib.AbstractContextManager:
  """every replay of a batch is given the input buffers of its first run: later inputs' addresses are never patched in"""
  first: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  def through(runner: Any, call: tg.GraphCall, inputs: tuple, var_vals: dict) -> Any:
    return call(first.setdefault(runner, inputs), var_vals)
  return tg.graph_calls_through(through)


def stale_variables() -> contextlib.AbstractContextManager:
  """every replay of a batch runs with its first run's Variable values: kernel arguments and symbolic launch sizes
  keep the values bound at capture"""
  first: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  def through(runner: Any, call: tg.GraphCall, inputs: tuple, var_vals: dict) -> Any:
    return call(inputs, first.setdefault(runner, dict(var_vals)))
  return tg.graph_calls_through(through)


def shard_swap() -> contextlib.AbstractContextManager:
  """in a multi-device batch, devices 0 and 1 are each patched with the other's shard of every sharded input"""
  def swap(var_vals: dict) -> dict:
    addresses = tg.input_addresses(var_vals)
    for (slot, dev), name in addresses.items():
      if dev == 0 and (other := addresses.get((slot, 1))) is not None:
        var_vals[name], var_vals[other] = var_vals[other], var_vals[name]
    return var_vals
  return tg.hcq_queue_values_through(swap)


def batch_tail_dropped() -> contextlib.AbstractContextManager:
  """a batch that JIT_BATCH_SIZE filled loses its last call: a capture split by the batch size skips a kernel"""
  def cut(batch: list) -> list:
    cap = tg.jit_batch_size()
    return batch[:-1] if cap and len(batch) >= max(cap, 2) else batch
  return tg.graph_batches_through(cut)


GRAPH_MUTANTS: dict[str, GraphMutant] = {m.name: m for m in [
  GraphMutant("graph-stale-inputs", stale_inputs.__doc__ or "", stale_inputs),
  GraphMutant("graph-stale-variables", stale_variables.__doc__ or "", stale_variables),
  GraphMutant("graph-shard-swap", shard_swap.__doc__ or "", shard_swap),
  GraphMutant("graph-batch-tail-dropped", batch_tail_dropped.__doc__ or "", batch_tail_dropped),
]}


def planted(name: str | None) -> contextlib.AbstractContextManager:
  """The named graph mutant's patch (nothing for None); an unknown name is a ValueError listing the known ones."""
  if name is None: return contextlib.nullcontext()
  if name not in GRAPH_MUTANTS: raise ValueError(f"unknown graph mutant {name!r}: choose one of {', '.join(GRAPH_MUTANTS)}")
  return GRAPH_MUTANTS[name].patch()
