"""A replay that never finishes is a hang in seconds: the parent bounds each JIT call by what the example's first
eager step took (fuzz/campaign/hangs.py), and says which call hung."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from fuzz.campaign.example_clock import MAX_STRETCH, ExampleClock
from fuzz.campaign.hangs import CAPTURE_SLACK_S, FACTOR, REPLAY_SLACK_S, CallClock
from fuzz.campaign.usage import EXIT_USAGE

ROOT = Path(__file__).resolve().parents[1]


def test_a_replay_is_bounded_by_the_first_eager_step() -> None:
  """The first eager step is its call and the reads of what it left, up to the first capture: an eager call that returns
  lazy tensors ends at once, and the reads realize them (a replay runs that work inside the call)."""
  clock = CallClock()
  clock.start(0, 0, 100.0)
  assert clock.budget() is None and clock.overran(10_000.0) is None  # eager: only the example's timeout bounds it
  clock.end(100.1)  # call 0 returned lazy tensors; the oracle's reads took until 102
  clock.start(0, 1, 102.0)
  assert clock.budget() == CAPTURE_SLACK_S + FACTOR * 2 and clock.overran(102.0 + CAPTURE_SLACK_S + 19) is None
  clock.end(104.0)
  clock.start(0, 2, 105.0)
  budget = REPLAY_SLACK_S + FACTOR * 2
  assert clock.overran(105.0 + budget - 1) is None
  why = clock.overran(105.0 + budget + 1)
  assert why is not None and why.startswith("call 2 (replay 1) of JIT 0 ran past its 35s"), why
  clock.end(200.0)
  assert clock.overran(10_000.0) is None  # between calls (the oracle's reads, attribution): the example's timeout


def test_a_whole_example_timeout_says_where_the_example_was() -> None:
  """An example past its --timeout with no JIT call over its bound (an eager call, the reference, the oracle's reads)
  says where it was, so a context-dependent hang can be run down."""
  clock = CallClock()
  assert clock.where(50.0).startswith("before its first JIT call")
  clock.start(0, 0, 100.0)
  assert clock.where(400.0) == "in call 0 (eager) of JIT 0 for 300s"
  clock.end(101.0)
  assert clock.where(401.0) == "300s after call 0 (eager) of JIT 0 returned: the oracle's reads, attribution or a rerun"


def test_a_train_eval_programs_eager_step_spans_both_jits_eager_calls() -> None:
  """The eval step's JIT has its own eager call 0 right after the train step's: the first eager step runs on to the
  first capture, not to that second eager call (which gave a replay 15 s on the emulated GPU)."""
  clock = CallClock()
  clock.start(0, 0, 100.0)
  clock.end(100.01)
  clock.start(1, 0, 100.02)  # the eval JIT's eager call
  clock.end(100.03)
  assert clock.first_eager_s is None
  clock.start(0, 1, 103.0)  # the train JIT's capture, after the reads
  assert clock.first_eager_s == 3.0 and clock.budget() == CAPTURE_SLACK_S + FACTOR * 3.0


def test_after_a_reset_the_eager_call_is_unbounded_and_the_recapture_has_room() -> None:
  clock = CallClock(reset=2)
  clock.start(0, 0, 0.0)
  clock.end(0.5)
  clock.start(0, 1, 1.0)  # the capture: the first eager step took 1 s
  clock.end(2.0)
  clock.start(0, 2, 5.0)  # eager after the reset
  assert clock.budget() is None
  clock.end(6.0)
  clock.start(0, 3, 6.0)  # the new capture
  assert clock.budget() == CAPTURE_SLACK_S + FACTOR * 1.0 and clock.first_eager_s == 1.0  # the first eager call's, kept


def planfuzz(*args: str, timeout: float) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_a_replay_that_never_finishes_is_told_long_before_the_examples_timeout(tmp_path: Path) -> None:
  """End to end, on HCQ2 on the CPU: the planted replay hangs at the first replay; with a 900 s example timeout the
  campaign still ends within minutes (the subprocess's own limit fails the test otherwise), the hang saying which call
  hung and what it was allowed."""
  run = planfuzz("run", "--target", "tinyjit", "--engine", "hcq2", "--hcq2-mutant", "tests.hanging_replay:hcq2_never_finishes",
                 "--examples", "1", "--seed", "0", "--timeout", "900", "--db", "none", "--no-confirm", "--repro-dir", str(tmp_path),
                 timeout=300)
  report = (tmp_path / "report.md").read_text()
  told = re.search(r"why=call 2 \(replay 1\) of JIT 0 ran past its (\d+)s", report)
  assert run.returncode == 1 and "NEW [unconfirmed] hang on a worker process" in run.stdout, run.stdout + run.stderr
  assert told is not None and int(told[1]) < 300, run.stdout
  assert "Under `TinyJit` the step never finishes: call 2 (replay 1) of JIT 0 ran past its" in report, report  # as an upstream issue


def test_a_replay_mutant_of_ones_own_that_does_not_import_is_one_line() -> None:
  run = planfuzz("run", "--hcq2-mutant", "tests.no_such_module:hangs", "--examples", "1", "--db", "none", timeout=60)
  assert run.returncode == EXIT_USAGE and "replay mutant 'tests.no_such_module:hangs': module 'tests.no_such_module' does not import" \
    in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_the_example_clock_slows_while_the_machine_is_busier_than_its_cpus() -> None:
  """A campaign beside other jobs gets a share of the machine: its deadlines count the wall at 1 / (load per CPU),
  never slower than MAX_STRETCH, and exactly the wall's while the load is at or under the CPUs."""
  wall, load = [0.0], [0.5]
  clock = ExampleClock(wall=lambda: wall[0], load=lambda: load[0])
  wall[0] = 100.0
  assert clock.now() == 100.0 and clock.stretched() == ""
  load[0], wall[0] = 2.0, 300.0  # twice as much runnable work as CPUs: 200 s of wall count 100
  assert clock.now() == 200.0
  load[0], wall[0] = 50.0, 400.0  # a machine swamped: a hang is still told, at most MAX_STRETCH times later
  assert clock.now() == 200.0 + 100.0 / MAX_STRETCH
  assert clock.stretched() == "400s on the wall, the machine busier than its CPUs"


def test_a_starved_example_is_no_hang_and_a_hang_still_is() -> None:
  """The pool's watch, on a worker that sleeps through its example: past --timeout on the wall while the machine is
  three times oversubscribed it is no hang (the seed-33003 emulated run's false hang); once its clock passes the
  timeout it is one, and says how long that was on the wall."""
  import multiprocessing as mp
  import time

  from fuzz.campaign import workers
  from fuzz.campaign.messages import Job, Started
  from oracle.targets import Target
  ctx, events = mp.get_context("spawn"), []
  slot = workers._Slot.__new__(workers._Slot)  # a slot whose worker only sleeps: the pool's watch alone is under test
  slot.job, slot.done, slot.finished, slot.retired = Job(Target(), None, 5, 1, None, 0, 0, "none"), 0, False, False
  slot.proc = ctx.Process(target=time.sleep, args=(60,), daemon=True)
  slot.proc.start()
  slot.conn = ctx.Pipe(duplex=False)[0]
  wall = [0.0]
  slot.pending = workers.Pending(Started(0, None, "fresh", ()), CallClock(), ExampleClock(wall=lambda: wall[0], load=lambda: 3.0))
  wall[0] = 6.0  # 6 s on the wall at load 3: 2 s on the example's clock
  assert slot.watch(ctx, events.append, timeout=5.0) is slot and slot.proc.is_alive() and not events
  wall[0] = 18.0  # 6 s on its clock: a hang
  slot.watch(ctx, events.append, timeout=5.0)
  assert not slot.proc.is_alive() and len(events) == 1
  why = events[0].outcome.findings[0].details["why"]
  assert why.startswith("no result after 5s (before its first JIT call"), why
  assert why.endswith("18s on the wall, the machine busier than its CPUs"), why
