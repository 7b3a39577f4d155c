"""`planfuzz run | replay | plan`: exit statuses, the files a finding leaves, and one-line errors for bad input."""
import json
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fuzz.campaign.cli import main

ROOT = Path(__file__).resolve().parents[1]


def planfuzz(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, says", [
  (["run", "--target", "nope", "--examples", "1"], "unknown target 'nope'"),
  (["run", "--policy", "nope", "--examples", "1"], "unknown policy 'nope'"),
  (["run", "--planner", "no_such_module:plan", "--examples", "1"], "does not import"),
  (["run", "--examples", "1", "--db", "redis://127.0.0.1:1/0"], "unreachable"),
  (["run", "--examples", "1", "--db", "ftp://x"], "unknown scheme"),
  (["run", "--seed", "0"], "one of the arguments --examples --time-budget is required"),
  (["run", "--examples", "1", "--mode", "sideways"], "unknown --mode"),
  (["replay", "no/such/file.py"], "no such repro script"),
  (["plan", "no/such/file.plan.json"], "No such file"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], says: str, capsys: pytest.CaptureFixture) -> None:
  assert main(args) == 2
  err = capsys.readouterr().err
  assert says in err and err.count("\n") == 1 and "Traceback" not in err


def test_unsupported_tinygrad_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
  """planfuzz's planner does not import (as on a tinygrad it cannot adapt to): the planner target says so and stops."""
  for name in [m for m in sys.modules if m == "planner" or m.startswith("planner.")]: monkeypatch.delitem(sys.modules, name)
  monkeypatch.setitem(sys.modules, "planner", None)
  assert main(["run", "--examples", "1"]) == 2
  err = capsys.readouterr().err
  assert "needs planfuzz's planner" in err and err.count("\n") == 1


def test_a_finding_leaves_repro_plan_and_picture(tmp_path: Path) -> None:
  out = tmp_path / "found"
  run = planfuzz("run", "--policy", "returned-only", "--examples", "1", "--mode", "same-buffer", "--seed", "0",
                 "--db", "none", "--repro-dir", str(out))
  assert run.returncode == 1, run.stderr
  assert "findings:" in run.stdout and "1/1 examples" in run.stderr and "NEW [confirmed]" in run.stdout
  [script] = [p for p in out.glob("bug-*.py") if ".unshrunk" not in p.name]
  assert "planfuzz repro" in script.read_text()
  plan_json = script.with_suffix(".plan.json")
  assert ET.parse(script.with_suffix(".svg")).getroot().tag.endswith("svg")
  drawn = planfuzz("plan", str(plan_json), "--out", str(tmp_path / "p.svg"))
  assert drawn.returncode == 0 and "buffers in 1 arena" in drawn.stdout and ET.parse(tmp_path / "p.svg").getroot().tag.endswith("svg")


@pytest.mark.parametrize("body, rc, says", [("print('MISMATCH x'); raise SystemExit(1)", 1, "reproduced"),
                                            ("print('OK')", 0, "not reproduced"), ("import os; os.abort()", 1, "killed by signal 6")])
def test_replay_passes_the_scripts_status_through(tmp_path: Path, body: str, rc: int, says: str) -> None:
  script = tmp_path / "repro.py"
  script.write_text(body + "\n")
  replay = planfuzz("replay", str(script))
  assert replay.returncode == rc and says in replay.stderr


def test_nothing_found_is_exit_0_with_a_summary(tmp_path: Path) -> None:
  run = planfuzz("run", "--examples", "2", "--mode", "same-buffer", "--seed", "0", "--db", "none", "--repro-dir", str(tmp_path))
  assert run.returncode == 0, run.stdout + run.stderr
  assert "2 examples in" in run.stdout and "findings: none" in run.stdout
  assert sorted(p.name for p in tmp_path.iterdir()) == ["campaign.json", "report.json", "report.md"]  # the state a resumed run reads
  assert "**0 new bug(s), 0 known tinygrad bug(s).**" in (tmp_path / "report.md").read_text()


def test_the_progress_line_counts_rejections_and_new_bugs_apart(capsys: pytest.CaptureFixture) -> None:
  """A long proof is watched through this line: rejections (generator bugs) and new bugs must show before its end."""
  from fuzz.campaign.outcome import Outcome
  from fuzz.campaign.runner import Progress
  from fuzz.campaign.stats import Stats
  from oracle.compare import Verdict
  from oracle.findings import Finding
  stats = Stats()
  stats.record(Outcome.of(Verdict(rejected="eager: RuntimeError: shape 3 is odd")), 0.1)
  stats.record(Outcome.of(Verdict(findings=[Finding("wrong-values", "p0.grad", 2, "replay 1")])), 0.1)
  stats.record(Outcome.of(Verdict()), 0.1)
  Progress(10).show(stats, final=True)
  assert "planfuzz: 3/10 examples, 1 rejected, 1 new bug, 0 known, " in capsys.readouterr().err
  Progress(10, earlier=300.0).show(stats, final=True)  # resumed: the 3 examples took the earlier run's 300 s too
  assert capsys.readouterr().err.strip().endswith("0.01/s, 300s")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_campaign_cut_short_keeps_its_bugs_and_reports_what_it_ran(tmp_path: Path, sig: signal.Signals) -> None:
  """SIGTERM (a CI job's timeout) or Ctrl-C mid-campaign, once it has met #16571's planted bug: the workers stop, and
  the summary and report (written whole) cover what finished, the bug included."""
  proc = subprocess.Popen([sys.executable, "-m", "fuzz.campaign.cli", "run", "--policy", "returned-only", "--examples", "100000",
                           "--seed", "0", "--db", "none", "--no-confirm", "--repro-dir", str(tmp_path)],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  for line in proc.stderr:  # progress lines come every 5 s off a terminal: wait until the bug was met
    if line.startswith("planfuzz: ") and "/100000 examples" in line and " 1 new bug," in line: break
  proc.send_signal(sig)
  out, _ = proc.communicate(timeout=120)
  assert proc.returncode == 1, out
  assert f"INTERRUPTED by {sig.name}" in out and "NEW [unconfirmed]" in out
  report = json.loads((tmp_path / "report.json").read_text())
  assert any(b["new"] for b in report["bugs"]) and f"INTERRUPTED by {sig.name}" in (tmp_path / "report.md").read_text()
