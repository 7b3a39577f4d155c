#!/usr/bin/env python3
"""HCQ2 against the plain engine, side by side in one run (a script, not a test): prints a JSON report and a table.

Figures, each engine in processes of its own (tinygrad reads HCQ2 at import):
- tinygrad alone: six small training steps, each run eagerly 5 times then under TinyJit 5 times, in a fresh process
  whose disk cache of compiled kernels is warm (a first run fills it) and whose memory is not: a campaign's every
  example is a program its process has not run, so HCQ2 lowers each capture anew (an in-process second run would find
  its 'hcq' calls cached, which no campaign does); median of 3 runs per engine, the engines interleaved; their ratio is
  what HCQ2 costs tinygrad itself;
- planfuzz: a two-worker `planfuzz run --target tinyjit --engine E` campaign's rate per engine (the same seed and
  examples, its disk cache filled by a first run); the ratio of the rates is what HCQ2 costs a campaign;
- planfuzz's own share: the campaign's ratio over tinygrad's (goal: at most what planfuzz's overhead is without HCQ2,
  1.07 in bench/run.py), i.e. an HCQ2 campaign's rate at least tinygrad's HCQ2/plain ratio times the plain rate;
- the same on the campaign's own programs (the six steps are not what a campaign runs: its programs realize more
  schedules per call, and under HCQ2 each eager schedule is lowered anew): one process times `run_campaign`, another
  the same drawn programs under TinyJit alone; planfuzz's overhead per engine is their ratio, and its share the HCQ2
  overhead over the plain one (goal: at most 1, no more overhead under HCQ2 than without); beside it what one read of a
  realized tensor costs per engine (the oracle reads every live tensor after every call), and the HCQ2 overhead's
  floor: each program's reference from the helper without HCQ2, then tinygrad alone, and nothing else of the oracle's
  (a plain campaign's reference warms its target run in-process; an HCQ2 one pays the reference beside a full run);
- each HCQ2 replay mutant's seconds to kill from process start, in a fixed-seed CPU campaign of at most 150 examples
  (planner/engines/hcq2.py; goal: every one killed).
With --emulated the same on tinygrad's emulated AMD GPU (HCQ2 there runs its runtime on the PYTHON device).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tinygrad import Tensor  # noqa: E402

from bench.run import campaign_rate, emulated_env, first_finding, summarize  # noqa: E402
from planner.engines import hcq2, of_engine  # noqa: E402

KILL_BUDGET = 150
# six small training steps, eager x5 then TinyJit x5 each: tinygrad's own cost per engine, no planfuzz in it
ALONE = """
import time
import numpy as np
from tinygrad import Context, Device, Tensor, TinyJit
D0, D1 = Device.DEFAULT, Device.DEFAULT.split(":")[0] + ":1"
def steps():
  def linear(w, x): return (x @ w).relu().sum()
  def conv(w, x): return x.reshape(2, 3, 8, 4).conv2d(w.reshape(-1)[:54].reshape(2, 3, 3, 3), padding=1).sum()
  def chain(w, x): return ((x @ w).exp() * 0.5 + (x @ w).sigmoid()).mean()
  def sliced(w, x): return (x[:, 4:20] @ w[4:20]).sum()
  def reduce(w, x): return (x.max(axis=1) - x.min(axis=1)).sum() + w.sum()
  def copy(w, x): return (x.to(D1) @ w.to(D1)).to(D0).sum()
  return [linear, conv, chain, sliced, reduce, copy]
def run():
  for f in steps():
    w = Tensor(np.random.default_rng(0).standard_normal((24, 24)).astype(np.float32)).realize()
    def step(x):
      w.grad = None
      loss = f(w, x)
      loss.backward()
      w.assign(w.detach() - 0.01 * w.grad).realize()
      return loss.realize()
    with Context(TRAINING=1):
      for jit in (False, True):
        g = TinyJit(step) if jit else step
        for k in range(5): g(Tensor(np.full((8, 24), k * 0.1, np.float32)).realize()).numpy()
