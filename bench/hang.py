#!/usr/bin/env python3
"""Seconds to tell a replay that never finishes (a script, not a test): prints a JSON report and a table.

A campaign with a replay planted to hang at its first replay (tests/hanging_replay.py) and a 300 s example timeout,
the old cost of every hang: the figure is the seconds from the process's start until the hang is told (report.json's
first finding), next to the budget fuzz/campaign/hangs.py gave the call that hung (10x the example's first eager step
plus 15 s). On the CPU with HCQ2; with --emulated also on tinygrad's emulated AMD GPU, through HCQ2 and through its
graph runner (HCQGraph). Goal: each told in well under the 300 s it used to wait.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import emulated_env  # noqa: E402

TIMEOUT = 300
TOLD = re.compile(r"ran past its (\d+)s \(([\d.]+)s the first eager step took")


def told(label: str, engine: str, option: str, plant: str, seed: int, env: dict[str, str] | None = None) -> dict:
  """One campaign of one example with the hanging replay planted: when and how its hang was told."""
  with tempfile.TemporaryDirectory() as out:
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "fuzz.campaign.cli", "run", "--target", "tinyjit", "--engine", engine, option, plant,
           "--examples", "1", "--seed", str(seed), "--timeout", str(TIMEOUT), "--db", "none", "--no-confirm", "--repro-dir", out]
    subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=4 * TIMEOUT)
    wall = time.perf_counter() - start
    bugs = json.loads((Path(out) / "report.json").read_text())["bugs"]
  hang = next((b for b in bugs if b["kind"] == "hang"), None)
  m = TOLD.search(hang["message"]) if hang else None
  return {"where": label, "told": m is not None, "seconds_from_start": round(wall, 1),
          "budget_s": int(m[1]) if m else None, "first_eager_s": float(m[2]) if m else None}


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--emulated", action="store_true", help="also on the emulated AMD GPU (minutes)")
  args = ap.parse_args()
  runs = [told("CPU, hcq2", "hcq2", "--hcq2-mutant", "tests.hanging_replay:hcq2_never_finishes", args.seed)]
  if args.emulated:
    env = emulated_env()
    runs += [told("emulated AMD, hcq2", "hcq2", "--hcq2-mutant", "tests.hanging_replay:hcq2_never_finishes", args.seed, env),
             told("emulated AMD, graph", "plain", "--graph-mutant", "tests.hanging_replay:graph_never_finishes", args.seed, env)]
  print(json.dumps(runs, indent=1))
  for r in runs:
    how = f"told after {r['seconds_from_start']:.0f}s from start (budget {r['budget_s']}s)" if r["told"] else "NOT told as a hang"
    print(f"{r['where']:<22} {how}; an example's timeout: {TIMEOUT}s")


if __name__ == "__main__":
  main()
