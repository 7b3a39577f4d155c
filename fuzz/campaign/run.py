"""A campaign in this process: N examples (or a time budget) of generated programs against one or more targets, one seed.

The bench and the kill tests use it to measure: it generates without shrinking and, past the first finding (when asked
to), only draws the remaining examples, so it times the first finding; the property never fails, the finding is
returned. `planfuzz run` is the same property in crash-isolated worker processes (fuzz/campaign/workers.py), with
shrinking and a report; `pytest fuzz/` is it under pytest's plugin.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from fuzz.campaign import emulator
from fuzz.campaign.example import run_example, under_knobs
from fuzz.campaign.outcome import Outcome
from fuzz.campaign.stats import Stats
from fuzz.gen.program import Program
from fuzz.gen.strategies import knob_settings, programs
from oracle.runs import MODES
from oracle.targets import Target


@dataclass
class Found:
  target: Target
  program: Program
  mode: str
  outcome: Outcome
  example: int  # 1-based
  seconds: float  # since the campaign started


@dataclass
class Campaign:
  targets: tuple[Target, ...]
  stats: Stats = field(default_factory=Stats)
  found: Found | None = None
  stopped: str | None = None  # why it ran no more examples before its count: the emulated device broke


def run_campaign(target: Target | tuple[Target, ...], seed_value: int, examples: int, calls: int = 5, mode: str | None = None,
                 stop_at_finding: bool = True, time_budget: float | None = None) -> Campaign:
  """Run generated programs through `target` next to the oracle; `mode` None draws the input mode per example.

  Several targets check every program against one reference run (the eager reference is most of an example's cost);
  the stats then count one example per target and program. An example after which the emulated device may be broken
  (an error inside tinygrad's GPU emulator, raised or told as a rejection) ends the campaign, as it retires a worker
  (`stopped` says why; that example counts as rejected)."""
  targets = (target,) if isinstance(target, Target) else tuple(target)
  result, start = Campaign(targets), time.perf_counter()

  def example(program: Program, mode: str, knobs: dict[str, int]) -> None:
    if (stop_at_finding and result.found) or result.stopped or (time_budget is not None and time.perf_counter() - start > time_budget):
      return  # done: the remaining examples are only drawn (milliseconds), never run
    for t in targets:
      t0 = time.perf_counter()
      try: outcome = run_example(program, under_knobs(t, knobs), calls, mode)
      except Exception as e:  # the emulator's limit, as a worker classes it
        if (limit := emulator.rejected(e)) is None: raise
        outcome = limit
      result.stats.record(outcome, time.perf_counter() - t0, program=program)
      result.stopped = emulator.unusable_after(outcome)
      if result.stopped is not None: return
      if outcome.findings and result.found is None:
        result.found = Found(t, program, mode, outcome, result.stats.examples, time.perf_counter() - start)

  for_each_drawn(seed_value, examples, mode, example)
  return result


def for_each_drawn(seed_value: int, examples: int, mode: str | None, body: Callable[[Program, str, dict[str, int]], None]) -> None:
  """`body(program, mode, knobs)` for each of the examples a campaign of this seed draws, in its order: the bench runs
  the very programs a campaign judged without the oracle, to time tinygrad alone on them."""
  modes = st.just(mode) if mode is not None else st.sampled_from(MODES)

  @seed(seed_value)
  @settings(max_examples=examples, database=None, derandomize=False, deadline=None, phases=[Phase.generate],
            suppress_health_check=list(HealthCheck))
  @given(program=programs(), mode=modes, knobs=knob_settings())
  def example(program: Program, mode: str, knobs: dict[str, int]) -> None: body(program, mode, knobs)

  example()
