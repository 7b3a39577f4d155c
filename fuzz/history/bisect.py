"""Bisect a repro over a tinygrad checkout's history: the first bad commit (a regression) or the first fixed one.

As `git bisect run` with `--term-old`/`--term-new`: the two ends' verdicts must differ and say the direction (good at
the older end: a regression, find the first bad; bad there: a fix, find the first good). Each step runs the repro at
the middle of what is left; a commit that cannot say (fuzz/history/verdicts.py) is skipped and a quarter taken instead
(`probes`), so skips can leave a range rather than one commit. Over N commits that is the two ends and about log2(N)
steps: 12 runs for 1,000 commits. Where the answer lies in a stretch the repro cannot run in at all (tinygrad's own
history has a fortnight where multi-device grads raise), `max_skips` commits in a row that cannot say end the search
with the range left, instead of trying every commit in it.
"""
from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fuzz.campaign.usage import UsageError
from fuzz.history.trees import Checkout, Commit
from fuzz.history.verdicts import BAD, GOOD, SKIP, Verdict, run_repro

REGRESSION, FIX = "regression", "fix"
RELEASE_TAGS_TRIED = 3  # without --old: the newest release tags tried for an end that disagrees with --new
MAX_SKIPS = 8  # commits in a row that cannot say before a bisect stops with the range left
SETS_MOCK_DEV = re.compile(r"""["']DEV["']\s*:\s*["'][^"']*MOCK""")  # a script's own os.environ line naming the emulator


@dataclass
class Answer:
  """What a bisect found: the first commit whose verdict is the newer end's (or, with skips, the commits one of which
  is), and every step it ran."""
  direction: str  # REGRESSION: the first bad commit; FIX: the first fixed one
  candidates: list[Commit]  # one commit, or the range skipped commits left
  steps: list[tuple[Commit, Verdict]] = field(default_factory=list)
  seconds: float = 0.0
  stopped: str = ""  # why the search ended before the range was down to what every commit in it said

  @property
  def first(self) -> Commit | None: return self.candidates[0] if len(self.candidates) == 1 else None

  @property
  def runs(self) -> int: return len({c.sha for c, _ in self.steps})

  def what(self) -> str: return "first bad commit" if self.direction == REGRESSION else "first fixed commit"

  def lines(self) -> list[str]:
    """The answer as the last lines of `planfuzz bisect` print it."""
    runs = f"{self.runs} runs, {self.seconds:.0f}s"
    if (c := self.first) is not None: return [f"{self.what()} ({self.direction}; {runs}):", c.line()]
    skipped = [f"  skipped {c.short}: {v.why}" for c, v in self.steps if v.answer == SKIP]
    return [f"{self.what()} is one of {len(self.candidates)} commits; skipped commits left a range ({runs}"
            f"{'; ' + self.stopped if self.stopped else ''}):", *(c.line() for c in self.candidates), *skipped]

  def to_json(self) -> dict:
    return {"direction": self.direction, "first": self.first.line() if self.first else None, "pr": self.first.pr if self.first else None,
            "candidates": [c.sha for c in self.candidates], "runs": self.runs,
            "steps": [[c.sha, v.answer, v.why, round(v.seconds, 2)] for c, v in self.steps],
            "seconds": round(self.seconds, 1), "stopped": self.stopped}


