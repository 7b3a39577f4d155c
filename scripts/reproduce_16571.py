#!/usr/bin/env python3
"""`make reproduce-16571`: find tinygrad bug #16571 blind in the real tinygrad 0.13.0, and check it is gone in 0.14.0.

1. a fixed-seed `pytest fuzz/ --target tinyjit` campaign against tinygrad 0.13.0 (its own venv) must fail with a
   #16571-class finding: a lazy or JIT-realized escape (a .grad, a kept tensor) that reads wrong memory after capture;
2. the repro script it wrote needs only tinygrad and numpy, fails on 0.13.0 and passes on 0.14.0;
3. the same campaign against tinygrad 0.14.0 finds nothing.
Exit status 0 when all three hold; the lines printed say which step failed otherwise.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FINDING = re.compile(r"^# finding: \[(all-zeros|wrong-values|non-finite|stale)\] (\S+) at call (\d+)", re.M)


def on(tinygrad: str | None) -> dict[str, str]:
  """The environment that runs this python with the tinygrad installed in folder `tinygrad` (None: the installed one)."""
  return {**os.environ, "PYTHONPATH": os.pathsep.join([tinygrad, str(ROOT)] if tinygrad else [str(ROOT)])}


def campaign(tinygrad: str | None, seed: int, examples: int, repro_dir: Path, shrink: bool = True) -> subprocess.CompletedProcess:
  cmd = [sys.executable, "-m", "pytest", "fuzz/test_fuzz.py", "-q", "-p", "no:cacheprovider", "--target", "tinyjit",
         f"--hypothesis-seed={seed}", "--examples", str(examples), "--repro-dir", str(repro_dir), *([] if shrink else ["--no-shrink"])]
  return subprocess.run(cmd, cwd=ROOT, env={**on(tinygrad), "PLANFUZZ_PROFILE": "ci"}, capture_output=True, text=True)


def tail(out: subprocess.CompletedProcess, n: int = 8) -> str: return "\n".join((out.stdout + out.stderr).splitlines()[-n:])


def main() -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--old", default=str(ROOT / ".cache/tinygrad-0.13.0"), help="a folder holding tinygrad 0.13.0 "
                  "(pip install --no-deps --target DIR tinygrad==0.13.0); this python's own tinygrad must be 0.14.0")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--examples", type=int, default=60)
  ap.add_argument("--no-shrink", action="store_true", help="hand over the first failing program as drawn (quicker; on "
                  "0.14.0 its repro must then agree on the finding's observable, and may show 0.14.0's known bugs on others)")
  args = ap.parse_args()
  with tempfile.TemporaryDirectory() as tmp:
    old_dir, new_dir = Path(tmp) / "old", Path(tmp) / "new"
    start = time.perf_counter()
    if not (Path(args.old) / "tinygrad").is_dir(): return fail(f"no tinygrad in {args.old}: run `make old-tinygrad`")
    old = campaign(args.old, args.seed, args.examples, old_dir, shrink=not args.no_shrink)
    repros = sorted(old_dir.glob("*.py"))
    print(f"0.13.0 campaign (seed {args.seed}): exit {old.returncode} after {time.perf_counter() - start:.1f}s\n{tail(old)}")
    if old.returncode != 1 or not repros: return fail("the 0.13.0 campaign did not end with a finding")
    text = repros[0].read_text()
    if not (m := FINDING.search(text)) or int(m.group(3)) < 1: return fail(f"not a #16571-class finding:\n{text[:600]}")
    if re.search(r"^\s*(from|import) (planner|oracle|fuzz)\b", text, re.M): return fail("the repro imports planfuzz")
    body = text.split("def build():")[1].split("\ndef ")[0]
    print(f"finding: [{m.group(1)}] {m.group(2)} at call {m.group(3)}; repro {repros[0].name}, "
          f"{len(body.strip().splitlines())} lines of program")
    on_old = subprocess.run([sys.executable, str(repros[0])], env=on(args.old), capture_output=True, text=True)
    on_new = subprocess.run([sys.executable, str(repros[0])], env=on(None), capture_output=True, text=True)
    print(f"repro on 0.13.0: exit {on_old.returncode}; on 0.14.0: exit {on_new.returncode} ({on_new.stdout.strip()[:80]})")
    shows = f"MISMATCH {m.group(2)} at call"  # the finding's own observable
    fixed = on_new.returncode == 0 or (args.no_shrink and on_new.returncode == 1 and shows not in on_new.stdout)
    if on_old.returncode != 1 or shows not in on_old.stdout or not fixed:
      return fail(f"the repro must fail on 0.13.0 and pass on 0.14.0{' on ' + m.group(2) if args.no_shrink else ''}")
    new = campaign(None, args.seed, args.examples, new_dir)
    print(f"0.14.0 campaign (seed {args.seed}): exit {new.returncode}\n{tail(new)}")
    if new.returncode != 0: return fail("the same campaign on 0.14.0 found something")
  print("reproduce-16571: OK")
  return 0


def fail(why: str) -> int:
  print(f"reproduce-16571: FAILED: {why}", file=sys.stderr)
  return 1


if __name__ == "__main__":
  sys.exit(main())
