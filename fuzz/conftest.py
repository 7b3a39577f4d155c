"""pytest plumbing for `pytest fuzz/`: planfuzz's options, its Hypothesis profiles, and the end-of-session summary.

Options: --target planner|tinyjit|static (default planner), --policy (live-tensors), --planner (planfuzz), --graph
(tinygrad), --replays (3;
each program runs replays + 2 calls: eager, capture, replays), --mode same-buffer|fresh|both (both: drawn per
example), --repro-dir (fuzz-failures/), --examples (overrides the profile's max_examples). A bad target, policy or
planner stops the session before anything runs, with the plugin's own message. --no-shrink reports the first failing
example as drawn (a quick smoke run; the repro is the whole program).

Profiles: PLANFUZZ_PROFILE=dev|ci|nightly (default dev) is always loaded explicitly, because Hypothesis loads its
built-in `ci` profile by itself when the CI variable is set, and that one's derandomize=True silently overrides
--hypothesis-seed. `--hypothesis-profile` still wins when given (and then --examples is ignored).
- dev (30 examples) keeps Hypothesis's example database (.hypothesis/): a failure found once is replayed first on
  the next run, whatever the seed, so it stays in view while you fix it. A dev run is therefore reproducible from its
  seed only when the database holds nothing for the test.
- ci (100 examples) and nightly (1000 examples) have database=None and derandomize=False: `PLANFUZZ_PROFILE=ci pytest
  fuzz/ --hypothesis-seed=N` generates exactly the same examples on every machine and every run, and nothing from an
  earlier run changes it. What outlives such a run is the repro script each failure writes to --repro-dir.

Across cores: `pytest fuzz/ -n W` (pytest-xdist) splits the property into W shards, one per worker. Every shard
draws the same Hypothesis stream and runs only the examples whose program hashes to it, so with --hypothesis-seed=N
the W workers together run exactly the examples one process runs (each shrinks its own failure), and the
controller prints one summary of all of them, with the wall-clock rate.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import InvalidArgument

from fuzz.campaign.stats import STATS
from fuzz.campaign.usage import BOTH
from oracle.device import missing_compiler
from oracle.runs import MODES
from oracle.targets import Target, TargetError

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large], "print_blob": True}
settings.register_profile("dev", max_examples=30, **_COMMON)
settings.register_profile("ci", max_examples=100, database=None, derandomize=False, **_COMMON)
settings.register_profile("nightly", max_examples=1000, database=None, derandomize=False, **_COMMON)


@dataclass(frozen=True)
class FuzzConfig:
  target: Target
  mode: str  # same-buffer, fresh or both
  calls: int
  repro_dir: str
  seed: str | None
  profile: str
  strict: bool = False  # advisories fail the run too


FUZZ_KEY = pytest.StashKey[FuzzConfig]()


def pytest_addoption(parser: pytest.Parser) -> None:
  group = parser.getgroup("planfuzz", "planfuzz JIT fuzzer")
  group.addoption("--target", default="planner", help="JIT under test: planner (PlannedJit), tinyjit (tinygrad's own), static (plans only)")
  group.addoption("--graph", default="tinygrad", help="planner target's graph splitter: a name or module:function (default tinygrad)")
  group.addoption("--policy", default="live-tensors", help="held-buffer policy for the planner target (default live-tensors)")
  group.addoption("--planner", default="planfuzz", help="planner target's memory planner: a name or module:function (default planfuzz)")
  group.addoption("--replays", type=int, default=3, help="replays per program after the eager and capture calls (default 3)")
  group.addoption("--mode", default=BOTH, help=f"input mode: {', '.join(MODES)} or {BOTH} (drawn per example; default {BOTH})")
  group.addoption("--repro-dir", default="fuzz-failures", help="where failing programs' repro scripts go (default fuzz-failures/)")
  group.addoption("--examples", type=int, default=None, help="max_examples, overriding the Hypothesis profile's")
  group.addoption("--no-shrink", action="store_true", dest="planfuzz_no_shrink",
                  help="report the first failing example as drawn (Hypothesis's shrink phase off): a quick smoke run")
  group.addoption("--strict-advisories", action="store_true", dest="planfuzz_strict",
                  help="advisories (tinygrad contracts a plan departs from) fail the run too (`planfuzz run --strict`)")


def _config(config: pytest.Config) -> FuzzConfig:
  opt = config.getoption
  try: target = Target(opt("target"), policy=opt("policy"), planner=opt("planner"), graph=opt("graph"))
  except TargetError as e: raise pytest.UsageError(f"planfuzz: {e}") from e
  if opt("mode") not in (*MODES, BOTH):
    raise pytest.UsageError(f"planfuzz: unknown --mode {opt('mode')!r}: choose one of {', '.join(MODES)}, {BOTH}")
  if opt("replays") < 1: raise pytest.UsageError("planfuzz: --replays must be at least 1 (a replay is where planner bugs show)")
  if opt("examples") is not None and opt("examples") < 1: raise pytest.UsageError("planfuzz: --examples must be at least 1")
  seed = opt("hypothesis_seed", None)
  return FuzzConfig(target, opt("mode"), opt("replays") + 2, opt("repro_dir"), seed, os.environ.get("PLANFUZZ_PROFILE", "dev"),
                    opt("planfuzz_strict"))


@pytest.hookimpl(tryfirst=True)  # before Hypothesis's own plugin, so its --hypothesis-* options apply on top of our profile
def pytest_configure(config: pytest.Config) -> None:
  fuzz = _config(config)
  if (fix := missing_compiler()) is not None: raise pytest.UsageError(f"planfuzz: {fix}")
  try: base = settings.get_profile(fuzz.profile)
  except InvalidArgument as e:
    raise pytest.UsageError(f"planfuzz: PLANFUZZ_PROFILE={fuzz.profile!r} is not a profile: use dev, ci or nightly") from e
  n, no_shrink = config.getoption("examples"), config.getoption("planfuzz_no_shrink")
  if n is not None or no_shrink:
    name = f"{fuzz.profile}{f'-{n}' if n is not None else ''}{'-no-shrink' if no_shrink else ''}"
    changes = ({"max_examples": n} if n is not None else {}) | \
              ({"phases": tuple(p for p in base.phases if p != Phase.shrink)} if no_shrink else {})
    settings.register_profile(name, parent=base, **changes)
    settings.load_profile(name)
  else: settings.load_profile(fuzz.profile)
  config.stash[FUZZ_KEY] = fuzz


@dataclass(frozen=True)
class Shard:
  """Which of `count` shards of the property this test runs: (0, 1) without pytest-xdist."""
  index: int = 0
  count: int = 1


def worker_count() -> int:
  """pytest-xdist's workers (it sets this variable in each of them); 1 in a plain session."""
  return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
  if "shard" in metafunc.fixturenames and (n := worker_count()) > 1:
    metafunc.parametrize("shard", [Shard(i, n) for i in range(n)], ids=[f"shard{i}of{n}" for i in range(n)],
                         scope="session")


