"""`planfuzz merge`: one report for a whole CI matrix (seeds x targets x devices), from the report.json of each runner.

Bugs are matched by signature across runners: one entry each, its counts summed, every runner that saw it named (seed,
target, device, tinygrad version), and the best repro kept (shrunk before unshrunk, then the fewest lines; with a
shared redis bug book only one runner shrank it: fuzz/campaign/claims.py). The runners' stats add up as workers of
one campaign do (fuzz/campaign/stats.py): examples, rejections, census and rates.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz.campaign.files import atomic_write
from fuzz.campaign.stats import Stats
from fuzz.campaign.usage import UsageError
from fuzz.history.told import history_lines

STATUS_RANK = {"confirmed": 0, "context-dependent": 1, "unconfirmed": 2, "known": 3}  # the most telling status wins


@dataclass
class Merged:
  runs: list[dict] = field(default_factory=list)  # each report's meta
  bugs: dict[str, dict] = field(default_factory=dict)  # signature -> merged entry
  stats: Stats = field(default_factory=Stats)


def reports_in(paths: list[str]) -> list[Path]:
  """Every report.json named, or found under a directory named (an artifact download holds one per runner)."""
  found: list[Path] = []
  for p in map(Path, paths):
    if p.is_dir(): found += sorted(p.rglob("report.json"))
    elif p.is_file(): found.append(p)
    else: raise UsageError(f"merge: no such report or directory: {p}")
  if not found: raise UsageError(f"merge: no report.json under {', '.join(paths)} (each `planfuzz run` writes one beside its report.md)")
  return found


def _runner(meta: dict) -> dict:
  keys = ("runner", "fleet", "seed", "target", "kind", "device", "tinygrad", "examples", "runs")
  return {k: meta.get(k) for k in keys}


def _better(entry: dict, best: dict) -> bool:
  """Whether `entry`'s repro beats `best`'s: shrunk first, then fewer program lines."""
  return (not entry["shrink_steps"], entry["repro_lines"] or 10**9) < (not best["shrink_steps"], best["repro_lines"] or 10**9)


def add(merged: Merged, plain: dict) -> None:
  """One runner's report.json into the merged report."""
  meta = plain["meta"]
  run = _runner(meta)
  merged.runs.append(run)
  if "stats" in plain: merged.stats.merge(plain["stats"])
  for e in plain["bugs"]:
    seen = {**run, "count": e["count"], "first_example": e["first_example"], "shrunk": e["shrink_seconds"] > 0}
    if (m := merged.bugs.get(e["signature"])) is None:
      merged.bugs[e["signature"]] = {**e, "seen_by": [seen]}
      continue
    m["count"] += e["count"]
    m["seen_by"].append(seen)
    if STATUS_RANK.get(e["status"], 9) < STATUS_RANK.get(m["status"], 9): m["status"], m["confirm_note"] = e["status"], e["confirm_note"]
    for k in ("releases", "bisect"):  # told by one runner (the one that confirmed it), kept whatever the others say
      if e.get(k) and not m.get(k): m[k] = e[k]
    if _better(e, m): m.update({k: e[k] for k in ("repro", "repro_lines", "unshrunk_repro", "unshrunk_lines", "shrink_steps",
                                                  "shrink_seconds", "picture", "message", "mode", "knobs")})


def merge(paths: list[str]) -> Merged:
  merged = Merged()
  for path in reports_in(paths):
    try: plain = json.loads(path.read_text())
    except (OSError, ValueError) as e: raise UsageError(f"merge: {path} is not a planfuzz report.json ({e})") from e
    if not isinstance(plain, dict) or "meta" not in plain or "bugs" not in plain:
      raise UsageError(f"merge: {path} is not a planfuzz report.json (no meta and bugs)")
    add(merged, plain)
  return merged


def markdown(merged: Merged) -> str:
  bugs = sorted(merged.bugs.values(), key=lambda b: (not b["new"], -b["count"]))
  new = sum(b["new"] for b in bugs)
  lines = [f"# planfuzz fleet report: {len(merged.runs)} run(s)", "", f"**{new} new bug(s), {len(bugs) - new} known tinygrad bug(s).**", "",
           "| runner | fleet | seed | target | device | tinygrad | examples |", "|---|---|---|---|---|---|---|",
           *(f"| {r['runner']} | {r['fleet']} | {r['seed']} | {r['target']} | {r['device']} | {r['tinygrad']} | {r['examples']} |"
             for r in merged.runs), "", "```", *merged.stats.summary(), "```", ""]
  for i, b in enumerate(bugs, 1):
    label = "NEW" if b["new"] else f"KNOWN tinygrad bug `{b['known']}`"
    lines += [f"## {i}. {label}: {b['signature']}", "", f"- status: **{b['status']}**", f"- message: `{b['message']}`",
              f"- seen in {b['count']} example(s) by {len(b['seen_by'])} run(s):",
              *(f"  - {s['runner']} (seed {s['seed']}, {s['target']}, {s['device']}, tinygrad {s['tinygrad']}): {s['count']} example(s)"
                f"{', shrunk there' if s['shrunk'] else ''}" for s in b["seen_by"]),
              f"- repro: `{b['repro']}` ({b['repro_lines']} program lines)", *history_lines(b.get("releases") or {}, b.get("bisect")), ""]
  return "\n".join(lines)


def write(merged: Merged, out: Path) -> tuple[Path, Path]:
  """report.md and report.json in `out`."""
  md, js = out / "report.md", out / "report.json"
  atomic_write(md, markdown(merged))
  plain: dict[str, Any] = {"runs": merged.runs, "bugs": list(merged.bugs.values()),
                           "stats": merged.stats.figures()}
  atomic_write(js, json.dumps(plain, indent=1, default=str))
  return md, js
