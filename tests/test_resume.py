"""A campaign killed outright carries on when started again with the same command and --repro-dir."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _command(repro_dir: Path) -> list[str]:
  return [sys.executable, "-m", "fuzz.campaign.cli", "run", "--policy", "returned-only", "--examples", "12", "--seed", "2",
          "--db", "none", "--no-confirm", "--shrink-budget", "5", "--repro-dir", str(repro_dir)]


def _state(repro_dir: Path) -> dict | None:
  try: return json.loads((repro_dir / "campaign.json").read_text())
  except (OSError, ValueError): return None


def test_a_killed_campaign_resumes_without_shrinking_again(tmp_path: Path) -> None:
  """#16571's policy shows a bug in nearly every example: the first run meets and shrinks it, is SIGKILLed (with its
  workers) once its state holds two examples (of twelve: it must not have reached its end), and the same command then
  runs the rest: one report over both runs, numbering on, the bug counted again but neither shrunk nor written again."""
  first = subprocess.Popen(_command(tmp_path), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
  deadline = time.time() + 400
  while time.time() < deadline and not ((s := _state(tmp_path)) and s["stats"]["examples"] >= 2 and s["stats"]["bugs"]["bugs"]):
    time.sleep(0.5)
  os.killpg(first.pid, signal.SIGKILL)
  first.wait()
  carried = _state(tmp_path)
  assert carried is not None and 2 <= carried["stats"]["examples"] < 12 and not carried["finished"], carried
  [bug] = carried["stats"]["bugs"]["bugs"]
  repro = Path(bug["repro"])
  written = repro.stat().st_mtime_ns
  second = subprocess.run(_command(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert "12 examples in" in second.stdout, second.stdout + second.stderr
  assert f"resumed: run 2 of this command; the figures above include the {carried['stats']['examples']} examples and 1 bug(s)" \
    in second.stdout and "the workers shrank bugs for 0.0s" in second.stdout, second.stdout
  report = json.loads((tmp_path / "report.json").read_text())
  assert report["meta"]["runs"] == 2 and report["meta"]["examples"] == 12
  [entry] = [e for e in report["bugs"] if e["new"]]
  assert entry["count"] >= bug["count"] and entry["first_example"] == bug["first_example"] and repro.stat().st_mtime_ns == written


def test_a_campaign_that_ran_to_its_end_is_not_resumed(tmp_path: Path) -> None:
  """The same command again after a campaign finished is a new campaign (a second `make fuzz-gpu`), not zero more examples."""
  cmd = [sys.executable, "-m", "fuzz.campaign.cli", "run", "--examples", "1", "--seed", "3", "--db", "none", "--repro-dir", str(tmp_path)]
  first = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert "1 examples in" in first.stdout and _state(tmp_path)["finished"], first.stdout + first.stderr
  again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert "1 examples in" in again.stdout and "resumed" not in again.stdout, again.stdout
