"""tinygrad's in-process cache of compiled kernels, handed from one process to another of the same tinygrad.

An HCQ2 worker takes its reference from a helper process without HCQ2 (fuzz/campaign/reference_server.py). In a plain
worker the target run reuses every kernel its in-process reference compiled; the HCQ2 worker compiled each a second
time, a sixth of an emulated HCQ2 campaign's time. So the helper hands over, with each reference, what it compiled.
tinygrad keys a compiled kernel (`codegen.to_program_cache`) by the kernel's AST (a content hash, the same in every
process), the renderer's class and target, and its codegen settings (`to_program_config`); settings it reads with
getenv are not in the key, and the helper runs with the worker's environment less HCQ2's two keys
(planner/engines/hcq2.py `without`), so a kernel is reused only where the worker would compile that very kernel.
"""
from __future__ import annotations

import importlib


def _cache() -> dict | None:
  """`codegen.to_program_cache`, or None where this tinygrad has none (then nothing is handed over)."""
  cache = getattr(importlib.import_module("tinygrad.codegen"), "to_program_cache", None)
  return cache if isinstance(cache, dict) else None


def compiled_since(known: set[tuple]) -> dict[tuple, object]:
  """The kernels this process compiled whose keys are not in `known`."""
  return {k: v for k, v in (_cache() or {}).items() if k not in known}


def adopt(kernels: dict[tuple, object]) -> None:
  """Kernels another process of this tinygrad compiled, into this process's cache; what this process compiled itself
  stays."""
  if (cache := _cache()) is not None:
    for key, kernel in kernels.items(): cache.setdefault(key, kernel)
