#!/usr/bin/env python3
"""Speed-up from 1 to W workers, both ways planfuzz scales across cores (a script, not a test).

`planfuzz run --workers W` (long-lived worker processes, each its own seeded stream, so W workers run other programs
than one) and `pytest fuzz/ -n W` (pytest-xdist shards of one stream: exactly the programs one process runs), each on
the same fixed-seed budget, timed from process start to exit so worker start-up counts. Kernels compile into a fresh
tinygrad cache per run (CACHEDB in a temporary folder), so no configuration profits from an earlier one's compiles.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], examples_line: str) -> float:
  with tempfile.TemporaryDirectory() as tmp:
    env = {**os.environ, "CACHEDB": f"{tmp}/cache.db", "PLANFUZZ_PROFILE": "ci"}
    start = time.perf_counter()
    out = subprocess.run(cmd + ["--repro-dir", tmp], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
  if out.returncode not in (0, 1) or examples_line not in out.stdout + out.stderr:
    sys.exit(f"bench/workers.py: {' '.join(cmd)} failed:\n{(out.stdout + out.stderr)[-2000:]}")
  return wall


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--examples", type=int, default=120)
  ap.add_argument("--workers", type=int, default=2)
  ap.add_argument("--seed", type=int, default=0)
  args = ap.parse_args()
  n, line = str(args.examples), f"{args.examples} examples in"
  cli = [sys.executable, "-m", "fuzz.campaign.cli", "run", "--examples", n, "--seed", str(args.seed), "--db", "none"]
  pytest = [sys.executable, "-m", "pytest", "fuzz/test_fuzz.py", "-q", "-p", "no:cacheprovider", f"--hypothesis-seed={args.seed}",
            "--examples", n]
  print(f"{os.cpu_count()} cores; {args.examples} planner-target examples, seed {args.seed}; wall seconds from process start")
  for name, cmd, flag in (("planfuzz run --workers", cli, "--workers"), ("pytest fuzz/ -n", pytest, "-n")):
    single = "1" if flag == "--workers" else "0"  # -n 0: pytest-xdist off, one process
    one, many = timed(cmd + [flag, single], line), timed(cmd + [flag, str(args.workers)], line)
    print(f"{name} {single} -> {args.workers}: {one:.1f}s -> {many:.1f}s, speed-up {one / many:.2f}x")


if __name__ == "__main__":
  main()
