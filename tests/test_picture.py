"""The plan picture: a hand-built 50-buffer plan renders to valid SVG with one box per buffer, conflicts in red."""
import xml.etree.ElementTree as ET

import pytest

from fuzz.campaign.picture import load, plan_from_json, plan_to_json, render_svg
from oracle.findings import Finding
from planner import tg
from planner.memplan import Arena, MemoryPlan, PlannedBuffer

SVG = "{http://www.w3.org/2000/svg}"


def fifty_buffer_plan(length: int = 1) -> tuple[MemoryPlan, list]:
  """49 buffers stacked without overlap in arena 0 (one per 64 bytes, `length` + 1 steps each), plus one placed on top of
  buffer 10's bytes at its steps (a conflict); buffer 20 is reachable from a live tensor."""
  arenas = (Arena(tg.new_buffer("CPU", 64 * 49), "CPU", 0, 64 * 49),)
  uops = [tg.new_buffer("CPU", 64) for _ in range(50)]
  bufs = [PlannedBuffer.of(u, "CPU", 0, 0, 64 * i, 64, "dtypes.float", i % 30, i % 30 + length) for i, u in enumerate(uops[:49])]
  bufs.append(PlannedBuffer.of(uops[49], "CPU", 0, 0, 64 * 10 + 16, 32, "dtypes.half", 11, 12))
  return MemoryPlan(tuple(bufs), arenas, frozenset()), uops


def boxes(svg: str) -> dict[str, set[str]]:
  """Buffer name -> its rect's classes, for every rect carrying a tooltip (the legend's rects carry none)."""
  root = ET.fromstring(svg)
  rects = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
  return {r.find(f"{SVG}title").text.split()[0]: set(r.get("class").split()) for r in rects}


def test_fifty_buffers_render_as_fifty_boxes_with_the_conflict_in_red() -> None:
  plan, uops = fifty_buffer_plan()
  data = plan_to_json(plan, Finding("invariant:overlap", "buf", None, "static", {}), live={uops[20]})
  drawn = boxes(render_svg(plan_from_json(data)))
  names = [b.name for b in plan.buffers]
  assert sorted(drawn) == sorted(names)
  conflicting = {n for n, cls in drawn.items() if "conflict" in cls}
  assert conflicting == {names[10], names[49]}
  assert "live" in drawn[names[20]] and "live" not in drawn[names[21]]


def test_labels_only_where_they_fit_and_the_finding_is_the_caption() -> None:
  """Boxes five steps wide hold a name of any length this process gives (`buf` and a slot number that grows with every
  buffer made before), so the count of labels does not depend on what ran earlier."""
  plan, _ = fifty_buffer_plan(length=4)
  svg = render_svg(plan_from_json(plan_to_json(plan, Finding("invariant:overlap", "bufX", None, "static", {"why": "test"}))))
  root = ET.fromstring(svg)
  labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "label"]
  assert 0 < len(labels) <= 50  # 64-byte boxes in a 3 KiB arena are 4-5 px high: too small for a label
  assert any("bufX" in (t.text or "") for t in root.iter(f"{SVG}text") if t.get("class") == "caption")


def test_json_round_trip_and_bad_files(tmp_path) -> None:
  plan, _ = fifty_buffer_plan()
  pic = plan_from_json(plan_to_json(plan))
  assert pic.boxes == plan.placements() and pic.arenas == (("CPU", 0, 64 * 49),) and pic.finding is None  # one representation
  bad = tmp_path / "bad.json"
  bad.write_text('{"format": "something else"}')
  with pytest.raises(ValueError, match="not a planfuzz plan file"): load(bad)


@pytest.mark.parametrize("kind", ["planner", "static", "tinyjit"])
def test_a_findings_picture_is_of_the_capture_it_came_from(kind: str) -> None:
  """The buffers a plan finding names are boxes of its picture, marked live: the picture is of the same capture."""
  from fuzz.campaign.explore import worker_outcome
  from fuzz.test_repro import LAZY_GRAD
  from oracle.runs import SAME_BUFFER
  from oracle.targets import Target
  target = Target(kind, policy="returned-only") if kind != "tinyjit" else Target(kind)
  outcome, plan = worker_outcome(LAZY_GRAD, target, 5, SAME_BUFFER)
  if kind == "tinyjit":  # tinygrad 0.14.0 holds the grad's buffers: no finding, no picture
    assert not outcome.findings and plan is None
    return
  named = [n for f in outcome.findings if f.kind == "invariant:live-planned" for n in f.details["buffers"]]
  boxes = {b["name"] for b in plan["buffers"]}
  assert named and all(n in boxes and n in plan["live"] for n in named), (named, sorted(boxes))
  assert plan["finding"] == outcome.findings[0].message
