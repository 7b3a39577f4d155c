"""Invariants 1-4 of a memory plan, with the copy-lane advisory: what any planner's output must satisfy, whoever made it.

Each check returns `Finding`s of kind `invariant:<name>` (call None, phase "static"); an empty list means it holds.
The checks take a MemoryPlan, so a plan from planfuzz's planner and one rebuilt from any planner's output by
`plan_from_linear` (tinygrad's own TinyJit included) go through the same code.

An arena slice is keyed by (arena BUFFER, byte offset, byte size, dtype), read off the linear by `tg.parse_arena_slice`.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from tinygrad import Tensor

from oracle.findings import Finding
from planner import tg
from planner.memplan import MemoryPlan, PlannedBuffer, buffer_name

LIVE_PLANNED, OVERLAP, BOUNDS = "invariant:live-planned", "invariant:overlap", "invariant:bounds"
READ_BEFORE_WRITE = "invariant:read-before-write"
COPY_LANE = "advisory:copy-lane"  # an advisory: a deviation from tinygrad's contract that computes the same values here

SliceKey = tuple[Any, int, int, str]


def static_finding(kind: str, subject: str, **details: Any) -> Finding: return Finding(kind, subject, None, "static", details)


# ---------- slices, calls and names ----------

def slice_key(u: Any) -> SliceKey | None:
  """(arena, offset, nbytes, dtype) when u is an arena slice, else None."""
  if (s := tg.parse_arena_slice(u)) is None: return None
  return s[0], s[1], s[2], str(u.dtype)


def _arg_slice_keys(arg: Any) -> list[SliceKey]:
  """The arena slices one call argument names, through MSTACK/MSELECT for multi-device buffers."""
  if (key := slice_key(arg)) is not None: return [key]
  if arg.op in (tg.Ops.MSTACK, tg.Ops.MSELECT): return [k for s in arg.src for k in _arg_slice_keys(s)]
  return []


def planned_key(plan: MemoryPlan, p: PlannedBuffer) -> SliceKey:
  """The slice a plan record says its buffer became."""
  return plan.arenas[p.arena].buffer, p.offset, p.nbytes, p.dtype


def slice_name(key: SliceKey) -> str: return f"{buffer_name(key[0])}[{key[1]}:{key[1] + key[2]}]"
def _bytes(p: PlannedBuffer) -> str: return f"[{p.offset}, {p.offset + p.nbytes})"
def _steps(p: PlannedBuffer) -> str: return f"[{p.first}, {p.last}]"
def _place(p: PlannedBuffer) -> str: return f"{p.name} in arena {p.arena} bytes {_bytes(p)} steps {_steps(p)}"
def _arena_ok(plan: MemoryPlan, p: PlannedBuffer) -> bool: return 0 <= p.arena < len(plan.arenas)


# ---------- 1. live tensors ----------

def unnamed_live_tensors(named: Mapping[str, Any]) -> list[tuple[str, Tensor]]:
  """Every live Tensor not among `named`, named by shape and dtype: lazy state the program kept where no path points.

  With tinygrad 0.14.0's hold policy this adds no finding to a correct program: every tensor alive at lowering is held,
  and a tensor made later can reach a capture-time buffer only through one of those.
  """
  seen = {id(t) for t in named.values()}
  return [(f"live tensor {_shape_text(t)} {t.dtype.name}", t) for t in tg.live_tensors() if id(t) not in seen]


def _shape_text(t: Tensor) -> str:
  """A live tensor may be the wreck of a failed op (a broadcast that raised): its shape then raises too."""
  try: return str(tuple(t.shape))
  except (IndexError, RuntimeError, ValueError): return "(no shape)"


def live_buffer_planned(plan: MemoryPlan, live: Mapping[str, Tensor | None], unnamed: bool = True) -> list[Finding]:
  """live-planned: no BUFFER a live tensor's graph reaches is planned into an arena.

  Each replay rewrites the arena, so a lazy tensor reading such a buffer (a `.grad` left by backward(), #16571) sees
  another buffer's bytes. `live` maps observable path -> Tensor (None values are skipped); with `unnamed`, every other
  live Tensor is checked too (see `unnamed_live_tensors`). One finding per tensor, listing the planned buffers it reaches.
  """
  where = plan.by_buffer()
  tensors = [(path, t) for path, t in live.items() if t is not None] + (unnamed_live_tensors(live) if unnamed else [])
  found = []
  for path, t in tensors:
    hit = sorted((where[b] for b in tg.tensor_buffers(t) if b in where), key=lambda p: (p.arena, p.offset))
    if hit: found.append(static_finding(LIVE_PLANNED, path, buffers=[p.name for p in hit], planned=[_place(p) for p in hit]))
  return found


# ---------- 2. overlap ----------

def _overlap(a: PlannedBuffer, b: PlannedBuffer, kind: str = OVERLAP, end: Any = lambda p: p.last) -> Finding:
  """Blame the buffer that opens later: it was placed on bytes still in use."""
  early, late = sorted((a, b), key=lambda p: (p.first, p.offset))
  shared_bytes = f"[{max(a.offset, b.offset)}, {min(a.offset + a.nbytes, b.offset + b.nbytes)})"
  return static_finding(kind, late.name, other=early.name, arena=late.arena, bytes=_bytes(late), other_bytes=_bytes(early),
                  steps=f"[{late.first}, {end(late)}]", other_steps=f"[{early.first}, {end(early)}]", shared_bytes=shared_bytes,
                  shared_steps=f"[{max(a.first, b.first)}, {min(end(a), end(b))}]")


def _sharing_pairs(plan: MemoryPlan) -> list[tuple[PlannedBuffer, PlannedBuffer]]:
  """Every pair of distinct buffers of one arena whose bytes intersect: per arena, a sweep in offset order compares
  each buffer only with those whose bytes reach it. Two records of the same buffer are not a pair."""
  by_arena: dict[int, list[PlannedBuffer]] = defaultdict(list)
  for p in plan.buffers: by_arena[p.arena].append(p)
  pairs = []
  for bufs in by_arena.values():
    active: list[PlannedBuffer] = []
    for p in sorted((b for b in bufs if b.nbytes > 0), key=lambda b: (b.offset, b.first)):
      active = [a for a in active if a.offset + a.nbytes > p.offset]
      pairs += [(a, p) for a in active if a.buffer is not p.buffer]
      active.append(p)
  return pairs


def overlapping_lifetimes(plan: MemoryPlan) -> list[Finding]:
  """overlap: two buffers of one arena that share bytes are never both in use at one step.

  A buffer is in use over its true lifetime, [first, last]: its first and last appearance in the linear. tinygrad's
  copy-lane hold is not part of it (see `copy_lane_contract`): the linear runs in order, and tinygrad's graph runners
  order accesses that overlap in bytes, so bytes free after their last use are sound to reuse on the facts known."""
  return [_overlap(a, b) for a, b in _sharing_pairs(plan) if a.first <= b.last and b.first <= a.last]


# ---------- advisory: tinygrad's copy-lane contract ----------

def copy_lane_contract(plan: MemoryPlan) -> list[Finding]:
  """copy-lane (advisory): tinygrad keeps every buffer a COPY touches in an arena of its own per device (the copy lane)
  and reserves its bytes for as long again as it lived (the hold), so a copy never waits on later compute or the other
  way round. A planner that breaks this computes the same values here (the overlap invariant judges true lifetimes);
  on a GPU, whose copy queues run asynchronously beside compute, it trades that independence for added ordering. A
  finding is an advisory: reported, and failing a run only under --strict."""
  found = []
  for k in {p.arena for p in plan.buffers if p.hold}:
    compute = sorted(p.name for p in plan.buffers if p.arena == k and not p.hold)
    if compute: found.append(static_finding(COPY_LANE, f"arena {k}", problem="copied and compute buffers share one arena",
                                      compute=compute[:5], asynchronous_devices_only=True))
  held_on = [(a, b) for a, b in _sharing_pairs(plan) if (a.hold or b.hold) and a.first <= b.end and b.first <= a.end
             and not (a.first <= b.last and b.first <= a.last)]
  return found + [_overlap(a, b, COPY_LANE, lambda p: p.end) for a, b in held_on]


# ---------- 3. bounds ----------

def _record_problems(plan: MemoryPlan, p: PlannedBuffer) -> list[str]:
  arena = plan.arenas[p.arena]
  problems = []
  if p.offset < 0 or p.nbytes < 0 or p.offset + p.nbytes > arena.nbytes:
    problems.append(f"bytes {_bytes(p)} outside arena {p.arena} of {arena.nbytes} bytes")
  if tg.is_buffer(p.buffer):
    if p.nbytes != (n := tg.buffer_nbytes(p.buffer)): problems.append(f"slice of {p.nbytes} bytes for a buffer of {n}")
    if p.dtype != str(p.buffer.dtype): problems.append(f"slice dtype {p.dtype} for a buffer of {p.buffer.dtype}")
    if p.offset % (size := p.buffer.dtype.itemsize): problems.append(f"offset {p.offset} not aligned to its {size}-byte dtype")
  return problems


def _records_in_bounds(plan: MemoryPlan) -> list[Finding]:
  found = [static_finding(BOUNDS, buffer_name(a.buffer), problems=[f"arena {k} recorded as {a.nbytes} bytes, its buffer has {n}"])
           for k, a in enumerate(plan.arenas) if a.nbytes != (n := tg.buffer_nbytes(a.buffer))]
  for p in plan.buffers:
    problems = _record_problems(plan, p) if _arena_ok(plan, p) else [f"arena {p.arena} but the plan has {len(plan.arenas)}"]
    if problems: found.append(static_finding(BOUNDS, p.name, problems=problems, arena=p.arena, bytes=_bytes(p), steps=_steps(p)))
  return found


def _linear_matches_plan(plan: MemoryPlan, planned_linear: Any) -> list[Finding]:
  """Every arena slice the linear uses is a plan record's slice, used within that record's [first, last]."""
  owners: dict[SliceKey, list[PlannedBuffer]] = defaultdict(list)
  for p in plan.buffers:
    if _arena_ok(plan, p): owners[planned_key(plan, p)].append(p)
  arenas = {a.buffer for a in plan.arenas}
  stray: dict[SliceKey, list[int]] = defaultdict(list)
  for step, call in enumerate(planned_linear.src):
    for key in (k for arg in tg.call_args(call) for k in _arg_slice_keys(arg)):
      if key[0] not in arenas and key[0] in plan.held: continue  # a held int8 buffer viewed by the program, not an arena
      if not any(p.first <= step <= p.last for p in owners.get(key, [])): stray[key].append(step)
  return [static_finding(BOUNDS, slice_name(key), steps=steps, arena_in_plan=key[0] in arenas, dtype=key[3],
                   records=[_place(p) for p in owners.get(key, [])]) for key, steps in stray.items()]


def slices_in_bounds(plan: MemoryPlan, planned_linear: Any) -> list[Finding]:
  """bounds: every record's slice lies inside its arena and matches its buffer's size and dtype, every arena records its
  buffer's real size, and every arena slice in the planned linear belongs to a record live at that step.

  Slices of an int8 BUFFER that is not one of the plan's arenas are reported unless the buffer is held (a program's own
  int8 buffer bitcast to another dtype looks like a slice).
  """
  return _records_in_bounds(plan) + _linear_matches_plan(plan, planned_linear)


# ---------- 4. first access is a write ----------

def _first_access_problem(plan: MemoryPlan, p: PlannedBuffer, planned_linear: Any) -> tuple[str, dict] | None:
  call = planned_linear.src[p.first]
  key = planned_key(plan, p)
  idx = [k for k, arg in enumerate(tg.call_args(call)) if key in _arg_slice_keys(arg)]
  written, read = tg.call_effects(call)
  where = {"step": p.first, "call": tg.call_name(call), "args": idx, "written": list(written), "read": list(read)}
  if not idx: return "its slice is not an argument of its first step", where
  if not written and not read: return None  # a call whose effects tinygrad does not describe: nothing to check
  if any(k in read for k in idx):
    return ("read and written at its first step (in-place update of uninitialized memory)" if any(k in written for k in idx)
            else "read before any write"), where
  if not any(k in written for k in idx): return "not written at its first step", where
  return None


def first_access_writes(plan: MemoryPlan, planned_linear: Any) -> list[Finding]:
  """read-before-write: at a planned buffer's first step, the call writes its slice and does not read it.

  An arena slice holds whatever the previous occupant left, so a first read sees garbage. The record's slice is found
  among the call's arguments by (arena, offset, nbytes, dtype), which works for planfuzz's plans and rebuilt ones alike;
  calls whose effects are unknown (a custom function other than encdec) are not judged. A program that reads
  `Tensor.empty` memory before writing it is flagged too: it reads uninitialized memory with or without a planner.
  """
  found = []
  for p in plan.buffers:
    if not (_arena_ok(plan, p) and 0 <= p.first < len(planned_linear.src)):
      found.append(static_finding(READ_BEFORE_WRITE, p.name, problem=f"first step {p.first} or arena {p.arena} is not in the plan"))
    elif (problem := _first_access_problem(plan, p, planned_linear)) is not None:
      found.append(static_finding(READ_BEFORE_WRITE, p.name, problem=problem[0], slice=slice_name(planned_key(plan, p)), **problem[1]))
  return found
