#!/usr/bin/env python3
"""planfuzz's benchmark: prints a JSON report and a readable table (a script, not a test).

Figures: static programs checked per second; differential examples per second with a warm kernel cache (the timed
examples ran once before in another process, so their kernels are in tinygrad's disk cache, as in a nightly job that
keeps it) and the fuzzer's overhead ratio (campaign wall time / time spent running the programs: reference and JIT);
the same two rates for a `planfuzz run --workers 2` campaign, which is how a 2-core machine runs one; for every
planner mutant and for #16571 on tinygrad 0.13.0, examples and seconds to the first finding (median and max over
seeds, each in a fresh process, timed from process start); peak resident memory and its growth over a long campaign.
With --emulated, on tinygrad's emulated AMD GPU (where captures are graphed): the tinyjit target's rate over the
workers with a warm disk cache, and seconds to kill each graph-replay mutant (planner/engines/graph.py).
Goals on a 2-core machine: static >= 20/s, differential >= 2/s, overhead <= 1.5, #16571 median <= 30 s,
every mutant killed in a median <= 60 s, growth <= 200 MB over 1000 examples; emulated >= 1/s over 2 workers, every
graph mutant killed in a median <= 120 s within 150 examples.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz.campaign.limits import rss_mb  # noqa: E402
from fuzz.campaign.run import run_campaign  # noqa: E402
from oracle.device import emulated_process  # noqa: E402
from oracle.targets import Target  # noqa: E402
from planner.engines import of_engine  # noqa: E402
from planner.mutants import MUTANTS  # noqa: E402

GRAPH_MUTANT_BUDGET = 150  # examples a fixed-seed emulated campaign gets to kill a graph mutant


def emulated_env() -> dict[str, str]:
  """What a subprocess needs to run on tinygrad's emulated AMD GPU (the mock files on its path)."""
  env, why = emulated_process(str(ROOT))
  if env is None: raise SystemExit(f"--emulated: {why} (see `make fuzz-gpu`)")
  return env


def _planfuzz_run(target: str, seed: int, examples: int, workers: int, env: dict | None = None,
                  engine: str = "plain") -> subprocess.CompletedProcess:
  """One `planfuzz run` in a fresh process: no shrinking and no confirmation, so only examples are in its time; the
  plain engine unless told (a rate of one engine, not of a mixed campaign's)."""
  cmd = [sys.executable, "-m", "fuzz.campaign.cli", "run", "--target", target, "--examples", str(examples), "--workers", str(workers),
         "--seed", str(seed), "--db", "none", "--no-confirm", "--shrink-budget", "0", "--engine", engine]
  with tempfile.TemporaryDirectory() as repros:
    out = subprocess.run(cmd + ["--repro-dir", repros], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
  if out.returncode not in (0, 1): raise RuntimeError(f"`planfuzz {' '.join(cmd[3:])}` failed (rc {out.returncode}): {out.stderr[-500:]}")
  return out


def rate(target: Target, seed: int, examples: int) -> dict:
  """This process's rate on examples whose kernels another process compiled into the disk cache first: warm as a
  nightly job that keeps tinygrad's cache is, with this process's in-memory caches still cold."""
  warm = (f"from fuzz.campaign.run import run_campaign; from oracle.targets import Target; "
          f"run_campaign(Target({target.kind!r}), {seed}, {examples}, stop_at_finding=False)")
  subprocess.run([sys.executable, "-c", warm], cwd=ROOT, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
  start = time.perf_counter()
  c = run_campaign(target, seed, examples, stop_at_finding=False)
  wall = time.perf_counter() - start
  overhead = wall / c.stats.run_seconds if c.stats.run_seconds > 0 else None  # the static target runs nothing
  return {"examples": c.stats.examples, "per_second": c.stats.examples / wall, "overhead": overhead,
          "findings": sum(c.stats.findings.values())}


def campaign_rate(target: str, seed: int, examples: int, workers: int, env: dict | None = None, engine: str = "plain") -> dict:
  """Examples per second of `planfuzz run --workers N` as its summary gives them (first example's start to last one's
  end, so process start is not in it), after the same campaign ran once to fill the disk cache."""
  _planfuzz_run(target, seed, examples, workers, env, engine)
  out = _planfuzz_run(target, seed, examples, workers, env, engine)
  if (m := re.search(r"wall clock: [0-9.]+s over \d+ workers \(([0-9.]+) examples/s\)", out.stdout)) is None:
    raise RuntimeError(f"no workers' wall clock in the summary of a {workers}-worker campaign of {examples} examples:\n{out.stdout[-500:]}")
  census = re.findall(r"graphs: (\d+)% of examples (.+)", out.stdout)
  return {"examples": examples, "workers": workers, "per_second": float(m.group(1))} | \
         ({"graphs": {what: int(share) for share, what in census}} if census else {})


def first_finding(tinygrad: str | None, target: str, mutant: str | None, seed: int, examples: int, replay_mutant: str | None = None,
                  env: dict | None = None) -> dict:
  """A fresh process's time to its first finding, on the tinygrad in folder `tinygrad` (None: the installed one)."""
  cmd = [sys.executable, str(ROOT / "bench/first_finding.py"), "--target", target, "--seed", str(seed), "--examples", str(examples)]
  cmd += (["--mutant", mutant] if mutant else []) + (["--replay-mutant", replay_mutant] if replay_mutant else [])
  out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (tinygrad, str(ROOT)) if p), **(env or {})})
  if out.returncode != 0: return {"found": False, "error": out.stderr.strip().splitlines()[-1:]}
  return json.loads(out.stdout)


