"""A worker's Hypothesis loop: draw and judge programs, and shrink each new bug with Hypothesis's own shrinker.

An example whose headline signature (fuzz/campaign/bugbook.py) this worker has not met yet fails the Hypothesis example, so
Hypothesis shrinks it: a candidate fails too only when it shows the same signature, so the shrunk program is one of
the same bug, never a smaller program of another. Shrinking stops at the per-bug budget (candidates past it pass
without running). A signature another worker of the campaign claimed first (a file created with O_EXCL in a
directory they share) gets no budget, and one this worker met before costs nothing more than its count. Every
program run, candidates included, is announced before it starts, so the parent can name the program that crashed
or hung a worker.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fuzz.campaign import emulator
from fuzz.campaign.bugbook import signatures
from oracle.compare import Verdict, error_text, rejection
from oracle.device import EMULATOR, emulator_failure
from oracle.findings import JIT_ERROR, Finding
from oracle.signature import Signature
from oracle.targets import Target

ERROR = "error"
RUN_EXAMPLES = 50  # examples per Hypothesis run at most
SLACK = 10  # draws a run may spend on programs already run (each run first tries the simplest program again)


class _Retire(BaseException):
  """The emulated device broke under this worker (an emulator rejection, or a device that fails a probe after an example
  raised): end the worker at once, so the parent starts a fresh process for the rest of its share, and nothing is
  shrunk on a broken device (every candidate would fail). A BaseException, so Hypothesis does not take it for a failure
  to shrink. The example's own finding stands, and is confirmed alone in a fresh process like any other."""


def raised(verdict: Verdict) -> bool:
  """Whether a run behind `verdict` raised: a rejection, or a finding that is an error."""
  return verdict.rejected is not None or any(f.kind in (JIT_ERROR, ERROR) for f in verdict.findings)


class _Found(Exception):
  """Fails the Hypothesis example, so Hypothesis saves it to the database and shrinks it."""


def _found(sig: Signature) -> None:
  """The one place _Found is raised: Hypothesis tells failures apart by where they are raised, and a bug is one."""
  raise _Found(sig.key)