def search(commits: list[Commit], test: Callable[[Commit], Verdict], log: Callable[[str], None] = lambda s: None,
           max_skips: int = MAX_SKIPS) -> Answer:
  """Bisect `commits` (oldest first) with `test`; the ends are run first and must give 0 or 1, and differ. `max_skips`
  commits in a row that cannot say stop it with the range left (0: never)."""
  start, steps = time.perf_counter(), []

  def run(i: int) -> Verdict:
    v = test(commits[i])
    steps.append((commits[i], v))
    log(f"bisect: step {len(steps)}: {commits[i].short} {commits[i].date} {v}")
    return v
  old, new = run(0), run(len(commits) - 1)
  for end, v, flag in ((commits[0], old, "--old"), (commits[-1], new, "--new")):
    if v.answer == SKIP: raise UsageError(f"the repro cannot say at {flag} {end.short} ({v.why}): it must exit 0 or 1 at both ends")
  if old.answer == new.answer:
    other = GOOD if new.answer == BAD else BAD
    raise UsageError(f"both ends agree ({new.answer} at {commits[0].short} and {commits[-1].short}): nothing to bisect; give "
                     f"an --old where it {other}")
  lo, hi, skipped, in_a_row, stopped = 0, len(commits) - 1, set(), 0, ""
  while (i := next((j for j in probes(lo, hi) if j not in skipped), None)) is not None:
    v = run(i)
    in_a_row = in_a_row + 1 if v.answer == SKIP else 0
    if v.answer == SKIP: skipped.add(i)
    elif v.answer == old.answer: lo = i
    else: hi = i
    left = hi - lo - 1 - sum(lo < j < hi for j in skipped)
    log(f"bisect: {left} commits left between {commits[lo].short} and {commits[hi].short}")
    if max_skips and in_a_row >= max_skips and left:
      stopped = f"stopped after {in_a_row} commits in a row could not say, {left} untried (--max-skips)"
      log(f"bisect: {stopped}")
      break
  return Answer(REGRESSION if old.answer == GOOD else FIX, commits[lo + 1:hi + 1], steps, time.perf_counter() - start, stopped)


def probes(lo: int, hi: int) -> Iterator[int]:
  """The commits strictly between `lo` and `hi` in the order a bisect tries them: the middle, then the quarters, then
  the eighths, ... then every other one. A skipped middle thus costs a run at a quarter, not its neighbour's: a run of
  commits that cannot say (a week where the repro's program hit another error) is stepped over in a few runs, not
  walked one commit at a time."""
  seen: set[int] = set()
  parts = 2
  while parts <= 2 * (hi - lo):
    for k in range(1, parts, 2):
      if lo < (j := lo + round(k * (hi - lo) / parts)) < hi and j not in seen:
        seen.add(j)
        yield j
    parts *= 2
  yield from (j for j in range(lo + 1, hi) if j not in seen)


def needs_emulator(repro: Path) -> bool:
  """Whether the repro runs on the emulated GPU (DEV names a MOCK device, here or in the environment the script sets
  itself, as planfuzz's repros do): then each commit's own emulator goes on the path with its tinygrad."""
  return "MOCK" in os.environ.get("DEV", "") or SETS_MOCK_DEV.search(repro.read_text()) is not None


def default_old(checkout: Checkout, new: Commit, test: Callable[[Commit], Verdict], log: Callable[[str], None]) -> Commit:
  """Without --old: the newest release tag (v*) before `new` whose verdict differs from `new`'s, of the newest few."""
  want = test(new)
  if want.answer == SKIP: raise UsageError(f"the repro cannot say at --new {new.short} ({want.why}): it must exit 0 or 1 there")
  for tag in checkout.release_tags(new)[:RELEASE_TAGS_TRIED]:
    v = test(c := checkout.commit(tag))
    log(f"bisect: release {tag} {c.short}: {v}")
    if v.answer not in (SKIP, want.answer): return c
  raise UsageError(f"the newest release tags before {new.short} all {want.answer} (or cannot say) as it does: give --old")


def bisect(repro: Path, repo: Path, old: str | None = None, new: str = "HEAD", timeout: float = 120.0,
           log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True), max_skips: int = MAX_SKIPS) -> Answer:
  """`planfuzz bisect`: the repro run at commits of the checkout `repo` between `old` and `new`."""
  if not repro.is_file(): raise UsageError(f"no such repro script: {repro}")
  checkout, emulator, memo = Checkout(repo), needs_emulator(repro), {}

  def test(c: Commit) -> Verdict:
    if c.sha not in memo: memo[c.sha] = run_repro(repro, checkout.tree(c, emulator), timeout)
    return memo[c.sha]
  tip = checkout.commit(new)
  base = checkout.commit(old) if old is not None else default_old(checkout, tip, test, log)
  commits = checkout.between(base, tip)
  log(f"bisect: {len(commits)} commits from {base.short} ({base.date}) to {tip.short} ({tip.date})")
  return search(commits, test, log, max_skips)
