"""One run of a repro against one tinygrad: reproduces, does not, or cannot say.

The repro's exit status is its answer (planfuzz's scripts and fuzz/known's: 1 reproduced, 0 not). Anything else says
nothing about the bug: an import or API the tinygrad lacks (an uncaught exception would exit 1 too, so the repro runs
under a wrapper that turns one into its own status), a crash, a timeout. Such a commit is skipped, as `git bisect
skip` does.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BAD, GOOD, SKIP = "reproduces", "does not reproduce", "cannot say"
UNCAUGHT = 125  # git bisect's "skip" status
# runs the repro as __main__; an exception it lets escape (not SystemExit) exits UNCAUGHT with its last line
WRAPPER = f"""
import runpy, sys, traceback
path = sys.argv.pop(1)
try: runpy.run_path(path, run_name="__main__")
except SystemExit: raise
except BaseException as e:
  sys.stderr.write("".join(traceback.format_exception_only(type(e), e)))
  sys.exit({UNCAUGHT})
"""


@dataclass(frozen=True)
class Verdict:
  """What one run said, with why (the exit, the exception's last line, the timeout) and how long it took."""
  answer: str
  why: str
  seconds: float

  def __str__(self) -> str: return f"{self.answer} ({self.why}, {self.seconds:.1f}s)"


def environment(tree: Path | None) -> dict[str, str]:
  """This environment with `tree`'s tinygrad (and, exported with it, its emulator) first on the path; None: the
  installed tinygrad. A tinyjit repro needs only tinygrad and numpy, so nothing of planfuzz's goes on it."""
  env = dict(os.environ)
  if tree is not None: env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
  return env


def run_repro(repro: Path, tree: Path | None, timeout: float) -> Verdict:
  """`repro` run once against `tree`'s tinygrad (None: the installed one), from the repro's own folder."""
  start = time.perf_counter()
  try:
    out = subprocess.run([sys.executable, "-c", WRAPPER, str(repro.resolve())], cwd=repro.resolve().parent, capture_output=True,
                         text=True, timeout=timeout, env=environment(tree))
  except subprocess.TimeoutExpired: return Verdict(SKIP, f"timed out after {timeout:g}s", time.perf_counter() - start)
  took = time.perf_counter() - start
  if out.returncode == 1: return Verdict(BAD, "exit 1", took)
  if out.returncode == 0: return Verdict(GOOD, "exit 0", took)
  last = ((out.stderr or out.stdout).strip().splitlines() or [""])[-1][:160]
  if out.returncode == UNCAUGHT: return Verdict(SKIP, f"raised {last}", took)
  if out.returncode < 0: return Verdict(SKIP, f"killed by signal {-out.returncode}", took)
  return Verdict(SKIP, f"exit {out.returncode}" + (f": {last}" if last else ""), took)
