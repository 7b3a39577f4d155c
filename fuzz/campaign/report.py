"""A campaign's report: `report.md` for people and `report.json` for tools, one entry per bug.

Each entry has the signature, the one-line message, the count, the blamed stage, new or known (and which known
tinygrad bug), whether a fresh process confirmed it, the shrunk repro and its size in program lines (and the unshrunk
one's), the plan picture, the tinygrad version, the device and the knobs. For the `tinyjit` target a new bug's
markdown reads as the body of an upstream tinygrad issue: what happens, the repro (tinygrad and numpy only), expected
against got.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fuzz.campaign.bugbook import Bug
from fuzz.campaign.files import atomic_write
from fuzz.campaign.stats import Stats
from fuzz.history.told import history_lines
from oracle.findings import CRASH, HANG, Finding


@dataclass(frozen=True)
class Meta:
  """What the whole campaign ran: the same for every bug in it."""
  target: str  # Target.describe()
  kind: str  # tinyjit, planner or static
  tinygrad: str
  device: str
  seed: int
  examples: int
  workers: int
  command: str
  summary: tuple[str, ...] = ()
  runs: int = 1  # runs of the command this report covers (a campaign killed and resumed: fuzz/campaign/resume.py)
  fleet: str = "local"  # the CI run this campaign is one runner of (--fleet)
  runner: str = ""  # which runner: $PLANFUZZ_RUNNER, else the host name


def entry(bug: Bug) -> dict[str, Any]:
  best = bug.best
  return {"signature": str(bug.signature), "kind": bug.signature.kind, "stage": bug.signature.stage, "role": bug.signature.role,
          "known": bug.signature.known, "new": bug.new, "status": bug.status, "confirm_note": bug.confirm_note,
          "message": bug.message if best is None else best.finding.message, "count": bug.count,
          "first_example": bug.first_example, "first_seconds": round(bug.first_seconds, 2), "repro": bug.repro,
          "repro_lines": bug.repro_lines, "unshrunk_repro": bug.unshrunk_repro, "unshrunk_lines": bug.unshrunk_lines,
          "shrink_seconds": round(bug.shrink_seconds, 2), "shrink_steps": bug.shrink_steps, "shrink_note": bug.shrink_note,
          "picture": bug.picture, "context": bug.context, "mode": best.mode if best else None,
          "knobs": dict(best.knobs) if best else {}, "engines": bug.engines,
          "releases": bug.releases, "bisect": bug.bisect}


def _expected_vs_got(details: dict) -> list[str]:
  rows = details.get("examples") or []
  if not rows: return [f"- {k}: {v}" for k, v in details.items() if k not in ("lazy", "lazy_at_capture")]
  return ["| index | got (JIT) | expected (no JIT, no memory planner) |", "|---|---|---|",
          *(f"| {ix} | {got:.6g} | {want:.6g} |" for ix, got, want in rows)]


def _what_happens(f: Finding) -> str:
  """The upstream issue's first sentence: a hang or crash took the process, no value differs."""
  if f.kind in (HANG, CRASH):
    return (f"**What happens.** Under `TinyJit` the step {'never finishes' if f.kind == HANG else 'takes the process down'}: "
            f"{f.details.get('why', 'no reason recorded')}.")
  return (f"**What happens.** Under `TinyJit`, `{f.subject}` differs from the same step run without the JIT and without "
          f"the memory planner, {'at call ' + str(f.call) + ' (' + f.phase + ')' if f.call is not None else 'in the plan'}: "
          f"`{f.kind}`. The difference persists with the stages planfuzz can switch off (blamed on: {f.attribution}).")


def issue_body(bug: Bug, meta: Meta) -> list[str]:
  """A new bug of tinygrad's own TinyJit, as an upstream issue's body."""
  best = bug.best
  assert best is not None
  f = best.finding
  script = Path(bug.repro).read_text() if bug.repro else "(no repro)"
  return [_what_happens(f), "",
          f"**Repro** (needs only tinygrad {meta.tinygrad} and numpy; exit status 1 when it reproduces, inputs "
          f"{best.mode}):", "", "```python", script.rstrip(), "```", "", "**Expected vs got:**", "", *_expected_vs_got(f.details), "",
          f"**Environment:** tinygrad {meta.tinygrad}, device {meta.device}, knobs {dict(best.knobs) or 'none'}.",
          *(["", "**History:**", *history_lines(bug.releases, bug.bisect)] if bug.releases or bug.bisect else [])]


def _markdown_entry(i: int, bug: Bug, meta: Meta) -> list[str]:
  e = entry(bug)
  label = "NEW" if bug.new else f"KNOWN tinygrad bug `{bug.signature.known}`"
  head = [f"## {i}. {label}: {bug.signature}", "", f"- status: **{bug.status}**{' (' + bug.confirm_note + ')' if bug.confirm_note else ''}",
          f"- message: `{e['message']}`", f"- seen in {bug.count} example(s), first at example {bug.first_example} "
          f"({bug.first_seconds:.1f}s into the campaign); stage: {bug.signature.stage}"]
  if bug.repro: head.append(f"- repro: `{bug.repro}` ({bug.repro_lines} program lines"
                            + (f"; unshrunk `{bug.unshrunk_repro}`, {bug.unshrunk_lines} lines" if bug.unshrunk_repro else "") + ")")
  if bug.shrink_steps or bug.shrink_note: head.append(f"- shrinking: {bug.shrink_steps} smaller program(s) in {bug.shrink_seconds:.1f}s"
                                                       + (f"; {bug.shrink_note}" if bug.shrink_note else ""))
  head += history_lines(bug.releases, bug.bisect)
  if bug.picture: head.append(f"- plan picture: `{bug.picture}`")
  if bug.context: head.append(f"- context replay (the worker's preceding programs, in order): `{bug.context}`")
  head.append(f"- mode {e['mode']}, knobs {e['knobs'] or 'none'}")
  if meta.kind == "tinyjit" and bug.new and bug.best is not None: head += ["", "### As an upstream issue", "", *issue_body(bug, meta)]
  return head + [""]


def markdown(bugs: list[Bug], meta: Meta) -> str:
  new = [b for b in bugs if b.new]
  lines = [f"# planfuzz report: {meta.target}", "", f"tinygrad {meta.tinygrad} on {meta.device}; seed {meta.seed}; "
           f"{meta.examples} examples over {meta.workers} worker(s); `{meta.command}`", "",
           f"**{len(new)} new bug(s), {len(bugs) - len(new)} known tinygrad bug(s).**", ""]
  if meta.summary: lines += ["```", *meta.summary, "```", ""]
  for i, bug in enumerate(bugs, 1): lines += _markdown_entry(i, bug, meta)
  return "\n".join(lines)


def write(bugs: list[Bug], meta: Meta, md_path: Path, stats: Stats | None = None) -> tuple[Path, Path]:
  """report.md at `md_path` and report.json beside it, each written whole or not at all; the json carries the
  campaign's stats (census, rates, rejections) for `planfuzz merge`."""
  atomic_write(md_path, markdown(bugs, meta))
  js = md_path.with_suffix(".json")
  plain = {"meta": vars(meta) | {"summary": list(meta.summary)}, "bugs": [entry(b) for b in bugs]}
  if stats is not None: plain["stats"] = stats.figures()
  atomic_write(js, json.dumps(plain, indent=1, default=str))
  return md_path, js
