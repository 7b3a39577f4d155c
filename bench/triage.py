"""Issue 11's figures: what a campaign hands over.

`.venv/bin/python bench/triage.py [--examples 200] [--seed 0] [--workers 2]` runs `planfuzz run --policy returned-only`
(0.13.0's #16571 held set) and prints examples with findings against distinct bugs, the median program lines of the
shrunk repros against the unshrunk ones, and the time shrinking took; then the correct-planner corpus
(tests/planners/correct.py) under one campaign, whose findings must be 0.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def returned_only(examples: int, seed: int, workers: int) -> dict:
  with tempfile.TemporaryDirectory() as out:
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", "run", "--policy", "returned-only", "--examples", str(examples),
                          "--seed", str(seed), "--workers", str(workers), "--db", "none", "--repro-dir", out],
                         cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    bugs = json.loads((Path(out) / "report.json").read_text())["bugs"]
  with_findings = int(run.stdout.split(" distinct from ")[1].split()[0]) if " distinct from " in run.stdout else 0
  shrunk = [b["repro_lines"] for b in bugs if b["repro_lines"]]
  unshrunk = [b["unshrunk_lines"] or b["repro_lines"] for b in bugs if b["repro_lines"]]
  return {"examples": examples, "examples_with_findings": with_findings, "distinct_bugs": len(bugs),
          "statuses": sorted({b["status"] for b in bugs}), "median_lines_shrunk": statistics.median(shrunk) if shrunk else None,
          "median_lines_unshrunk": statistics.median(unshrunk) if unshrunk else None,
          "shrink_seconds": round(sum(b["shrink_seconds"] for b in bugs), 1), "wall_seconds": round(wall, 1)}


def correct_corpus(examples: int, seed: int) -> dict:
  sys.path.insert(0, str(ROOT))
  from fuzz.campaign.run import run_campaign
  from oracle.targets import Target
  from tests.planners.correct import CORRECT
  c = run_campaign(tuple(Target(planner=f"tests.planners.correct:{n}") for n in CORRECT), seed, examples, stop_at_finding=False)
  return {"planners": len(CORRECT), "examples": c.stats.examples, "findings": sum(c.stats.findings.values()),
          "advisories": sum(c.stats.advisories.values())}


def main() -> None:
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--examples", type=int, default=200)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--workers", type=int, default=2)
  p.add_argument("--corpus-examples", type=int, default=100, help="programs judged under every correct planner")
  a = p.parse_args()
  print(json.dumps({"returned_only": returned_only(a.examples, a.seed, a.workers),
                    "correct_planners": correct_corpus(a.corpus_examples, a.seed)}, indent=1))


if __name__ == "__main__":
  main()
