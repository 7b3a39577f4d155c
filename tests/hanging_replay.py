"""Replays that never finish, planted with `planfuzz run --hcq2-mutant tests.hanging_replay:hcq2_never_finishes` (or
`--graph-mutant tests.hanging_replay:graph_never_finishes` on a device with graphs): what a hung device queue looks
like from the host. fuzz/campaign/hangs.py must tell it in seconds, not after the example's timeout."""
import contextlib
import time
from typing import Any

from planner.engines.graph import graph_calls_through
from planner.engines.hcq2 import per_call


def _forever() -> None:
  while True: time.sleep(1)


def hcq2_never_finishes() -> contextlib.AbstractContextManager:
  """Every 'hcq' call of a JIT runs its capture; its first replay never returns."""
  def change(ctx: Any, run: Any, state: dict) -> Any:
    if state.setdefault("ran", False): _forever()
    state["ran"] = True
    return run(ctx)
  return per_call(change)


def graph_never_finishes() -> contextlib.AbstractContextManager:
  """Every graph batch runs once; its first replay never returns."""
  ran: dict[int, Any] = {}

  def through(runner: Any, call: Any, inputs: tuple, var_vals: dict) -> Any:
    if id(runner) in ran: _forever()
    ran[id(runner)] = runner
    return call(inputs, var_vals)
  return graph_calls_through(through)
