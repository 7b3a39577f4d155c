"""Findings into bugs: signatures, the bug book, shrinking per bug, confirmation in a fresh process, the report."""
import json
import subprocess
import sys
from pathlib import Path

from fuzz.campaign.bugbook import BugBook
from fuzz.campaign.outcome import Outcome
from oracle.compare import Verdict
from oracle.findings import Finding
from oracle.signature import role, signature

ROOT = Path(__file__).resolve().parents[1]


def planfuzz(*args: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_roles_ignore_the_numbers_in_a_name() -> None:
  assert [role(s) for s in ("ret", "ret[1][0]", "p3.grad", "conv.weight.grad", "kept[2]", "s1", "p0", "buf1785", "arena 0")] == \
    ["returned", "returned", "grad", "grad", "kept", "state", "parameter", "planned buffer", "arena"]
  a, b = (Finding("invariant:live-planned", path, attribution="planner") for path in ("p0.grad", "p7.grad"))
  assert signature(a) == signature(b) != signature(Finding("invariant:live-planned", "kept[0]", attribution="planner"))


def _outcome(*findings: Finding, known: str | None = None) -> Outcome:
  verdict = Verdict(findings=list(findings))
  return Outcome(verdict, [], [(known, f) for f in findings]) if known else Outcome.of(verdict)


def test_the_book_counts_examples_under_their_headline_and_merges_across_processes() -> None:
  grad = Finding("all-zeros", "p0.grad", 2, "replay 1", attribution="planner")
  ret = Finding("stale", "ret", 2, "replay 1", attribution="capture")
  one, other = BugBook(), BugBook()
  assert one.record(_outcome(grad, ret), 1, 0.5) is not None and one.record(_outcome(grad), 2, 0.9) is None
  other.record(_outcome(ret), 1, 0.2)
  other.record(_outcome(ret, known="lazy-escape-frozen-on-read"), 2, 0.3)
  one.merge(other.to_plain(), offset=2)
  counts = {(str(b.signature), b.new): (b.count, b.first_example) for b in one.sorted()}
  assert counts == {("all-zeros on a grad, blamed on planner", True): (2, 1), ("stale on a returned, blamed on capture", True): (1, 3),
                    ("stale on a returned, blamed on capture (known tinygrad bug lazy-escape-frozen-on-read)", False): (1, 4)}
  assert one.findings == 4 and [b.new for b in one.sorted()] == [True, True, False]


def test_a_campaign_hands_over_one_shrunk_confirmed_bug(tmp_path: Path) -> None:
  """returned-only (#16571) over two workers: examples with one signature are one bug, reported once, shrunk by the
  worker that claimed it, confirmed by its repro in a fresh process; report.md and report.json say so."""
  run = planfuzz("run", "--policy", "returned-only", "--examples", "12", "--workers", "2", "--seed", "3", "--mode", "same-buffer",
                 "--db", "none", "--repro-dir", str(tmp_path), "--shrink-budget", "20")
  assert run.returncode == 1, run.stdout + run.stderr
  report = json.loads((tmp_path / "report.json").read_text())
  bugs = report["bugs"]
  [grad] = [b for b in bugs if b["signature"] == "invariant:live-planned on a grad, blamed on planner"]
  assert grad["status"] == "confirmed" and grad["count"] >= 2 and Path(grad["repro"]).is_file(), bugs
  new = [b for b in bugs if b["new"]]  # a known tinygrad bug (lazy-escape-frozen-on-read) may show too: listed apart
  assert all(b["status"] == "confirmed" and b["repro_lines"] <= (b["unshrunk_lines"] or b["repro_lines"]) for b in new), bugs
  assert all(b["status"] == "known" for b in bugs if not b["new"]), bugs
  with_findings = int(run.stdout.split(" distinct from ")[1].split()[0])
  assert sum(b["count"] for b in bugs) == with_findings and len(bugs) < with_findings
  assert "## 1. NEW: invariant:live-planned on a grad, blamed on planner" in (tmp_path / "report.md").read_text()


def test_a_bug_that_needs_what_ran_before_is_context_dependent(tmp_path: Path) -> None:
  """A planner wrong only once warm: its repro agrees alone, so the bug is context-dependent, never an ordinary one, and
  the context script (the worker's preceding programs in order) reproduces it."""
  run = planfuzz("run", "--planner", "tests.planners.flaky:after_warmup", "--examples", "20", "--seed", "0", "--mode", "same-buffer",
                 "--db", "none", "--repro-dir", str(tmp_path), "--shrink-budget", "5")
  assert run.returncode == 1 and "[context-dependent]" in run.stdout and "[confirmed]" not in run.stdout, run.stdout + run.stderr
  [context] = tmp_path.glob("*.context.py")
  replay = subprocess.run([sys.executable, str(context)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
  assert replay.returncode == 1 and "reproduced after the preceding programs" in replay.stdout, replay.stdout + replay.stderr


def test_the_first_program_of_each_rejection_reason_is_handed_over(tmp_path: Path) -> None:
  """The generator promises valid programs, so a rejection needs a program to look at: the first one per reason is
  written as a runnable script, and the summary names it next to the count."""
  from fuzz.campaign.messages import Result
  from fuzz.campaign.triage import Triage
  from fuzz.gen.program import Backward, Leaf, Op, Program
  from oracle.targets import Target
  program = Program(params=(Leaf("p0", (4,), seed=1),), inputs=(), state=(), body=(Op("relu", ("p0",), "v0"),),
                    backward=(Backward("v0"),), returns="v0")
  triage = Triage(Target(), 5, tmp_path, 1)
  for n in (3, 4):  # one reason: the numbers differ only
    triage.on_event(Result(0, program, "fresh", (), Outcome.of(Verdict(rejected=f"eager: RuntimeError: shape {n} is odd")), 0.1))
  triage.finish(confirm=False)
  [script] = tmp_path.glob("rejected-*.py")
  text = script.read_text()
  assert text.startswith("# planfuzz: rejected (eager: RuntimeError: shape N is odd)") and "def build():" in text
  assert f"  2 x eager: RuntimeError: shape N is odd (first: {script})" in triage.stats.summary()


def test_a_bug_is_on_disk_from_first_sight_and_replaced_once_shrunk(tmp_path: Path) -> None:
  """A campaign killed before its end (a CI job's time limit, a lost machine) still leaves each bug's repro: it is
  written when the bug is first seen and rewritten in place once shrunk, never as a second, near-identical script."""
  from fuzz.campaign.messages import Result, ShrinkStep
  from fuzz.campaign.triage import Triage
  from fuzz.gen.program import Backward, Leaf, Op, Program
  from oracle.targets import Target
  leaf = (Leaf("p0", (4,), seed=1),)
  big = Program(params=leaf, inputs=(), state=(), body=(Op("relu", ("p0",), "v0"), Op("exp", ("v0",), "v1")),
                backward=(Backward("v1"),), returns="v1")
  small = Program(params=leaf, inputs=(), state=(), body=(Op("relu", ("p0",), "v0"),), backward=(Backward("v0"),), returns="v0")
  grad = Finding("wrong-values", "p0.grad", 2, "replay 1")
  triage = Triage(Target(), 5, tmp_path, 1)
  triage.on_event(Result(0, big, "fresh", (), Outcome.of(Verdict(findings=[grad])), 0.1))
  [first] = tmp_path.glob("bug-*.py")
  assert "exp()" in first.read_text()
  triage.on_event(Result(0, small, "fresh", (), Outcome.of(Verdict(findings=[grad])), 0.1))  # the same bug again: still the first program
  assert "exp()" in first.read_text()
  triage.on_event(ShrinkStep(0, signature(grad), small, "fresh", (), grad))
  assert list(tmp_path.glob("bug-*.py")) == [first]  # shrinking is still going on
  triage.on_event(ShrinkStep(0, signature(grad), done=True, steps=2, seconds=1.0))
  unshrunk = first.with_suffix(".unshrunk.py")
  assert sorted(tmp_path.glob("bug-*.py")) == sorted([first, unshrunk])
  assert "exp()" not in first.read_text() and "exp()" in unshrunk.read_text()
  triage.finish(confirm=False)
  assert sorted(tmp_path.glob("bug-*.py")) == sorted([first, unshrunk])
  again = Triage(Target(), 5, tmp_path, 1)  # a later campaign into the same dir, starting from the saved shrunk program
  again.on_event(Result(0, small, "fresh", (), Outcome.of(Verdict(findings=[grad])), 0.1))
  assert list(tmp_path.glob("bug-*.py")) == [first] and again.stats.bugs.sorted()[0].repro == str(first)


def test_a_repro_failing_only_on_another_observable_does_not_confirm(tmp_path: Path) -> None:
  """Confirmation wants the finding itself: a repro that fails alone on another observable (a known tinygrad bug the
  same program shows) leaves its bug context-dependent; one that shows the finding confirms it."""
  from fuzz.campaign.confirm import CONFIRMED, CONTEXT_DEPENDENT, expected_line, run_fresh
  script = tmp_path / "repro.py"
  script.write_text('print("MISMATCH kept[1] at call 2 (replay 1): max abs err 10")\nraise SystemExit(1)\n')
  grad = Finding("wrong-values", "p0.grad", 2, "replay 1")
  assert run_fresh(script, 60, expected_line(grad))[0] == CONTEXT_DEPENDENT
  assert run_fresh(script, 60, expected_line(Finding("stale", "kept[1]", 3, "replay 2")))[0] == CONFIRMED
  assert expected_line(Finding("invariant:overlap", "buf12", None)) == "MISMATCH (static) [invariant:overlap]"
  assert expected_line(Finding("jit-error", "step", 1, "capture")) is None  # a traceback: the exit status tells


def test_a_slow_program_that_finishes_alone_is_no_confirmed_hang(tmp_path: Path) -> None:
  """A worker's timeout is no hang when the repro, alone and given the longer confirmation limit, finishes (a program
  whose kernels are not in the disk cache can compile for minutes): context-dependent, with how long it took."""
  from fuzz.campaign.confirm import CONFIRMED, CONTEXT_DEPENDENT, run_fresh
  script = tmp_path / "slow.py"
  script.write_text("import time\ntime.sleep(1.5)\nprint('OK')\n")
  status, why = run_fresh(script, 10)
  assert status == CONTEXT_DEPENDENT and why.startswith("the repro agrees when run alone (in ") and why.endswith("s)"), why
  assert run_fresh(script, 1)[0] == CONFIRMED  # past the limit: a hang


def test_a_bug_confirmed_off_the_cpu_is_located(tmp_path: Path) -> None:
  """On a GPU or its emulator a confirmed bug is run twice more: with the JIT off (a difference that shows there too
  is the device's, never counted as a JIT bug), and on the CPU (the JIT everywhere, or this device's JIT path only)."""
  from fuzz.campaign.confirm import CONFIRMED, DEVICE, expected_line, locate
  grad = expected_line(Finding("wrong-values", "p0.grad", 2, "replay 1"))
  shows = 'print("MISMATCH p0.grad at call 2: jit [0.], reference after call 2 [1.]")\nraise SystemExit(1)\n'
  agrees = 'print("OK")\n'
  on_cpu_only = 'import os\nif os.environ.get("DEV") == "CPU":\n  print("MISMATCH p0.grad at call 2")\n  raise SystemExit(1)\n'
  scripts = {name: tmp_path / f"{name}.py" for name in ("shows", "agrees", "cpu")}
  for name, text in (("shows", shows), ("agrees", agrees), ("cpu", on_cpu_only)): scripts[name].write_text(text)
  status, why = locate(scripts["shows"], scripts["shows"], "AMD", 60, grad)
  assert status == DEVICE and "with the JIT off too (shows.py): AMD or its emulator, not the JIT" in why, why
  assert locate(scripts["shows"], scripts["agrees"], "AMD", 60, grad) == (CONFIRMED, "the JIT's: not with the JIT off; also on CPU")
  only_here = (CONFIRMED, "the JIT's: not with the JIT off; only on AMD, not on CPU")
  assert locate(scripts["agrees"], scripts["agrees"], "AMD", 60, grad) == only_here
  assert locate(scripts["cpu"], scripts["agrees"], "AMD", 60, grad)[1].endswith("also on CPU")  # the repro ran with DEV=CPU


def test_a_campaign_off_the_cpu_locates_its_confirmed_bug(tmp_path: Path) -> None:
  """The whole path with a real bug (the returned-only planner's lazy grad, read from arena memory), as a campaign
  whose default device is a GPU would take it: confirmed, its JIT-off script written and agreeing, and the CPU showing it."""
  from fuzz.campaign.confirm import CONFIRMED
  from fuzz.campaign.messages import Result
  from fuzz.campaign.triage import Triage
  from fuzz.test_repro import LAZY_GRAD
  from oracle.targets import Target
  grad = Finding("wrong-values", "p0.grad", 2, "replay 1", {"compared_with": [2, 1e-05, 1e-06]})
  triage = Triage(Target(policy="returned-only"), 5, tmp_path, 1, device="AMD")
  triage.on_event(Result(0, LAZY_GRAD, "same-buffer", (), Outcome.of(Verdict(findings=[grad])), 0.1))
  [bug] = triage.finish(confirm=True)
  assert bug.status == CONFIRMED and bug.confirm_note.endswith("; the JIT's: not with the JIT off; also on CPU"), bug.confirm_note
  [jit_off] = tmp_path.glob("bug-*.jit-off.py")
  assert "with Context(JIT=0): got = run(True)" in jit_off.read_text()
