"""Genuine tinygrad bugs the fuzzer has found: each with a standalone repro under fuzz/known/ and a one-line mechanism.

A finding that matches a known bug is reported as known (counted in the summary) instead of failing the run, so CI
stays green while the bug is open; fuzz/test_known_bugs.py runs each repro as a strict xfail, so CI turns red the
day tinygrad fixes it and the entry must go. A match needs the oracle's attribution: the finding must look like the
bug and be blamed on the stage the bug lives in (`capture`: it stays with the memory planner off and with JIT=2, so
neither planfuzz's nor tinygrad's planner causes it; `prune`: it goes away without prune, and the prune-split
invariant found the one-time call that depends on the inputs).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracle.findings import STALE, VALUE_KINDS, Finding
from planner import tg

KNOWN_DIR = Path(__file__).parent / "known"
PRUNE_SPLIT = "invariant:prune-split"


@dataclass(frozen=True)
class KnownBug:
  name: str
  mechanism: str
  repro: Path
  suspect: Callable[[Finding], bool]  # before blame: a finding worth the attribution runs that tell
  stage: str  # the attribution a finding of this bug has
  matches: Callable[[Finding], bool]  # after blame, with the stage: the findings this bug explains
  applies: Callable[[Any], bool] = lambda program: True  # the fuzz program (None: not known) and process it can happen in


def _frozen_lazy_escape(f: Finding) -> bool:
  """A tensor left lazy by the capture call that shows the capture call's value on a replay (whatever the blame)."""
  return f.kind == STALE and bool(f.details.get("lazy_at_capture")) and f.details.get("equals_call") == 1


def _stale_value(f: Finding) -> bool:
  """A returned or kept value that shows an earlier call's value, not left lazy by the capture call."""
  return f.kind == STALE and not f.details.get("lazy_at_capture")


KNOWN_BUGS: tuple[KnownBug, ...] = (
  KnownBug("lazy-escape-frozen-on-read",
           "the first read of a tensor left lazy by the capture call (a .grad, a tensor kept outside the step) realizes "
           "it, or the .contiguous() in its graph, into buffers that replays never write: later reads show the capture "
           "call's value", KNOWN_DIR / "lazy_escape_frozen_on_read.py", _frozen_lazy_escape, "capture", _frozen_lazy_escape),
  KnownBug("prune-freezes-state-reader",
           "prune=True walks the captured calls once, in order: a kernel that reads state before the call that writes it "
           "from the inputs is pruned and runs only at capture, though it depends on the previous call's inputs "
           "(PlannedJit's prune stage mirrors tinygrad's, so both show it)",
           KNOWN_DIR / "prune_freezes_state_reader.py", lambda f: f.kind == PRUNE_SPLIT, "prune",
           lambda f: f.kind == PRUNE_SPLIT or f.kind in VALUE_KINDS),
  KnownBug("hcq2-fed-back-output-read-stale",
           "with HCQ2=1 a replay given the JIT's own output back as its input copies it, as it must, but the single 'hcq' "
           "call computes from the previous call's input data instead of the copy",
           KNOWN_DIR / "hcq2_fed_back_output_read_stale.py", _stale_value, "capture", _stale_value,
           lambda program: getattr(program, "feedback", None) is not None and bool(tg.environment_knobs().get("HCQ2"))),
)


def maybe_known(f: Finding, program: Any = None) -> bool:
  """Looks like a known bug, before blame: worth the attribution runs that tell."""
  return any(b.suspect(f) and b.applies(program) for b in KNOWN_BUGS)


def known_bug(f: Finding, program: Any = None) -> KnownBug | None:
  """The known bug a blamed finding is: it must look like one, in a program it can happen in, blamed on its stage."""
  return next((b for b in KNOWN_BUGS if f.attribution == b.stage and b.matches(f) and b.applies(program)), None)
