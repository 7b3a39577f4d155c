"""Invariants 5-7, on the order of a linear's calls: replay inputs the linear writes are copied first, the graph split
keeps every dependency, and prune runs once only what does not depend on the inputs.

Two calls conflict when they touch overlapping bytes of one buffer, arena slice or input slot and one of them writes.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from oracle.findings import Finding
from oracle.invariants.plan import slice_key, slice_name, static_finding
from planner import tg
from planner.memplan import buffer_name

INPUT_NOT_COPIED, GRAPH_ORDER = "invariant:input-not-copied", "invariant:graph-order"
PRUNE_SPLIT = "invariant:prune-split"

Resource = tuple[Any, int, float, str]  # (memory identity, first byte, end byte, name)


# ---------- 5. replay inputs the linear writes are copied ----------

def pure_writes(final_linear: Any) -> set:
  """Every BUFFER some call (graph calls flattened) writes at an argument it does not also read: the JIT's outputs."""
  out: set = set()
  for call in tg.flat_calls(final_linear):
    args, (outs, ins) = tg.call_args(call), tg.call_effects(call)
    out |= set().union(*(tg.arg_memory(args[k]) for k in set(outs) - set(ins)))
  return out


def written_inputs_copied(final_linear: Any, inputs: tuple, copied: set | frozenset, replay: int) -> list[Finding]:
  """input-not-copied: at a replay, every explicit input that is memory the linear writes is copied first.

  Such an input is one of the JIT's own outputs passed back in (a returned tensor fed to the next call): run in place, the
  linear would overwrite it while still reading it. tinygrad copies it (CapturedJit._written_uops); a replay that does
  not reads what it is writing. `inputs` are the replay's input BUFFERs, `copied` those it copied, `replay` its number.
  What is not judged: memory a call both reads and writes at one argument (an in-place update), and calls whose effects
  are unknown (HCQ2's single 'hcq' call). Capture-time inputs are PARAMs in the linear, never BUFFERs it writes: their
  writes go to the caller's tensors, as in eager.
  """
  written = pure_writes(final_linear)
  names = sorted(buffer_name(b) for b in copied)
  return [Finding(INPUT_NOT_COPIED, buffer_name(u), None, f"replay {replay}", {"slot": slot, "copied": names})
          for slot, u in enumerate(inputs) if u in written and u not in copied]


# ---------- 6. graph split keeps the order ----------

def _resources(arg: Any) -> list[Resource]:
  """The memory one argument touches: exact bytes for arena slices, the whole buffer or input slot otherwise."""
  if (key := slice_key(arg)) is not None: return [(key[0], key[1], key[1] + key[2], slice_name(key))]
  if arg.op in (tg.Ops.MSTACK, tg.Ops.MSELECT): return [r for s in arg.src for r in _resources(s)]
  out: list[Resource] = []
  for u in arg.toposort():
    if u.op is tg.Ops.BUFFER: out.append((u, 0, math.inf, buffer_name(u)))
    elif u.op is tg.Ops.PARAM: out.append((("input", u.arg.slot), 0, math.inf, f"input {u.arg.slot}"))
  return out


def _effects(call: Any) -> tuple[list[Resource], list[Resource]]:
  args, (outs, ins) = tg.call_args(call), tg.call_effects(call)
  return [r for k in outs for r in _resources(args[k])], [r for k in ins for r in _resources(args[k])]


def _broken(i: int, j: int, calls: list, pos: list) -> list[Finding]:
  """The dependencies between compiled calls i < j that running j first, as the graphed linear does, breaks."""
  (wi, ri), (wj, rj) = _effects(calls[i]), _effects(calls[j])
  kinds = (("read-after-write", wi, rj), ("write-after-read", ri, wj), ("write-after-write", wi, wj))
  found, seen = [], set()
  for kind, first, then in kinds:
    for a in first:
      for b in then:
        if a[0] == b[0] and a[1] < b[2] and b[1] < a[2] and (kind, a[3]) not in seen:
          seen.add((kind, a[3]))
          found.append(static_finding(GRAPH_ORDER, a[3], dependency=kind, before=f"step {i} {tg.call_name(calls[i])}",
                                after=f"step {j} {tg.call_name(calls[j])}", graphed_positions=[pos[i], pos[j]]))
  return found


