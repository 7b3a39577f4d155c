"""Hand-written programs, one per graph-replay mutant, run under tinygrad's own TinyJit on a device with graphs.

Each program is correct under the unpatched runtime and corrupted by its mutant only: the proof that the mutant is
wrong on the graph path (tests/test_graph_mutants.py runs this module on the emulated GPU and reads its JSON).
Run: `PYTHONPATH=<mock files> DEV=MOCKKFD+AMD python -m tests.graph_programs`.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from tinygrad import Context, Device, Tensor, TinyJit, Variable

from planner.engines import of_engine, planted
from planner.engines.graph import spy_graphs

CALLS = 4


def arrays(k: int, shape: tuple[int, ...] = (8, 8)) -> np.ndarray:
  return np.random.default_rng(k).standard_normal(shape).astype(np.float32)


def chain(x: Tensor) -> Tensor:
  """Four kernels in a row: a batch of four, or batches of 2 under JIT_BATCH_SIZE=2."""
  a = (x * 2 + 1).contiguous()
  b = (a.relu() - x).contiguous()
  c = (b * a).contiguous()
  return (c + b).sum(0).contiguous()


def fresh_inputs(step: Callable, k: int) -> np.ndarray:
  return step(Tensor(arrays(k)).realize()).numpy()


def symbolic(step: Callable, k: int) -> np.ndarray:
  n = Variable("n", 1, 8).bind(k + 2)
  return step(Tensor(arrays(0)).realize(), n).numpy()


def sharded(step: Callable, k: int) -> np.ndarray:
  devices = tuple(f"{Device.DEFAULT.split(':')[0]}:{i}" for i in range(2))
  return step(Tensor(arrays(k)).shard(devices, axis=0).realize()).numpy()


def symbolic_step(x: Tensor, n: Any) -> Tensor:
  return (x[:n] * 2).contiguous().sum(0).contiguous() + (x * 3).contiguous().sum(0)


def sharded_step(x: Tensor) -> Tensor:
  return (x * 2 + 1).contiguous().sum(1).to(Device.DEFAULT).contiguous()


# mutant -> (the step, how a call is made, the knobs it needs)
PROGRAMS: dict[str, tuple[Callable, Callable, dict[str, int]]] = {
  "graph-stale-inputs": (chain, fresh_inputs, {}),
  "graph-stale-variables": (symbolic_step, symbolic, {}),
  "graph-shard-swap": (sharded_step, sharded, {}),
  "graph-batch-tail-dropped": (chain, fresh_inputs, {"JIT_BATCH_SIZE": 2}),
}


def outputs(name: str, jit: bool) -> list[np.ndarray]:
  step, call, knobs = PROGRAMS[name]
  step = TinyJit(step) if jit else step
  with Context(**({"JIT": 1} | knobs if jit else {"JIT": 0, "NO_MEMORY_PLANNER": 1})):
    return [call(step, k) for k in range(CALLS)]


def agrees(name: str, mutant: str | None) -> tuple[bool, int]:
  """Whether TinyJit (with `mutant` planted) agrees with eager on every call, and how many graph batches ran."""
  want = outputs(name, False)
  with spy_graphs() as graphs, planted(mutant): got = outputs(name, True)
  return all(np.allclose(g, w, rtol=1e-5, atol=1e-6) for g, w in zip(got, want, strict=True)), sum(g.runs for g in graphs)


def main() -> None:
  report = {}
  for name in of_engine("graph"):
    (clean, runs), (mutated, _) = agrees(name, None), agrees(name, name)
    report[name] = {"clean_agrees": clean, "graph_runs": runs, "mutant_agrees": mutated}
  print(json.dumps(report))


if __name__ == "__main__":
  main()
