"""A replay that never finishes is a hang in seconds: the parent bounds each JIT call by what the example's first
eager call took (fuzz/campaign/hangs.py), and says which call hung."""
from __future__ import annotations

from fuzz.campaign.hangs import CAPTURE_SLACK_S, FACTOR, REPLAY_SLACK_S, CallClock


def test_a_replay_is_bounded_by_the_first_eager_call() -> None:
  clock = CallClock()
  clock.start(0, 0, 100.0)
  assert clock.budget() is None and clock.overran(10_000.0) is None  # eager: only the example's timeout bounds it
  clock.end(102.0)  # call 0 took 2 s
  clock.start(0, 1, 103.0)
  assert clock.budget() == CAPTURE_SLACK_S + FACTOR * 2 and clock.overran(103.0 + CAPTURE_SLACK_S + 19) is None
  clock.end(104.0)
  clock.start(0, 2, 105.0)
  budget = REPLAY_SLACK_S + FACTOR * 2
  assert clock.overran(105.0 + budget - 1) is None
  why = clock.overran(105.0 + budget + 1)
  assert why is not None and why.startswith("call 2 (replay 1) of JIT 0 ran past its 35s"), why
  clock.end(200.0)
  assert clock.overran(10_000.0) is None  # between calls (the oracle's reads, attribution): the example's timeout


def test_after_a_reset_the_eager_call_is_unbounded_and_the_recapture_has_room() -> None:
  clock = CallClock(reset=2)
  clock.start(0, 0, 0.0)
  clock.end(1.0)
  clock.start(0, 2, 5.0)  # eager after the reset
  assert clock.budget() is None
  clock.end(6.0)
  clock.start(0, 3, 6.0)  # the new capture
  assert clock.budget() == CAPTURE_SLACK_S + FACTOR * 1.0 and clock.first_eager_s == 1.0  # the first eager call's, kept
