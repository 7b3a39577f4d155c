"""Attribution: re-run a failing program with one stage switched off at a time to say which stage is to blame.

planner: gone with the memory planner off inside the JIT; graph: gone with JIT=2; prune: gone without prune;
capture: still there with all of those off; eager: eager tinygrad with its planner on already disagrees with the
planner-off reference (an eager bug). A difference only prune causes is documented (with prune=True what does not
depend on the inputs runs once, so its values freeze) and is dropped and counted, but only when the prune split was
sound: when the prune-split invariant found a one-time call that depends on the inputs, it is a finding.
"""
from __future__ import annotations

from dataclasses import replace

from oracle.compare import Verdict, judge
from oracle.findings import Finding
from oracle.runs import Trace, reference, run
from oracle.subject import SubjectFactory
from oracle.targets import Target

STATIC_BLAME = {"invariant:graph-order": "graph", "invariant:input-not-copied": "capture", "invariant:prune-split": "prune"}
DOCUMENTED_PRUNE = "documented prune freezing"


def static_stage(f: Finding) -> str:
  """The stage a plan invariant blames, with no rerun needed."""
  return STATIC_BLAME.get(f.kind, "planner")


def blame_static(verdict: Verdict) -> Verdict:
  """A static-path verdict (invariants only) with every finding blamed."""
  return replace(verdict, findings=[f.blamed(static_stage(f)) for f in verdict.findings])


def persists(f: Finding, verdict: Verdict) -> bool:
  return any(g.subject == f.subject and g.call == f.call for g in verdict.findings)


def _stages(target: Target, pruned: bool) -> list[tuple[str, Target]]:
  """The variants to rerun, one stage off in each. JIT=2 is left out where it changes nothing: tinygrad's splitter
  batches nothing on a default device without a graph (the CPU), nor under HCQ2, where a capture is one 'hcq' call that
  no graph runner takes (they take kernels and copies), so that run would repeat the target's, at its cost."""
  from planner import tg
  from planner.engines import hcq2
  graphs = target.graph != "tinygrad" or (not hcq2.active() and tg.default_device_graphs())
  return [("planner", target.with_knobs(NO_MEMORY_PLANNER=1)), *([("graph", target.with_knobs(JIT=2))] if graphs else []),
          *([("prune", replace(target, prune=False))] if pruned else [])]


def attribute(program: SubjectFactory, target: Target, calls: int, mode: str, ref: Trace, got: Trace, verdict: Verdict) -> Verdict:
  """Blame every finding on a stage; drop differences that only prune causes (documented), counting them as skipped."""
  dynamic = [f for f in verdict.findings if f.call is not None]
  blame = {id(f): static_stage(f) for f in verdict.findings if f.call is None}
  if dynamic:
    eager = judge(ref, reference(program, calls, mode, planner_on=True), mode)
    blame |= {id(f): "eager" for f in dynamic if persists(f, eager)}
    for stage, variant in _stages(target, target.prunes(got.prune)):
      if all(id(f) in blame for f in dynamic): break
      again = judge(ref, run(program, variant.wrap, calls, mode, variant.context), mode)
      blame |= {id(f): stage for f in dynamic if id(f) not in blame and not persists(f, again)}
  out = replace(verdict, findings=[], skipped=verdict.skipped.copy())
  sound_prune = not any(f.kind == "invariant:prune-split" for f in verdict.findings)
  for f in verdict.findings:
    stage = blame.get(id(f), "capture")
    if stage == "prune" and f.call is not None and sound_prune: out.skipped[DOCUMENTED_PRUNE] += 1
    else: out.findings.append(f.blamed(stage))
  return out
