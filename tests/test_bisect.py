"""`planfuzz bisect`: the first bad (or fixed) commit of a tinygrad checkout for a repro, on real tinygrad trees and on
fake histories (tests/history_repos.py), and every bad input as one line naming the fix."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.campaign.bugbook import Bug
from fuzz.campaign.confirm import expected_line
from fuzz.campaign.example import run_example
from fuzz.campaign.merge import merge
from fuzz.campaign.merge import write as write_merged
from fuzz.campaign.report import Meta, write
from fuzz.campaign.triage import Triage
from fuzz.campaign.usage import UsageError
from fuzz.gen.printer import to_script
from fuzz.gen.program import Leaf, Op, Program
from fuzz.history.bisect import FIX, REGRESSION, bisect
from fuzz.history.releases import at_hand, sentence
from fuzz.history.trees import Checkout
from fuzz.history.verdicts import BAD, GOOD, SKIP, run_repro
from oracle.signature import Signature
from oracle.targets import Target
from tests.history_repos import FIXED, INSTALLED, UNFIXED, commit, edit, fake_history, git, init, put_tinygrad, release

ROOT = Path(__file__).resolve().parents[1]
REPRO_16571 = ROOT / "tests/repros/issue_16571.py"
# a repro of the fake histories: exit 1 where the commit's fake tinygrad says BAD
FAKE_REPRO = "import sys, tinygrad\nsys.exit(1 if tinygrad.BAD else 0)\n"


@pytest.fixture(autouse=True)
def own_trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setenv("PLANFUZZ_TREES", str(tmp_path / "trees"))


def quiet(_: str) -> None: pass


@pytest.mark.slow
def test_finds_the_commit_that_fixed_16571_on_real_trees(tmp_path: Path) -> None:
  """The three releases' trees: 0.12.0, 0.13.0, then 0.14.0 with tinygrad#16588's fix reverted by hand, then the fix
  (0.14.0 itself), then one more commit. The #16571 repro bisects to the fix, whose subject names its PR; from 0.12.0
  to 0.13.0 it is a regression, brought by 0.13.0."""
  repo = init(tmp_path / "tinygrad")
  v12 = commit(repo, "release 0.12.0", 1, put_tinygrad(release("0.12.0")))
  v13 = commit(repo, "release 0.13.0", 1, put_tinygrad(release("0.13.0")))
  commit(repo, "0.14.0 without the fix", 2, put_tinygrad(INSTALLED))
  repo.joinpath("tinygrad/engine/jit.py").write_text((INSTALLED / "engine/jit.py").read_text().replace(FIXED, UNFIXED))
  commit(repo, "0.14.0 without the fix (its jit.py as before)", 3, lambda r: None)
  fix = commit(repo, "jit: hold every buffer a live tensor reaches (#16588)", 4, edit("tinygrad/engine/jit.py", UNFIXED, FIXED))
  commit(repo, "docs only", 5, lambda r: (r / "README").write_text("x"))
  answer = bisect(REPRO_16571, repo, "HEAD~4", "HEAD", timeout=300, log=quiet)
  assert answer.direction == FIX and answer.first is not None and answer.first.sha == fix, answer.lines()
  assert answer.first.pr == 16588 and answer.runs <= 4, answer.lines()
  brought = bisect(REPRO_16571, repo, v12, v13, timeout=300, log=quiet)
  assert brought.direction == REGRESSION and brought.first is not None and brought.first.sha == v13, brought.lines()


@pytest.mark.slow
def test_finds_a_planted_regression_past_a_commit_that_cannot_import(tmp_path: Path) -> None:
  """0.14.0, a commit whose tinygrad cannot import (skipped, not taken for 'reproduces': an uncaught exception exits 1
  too), the import mended, then #16571 planted back: the first bad commit is the planted one."""
  repo = init(tmp_path / "tinygrad")
  commit(repo, "release 0.14.0", 1, put_tinygrad(INSTALLED))
  commit(repo, "docs only", 2, lambda r: (r / "README").write_text("x"))
  broken = commit(repo, "a typo in tinygrad/__init__.py", 3, lambda r: (r / "tinygrad/__init__.py").write_text(
    (INSTALLED / "__init__.py").read_text() + "\nfrom tinygrad.nowhere import nothing\n"))
  commit(repo, "mend the typo", 4, put_tinygrad(INSTALLED))
  planted = commit(repo, "jit: hold only the returned buffers again", 5, edit("tinygrad/engine/jit.py", FIXED, UNFIXED))
  commit(repo, "docs again", 6, lambda r: (r / "README").write_text("y"))
  answer = bisect(REPRO_16571, repo, "HEAD~5", "HEAD", timeout=300, log=quiet)
  assert answer.direction == REGRESSION and answer.first is not None and answer.first.sha == planted, answer.lines()
  skipped = {c.sha: v for c, v in answer.steps if v.answer == SKIP}
  assert list(skipped) == [broken] and "ModuleNotFoundError" in skipped[broken].why, answer.lines()


