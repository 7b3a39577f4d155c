"""The property: on every generated program, the target JIT agrees with the oracle's reference on every observable.

A failing example writes a standalone repro script (named by a hash of the program and configuration) once
Hypothesis has shrunk it, and fails with the oracle's findings, the script's path and the seed. Each example's repro is
written before it runs (`in-flight-<pid>.py`) and removed once it ran, so a planner that segfaults the process leaves
the program that did it behind. Rejected programs
(invalid in eager, or refused by the JIT as documented) pass and are counted, never assumed away, so the
session summary shows how many there were and why.
"""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st
from hypothesis.control import current_build_context

from fuzz.campaign import emulator
from fuzz.campaign.example import run_example, under_knobs
from fuzz.campaign.outcome import Outcome
from fuzz.campaign.stats import STATS, reason_class
from fuzz.conftest import BOTH, FuzzConfig, Shard
from fuzz.gen.interpret import source
from fuzz.gen.printer import to_script
from fuzz.gen.program import Program
from fuzz.gen.strategies import knob_settings, programs
from oracle.runs import MODES
from oracle.targets import Target

MAX_SHOWN = 3


def write_repro(program: Program, fuzz: FuzzConfig, target: Target, mode: str, outcome: Outcome | None, path: Path | None = None) -> Path:
  """The repro of one example (`target` carries its drawn knobs), named by a hash of it unless `path` is given."""
  key = repr((program, target, mode, fuzz.calls)).encode()
  path = path or Path(fuzz.repro_dir) / f"repro_{hashlib.sha256(key).hexdigest()[:12]}.py"
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(to_script(program, target, mode, fuzz.calls, outcome.findings[0] if outcome else None))
  return path


def in_flight(fuzz: FuzzConfig) -> Path:
  """Where the running example's repro waits while it runs: a planner that takes the process down leaves it behind
  (one per process, so pytest-xdist workers never share one). `planfuzz run` is the crash-isolated way to fuzz."""
  return Path(fuzz.repro_dir) / f"in-flight-{os.getpid()}.py"


def stop_on_broken_device(why: str, fuzz: FuzzConfig) -> NoReturn:
  """End the session: every later example in this process would run on a device that no longer works, and fail
  inside the emulator, which is never a JIT finding. One process cannot be replaced from inside pytest;
  `planfuzz run` replaces such a worker and carries on."""
  pytest.exit(f"planfuzz: {why} (seed {fuzz.seed}): the examples left were not run, since each would fail on the broken "
              f"device. `planfuzz run` replaces a worker whose device broke and carries on.", returncode=pytest.ExitCode.INTERRUPTED)


SHRINKING: set[Shard] = set()  # shards that found a failure: Hypothesis is shrinking it, and every candidate runs


def owner(program: Program, mode: str, target: Target, count: int) -> int:
  """The shard that runs an example: a hash stable across processes (unlike hash())."""
  return int.from_bytes(hashlib.sha256(repr((program, mode, target)).encode()).digest()[:8], "little") % count


@given(program=programs(), data=st.data())
def test_jit_matches_reference(program: Program, data: st.DataObject, fuzz_config: FuzzConfig, shard: Shard) -> None:
  mode = fuzz_config.mode if fuzz_config.mode != BOTH else data.draw(st.sampled_from(MODES), label="mode")
  target = under_knobs(fuzz_config.target, data.draw(knob_settings(), label="knobs"))
  if shard not in SHRINKING and owner(program, mode, target, shard.count) != shard.index:
    event("another shard's")  # after every draw: each shard's Hypothesis stream stays the same
    return
  note(f"program:\n{source(program)}")
  start = time.perf_counter()
  pending = write_repro(program, fuzz_config, target, mode, None, in_flight(fuzz_config))
  outcome = run_example(program, target, fuzz_config.calls, mode, strict=fuzz_config.strict)
  pending.unlink()  # the process survived it: nothing to leave behind
  if (why := emulator.unusable_after(outcome)) is not None: stop_on_broken_device(why, fuzz_config)
  STATS.record(outcome, time.perf_counter() - start, program=program)
  if outcome.rejected is not None:
    event(f"rejected: {reason_class(outcome.rejected)}")
    return
  event("finding" if outcome.findings else "agrees")
  if not outcome.findings: return
  SHRINKING.add(shard)
  where = "(written when Hypothesis has shrunk the example)"
  if current_build_context().is_final:
    outcome = run_example(program, target, fuzz_config.calls, mode, attribute=True, strict=fuzz_config.strict)  # blamed, for the header
    if not outcome.findings: return  # all known tinygrad bugs once blamed
    where = str(write_repro(program, fuzz_config, target, mode, outcome))
    STATS.repros.append(where)
  shown = "\n".join(f.message for f in outcome.findings[:MAX_SHOWN])
  more = len(outcome.findings) - MAX_SHOWN
  raise AssertionError(f"{target.describe()} differs from the reference ({mode} inputs):\n{shown}"
                       f"{f'{chr(10)}... and {more} more' if more > 0 else ''}\nrepro: python {where}\nseed: {fuzz_config.seed}")
