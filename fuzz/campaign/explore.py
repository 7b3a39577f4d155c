"""A worker's Hypothesis loop: draw and judge programs, and shrink each new bug with Hypothesis's own shrinker.

An example whose headline signature (fuzz/campaign/bugbook.py) this worker has not met yet fails the Hypothesis example, so
Hypothesis shrinks it: a candidate fails too only when it shows the same signature, so the shrunk program is one of
the same bug, never a smaller program of another. Shrinking stops at the per-bug budget (candidates past it pass
without running). A signature another worker of the campaign, or of its CI fleet, claimed first (fuzz/campaign/claims.py)
gets no budget, and one this worker met before costs nothing more than its count. Every program run, candidates
included, is announced before it starts, so the parent can name the program that crashed or hung a worker.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from fuzz.campaign import emulator
from fuzz.campaign.bugbook import signatures
from fuzz.campaign.example import run_example, under_knobs
from fuzz.campaign.examples_db import open_database
from fuzz.campaign.messages import Calling, Exited, Job, Knobs, Message, Result, Retired, ShrinkStep, Started
from fuzz.campaign.outcome import ERROR, Outcome
from fuzz.gen.strategies import knob_settings, programs
from oracle.compare import Verdict, error_text
from oracle.findings import Finding
from oracle.runs import MODES
from oracle.signature import Signature
from oracle.targets import Target
from planner import tg
from planner.ran import jit_calls

RUN_EXAMPLES = 50  # examples per Hypothesis run at most
SLACK = 10  # draws a run may spend on programs already run (each run first tries the simplest program again)


class _Retire(BaseException):
  """End this worker at once, so the parent starts a fresh process for the rest of its share: the emulated device broke
  under it (an emulator rejection, or a device that fails a probe after an example raised: nothing is shrunk on a broken
  device, every candidate would fail), or it passed its limits (fuzz/campaign/limits.py: checked before an example
  starts, so none is lost). A BaseException, so Hypothesis does not take it for a failure to shrink. An example's own
  finding stands, and is confirmed alone in a fresh process like any other."""


class _Found(Exception):
  """Fails the Hypothesis example, so Hypothesis saves it to the database and shrinks it."""


def _found(sig: Signature) -> None:
  """The one place _Found is raised: Hypothesis tells failures apart by where they are raised, and a bug is one."""
  raise _Found(sig.key)


def derive_seed(*parts: Any) -> int:
  """A Hypothesis seed per (campaign seed, worker, restart, run): distinct streams, reproducible from the campaign seed."""
  return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def example_key(program: Any, mode: str, knobs: Any = ()) -> str: return repr((program, mode, knobs))


def worker_outcome(program: Any, target: Target, calls: int, mode: str, strict: bool = False) -> tuple[Outcome, dict | None]:
  """The outcome (findings blamed on a stage, advisories counted as findings under `strict`) and, for a finding, the
  picture of the plan of the very capture it came from; the oracle's own errors are findings."""
  captured: dict[str, Any] = {}
  sink = lambda plan, live: captured.update(plan=plan, live=live)
  try: outcome = run_example(program, target, calls, mode, attribute=True, on_plan=sink, strict=strict)  # blaming reruns only for a finding
  except Exception as e:  # the emulated device broke under the oracle's own reads: the emulator's limit, not a finding
    if (limit := emulator.rejected(e)) is not None: return limit, None
    return Outcome.of(Verdict(findings=[Finding(ERROR, "oracle", None, "check", {"error": error_text(e)})])), None
  if not outcome.findings or "plan" not in captured: return outcome, None
  try:
    from fuzz.campaign.picture import plan_to_json  # needs planfuzz's planner, so a supported tinygrad (tinyjit runs on older)
    return outcome, plan_to_json(captured["plan"](), outcome.findings[0], captured["live"])
  except Exception: return outcome, None  # a picture is a help, never a reason to lose the finding


class Shrinking:
  """The bug this worker is shrinking now: its signature, budget and progress."""

  def __init__(self, sig: Signature, budget: float, claimed: bool = True) -> None:
    self.sig, self.start, self.budget, self.steps, self.claimed = sig, time.perf_counter(), budget, 0, claimed

  def over(self) -> bool: return time.perf_counter() - self.start >= self.budget
  def shows(self, outcome: Outcome) -> Finding | None: return next((f for s, f in signatures(outcome) if s == self.sig), None)
  def seconds(self) -> float: return time.perf_counter() - self.start