def test_a_thousand_commits_in_at_most_twelve_runs_each_tree_exported_once(tmp_path: Path) -> None:
  shas = fake_history(repo := tmp_path / "tinygrad", [f"BAD = {k >= 637}\n" for k in range(1001)])
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  answer = bisect(repro, repo, shas[0], shas[-1], log=quiet)
  assert answer.first is not None and answer.first.sha == shas[637] and answer.first.pr == 1637, answer.lines()
  assert answer.direction == REGRESSION and answer.runs <= 12, answer.lines()
  again = bisect(repro, repo, shas[0], shas[-1], log=quiet)  # the same trees, from the cache
  assert again.first == answer.first and len(list((tmp_path / "trees").iterdir())) == answer.runs


def test_a_long_run_of_commits_that_cannot_say_is_stepped_over(tmp_path: Path) -> None:
  """111 commits in the middle raise (a week where the repro's program hit another error): the bisect steps over them
  by quarters instead of walking them one by one (tinygrad's real history has such runs: 27 runs were spent on one
  before this)."""
  inits = [("raise AssertionError('another error')\n" if 450 <= k <= 560 else f"BAD = {k >= 637}\n") for k in range(1001)]
  shas = fake_history(repo := tmp_path / "tinygrad", inits)
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  answer = bisect(repro, repo, shas[0], shas[-1], log=quiet)
  assert answer.first is not None and answer.first.sha == shas[637], answer.lines()
  assert answer.runs <= 16, answer.lines()


def test_an_answer_inside_a_stretch_that_cannot_say_ends_with_that_range(tmp_path: Path) -> None:
  """The first bad commit lies inside 200 commits that raise (tinygrad's history has a fortnight where multi-device
  grads raise 'END src[0] should be KERNEL'): after 8 commits in a row cannot say, the bisect stops with the range
  left instead of trying all 200 (on the real one it ran 236 times); a higher --max-skips tries on."""
  inits = [("raise AssertionError('another error')\n" if 400 <= k < 600 else f"BAD = {k >= 500}\n") for k in range(1001)]
  shas = fake_history(repo := tmp_path / "tinygrad", inits)
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  answer = bisect(repro, repo, shas[0], shas[-1], log=quiet)
  assert answer.first is None and answer.stopped.startswith("stopped after 8 commits in a row could not say"), answer.lines()
  assert {shas[400], shas[599]} <= {c.sha for c in answer.candidates} and answer.runs <= 30, answer.lines()
  assert "(--max-skips)" in answer.lines()[0]
  more = bisect(repro, repo, shas[0], shas[-1], log=quiet, max_skips=12)
  assert more.runs > answer.runs and more.stopped.startswith("stopped after 12 commits"), more.lines()


def test_a_hanging_commit_is_skipped_and_adjacent_skips_leave_a_range(tmp_path: Path) -> None:
  inits = ["BAD = False\n"] * 4 + ["import time\ntime.sleep(60)\n", "raise ImportError('half a refactor')\n"] + ["BAD = True\n"] * 3
  shas = fake_history(repo := tmp_path / "tinygrad", inits)
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  answer = bisect(repro, repo, shas[0], shas[-1], timeout=5, log=quiet)
  assert answer.first is None and [c.sha for c in answer.candidates] == shas[4:7], answer.lines()
  why = {c.sha: v.why for c, v in answer.steps if v.answer == SKIP}
  assert why == {shas[4]: "timed out after 5s", shas[5]: "raised ImportError: half a refactor"}, why
  assert "is one of 3 commits" in answer.lines()[0]


