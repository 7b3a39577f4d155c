"""`planfuzz run`: a campaign over worker processes, from the parsed command line to its summary and report.

The parent only watches (fuzz/campaign/workers.py) and records (fuzz/campaign/triage.py). What it writes survives any
way the campaign ends: every bug's repro when first seen, the state a resumed run carries on from every few seconds
(fuzz/campaign/resume.py), and, unless killed outright, the report (fuzz/campaign/report.py); Ctrl-C, SIGTERM and the
time budget end it with its bugs, summary and report.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from tinygrad import Device

from fuzz.campaign import report, resume
from fuzz.campaign.claims import claim_book
from fuzz.campaign.confirm import DEVICE
from fuzz.campaign.examples_db import DatabaseError, open_database
from fuzz.campaign.limits import Limits
from fuzz.campaign.messages import Event, Job
from fuzz.campaign.stats import Stats
from fuzz.campaign.triage import Triage
from fuzz.campaign.usage import BOTH, EXIT_FOUND, EXIT_OK, UsageError
from fuzz.campaign.workers import run_pool, shares
from fuzz.gen.features import dtypes
from oracle.targets import Target
from planner import tg
from planner.engines import HCQ2, MIXED, PLAIN, hcq2, replay_patch, worker_engines
from planner.plugins import PlanfuzzUsageError


def check_options(args: argparse.Namespace) -> None:
  """The options that need the campaign engine loaded to check: a bad one is one line naming the fix."""
  if args.replay_mutant is not None:
    try: replay_patch(args.replay_mutant)
    except PlanfuzzUsageError as e: raise UsageError(str(e)) from e
  args.engine = campaign_engine(args)
  try: open_database(args.db, args.shared_db)  # fail now, in one line, not in every worker
  except DatabaseError as e: raise UsageError(str(e)) from e


def campaign_engine(args: argparse.Namespace) -> str:
  """The process engine the campaign's workers run: as asked; else hcq2 where HCQ2=1 is in the environment; else mixed
  on a device with HCQ2 and 2+ workers; else plain. Asking for HCQ2 where this tinygrad has none is one line."""
  have = hcq2.available(Device.DEFAULT)
  engine = args.engine or (HCQ2 if hcq2.active() else MIXED if have and args.workers >= 2 else PLAIN)
  if engine != PLAIN and not have:
    raise UsageError(f"--engine {engine}: tinygrad {tg.installed_version()} has no HCQ2 device of {Device.DEFAULT}'s kind here (the CPU "
                     "device is one; AMD's is in a tinygrad checkout's extra/hcq2, on the path with the emulator's files)")
  if engine == MIXED and args.workers < 2:
    raise UsageError("--engine mixed runs each engine in worker processes of its own: give --workers 2 or more, or --engine plain|hcq2")
  if engine != PLAIN: os.environ.update({k: v for k, v in hcq2.process_env().items() if k != "HCQ2"})  # for repros
  return engine


def engine_job(target: Target, engine: str) -> tuple[Target, tuple[tuple[str, str | None], ...]]:
  """A worker's target and environment for its process engine: HCQ2 named in the target's knobs (so every finding
  carries it into its repro and report) where the device has HCQ2 at all."""
  if not hcq2.available(Device.DEFAULT): return target, ()
  if engine == HCQ2: return target.with_knobs(HCQ2=1), tuple(hcq2.process_env().items())
  return target.with_knobs(HCQ2=0), tuple((k, None) for k in hcq2.ENV_KEYS)


class Progress:
  """One line on stderr: rewritten in place on a terminal, a new line every few seconds elsewhere (CI logs). A resumed
  campaign's counts include its earlier runs, so its seconds and rate do too (`earlier`: their seconds)."""

  def __init__(self, total: int | None, earlier: float = 0.0) -> None:
    self.total, self.start, self.last = total, time.perf_counter() - earlier, 0.0
    self.tty = sys.stderr.isatty()

  def show(self, stats: Stats, final: bool = False) -> None:
    """The line counts rejected examples (each one a generator bug: a long proof must show them while it runs) and new
    bugs apart from known tinygrad bugs, as the exit status does."""
    now = time.perf_counter()
    if not (final or self.tty or now - self.last >= 5): return
    self.last, elapsed = now, now - self.start
    of = f"/{self.total}" if self.total else ""
    bugs, rejected = list(stats.bugs.bugs.values()), sum(stats.rejected.values())
    rate, new = stats.examples / max(elapsed, 1e-9), sum(b.new for b in bugs)
    line = (f"planfuzz: {stats.examples}{of} examples, {rejected} rejected, {new} new bug{'s' * (new != 1)}, {len(bugs) - new} known, "
            f"{rate:.2f}/s, {elapsed:.0f}s")
    print(("\r" if self.tty else "") + line, end="\n" if final or not self.tty else "", file=sys.stderr, flush=True)


