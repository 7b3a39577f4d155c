"""Hand-written programs, one per HCQ2 replay mutant, run under tinygrad's own TinyJit with HCQ2=1: each is right with
the unpatched runtime and wrong with its mutant planted (tests/test_hcq2_mutants.py runs this module in a process
with HCQ2=1, which tinygrad reads at import, and reads its JSON)."""
from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
from tinygrad import Context, Tensor, TinyJit, Variable

from planner.engines import of_engine, planted
from planner.engines.hcq2 import HcqCall, spy_hcq

CALLS = 5


def data(k: int, shape: tuple[int, ...] = (8, 4)) -> np.ndarray:
  return (np.random.default_rng(k).standard_normal(shape) * 0.5).astype(np.float32)


def fresh(step: Callable, k: int) -> np.ndarray:
  """A new input tensor every call: a replay must write its address into the table."""
  return step(Tensor(data(k)).realize()).numpy()


def symbolic(step: Callable, k: int) -> np.ndarray:
  """The first n rows summed, n bound anew each call: a replay must hand over n."""
  return step(Tensor(data(k)).realize(), Variable("n", 1, 8).bind(k % 8 + 1)).numpy()


def two_inputs(step: Callable, k: int) -> np.ndarray:
  """Two inputs of one size and dtype: a replay must put each address in its own slot."""
  return step(Tensor(data(k)).realize(), Tensor(data(100 + k)).realize()).numpy()


def stateful(jit: bool) -> Callable:
  """A step that updates a state tensor in place: a replay submitted twice moves it twice."""
  s = Tensor(np.zeros((8, 4), np.float32)).realize()
  def step(x: Tensor) -> Tensor:
    s.assign(s * 0.5 + x).realize()
    return (s * 1.0).contiguous()
  return TinyJit(step) if jit else step


def refilled() -> Callable[[Callable, int], np.ndarray]:
  """One input tensor refilled in place before every call: the same buffer, new data."""
  x: list[Tensor] = []
  def call(step: Callable, k: int) -> np.ndarray:
    if x: x[0].assign(Tensor(data(k))).realize()
    else: x.append(Tensor(data(k)).realize())
    return step(x[0]).numpy()
  return call


PROGRAMS: dict[str, Callable[[bool], tuple[Callable, Callable]]] = {
  "hcq2-stale-inputs": lambda jit: ((TinyJit if jit else lambda f: f)(lambda x: (x * 2 + 1).contiguous()), fresh),
  "hcq2-stale-variables": lambda jit: ((TinyJit if jit else lambda f: f)(lambda x, n: x[:n].sum(0).contiguous()), symbolic),
  "hcq2-submit-twice": lambda jit: (stateful(jit), fresh),
  "hcq2-same-inputs-skipped": lambda jit: ((TinyJit if jit else lambda f: f)(lambda x: (x * 3).contiguous()), refilled()),
  "hcq2-inputs-swapped": lambda jit: ((TinyJit if jit else lambda f: f)(lambda x, y: (x - y * 2).contiguous()), two_inputs),
}


def outputs(name: str, jit: bool) -> list[np.ndarray]:
  step, call = PROGRAMS[name](jit)
  with Context(**({"JIT": 1} if jit else {"JIT": 0, "NO_MEMORY_PLANNER": 1})):
    return [call(step, k) for k in range(CALLS)]


def agrees(name: str, mutant: str | None) -> tuple[bool, int]:
  """Whether TinyJit (with `mutant` planted) agrees with eager on every call, and how often JITs ran an 'hcq' call."""
  want = outputs(name, False)
  with spy_hcq() as ran, planted(mutant): got = outputs(name, True)
  same = all(np.allclose(g, w, rtol=1e-5, atol=1e-6) for g, w in zip(got, want, strict=True))
  return same, sum(r.runs for r in ran if isinstance(r, HcqCall))


def main() -> None:
  report = {}
  for name in of_engine("hcq2"):
    (clean, runs), (mutated, _) = agrees(name, None), agrees(name, name)
    report[name] = {"clean_agrees": clean, "hcq_runs": runs, "mutant_agrees": mutated}
  print(json.dumps(report))


if __name__ == "__main__":
  main()
