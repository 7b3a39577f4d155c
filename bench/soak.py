#!/usr/bin/env python3
"""A long campaign's memory and rate, minute by minute (a script, not a test): what a nightly job would see.

Runs `planfuzz run --workers 2 --time-budget MINUTES*60` (its default worker limits: fuzz/campaign/limits.py) and,
every minute, samples each live worker's resident memory and the campaign's example count (from its progress line).
Goals: every worker at most 600 MB at every sample, and the rate of the last 10 minutes at least 90% of the rate of
minutes 5-15 (a campaign that slows as it ages loses a night's examples without saying so). Prints the table, then the
two figures against their goals as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz.campaign.limits import rss_mb  # noqa: E402

RSS_GOAL_MB, RATE_GOAL = 600.0, 0.9
PROGRESS = re.compile(r"planfuzz: (\d+)(?:/\d+)? examples")


def children(pid: int) -> list[int]:
  """The worker processes of the campaign (its children but the multiprocessing resource tracker)."""
  out = []
  for stat in Path("/proc").glob("[0-9]*/stat"):
    try: fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError: continue
    if int(fields[1]) == pid and "resource_tracker" not in Path(stat.parent, "cmdline").read_bytes().decode(errors="replace"):
      out.append(int(stat.parent.name))
  return sorted(out)


def follow(stream, seen: list[int]) -> None:
  """Keep the latest example count the campaign's progress line showed."""
  for line in stream:
    if (m := PROGRESS.search(line)): seen[0] = int(m[1])


def window_rate(rows: list[dict], first: int, last: int) -> float:
  """Examples a second between the samples at minutes `first` and `last`."""
  a, b = rows[first], rows[last]
  return (b["examples"] - a["examples"]) / max(b["seconds"] - a["seconds"], 1e-9)


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--minutes", type=int, default=60)
  ap.add_argument("--seed", type=int, default=31337)
  ap.add_argument("--target", default="tinyjit")
  ap.add_argument("--max-rss", default=None, help="passed to planfuzz run (default: its own), to see workers replaced in a short soak")
  args = ap.parse_args()
  if args.minutes < 16: sys.exit("bench/soak.py: --minutes must be at least 16 (the rate goal compares minutes 5-15 with the last 10)")
  with tempfile.TemporaryDirectory() as repros:
    cmd = [sys.executable, "-m", "fuzz.campaign.cli", "run", "--target", args.target, "--time-budget", str(args.minutes * 60),
           "--seed", str(args.seed), "--workers", "2", "--db", "none", "--no-confirm", "--shrink-budget", "0", "--repro-dir", repros,
           *(["--max-rss", args.max_rss] if args.max_rss else [])]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    seen, start, rows = [0], time.perf_counter(), []
    threading.Thread(target=follow, args=(proc.stderr, seen), daemon=True).start()
    for minute in range(args.minutes + 1):
      time.sleep(max(0.0, start + 60 * minute - time.perf_counter()))
      workers = {pid: round(rss_mb(pid)) for pid in children(proc.pid)}
      rows.append({"minute": minute, "seconds": time.perf_counter() - start, "examples": seen[0], "rss_mb": workers})
      print(f"{minute:4d} min  {seen[0]:6d} examples  " + "  ".join(f"pid {p}: {mb} MB" for p, mb in workers.items()), flush=True)
    proc.wait()
  peak = max((mb for r in rows for mb in r["rss_mb"].values()), default=0)
  early, late = window_rate(rows, 5, 15), window_rate(rows, args.minutes - 10, args.minutes)
  print(json.dumps({"minutes": args.minutes, "peak_worker_rss_mb": peak, "rss_goal_mb": RSS_GOAL_MB, "rss_ok": peak <= RSS_GOAL_MB,
                    "rate_minutes_5_15": round(early, 3), "rate_last_10": round(late, 3),
                    "rate_ratio": round(late / early, 3) if early else None,
                    "rate_ok": bool(early) and late >= RATE_GOAL * early}, indent=1))


if __name__ == "__main__":
  main()
