"""A repro script reaches the oracle's verdict: the same observables mismatch after the same calls, the rest agree.

Each program below is judged by the oracle (`oracle.check.judge_program`) and by a repro script run in a fresh process.
The script (`fuzz.gen.printer.compare_script`) is written with every value the oracle compared, each carrying the
oracle's decision as data (which reference call, which tolerance: `oracle.expected`), so its mismatches must be exactly
the oracle's findings and everything else must agree; a script a campaign writes for one finding carries that finding's
row of the same decisions. A `tinyjit` script runs with planfuzz unimportable: it is standalone.

The programs: the IR programs the tests name (a lazy grad in both input modes, train and eval steps with a reset, in the
model-method form and with a fed-back input, an input assign, a pruned step, copies to a second device, a returned view
of a fresh input, a lazy escape tinygrad gets wrong) and a seeded sample of the generator's, under tinygrad's TinyJit;
and planner mutants' first findings, found by a seed-0 campaign (`fuzz.campaign.run.run_campaign`) in a process of its
own (a mutant may crash one), whose scripts must show the oracle's plan findings too: one mutant of each kind in the
fast test, every other one a CPU campaign reaches in the slow one.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from fuzz.gen.interpret import to_subject
from fuzz.gen.printer import compare_script, is_value, to_script
from fuzz.gen.program import Backward, Bound, Feedback, Group, Leaf, Op, Program
from oracle.check import Judged, judge_program
from oracle.compare import undefined
from oracle.expected import Expected, expected
from oracle.findings import WRONG_VALUES, Finding
from oracle.runs import FRESH, SAME_BUFFER
from oracle.targets import Target
from planner import tg
from planner.mutants import MUTANTS
from planner.ran import as_data, recording

ROOT = Path(__file__).resolve().parents[1]
CALLS = 5
SAMPLED = 4  # programs of the generator's seed-0 sample
# runs each script given after the mode in one fresh process, as a user runs it, and prints as JSON each one's output,
# exit status and what tinygrad ran in its JIT calls (planner/ran.py, set up before anything is hidden); `standalone`
# hides planfuzz from the scripts (a tinyjit repro imports only tinygrad and numpy)
RUNNER = """
import contextlib, io, json, runpy, sys, traceback
from planner.ran import as_data, recording
with recording() as calls:
  if sys.argv[1] == "standalone": sys.modules.update(planner=None, oracle=None, fuzz=None)
  done = []
  for path in sys.argv[2:]:
    out, before = io.StringIO(), len(calls)
    with contextlib.redirect_stdout(out):
      try: runpy.run_path(path, run_name="__main__"); rc = 0
      except SystemExit as e: rc = e.code or 0
      except BaseException: traceback.print_exc(file=out); rc = 1
    done.append({"rc": rc, "stdout": out.getvalue(), "ran": as_data(calls[before:])})
print(json.dumps(done))
"""
MISMATCH = re.compile(r"^MISMATCH (\S+) at call (\d+)", re.M)
STATIC = re.compile(r"^MISMATCH \(static\) \[([^\]]+)\]", re.M)


@dataclass(frozen=True)
class Said:
  """What the oracle said of one program under one target: every value it compared, each with its decision, the
  (observable, call) it found wrong, its plan findings' kinds, whether the JIT raised, and what tinygrad ran in the
  JIT's calls while it judged (`planner.ran`), which the script must run too."""
  checks: tuple[Expected, ...]
  wrong: frozenset[tuple[str, int]]
  static: frozenset[str]
  error: bool
  ran: list


@dataclass(frozen=True)
class Case:
  name: str
  program: Program
  target: Target
  mode: str


def compared(judged: Judged, mode: str) -> list[tuple[str, int]]:
  """Every (observable, call) the judge compared, found by walking its rules (oracle/compare.py `judge`) again: a value
  another call left wrong and fed back ends the comparison, an undefined one is skipped. Checked against its count."""
  ref, got, verdict = judged.ref, judged.got, judged.verdict
  assert got is not None
  wrong = {(f.subject, f.call) for f in verdict.findings if f.call is not None}
  pairs: list[tuple[str, int]] = []
  off: set[str] = set()
  for want, have in zip(ref.calls, [c for c in got.calls if c.error is None], strict=False):
    if have.fed_back & off: break
    capture, off = got.capture_record(have.index), set()
    for path in want.values:
      if path not in have.values or undefined(ref, got, have, path, mode, capture) is not None: off.add(path); continue
      pairs.append((path, have.index))
      if (path, have.index) in wrong: off.add(path)
  assert len(pairs) == verdict.compared, (pairs, verdict.compared)
  return pairs


