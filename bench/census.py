#!/usr/bin/env python3
"""The census of the default campaign against issue 10's goal: every feature in at least 3% of examples, every feature
that makes buffers of its own planned in at least 2% (a script, not a test).

`bench/census.py [--seed 0] [--examples 300] [--target planner]` runs the campaign, prints its summary (the census
block included) and one line per goal missed; exit status 1 when one is.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.campaign.run import run_campaign  # noqa: E402
from fuzz.gen.features import FEATURES  # noqa: E402
from oracle.targets import Target  # noqa: E402

HAD, PLANNED = 0.03, 0.02


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__)
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--examples", type=int, default=300)
  ap.add_argument("--target", default="planner")
  args = ap.parse_args()
  c = run_campaign(Target(args.target), args.seed, args.examples, stop_at_finding=False)
  print("\n".join(c.stats.summary()))
  census, missed = c.stats.census, []
  for f in FEATURES:
    if census.share(f.name) < HAD: missed.append(f"{f.name}: in {census.share(f.name):.1%} of examples (goal {HAD:.0%})")
    if f.planned is not None and census.share(f.name, census.planned) < PLANNED:
      missed.append(f"{f.name}: {census.share(f.name, census.planned):.1%} {f.planned_what} (goal {PLANNED:.0%})")
  print("\n".join(["goals missed:", *missed]) if missed else "every census goal met")
  return 1 if missed else 0


if __name__ == "__main__":
  sys.exit(main())
