"""A memory plan as a picture: kernel step across, arena byte offset down, one box per planned buffer.

A planner bug is a geometry bug (two boxes sharing bytes at the same step, or a box for memory a live tensor still
reads), so a picture shows it faster than a list of offsets. The plan travels as JSON (`plan_to_json`), written
next to each repro script, because a MemoryPlan holds tinygrad UOps that do not outlive the process; the SVG is
written by hand so that nothing beyond the standard library is needed to draw it.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from html import escape
from pathlib import Path
from typing import Any

from oracle.findings import Finding
from planner.memplan import MemoryPlan, Placement

FORMAT = "planfuzz-plan/2"  # /2: buffers as planner.memplan.Placement, live and held as name lists
WIDTH, LEFT, RIGHT, PANEL_GAP, CHAR_W, LINE_H = 1000, 90, 20, 60, 6.6, 14
PALETTE = ("#9ecae1", "#a1d99b", "#fdd0a2", "#dadaeb", "#c7e9c0", "#fcbba1", "#d9d9d9", "#bcbddc")


@dataclass(frozen=True)
class PlanPicture:
  """What a picture needs from a plan, rebuilt from its JSON: arenas as (device, lane, nbytes), one box per planned
  buffer, the finding, and the names of the boxes a live tensor reaches (they must never be in an arena) and of those
  in the held set the planner was given, yet planned."""
  arenas: tuple[tuple[str | list[str], int, int], ...]
  boxes: tuple[Placement, ...]
  finding: str | None = None
  live: frozenset[str] = frozenset()
  held: frozenset[str] = frozenset()

  def conflicts(self) -> set[str]:
    """Names of boxes that share bytes with another box at some step: the overlap the invariants report."""
    out: set[str] = set()
    for arena in range(len(self.arenas)):
      boxes = sorted((b for b in self.boxes if b.arena == arena), key=lambda b: b.offset)
      for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
          if b.offset >= a.offset + a.nbytes: break
          if a.overlaps(b): out |= {a.name, b.name}
    return out


def plan_to_json(plan: MemoryPlan, finding: Finding | None = None, live: set | frozenset = frozenset()) -> dict[str, Any]:
  """A MemoryPlan as plain JSON data; `live` is the set of BUFFER UOps reachable from tensors a user can still read."""
  return {"format": FORMAT,
          "arenas": [{"device": a.device if isinstance(a.device, str) else list(a.device), "lane": a.lane, "nbytes": a.nbytes}
                     for a in plan.arenas],
          "buffers": [asdict(p) for p in plan.placements()],
          "live": [b.name for b in plan.buffers if b.buffer in live], "held": [b.name for b in plan.buffers if b.buffer in plan.held],
          "finding": None if finding is None else finding.message}


def plan_from_json(data: dict[str, Any]) -> PlanPicture:
  if data.get("format") != FORMAT: raise ValueError(f"not a planfuzz plan file (format {data.get('format')!r}, expected {FORMAT!r})")
  arenas = tuple((a["device"], a["lane"], a["nbytes"]) for a in data["arenas"])
  boxes = tuple(Placement(**{**b, "device": b["device"] if isinstance(b["device"], str) else tuple(b["device"])}) for b in data["buffers"])
  return PlanPicture(arenas, boxes, data.get("finding"), frozenset(data["live"]), frozenset(data["held"]))


def load(path: str | Path) -> PlanPicture:
  try: return plan_from_json(json.loads(Path(path).read_text()))
  except (json.JSONDecodeError, KeyError, TypeError) as e: raise ValueError(f"{path}: not a planfuzz plan file ({e})") from e


def _ticks(hi: int, n: int) -> list[int]:
  """About n round tick values in [0, hi]."""
  step = max(1, hi // n)
  mag = 10 ** (len(str(step)) - 1)
  step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= step)
  return list(range(0, hi + 1, step))


def _wrap(text: str, width: int) -> list[str]:
  lines, line = [], ""
  for word in text.split():
    if line and len(line) + 1 + len(word) > width: lines, line = [*lines, line], word
    else: line = f"{line} {word}" if line else word
  return [*lines, line] if line else lines


def device_title(device: str | list[str]) -> str:
  """One device's name, or for a multi-device arena every device it spans (each holds the same layout)."""
  return device if isinstance(device, str) else f"sharded over {', '.join(device)} (same layout on each)"


