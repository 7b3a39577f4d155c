"""Shared fixtures. `traced` runs each (corpus program, target, input mode) once per session and keeps only the
numpy snapshots, so test_corpus_oracle and test_fidelity judge and compare the very same runs."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from oracle.runs import Trace, reference, run
from oracle.targets import Target
from tests.corpus import CALLS, CORPUS


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
