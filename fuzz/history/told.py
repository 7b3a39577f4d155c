"""A new bug told with its history: which releases at hand reproduce it and, given a tinygrad checkout, the commit
that brought it (or fixed it). What a campaign adds to each new confirmed bug of the tinyjit target before it reports."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzz.campaign.usage import UsageError
from fuzz.history import releases
from fuzz.history.bisect import bisect, needs_emulator


@dataclass(frozen=True)
class Told:
  releases: dict[str, str]  # version -> fuzz.history.releases.table's answer
  bisect: dict | None  # fuzz.history.bisect.Answer.to_json(), or {"error": why}; None without a checkout


def tell(repro: Path, repo: Path | None, timeout: float) -> Told:
  """The release table of `repro` and, with `repo`, its bisect from the newest release that disagrees to the
  checkout's HEAD (a bisect that cannot run says why, in one line, instead of failing the campaign)."""
  emulator = needs_emulator(repro)
  rows = releases.table(repro, emulator, timeout)
  if repo is None: return Told(rows, None)
  try: answer = bisect(repro, repo, None, "HEAD", timeout, log=lambda s: None).to_json()
  except UsageError as e: answer = {"error": str(e)}
  return Told(rows, answer)


def history_lines(rows: dict[str, str], bisected: dict | None) -> list[str]:
  """The report's lines for a bug's history (report.md and the merged fleet report alike)."""
  lines = [f"- releases: {releases.sentence(rows)}"] if rows else []
  if bisected is None: return lines
  if "error" in bisected: return [*lines, f"- bisect: not told: {bisected['error']}"]
  what = "brought by" if bisected["direction"] == "regression" else "fixed by"
  if bisected["first"]: return [*lines, f"- {what}: {bisected['first']} ({bisected['runs']} runs, {bisected['seconds']:g}s)"]
  return [*lines, f"- {what} one of {len(bisected['candidates'])} commits (skipped commits left a range): "
                  f"{bisected['candidates'][0][:10]}..{bisected['candidates'][-1][:10]}"]
