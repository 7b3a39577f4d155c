"""Resolve names given on the command line or to PlannedJit: a registered name, or a user's `module:function`."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


class PlanfuzzUsageError(ValueError):
  """Bad input from a user (unknown name, plugin that does not import): the message says how to fix it."""


def resolve(spec: str | Callable, registry: Mapping[str, Callable], kind: str) -> tuple[str, Callable]:
  """(name, callable) for a registered name, a `module:function` path, or a callable given directly."""
  if callable(spec): return getattr(spec, "__name__", repr(spec)), spec
  if not isinstance(spec, str): raise PlanfuzzUsageError(f"{kind} must be a name or 'module:function', got {type(spec).__name__}")
  if spec in registry: return spec, registry[spec]
  if ":" not in spec:
    raise PlanfuzzUsageError(f"unknown {kind} {spec!r}: choose one of {', '.join(sorted(registry))}, or give your own as 'module:function'")
  module_name, _, attr = spec.partition(":")
  try: module = importlib.import_module(module_name)
  except Exception as e:
    raise PlanfuzzUsageError(f"{kind} {spec!r}: module {module_name!r} does not import ({type(e).__name__}: {e}); "
                             "check the module is on PYTHONPATH and imports cleanly") from e
  fn: Any = getattr(module, attr, None)
  if fn is None: raise PlanfuzzUsageError(f"{kind} {spec!r}: module {module_name!r} has no attribute {attr!r}")
  if not callable(fn): raise PlanfuzzUsageError(f"{kind} {spec!r}: {attr!r} is a {type(fn).__name__}, not a callable")
  return spec, fn
