"""Genuine tinygrad bugs the fuzzer has found: each with a standalone repro under fuzz/known/ and a one-line mechanism.

A finding that matches a known bug is reported as known (counted in the summary) instead of failing the run, so CI
stays green while the bug is open; fuzz/test_known_bugs.py runs each repro as a strict xfail, so CI turns red the
day tinygrad fixes it and the entry must go. A match needs the oracle's attribution: `capture` means the difference
stays with the memory planner off and with JIT=2, so neither planfuzz's nor tinygrad's planner causes it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from oracle.findings import STALE, Finding

KNOWN_DIR = Path(__file__).parent / "known"


@dataclass(frozen=True)
class KnownBug:
  name: str
  mechanism: str
  repro: Path
  matches: Callable[[Finding], bool]  # the finding's shape, before blame


def _frozen_lazy_escape(f: Finding) -> bool:
  """A tensor left lazy by the capture call that shows the capture call's value on a replay (whatever the blame)."""
  return f.kind == STALE and bool(f.details.get("lazy_at_capture")) and f.details.get("equals_call") == 1


KNOWN_BUGS: tuple[KnownBug, ...] = (
  KnownBug("lazy-escape-frozen-on-read",
           "the first read of a tensor left lazy by the capture call (a .grad, a tensor kept outside the step) realizes "
           "it, or the .contiguous() in its graph, into buffers that replays never write: later reads show the capture "
           "call's value", KNOWN_DIR / "lazy_escape_frozen_on_read.py", _frozen_lazy_escape),
)


def maybe_known(f: Finding) -> bool:
  """Looks like a known bug, before blame: worth the attribution runs that tell."""
  return any(b.matches(f) for b in KNOWN_BUGS)


def known_bug(f: Finding) -> KnownBug | None:
  """The known bug a blamed finding is: it must look like one and stay with the memory planner and graphs off."""
  return next((b for b in KNOWN_BUGS if b.matches(f)), None) if f.attribution == "capture" else None
