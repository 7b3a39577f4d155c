#!/usr/bin/env python3
"""The clean campaigns at the issues' budgets: no finding but known tinygrad bugs (a script, not a test).

`bench/clean.py [--seed 0] [--examples 300] [--corpus defaults|correct]`:
- defaults: planfuzz's planner with its defaults and tinygrad's own TinyJit, each program judged against one shared
  reference run (issue 10: the 300-example clean campaigns stay clean);
- correct: every planner of the correct-planner corpus (tests/planners/correct.py) on every program (issue 11: no
  finding on a correct planner).
Prints the campaign's summary (census, rejections, advisories, bugs) and exits 1 on any finding or when 1% or more of
the examples were rejected. `make test` runs the same campaigns at smaller budgets (tests/test_campaigns.py).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz.campaign.run import run_campaign  # noqa: E402
from oracle.targets import Target  # noqa: E402
from tests.planners.correct import CORRECT  # noqa: E402

CORPORA = {"defaults": lambda: (Target(), Target("tinyjit")),
           "correct": lambda: tuple(Target(planner=f"tests.planners.correct:{name}") for name in CORRECT)}


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--examples", type=int, default=300, help="programs, each run under every target of the corpus")
  ap.add_argument("--corpus", choices=sorted(CORPORA), default="defaults")
  args = ap.parse_args()
  targets, start = CORPORA[args.corpus](), time.perf_counter()
  c = run_campaign(targets, args.seed, args.examples, stop_at_finding=False)
  print("\n".join(c.stats.summary()))
  rejected = sum(c.stats.rejected.values())
  print(f"{args.corpus} (seed {args.seed}): {args.examples} programs x {len(targets)} targets = {c.stats.examples} "
        f"examples in {time.perf_counter() - start:.0f}s; findings {sum(c.stats.findings.values())}; rejected {rejected}")
  if c.found is not None:
    print(f"FOUND under {c.found.target.describe()}:\n" + "\n".join(f.message for f in c.found.outcome.findings[:3]))
  return 1 if c.found is not None or rejected >= 0.01 * c.stats.examples else 0


if __name__ == "__main__":
  sys.exit(main())