def _positions(calls: list, flat: list) -> list[int | None]:
  """Where each compiled call sits in the flattened graphed linear, matched by identity (k-th copy to k-th copy)."""
  at: dict[int, list[int]] = defaultdict(list)
  for k, c in enumerate(flat): at[id(c)].append(k)
  used: dict[int, int] = defaultdict(int)
  pos: list[int | None] = []
  for c in calls:
    n, slots = used[id(c)], at.get(id(c), [])
    pos.append(slots[n] if n < len(slots) else None)
    used[id(c)] += 1
  return pos


def graph_split_preserves_order(compiled: Any, graphed: Any) -> list[Finding]:
  """graph-order: flattening the graph calls gives exactly the compiled linear's calls, in the same order.

  A call lost or invented is reported by step; a reordering is reported as each read-after-write, write-after-read
  or write-after-write dependency it breaks (two calls conflict when they touch overlapping bytes of one buffer, arena
  or input slot and one writes them). Reordering independent calls is harmless and not reported.
  """
  calls, flat = list(compiled.src), tg.flat_calls(graphed)
  if len(calls) == len(flat) and all(a is b for a, b in zip(calls, flat, strict=True)): return []
  pos = _positions(calls, flat)
  found = [static_finding(GRAPH_ORDER, f"step {i} {tg.call_name(c)}", problem="compiled call missing from the graphed linear")
           for i, (c, p) in enumerate(zip(calls, pos, strict=True)) if p is None]
  matched = set(pos)
  found += [static_finding(GRAPH_ORDER, f"graphed position {k} {tg.call_name(c)}", problem="call not in the compiled linear")
            for k, c in enumerate(flat) if k not in matched]
  kept = [i for i, p in enumerate(pos) if p is not None]
  for n, i in enumerate(kept):
    found += [f for j in kept[n + 1:] if pos[j] < pos[i] for f in _broken(i, j, calls, pos)]
  return found


# ---------- 7. prune drops only input-independent calls ----------

def input_dependent(linear: Any, inputs: tuple | list) -> set:
  """Every BUFFER whose contents depend on the explicit inputs: what a call that reads one writes, to a fixed point.

  The fixed point runs over the whole linear, not one pass in order: a call may read state that a later call writes
  from the inputs, and on the next call it reads that state's new value (a dependency across calls)."""
  dependent, calls = set(inputs), [tg.call_memory(c) for c in linear.src]
  while True:
    grown = dependent.union(*(written for written, read in calls if read & dependent))
    if grown == dependent: return dependent
    dependent = grown


def prune_split_sound(whole: Any, once: Any, inputs: tuple | list) -> list[Finding]:
  """prune-split: every call prune runs only once (at capture) touches no memory that depends on the explicit inputs.

  TinyJit documents that with prune=True what does not depend on the inputs runs once and freezes; a one-time call that
  reads input-dependent memory (state a kept call writes from the inputs, say) freezes a value that should change, and
  one that writes such memory stops overwriting it. tinygrad's own split is one pass in call order, so it misses a call
  that reads state before the call that writes it from the inputs."""
  dependent, steps = input_dependent(whole, inputs), {call: i for i, call in enumerate(whole.src)}
  found = []
  for call in once.src:
    written, read = tg.call_memory(call)
    if touched := (written | read) & dependent:
      found.append(static_finding(PRUNE_SPLIT, f"one-time {tg.call_name(call)} at step {steps[call]}", step=steps[call],
                            reads=sorted(buffer_name(b) for b in touched & read), writes=sorted(buffer_name(b) for b in touched & written)))
  return found
