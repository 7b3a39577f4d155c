"""A tinygrad git checkout's commits as folders a repro can run against, without touching the checkout's work tree.

tinygrad is pure Python with no build step, so a commit's `tinygrad/` folder first on PYTHONPATH is that commit's
tinygrad. Each commit is exported once (`git archive`, read from the object store) into a cache keyed by its full
hash and reused by every later bisect. The emulated GPU ships in the same checkout: with `emulator` the export also
holds that commit's mock driver (`test/mockgpu`) and HCQ2 devices (`extra/hcq2`), as `DEV=MOCKKFD+AMD` needs.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuzz.campaign.usage import UsageError

CORE = ("tinygrad",)
# what the emulated AMD GPU imports from a checkout besides tinygrad (scripts/ensure_mockgpu.sh finds the same layout)
EMULATOR = ("test/__init__.py", "test/mockgpu", "test/amd", "extra/__init__.py", "extra/hcq2", "extra/hip_gpu_driver")
PR = re.compile(r"\(#(\d+)\)\s*$")


def default_cache() -> Path:
  """Where exported trees live: $PLANFUZZ_TREES, else the user's cache folder (shared by every checkout and bisect)."""
  if (env := os.environ.get("PLANFUZZ_TREES")): return Path(env)
  return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "planfuzz" / "tinygrad-trees"


@dataclass(frozen=True)
class Commit:
  """One commit as a bisect names it."""
  sha: str
  date: str  # the author date, YYYY-MM-DD
  subject: str

  @property
  def short(self) -> str: return self.sha[:10]
  @property
  def pr(self) -> int | None:
    """The pull request tinygrad's squash merges name at the end of the subject, as '(#16588)'."""
    return int(m.group(1)) if (m := PR.search(self.subject)) else None

  def line(self) -> str: return f"{self.sha} {self.date} {self.subject}"


class Checkout:
  """A tinygrad git repository (a clone with a work tree, or a bare one), read through git only."""

  def __init__(self, path: str | Path, cache: Path | None = None) -> None:
    self.path, self.cache = Path(path), cache or default_cache()
    if not self.path.exists(): raise UsageError(f"--repo {path}: no such folder (give a clone of tinygrad's git repository)")
    if self._git("rev-parse", "--git-dir", check=False) is None:
      raise UsageError(f"--repo {path}: not a git repository (clone tinygrad: git clone https://github.com/tinygrad/tinygrad)")

  def _git(self, *args: str, check: bool = True) -> str | None:
    out = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True)
    if out.returncode != 0:
      if check: raise UsageError(f"git {' '.join(args)} in {self.path}: {out.stderr.strip().splitlines()[-1:] or out.returncode}")
      return None
    return out.stdout

  def commit(self, rev: str) -> Commit:
    """The commit `rev` names; one line naming the fix when there is none, or it holds no tinygrad."""
    out = self._git("log", "-1", "--date=short", "--format=%H%x00%ad%x00%s", f"{rev}^{{commit}}", "--", check=False)
    if not out: raise UsageError(f"no revision {rev!r} in {self.path} (a tag such as v0.13.0, a branch or a commit hash; "
                                 f"`git -C {self.path} fetch --tags` if it is newer than the clone)")
    sha, date, subject = out.strip("\n").split("\x00", 2)
    if self._git("cat-file", "-e", f"{sha}:tinygrad/__init__.py", check=False) is None:
      raise UsageError(f"{rev} ({sha[:10]}) in {self.path} holds no tinygrad/__init__.py: is this tinygrad's repository?")
    return Commit(sha, date, subject)

  def between(self, old: Commit, new: Commit) -> list[Commit]:
    """The commits from `old` to `new`, both included, in order along the first-parent line (tinygrad merges by
    squashing, so it is the history the releases were cut from). `old` must be an ancestor of `new`."""
    if self._git("merge-base", "--is-ancestor", old.sha, new.sha, check=False) is None:
      raise UsageError(f"{old.short} is not an ancestor of {new.short}: give --old an older revision on --new's line")
    out = self._git("log", "--first-parent", "--reverse", "--date=short", "--format=%H%x00%ad%x00%s", f"{old.sha}..{new.sha}") or ""
    rows = [Commit(*line.split("\x00", 2)) for line in out.splitlines() if line]
    return [old, *rows]

  def tree(self, commit: Commit, emulator: bool = False) -> Path:
    """The folder holding `commit`'s tinygrad (and emulator): exported on first use, then read from the cache."""
    parts = CORE + (EMULATOR if emulator else ())
    dest = self.cache / (commit.sha + ("-emulator" if emulator else ""))
    have = [p for p in parts if self._git("cat-file", "-e", f"{commit.sha}:{p}", check=False) is not None]
    if (done := dest / ".complete").exists():
      if done.read_text().split() == have: return dest
      shutil.rmtree(dest)  # exported by a planfuzz that took other parts
    self.cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{commit.sha[:10]}-", dir=self.cache))
    try:
      archive = subprocess.run(["git", "-C", str(self.path), "archive", commit.sha, *have], capture_output=True, check=True)
      subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
      (tmp / ".complete").write_text(" ".join(have) + "\n")
      try: tmp.rename(dest)
      except OSError: shutil.rmtree(tmp)  # another bisect exported it meanwhile: theirs is the same tree
    except BaseException:
      shutil.rmtree(tmp, ignore_errors=True)
      raise
    return dest

  def release_tags(self, new: Commit) -> list[str]:
    """tinygrad's release tags (vX.Y.Z) older than `new` and on its history, newest first."""
    out = self._git("tag", "--list", "v[0-9]*", "--merged", new.sha, "--sort=-version:refname") or ""
    return [t for t in out.split() if self.commit(t).sha != new.sha]
