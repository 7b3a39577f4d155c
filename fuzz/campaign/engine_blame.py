"""Blame on HCQ2 replay: a new finding that no in-process stage explains ('capture') under HCQ2 is run again in a
fresh process without HCQ2; gone there, it is blamed on 'hcq2'.

HCQ2 is a process's setting (tinygrad reads it at import), so attribution's in-process reruns (planner off, JIT=2,
prune off: oracle/attribution.py) all run through HCQ2 too, and a fault in HCQ2's replay survives every one of them.
The one rerun that tells it apart is the same example in a process that replays without HCQ2, as the graph stage is
told by JIT=2. It costs a process start, so it runs only for findings no known tinygrad bug explains.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from fuzz.gen.program import Program
from oracle.compare import Verdict
from oracle.findings import Finding
from oracle.targets import Target
from planner.engines import hcq2

ROOT = Path(__file__).resolve().parents[2]
HCQ2_STAGE = "hcq2"
TIMEOUT_S = 300
# judges the example given on stdin (reprs: a Program, a Target, calls, mode) and prints its findings' (subject, call)
RERUN = """
import json, sys
from fuzz.campaign.example import run_example
from fuzz.gen.program import *  # noqa: F403 (the program's repr is written with the IR's constructors)
from oracle.targets import Target
program, target, calls, mode = eval(sys.stdin.read())
print(json.dumps([[f.subject, f.call] for f in run_example(program, target, calls, mode).verdict.findings]))
"""


def blame_engine(verdict: Verdict, new: list[Finding], program: Program, target: Target, calls: int, mode: str) -> Verdict:
  """`verdict` with those of `new` (findings no known bug explains) blamed on 'capture' blamed on 'hcq2' where a run
  without HCQ2 does not show them; unchanged where this process does not run HCQ2, or the rerun cannot say."""
  suspects = [f for f in new if f.attribution == "capture" and f.call is not None]
  if not suspects or not hcq2.active(): return verdict
  still = without_hcq2(program, target, calls, mode)
  if still is None: return verdict
  gone = {id(f) for f in suspects if (f.subject, f.call) not in still}
  return replace(verdict, findings=[f.blamed(HCQ2_STAGE) if id(f) in gone else f for f in verdict.findings])


def without_hcq2(program: Program, target: Target, calls: int, mode: str) -> set[tuple[str, int]] | None:
  """The (subject, call) of every finding the example shows in a fresh process without HCQ2; None when that run
  failed (it cannot say)."""
  example = repr((program, target.with_knobs(HCQ2=0), calls, mode))
  try: out = subprocess.run([sys.executable, "-c", RERUN], input=example, capture_output=True, text=True, cwd=ROOT,
                            env=hcq2.without(os.environ), timeout=TIMEOUT_S)
  except subprocess.TimeoutExpired: return None
  if out.returncode != 0: return None
  return {(s, c) for s, c in json.loads(out.stdout.strip().splitlines()[-1])}