def oracle_says(program: Program, target: Target, mode: str) -> Said | None:
  """The oracle's verdict on `program`, with the decision behind every value it compared (and every one it missed);
  None when it rejects the program."""
  with recording() as calls: j = judge_program(lambda: to_subject(program), target, CALLS, mode)
  if j.verdict.rejected is not None or j.got is None: return None
  values = [f for f in j.verdict.findings if is_value(f)]
  pairs = compared(j, mode)
  pairs += [(f.subject, f.call) for f in values if (f.subject, f.call) not in pairs]  # not observable in the JIT run
  return Said(tuple(expected(j.ref, j.got, path, call, mode) for path, call in pairs), frozenset((f.subject, f.call) for f in values),
              frozenset(f.kind for f in j.verdict.findings if f.call is None),
              any(not is_value(f) and f.call is not None for f in j.verdict.findings), as_data(calls))


def run_scripts(name: str, target: Target, texts: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> list[dict]:
  """Each script's output, exit status and what it ran, run one after another in one fresh process (in `env`)."""
  paths = []
  for i, text in enumerate(texts):
    (path := tmp_path / f"{name}-{i}.py").write_text(text)
    paths.append(str(path))
  mode = "standalone" if target.kind == "tinyjit" else "planfuzz"
  out = subprocess.run([sys.executable, "-c", RUNNER, mode, *paths], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
  assert out.returncode == 0, out.stdout + out.stderr
  return json.loads(out.stdout.splitlines()[-1])


def agrees(said: Said, target: Target, script: dict, what: str) -> None:
  """The script's verdict is the oracle's: the same (observable, call) mismatch, the same plan findings, the same error;
  and the script ran the program the oracle judged: the same kernels and copies, on the same devices, in each JIT call."""
  ran = script["ran"][:len(said.ran)] if target.kind != "tinyjit" else script["ran"]  # then its plan checks judge it again
  assert ran == said.ran, f"{what}: the script ran another program than the judged one\n{first_difference(said.ran, ran)}"
  shown = {(path, int(call)) for path, call in MISMATCH.findall(script["stdout"])}
  assert shown == said.wrong, f"{what}: the script says {sorted(shown)}, the oracle {sorted(said.wrong)}\n{script['stdout']}"
  if target.kind != "tinyjit": assert set(STATIC.findall(script["stdout"])) == said.static, (what, said.static, script["stdout"])
  assert said.error == ("Traceback" in script["stdout"]), (what, script["stdout"])
  assert (script["rc"] == 1) == bool(said.wrong or said.static or said.error), (what, script)


def first_difference(judged: list, script: list) -> str:
  """Where two recordings of what ran part: the first JIT call that differs, both ways."""
  for a, b in zip(judged, script, strict=False):
    if a != b: return f"judged: {a}\nscript: {b}"
  return f"judged {len(judged)} JIT calls, the script made {len(script)}"


# ---------- the corpus ----------

# relu(x).contiguous() * x * p0's grad left lazy: tinygrad's lazy-escape-frozen-on-read, findings under TinyJit
MIXED_ESCAPE = Program(params=(Leaf("p0", (8,), seed=1),), inputs=(Leaf("x0", (8,), seed=2),), state=(),
                       body=(Op("relu", ("x0",), "v0"), Op("contiguous", ("v0",), "v1"), Op("mul", ("v1", "x0"), "v2"),
                             Op("mul", ("v2", "p0"), "v3"), Op("scale", ("x0", 2.0), "v4")),
                       backward=(Backward("v3"),), returns="v4")
# a reshape of the input returned beside a kernel's result: with fresh inputs its replays show the capture's (documented)
INPUT_VIEW = Program(params=(), inputs=(Leaf("x0", (8,), seed=2),), state=(), backward=(), returns=Group("tuple", ("v0", "v1")),
                     body=(Op("reshape", ("x0", (2, 4)), "v0"), Op("scale", ("x0", 2.0), "v1")))

# each input kind the short form makes where the call takes it: fed back from the last call, a bound Variable, sharded
FED_BACK = Program(params=(), inputs=(Leaf("x0", (8,), seed=2),), state=(), backward=(), returns="v0",
                   body=(Op("scale", ("x0", 0.5), "v0"),), feedback=Feedback(0, ()))
SYMBOLIC = Program(params=(), inputs=(Leaf("x0", (8, 4), seed=2),), state=(), backward=(), returns="v0",
                   body=(Op("symbolic_lazy", ("x0", "sum", "n"), "v0"),), variable=Bound(3, 1))
SHARDED_INPUT = Program(params=(), inputs=(Leaf("x0", (4, 4), seed=2, shard=(2, 0)),), state=(), backward=(), returns="v1",
                        body=(Op("scale", ("x0", 2.0), "v0"), Op("unshard", ("v0", "DEFAULT"), "v1")))

# hand-written for issue 32: a copy to the second device and back beside an input sharded over two devices, the two
# places a repro once ran another program than the campaign (its copies went to the CPU, not CPU:1 or AMD:1)
COPY_AND_SHARD = Program(params=(Leaf("p0", (8,), seed=1),), inputs=(Leaf("x0", (4, 4), seed=2, shard=(2, 0)), Leaf("x1", (8,), seed=3)),
                         state=(), backward=(Backward("v5"),), returns=Group("tuple", ("v5", "v7")),
                         body=(Op("mul", ("x1", "p0"), "v0"), Op("to", ("v0", "SECOND"), "v1"), Op("relu", ("v1",), "v2"),
                               Op("contiguous", ("v2",), "v3"), Op("to", ("v3", "DEFAULT"), "v4"), Op("scale", ("v4", 2.0), "v5"),
                               Op("scale", ("x0", 2.0), "v6"), Op("unshard", ("v6", "DEFAULT"), "v7")))


def named_corpus() -> list[Case]:
  from fuzz.gen.program import StateUpdate
  from fuzz.test_repro import LAZY_GRAD
  from tests.test_campaigns import THROUGH_SECOND
  from tests.test_steps import INPUT_ASSIGN, TRAIN_EVAL
  pruned = Program(params=(), inputs=(Leaf("x0", (8,), seed=2),), state=(Leaf("s0", (8,), seed=3),), body=(Op("scale", ("x0", 2.0), "v0"),),
                   backward=(), returns="v0", state_updates=(StateUpdate("s0"),), prune=True)
  tinyjit = Target("tinyjit")
  return [Case("lazy-grad", LAZY_GRAD, tinyjit, SAME_BUFFER), Case("lazy-grad-fresh", LAZY_GRAD, tinyjit, FRESH),
          Case("mixed-escape", MIXED_ESCAPE, tinyjit, SAME_BUFFER),
          Case("train-eval-reset", replace(TRAIN_EVAL, reset=2), tinyjit, FRESH),
          Case("train-eval-method", replace(TRAIN_EVAL, method=True), tinyjit, SAME_BUFFER),
          Case("train-eval-fed-back", replace(TRAIN_EVAL, feedback=Feedback(0, ()), realize_grads=True), tinyjit, SAME_BUFFER),
          Case("input-assign", INPUT_ASSIGN, tinyjit, SAME_BUFFER), Case("pruned-state", pruned, tinyjit, SAME_BUFFER),
          Case("through-second-device", THROUGH_SECOND, tinyjit.with_knobs(JIT=2), FRESH),
          Case("returned-input-view", INPUT_VIEW, tinyjit, FRESH), Case("fed-back", FED_BACK, tinyjit, SAME_BUFFER),
          Case("symbolic", SYMBOLIC, tinyjit, SAME_BUFFER), Case("sharded-input", SHARDED_INPUT, tinyjit, SAME_BUFFER),
          Case("copy-and-shard", COPY_AND_SHARD, tinyjit, SAME_BUFFER),
          Case("copy-and-shard-method", replace(COPY_AND_SHARD, method=True), tinyjit, FRESH)]


def sampled_corpus(n: int) -> list[Case]:
  """The first `n` programs a seed-0 generator draws, each with its drawn input mode and knobs, under TinyJit (but the
  knobs tinygrad reads once per process: one process runs every script)."""
  from fuzz.gen.strategies import knob_settings, programs
  drawn: list[Case] = []

  @seed(0)
  @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None, suppress_health_check=list(HealthCheck))
  @given(program=programs(), mode=st.sampled_from((FRESH, SAME_BUFFER)), knobs=knob_settings())
  def draw(program: Program, mode: str, knobs: dict[str, int]) -> None:
    knobs = {k: v for k, v in knobs.items() if k not in tg.PROCESS_KNOBS}
    drawn.append(Case(f"sampled-{len(drawn)}", program, Target("tinyjit", knobs=tuple(knobs.items())), mode))

  draw()
  return drawn


def test_every_corpus_programs_script_reaches_the_oracles_verdict(tmp_path: Path) -> None:
  """All the scripts run in one process (tinygrad compiles each kernel once); the corpus holds values the oracle finds
  wrong and values it compares with their capture's (documented as frozen), so the scripts carry both decisions."""
  cases = named_corpus() + sampled_corpus(SAMPLED)
  said = {c.name: oracle_says(c.program, c.target, c.mode) for c in cases}
  judged = [c for c in cases if said[c.name] is not None]
  assert len(judged) >= len(cases) - SAMPLED // 2, {c.name for c in cases} - {c.name for c in judged}  # some draws may be invalid
  texts = [compare_script(c.program, c.target, c.mode, CALLS, said[c.name].checks, "") for c in judged]
  scripts = run_scripts("corpus", Target("tinyjit"), texts, tmp_path)
  for case, script in zip(judged, scripts, strict=True): agrees(said[case.name], case.target, script, case.name)
  forms = {c.name: "def build():" in text for c, text in zip(judged, texts, strict=True)}
  assert not forms["copy-and-shard"] and forms["copy-and-shard-method"] and forms["train-eval-method"], forms  # both forms judged
  assert any(said[c.name].wrong for c in judged) and any(x.source != x.call for c in judged for x in said[c.name].checks)
  for case in (c for c in judged if said[c.name].wrong):  # the script of a campaign's finding: its row of the decisions
    path, call = min(said[case.name].wrong, key=lambda w: (w[1], w[0]))
    row = next(x for x in said[case.name].checks if (x.path, x.call) == (path, call))
    text = to_script(case.program, case.target, case.mode, CALLS, Finding(WRONG_VALUES, path, call, row.phase))
    assert f"CHECKS = [({path!r}, {call}, {row.source}, {row.rtol!r}, {row.atol!r})]" in text, (case.name, text)


# ---------- planner mutants' first findings ----------

# in a process of its own (a mutant may crash it), for each mutant named: the seed-0 campaign's first finding, with the
# example's drawn knobs (the campaign's Found keeps the target without them), judged by the oracle; a JSON line each
FIRST_FINDINGS = """
import json, sys
import fuzz.campaign.run as campaign
from fuzz.gen.printer import compare_script
from oracle.targets import Target
from tests.test_repro_verdicts import CALLS, oracle_says
run_example, first = campaign.run_example, []
def recorded(program, target, calls, mode, **kw):
  outcome = run_example(program, target, calls, mode, **kw)
  if outcome.findings and not first: first.append((program, target, mode))
  return outcome
campaign.run_example = recorded
for name in sys.argv[2:]:
  first.clear()
  assert campaign.run_campaign(Target.for_mutant(name), 0, int(sys.argv[1])).found is not None and first, f"{name} survived"
  program, target, mode = first[0]
  said = oracle_says(program, target, mode)
  assert said is not None, f"{name}: its first finding's program is rejected when judged again"
  print(json.dumps({"name": name, "script": compare_script(program, target, mode, CALLS, said.checks, "", static=True),
                    "wrong": sorted(said.wrong), "static": sorted(said.static), "error": said.error, "ran": said.ran}), flush=True)
"""
MUTANT_EXAMPLES = 300
# one mutant of each kind, each found within a few examples: a planner, a policy, a replay copy rule
FAST_MUTANTS = ("free-at-first-use", "returned-only", "no-input-copy")
# a seed-0 CPU campaign gives no first finding to repro under these: under `unaligned` a program segfaults the
# campaign's process (its finding is a crash, which only `planfuzz run`'s workers survive); `shard-share-sizes` and
# `offset-16bit` need a rare draw (two sharded buffers live at once; 64 KiB of arena) that 300 examples did not make
UNREACHED = ("unaligned", "shard-share-sizes", "offset-16bit")


def mutants_both_ways(names: list[str], tmp_path: Path) -> None:
  """Each mutant's first finding judged by the oracle, and its short script run; all the scripts in one process."""
  out = subprocess.run([sys.executable, "-c", FIRST_FINDINGS, str(MUTANT_EXAMPLES), *names], capture_output=True, text=True,
                       timeout=900, cwd=ROOT)
  assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
  found = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
  assert [f["name"] for f in found] == names
  scripts = run_scripts("mutants", Target(), [f["script"] for f in found], tmp_path)
  for f, script in zip(found, scripts, strict=True):
    said = Said((), frozenset(tuple(w) for w in f["wrong"]), frozenset(f["static"]), f["error"], f["ran"])
    assert said.wrong or said.static or said.error, f
    agrees(said, Target.for_mutant(f["name"]), script, f"{f['name']}: the short script of its first finding")


def test_a_mutants_first_finding_repro_reaches_the_oracles_verdict(tmp_path: Path) -> None:
  mutants_both_ways(list(FAST_MUTANTS), tmp_path)


@pytest.mark.slow
def test_every_mutants_first_finding_repro_reaches_the_oracles_verdict(tmp_path: Path) -> None:
  mutants_both_ways([m for m in MUTANTS if not MUTANTS[m].advisory and m not in FAST_MUTANTS + UNREACHED], tmp_path)


# ---------- on the emulated GPU ----------

# judged on the emulated GPU in a process of its own: the hand-written copy-and-shard program in both repro forms, a
# JSON line each with the script and what the oracle said
EMULATED = """
import json
from dataclasses import asdict, replace
from fuzz.gen.printer import compare_script
from oracle.runs import FRESH, SAME_BUFFER
from oracle.targets import Target
from tests.test_repro_verdicts import CALLS, COPY_AND_SHARD, oracle_says
for program, mode in ((COPY_AND_SHARD, SAME_BUFFER), (replace(COPY_AND_SHARD, method=True), FRESH)):
  said = oracle_says(program, Target("tinyjit"), mode)
  assert said is not None, "rejected on the emulated GPU"
  print(json.dumps({"script": compare_script(program, Target("tinyjit"), mode, CALLS, said.checks, ""), "wrong": sorted(said.wrong),
                    "error": said.error, "ran": said.ran}), flush=True)
"""


def test_a_script_runs_the_judged_program_on_the_emulated_gpu(tmp_path: Path) -> None:
  """On the emulated AMD GPU a copy goes to AMD:1 and a shard over AMD:0 and AMD:1, in the judge's process and in the
  script's alike, in either form; HCQGraph batches the same calls in both."""
  from tests.emulated import emulated_env
  env = emulated_env()
  out = subprocess.run([sys.executable, "-c", EMULATED], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
  assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
  judged = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
  scripts = run_scripts("emulated", Target("tinyjit"), [j["script"] for j in judged], tmp_path, env)
  for j, script, what in zip(judged, scripts, ("short form", "full harness"), strict=True):
    agrees(Said((), frozenset(tuple(w) for w in j["wrong"]), frozenset(), j["error"], j["ran"]), Target("tinyjit"), script, what)
  ran = [r for call in judged[0]["ran"] for r in call["ran"]]
  assert any(r[0] == "copy" and "AMD:1" in r[1] for r in ran) or any(i[0] == "copy" and "AMD:1" in i[1] for r in ran for i in r[2]), ran
