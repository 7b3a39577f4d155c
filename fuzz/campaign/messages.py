"""What the campaign's parent and its worker processes say to each other: a worker's job, and the messages it sends.

Both sides import this one module, so a field added here reaches both, by name. The types of the fields are imported
for type checkers only: the parent imports this before any tinygrad (`planfuzz --help` stays instant).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fuzz.campaign.claims import ClaimBook
from fuzz.campaign.limits import Limits

if TYPE_CHECKING:
  from fuzz.campaign.outcome import Outcome
  from oracle.findings import Finding
  from oracle.signature import Signature
  from oracle.targets import Target

DEFAULT_SHRINK_BUDGET = 60.0  # seconds of shrinking per distinct bug, in the worker that found it
Knobs = tuple[tuple[str, int], ...]  # an example's drawn tinygrad knobs, sorted by name


@dataclass(frozen=True)
class Job:
  """One worker's share; `reuse` lets it replay the database first (one worker does, so none replays it twice)."""
  target: Target
  mode: str | None  # None: drawn per example
  calls: int
  examples: int
  deadline: float | None  # time.time() after which no new example starts
  seed: int
  worker: int
  db: str
  shared_db: str | None = None
  reuse: bool = True
  restart: int = 0
  skip: frozenset[str] = frozenset()  # programs that crashed or hung an earlier worker of this share: never rerun
  claims: ClaimBook = ClaimBook(None)  # where workers claim the bugs they shrink (default: this worker alone)
  shrink_budget: float = DEFAULT_SHRINK_BUDGET
  strict: bool = False  # advisories count as findings
  replay_mutant: str | None = None  # a fault planted in a replay engine for the worker's life (planner/engines/)
  env: tuple[tuple[str, str | None], ...] = ()  # the worker process's environment changes (None: unset): its engine
  limits: Limits = Limits()  # past them, this process retires between examples and a fresh one carries on


@dataclass(frozen=True)
class Started:
  """Sent before a program runs, so the parent can name the program that crashed or hung the worker. `shrinking`: the
  bug this program is a shrink candidate of."""
  worker: int
  program: Any
  mode: str
  knobs: Knobs
  shrinking: Signature | None = None


@dataclass
class Result:
  """One example as the parent sees it; `program` is None only when a worker died outside any example. `shrinking`:
  the signature a worker was shrinking when this program crashed or hung it."""
  worker: int
  program: Any
  mode: str
  knobs: Knobs
  outcome: Outcome
  seconds: float
  plan: dict | None = None  # the picture of the plan of the capture a finding came from (fuzz/campaign/picture.py)
  shrinking: Signature | None = None


@dataclass
class ShrinkStep:
  """A smaller program that still shows the bug being shrunk (`done` False), or the end of its shrinking."""
  worker: int
  signature: Signature
  program: Any = None
  mode: str = ""
  knobs: Knobs = ()
  finding: Finding | None = None
  plan: dict | None = None
  done: bool = False
  steps: int = 0
  seconds: float = 0.0


@dataclass(frozen=True)
class Calling:
  """Sent as one JIT call of the example starts (`done` False) and as it ends: the parent bounds each call
  (fuzz/campaign/hangs.py)."""
  worker: int
  jit: int
  call: int
  done: bool = False


@dataclass(frozen=True)
class Retired:
  """The worker stops before its share is spent (`why`): a fresh process takes the rest of it."""
  worker: int
  why: str


@dataclass(frozen=True)
class Exited:
  """The worker spent its share and exits."""
  worker: int


Event = Result | ShrinkStep | Retired  # what the parent hands on to triage
Message = Started | Calling | Result | ShrinkStep | Retired | Exited