class Claims:
  """Signatures claimed for shrinking, shared by every worker of a campaign through files in one directory."""

  def __init__(self, where: str | None) -> None: self.where = where

  def take(self, sig: Signature) -> bool:
    """True for the one caller, in any process, that claims `sig` first."""
    if self.where is None: return True
    try: os.close(os.open(Path(self.where) / sig.key, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError: return False
    return True


def derive_seed(*parts: Any) -> int:
  """A Hypothesis seed per (campaign seed, worker, restart, run): distinct streams, reproducible from the campaign seed."""
  return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def example_key(program: Any, mode: str, knobs: Any = ()) -> str: return repr((program, mode, knobs))


def plain(verdict: Verdict) -> Verdict:
  """Findings through JSON, so every detail pickles across the process boundary."""
  through = lambda f: Finding(**json.loads(f.to_json()))
  verdict.findings, verdict.advisories = [through(f) for f in verdict.findings], [through(f) for f in verdict.advisories]
  verdict.known = [(name, through(f)) for name, f in verdict.known]
  return verdict


def judge(program: Any, target: Target, mode: str, calls: int, strict: bool = False) -> tuple[Verdict, dict | None]:
  """The verdict (findings blamed on a stage, advisories counted as findings under `strict`) and, for a finding, the
  picture of the plan of the very capture it came from; the oracle's own errors are findings."""
  from fuzz.campaign.driver import check
  captured: dict[str, Any] = {}
  sink = lambda plan, live: captured.update(plan=plan, live=live)
  try: verdict = check(program, target, mode, calls, attribute=True, on_plan=sink, strict=strict)  # blaming reruns only for a finding
  except Exception as e:  # the emulated device broke under the oracle's own reads: the emulator's limit, not a finding
    if emulator_failure(e): return Verdict(rejected=rejection(e)), None
    return Verdict(findings=[Finding(ERROR, "oracle", None, "check", {"error": error_text(e)})]), None
  if not verdict.findings or "plan" not in captured: return verdict, None
  from fuzz.campaign.picture import plan_to_json
  try: return verdict, plan_to_json(captured["plan"](), verdict.findings[0], captured["live"])
  except Exception: return verdict, None  # a picture is a help, never a reason to lose the finding


class Shrinking:
  """The bug this worker is shrinking now: its signature, budget and progress."""

  def __init__(self, sig: Signature, budget: float, claimed: bool = True) -> None:
    self.sig, self.start, self.budget, self.steps, self.claimed = sig, time.perf_counter(), budget, 0, claimed

  def over(self) -> bool: return time.perf_counter() - self.start >= self.budget
  def shows(self, verdict: Verdict) -> Finding | None: return next((f for s, f in signatures(verdict) if s == self.sig), None)
  def seconds(self) -> float: return time.perf_counter() - self.start


class Explorer:
  """One worker's state across its Hypothesis runs: programs run and their verdicts, claims, the bug being shrunk."""

  def __init__(self, job: Any, send: Callable[[tuple], None]) -> None:
    from fuzz.campaign.driver import under_knobs
    self.job, self.send, self.under_knobs = job, send, under_knobs
    self.claims, self.done = Claims(job.claims), 0
    self.seen: set[Signature] = set()  # new signatures this worker has met: each ends one Hypothesis run
    self.verdicts: dict[str, Verdict] = {}  # every program run, so a program drawn again is never run twice
    self.shrinking: Shrinking | None = None

  def spent(self) -> bool:
    return self.done >= self.job.examples or (self.job.deadline is not None and time.time() >= self.job.deadline)

  def run(self, program: Any, mode: str, knobs: tuple[tuple[str, int], ...]) -> Verdict:
    """Judge one program, announced before it starts; report it as an example, or as a shrink step of the bug."""
    job, shrinking = self.job, self.shrinking
    self.send(("start", job.worker, program, mode, knobs, shrinking.sig if shrinking else None))
    t0 = time.perf_counter()
    verdict, plan = judge(program, self.under_knobs(job.target, dict(knobs)), mode, job.calls, job.strict)
    self.verdicts[example_key(program, mode, knobs)] = plain(verdict)
    if shrinking is None: self.send(("done", job.worker, program, mode, knobs, verdict, time.perf_counter() - t0, plan))
    elif (f := shrinking.shows(verdict)) is not None:
      shrinking.steps += 1
      self.send(("shrunk", job.worker, shrinking.sig, program, mode, knobs, f, plan))
    if (verdict.rejected or "").startswith(EMULATOR) or (raised(verdict) and emulator.device_broken()): raise _Retire
    return verdict

  def example(self, program: Any, mode: str, knobs: dict[str, int]) -> None:
    """Hypothesis's test: fails for a bug no worker claimed yet and, while shrinking it, for each candidate showing it."""
    knobs_t = tuple(sorted(knobs.items()))
    key = example_key(program, mode, knobs_t)
    if (shrinking := self.shrinking) is not None:
      verdict = self.verdicts.get(key)
      if verdict is None and (shrinking.over() or key in self.job.skip): return
      if shrinking.shows(verdict or self.run(program, mode, knobs_t)) is not None: _found(shrinking.sig)
      return
    if key in self.verdicts or key in self.job.skip or self.spent(): return
    verdict = self.run(program, mode, knobs_t)
    self.done += 1
    if (sig := next((s for s, _ in signatures(verdict)[:1] if s.known is None and s not in self.seen), None)) is not None:
      # every first sighting ends the run, so what a worker draws never depends on another worker's timing; only the
      # worker that claims the bug spends shrink budget on it (a budget of 0 shrinks nothing, and Hypothesis still
      # saves the failure to the database)
      self.seen.add(sig)
      claimed = self.claims.take(sig)
      self.shrinking = Shrinking(sig, self.job.shrink_budget if claimed else 0.0, claimed)
      _found(sig)


def explore(job: Any, send: Callable[[tuple], None]) -> None:
  """Hypothesis runs over `job`'s share (a fuzz.campaign.workers.Job), reporting every program before and after it runs.

  A run ends at a new bug (once shrunk: Hypothesis saves it) or after RUN_EXAMPLES (so a time budget ends within a
  few draws: past the budget, examples are only drawn, in milliseconds, never run). Each run starts again from
  Hypothesis's simplest program, so a program this worker already ran passes uncounted."""
  from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
  from hypothesis import strategies as st

  from fuzz.campaign.examples_db import open_database
  from fuzz.gen.strategies import knob_settings, programs
  from oracle.runs import MODES
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
    before, retired = ex.done, False
    try: test()
    except _Found: pass
    except _Retire: retired = True
    if (shrunk := ex.shrinking) is not None and shrunk.claimed:
      send(("shrink-end", job.worker, shrunk.sig, shrunk.steps, shrunk.seconds()))
    if retired:
      send(("retire", job.worker))
      return
    if ex.done == before: break  # Hypothesis had nothing new left to draw
    run_index += 1
