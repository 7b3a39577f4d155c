"""A program under test, as plain callables: how to build one instance, call it, and what a user can observe.

A `SubjectFactory` builds a fresh `Subject` with its own parameters and state each time it is called, so the
reference run and each JIT run never share a buffer. Corpus programs in tests/ and fuzz programs from the
generator's interpreter both take this shape.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PythonState:
  """The Python values a step reads or changes besides tensors: a closure counter, a flag an `if` tests, a list it
  appends to, a tensor a holder object is rebound to between calls. TinyJit runs the step's Python only on calls 0
  and 1, so every replay computes with the values call 1 started from (documented: Python state is frozen at
  capture). `save()` returns them; `restore(saved)` puts them back, as the reference does before each later call."""
  save: Callable[[], Any]
  restore: Callable[[Any], None]


@dataclass
class Subject:
  """step: the function a JIT wraps.
  inputs(k, prev_ret): call k's explicit inputs; numpy arrays become input tensors (fresh or refilled, by mode),
    anything else (a Tensor fed back from the previous call, a bound Variable, a Python number) is passed as is.
  observe(): path -> Tensor for everything outside the return value a user can read after a call
    (parameters' .grad, assigned state, lazy tensors kept in a list or attribute).
  python_state: the Python values the step depends on, when it is not a pure function of its tensors.
  evaluate: an eval step over the same parameters, jitted on its own and called right after the step with the same
    arguments, as a training loop alternates a jitted train step and a jitted eval step; its returned tensors are
    observed under `eval`.
  reset: the call before which the step's JIT is reset (`jit.reset()`, at least 2), or None: that call runs the step
    eagerly, the next captures it again, the rest replay the new capture (`oracle.schedule`).
  method: the step is jitted as a model's `__call__` (`@TinyJit def __call__(self, ...)`) and called through a model
    object (`oracle.runs.jitted`)."""
  step: Callable[..., Any]
  inputs: Callable[[int, Any], list]
  observe: Callable[[], dict[str, Any]] = field(default=dict)
  prune: bool = False
  python_state: PythonState | None = None
  evaluate: Callable[..., Any] | None = None
  reset: int | None = None
  method: bool = False


SubjectFactory = Callable[[], Subject]