def test_a_fix_is_told_from_a_regression_by_the_ends(tmp_path: Path) -> None:
  shas = fake_history(repo := tmp_path / "tinygrad", [f"BAD = {k < 5}\n" for k in range(9)])
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  answer = bisect(repro, repo, shas[0], shas[-1], log=quiet)
  assert answer.direction == FIX and answer.first is not None and answer.first.sha == shas[5]
  assert answer.lines()[0].startswith("first fixed commit")


def test_without_old_the_newest_release_tag_that_disagrees(tmp_path: Path) -> None:
  shas = fake_history(repo := tmp_path / "tinygrad", [f"BAD = {k >= 6}\n" for k in range(12)])
  for tag, k in (("v0.1.0", 2), ("v0.2.0", 8)): git(repo, "tag", tag, shas[k])
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  answer = bisect(repro, repo, None, "HEAD", log=quiet)  # v0.2.0 reproduces as HEAD does: v0.1.0 is the older end
  assert answer.first is not None and answer.first.sha == shas[6]


def test_the_cli_prints_the_answer_last_and_progress_on_stderr(tmp_path: Path) -> None:
  shas = fake_history(repo := tmp_path / "tinygrad", [f"BAD = {k >= 3}\n" for k in range(8)])
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  out = subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", "bisect", str(repro), "--repo", str(repo), "--old", shas[0],
                        "--json", str(tmp_path / "a.json")], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PLANFUZZ_TREES": str(tmp_path / "t")})
  assert out.returncode == 0, out.stderr
  assert out.stdout.splitlines()[-1].startswith(f"{shas[3]} ") and "commit 3 (#1003)" in out.stdout, out.stdout
  assert all(line.startswith("bisect: ") for line in out.stderr.splitlines()), out.stderr
  assert '"direction": "regression"' in (tmp_path / "a.json").read_text()


@pytest.mark.parametrize("case, says", [
  ("not-git", "not a git repository"), ("no-folder", "no such folder"), ("bad-rev", "no revision 'v9.9.9'"),
  ("agree", "both ends agree (does not reproduce at"), ("end-skips", "cannot say at --new"),
  ("no-tinygrad", "holds no tinygrad/__init__.py"),
  ("no-repro", "no such repro script")])
def test_bad_input_is_one_line_naming_the_fix(tmp_path: Path, case: str, says: str) -> None:
  shas = fake_history(repo := tmp_path / "tinygrad", ["BAD = False\n"] * 3 + ["raise ImportError('x')\n"])
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  args = {"not-git": (repro, tmp_path), "no-folder": (repro, tmp_path / "nope"), "bad-rev": (repro, repo, "v9.9.9", shas[2]),
          "agree": (repro, repo, shas[0], shas[2]), "end-skips": (repro, repo, shas[0], shas[3]),
          "no-repro": (tmp_path / "none.py", repo, shas[0], shas[2])}
  if case == "no-tinygrad":
    other = init(tmp_path / "other")
    commit(other, "a readme", 1, lambda r: (r / "README").write_text("x"))
    args[case] = (repro, other, "HEAD", "HEAD")
  with pytest.raises(UsageError, match=re.escape(says)) as e:
    bisect(*args[case], log=quiet)
  assert "\n" not in str(e.value)


def test_the_verdicts_of_one_run(tmp_path: Path) -> None:
  shas = fake_history(repo := tmp_path / "tinygrad", ["BAD = True\n", "BAD = False\n"])
  (repro := tmp_path / "repro.py").write_text(FAKE_REPRO)
  trees = Checkout(repo)
  assert [run_repro(repro, trees.tree(trees.commit(s)), 30).answer for s in shas] == [BAD, GOOD]