def _panel(pic: PlanPicture, arena: int, top: float, steps: int, conflicts: set[str]) -> tuple[list[str], float]:
  device, lane, nbytes = pic.arenas[arena]
  boxes = [b for b in pic.boxes if b.arena == arena]
  height = max(160, min(720, 14 * len(boxes)))
  plot_w = WIDTH - LEFT - RIGHT
  x = lambda step: LEFT + plot_w * step / steps
  y = lambda off: top + height * off / max(nbytes, 1)
  lane_name = "copy" if lane else "compute"
  out = [f'<text class="title" x="{LEFT}" y="{top - 8}">arena {arena}: {escape(device_title(device))}, {lane_name} lane, '
         f'{nbytes} bytes, {len(boxes)} buffers</text>',
         f'<rect class="frame" x="{LEFT}" y="{top}" width="{plot_w}" height="{height}"/>']
  for t in _ticks(steps, 20):
    out.append(f'<line class="grid" x1="{x(t):.1f}" y1="{top}" x2="{x(t):.1f}" y2="{top + height}"/>'
               f'<text class="tick" x="{x(t):.1f}" y="{top + height + 12}" text-anchor="middle">{t}</text>')
  for t in _ticks(nbytes, 6):
    out.append(f'<text class="tick" x="{LEFT - 4}" y="{y(t) + 4:.1f}" text-anchor="end">{t}</text>')
  dtypes = sorted({b.dtype for b in pic.boxes})
  labels = []
  for b in sorted(boxes, key=lambda b: b.name in conflicts):  # conflicts drawn last, on top
    bx, by, bw, bh = x(b.first), y(b.offset), x(b.end + 1) - x(b.first), max(y(b.offset + b.nbytes) - y(b.offset), 1.5)
    live, held = b.name in pic.live, b.name in pic.held
    cls = " ".join(["buf", *(["conflict"] if b.name in conflicts else []), *(["live"] if live else []), *(["held"] if held else [])])
    tip = (f"{b.name} {b.dtype}: bytes [{b.offset}, {b.offset + b.nbytes}) steps [{b.first}, {b.end}]"
           f"{' (held ' + str(b.hold) + ' steps)' if b.hold else ''}{' LIVE' if live else ''}{' HELD' if held else ''}")
    fill = PALETTE[dtypes.index(b.dtype) % len(PALETTE)]
    out.append(f'<rect class="{cls}" x="{bx:.1f}" y="{by:.1f}" width="{bw:.1f}" height="{bh:.1f}" fill="{fill}">'
               f'<title>{escape(tip)}</title></rect>')
    if b.end > b.last:  # the copy-lane hold, hatched
      out.append(f'<rect class="hold" x="{x(b.last + 1):.1f}" y="{by:.1f}" width="{x(b.end + 1) - x(b.last + 1):.1f}" height="{bh:.1f}"/>')
    if bw >= len(b.name) * CHAR_W + 4 and bh >= 11:
      labels.append(f'<text class="label" x="{bx + 2:.1f}" y="{by + min(bh / 2 + 4, 12):.1f}">{escape(b.name)}</text>')
  out += labels  # after every box, so no box covers a label
  out.append(f'<text class="axis" x="{LEFT + plot_w / 2}" y="{top + height + 28}" text-anchor="middle">kernel step</text>'
             f'<text class="axis" x="14" y="{top + height / 2}" transform="rotate(-90 14 {top + height / 2})" '
             'text-anchor="middle">byte offset</text>')
  return out, height


STYLE = """<style>
text { font-family: monospace; font-size: 11px; fill: #222; }
.title { font-size: 13px; font-weight: bold; } .caption { font-size: 12px; fill: #900; } .axis { font-size: 12px; }
.frame { fill: #fbfbfb; stroke: #888; } .grid { stroke: #e4e4e4; }
.buf { stroke: #555; stroke-width: 0.6; } .buf.conflict { fill: #e31a1c; fill-opacity: 0.75; stroke: #800; stroke-width: 1.5; }
.buf.live, .buf.held { stroke: #000; stroke-width: 2.2; stroke-dasharray: 5 2; }
.hold { fill: url(#hatch); stroke: none; } .label { font-size: 10px; pointer-events: none; }
</style>
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
<line x1="0" y1="0" x2="0" y2="6" stroke="#333" stroke-width="1.2"/></pattern></defs>"""


def _legend(top: float) -> list[str]:
  items = [("buf", "#9ecae1", "planned buffer (colour: dtype)"), ("buf conflict", "#e31a1c", "conflict: shares bytes and steps"),
           ("buf live", "#ffffff", "reachable from a live tensor / held"), ("hold", "", "copy-lane hold")]
  out, x = [], LEFT
  for cls, fill, text in items:
    out.append(f'<rect class="{cls} legend" x="{x}" y="{top}" width="18" height="11"{f" fill={chr(34)}{fill}{chr(34)}" if fill else ""}/>'
               f'<text x="{x + 24}" y="{top + 10}">{escape(text)}</text>')
    x += 34 + len(text) * CHAR_W
  return out


def render_svg(pic: PlanPicture) -> str:
  """The whole picture: caption (the finding), a legend, one panel per arena; hover a box for its exact place."""
  steps = max((b.end for b in pic.boxes), default=0) + 1
  conflicts = pic.conflicts()
  caption = _wrap(pic.finding or "no finding recorded", (WIDTH - 2 * LEFT) // 7)
  body = [f'<text class="caption" x="{LEFT}" y="{20 + LINE_H * i}">{escape(line)}</text>' for i, line in enumerate(caption)]
  top = 20 + LINE_H * len(caption)
  body += _legend(top)
  top += 50
  for arena in range(len(pic.arenas)):
    panel, height = _panel(pic, arena, top, steps, conflicts)
    body += panel
    top += height + PANEL_GAP
  if not pic.arenas: body.append(f'<text x="{LEFT}" y="{top}">no buffer was planned into an arena</text>')
  return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{top + 10:.0f}" viewBox="0 0 {WIDTH} {top + 10:.0f}">\n'
          f'{STYLE}\n<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n")
