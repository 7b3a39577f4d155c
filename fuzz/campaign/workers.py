"""A campaign across long-lived worker processes, each running its own share of examples under Hypothesis.

Why processes that live: a new process pays 1-2 s before its first kernel and recompiles every kernel, so a
worker runs many examples and reuses what it compiled. Why processes at all: a planner under test can crash or
hang the process that runs it; the parent only watches, so a segfault, abort or hang loses one example, which
becomes a `crash` or `hang` finding with its repro script, and a fresh worker carries on with the rest.

Each worker runs Hypothesis with an example database (fuzz/campaign/examples_db.py), so a failure is saved and replayed
first by the next campaign using that database. A new bug ends one Hypothesis run once Hypothesis has shrunk it
(fuzz/campaign/explore.py); the worker then starts the next run with the next seed, until its share or the time budget is spent.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from fuzz.campaign.example_clock import ExampleClock
from fuzz.campaign.explore import example_key, explore
from fuzz.campaign.hangs import CallClock
from fuzz.campaign.messages import Calling, Event, Exited, Job, Result, Retired, ShrinkStep, Started
from fuzz.campaign.outcome import Outcome
from oracle.compare import Verdict
from oracle.findings import CRASH, HANG, Finding
from planner.engines import planted

POLL_S = 0.2


@dataclass
class Pending:
  """The program a worker announced and has not finished: what the parent reports if the worker dies or hangs, and
  the JIT call it is in (a call running past its budget is a hang: fuzz/campaign/hangs.py), both timed on its
  ExampleClock (the wall's, slowed while the machine is busier than its CPUs)."""
  started: Started
  clock: CallClock = field(default_factory=CallClock)
  timer: ExampleClock = field(default_factory=ExampleClock)  # started when the program was announced


def _worker(job: Job, conn: Any) -> None:
  """A worker's main: each message is written before the example starts (a Pipe send is synchronous), so an abort
  in the middle of an example still leaves its 'start' for the parent to read. Ctrl-C is the parent's to handle: it
  stops the pool and reports what the workers finished."""
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  with planted(job.replay_mutant): retired = explore(job, conn.send)
  conn.close()
  if retired is not None:  # its device may be broken: tinygrad's finalizers would wait on it at exit and print its hang
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@contextlib.contextmanager
def environment(changes: dict[str, str | None]) -> Iterator[None]:
  """This process's environment with `changes` (None: unset) while active: what a worker starts with (its engine)."""
  saved = {k: os.environ.get(k) for k in changes}
  def put(values: dict[str, str | None]) -> None:
    for k, v in values.items():
      if v is None: os.environ.pop(k, None)
      else: os.environ[k] = v
  put(changes)
  try: yield
  finally: put(saved)


def _death(exitcode: int | None) -> str:
  if exitcode is not None and exitcode < 0:
    try: return f"killed by {signal.Signals(-exitcode).name}"
    except ValueError: return f"killed by signal {-exitcode}"
  return f"exited with status {exitcode}"


def _hang(why: str, timer: ExampleClock) -> str:
  """A hang's message, with the wall's seconds where the example's clock ran slower (a busy machine)."""
  return f"{why}, {wall}" if (wall := timer.stretched()) else why


def shares(examples: int, workers: int) -> list[int]:
  return [examples // workers + (i < examples % workers) for i in range(workers)]


class _Slot:
  """One worker process, its pipe, and the example it is running now."""

  def __init__(self, ctx: Any, job: Job) -> None:
    self.job, self.done, self.finished, self.retired = job, 0, False, False
    self.pending: Pending | None = None
    self.history: list[tuple] = []  # (program, mode, knobs) of every program this process started, in order
    self.conn, child = ctx.Pipe(duplex=False)
    self.proc = ctx.Process(target=_worker, args=(job, child), daemon=True, name=f"planfuzz-worker-{job.worker}")
    with environment(dict(job.env)): self.proc.start()  # a spawned process takes the environment it starts with
    child.close()

  def read(self, on_event: Callable[[Event], None]) -> None:
    """Every message waiting on the pipe."""
    try:
      while not self.finished and self.conn.poll():
        msg = self.conn.recv()
        if isinstance(msg, Started):
          self.pending = Pending(msg, CallClock(getattr(msg.program, "reset", None)))
          self.history.append((msg.program, msg.mode, msg.knobs))
        elif isinstance(msg, Calling) and self.pending is not None:
          if msg.done: self.pending.clock.end(self.pending.timer.now())
          else: self.pending.clock.start(msg.jit, msg.call, self.pending.timer.now())
        elif isinstance(msg, Result):
          self.pending, self.done = None, self.done + 1
          on_event(msg)
        elif isinstance(msg, ShrinkStep):
          if not msg.done: self.pending = None
          on_event(msg)
        elif isinstance(msg, Retired):  # a fresh process takes the rest of its share
          self.retired, self.finished = True, True
          on_event(msg)
        elif isinstance(msg, Exited): self.finished = True
    except (EOFError, OSError): pass  # the worker is gone: `watch` says how

  def watch(self, ctx: Any, on_event: Callable[[Event], None], timeout: float) -> _Slot:
    """This slot, or its replacement when the worker died or overran `timeout` on one program (reported as a finding,
    with the bug it was shrinking then, whose smallest program so far is kept)."""
    now = 0.0 if self.pending is None else self.pending.timer.now()
    overran = None if self.pending is None else self.pending.clock.overran(now)
    hung = self.pending is not None and (now > timeout or overran is not None)
    if self.finished: return self.successor(ctx) if self.retired else self
    if self.proc.is_alive() and not hung: return self
    if hung: self.proc.kill()
    self.proc.join(5)
    self.read(on_event)
    if self.finished: return self
    p = self.pending or Pending(Started(self.job.worker, None, self.job.mode or "", ()))
    program, mode, knobs, shrinking = p.started.program, p.started.mode, p.started.knobs, p.started.shrinking
    why = _hang(overran or f"no result after {timeout:g}s ({p.clock.where(now)})", p.timer) if hung else _death(self.proc.exitcode)
    details = {"worker": self.job.worker, "why": why} | ({"while_shrinking": str(shrinking)} if shrinking else {})
    finding = Finding(HANG if hung else CRASH, "worker", None, "run", details)
    on_event(Result(self.job.worker, program, mode, knobs, Outcome.of(Verdict(findings=[finding])), p.timer.on_wall(),
                    shrinking=shrinking))
    self.finished = True
    left = self.job.examples - self.done - (shrinking is None)
    if program is None: return self  # it died outside an example: a replacement would likely die the same way
    return self.successor(ctx, left, self.job.skip | {example_key(program, mode, knobs)})

  def successor(self, ctx: Any, left: int | None = None, skip: frozenset[str] | None = None) -> _Slot:
    """A fresh worker process for the rest of this one's share (`left` examples; by default all it did not run), with
    the next restart's seeds; this slot itself when nothing is left."""
    left = self.job.examples - self.done if left is None else left
    if left <= 0 or (self.job.deadline is not None and time.time() >= self.job.deadline): return self
    skip = self.job.skip if skip is None else skip
    return _Slot(ctx, replace(self.job, examples=left, reuse=False, restart=self.job.restart + 1, skip=skip))

  def close(self) -> None:
    if self.proc.is_alive(): self.proc.kill()
    self.proc.join(5)
    self.conn.close()


def run_pool(jobs: list[Job], on_event: Callable[[Event], None], timeout: float, on_slot: Callable[[Any], None] | None = None) -> None:
  """Run `jobs` in worker processes until all are spent; a worker that dies or overruns `timeout` on one program has
  that program reported as a crash or hang finding and is replaced by a fresh one for the rest of its share, as is one
  that retires itself (its emulated device broke, or it passed its limits: fuzz/campaign/limits.py).
  `on_slot` is told every worker process started (its `history` lists the programs it ran, in order)."""
  ctx = mp.get_context("spawn")
  slots = [_Slot(ctx, j) for j in jobs]
  for s in slots: on_slot and on_slot(s)
  try:
    while not all(s.finished for s in slots):
      mp.connection.wait([s.conn for s in slots if not s.finished], timeout=POLL_S)
      for s in slots: s.read(on_event)
      for i, s in enumerate(slots):
        if (new := s.watch(ctx, on_event, timeout)) is not s:
          s.close()
          slots[i] = new
          if on_slot: on_slot(new)
  finally:
    for s in slots: s.close()
