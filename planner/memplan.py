"""MemoryPlan: an explicit record of where a planner put every buffer, and how to rebuild it from any planned linear.

The record is the common language of the planner and the oracle: planfuzz's own planner returns one, and
`plan_from_linear` rebuilds one from the output of any planner (tinygrad's own TinyJit included), so the
static invariants check real plans with the same code.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from planner import tg

tg.require()  # the planner needs tinygrad's internals: one clear error on a tinygrad without them

COMPUTE_LANE, COPY_LANE = 0, 1


def devices(device: str | tuple[str, ...]) -> tuple[str, ...]:
  """A device as a tuple, whether one (`"CPU"`) or a multi-device buffer's (`("CPU", "CPU:1")`): layouts sort them."""
  return (device,) if isinstance(device, str) else tuple(device)


@dataclass(frozen=True)
class Placement:
  """Where one planned buffer went, as plain data with fields by name (no UOps): what crosses processes for the census,
  what a plan picture draws and what its JSON holds. Steps index the planned linear's calls: it is used over
  [first, last]; a buffer a COPY touches is owed `hold` more steps by tinygrad's copy-lane contract (an advisory check,
  not a correctness one)."""
  name: str
  device: str | tuple[str, ...]
  lane: int
  arena: int
  offset: int
  nbytes: int
  dtype: str
  first: int
  last: int
  hold: int = 0

  @property
  def end(self) -> int: return self.last + self.hold

  def overlaps(self, other: Placement) -> bool:
    """Shares bytes of one arena with `other` at some step: what the overlap invariant forbids."""
    return (self.arena == other.arena and self.name != other.name and self.nbytes > 0 and other.nbytes > 0
            and self.offset < other.offset + other.nbytes and other.offset < self.offset + self.nbytes
            and self.first <= other.end and other.first <= self.end)


@dataclass(frozen=True)
class PlannedBuffer(Placement):
  """One buffer moved into an arena: its place, and the BUFFER UOp itself, which lives only in this process."""
  buffer: Any = None

  @classmethod
  def of(cls, buffer: Any, device: str | tuple[str, ...], lane: int, arena: int, offset: int, nbytes: int, dtype: str, first: int,
         last: int, hold: int = 0) -> PlannedBuffer:
    return cls(buffer_name(buffer), devices(device) if not isinstance(device, str) else device, lane, arena, offset, nbytes, dtype,
               first, last, hold, buffer)

  def layout(self) -> tuple:
    return (devices(self.device), self.lane, self.offset, self.nbytes, self.dtype, self.first, self.last, self.hold)

  def placement(self) -> Placement:
    """This buffer's place as plain data: the one form a plan takes outside this process."""
    return Placement(**{f.name: getattr(self, f.name) for f in fields(Placement)})


@dataclass(frozen=True)
class Arena:
  """One int8 arena per (device, lane)."""
  buffer: Any
  device: str | tuple[str, ...]
  lane: int
  nbytes: int


@dataclass(frozen=True)
class MemoryPlan:
  buffers: tuple[PlannedBuffer, ...]
  arenas: tuple[Arena, ...]
  held: frozenset

  def layout(self) -> tuple:
    """A planner-independent, comparable form: arena sizes and every buffer's place and lifetime."""
    return (tuple(sorted((devices(a.device), a.lane, a.nbytes) for a in self.arenas)), tuple(sorted(b.layout() for b in self.buffers)))

  def by_buffer(self) -> dict[Any, PlannedBuffer]: return {b.buffer: b for b in self.buffers}

  def placements(self) -> tuple[Placement, ...]:
    """Every planned buffer's place as plain data: for the fuzzer's census and the plan picture."""
    return tuple(b.placement() for b in self.buffers)



def buffer_name(u: Any) -> str:
  """A short stable name for a BUFFER UOp (its unique number), or for an arena slice."""
  if u.op is tg.Ops.BUFFER: return f"buf{u.arg.slot}"
  if (s := tg.parse_arena_slice(u)) is not None: return f"arena{s[0].arg.slot}[{s[1]}:{s[1] + s[2]}]"
  return str(u.op)


def _arg_pairs(before: Any, after: Any) -> Iterator[tuple[Any, Any]]:
  """(original, planned) pairs of one call argument: a planner substitutes BUFFERs, so the two trees align."""
  if tg.parse_arena_slice(after) is not None:
    yield before, after
  elif after.op in (tg.Ops.MSTACK, tg.Ops.MSELECT) and len(after.src) == len(before.src):
    for b, a in zip(before.src, after.src, strict=True): yield from _arg_pairs(b, a)


def _slices_by_step(planned: Any, before: Any | None) -> list[list[tuple[Any, Any]]]:
  steps = []
  for i, call in enumerate(planned.src):
    orig_args = tg.call_args(before.src[i]) if before is not None else None
    pairs = []
    for j, arg in enumerate(tg.call_args(call)):
      pairs += list(_arg_pairs(orig_args[j] if orig_args is not None else arg, arg))
    steps.append(pairs)
  return steps


def plan_from_linear(planned: Any, before: Any | None = None, held: frozenset = frozenset()) -> MemoryPlan:
  """Rebuild the MemoryPlan a planner produced from its output linear.

  With `before` (the linear the planner was given) each planned buffer is named by its original BUFFER;
  without it, by its arena slice (two buffers a planner gave the very same slice then read as one).
  """
  if before is not None and len(before.src) != len(planned.src):
    raise ValueError("plan_from_linear: the linear before planning has a different number of calls")
  first: dict[Any, int] = {}
  last: dict[Any, int] = {}
  where: dict[Any, tuple[Any, int, int, Any]] = {}
  copy_arenas, copied = set(), set()
  for i, pairs in enumerate(_slices_by_step(planned, before)):
    for orig, sl in pairs:
      arena, off, n = tg.parse_arena_slice(sl)
      first.setdefault(orig, i)
      last[orig] = i
      where[orig] = (arena, off, n, sl.dtype)
      if tg.is_copy(planned.src[i]):
        copy_arenas.add(arena)
        copied.add(orig)
  arena_uops = list(dict.fromkeys(w[0] for w in where.values()))
  arenas = tuple(Arena(a, a.device, COPY_LANE if a in copy_arenas else COMPUTE_LANE, tg.buffer_nbytes(a)) for a in arena_uops)
  index = {a: k for k, a in enumerate(arena_uops)}
  bufs = []
  for orig, (arena, off, n, dtype) in where.items():
    lane = arenas[index[arena]].lane
    hold = last[orig] - first[orig] + 1 if orig in copied else 0  # the hold tinygrad's contract asks of a copied buffer
    bufs.append(PlannedBuffer.of(orig, arenas[index[arena]].device, lane, index[arena], off, n, str(dtype), first[orig], last[orig], hold))
  return MemoryPlan(tuple(bufs), arenas, frozenset(held))
