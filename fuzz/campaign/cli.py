"""`planfuzz`: run a fuzz campaign, replay a saved repro, draw a saved memory plan.

A campaign reports bugs, not examples: findings are grouped by signature, each new bug is shrunk in the worker that
found it and confirmed by running its repro in a fresh process. Each bug leaves in --repro-dir its repro script
(`planfuzz replay` runs it), the unshrunk one, the plan of the failing capture as JSON and its picture as SVG
(`planfuzz plan` redraws it), and the campaign writes report.md and report.json there. Exit status: 0 no new bug
(known tinygrad bugs and advisories do not count; or, for replay, not reproduced), 1 a new bug (or reproduced),
2 bad usage: a bad target, policy, planner, database or tinygrad is one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

from fuzz.campaign.examples_db import DEFAULT_DB, DatabaseError, open_database

DEFAULT_SHRINK_BUDGET = 60.0  # seconds per bug: fuzz.campaign.workers imports tinygrad, which `planfuzz --help` should not wait for

BOTH = "both"
EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
  """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
  def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
    raise UsageError(f"{self.prog}: {message} (see --help)")


def parser() -> argparse.ArgumentParser:
  p = _Parser(prog="planfuzz", description="Correctness verifier and fuzzer for tinygrad's JIT memory planner")
  sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
  r = sub.add_parser("run", help="run a fuzz campaign")
  r.add_argument("--target", default="planner", help="planner (PlannedJit), tinyjit (tinygrad's own) or static (plans only)")
  r.add_argument("--policy", default="live-tensors", help="held-buffer policy: a name, a mutant or module:function")
  r.add_argument("--planner", default="planfuzz", help="memory planner: a name, a mutant or module:function")
  r.add_argument("--graph", default="tinygrad", help="graph splitter: a name, a mutant or module:function")
  budget = r.add_mutually_exclusive_group(required=True)
  budget.add_argument("--examples", type=int, help="examples in all, shared among the workers")
  budget.add_argument("--time-budget", type=float, help="seconds; no example starts after it")
  r.add_argument("--seed", type=int, default=0)
  r.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
  r.add_argument("--mode", default=BOTH, help="input mode: same-buffer, fresh or both (drawn per example; default)")
  r.add_argument("--replays", type=int, default=3, help="replays after the eager and capture calls (default 3)")
  r.add_argument("--repro-dir", default="fuzz-failures", help="where findings' repro scripts and plans go")
  r.add_argument("--timeout", type=float, default=300.0,
                 help="seconds one example may take before it counts as a hang (its repro gets twice that, alone, to confirm "
                      "it: a program whose kernels are not in the disk cache yet can take minutes to compile)")
  r.add_argument("--db", default=DEFAULT_DB, help=f"example database: a directory, redis://host:port/N or none (default {DEFAULT_DB})")
  r.add_argument("--shared-db", default=None, help="a database read read-only next to --db (e.g. CI's redis://...)")
  r.add_argument("--shrink-budget", type=float, default=DEFAULT_SHRINK_BUDGET,
                 help=f"seconds of shrinking per distinct bug, in the worker that found it (default {DEFAULT_SHRINK_BUDGET:g}; 0: none)")
  r.add_argument("--report", default=None, help="report.md path (default: REPRO_DIR/report.md; report.json goes beside it)")
  r.add_argument("--strict", action="store_true", help="advisories (tinygrad contracts a plan departs from) fail the run too")
  r.add_argument("--no-confirm", action="store_true", help="skip confirming each new bug's repro in a fresh process")
  r.add_argument("--graph-mutant", default=None, help="plant a fault in tinygrad's graph replay in every worker "
                 "(planner/graph_mutants.py), to show a campaign on a device with graphs judges the graph path")
  rp = sub.add_parser("replay", help="run a saved repro script; exit 1 when it reproduces")
  rp.add_argument("file")
  pl = sub.add_parser("plan", help="draw a saved memory plan (.plan.json) as SVG")
  pl.add_argument("file")
  pl.add_argument("--out", default=None, help="SVG path (default: next to FILE)")
  return p


