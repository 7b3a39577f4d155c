"""Confirm a bug in a fresh process: run its repro script alone. A bug whose repro agrees there, or fails there only on
other observables (a known tinygrad bug the same program also shows), depends on what ran before it in the worker
(planfuzz state leaking between examples, or a tinygrad cache), so it is reported as context-dependent with a script
that replays the worker's preceding programs in order (`context_script`).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fuzz.gen.printer import raised_type
from oracle.findings import JIT_ERROR, VALUE_KINDS, Finding

# a bug's status: not run alone yet (or its repro failed otherwise), reproduced alone, agrees alone, a known tinygrad bug,
# reproduced alone and with the JIT off too (on a GPU or its emulator: the device's, never counted as a JIT bug)
UNCONFIRMED, CONFIRMED, CONTEXT_DEPENDENT, KNOWN = "unconfirmed", "confirmed", "context-dependent", "known"
DEVICE = "device, not JIT"
CONFIRM_TIMEOUT = 300.0


def fresh_env() -> dict[str, str]:
  """The environment a repro runs in, here and under `planfuzz replay`: the current directory first on the path
  (planner-target repros import planfuzz and the user's plugins from it, as `planfuzz run` does)."""
  return {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *filter(None, [os.environ.get("PYTHONPATH")])])}


def expected_line(f: Finding | None) -> str | None:
  """What a repro prints when it shows finding `f`: its observable's mismatch, or its invariant's kind (buffer names
  differ between processes); None where only the exit status tells (an error, a crash, a hang)."""
  if f is None: return None
  if f.kind == JIT_ERROR and raised_type(f) is not None: return "MISMATCH the JIT raised"
  if f.kind in VALUE_KINDS and f.kind != JIT_ERROR: return f"MISMATCH {f.subject} at call"
  return f"MISMATCH (static) [{f.kind}]" if f.call is None and f.kind.startswith("invariant:") else None


def run_fresh(script: str | Path, timeout: float = CONFIRM_TIMEOUT, expect: str | None = None,
              env: dict[str, str] | None = None) -> tuple[str, str]:
  """(status, what happened) of one script run alone (with `env` over the environment): exit 1 (showing `expect` when
  given) or death by a signal or a hang reproduces, exit 0 or a failure on other observables does not."""
  started = time.perf_counter()
  try: out = subprocess.run([sys.executable, str(script)], env=fresh_env() | (env or {}), capture_output=True, text=True, timeout=timeout)
  except subprocess.TimeoutExpired: return CONFIRMED, f"hung for {timeout:g}s"
  took = f" (in {time.perf_counter() - started:.0f}s)"
  if out.returncode == 1 and expect is not None and expect not in out.stdout:
    shown = next((line for line in out.stdout.splitlines() if line.startswith("MISMATCH")), "no mismatch line")
    return CONTEXT_DEPENDENT, f"the repro fails alone, but not on this finding ({shown[:120]})"
  if out.returncode == 1: return CONFIRMED, "the repro reproduces alone" + took
  if out.returncode < 0: return CONFIRMED, f"the repro was killed by signal {-out.returncode}"
  if out.returncode == 0: return CONTEXT_DEPENDENT, "the repro agrees when run alone" + took
  return UNCONFIRMED, f"the repro exited {out.returncode}: {(out.stderr or out.stdout).strip().splitlines()[-1:]}"


def confirm_all(scripts: list[str | Path], parallel: int, timeout: float = CONFIRM_TIMEOUT,
                expects: list[str | None] | None = None) -> list[tuple[str, str]]:
  """`run_fresh` on each script (expecting the line `expects` gives it), `parallel` at a time; a script running past
  `timeout` confirms a hang."""
  lines = expects or [None] * len(scripts)
  with ThreadPoolExecutor(max(1, parallel)) as pool:
    return list(pool.map(lambda job: run_fresh(job[0], timeout, job[1]), zip(scripts, lines, strict=True)))


def locate(repro: str | Path, jit_off: str | Path, device: str, timeout: float = CONFIRM_TIMEOUT,
           expect: str | None = None) -> tuple[str, str]:
  """Where a bug confirmed on a GPU (or its emulator) lives: (its status, what says so). Its repro with TinyJit off
  (`fuzz.gen.printer.jit_off_script`) reproducing too makes it the device's, not the JIT's (DEVICE). Otherwise it is
  the JIT's, and its repro run on the CPU says whether it is this device's JIT path only (the graph runner, say) or
  the JIT everywhere."""
  if run_fresh(jit_off, timeout, expect)[0] == CONFIRMED:
    return DEVICE, f"it shows with the JIT off too ({Path(jit_off).name}): {device} or its emulator, not the JIT"
  on_cpu = run_fresh(repro, timeout, expect, env={"DEV": "CPU"})[0] == CONFIRMED
  return CONFIRMED, "the JIT's: not with the JIT off; " + ("also on CPU" if on_cpu else f"only on {device}, not on CPU")


def context_script(history: list[tuple], failing: tuple, target: Any, calls: int) -> str:
  """A script that runs, in one process and in order, the programs a worker ran before a bug showed, then the
  program that showed it, each judged as the worker judged it; exit 1 when the last one still has a finding."""
  rows = ",\n".join(f"  ({program!r}, {mode!r}, {dict(knobs)!r})" for program, mode, knobs in history)
  program, mode, knobs = failing
  return f'''#!/usr/bin/env python3
"""planfuzz context replay: {len(history)} program(s) a worker ran before a bug showed, then the one it showed in.

The bug's own repro agrees when run alone, so something the earlier programs left behind (in planfuzz or in a
tinygrad cache) matters. Run from the planfuzz checkout. Exit status 1: the last program still shows the finding.
"""
import sys

from fuzz.campaign.example import run_example, under_knobs
from fuzz.gen.program import *  # noqa: F403 (the programs below are written with the IR's constructors)
from oracle.targets import Target

TARGET, CALLS = {target!r}, {calls}
PRECEDING = [
{rows}
]
FAILING = ({program!r}, {mode!r}, {dict(knobs)!r})

for i, (program, mode, knobs) in enumerate(PRECEDING):
  run_example(program, under_knobs(TARGET, knobs), CALLS, mode)
outcome = run_example(FAILING[0], under_knobs(TARGET, FAILING[2]), CALLS, FAILING[1], attribute=True)
for f in outcome.findings: print(f.message)
print("reproduced after the preceding programs" if outcome.findings else "not reproduced")
sys.exit(1 if outcome.findings else 0)
'''
