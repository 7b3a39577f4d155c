#!/usr/bin/env python3
"""One fresh process: run a campaign until the first finding and print, as JSON, how long that took from process start.

Used by bench/run.py for time-to-#16571 on tinygrad 0.13.0 (bench/run.py puts its folder on PYTHONPATH), for planner
mutants, and for graph-replay mutants on the emulated GPU.
"""
import time

START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from dataclasses import replace  # noqa: E402

from fuzz.campaign.run import run_campaign  # noqa: E402
from oracle.targets import Target  # noqa: E402
from planner.engines import planted  # noqa: E402


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--target", default="tinyjit")
  ap.add_argument("--mutant", default=None, help="a planner mutant's name (planner/mutants.py)")
  ap.add_argument("--replay-mutant", default=None, help="a replay engine mutant's name (planner/engines/)")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--examples", type=int, default=300)
  args = ap.parse_args()
  target = Target(args.target) if args.mutant is None else replace(Target.for_mutant(args.mutant), kind=args.target)
  with planted(args.replay_mutant): found = run_campaign(target, args.seed, args.examples).found
  json.dump({"target": target.describe(), "seed": args.seed, "found": found is not None,
             "examples": found.example if found else args.examples, "seconds_from_start": time.perf_counter() - START,
             "kinds": sorted({f.kind for f in found.outcome.findings}) if found else []}, sys.stdout)


if __name__ == "__main__":
  main()