def summarize(runs: list[dict]) -> dict:
  found = [r for r in runs if r.get("found")]
  secs = [r["seconds_from_start"] if r.get("found") else float("inf") for r in runs]
  return {"killed": f"{len(found)}/{len(runs)}", "median_s": statistics.median(secs), "max_s": max(secs),
          "median_examples": statistics.median(r.get("examples", 0) if r.get("found") else float("inf") for r in runs),
          "kinds": sorted({k for r in found for k in r.get("kinds", [])})}


def memory(examples: int) -> dict:
  c0 = run_campaign(Target(), 7, 50, stop_at_finding=False)
  base = rss_mb()
  run_campaign(Target(), 8, examples, stop_at_finding=False)
  return {"examples": examples + c0.stats.examples, "rss_after_warmup_mb": base, "rss_end_mb": rss_mb(),
          "growth_mb": rss_mb() - base, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--seeds", type=int, default=5)
  ap.add_argument("--examples", type=int, default=100, help="examples for the differential rate figures")
  ap.add_argument("--static-examples", type=int, default=1000,
                  help="examples for the static rate figures: a static program takes ~50 ms, so a short campaign measures "
                       "mostly each process's start, whose first examples run with tinygrad's in-memory caches cold "
                       "(over 2 workers: ~20/s for 200 examples, ~27/s for 400)")
  ap.add_argument("--workers", type=int, default=2, help="worker processes for the campaign rate figures")
  ap.add_argument("--budget", type=int, default=300, help="examples allowed to find a mutant or #16571")
  ap.add_argument("--memory-examples", type=int, default=1000)
  ap.add_argument("--old-tinygrad", default=str(ROOT / ".cache/tinygrad-0.13.0"),
                  help="a folder holding tinygrad 0.13.0 (`make old-tinygrad`)")
  ap.add_argument("--skip", nargs="*", default=[], choices=["rates", "mutants", "16571", "memory"])
  ap.add_argument("--emulated", action="store_true", help="also the emulated-GPU figures (tens of minutes)")
  ap.add_argument("--emulated-examples", type=int, default=300,
                  help="examples for the emulated rate figure (each worker's first ~15 s decode the emulator's instructions)")
  args = ap.parse_args()
  if "rates" not in args.skip and not 2 <= args.workers <= args.examples:
    ap.error("--workers must be at least 2 (the one-process rates are measured anyway) and at most --examples")
  report: dict = {}
  if "rates" not in args.skip:
    report["static"] = rate(Target("static"), 0, args.static_examples)
    report["differential"] = rate(Target(), 0, args.examples)
    report["static_workers"] = campaign_rate("static", 0, args.static_examples, args.workers)
    report["differential_workers"] = campaign_rate("planner", 0, args.examples, args.workers)
  if "mutants" not in args.skip:
    report["mutants"] = {}
    for name, m in MUTANTS.items():
      kind = "planner" if m.kind == "graph" else "static"  # graph-split runs only when compiling: dynamic
      runs = [first_finding(None, kind, name, s, args.budget) for s in range(args.seeds)]
      if not all(r.get("found") for r in runs) and kind == "static":
        runs = [first_finding(None, "planner", name, s, args.budget) for s in range(args.seeds)]
      report["mutants"][name] = summarize(runs) | {"target": runs[0].get("target", kind)}
  if "16571" not in args.skip and (Path(args.old_tinygrad) / "tinygrad").is_dir():
    report["16571_on_0.13.0"] = summarize([first_finding(args.old_tinygrad, "tinyjit", None, s, args.budget) for s in range(args.seeds)])
  if "memory" not in args.skip: report["memory"] = memory(args.memory_examples)
  if args.emulated: report |= emulated(args.emulated_examples, args.workers, args.seeds)
  print(json.dumps(report, indent=1, default=str))
  print_table(report)


def emulated(examples: int, workers: int, seeds: int) -> dict:
  """The emulated-GPU figures: the rate over `workers` (warm disk cache) and each graph mutant's kill times."""
  env = emulated_env()
  kills = {name: summarize([first_finding(None, "tinyjit", None, s, GRAPH_MUTANT_BUDGET, name, env) for s in range(seeds)])
           for name in of_engine("graph")}
  return {"emulated_workers": campaign_rate("tinyjit", 0, examples, workers, env), "graph_mutants": kills}


def print_table(report: dict) -> None:
  rows = []
  if "static" in report: rows.append(("static programs/s", f"{report['static']['per_second']:.1f}", ">= 20"))
  if "differential" in report:
    d = report["differential"]
    rows += [("differential examples/s (warm)", f"{d['per_second']:.2f}", ">= 2"), ("overhead ratio", f"{d['overhead']:.2f}", "<= 1.5")]
  for kind, goal in (("static", ">= 20"), ("differential", ">= 2")):
    if (w := report.get(f"{kind}_workers")) is not None:
      rows.append((f"{kind} examples/s, run --workers {w['workers']} (warm)", f"{w['per_second']:.2f}", goal))
  if (e := report.get("emulated_workers")) is not None:
    rows.append((f"emulated GPU examples/s, run --workers {e['workers']} (warm)", f"{e['per_second']:.2f}", ">= 1"))
    rows += [(f"  graphs: {what}", f"{share}% of examples", ">= 50%" if "replayed" in what else ">= 5%")
             for what, share in e.get("graphs", {}).items()]
  for name, m in report.get("graph_mutants", {}).items():
    rows.append((f"graph mutant {name}", f"{m['killed']} killed, median {m['median_s']:.1f}s / max {m['max_s']:.1f}s", "median <= 120 s"))
  for name, m in report.get("mutants", {}).items():
    rows.append((f"mutant {name}", f"{m['killed']} killed, median {m['median_s']:.1f}s / max {m['max_s']:.1f}s", "median <= 60 s"))
  if (r := report.get("16571_on_0.13.0")) is not None:
    rows.append(("#16571 on 0.13.0", f"{r['killed']} found, median {r['median_s']:.1f}s / max {r['max_s']:.1f}s", "median <= 30 s"))
  if (m := report.get("memory")) is not None:
    mem = f"peak {m['peak_mb']:.0f} MB, growth {m['growth_mb']:.0f} MB"
    rows.append((f"memory over {m['examples']} examples", mem, "growth <= 200 MB"))
  width = max(len(r[0]) for r in rows) if rows else 0
  for what, value, goal in rows: print(f"{what:<{width}}  {value:<45}  goal {goal}")


if __name__ == "__main__":
  main()