Tensor.ones(4).contiguous().realize()  # the device open, which a campaign's worker pays once
t = time.perf_counter(); run(); print(time.perf_counter() - t)
"""


def engine_env(engine: str, env: dict | None) -> dict:
  base = hcq2.without({**os.environ, **(env or {})})
  return base | hcq2.process_env(base) if engine == "hcq2" else base


def result_of(code: str, engine: str, env: dict | None) -> Any:
  """What `code` prints last (one JSON value), run by a fresh Python process on `engine`."""
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=engine_env(engine, env))
  if out.returncode != 0: raise RuntimeError(f"{code.strip().splitlines()[-1]} under {engine} failed: {out.stderr[-800:]}")
  try: return json.loads(out.stdout.splitlines()[-1])
  except (IndexError, json.JSONDecodeError):
    raise RuntimeError(f"{code.strip().splitlines()[-1]} under {engine} printed no JSON last: {out.stdout[-400:]!r}") from None


def seconds_of(code: str, engine: str, env: dict | None) -> float: return float(result_of(code, engine, env))


def tinygrad_alone(engine: str, env: dict | None) -> float: return seconds_of(ALONE, engine, env)


def side_by_side(examples: int, seed: int, env: dict | None, runs: int) -> dict:
  alone: dict[str, list[float]] = {"plain": [], "hcq2": []}
  for engine in alone: tinygrad_alone(engine, env)  # fills the disk cache
  for _ in range(runs):  # interleaved, so a slow minute of the machine hits both engines
    for engine in alone: alone[engine].append(tinygrad_alone(engine, env))
  rates = {e: campaign_rate("tinyjit", seed, examples, 2, engine_env(e, env), e)["per_second"] for e in ("plain", "hcq2")}
  tinygrad_ratio = statistics.median(alone["hcq2"]) / statistics.median(alone["plain"])
  campaign_ratio = rates["plain"] / rates["hcq2"]
  return {"tinygrad_alone_s": {e: statistics.median(v) for e, v in alone.items()}, "tinygrad_ratio": tinygrad_ratio,
          "campaign_per_second": rates, "campaign_ratio": campaign_ratio, "planfuzz_share": campaign_ratio / tinygrad_ratio,
          "goal_hcq2_per_second": rates["plain"] / tinygrad_ratio}


def same_programs(examples: int, seeds: list[int], env: dict | None) -> dict:
  """planfuzz's overhead over tinygrad alone on the very programs a campaign judges, per engine: one process runs
  `run_campaign` (reference, target, oracle), another runs the same drawn programs under TinyJit alone, reading only
  what each call returns, as a user's loop does; each in a fresh process after a first run filled the disk cache. One
  sample of `examples` per seed, summed: a sample whose campaign the emulator stopped on either engine (its device
  broke: fuzz/campaign/run.py) is left out of both, with why. Every process is told the device's usable dtypes, probed
  once here, as `planfuzz run` tells its workers (a probe is a kernel compiled and run, seconds under HCQ2)."""
  env = (env or {}) | result_of("from fuzz.gen.features.dtypes import DTYPES; from planner import tg; import json; "
                                "print(json.dumps(tg.probed_env(DTYPES)))", "plain", env)

  def timed(code: str, engine: str) -> Any:
    return result_of(f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); from bench.hcq2 import *; {code}", engine, env)
  report: dict = {"samples": {}, "left_out": {}}
  for s in seeds:
    sample: dict = {}
    in_process = f"print(json.dumps(campaign_in_process({s}, {examples})))"
    for engine in ("plain", "hcq2"):
      timed(in_process, engine)  # fills the disk cache
      campaign = timed(in_process, engine)
      if campaign["stopped"]:
        report["left_out"][s] = f"{engine}: {campaign['stopped']}"
        break
      sample[engine] = {"campaign_s": campaign["seconds"], "tinygrad_alone_s": timed(f"print(tinyjit_alone({s}, {examples}))", engine)}
    else:
      sample["hcq2"]["floor_s"] = timed(f"print(tinyjit_alone({s}, {examples}, referenced=True))", "hcq2")
      report["samples"][s] = sample
  if not report["samples"]: return report  # the emulator broke every sample: nothing to compare
  for engine in ("plain", "hcq2"):
    total = {k: sum(v[engine][k] for v in report["samples"].values()) for k in ("campaign_s", "tinygrad_alone_s")}
    report[engine] = total | {"overhead": total["campaign_s"] / total["tinygrad_alone_s"], "read_ms": timed("print(read_ms())", engine)}
  report["tinygrad_ratio"] = report["hcq2"]["tinygrad_alone_s"] / report["plain"]["tinygrad_alone_s"]
  report["campaign_ratio"] = report["hcq2"]["campaign_s"] / report["plain"]["campaign_s"]
  report["planfuzz_share"] = report["campaign_ratio"] / report["tinygrad_ratio"]
  floor = sum(v["hcq2"]["floor_s"] for v in report["samples"].values()) / report["hcq2"]["tinygrad_alone_s"]
  report["hcq2"]["floor_overhead"], report["floor_share"] = floor, floor / report["plain"]["overhead"]
  return report


def campaign_in_process(seed: int, examples: int) -> dict:
  """Seconds of a one-process tinyjit campaign (as bench/run.py's rate), its device opened first, and why it stopped
  short (the emulated device broke), if it did."""
  from fuzz.campaign.run import run_campaign
  from oracle.targets import Target
  Tensor.ones(4).contiguous().realize()
  start = time.perf_counter()
  c = run_campaign(Target("tinyjit"), seed, examples, stop_at_finding=False)
  return {"seconds": time.perf_counter() - start, "stopped": c.stopped}


def read_ms(tensors: int = 50) -> float:
  """Milliseconds one read (`.numpy()`) of a small realized tensor takes, warm: the oracle reads every live tensor
  after every call, where a user's loop reads what it returns, so this is the engine's price of planfuzz's reads."""
  import numpy as np
  ts = [(Tensor(np.arange(64, dtype=np.float32)) * i + 1).realize() for i in range(tensors)]
  for t in ts: t.numpy()
  start = time.perf_counter()
  for t in ts: t.numpy()
  return (time.perf_counter() - start) / tensors * 1000


def tinyjit_alone(seed: int, examples: int, calls: int = 5, referenced: bool = False) -> float:
  """Seconds tinygrad alone takes on the programs `run_campaign` draws at this seed: each under TinyJit for the
  campaign's calls with its drawn knobs and input mode, its eval step jitted beside it, a reset where it has one,
  every returned tensor read; no reference, no oracle. `referenced` (an HCQ2 process): each program's reference
  first, from the helper without HCQ2 with its kernels handed over, as an HCQ2 worker takes it: the floor of a
  campaign that judges an HCQ2 run against a reference run without HCQ2 and does nothing else (no reads of what a
  step keeps, no poison, no attribution)."""
  from fuzz.campaign.reference_server import reference_without_hcq2
  from fuzz.campaign.run import for_each_drawn
  from fuzz.gen.interpret import to_subject
  from oracle.runs import InputTensors, jitted, returned_paths
  from oracle.targets import Target
  from planner import tg
  wrap = Target("tinyjit").wrap

  def alone(program: Any, mode: str, knobs: dict[str, int]) -> None:
    if referenced and reference_without_hcq2(program, mode, calls) is None: raise RuntimeError("no reference helper here")
    with tg.knobs(knobs):
      subject = to_subject(program)
      step, call = jitted(subject, wrap)
      evaluate = None if subject.evaluate is None else wrap(subject.evaluate, False)
      inputs, ret = InputTensors(mode), None
      try:
        for k in range(calls):
          if k == subject.reset: step.reset()
          args = inputs(subject.inputs(k, ret))
          ret = call(*args)
          for _, t in returned_paths((ret, evaluate(*args) if evaluate else None)): t.numpy()
      except Exception: pass  # a program tinygrad rejects costs what it ran, as in the campaign
  Tensor.ones(4).contiguous().realize()
  start = time.perf_counter()
  for_each_drawn(seed, examples, None, alone)
  return time.perf_counter() - start


def kills(seeds: int, env: dict | None) -> dict:
  return {name: summarize([first_finding(None, "tinyjit", None, s, KILL_BUDGET, name, engine_env("hcq2", env)) for s in range(seeds)])
          for name in of_engine("hcq2")}


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--examples", type=int, default=40, help="examples of each engine's rate campaign")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--samples", type=int, default=1, help="samples of --examples programs each, at seeds --seed, --seed + 1, ..., "
                  "for the campaign's-own-programs figure")
  ap.add_argument("--seeds", type=int, default=2, help="seeds per mutant kill")
  ap.add_argument("--runs", type=int, default=3, help="tinygrad-alone runs per engine (median)")
  ap.add_argument("--skip", nargs="*", default=[], choices=["rates", "programs", "mutants"])
  ap.add_argument("--emulated", action="store_true", help="on tinygrad's emulated AMD GPU instead of the CPU")
  args = ap.parse_args()
  env = emulated_env() if args.emulated else None
  start, report = time.perf_counter(), {"device": "emulated AMD" if args.emulated else "CPU"}
  if "rates" not in args.skip: report["side_by_side"] = side_by_side(args.examples, args.seed, env, args.runs)
  if "programs" not in args.skip:
    report["same_programs"] = same_programs(args.examples, list(range(args.seed, args.seed + args.samples)), env)
  if "mutants" not in args.skip: report["hcq2_mutants"] = kills(args.seeds, env)
  report["seconds"] = time.perf_counter() - start
  print(json.dumps(report, indent=1, default=str))
  if (s := report.get("side_by_side")) is not None:
    print(f"tinygrad alone: plain {s['tinygrad_alone_s']['plain']:.2f}s, hcq2 {s['tinygrad_alone_s']['hcq2']:.2f}s: "
          f"HCQ2 costs tinygrad {s['tinygrad_ratio']:.2f}x")
    print(f"planfuzz campaign: plain {s['campaign_per_second']['plain']:.2f}/s, hcq2 {s['campaign_per_second']['hcq2']:.2f}/s: "
          f"HCQ2 costs the campaign {s['campaign_ratio']:.2f}x; planfuzz's own share {s['planfuzz_share']:.2f} (goal <= 1.07: "
          f"hcq2 >= {s['goal_hcq2_per_second']:.2f}/s)")
  p = report.get("same_programs")
  if p is not None and not p["samples"]:
    print(f"on the campaign's own programs: every sample left out, the emulator broke: {p['left_out']}")
  elif p is not None:
    kept = f"{len(p['samples'])} samples of {args.examples}"
    kept += f", {len(p['left_out'])} left out (the emulator broke)" if p["left_out"] else ""
    print(f"on the campaign's own programs ({kept}), one process each: tinygrad alone plain {p['plain']['tinygrad_alone_s']:.1f}s, hcq2 "
          f"{p['hcq2']['tinygrad_alone_s']:.1f}s ({p['tinygrad_ratio']:.2f}x); campaign plain {p['plain']['campaign_s']:.1f}s, hcq2 "
          f"{p['hcq2']['campaign_s']:.1f}s ({p['campaign_ratio']:.2f}x); planfuzz's overhead plain {p['plain']['overhead']:.2f}, "
          f"hcq2 {p['hcq2']['overhead']:.2f}: share {p['planfuzz_share']:.2f} (goal <= 1: no more overhead under HCQ2); "
          f"floor of the HCQ2 overhead (its reference without HCQ2, then tinygrad alone; no other oracle work) "
          f"{p['hcq2']['floor_overhead']:.2f}, share {p['floor_share']:.2f}; "
          f"one read of a realized tensor: plain {p['plain']['read_ms']:.1f} ms, hcq2 {p['hcq2']['read_ms']:.1f} ms")
  for name, m in report.get("hcq2_mutants", {}).items():
    print(f"hcq2 mutant {name}: {m['killed']} killed, median {m['median_s']:.1f}s / max {m['max_s']:.1f}s, "
          f"median {m['median_examples']} examples (budget {KILL_BUDGET})")


if __name__ == "__main__":
  main()
