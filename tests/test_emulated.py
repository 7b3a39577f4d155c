"""A short campaign on tinygrad's emulated AMD GPU: the pytest front end and the known-bug checks are green there, and
the census proves captures were graphed and replayed by HCQGraph (the CPU device has no graph)."""
from __future__ import annotations

import re

import pytest

from tests.emulated import run_emulated

SEED, EXAMPLES = 3, 24


@pytest.mark.slow
def test_an_emulated_campaign_replays_graphs_and_finds_nothing(tmp_path) -> None:
  out = run_emulated(["-m", "fuzz.cli", "run", "--target", "tinyjit", "--examples", str(EXAMPLES), "--seed", str(SEED),
                      "--workers", "1", "--db", "none", "--repro-dir", str(tmp_path)], timeout=900)
  assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
  assert f"{EXAMPLES} examples in" in out.stdout and "findings: none" in out.stdout, out.stdout
  replayed = re.search(r"graphs: (\d+)% of examples a graph batch replayed", out.stdout)
  assert replayed and int(replayed.group(1)) >= 50, out.stdout  # the default emulated campaign's goal


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
