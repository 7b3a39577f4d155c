"""A campaign's running state on disk, so one killed outright (SIGKILL, a preempted runner) or stopped by a signal
carries on when started again with the same command and `--repro-dir`.

The state (`campaign.json` beside the repro scripts) is rewritten atomically every few seconds: the stats so far, bug
book and census included, how many runs of the command there were and the seconds they spent. A run of the same
command finds it and carries on, unless that run reached its end (then the command starts a new campaign): the
examples and time left, numbering from the next example, new Hypothesis seeds (so it does not draw again what the
killed run drew), and the bugs already in the repro dir neither shrunk again (their claims are in the repro dir too:
fuzz/campaign/claims.py) nor written again; its report covers both runs.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from fuzz.campaign.files import atomic_write
from fuzz.campaign.stats import Stats

STATE = "campaign.json"
SAVE_EVERY_S = 5.0
RESTARTS_PER_RUN = 10_000  # seeds of run k start at restart k * this, past any restart count of an earlier run


@dataclass
class Carried:
  """What earlier runs of the same command left: their number, the seconds they spent and their stats."""
  runs: int
  seconds: float
  stats: Stats


def load(repro_dir: Path, command: list[str]) -> Carried | None:
  """The state an earlier run of `command` left in `repro_dir`, or None (none there, another command's, unreadable, or
  one that ran to its end: the same command again is a new campaign, not more of that one)."""
  try: state = json.loads((repro_dir / STATE).read_text())
  except (OSError, ValueError): return None
  if state.get("command") != command or state.get("finished"): return None
  stats = Stats()
  stats.merge(state["stats"])
  return Carried(state["runs"], state["seconds"], stats)


class Saver:
  """Rewrites the state of this run of `command`, at most every SAVE_EVERY_S unless forced."""

  def __init__(self, repro_dir: Path, command: list[str], carried: Carried | None) -> None:
    self.path, self.command, self.carried = repro_dir / STATE, command, carried
    self.start, self.last = time.perf_counter(), 0.0

  @property
  def runs(self) -> int: return (self.carried.runs if self.carried else 0) + 1

  def seconds(self) -> float: return (self.carried.seconds if self.carried else 0.0) + time.perf_counter() - self.start

  def save(self, stats: Stats, force: bool = False, finished: bool = False) -> None:
    """`finished`: the campaign ran to its end (its examples or time budget spent), so nothing is left to resume."""
    now = time.perf_counter()
    if not force and now - self.last < SAVE_EVERY_S: return
    self.last = now
    atomic_write(self.path, json.dumps({"command": self.command, "runs": self.runs, "seconds": self.seconds(), "finished": finished,
                                        "stats": stats.to_plain()}, default=str))
