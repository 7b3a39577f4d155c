"""`planfuzz`: run a fuzz campaign, replay a saved repro, draw a saved memory plan, merge a CI matrix's reports, and
tell which tinygrad brought a bug (`bisect` over a checkout's commits, `releases` over the releases at hand).

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
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from fuzz.campaign.examples_db import DEFAULT_DB
from fuzz.campaign.limits import DEFAULT_MAX_RSS_MB, DEFAULT_WORKER_EXAMPLES
from fuzz.campaign.messages import DEFAULT_SHRINK_BUDGET
from fuzz.campaign.usage import BOTH, EXIT_FOUND, EXIT_OK, EXIT_USAGE, UsageError

if TYPE_CHECKING:
  from oracle.targets import Target


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
  r.add_argument("--max-rss", type=float, default=DEFAULT_MAX_RSS_MB, metavar="MB",
                 help=f"a worker past this resident memory is replaced by a fresh one between examples "
                      f"(default {DEFAULT_MAX_RSS_MB:g}; 0: none)")
  r.add_argument("--worker-examples", type=int, default=DEFAULT_WORKER_EXAMPLES, metavar="N",
                 help=f"examples a worker process runs before a fresh one takes over (default {DEFAULT_WORKER_EXAMPLES}; 0: no cap)")
  r.add_argument("--mode", default=BOTH, help="input mode: same-buffer, fresh or both (drawn per example; default)")
  r.add_argument("--replays", type=int, default=3, help="replays after the eager and capture calls (default 3)")
  r.add_argument("--repro-dir", default="fuzz-failures", help="where findings' repro scripts and plans go")
  r.add_argument("--timeout", type=float, default=300.0,
                 help="seconds one example may take before it counts as a hang (its repro gets twice that, alone, to confirm "
                      "it: a program whose kernels are not in the disk cache yet can take minutes to compile)")
  r.add_argument("--fleet", default=os.environ.get("GITHUB_RUN_ID", "local"),
                 help="the CI run this campaign is one runner of: with --db redis://..., its runners claim bugs under this name, "
                      "so each is shrunk once (default: $GITHUB_RUN_ID, else 'local')")
  r.add_argument("--db", default=DEFAULT_DB, help=f"example database: a directory, redis://host:port/N or none (default {DEFAULT_DB})")
  r.add_argument("--shared-db", default=None, help="a database read read-only next to --db (e.g. CI's redis://...)")
  r.add_argument("--shrink-budget", type=float, default=DEFAULT_SHRINK_BUDGET,
                 help=f"seconds of shrinking per distinct bug, in the worker that found it (default {DEFAULT_SHRINK_BUDGET:g}; 0: none)")
  r.add_argument("--report", default=None, help="report.md path (default: REPRO_DIR/report.md; report.json goes beside it)")
  r.add_argument("--strict", action="store_true", help="advisories (tinygrad contracts a plan departs from) fail the run too")
  r.add_argument("--no-confirm", action="store_true", help="skip confirming each new bug's repro in a fresh process")
  r.add_argument("--engine", default=None, choices=("plain", "hcq2", "mixed"),
                 help="replay engine of the workers: plain (HCQ2 off: call by call, or graphs where the device has them), "
                      "hcq2 (HCQ2=1, what tinygrad keeps) or mixed (every second worker runs HCQ2; default with 2+ workers "
                      "on a device with HCQ2, else plain; HCQ2=1 in the environment means hcq2)")
  r.add_argument("--tinygrad-repo", default=None, help="a clone of tinygrad's git repository: each new confirmed bug of the tinyjit "
                 "target is also bisected there (planfuzz bisect), its first bad or fixed commit in the report")
  planted = r.add_mutually_exclusive_group()
  planted.add_argument("--graph-mutant", dest="replay_mutant", default=None, help="plant a fault in tinygrad's graph replay in every "
                       "worker (planner/engines/graph.py; or module:function, a context manager of one's own), to show a "
                       "campaign on a device with graphs judges the graph path")
  planted.add_argument("--hcq2-mutant", dest="replay_mutant", default=None, help="plant a fault in tinygrad's HCQ2 replay in every "
                       "worker (planner/engines/hcq2.py; or module:function, a context manager of one's own), to show a campaign whose "
                       "workers run HCQ2 judges that path")
  rp = sub.add_parser("replay", help="run a saved repro script; exit 1 when it reproduces")
  rp.add_argument("file")
  mg = sub.add_parser("merge", help="one report for a CI matrix from its runners' report.json files (or directories of them)")
  mg.add_argument("reports", nargs="+")
  mg.add_argument("--out", default="fleet-report", help="directory for the merged report.md and report.json (default fleet-report)")
  pl = sub.add_parser("plan", help="draw a saved memory plan (.plan.json) as SVG")
  pl.add_argument("file")
  pl.add_argument("--out", default=None, help="SVG path (default: next to FILE)")
  bs = sub.add_parser("bisect", help="the tinygrad commit that brought a bug (or fixed it): a repro run at commits of a tinygrad checkout")
  bs.add_argument("repro", help="a repro script: exit 1 reproduces, 0 does not, anything else cannot say (skipped)")
  bs.add_argument("--repo", required=True, help="a clone of tinygrad's git repository (its work tree is never touched)")
  bs.add_argument("--old", default=None, help="the older end (default: the newest release tag whose verdict differs from --new's)")
  bs.add_argument("--new", default="HEAD", help="the newer end (default HEAD)")
  bs.add_argument("--timeout", type=float, default=120.0, help="seconds one run may take; past it the commit is skipped (default 120)")
  bs.add_argument("--max-skips", type=int, default=8, help="commits in a row that cannot say before the bisect stops with the "
                  "range left (default 8; 0: try every commit)")
  bs.add_argument("--json", default=None, help="also write the answer and every step here")
  rl = sub.add_parser("releases", help="which tinygrad releases at hand reproduce each repro (make old-tinygrad installs 0.12.0, 0.13.0)")
  rl.add_argument("repros", nargs="+")
  rl.add_argument("--timeout", type=float, default=300.0)
  return p


def cmd_bisect(args: argparse.Namespace) -> int:
  """The answer's lines on stdout (progress went to stderr); 0 when one commit is named, 1 when skips left a range."""
  import json

  from fuzz.history.bisect import bisect
  if args.timeout <= 0: raise UsageError("--timeout must be positive")
  if args.max_skips < 0: raise UsageError("--max-skips must be 0 (try every commit) or more")
  answer = bisect(Path(args.repro), Path(args.repo), args.old, args.new, args.timeout, max_skips=args.max_skips)
  if args.json: Path(args.json).write_text(json.dumps(answer.to_json(), indent=1))
  print("\n".join(answer.lines()))
  return EXIT_OK if answer.first is not None else EXIT_FOUND