def _run_target(args: argparse.Namespace) -> Any:
  from oracle.device import missing_compiler
  from oracle.runs import MODES
  from oracle.targets import Target, TargetError
  if (fix := missing_compiler()) is not None: raise UsageError(fix)
  if args.mode not in (*MODES, BOTH): raise UsageError(f"unknown --mode {args.mode!r}: choose one of {', '.join(MODES)}, {BOTH}")
  if args.replays < 1: raise UsageError("--replays must be at least 1 (a replay is where planner bugs show)")
  if args.workers < 1: raise UsageError("--workers must be at least 1")
  if args.examples is not None and args.examples < 1: raise UsageError("--examples must be at least 1")
  if args.time_budget is not None and args.time_budget <= 0: raise UsageError("--time-budget must be positive")
  try: return Target(args.target, policy=args.policy, planner=args.planner, graph=args.graph)
  except TargetError as e: raise UsageError(str(e)) from e


class Progress:
  """One line on stderr: rewritten in place on a terminal, a new line every few seconds elsewhere (CI logs)."""

  def __init__(self, total: int | None) -> None:
    self.total, self.start, self.last = total, time.perf_counter(), 0.0
    self.tty = sys.stderr.isatty()

  def show(self, stats: Any, final: bool = False) -> None:
    """`stats`: the campaign's `fuzz.campaign.driver.Stats`. The line counts rejected examples (each one a generator bug: a long
    proof must show them while it runs) and new bugs apart from known tinygrad bugs, as the exit status does."""
    now = time.perf_counter()
    if not (final or self.tty or now - self.last >= 5): return
    self.last, elapsed = now, now - self.start
    of = f"/{self.total}" if self.total else ""
    bugs, rejected = list(stats.bugs.bugs.values()), sum(stats.rejected.values())
    rate, new = stats.examples / max(elapsed, 1e-9), sum(b.new for b in bugs)
    line = (f"planfuzz: {stats.examples}{of} examples, {rejected} rejected, {new} new bug{'s' * (new != 1)}, {len(bugs) - new} known, "
            f"{rate:.2f}/s, {elapsed:.0f}s")
    print(("\r" if self.tty else "") + line, end="\n" if final or not self.tty else "", file=sys.stderr, flush=True)


def cmd_run(args: argparse.Namespace) -> int:
  target = _run_target(args)
  if args.shrink_budget < 0: raise UsageError("--shrink-budget must be 0 (no shrinking) or more seconds")
  from planner.graph_mutants import GRAPH_MUTANTS
  if args.graph_mutant is not None and args.graph_mutant not in GRAPH_MUTANTS:
    raise UsageError(f"unknown --graph-mutant {args.graph_mutant!r}: choose one of {', '.join(GRAPH_MUTANTS)}")
  try: open_database(args.db, args.shared_db)  # fail now, in one line, not in every worker
  except DatabaseError as e: raise UsageError(str(e)) from e
  from fuzz.campaign.triage import Triage
  from fuzz.campaign.workers import Job, run_pool, shares
  calls, mode = args.replays + 2, None if args.mode == BOTH else args.mode
  deadline = None if args.time_budget is None else time.time() + args.time_budget
  per_worker = shares(args.examples, args.workers) if args.examples is not None else [10**9] * args.workers
  with tempfile.TemporaryDirectory(prefix="planfuzz-claims-") as claims:
    jobs = [Job(target, mode, calls, n, deadline, args.seed, w, args.db, args.shared_db, reuse=w == 0, claims=claims,
                shrink_budget=args.shrink_budget, strict=args.strict, graph_mutant=args.graph_mutant)
            for w, n in enumerate(per_worker) if n > 0]
    triage, progress = Triage(target, calls, Path(args.repro_dir), len(jobs)), Progress(args.examples)

    def on_event(event: Any) -> None:
      triage.on_event(event)
      progress.show(triage.stats)

    print(f"planfuzz: {target.describe()}{'; graph mutant ' + args.graph_mutant if args.graph_mutant else ''}; mode {args.mode}; "
          f"{calls} calls; seed {args.seed}; {len(jobs)} worker(s); "
          f"shrink budget {args.shrink_budget:g}s a bug; database {args.db}"
          f"{' + ' + args.shared_db + ' (read-only)' if args.shared_db else ''}", file=sys.stderr)
    started = time.perf_counter()
    interrupted = _run_interruptibly(lambda: run_pool(jobs, on_event, args.timeout, triage.on_slot))
    progress.show(triage.stats, final=True)
  bugs = triage.finish(confirm=not args.no_confirm, parallel=len(jobs), timeout=2 * args.timeout)
  lines = triage.stats.summary() + [f"wall clock {time.perf_counter() - started:.1f}s, of which the workers shrank bugs for "
                                    f"{triage.shrink_seconds:.1f}s (summed over workers)"]
  if interrupted: lines.append(f"INTERRUPTED by {interrupted}: the figures above cover the examples finished before it")
  print("\n".join(lines))
  md = _write_report(args, target, triage, bugs, tuple(lines))
  print(f"report: {md}")
  return EXIT_FOUND if any(b.new for b in bugs) else EXIT_OK


