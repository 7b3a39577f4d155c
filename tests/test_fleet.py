"""A CI matrix as one fleet: bug claims through the shared redis (one shrink a bug), and `planfuzz merge` (one report)."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _campaign(redis_url: str, runner: str, seed: int, out: Path) -> subprocess.Popen:
  """A runner of fleet 'nightly' meeting #16571's planted bug (the returned-only policy) in nearly every example."""
  cmd = [sys.executable, "-m", "fuzz.campaign.cli", "run", "--policy", "returned-only", "--examples", "3", "--mode", "same-buffer",
         "--seed", str(seed), "--db", redis_url, "--fleet", "nightly", "--no-confirm", "--shrink-budget", "20", "--repro-dir", str(out)]
  return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env={**os.environ, "PLANFUZZ_RUNNER": runner})


def test_two_runners_shrink_a_bug_once_and_merge_into_one_entry(redis_url: str, tmp_path: Path) -> None:
  runs = {name: _campaign(redis_url, name, seed, tmp_path / name) for name, seed in (("runner-a", 1), ("runner-b", 2))}
  outs = {name: p.communicate(timeout=900)[0] for name, p in runs.items()}
  assert all(p.returncode == 1 for p in runs.values()), outs
  entries = {name: next(e for e in json.loads((tmp_path / name / "report.json").read_text())["bugs"] if e["new"]) for name in runs}
  assert len({e["signature"] for e in entries.values()}) == 1, entries
  assert sorted(e["shrink_seconds"] > 0 for e in entries.values()) == [False, True], entries  # claimed once, shrunk once
  merged = subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", "merge", str(tmp_path / "runner-a"), str(tmp_path / "runner-b"),
                           "--out", str(tmp_path / "fleet")], cwd=ROOT, capture_output=True, text=True, timeout=120)
  assert merged.returncode == 1 and "2 report(s)" in merged.stdout, merged.stdout + merged.stderr
  fleet = json.loads((tmp_path / "fleet" / "report.json").read_text())
  [bug] = [b for b in fleet["bugs"] if b["new"]]
  assert sorted(s["runner"] for s in bug["seen_by"]) == ["runner-a", "runner-b"]
  assert [s["shrunk"] for s in bug["seen_by"]].count(True) == 1
  assert bug["count"] == sum(e["count"] for e in entries.values()) and fleet["stats"]["examples"] == 6
  md = (tmp_path / "fleet" / "report.md").read_text()
  assert md.count(bug["signature"]) == 1 and "runner-a" in md and "runner-b" in md
