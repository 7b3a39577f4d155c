"""planfuzz's own memory planner: pack every unheld buffer into one int8 arena per (device, lane).

It walks the same open/close events as tinygrad's planner and places buffers with tinygrad's TLSF allocator,
so on tinygrad 0.14.0 it gives the very same offsets and arena sizes; but it returns an explicit MemoryPlan,
and each piece (lifetimes, events, placement, rewrite) is a small function a mutant can replace.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner import tg
from planner.lifetimes import Lifetime, lifetimes, plannable
from planner.memplan import Arena, MemoryPlan, PlannedBuffer

Lane = tuple[str, int]


def round_up(n: int, block: int) -> int: return (n + block - 1) // block * block


def lane_of(buf: Any, life: Lifetime) -> Lane: return (buf.device, int(life.copy))


def events(lives: dict[Any, Lifetime]) -> list[tuple[int, bool, Any]]:
  """(step, opens, buffer), frees before allocations at the same step; ties keep first-appearance order."""
  opens = [(life.first, True, b) for b, life in lives.items()]
  closes = [(life.last + 1 + life.hold, False, b) for b, life in lives.items()]
  return sorted(opens + closes, key=lambda e: (e[0], e[1]))


@dataclass(frozen=True)
class Packing:
  """The knobs of the packer. The defaults are tinygrad 0.14.0's; planner mutants change one each."""
  block: int = tg.ARENA_BLOCK
  size: Callable[[Any], int] = tg.buffer_nbytes  # bytes a buffer takes when placing it
  lifetime: Callable[[Lifetime], Lifetime] = lambda life: life  # the lifetime placement believes
  offset: Callable[[Any, int], int] = lambda buf, offset: offset  # where a buffer goes, given the allocator's offset


DEFAULT_PACKING = Packing()


def place(lives: dict[Any, Lifetime], packing: Packing = DEFAULT_PACKING) -> tuple[dict[Any, int], dict[Lane, int]]:
  """Byte offsets for every buffer and the size of every lane's arena, by a TLSF allocator per lane."""
  block = packing.block
  rounded = {b: round_up(packing.size(b), block) for b in lives}
  capacity = sum(rounded.values()) * 2
  allocators: dict[Lane, Any] = defaultdict(lambda: tg.TLSFAllocator(capacity, block_size=block, lv2_cnt=tg.TLSF_LV2))
  peaks: dict[Lane, int] = defaultdict(int)
  offsets: dict[Any, int] = {}
  allocated: dict[Any, int] = {}
  for _, opens, buf in events({b: packing.lifetime(life) for b, life in lives.items()}):
    lane = lane_of(buf, lives[buf])
    if opens:
      allocated[buf] = allocators[lane].alloc(rounded[buf])
      offsets[buf] = packing.offset(buf, allocated[buf])
      peaks[lane] = max(peaks[lane], offsets[buf] + tg.buffer_nbytes(buf))
    else: allocators[lane].free(allocated[buf])
  return offsets, {lane: round_up(peak, block) for lane, peak in peaks.items()}


def plan_memory(linear: Any, held: set | frozenset, packing: Packing = DEFAULT_PACKING) -> tuple[Any, MemoryPlan]:
  """Plan `linear` keeping `held` buffers where they are; returns the rewritten linear and its MemoryPlan.

  The plan records each buffer's true lifetime in the linear, whatever the packing believed."""
  lives = lifetimes(linear, lambda b: plannable(b, held))
  if tg.memory_planner_off() or not lives: return linear, MemoryPlan((), (), frozenset(held))
  offsets, sizes = place(lives, packing)
  lanes = list(sizes)
  arenas = tuple(Arena(tg.new_buffer(dev, sizes[(dev, lane)]), dev, lane, sizes[(dev, lane)]) for dev, lane in lanes)
  planned = tuple(PlannedBuffer.of(b, lane_of(b, life)[0], int(life.copy), lanes.index(lane_of(b, life)), offsets[b], tg.buffer_nbytes(b),
                                str(b.dtype), life.first, life.last, life.hold) for b, life in lives.items())
  mapping = {p.buffer: tg.arena_slice(arenas[p.arena].buffer, p.offset, p.nbytes, p.buffer.dtype) for p in planned}
  return tg.substitute(linear, mapping), MemoryPlan(planned, arenas, frozenset(held))


def planfuzz_planner(linear: Any, held_bufs: set | None = None) -> Any:
  """planfuzz's planner with memory_plan_rewrite's signature, for use wherever a plain planner is expected."""
  return plan_memory(linear, held_bufs or set())[0]
