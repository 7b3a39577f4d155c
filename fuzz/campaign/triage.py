"""The parent's side of a `planfuzz run`: every event from the workers into stats and bugs, each bug's repro written
when it is first seen and again once shrunk (so a killed campaign leaves its bugs behind), then new bugs confirmed in
a fresh process, and the report.

Data flows one way: workers judge and shrink (fuzz/campaign/explore.py), this records and hands over (fuzz/campaign/report.py).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from fuzz.campaign.bugbook import Bug, Sample, headline
from fuzz.campaign.confirm import CONFIRMED, CONTEXT_DEPENDENT, KNOWN, UNCONFIRMED, confirm_all, context_script, expected_line, locate
from fuzz.campaign.example import under_knobs
from fuzz.campaign.files import atomic_write
from fuzz.campaign.messages import Event, Result, Retired, ShrinkStep
from fuzz.campaign.stats import Stats, reason_class
from fuzz.gen.interpret import source
from fuzz.gen.printer import jit_off_script, to_script
from fuzz.history.told import tell
from oracle.targets import Target


class Triage:
  """Stats and bugs of one campaign, as its workers report them."""

  def __init__(self, target: Target, calls: int, repro_dir: Path, workers: int, device: str = "CPU") -> None:
    self.target, self.calls, self.repro_dir = target, calls, repro_dir
    self.device = device  # the campaign's default device: off the CPU, a confirmed bug is located (`_locate`)
    self.stats = Stats(workers=workers)
    self.slots: dict[int, Any] = {}  # worker index -> its current process (history of programs run)
    self.shrink_seconds = 0.0
    self.rejections: dict[str, Sample] = {}  # a rejection reason -> the first program rejected for it

  def on_slot(self, slot: Any) -> None: self.slots[slot.job.worker] = slot

  def on_event(self, event: Event) -> None:
    if isinstance(event, Retired): self.stats.replaced[reason_class(event.why)] += 1
    elif isinstance(event, ShrinkStep): self._shrink(event)
    elif event.shrinking is not None: self._died_shrinking(event)
    else: self._example(event)

  def _sample(self, r: Result) -> Sample | None:
    head = headline(r.outcome)
    return None if head is None or r.program is None else Sample(r.program, r.mode, r.knobs, head[1], r.plan)

  def _example(self, r: Result) -> None:
    if r.outcome.rejected is not None and r.program is not None:
      self.rejections.setdefault(reason_class(r.outcome.rejected), Sample(r.program, r.mode, r.knobs, None, None))
    bug = self.stats.record(r.outcome, r.seconds, self._sample(r), r.program)
    if bug is None: return
    if (slot := self.slots.get(r.worker)) is not None:
      bug.history = slot.history[:-1]  # what this process ran before the program that showed the bug
    self._write(bug)

  def _died_shrinking(self, r: Result) -> None:
    """A candidate crashed or hung the worker while it shrank a bug: a bug of its own, and the shrink's note."""
    if (bug := self.stats.bugs.bugs.get(r.shrinking)) is not None:
      bug.shrink_note = f"stopped: a candidate took the worker down ({r.outcome.findings[0].kind}, reported as its own bug)"
    if (new := self.stats.bugs.record(r.outcome, self.stats.examples, r.seconds, self._sample(r))) is not None: self._write(new)

  def _shrink(self, step: ShrinkStep) -> None:
    if (bug := self.stats.bugs.bugs.get(step.signature)) is None: return
    if step.done:
      bug.shrink_seconds, bug.shrink_steps = step.seconds, step.steps
      self.shrink_seconds += step.seconds
      self._write(bug)
    elif (best := bug.best) is None or size(step.program) <= size(best.program):  # Hypothesis's order is not lines'
      bug.shrunk = Sample(step.program, step.mode, step.knobs, step.finding, step.plan)

  # ---------- handing over ----------

  def finish(self, confirm: bool = True, parallel: int = 1, timeout: float = 300.0, tinygrad_repo: Path | None = None) -> list[Bug]:
    """Write every bug's files; confirm each new one in a fresh process (a repro running past `timeout` confirms a
    hang) and tell each confirmed one of the tinyjit target with its history (the releases at hand that reproduce
    it; with `tinygrad_repo`, its bisect there). The bugs, new ones first."""
    bugs = self.stats.bugs.sorted()
    for bug in bugs: self._write(bug)
    self._write_rejections()
    todo = [b for b in bugs if b.new and b.repro is not None and b.status == UNCONFIRMED]  # an earlier run's were confirmed
    for bug in bugs:
      if not bug.new: bug.status = KNOWN
    if confirm and todo:
      expects = [expected_line(b.best.finding if b.best else None) for b in todo]
      for bug, (status, why) in zip(todo, confirm_all([b.repro for b in todo], parallel, timeout, expects), strict=True):
        bug.status, bug.confirm_note = status, why
        if status == CONTEXT_DEPENDENT: self._context(bug)
        elif status == CONFIRMED and self.device.split(":")[0] != "CPU": self._locate(bug, timeout)
    if confirm and self.target.kind == "tinyjit":  # a planner-target repro needs planfuzz's planner: no older tinygrad runs it
      for bug in bugs:
        if bug.new and bug.status == CONFIRMED and bug.repro is not None and not bug.releases:
          told = tell(Path(bug.repro), tinygrad_repo, timeout)
          bug.releases, bug.bisect = told.releases, told.bisect
    return bugs

  def _stem(self, bug: Bug) -> Path:
    """Named after the bug (its signature, under this target), not after a program: each rewrite (at first sight, once
    shrunk, at the end, and in a later campaign into the same dir) replaces the last, so one bug has one set of files."""
    digest = hashlib.sha256(repr(self.target).encode()).hexdigest()[:8]
    return self.repro_dir / f"bug-{bug.signature.key}-{digest}"

  def _script(self, sample: Sample) -> str:
    return to_script(sample.program, under_knobs(self.target, dict(sample.knobs)), sample.mode, self.calls, sample.finding)

  def _write(self, bug: Bug) -> None:
    if (best := bug.best) is None: return  # a worker died outside any program: nothing to replay
    self.repro_dir.mkdir(parents=True, exist_ok=True)
    stem = self._stem(bug)
    text = self._script(best)
    atomic_write(Path(f"{stem}.py"), text)
    bug.repro, bug.repro_lines = f"{stem}.py", size(best.program)
    unshrunk, plan, svg = Path(f"{stem}.unshrunk.py"), Path(f"{stem}.plan.json"), Path(f"{stem}.svg")
    if bug.shrunk is not None and bug.first is not None and bug.shrunk.program != bug.first.program:
      unshrunk.write_text(self._script(bug.first))
      bug.unshrunk_repro, bug.unshrunk_lines = str(unshrunk), size(bug.first.program)
    else:  # an earlier write's (or campaign's) file would describe another program
      unshrunk.unlink(missing_ok=True)
      bug.unshrunk_repro, bug.unshrunk_lines = None, 0
    if best.plan is not None:  # never on a tinygrad the planner does not support: fuzz.campaign.picture needs it
      from fuzz.campaign.picture import plan_from_json, render_svg
      plan.write_text(json.dumps(best.plan, indent=1))
      svg.write_text(render_svg(plan_from_json(best.plan)))
      bug.picture = str(svg)
    else:
      plan.unlink(missing_ok=True)
      svg.unlink(missing_ok=True)
      bug.picture = None

  def _write_rejections(self) -> None:
    """The first program rejected for each reason, as a runnable script: the generator promises valid programs, so
    a rejection is the generator's bug (or tinygrad's) and needs a program to look at."""
    for i, (why, sample) in enumerate(self.rejections.items()):
      self.repro_dir.mkdir(parents=True, exist_ok=True)
      path = self.repro_dir / f"rejected-{i}.py"
      path.write_text(f"# planfuzz: rejected ({why})\n" + self._script(sample))
      self.stats.rejected_examples[why] = str(path)

  def _locate(self, bug: Bug, timeout: float) -> None:
    """On a GPU or its emulator: whether the confirmed bug is the JIT's at all, and whether the CPU shows it too."""
    assert bug.best is not None and bug.repro is not None
    best, jit_off = bug.best, Path(str(bug.repro).removesuffix(".py") + ".jit-off.py")
    jit_off.write_text(jit_off_script(best.program, under_knobs(self.target, dict(best.knobs)), best.mode, self.calls, best.finding))
    bug.status, where = locate(bug.repro, jit_off, self.device, timeout, expected_line(best.finding))
    bug.confirm_note += f"; {where}"

  def _context(self, bug: Bug) -> None:
    """The worker's preceding programs and the one that first showed the bug, replayable in order."""
    if bug.first is None: return
    failing = (bug.first.program, bug.first.mode, bug.first.knobs)
    path = Path(str(bug.repro).removesuffix(".py") + ".context.py")
    path.write_text(context_script(bug.history, failing, self.target, self.calls))
    bug.context = str(path)


def size(program: Any) -> int:
  """Lines of a program's source: what "smaller" means to the reader of a repro."""
  return len(source(program).splitlines())
