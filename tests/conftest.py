"""Shared fixtures. `traced` runs each (corpus program, target, input mode) once per session and keeps only the
numpy snapshots, so test_corpus_oracle and test_fidelity judge and compare the very same runs."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from oracle.runs import Trace, reference, run
from oracle.targets import Target
from tests.corpus import CALLS, CORPUS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def traced() -> Callable[[str, Target | None, str], Trace]:
  """traced(name, target, mode): the program's trace under `target` (None: the planner-free eager reference)."""
  cache: dict[tuple[str, Target | None, str], Trace] = {}

  def get(name: str, target: Target | None, mode: str) -> Trace:
    if (key := (name, target, mode)) not in cache:
      t = reference(CORPUS[name], CALLS, mode) if target is None else run(CORPUS[name], target.wrap, CALLS, mode)
      cache[key] = Trace(t.calls)  # drop the JIT: its buffers and captured graph are not needed once snapshotted
    return cache[key]
  return get


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
  """A throwaway redis-server on a free local port (scripts/redis.sh installs it where it can), stopped after the module."""
  where = tmp_path_factory.mktemp("redis")
  started = subprocess.run(["bash", str(ROOT / "scripts/redis.sh"), str(where)], capture_output=True, text=True, timeout=300)
  if started.returncode != 0 and shutil.which("redis-server") is None:
    pytest.skip(f"redis-server cannot be installed here: {started.stderr}")
  assert started.returncode == 0, started.stderr
  yield started.stdout.strip()
  subprocess.run(["kill", (where / "redis.pid").read_text().strip()], check=False)
