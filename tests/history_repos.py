"""Git repositories for the bisect tests, built from real tinygrad trees (the releases' wheels) or from tiny fake ones."""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import tinygrad

ROOT = Path(__file__).resolve().parents[1]
INSTALLED = Path(tinygrad.__file__).parent  # 0.14.0's tinygrad folder
# 0.14.0's line that fixed #16571 (tinygrad#16588), and what it said before: held are the returned tensors' buffers only
FIXED = ("held_bufs = set(buffers) | {u for tref in list(all_tensors) if (t:=tref()) is not None for u in t.uop.toposort() "
         "if u.op is Ops.BUFFER}")
UNFIXED = "held_bufs = set(buffers) | {t.uop.buf_uop for t in get_parameters(ret) if t.uop.buf_uop.op is Ops.BUFFER}"


def git(repo: Path, *args: str) -> str:
  env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
  return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env).stdout


def commit(repo: Path, subject: str, day: int, change: Callable[[Path], None]) -> str:
  """One commit whose work tree `change` edits; its hash."""
  change(repo)
  git(repo, "add", "-A")
  date = f"2026-06-{day:02d}T12:00:00"
  git(repo, "-c", f"user.date={date}", "commit", "-q", "--no-verify", "-m", subject, "--date", date)
  return git(repo, "rev-parse", "HEAD").strip()


def init(repo: Path) -> Path:
  repo.mkdir(parents=True)
  git(repo, "init", "-q", "-b", "master")
  return repo


def put_tinygrad(source: Path) -> Callable[[Path], None]:
  """A change that makes the work tree's tinygrad/ a copy of `source` (a release's tinygrad folder)."""
  def change(repo: Path) -> None:
    shutil.rmtree(repo / "tinygrad", ignore_errors=True)
    shutil.copytree(source, repo / "tinygrad", ignore=shutil.ignore_patterns("__pycache__"))
  return change


def edit(path: str, old: str, new: str) -> Callable[[Path], None]:
  def change(repo: Path) -> None:
    text = (repo / path).read_text()
    assert old in text, f"{path} no longer holds {old[:60]!r}"
    (repo / path).write_text(text.replace(old, new))
  return change


def release(version: str) -> Path:
  """The folder holding release `version`'s tinygrad: the installed one, or what `make old-tinygrad` installs."""
  if version == tinygrad_version(): return INSTALLED
  folder = ROOT / f".cache/tinygrad-{version}"
  made = subprocess.run(["make", "-s", f".cache/tinygrad-{version}/.installed"], cwd=ROOT, capture_output=True, text=True)
  assert made.returncode == 0, made.stdout + made.stderr
  return folder / "tinygrad"


def tinygrad_version() -> str:
  from importlib import metadata
  return metadata.version("tinygrad")


def fake_history(repo: Path, inits: list[str]) -> list[str]:
  """A repository of len(inits) commits, commit k's tinygrad/__init__.py holding inits[k] (a fake tinygrad that says
  what a repro should find there), made in one `git fast-import` (a thousand commits in a second); the hashes."""
  init(repo)
  stream = []
  for k, text in enumerate(inits):
    data, msg = text.encode(), f"commit {k} (#{1000 + k})".encode()
    stream += [b"commit refs/heads/master", f"mark :{k + 1}".encode(), f"committer t <t@t> {1780000000 + 3600 * k} +0000".encode(),
               b"data %d" % len(msg), msg, *([f"from :{k}".encode()] if k else []),
               b"M 100644 inline tinygrad/__init__.py", b"data %d" % len(data), data, b""]
  subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"\n".join(stream) + b"\n", check=True)
  git(repo, "checkout", "-q", "master")
  return git(repo, "log", "--reverse", "--format=%H").split()
