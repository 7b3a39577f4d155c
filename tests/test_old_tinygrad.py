"""End to end against older tinygrads, each installed in a folder of its own that shadows 0.14.0 on PYTHONPATH.

The tinyjit target uses only tinygrad's public API, so it runs on 0.12.0 and 0.13.0 too: the fuzzer finds #16571
blind in 0.13.0 (`make reproduce-16571`), and what it finds in 0.12.0 are bugs 0.14.0 has fixed.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def old_tinygrad(version: str) -> Path:
  """The folder `make` installs tinygrad `version` into (pip install --no-deps --target)."""
  folder = ROOT / f".cache/tinygrad-{version}"
  made = subprocess.run(["make", "-s", f"{folder.relative_to(ROOT)}/.installed"], cwd=ROOT, capture_output=True, text=True)
  assert made.returncode == 0, made.stdout + made.stderr
  return folder


def on(tinygrad: Path | None) -> dict[str, str]:
  return {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in (tinygrad, ROOT) if p is not None)}


@pytest.mark.slow
def test_reproduce_16571_on_real_tinygrad() -> None:
  """`make reproduce-16571` at its 60 examples and with `--no-shrink` (shrinking the finding is most of its five
  minutes): found blind in 0.13.0, its repro fails there on the finding's observable and agrees on it in 0.14.0 (the
  unshrunk program may also show 0.14.0's known bugs elsewhere), and the same campaign is clean in 0.14.0."""
  out = subprocess.run([sys.executable, "scripts/reproduce_16571.py", "--old", str(old_tinygrad("0.13.0")), "--examples", "60",
                        "--no-shrink"], cwd=ROOT,
                       capture_output=True, text=True, timeout=1200)
  assert out.returncode == 0, out.stdout + out.stderr
  assert "repro on 0.13.0: exit 1;" in out.stdout and "reproduce-16571: OK" in out.stdout, out.stdout


@pytest.mark.slow
def test_tinyjit_target_on_tinygrad_0_12_finds_only_bugs_fixed_since(tmp_path: Path) -> None:
  """On 0.12.0 (parameters need requires_grad=True, training is Tensor.train()) programs run and none is rejected but
  by a refusal TinyJit documents (0.12.0 schedules nothing for a constant grad: "didn't JIT anything"),
  the plan checks are skipped with one notice, and every new bug's repro fails there and passes on 0.14.0 (the known
  tinygrad bugs of 0.14.0 it may also meet are listed apart, and still fail on 0.14.0)."""
  old = old_tinygrad("0.12.0")
  cmd = [sys.executable, "-m", "fuzz.campaign.cli", "run", "--target", "tinyjit", "--examples", "15", "--seed", "0",
         "--repro-dir", str(tmp_path), "--db", "none", "--shrink-budget", "5"]
  out = subprocess.run(cmd, cwd=ROOT, env=on(old), capture_output=True, text=True, timeout=600)
  text = out.stdout + out.stderr
  assert out.returncode in (0, 1), text
  assert text.count("static plan invariants skipped") == 1 and "found tinygrad 0.12.0" in text, text
  rejected = re.search(r"^15 examples in .*\nrejected: (\d+) .*\n((?:  \d+ x .*\n)*)", text, re.M)
  assert rejected and int(rejected.group(1)) <= 1, text
  assert all("x jit: JitError" in line for line in rejected.group(2).splitlines()), text  # refusals TinyJit documents only
  repros = [Path(b["repro"]) for b in json.loads((tmp_path / "report.json").read_text())["bugs"] if b["new"]]
  assert (out.returncode == 1) == bool(repros), text
  for repro in repros:
    on_old = subprocess.run([sys.executable, str(repro)], env=on(old), capture_output=True, text=True, timeout=300)
    on_new = subprocess.run([sys.executable, str(repro)], env=on(None), capture_output=True, text=True, timeout=300)
    assert (on_old.returncode, on_new.returncode) == (1, 0), f"{repro.name}:\n{on_old.stdout[-800:]}\n{on_new.stdout[-800:]}"
