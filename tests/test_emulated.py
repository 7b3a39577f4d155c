"""A short campaign on tinygrad's emulated AMD GPU: the pytest front end and the known-bug checks are green there, and
the census proves captures were graphed and replayed by HCQGraph (the CPU device has no graph)."""
from __future__ import annotations

import re

import pytest

from tests.emulated import run_emulated

SEED, EXAMPLES = 3, 24


@pytest.mark.slow
def test_an_emulated_campaign_replays_graphs_and_finds_nothing(tmp_path) -> None:
  out = run_emulated(["-m", "fuzz.campaign.cli", "run", "--target", "tinyjit", "--examples", str(EXAMPLES), "--seed", str(SEED),
                      "--workers", "1", "--db", "none", "--repro-dir", str(tmp_path)], timeout=900)
  assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
  assert f"{EXAMPLES} examples in" in out.stdout and "findings: none" in out.stdout, out.stdout
  replayed = re.search(r"graphs: (\d+)% of examples a graph batch replayed", out.stdout)
  assert replayed and int(replayed.group(1)) >= 50, out.stdout  # the default emulated campaign's goal


def test_an_emulated_hcq2_campaign_replays_hcq_calls_and_finds_nothing(tmp_path) -> None:
  """The engine tinygrad keeps, on the emulated GPU: `--engine hcq2` runs the workers with HCQ2=1 and its runtime on the
  PYTHON device; the census proves the captures became 'hcq' calls and were replayed, and nothing is rejected (the
  issue's failing seed: 'need copyin' was planfuzz's arena poisoning)."""
  out = run_emulated(["-m", "fuzz.campaign.cli", "run", "--target", "tinyjit", "--engine", "hcq2", "--examples", "3", "--seed", "60607",
                      "--workers", "1", "--db", "none", "--repro-dir", str(tmp_path)], timeout=900)
  assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
  assert "3 examples in" in out.stdout and "rejected: 0" in out.stdout, out.stdout
  assert re.search(r"hcq2: 100% of examples an 'hcq' call replayed", out.stdout), out.stdout


