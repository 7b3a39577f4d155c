"""A campaign across long-lived worker processes, each running its own share of examples under Hypothesis.

Why processes that live: a new process pays 1-2 s before its first kernel and recompiles every kernel, so a
worker runs many examples and reuses what it compiled. Why processes at all: a planner under test can crash or
hang the process that runs it; the parent only watches, so a segfault, abort or hang loses one example, which
becomes a `crash` or `hang` finding with its repro script, and a fresh worker carries on with the rest.

Each worker runs Hypothesis with an example database (fuzz/examples_db.py), so a failure is saved and replayed
first by the next campaign using that database. A finding ends one Hypothesis run (that is how Hypothesis saves
it); the worker then starts the next run with the next seed, until its share or the time budget is spent.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import multiprocessing.connection
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from oracle.compare import Verdict, error_text
from oracle.findings import Finding
from oracle.targets import Target

CRASH, HANG, ERROR = "crash", "hang", "error"
POLL_S = 0.2
RUN_EXAMPLES = 50  # examples per Hypothesis run at most
SLACK = 10  # draws a run may spend on programs already run (each run first tries the simplest program again)


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


@dataclass
class Result:
  """One example as the parent sees it; `program` is None only when a worker died outside any example."""
  worker: int
  program: Any
  mode: str
  verdict: Verdict
  seconds: float
  plan: dict | None = None


class _Found(Exception):
  """Fails the Hypothesis example, so Hypothesis saves it to the database."""


def derive_seed(*parts: Any) -> int:
  """A Hypothesis seed per (campaign seed, worker, restart, run): distinct streams, reproducible from the campaign seed."""
  return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def example_key(program: Any, mode: str) -> str: return repr((program, mode))


def _plain(verdict: Verdict) -> Verdict:
  """Findings through JSON, so every detail pickles across the process boundary."""
  verdict.findings = [Finding(**json.loads(f.to_json())) for f in verdict.findings]
  return verdict


def _judge(program: Any, target: Target, mode: str, calls: int) -> tuple[Verdict, dict | None]:
  """The verdict (findings blamed on a stage) and, for a finding, the picture of the plan of the very capture it came
  from (the attributed run's); the oracle's own errors are findings."""
  from fuzz.driver import check
  captured: dict[str, Any] = {}
  sink = lambda plan, live: captured.update(plan=plan, live=live)
  try: verdict = check(program, target, mode, calls, attribute=True, on_plan=sink)  # blaming costs reruns only for a finding
  except Exception as e:
    return Verdict(findings=[Finding(ERROR, "oracle", None, "check", {"error": error_text(e)})]), None
  if not verdict.findings or "plan" not in captured: return verdict, None
  from fuzz.picture import plan_to_json
  try: return verdict, plan_to_json(captured["plan"](), verdict.findings[0], captured["live"])
  except Exception: return verdict, None  # a picture is a help, never a reason to lose the finding


def explore(job: Job, send: Callable[[tuple], None]) -> None:
  """Hypothesis runs over `job`'s share, reporting ('start', ...) before and ('done', ...) after every example.

  A run ends at a finding (so Hypothesis saves it) or after RUN_EXAMPLES (so a time budget ends within a few draws:
  past the budget, examples are only drawn, in milliseconds, never run). Each run starts again from Hypothesis's
  simplest program, so a program this worker already ran passes uncounted."""
  from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
  from hypothesis import strategies as st

  from fuzz.driver import under_knobs
  from fuzz.examples_db import open_database
  from fuzz.strategies import knob_settings, programs
  from oracle.runs import MODES
  db = open_database(job.db, job.shared_db)
  modes = st.just(job.mode) if job.mode is not None else st.sampled_from(MODES)
  done, run_index = 0, 0
  verdicts: dict[str, Verdict] = {}  # every program run, for Hypothesis's final replay of a failing one
  failing: set[str] = set()  # the current run's failure: the one program Hypothesis replays at its end
  spent = lambda: done >= job.examples or (job.deadline is not None and time.time() >= job.deadline)
  while not spent():
    phases = [Phase.reuse, Phase.generate] if job.reuse and run_index == 0 else [Phase.generate]
    failing.clear()

    budget = min(job.examples - done, RUN_EXAMPLES) + SLACK + len(job.skip)

    @settings(database=db, max_examples=budget, phases=phases, deadline=None, derandomize=False, print_blob=False,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False, verbosity=Verbosity.quiet)
    @seed(derive_seed(job.seed, job.worker, job.restart, run_index))  # under @settings: @seed on top would drop the database
    @given(program=programs(), mode=modes, knobs=knob_settings())
    def example(program: Any, mode: str, knobs: dict[str, int]) -> None:
      nonlocal done
      key = example_key(program, mode)
      if key in failing: raise _Found(verdicts[key].findings[0].message)
      if key in verdicts or key in job.skip or spent(): return
      send(("start", job.worker, program, mode))
      t0 = time.perf_counter()
      verdict, plan = _judge(program, under_knobs(job.target, knobs), mode, job.calls)
      verdicts[key], done = verdict, done + 1
      send(("done", job.worker, program, mode, _plain(verdict), time.perf_counter() - t0, plan))
      if verdict.findings:
        failing.add(key)
        raise _Found(verdict.findings[0].message)

    before = done
    try: example()
    except _Found: pass
    if done == before: break  # Hypothesis had nothing new left to draw
    run_index += 1


def _worker(job: Job, conn: Any) -> None:
  """A worker's main: each message is written before the example starts (a Pipe send is synchronous), so an abort
  in the middle of an example still leaves its 'start' for the parent to read."""
  explore(job, conn.send)
  conn.send(("exit", job.worker))
  conn.close()


def _death(exitcode: int | None) -> str:
  if exitcode is not None and exitcode < 0:
    try: return f"killed by {signal.Signals(-exitcode).name}"
    except ValueError: return f"killed by signal {-exitcode}"
  return f"exited with status {exitcode}"


def shares(examples: int, workers: int) -> list[int]:
  return [examples // workers + (i < examples % workers) for i in range(workers)]


class _Slot:
  """One worker process, its pipe, and the example it is running now."""

  def __init__(self, ctx: Any, job: Job) -> None:
    self.job, self.done, self.finished = job, 0, False
    self.pending: tuple | None = None  # (program, mode, perf_counter at start)
    self.conn, child = ctx.Pipe(duplex=False)
    self.proc = ctx.Process(target=_worker, args=(job, child), daemon=True, name=f"planfuzz-worker-{job.worker}")
    self.proc.start()
    child.close()

  def read(self, on_result: Callable[[Result], None]) -> None:
    """Every message waiting on the pipe."""
    try:
      while not self.finished and self.conn.poll():
        msg = self.conn.recv()
        if msg[0] == "start": self.pending = (msg[2], msg[3], time.perf_counter())
        elif msg[0] == "done":
          self.pending, self.done = None, self.done + 1
          on_result(Result(*msg[1:]))
        else: self.finished = True
    except (EOFError, OSError): pass  # the worker is gone: `watch` says how

  def watch(self, ctx: Any, on_result: Callable[[Result], None], timeout: float) -> _Slot:
    """This slot, or its replacement when the worker died or overran `timeout` on one example (reported as a finding)."""
    hung = self.pending is not None and time.perf_counter() - self.pending[2] > timeout
    if self.finished or (self.proc.is_alive() and not hung): return self
    if hung: self.proc.kill()
    self.proc.join(5)
    self.read(on_result)
    if self.finished: return self
    program, mode, started = self.pending or (None, self.job.mode or "", time.perf_counter())
    why = f"no result after {timeout:g}s" if hung else _death(self.proc.exitcode)
    finding = Finding(HANG if hung else CRASH, "worker", None, "run", {"worker": self.job.worker, "why": why})
    on_result(Result(self.job.worker, program, mode, Verdict(findings=[finding]), time.perf_counter() - started))
    self.finished = True
    left = self.job.examples - self.done - 1
    if program is None: return self  # it died outside an example: a replacement would likely die the same way
    if left <= 0 or (self.job.deadline is not None and time.time() >= self.job.deadline): return self
    skip = self.job.skip | {example_key(program, mode)}
    return _Slot(ctx, replace(self.job, examples=left, reuse=False, restart=self.job.restart + 1, skip=skip))

  def close(self) -> None:
    if self.proc.is_alive(): self.proc.kill()
    self.proc.join(5)
    self.conn.close()


def run_pool(jobs: list[Job], on_result: Callable[[Result], None], timeout: float) -> None:
  """Run `jobs` in worker processes until all are spent; a worker that dies or overruns `timeout` on one example has
  that example reported as a crash or hang finding and is replaced by a fresh one for the rest of its share."""
  ctx = mp.get_context("spawn")
  slots = [_Slot(ctx, j) for j in jobs]
  try:
    while not all(s.finished for s in slots):
      mp.connection.wait([s.conn for s in slots if not s.finished], timeout=POLL_S)
      for s in slots: s.read(on_result)
      for i, s in enumerate(slots):
        if (new := s.watch(ctx, on_result, timeout)) is not s:
          s.close()
          slots[i] = new
  finally:
    for s in slots: s.close()