def test_a_campaign_tells_each_new_confirmed_bug_its_releases_and_first_commit(tmp_path: Path) -> None:
  """Triage's hand-over: a new confirmed bug of the tinyjit target gets its release table and, with a checkout, its
  bisect, in report.md and report.json; `planfuzz merge` keeps both. The repro reads a marker only the fake
  history's tinygrad sets, so every real release reproduces and the history's bisect has a first bad commit."""
  shas = fake_history(repo := tmp_path / "tinygrad", [f"BAD = {k >= 2}\n" for k in range(6)])
  git(repo, "tag", "v0.1.0", shas[0])
  (repro := tmp_path / "bug.py").write_text("import sys, tinygrad\nsys.exit(1 if getattr(tinygrad, 'BAD', True) else 0)\n")
  triage = Triage(Target("tinyjit"), 5, tmp_path, 1)
  bug = triage.stats.bugs.bugs[sig] = Bug(sig := Signature("stale", "capture", "returned"), "m", 1, repro=str(repro))
  triage.finish(confirm=True, timeout=60, tinygrad_repo=repo)
  versions = [v for v, r in at_hand() if r is not None]
  assert bug.status == "confirmed" and {v: bug.releases[v] for v in versions} == dict.fromkeys(versions, BAD), bug.releases
  assert bug.bisect is not None and bug.bisect["first"].startswith(shas[2]), bug.bisect
  md, js = write([bug], Meta("t", "tinyjit", "0.14.0", "CPU", 0, 1, 1, "c"), tmp_path / "report.md")
  assert f"- brought by: {shas[2]}" in md.read_text() and "- releases: reproduces on " in md.read_text()
  merged = merge([str(js)])
  assert merged.bugs[str(sig)]["bisect"]["first"].startswith(shas[2])
  assert f"- brought by: {shas[2]}" in write_merged(merged, tmp_path / "fleet")[0].read_text()


def test_the_release_sentence() -> None:
  rows = {"0.12.0": GOOD, "0.13.0": BAD, "0.14.0": BAD, "0.15.0": "cannot run there: raised ImportError: x"}
  assert sentence(rows) == "reproduces on 0.13.0 and 0.14.0; not on 0.12.0; cannot run on 0.15.0 (raised ImportError: x)"


def test_a_jit_error_script_catches_its_own_error_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
  """A JIT error finding's script exits 1 naming the error the JIT raised; the same script where the JIT raises
  another error lets it propagate, which a bisect skips instead of taking it for the bug."""
  program = Program(params=(Leaf("p0", (8,), seed=1),), inputs=(Leaf("x0", (8,), seed=2),), state=(),
                    body=(Op("mul", ("x0", "p0"), "v0"), Op("relu", ("v0",), "v1")), backward=(), returns="v1")
  target = Target("planner", planner="tests.crashing_planner:asserts")
  finding = next(f for f in run_example(program, target, 4, "fresh").findings if f.kind == "jit-error")
  script = to_script(program, target, "fresh", 4, finding)
  assert "if type(e).__name__ != 'AssertionError': raise" in script, script
  (ours := tmp_path / "asserts.py").write_text(script)
  (other := tmp_path / "key_error.py").write_text(script.replace("crashing_planner:asserts", "crashing_planner:key_error"))
  monkeypatch.setenv("PYTHONPATH", str(ROOT))  # a planner-target script imports planfuzz
  assert run_repro(ours, None, 120).answer == BAD
  assert (v := run_repro(other, None, 120)).answer == SKIP and "KeyError" in v.why, v
  out = subprocess.run([sys.executable, str(ours)], capture_output=True, text=True, cwd=ROOT)
  assert out.returncode == 1 and expected_line(finding) in out.stdout, out.stdout + out.stderr


def test_planfuzz_releases_tells_each_release_at_hand(tmp_path: Path) -> None:
  """`planfuzz releases`: one line a repro, then each release's answer; a release not installed says how to get it."""
  (repro := tmp_path / "repro.py").write_text("import sys, tinygrad\nsys.exit(1 if 'tinygrad-0.13.0' in tinygrad.__file__ else 0)\n")
  out = subprocess.run([sys.executable, "-m", "fuzz.campaign.cli", "releases", str(repro)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
  assert out.returncode == 0, out.stderr
  rows = dict(line.strip().split(": ", 1) for line in out.stdout.splitlines()[1:])
  for version, installed in at_hand():
    want = "cannot run there: not installed (make old-tinygrad)" if installed is None else BAD if version == "0.13.0" else GOOD
    assert rows[version] == want, out.stdout