def test_a_worker_whose_device_stopped_working_is_retired(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
  """After an example that raised, the emulated device is probed; one that fails the probe retires its worker, so each
  example here runs in a process of its own and none is judged on a broken device (a seed-20261205 campaign judged 416
  examples on a hung one, and shrank a bug there, before this). A retired worker exits without running its finalizers:
  tinygrad's wait on the broken device (30 s each) and print its hang report."""
  pids = tmp_path / "pids"
  monkeypatch.setenv("PLANFUZZ_TEST_PIDS", str(pids))
  out = run_emulated(["-m", "fuzz.campaign.cli", "run", "--planner", "tests.crashing_planner:breaks_device", "--examples", "3",
                      "--seed", "1", "--db", "none", "--no-confirm", "--shrink-budget", "0",
                      "--repro-dir", str(tmp_path / "repros")], timeout=600)
  assert "3 examples in" in out.stdout and "x error" not in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
  seen = pids.read_text().split()
  assert len(seen) == 3 and len(set(seen)) == 3, seen  # no "finalized-<pid>": no retired worker ran its finalizers


@pytest.mark.slow
def test_pytest_fuzz_is_green_on_the_emulated_gpu() -> None:
  """`pytest fuzz/` on a GPU runner: the property (a few examples) and every known bug's strict xfail, each repro run on
  a device it is known on."""
  out = run_emulated(["-m", "pytest", "fuzz/test_fuzz.py", "fuzz/test_known_bugs.py", "-q", "-p", "no:cacheprovider",
                      "-k", "test_jit_matches_reference or test_known_bug_is_fixed", "--hypothesis-seed=3", "--examples", "6",
                      "--target", "tinyjit"], timeout=900)
  assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
  last = out.stdout.strip().splitlines()[-1]
  assert re.search(r"\b\d+ passed\b.*\b\d+ xfailed", last) and not re.search(r"\b\d+ failed", last), out.stdout[-2000:]


def test_pytest_fuzz_stops_when_its_device_stopped_working(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
  """The pytest front end cannot replace its process: after the example that broke the emulated device it ends the
  session (exit status 2), saying why and what replaces workers, instead of judging every later example on a broken
  device (each would fail inside the emulator, never a JIT finding)."""
  pids = tmp_path / "pids"
  monkeypatch.setenv("PLANFUZZ_TEST_PIDS", str(pids))
  out = run_emulated(["-m", "pytest", "fuzz/test_fuzz.py", "-q", "-p", "no:cacheprovider", "-k", "test_jit_matches_reference",
                      "--hypothesis-seed=1", "--examples", "4", "--target", "planner", "--planner", "tests.crashing_planner:breaks_device",
                      "--repro-dir", str(tmp_path / "repros")], timeout=600)
  assert out.returncode == 2, out.stdout[-3000:] + out.stderr[-2000:]
  assert "its emulated device stopped working" in out.stdout + out.stderr and "planfuzz run" in out.stdout + out.stderr, out.stdout[-2000:]
  ran = [p for p in pids.read_text().split() if not p.startswith("finalized-")]
  assert len(ran) == 1  # no example ran after the one that broke it


KERNEL_DROPS_A_READ = """
from fuzz.campaign.example import run_example
from fuzz.gen.program import Leaf, Op, Program
from oracle.targets import Target
body = (Op("scale", ("x0", 2.0), "v0"), Op("realize", ("v0",), "v1"), Op("add", ("x0", "v1"), "v2"),
        Op("sub", ("x0", "v2"), "v3"))
program = Program(params=(), inputs=(Leaf("x0", (4,), seed=1),), state=(), backward=(), returns="v3", body=body)
for target in ("tinyjit", "planner"):
  out = run_example(program, Target(target), 4, "fresh")
  print(target, sorted({name for name, _ in out.known}), len(out.findings), len(out.ran.get("graph", ())))
"""


def test_a_kernel_given_shifted_buffers_by_the_graph_is_told_by_its_fix() -> None:
  """`x0 - (x0 + v1)` compiles to a kernel that reads only v1; graphed, it is given x0 there (graph-kernel-args-shifted,
  a real HCQGraph bug). Both targets find it and class it as that known bug: with the fix patched in, the rerun agrees."""
  out = run_emulated(["-c", KERNEL_DROPS_A_READ], timeout=600)
  assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
  assert out.stdout.split("\n")[-3:-1] == ["tinyjit ['graph-kernel-args-shifted'] 0 1",
                                           "planner ['graph-kernel-args-shifted'] 0 1"], out.stdout[-2000:]


WATCHES_AFTER_CAPTURES = """
import numpy as np
from tinygrad import Device, Tensor, TinyJit
from fuzz.campaign.emulator import speed_up
assert speed_up()
Device[Device.DEFAULT]
import test.mockgpu.mockgpu as mock
def capture():
  step = TinyJit(lambda x: ((x * 2).contiguous().realize() + 1).contiguous())
  for _ in range(4): step(Tensor(np.ones(4, np.float32)).realize()).numpy()
watched = []
for _ in range(20):
  capture()
  watched.append(sum(len(d.tracked_addresses) for d in mock.drivers))
print(watched[0], watched[-1])
"""


def test_the_mock_driver_stops_watching_freed_memory() -> None:
  """Each graphed capture allocates watched memory; once freed it is watched no more, so a worker's every memoryview
  search (two an emulated wave) stays as short after 20 captures as after one (the driver alone grows one a capture)."""
  out = run_emulated(["-c", WATCHES_AFTER_CAPTURES], timeout=600)
  assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
  first, last = map(int, out.stdout.split()[-2:])
  assert last <= first + 1, out.stdout


def test_a_worker_retires_after_a_planted_mutant_showed_on_the_emulated_device(monkeypatch: pytest.MonkeyPatch) -> None:
  """A replay mutant that showed replayed kernels on stale buffers: on the emulated device that can corrupt its memory
  without raising (every later example then fails in eager), so the worker retires; not without a mutant planted, not
  on a real device, not after an example with no finding."""
  from fuzz.campaign import emulator
  from fuzz.campaign.outcome import Outcome
  from oracle.compare import Verdict
  from oracle.findings import Finding
  found = Outcome.of(Verdict(findings=[Finding("stale", "ret", 2, "replay 1")]))
  monkeypatch.setattr(emulator, "emulated", lambda: True)
  assert "graph-stale-inputs showed" in (emulator.unusable_after(found, "graph-stale-inputs") or "")
  assert emulator.unusable_after(found) is None and emulator.unusable_after(Outcome.of(Verdict()), "graph-stale-inputs") is None
  monkeypatch.setattr(emulator, "emulated", lambda: False)
  assert emulator.unusable_after(found, "graph-stale-inputs") is None
