"""A program under test, as plain callables: how to build one instance, call it, and what a user can observe.

A `Program` builds a fresh `Subject` with its own parameters and state each time it is called, so the
reference run and each JIT run never share a buffer. Corpus programs in tests/ and fuzz programs from the
generator's interpreter both take this shape.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Subject:
  """step: the function a JIT wraps.
  inputs(k, prev_ret): call k's explicit inputs; numpy arrays become input tensors (fresh or refilled, by mode),
    anything else (a Tensor fed back from the previous call, a bound Variable) is passed as is.
  observe(): path -> Tensor for everything outside the return value a user can read after a call
    (parameters' .grad, assigned state, lazy tensors kept in a list or attribute)."""
  step: Callable[..., Any]
  inputs: Callable[[int, Any], list]
  observe: Callable[[], dict[str, Any]] = field(default=dict)
  prune: bool = False


Program = Callable[[], Subject]
