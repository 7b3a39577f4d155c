"""Replay engines: the ways tinygrad runs a captured JIT, one module each, and their registry.

- `plain`: the lowered linear call by call (`run_linear`): the CPU device, and `JIT=2` anywhere;
- `graph`: batches of calls replayed by a device's graph runner (`HCQGraph` on AMD, NV, QCOM): tinygrad 0.14.0 and
  before, removed after it ("remove graphs", tinygrad#18364);
- `hcq2`: the whole capture as one 'hcq' call that patches input addresses and Variables on every call (`HCQ2=1` in
  0.14.0, a process's setting; what tinygrad keeps).

Each module is the engine's part of the tinygrad adapter: what ran (a spy the census reads off the engine as it runs,
never the program text, with its census rows) and what to plant (mutants: faults wrong only on that engine, for tests
and `planfuzz run --graph-mutant M` or `--hcq2-mutant M`, never by default). A new engine is one module and one line
in MODULES.
"""
from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from planner.plugins import resolve

MODULES = ("plain", "graph", "hcq2")
Row = tuple[str, Callable[[tuple], bool]]  # a census row: its name, and whether an example's records show it


@dataclass(frozen=True)
class Mutant:
  name: str
  doc: str
  patch: Callable[[], contextlib.AbstractContextManager]  # while entered, the engine's replay has the fault


@dataclass(frozen=True)
class Engine:
  name: str
  label: str  # what the census calls its rows: "graphs: 80% of examples a graph batch replayed"
  spy: Callable[[], contextlib.AbstractContextManager[list]]  # what the engine ran while entered (records filled on exit)
  rows: tuple[Row, ...]  # the first is the proof the engine replayed a capture
  none_ran: str  # why a campaign may see none of it
  active: Callable[[], bool]  # whether this process replays through it at all (HCQ2 is a process's setting)
  mutants: tuple[Mutant, ...] = field(default=())


def _load() -> dict[str, Engine]:
  return {name: importlib.import_module(f"planner.engines.{name}").ENGINE for name in MODULES}


ENGINES: dict[str, Engine] = _load()
MUTANTS: dict[str, tuple[Engine, Mutant]] = {m.name: (e, m) for e in ENGINES.values() for m in e.mutants}


@contextlib.contextmanager
def spied() -> Iterator[dict[str, list]]:
  """The records of what each engine active in this process ran while active, by engine name (filled in on exit)."""
  with contextlib.ExitStack() as stack:
    yield {name: stack.enter_context(e.spy()) for name, e in ENGINES.items() if e.active()}


def replay_patch(spec: str) -> Callable[[], contextlib.AbstractContextManager]:
  """What `--graph-mutant` / `--hcq2-mutant` names: a registered mutant, or a user's `module:function` returning a
  context manager (a fault of one's own, such as a replay that never finishes); bad input is a PlanfuzzUsageError
  naming the fix."""
  return resolve(spec, {name: m.patch for name, (_, m) in MUTANTS.items()}, "replay mutant")[1]


def planted(spec: str | None) -> contextlib.AbstractContextManager:
  """The replay mutant's patch (nothing for None): see `replay_patch`."""
  return contextlib.nullcontext() if spec is None else replay_patch(spec)()


def of_engine(engine: str) -> list[str]:
  """The mutants planted in `engine`'s replay."""
  return [m.name for m in ENGINES[engine].mutants]


def census_rows(records: dict[str, Any]) -> dict[str, list[str]]:
  """Engine label -> the names of its rows an example's records (`spied`'s, as plain tuples) show, for each engine
  active where the example ran."""
  return {e.label: [name for name, shows in e.rows if shows(tuple(records[e.name]))] for e in ENGINES.values() if e.name in records}


# ---------- a campaign's engines: HCQ2 is a process's setting, so each worker process runs one ----------

PLAIN, HCQ2, MIXED = "plain", "hcq2", "mixed"  # `planfuzz run --engine`: HCQ2 off (plain calls, or graphs), on, or both


def engine_of(knobs: Any) -> str:
  """The process engine an example's knobs (a dict or pairs) name: hcq2 where they carry HCQ2=1."""
  return HCQ2 if dict(knobs).get("HCQ2") else PLAIN


def worker_engines(engine: str, workers: int) -> list[str]:
  """Each worker's process engine: under `mixed` every second worker runs HCQ2."""
  return [(PLAIN, HCQ2)[w % 2] if engine == MIXED else engine for w in range(workers)]
