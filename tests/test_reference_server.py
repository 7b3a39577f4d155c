"""An HCQ2 worker's reference comes from a helper process without HCQ2 (fuzz/campaign/reference_server.py): the
same trace, value for value, as the reference computed in the worker itself, at a fraction of its cost."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# in a process running HCQ2: each corpus program's reference from the helper and from this process, compared
COMPARE = """
import numpy as np
from fuzz.campaign.reference_server import _SERVER, reference_without_hcq2
from fuzz.gen.interpret import to_subject
from oracle.runs import FRESH, SAME_BUFFER, reference
from tests.test_campaigns import THROUGH_SECOND
from tests.test_repro_verdicts import COPY_AND_SHARD, FED_BACK, MIXED_ESCAPE, SYMBOLIC
compared = 0
for program in (THROUGH_SECOND, COPY_AND_SHARD, FED_BACK, MIXED_ESCAPE, SYMBOLIC):
  for mode in (SAME_BUFFER, FRESH):
    helped, here = reference_without_hcq2(program, mode, 5), reference(lambda: to_subject(program), 5, mode)
    assert helped is not None and len(helped.calls) == len(here.calls) == 5, (program, helped)
    for a, b in zip(helped.calls, here.calls):
      assert a.values.keys() == b.values.keys() and a.lazy == b.lazy and a.error is None and b.error is None
      for path in a.values: assert np.array_equal(a.values[path], b.values[path], equal_nan=True), (path, a.index); compared += 1
assert _SERVER[0].proc.poll() is None  # one helper served every request
print(compared)
"""


def test_an_hcq2_workers_reference_from_the_helper_equals_its_own() -> None:
  env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | {"HCQ2": "1"}
  out = subprocess.run([sys.executable, "-c", COMPARE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
  assert int(out.stdout.split()[-1]) > 50, out.stdout


def test_without_hcq2_there_is_no_helper() -> None:
  from fuzz.campaign.reference_server import reference_without_hcq2
  from tests.test_repro_verdicts import FED_BACK
  assert "HCQ2" not in os.environ and reference_without_hcq2(FED_BACK, "fresh", 5) is None


# in a process running HCQ2: the kernels a program's target run compiles itself, with the helper's handed over or not,
# and a digest of every value the target run's snapshots read
COMPILED = """
import hashlib, sys
from fuzz.campaign import reference_server
from fuzz.gen.interpret import to_subject
from oracle.runs import SAME_BUFFER, run
from oracle.targets import Target
from planner import kernel_cache
from tests.test_campaigns import THROUGH_SECOND
handed: dict = {}
adopt = kernel_cache.adopt
def keep(kernels): handed.update(kernels); sys.argv[1] == "adopt" and adopt(kernels)
reference_server.kernel_cache.adopt = keep
assert reference_server.reference_without_hcq2(THROUGH_SECOND, SAME_BUFFER, 5) is not None
before = set(kernel_cache.compiled_since(set()))
trace = run(lambda: to_subject(THROUGH_SECOND), Target("tinyjit").wrap, 5, SAME_BUFFER)
assert trace.error is None, trace.error
compiled = set(kernel_cache.compiled_since(before))
digest = hashlib.sha256(b"".join(c.values[p].tobytes() for c in trace.calls for p in sorted(c.values))).hexdigest()
print(len(handed), len(compiled), len(compiled & set(handed)), digest)
"""


def test_an_hcq2_worker_compiles_no_kernel_its_helper_compiled() -> None:
  """The helper hands over the kernels it compiled for a reference, so the worker's target run of that program compiles
  only what the reference did not (without them it compiled every one again), and reads the same values."""
  env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | {"HCQ2": "1"}
  runs = {}
  for how in ("adopt", "drop"):
    out = subprocess.run([sys.executable, "-c", COMPILED, how], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    *counts, digest = out.stdout.split()[-4:]
    runs[how] = (*map(int, counts), digest)
  (handed, compiled, _, adopted), (dropped, compiled_alone, again, alone) = runs["adopt"], runs["drop"]
  assert handed == dropped >= 3 and again == handed and compiled == compiled_alone - handed, runs
  assert adopted == alone, runs