def _run_interruptibly(pool: Any) -> str | None:
  """Run the pool; Ctrl-C or SIGTERM (a CI job's timeout) stops it early and returns the signal's name, so a long
  campaign cut short still writes its summary, bugs and report for what it ran."""
  def stop(signum: int, frame: Any) -> NoReturn: raise KeyboardInterrupt(signal.Signals(signum).name)
  previous = signal.signal(signal.SIGTERM, stop)
  try: pool()
  except KeyboardInterrupt as e: return str(e) or "SIGINT"
  finally: signal.signal(signal.SIGTERM, previous)
  return None


def _write_report(args: argparse.Namespace, target: Any, triage: Any, bugs: list, summary: tuple[str, ...]) -> Path:
  from tinygrad import Device

  from fuzz.campaign import report
  from planner import tg
  meta = report.Meta(target.describe(), target.kind, tg.installed_version(), Device.DEFAULT, args.seed, triage.stats.examples,
                     triage.stats.workers, "planfuzz " + " ".join(sys.argv[1:]), summary)
  return report.write(bugs, meta, Path(args.report) if args.report else Path(args.repro_dir) / "report.md")[0]


def cmd_replay(args: argparse.Namespace) -> int:
  """The repro script in a subprocess of this very python; its exit status passes through."""
  from fuzz.campaign.confirm import fresh_env
  if not Path(args.file).is_file(): raise UsageError(f"no such repro script: {args.file}")
  rc = subprocess.run([sys.executable, args.file], env=fresh_env()).returncode
  if rc < 0:  # killed by a signal: the crash reproduced
    print(f"planfuzz: reproduced: the repro was killed by signal {-rc}", file=sys.stderr)
    return EXIT_FOUND
  said = {EXIT_FOUND: "reproduced", EXIT_OK: "not reproduced"}.get(rc, f"the repro exited {rc}")
  print(f"planfuzz: {said}", file=sys.stderr)
  return rc


def cmd_plan(args: argparse.Namespace) -> int:
  from fuzz.campaign.picture import load, render_svg
  try: pic = load(args.file)
  except (OSError, ValueError) as e: raise UsageError(f"{e} (give the .plan.json written next to a repro script)") from e
  out = Path(args.out) if args.out else Path(str(args.file).removesuffix(".json").removesuffix(".plan") + ".svg")
  out.write_text(render_svg(pic))
  print(f"{out}: {len(pic.boxes)} buffers in {len(pic.arenas)} arena(s), {len(pic.conflicts())} in conflict")
  return EXIT_OK


COMMANDS = {"run": cmd_run, "replay": cmd_replay, "plan": cmd_plan}


def main(argv: list[str] | None = None) -> int:
  """Entry point: a user's `module:function` plugins import from the current directory, as with `python -m`."""
  if os.getcwd() not in sys.path: sys.path.insert(0, os.getcwd())
  try:
    args = parser().parse_args(argv)
    return COMMANDS[args.command](args)
  except UsageError as e:
    print(f"planfuzz: {e}", file=sys.stderr)
    return EXIT_USAGE
  except ImportError as e:  # no tinygrad, or one planfuzz cannot use
    print(f"planfuzz: cannot load the fuzzer: {e}".splitlines()[0], file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
  sys.exit(main())