@pytest.fixture(scope="session")
def shard() -> Shard: return Shard()


@pytest.fixture(scope="session")
def fuzz_config(request: pytest.FixtureRequest) -> FuzzConfig: return request.config.stash[FUZZ_KEY]


def pytest_sessionfinish(session: pytest.Session) -> None:
  """On a pytest-xdist worker: hand this worker's stats to the controller."""
  if hasattr(session.config, "workeroutput"): session.config.workeroutput["planfuzz_stats"] = STATS.to_plain()


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent without it
def pytest_testnodedown(node, error) -> None:
  """On the pytest-xdist controller: add a finished worker's stats to the summary's."""
  if (plain := getattr(node, "workeroutput", {}).get("planfuzz_stats")) is not None: STATS.merge(plain)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
  if FUZZ_KEY not in config.stash or not STATS.examples: return
  fuzz = config.stash[FUZZ_KEY]
  terminalreporter.write_sep("=", "planfuzz")
  seed = fuzz.seed if fuzz.seed is not None else "random"
  terminalreporter.write_line(f"target {fuzz.target.describe()}; mode {fuzz.mode}; {fuzz.calls} calls; "
                              f"profile {settings.get_current_profile_name()}; seed {seed}")
  for line in STATS.summary(): terminalreporter.write_line(line)
