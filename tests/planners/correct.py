"""Correct memory planners, written apart from planfuzz's packer: a fixed-seed campaign must find nothing in any.

Each is a `module:function` plugin (`--planner tests.planners.correct:first_fit`) with the planner contract
`plan(linear, held) -> linear`. They share only what every planner must get right: which buffers may move (none
that is held), their true lifetimes (first to last appearance in the linear) and 256-byte alignment; where the
bytes go is each one's own idea. None keeps tinygrad's copy lane or its hold: that is an advisory, never a finding.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from planner import tg
from planner.lifetimes import Lifetime, lifetimes, plannable

BLOCK = 256
Gap = tuple[int, int | None]  # [start, end) free bytes; end None: open to the arena's end
Pick = Callable[[list[Gap], int], int]


def _rounded(buf: Any, pad: int = 0) -> int: return -(-(tg.buffer_nbytes(buf) + pad) // BLOCK) * BLOCK


def _gaps(busy: Iterable[tuple[int, int]]) -> list[Gap]:
  """The free byte ranges between busy ones, the last open-ended."""
  gaps, at = [], 0
  for lo, hi in sorted(busy):
    if lo > at: gaps.append((at, lo))
    at = max(at, hi)
  return gaps + [(at, None)]


def first_gap(gaps: list[Gap], need: int) -> int:
  return next(lo for lo, hi in gaps if hi is None or hi - lo >= need)


def best_gap(gaps: list[Gap], need: int) -> int:
  """The tightest closed gap that fits, else the open end."""
  closed = [(hi - lo, lo) for lo, hi in gaps if hi is not None and hi - lo >= need]
  return min(closed)[1] if closed else gaps[-1][0]


def _fit(lives: dict[Any, Lifetime], order: list, pick: Pick, pad: int = 0) -> dict[Any, tuple[Any, int]]:
  """(arena key, offset) per buffer: each placed, in `order`, where `pick` says among the bytes free over its lifetime."""
  placed: dict[Any, tuple[Any, int, int]] = {}  # buffer -> (device, offset, size)
  for b in order:
    life, need = lives[b], _rounded(b, pad)
    busy = [(o, o + n) for other, (dev, o, n) in placed.items()
            if dev == b.device and lives[other].first <= life.last and life.first <= lives[other].last]
    placed[b] = (b.device, pick(_gaps(busy), need), need)
  return {b: (dev, off) for b, (dev, off, _) in placed.items()}


def _rewrite(linear: Any, places: dict[Any, tuple[Any, int]]) -> Any:
  """One int8 arena per key, as large as its last byte used; each buffer becomes its slice."""
  sizes: dict[Any, int] = {}
  for b, (key, off) in places.items(): sizes[key] = max(sizes.get(key, 0), off + _rounded(b))
  devices = {key: b.device for b, (key, _) in places.items()}
  arenas = {key: tg.new_buffer(devices[key], n) for key, n in sizes.items()}
  return tg.substitute(linear, {b: tg.arena_slice(arenas[key], off, tg.buffer_nbytes(b), b.dtype) for b, (key, off) in places.items()})


def _plannable(linear: Any, held: set) -> dict[Any, Lifetime]:
  return {b: life for b, life in lifetimes(linear, lambda b: plannable(b, held)).items() if tg.buffer_nbytes(b) > 0}


def _planner(place: Callable[[dict[Any, Lifetime]], dict[Any, tuple[Any, int]]]) -> Callable[[Any, set], Any]:
  def plan(linear: Any, held: set) -> Any:
    lives = _plannable(linear, held)
    return _rewrite(linear, place(lives)) if lives else linear
  return plan


def _no_reuse(lives: dict[Any, Lifetime]) -> dict[Any, tuple[Any, int]]:
  """Every buffer gets bytes of its own: one bump allocator per device."""
  ends: dict[Any, int] = {}
  out = {}
  for b in lives:
    out[b] = (b.device, ends.get(b.device, 0))
    ends[b.device] = out[b][1] + _rounded(b)
  return out


by_first = lambda lives: sorted(lives, key=lambda b: lives[b].first)
no_reuse = _planner(_no_reuse)
arena_per_buffer = _planner(lambda lives: {b: ((b.device, i), 0) for i, b in enumerate(lives)})
first_fit = _planner(lambda lives: _fit(lives, by_first(lives), first_gap))
best_fit = _planner(lambda lives: _fit(lives, by_first(lives), best_gap))
reverse_order = _planner(lambda lives: _fit(lives, by_first(lives)[::-1], first_gap))
padded = _planner(lambda lives: _fit(lives, by_first(lives), first_gap, pad=3 * BLOCK))

CORRECT = ("no_reuse", "arena_per_buffer", "first_fit", "best_fit", "reverse_order", "padded")
