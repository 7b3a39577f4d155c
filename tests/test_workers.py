"""Worker processes: shares, crash and hang isolation, and the example database shared through redis."""
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.campaign.workers import shares

ROOT = Path(__file__).resolve().parents[1]


def planfuzz(*args: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_shares_split_the_examples() -> None:
  assert shares(7, 3) == [3, 2, 2] and sum(shares(100, 8)) == 100


def test_a_crashing_planner_loses_nothing(tmp_path: Path) -> None:
  """Every example that plans aborts its worker (at seed 1 neither draws NO_MEMORY_PLANNER=1): each becomes a crash
  finding, a fresh worker runs the next one; the two are one bug, whose repro aborts a fresh process too (confirmed)."""
  run = planfuzz("run", "--planner", "tests.crashing_planner:plan", "--examples", "2", "--seed", "1", "--db", "none",
                 "--repro-dir", str(tmp_path))
  assert run.returncode == 1, run.stderr
  assert "NEW [confirmed] crash on a worker process, no stage blamed: 2 example(s)" in run.stdout, run.stdout
  assert "2 examples in" in run.stdout and "SIGABRT" in (tmp_path / "report.md").read_text()
  [repro] = tmp_path.glob("bug-crash-*.py")
  assert "tests.crashing_planner:plan" in repro.read_text()


def test_a_worker_whose_emulated_device_broke_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
  """An emulator failure is a rejection, never a finding, and the worker that met it is retired: each example here
  ran in a process of its own (the emulated device may stay broken after one), and none was lost."""
  pids = tmp_path / "pids"
  monkeypatch.setenv("PLANFUZZ_TEST_PIDS", str(pids))
  run = planfuzz("run", "--planner", "tests.crashing_planner:emulator_fails", "--examples", "3", "--seed", "1", "--db", "none",
                 "--repro-dir", str(tmp_path))
  assert run.returncode == 0, run.stdout + run.stderr
  assert "3 examples in" in run.stdout and "3 x emulator: RuntimeError: [emu] Failed to compile" in run.stdout, run.stdout
  assert "findings: none" in run.stdout
  seen = pids.read_text().split()
  assert len(seen) == 3 and len(set(seen)) == 3, seen


@pytest.mark.parametrize("limit, examples, why", [(["--worker-examples", "2"], 5, "2 x ran N examples (--worker-examples N)"),
                                                  (["--max-rss", "1"], 3, "2 x resident memory N MB (--max-rss N)")])
def test_a_worker_past_its_limits_is_replaced_and_nothing_is_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: list[str],
                                                                  examples: int, why: str) -> None:
  """A worker past a limit retires between examples and a fresh process takes the rest of its share: every example is
  run and counted once (2 + 2 + 1 examples under a cap of 2; one each when every process is past its memory limit after
  its first), and the summary says why each worker was replaced."""
  pids = tmp_path / "pids"
  monkeypatch.setenv("PLANFUZZ_TEST_PIDS", str(pids))
  run = planfuzz("run", "--planner", "tests.crashing_planner:noting_pid", "--examples", str(examples), *limit, "--seed", "1",
                 "--db", "none", "--no-confirm", "--repro-dir", str(tmp_path))
  assert f"{examples} examples in" in run.stdout and f"workers replaced: 2 ({why})" in run.stdout, run.stdout + run.stderr
  assert len(set(pids.read_text().split())) == 3


def test_a_hanging_planner_times_out_as_a_hang(tmp_path: Path) -> None:
  run = planfuzz("run", "--planner", "tests.crashing_planner:hang", "--examples", "1", "--timeout", "2", "--seed", "0",
                 "--db", "none", "--repro-dir", str(tmp_path))
  assert run.returncode == 1 and "NEW [confirmed] hang on a worker process" in run.stdout, run.stdout
  assert "no result after 2s (in call 1 (capture) of JIT 0 for " in (tmp_path / "report.md").read_text()  # the planner never returns
  assert len(list(tmp_path.glob("bug-hang-*.py"))) == 1


def saved(url: str) -> int:
  import redis
  client = redis.Redis.from_url(url)
  return sum(client.scard(k) for k in client.keys("hypothesis-example:*") if client.type(k) == b"set")


def test_a_failure_in_the_shared_database_is_replayed_first(redis_url: str, tmp_path: Path) -> None:
  """One process saves a failure; a developer reading it read-only replays it without touching it; a fresh read-write
  process with the fixed policy replays it first, passes, and Hypothesis drops it, which shows it was replayed."""
  found = planfuzz("run", "--policy", "returned-only", "--examples", "1", "--mode", "same-buffer", "--seed", "0", "--db", redis_url,
                   "--repro-dir", str(tmp_path / "a"))
  assert found.returncode == 1 and saved(redis_url) == 1
  local = tmp_path / "local-db"
  dev = planfuzz("run", "--examples", "1", "--mode", "same-buffer", "--seed", "5", "--db", str(local), "--shared-db", redis_url,
                 "--repro-dir", str(tmp_path / "b"))
  assert dev.returncode == 0 and saved(redis_url) == 1, dev.stdout + dev.stderr
  fixed = planfuzz("run", "--examples", "1", "--mode", "same-buffer", "--seed", "5", "--db", redis_url, "--repro-dir", str(tmp_path / "c"))
  assert fixed.returncode == 0 and saved(redis_url) == 0, fixed.stdout + fixed.stderr