def cmd_releases(args: argparse.Namespace) -> int:
  from fuzz.history.bisect import needs_emulator
  from fuzz.history.releases import sentence, table
  for repro in map(Path, args.repros):
    if not repro.is_file(): raise UsageError(f"no such repro script: {repro}")
    rows = table(repro, needs_emulator(repro), args.timeout)
    print(f"{repro}: {sentence(rows)}")
    for version, said in rows.items(): print(f"  {version}: {said}")
  return EXIT_OK


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


def run_target(args: argparse.Namespace) -> Target:
  """The target the command line names, its options checked first: a bad one is one line naming the fix. Done before
  the campaign engine loads, so a planner that cannot load on this tinygrad is said in these words."""
  from oracle.device import missing_compiler
  from oracle.runs import MODES
  from oracle.targets import Target, TargetError
  if (fix := missing_compiler()) is not None: raise UsageError(fix)
  if args.mode not in (*MODES, BOTH): raise UsageError(f"unknown --mode {args.mode!r}: choose one of {', '.join(MODES)}, {BOTH}")
  if args.replays < 1: raise UsageError("--replays must be at least 1 (a replay is where planner bugs show)")
  if args.workers < 1: raise UsageError("--workers must be at least 1")
  if args.max_rss < 0 or args.worker_examples < 0: raise UsageError("--max-rss and --worker-examples must be 0 (no limit) or more")
  if args.examples is not None and args.examples < 1: raise UsageError("--examples must be at least 1")
  if args.time_budget is not None and args.time_budget <= 0: raise UsageError("--time-budget must be positive")
  if args.shrink_budget < 0: raise UsageError("--shrink-budget must be 0 (no shrinking) or more seconds")
  if args.tinygrad_repo is not None:
    from fuzz.history.trees import Checkout
    Checkout(args.tinygrad_repo).commit("HEAD")  # one line now, not after the campaign, if it is no tinygrad checkout
  try: return Target(args.target, policy=args.policy, planner=args.planner, graph=args.graph)
  except TargetError as e: raise UsageError(str(e)) from e


def cmd_run(args: argparse.Namespace) -> int:
  target = run_target(args)
  from fuzz.campaign.runner import run  # loads tinygrad, which `planfuzz --help` should not wait for
  return run(args, target)


def cmd_merge(args: argparse.Namespace) -> int:
  from fuzz.campaign import merge
  merged = merge.merge(args.reports)
  md, _ = merge.write(merged, Path(args.out))
  new = sum(b["new"] for b in merged.bugs.values())
  print(f"planfuzz: {len(merged.runs)} report(s), {len(merged.bugs)} distinct bug(s) ({new} new): {md}")
  return EXIT_FOUND if new else EXIT_OK


COMMANDS = {"run": cmd_run, "replay": cmd_replay, "plan": cmd_plan, "merge": cmd_merge, "bisect": cmd_bisect, "releases": cmd_releases}


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
