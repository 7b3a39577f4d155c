"""Every known tinygrad bug (and every one the generator avoids) still reproduces: a strict xfail, so the day
tinygrad fixes one, this turns red.

Only the repro's own verdict counts as the expected failure (exit 1 with a MISMATCH line): a repro that crashes
for another reason is a real failure, never hidden behind the xfail. Each repro runs on a device it is known on:
a bug of the CPU device or its compiler is checked on the CPU whatever DEV this session runs on, and one of the AMD
GPU's graph path on tinygrad's emulated AMD GPU where no AMD GPU is (skipped, saying why, without the mock files)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.known.avoided import AVOIDED_BUGS
from fuzz.known.bugs import KNOWN_BUGS, repro_device
from oracle.device import emulated_process
from planner.engines import graph, hcq2


class StillReproduces(AssertionError):
  pass


@pytest.mark.parametrize("bug", KNOWN_BUGS + AVOIDED_BUGS, ids=lambda b: b.name)
@pytest.mark.xfail(strict=True, raises=StillReproduces, reason="a known tinygrad bug: see fuzz/known/bugs.py")
def test_known_bug_is_fixed(bug) -> None:
  out = subprocess.run([sys.executable, str(bug.repro)], capture_output=True, text=True, timeout=300, env=repro_env(bug))
  if out.returncode == 1 and "MISMATCH" in out.stdout: raise StillReproduces(out.stdout)
  assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def repro_env(bug) -> dict[str, str]:
  """This process's environment where the bug is known on its device, else one of a device it is known on; with what
  HCQ2 needs there besides HCQ2=1, which an HCQ2 repro sets itself (on the emulated GPU its runtime on the PYTHON
  device: without it the CPU runtime waits out tinygrad's 30 s hang detection)."""
  if (dev := repro_device(bug)) is None: env = dict(os.environ)
  elif dev != "AMD": env = os.environ | {"DEV": dev}
  else:
    emulated, why = emulated_process(str(Path(__file__).resolve().parent.parent))
    if emulated is None: pytest.skip(f"{bug.name} is known on the AMD GPU: its repro runs on the emulated one, not here ({why})")
    env = emulated
  return env | {k: v for k, v in hcq2.process_env(env).items() if k != "HCQ2"}


@pytest.mark.parametrize("target", ["planner", "tinyjit"])
def test_an_unsound_prune_is_the_known_prune_bug(target: str) -> None:
  """Every finding the prune bug's mechanism produces, once blamed, is that known bug and nothing else."""
  from fuzz.known.bugs import known_bug
  from oracle.check import check
  from oracle.targets import Target
  from tests.programs import prune_reads_updated_state
  verdict = check(prune_reads_updated_state, Target(target))
  assert len(verdict.findings) == 4
  assert {known_bug(f).name for f in verdict.findings} == {"prune-freezes-state-reader"}


def test_a_mixed_value_lazy_escape_is_the_known_bug_by_its_mechanism() -> None:
  """p0.grad = relu(x).contiguous() * x * p0's grad, left lazy: after the capture call its first read freezes the
  contiguous while x is live, so replays show values of no call (wrong-values, not stale). It is still the known bug:
  realized inside the step, the difference vanishes."""
  from fuzz.campaign.example import run_example
  from fuzz.gen.program import Backward, Leaf, Op, Program
  from fuzz.known.bugs import known_bug
  from oracle.targets import Target
  program = Program(params=(Leaf("p0", (8,), seed=1),), inputs=(Leaf("x0", (8,), seed=2),), state=(),
                    body=(Op("relu", ("x0",), "v0"), Op("contiguous", ("v0",), "v1"), Op("mul", ("v1", "x0"), "v2"),
                          Op("mul", ("v2", "p0"), "v3"), Op("scale", ("x0", 2.0), "v4")),
                    backward=(Backward("v3"),), returns="v4")
  verdict = run_example(program, Target("tinyjit"), 5, "same-buffer")
  assert not verdict.findings and {name for name, _ in verdict.known} == {"lazy-escape-frozen-on-read"}, verdict
  mixed = [f for _, f in verdict.known if f.kind == "wrong-values"]
  assert mixed and all(known_bug(f, program) is None for f in mixed)  # only the mechanism rerun tells them


@pytest.mark.parametrize("target", ["planner", "tinyjit"])
def test_a_wrong_result_fed_back_is_judged_once(target: str) -> None:
  """The lazy symbolic mean a step returns is the known bug on every replay at another n; passed back as the next
  call's argument it makes every later observable incomparable (skipped), so the p.grad it feeds is no finding."""
  from fuzz.known.bugs import known_bug
  from oracle.check import check
  from oracle.compare import FED_BACK
  from oracle.targets import Target
  from tests.programs import symbolic_mean_fed_back
  verdict = check(symbolic_mean_fed_back, Target(target), 5, "fresh")
  assert {f.subject for f in verdict.findings} == {"ret"}, [f.message for f in verdict.findings]
  assert {known_bug(f).name for f in verdict.findings} == {"symbolic-mean-left-lazy"}
  assert verdict.skipped[FED_BACK] > 0 and verdict.compared >= 6


def test_an_input_assign_dropped_where_graphed_is_still_the_known_bug() -> None:
  """On the emulated AMD GPU, after a jit.reset(), an input assigned in the step keeps the caller's data only where the
  recapture is graphed (JIT=2 keeps the assign), so the finding is blamed on the graph. It is jit-input-assign-dropped
  all the same when its mechanism shows (gone once the step realizes the assign); on another stage, or without the
  mechanism, it is no known bug."""
  from fuzz.known.bugs import known_bug
  from oracle.compare import Verdict
  from oracle.findings import Finding
  from tests.test_steps import INPUT_ASSIGN
  wrong = Finding("wrong-values", "x0", 4, "replay 1 after reset")
  gone, stays = lambda program: Verdict(), lambda program: Verdict(findings=[wrong])
  assert known_bug(wrong.blamed("graph"), INPUT_ASSIGN, gone).name == "jit-input-assign-dropped"
  assert known_bug(wrong.blamed("graph"), INPUT_ASSIGN, stays) is None
  assert known_bug(wrong.blamed("planner"), INPUT_ASSIGN, gone) is None


def test_a_graphed_read_of_an_input_view_is_the_known_bug_on_amd(monkeypatch: pytest.MonkeyPatch) -> None:
  """graph-input-view-stale explains a value blamed on the graph in a program that makes a view of an input its own
  buffer or copies it to another device, on the AMD GPU where it is known; the same of the whole input, or another
  device, is no known bug."""
  from fuzz.gen.program import Leaf, Op, Program
  from fuzz.known.bugs import known_bug
  from oracle.findings import Finding
  def program(kind: str, source: str) -> Program:
    args = (source, "SECOND") if kind == "to" else (source,)
    return Program(params=(), inputs=(Leaf("x0", (8,), seed=1),), state=(), backward=(), returns="v1",
                   body=(Op("shrink", ("x0", 0, 1, 5), "v0"), Op(kind, args, "v1")))
  stale = Finding("stale", "ret", 2, "replay 1").blamed("graph")
  monkeypatch.setenv("DEV", "MOCKKFD+AMD")
  for kind in ("to", "contiguous"):
    assert known_bug(stale, program(kind, "v0")).name == "graph-input-view-stale"
    assert known_bug(stale, program(kind, "x0")) is None
  monkeypatch.setenv("DEV", "CPU")
  assert known_bug(stale, program("to", "v0")) is None


def test_a_graph_finding_the_kernel_args_fix_removes_is_the_known_bug(monkeypatch: pytest.MonkeyPatch) -> None:
  """graph-kernel-args-shifted is told by its mechanism: rerun with tinygrad's graph runners patched to give each kernel
  the buffers its program takes, the finding is gone. A finding the fix leaves is no known bug, nor one on a device
  without graphs, nor one where tinygrad's internals are unsupported (there is no fix to rerun with)."""
  from fuzz.gen.program import Leaf, Op, Program
  from fuzz.known.bugs import known_bug
  from oracle.compare import Verdict
  from oracle.findings import Finding
  from planner import tg
  program = Program(params=(), inputs=(Leaf("x0", (4,), seed=1),), state=(), backward=(), returns="v1",
                    body=(Op("realize", ("x0",), "v0"), Op("sub", ("x0", "v0"), "v1")))
  wrong = Finding("wrong-values", "ret", 1, "capture").blamed("graph")
  def rerun(fixed: bool):
    return lambda variant, patch=None: Verdict() if fixed and patch is graph.graph_kernel_args_by_program else Verdict(findings=[wrong])
  monkeypatch.setenv("DEV", "MOCKKFD+AMD")
  assert known_bug(wrong, program, rerun(True)).name == "graph-kernel-args-shifted"
  assert known_bug(wrong, program, rerun(False)) is None
  with monkeypatch.context() as unsupported:
    unsupported.setattr(tg, "MISSING", ["GraphRunner"])
    assert known_bug(wrong, program, rerun(True)) is None
  monkeypatch.setenv("DEV", "CPU")
  assert known_bug(wrong, program, rerun(True)) is None


def test_every_known_and_avoided_bug_tells_its_history() -> None:
  """Each entry says which releases at hand reproduce it (`planfuzz releases`), naming 0.14.0, where all are known."""
  for bug in KNOWN_BUGS + AVOIDED_BUGS: assert "0.14.0" in bug.history, bug.name


def test_a_fed_back_output_read_stale_under_hcq2_is_the_known_bug_on_the_emulated_amd_gpu_too(monkeypatch: pytest.MonkeyPatch) -> None:
  """hcq2-fed-back-output-read-stale is HCQ2's lowering, not the CPU's: a 1000-example emulated HCQ2 campaign (seed
  33003) met it as a value twice the reference's, 'new', blamed on hcq2, until it was known there. Under HCQ2 a value
  that goes when the step is given fresh data in place of its own output is the known bug on the CPU and on AMD; on
  another device, without HCQ2, or where the value stays without the feedback, it is none."""
  from fuzz.gen.program import Feedback, Leaf, Op, Program
  from fuzz.known.bugs import known_bug
  from oracle.compare import Verdict
  from oracle.findings import Finding
  program = Program(params=(), inputs=(Leaf("x0", (8,), seed=1),), state=(), backward=(), returns="v0",
                    body=(Op("neg", ("x0",), "v0"),), feedback=Feedback(0, ()))
  wrong = Finding("wrong-values", "ret", 2, "replay 1").blamed("capture")
  gone, stays = lambda variant, *patch: Verdict(), lambda variant, *patch: Verdict(findings=[wrong])
  monkeypatch.setenv("HCQ2", "1")
  for dev in ("MOCKKFD+AMD", "CPU"):
    monkeypatch.setenv("DEV", dev)
    assert known_bug(wrong, program, gone).name == "hcq2-fed-back-output-read-stale", dev
    assert known_bug(wrong, program, stays) is None
  monkeypatch.setenv("DEV", "MOCKKFD+NV")
  assert known_bug(wrong, program, gone) is None
  monkeypatch.setenv("DEV", "MOCKKFD+AMD")
  monkeypatch.delenv("HCQ2")
  assert known_bug(wrong, program, gone) is None


def test_a_copy_of_an_input_view_asserting_under_hcq2_is_the_known_bug_on_the_emulated_amd_gpu_too(monkeypatch: pytest.MonkeyPatch) -> None:
  """hcq2-input-view-copy-asserts' repro fails on the emulated AMD GPU's HCQ2 as on the CPU's: there too the assert in
  a program that copies a view of its input is the known bug; of the whole input, it is none."""
  from fuzz.gen.program import Leaf, Op, Program
  from fuzz.known.bugs import known_bug
  from oracle.findings import Finding
  def program(source: str) -> Program:
    return Program(params=(), inputs=(Leaf("x0", (8,), seed=1),), state=(), backward=(), returns="v1",
                   body=(Op("shrink", ("x0", 0, 1, 5), "v0"), Op("contiguous", (source,), "v1")))
  asserted = Finding("jit-error", "jit", 1, "capture", {"error": "AssertionError: must be BUFFER Ops.PARAM"}).blamed("capture")
  monkeypatch.setenv("HCQ2", "1")
  monkeypatch.setenv("DEV", "MOCKKFD+AMD")
  assert known_bug(asserted, program("v0")).name == "hcq2-input-view-copy-asserts"
  assert known_bug(asserted, program("x0")) is None