def jobs_for(args: argparse.Namespace, target: Target, carried: resume.Carried | None) -> list[Job]:
  """Each worker's share of what is left: examples not run yet (or the time budget not spent yet) by earlier runs."""
  done, spent = (carried.stats.examples, carried.seconds) if carried else (0, 0.0)
  deadline = None if args.time_budget is None else time.time() + args.time_budget - spent
  left = None if args.examples is None else args.examples - done
  per_worker = shares(left, args.workers) if left is not None else [10**9] * args.workers
  claimant = f"{socket.gethostname()} seed {args.seed} {target.describe()}"
  claims = claim_book(args.db, Path(args.repro_dir), args.fleet, claimant)
  restart = (carried.runs if carried else 0) * resume.RESTARTS_PER_RUN
  engines = [engine_job(target, e) for e in worker_engines(args.engine, args.workers)]
  probed = tuple(tg.probed_env(dtypes.DTYPES).items())  # once here, not in every worker process
  return [Job(engines[w][0], None if args.mode == BOTH else args.mode, args.replays + 2, n, deadline, args.seed, w, args.db,
              args.shared_db, reuse=w == 0, restart=restart, claims=claims, shrink_budget=args.shrink_budget, strict=args.strict,
              replay_mutant=args.replay_mutant, limits=Limits(args.max_rss, args.worker_examples), env=engines[w][1] + probed)
          for w, n in enumerate(per_worker) if n > 0]


def run(args: argparse.Namespace, target: Target) -> int:
  """The campaign `args` asks for, on `target` (built and checked by fuzz/campaign/cli.py before this module loads)."""
  check_options(args)
  command, repro_dir = sys.argv[1:], Path(args.repro_dir)
  carried = resume.load(repro_dir, command)
  jobs, calls = jobs_for(args, target, carried), args.replays + 2
  triage = Triage(target, calls, repro_dir, len(jobs), Device.DEFAULT)
  progress, saver = Progress(args.examples, carried.seconds if carried else 0.0), resume.Saver(repro_dir, command, carried)
  before = (carried.stats.examples, len(carried.stats.bugs.bugs)) if carried else (0, 0)
  if carried is not None: triage.stats = carried.stats

  def on_event(event: Event) -> None:
    triage.on_event(event)
    progress.show(triage.stats)
    saver.save(triage.stats)

  print(f"planfuzz: {target.describe()}{'; replay mutant ' + args.replay_mutant if args.replay_mutant else ''}; "
        f"engine {args.engine}; mode {args.mode}; {calls} calls; seed {args.seed}; {len(jobs)} worker(s); "
        f"shrink budget {args.shrink_budget:g}s a bug; database {args.db}"
        f"{' + ' + args.shared_db + ' (read-only)' if args.shared_db else ''}"
        f"{f'; resuming run {saver.runs} of this command' if carried else ''}", file=sys.stderr)
  started = time.perf_counter()
  interrupted = interruptible(lambda: run_pool(jobs, on_event, args.timeout, triage.on_slot))
  progress.show(triage.stats, final=True)
  saver.save(triage.stats, force=True)
  bugs = triage.finish(confirm=not args.no_confirm, parallel=max(len(jobs), 1), timeout=2 * args.timeout,
                       tinygrad_repo=Path(args.tinygrad_repo) if args.tinygrad_repo else None)
  saver.save(triage.stats, force=True, finished=interrupted is None)  # a signalled campaign may be resumed, a finished one not
  lines = triage.stats.summary() + [f"wall clock {time.perf_counter() - started:.1f}s, of which the workers shrank bugs for "
                                    f"{triage.shrink_seconds:.1f}s (summed over workers)"]
  if carried is not None:
    lines.append(f"resumed: run {saver.runs} of this command; the figures above include the {before[0]} examples and "
                 f"{before[1]} bug(s) of the earlier run(s)")
  if interrupted: lines.append(f"INTERRUPTED by {interrupted}: the figures above cover the examples finished before it")
  print("\n".join(lines))
  md = write_report(args, target, triage.stats, bugs, tuple(lines), saver.runs)
  print(f"report: {md}")
  return EXIT_FOUND if any(b.new and b.status != DEVICE for b in bugs) else EXIT_OK  # a device's bug is no JIT bug


def interruptible(pool: Any) -> str | None:
  """Run the pool; Ctrl-C or SIGTERM (a CI job's timeout) stops it early and returns the signal's name, so a long
  campaign cut short still writes its summary, bugs and report for what it ran. SIGINT gets the handler too: a process
  started in the background by a non-interactive shell inherits SIGINT ignored, and Python then installs none."""
  def stop(signum: int, frame: Any) -> NoReturn: raise KeyboardInterrupt(signal.Signals(signum).name)
  previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
  try: pool()
  except KeyboardInterrupt as e: return str(e) or "SIGINT"
  finally:
    for s, handler in previous.items(): signal.signal(s, handler)
  return None


def write_report(args: argparse.Namespace, target: Target, stats: Stats, bugs: list, summary: tuple[str, ...], runs: int) -> Path:
  meta = report.Meta(target.describe(), target.kind, tg.installed_version(), Device.DEFAULT, args.seed, stats.examples,
                     stats.workers, "planfuzz " + " ".join(sys.argv[1:]), summary, runs=runs, fleet=args.fleet,
                     runner=os.environ.get("PLANFUZZ_RUNNER") or socket.gethostname())
  return report.write(bugs, meta, Path(args.report) if args.report else Path(args.repro_dir) / "report.md", stats)[0]