class Explorer:
  """One worker's state across its Hypothesis runs: programs run and their outcomes, claims, the bug being shrunk."""

  def __init__(self, job: Job, send: Callable[[Message], None]) -> None:
    self.job, self.send = job, send
    self.claims, self.done = job.claims, 0
    self.seen: set[Signature] = set()  # new signatures this worker has met: each ends one Hypothesis run
    self.outcomes: dict[str, Outcome] = {}  # every program run, so a program drawn again is never run twice
    self.shrinking: Shrinking | None = None
    # the process engine this worker runs (HCQ2=1 or 0, where its campaign sets it): part of every example's knobs, so
    # a finding's repro, confirmation and report say which engine showed it
    self.engine = {k: v for k, v in job.target.context.items() if k in tg.ENVIRONMENT_KNOBS}

  def spent(self) -> bool:
    return self.done >= self.job.examples or (self.job.deadline is not None and time.time() >= self.job.deadline)

  def run(self, program: Any, mode: str, knobs: Knobs) -> Outcome:
    """Judge one program, announced before it starts; report it as an example, or as a shrink step of the bug."""
    job, shrinking = self.job, self.shrinking
    self.send(Started(job.worker, program, mode, knobs, shrinking.sig if shrinking else None))
    t0 = time.perf_counter()
    with jit_calls(lambda j, k: self.send(Calling(job.worker, j, k)), lambda j, k: self.send(Calling(job.worker, j, k, True))):
      outcome, plan = worker_outcome(program, under_knobs(job.target, dict(knobs)), job.calls, mode, job.strict)
    outcome = self.outcomes[example_key(program, mode, knobs)] = outcome.plain()
    if shrinking is None: self.send(Result(job.worker, program, mode, knobs, outcome, time.perf_counter() - t0, plan))
    elif (f := shrinking.shows(outcome)) is not None:
      shrinking.steps += 1
      self.send(ShrinkStep(job.worker, shrinking.sig, program, mode, knobs, f, plan))
    if (why := emulator.unusable_after(outcome, job.replay_mutant)) is not None: raise _Retire(why)
    return outcome

  def example(self, program: Any, mode: str, knobs: dict[str, int]) -> None:
    """Hypothesis's test: fails for a bug no worker claimed yet and, while shrinking it, for each candidate showing it."""
    knobs_t = tuple(sorted((knobs | self.engine).items()))
    key = example_key(program, mode, knobs_t)
    if (shrinking := self.shrinking) is not None:
      outcome = self.outcomes.get(key)
      if outcome is None and (shrinking.over() or key in self.job.skip): return
      if shrinking.shows(outcome or self.run(program, mode, knobs_t)) is not None: _found(shrinking.sig)
      return
    if key in self.outcomes or key in self.job.skip or self.spent(): return
    if self.done and (why := self.job.limits.exceeded(self.done)) is not None: raise _Retire(why)  # a fresh process runs one at least
    outcome = self.run(program, mode, knobs_t)
    self.done += 1
    if (sig := next((s for s, _ in signatures(outcome)[:1] if s.known is None and s not in self.seen), None)) is not None:
      # every first sighting ends the run, so what a worker draws never depends on another worker's timing; only the
      # worker that claims the bug spends shrink budget on it (a budget of 0 shrinks nothing, and Hypothesis still
      # saves the failure to the database)
      self.seen.add(sig)
      claimed = self.claims.take(sig)
      self.shrinking = Shrinking(sig, self.job.shrink_budget if claimed else 0.0, claimed)
      _found(sig)


def explore(job: Job, send: Callable[[Message], None]) -> str | None:
  """Hypothesis runs over `job`'s share, reporting every program before and after it runs; why the worker retired
  early, or None.

  A run ends at a new bug (once shrunk: Hypothesis saves it) or after RUN_EXAMPLES (so a time budget ends within a
  few draws: past the budget, examples are only drawn, in milliseconds, never run). Each run starts again from
  Hypothesis's simplest program, so a program this worker already ran passes uncounted."""
  db = open_database(job.db, job.shared_db)
  modes = st.just(job.mode) if job.mode is not None else st.sampled_from(MODES)
  ex, run_index = Explorer(job, send), 0
  while not ex.spent():
    phases = [Phase.reuse, Phase.generate, Phase.shrink] if job.reuse and run_index == 0 else [Phase.generate, Phase.shrink]
    budget = min(job.examples - ex.done, RUN_EXAMPLES) + SLACK + len(job.skip)
    ex.shrinking = None
    test = given(program=programs(), mode=modes, knobs=knob_settings())(ex.example)
    test = seed(derive_seed(job.seed, job.worker, job.restart, run_index))(test)  # under @settings: on top it would drop the database
    test = settings(database=db, max_examples=budget, phases=phases, deadline=None, derandomize=False, print_blob=False,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False, verbosity=Verbosity.quiet)(test)
    before, retired = ex.done, None
    try: test()
    except _Found: pass
    except _Retire as r: retired = r
    if (shrunk := ex.shrinking) is not None and shrunk.claimed:
      send(ShrinkStep(job.worker, shrunk.sig, done=True, steps=shrunk.steps, seconds=shrunk.seconds()))
    if retired is not None:
      send(Retired(job.worker, str(retired)))
      return str(retired)
    if ex.done == before: break  # Hypothesis had nothing new left to draw
    run_index += 1
  send(Exited(job.worker))
  return None
