"""Planner mutants: bugs a planner author could plausibly write, each a small documented variant.

They exist to prove the fuzzer's power: each is selectable by name as a planner (`--planner lifetime-short`),
a policy (`--policy grads-only`), a graph splitter or a replay copy rule, and the fuzzer must kill every one of them,
except an advisory one (`no-copy-hold`), which breaks tinygrad's copy-lane contract but no value: it must be reported
as an advisory and fail no run.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from planner import tg
from planner.packer import Packing, plan_memory
from planner.policies import HoldContext, allocated_only, returned_only


@dataclass(frozen=True)
class Mutant:
  name: str
  doc: str
  kind: str  # planner, policy, graph or copy
  fn: Callable
  advisory: bool = False  # departs from a tinygrad contract without a wrong value here: reported as an advisory, never killed


def _packing_planner(packing: Packing) -> Callable[[Any, set], Any]:
  return lambda linear, held: plan_memory(linear, held, packing)[0]


def held_ignored_on_one_device(linear: Any, held: set) -> Any:
  """Held buffers are honoured only on the first device the linear uses: a copy target on CPU:1 gets packed."""
  devices = [d for call in linear.src for arg in tg.call_args(call) for b in tg.arg_buffers(arg) for d in tg.devices_of(b)]
  first = devices[0] if devices else None
  return plan_memory(linear, {b for b in held if tg.devices_of(b)[0] == first})[0]


def held_single_device_only(linear: Any, held: set) -> Any:
  """The held check knows only single-device buffers: a held multi-device (sharded) buffer is packed."""
  return plan_memory(linear, {b for b in held if len(tg.devices_of(b)) == 1})[0]


def window_writes_unheld(linear: Any, held: set) -> Any:
  """A held buffer a kernel writes through a window at a Variable offset (a KV-cache write) is packed: the store at
  `start + i` is taken for the writing loop of a Variable-shaped output, which each call makes afresh."""
  return plan_memory(linear, set(held) - {b for call in linear.src for b in tg.window_store_buffers(call)})[0]


def grads_only(ctx: HoldContext) -> set:
  """Holds returned tensors and every live `.grad`, but not other lazy escapes (tensors kept in a list)."""
  grads = {u for t in tg.live_tensors() if (g := getattr(t, "grad", None)) is not None for u in tg.tensor_buffers(g)}
  return returned_only(ctx) | grads


def own_buffers_only(ctx: HoldContext) -> set:
  """Holds each live tensor's own buffer, but not the buffers its lazy graph reads (#16571 generalised)."""
  return tg.allocated_buffers() | returned_only(ctx) | {t.uop.base for t in tg.live_tensors() if tg.is_buffer(t.uop.base)}


def reorder_dependent(linear: Any) -> Any:
  """Graph-split that swaps the first pair of adjacent calls where the second reads what the first writes."""
  calls = list(linear.src)
  for i in range(len(calls) - 1):
    (outs, _), (_, ins) = tg.call_effects(calls[i]), tg.call_effects(calls[i + 1])
    written = {b for k in outs for b in tg.arg_buffers(tg.call_args(calls[i])[k])} | {tg.call_args(calls[i])[k] for k in outs}
    read = {b for k in ins for b in tg.arg_buffers(tg.call_args(calls[i + 1])[k])} | {tg.call_args(calls[i + 1])[k] for k in ins}
    if written & read:
      calls[i], calls[i + 1] = calls[i + 1], calls[i]
      break
  return tg.make_linear(calls)


def no_input_copy(linear: Any) -> set:
  """A replay copies no input, not even one of the linear's own outputs fed back: the linear overwrites what it reads."""
  return set()


MUTANTS: dict[str, Mutant] = {m.name: m for m in [
  Mutant("lifetime-short", "a buffer's lifetime ends one step before its last use", "planner",
         _packing_planner(Packing(lifetime=lambda life: replace(life, last=max(life.first, life.last - 1))))),
  Mutant("free-at-first-use", "a buffer is freed right after its first use", "planner",
         _packing_planner(Packing(lifetime=lambda life: replace(life, last=life.first)))),
  Mutant("no-copy-hold", "copy-lane buffers are freed at their last use (the hold is dropped): the copy-lane advisory", "planner",
         _packing_planner(Packing(lifetime=lambda life: replace(life, hold=0))), advisory=True),
  Mutant("element-sizes", "byte sizes computed from element counts (itemsize forgotten)", "planner",
         _packing_planner(Packing(size=tg.buffer_size))),
  Mutant("unaligned", "offsets two bytes past the allocator's (a header miscounted): wider dtypes sit unaligned", "planner",
         _packing_planner(Packing(offset=lambda buf, off: off + 2))),
  # each wrong along one dimension of the program space only (issue 10): multi-device, sizes, widths, lifetimes, Variables
  Mutant("held-single-device-only", held_single_device_only.__doc__ or "", "planner", held_single_device_only),
  Mutant("shard-share-sizes", "a multi-device buffer is sized as one device's share (bytes / devices)", "planner",
         _packing_planner(Packing(size=lambda b: tg.buffer_nbytes(b) // len(tg.devices_of(b))))),
  Mutant("offset-16bit", "offsets kept in 16 bits: a buffer past 64 KiB of arena wraps onto the start", "planner",
         _packing_planner(Packing(offset=lambda buf, off: off % 65536))),
  Mutant("scalars-unplaced", "a one-element buffer is put at the arena's start, as if it took no room", "planner",
         _packing_planner(Packing(offset=lambda buf, off: 0 if tg.buffer_size(buf) == 1 else off))),
  Mutant("wide-as-4", "elements wider than 4 bytes (int64, float64) are sized as 4-byte ones", "planner",
         _packing_planner(Packing(size=lambda b: tg.buffer_size(b) * min(b.dtype.itemsize, 4)))),
  Mutant("lifetime-window", "a lifetime is cut to 16 steps: a buffer read far from where it is made is freed early", "planner",
         _packing_planner(Packing(lifetime=lambda life: replace(life, last=min(life.last, life.first + 16))))),
  Mutant("held-one-device", held_ignored_on_one_device.__doc__ or "", "planner", held_ignored_on_one_device),
  # wrong for the KV-cache feature's programs only (fuzz.gen.features.kv_cache): windows wider than one position
  Mutant("window-write-unheld", window_writes_unheld.__doc__ or "", "planner", window_writes_unheld),
  Mutant("returned-only", "tinygrad 0.13.0's held set: only returned tensors (#16571)", "policy", returned_only),
  Mutant("allocated-only", "only already-allocated buffers are held: returned tensors are packed too", "policy", allocated_only),
  Mutant("grads-only", grads_only.__doc__ or "", "policy", grads_only),
  Mutant("own-buffers-only", own_buffers_only.__doc__ or "", "policy", own_buffers_only),
  Mutant("reorder-dependent", reorder_dependent.__doc__ or "", "graph", reorder_dependent),
  Mutant("no-input-copy", no_input_copy.__doc__ or "", "copy", no_input_copy),
]}


def of_kind(kind: str) -> dict[str, Callable]: return {m.name: m.fn for m in MUTANTS.values() if m.kind == kind}
