"""Which tinygrad releases planfuzz has at hand reproduce a bug: its repro run once against each.

The releases are folders `make old-tinygrad` fills (`.cache/tinygrad-0.12.0`, `.cache/tinygrad-0.13.0`: a release's
wheel, put first on PYTHONPATH) and the installed tinygrad (0.14.0, pinned in pyproject.toml). A repro on the emulated GPU needs each
release's own emulator, which no wheel ships, so only the installed release answers for it.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from fuzz.history.verdicts import BAD, GOOD, SKIP, Verdict, run_repro

ROOT = Path(__file__).resolve().parents[2]
OLD_RELEASES = ("0.12.0", "0.13.0")  # as the Makefile's old-tinygrad target installs them


@dataclass(frozen=True)
class Release:
  version: str
  folder: Path | None  # first on PYTHONPATH; None: the installed tinygrad


def at_hand(root: Path = ROOT) -> list[tuple[str, Release | None]]:
  """(version, its release, or None when not installed) for every release planfuzz knows, oldest first."""
  rows: list[tuple[str, Release | None]] = []
  for v in OLD_RELEASES:
    folder = root / ".cache" / f"tinygrad-{v}"
    rows.append((v, Release(v, folder) if (folder / ".installed").exists() else None))
  return rows + [(installed, Release(installed, None))] if (installed := metadata.version("tinygrad")) not in OLD_RELEASES else rows


def table(repro: Path, emulator: bool, timeout: float = 300.0, root: Path = ROOT) -> dict[str, str]:
  """Each release's answer for `repro`: 'reproduces', 'does not reproduce', or 'cannot run there: why'."""
  rows = {}
  for version, release in at_hand(root):
    if release is None: rows[version] = "cannot run there: not installed (make old-tinygrad)"
    elif emulator and release.folder is not None: rows[version] = "cannot run there: its emulator ships in no wheel (bisect a checkout)"
    else: rows[version] = said(run_repro(repro, release.folder, timeout))
  return rows


def said(v: Verdict) -> str: return v.answer if v.answer != SKIP else f"cannot run there: {v.why}"


def sentence(rows: dict[str, str]) -> str:
  """'reproduces on 0.13.0 and 0.14.0; not on 0.12.0; cannot run on ...' from `table`'s rows."""
  def join(vs: list[str]) -> str: return vs[0] if len(vs) == 1 else ", ".join(vs[:-1]) + " and " + vs[-1]
  bad = [v for v, a in rows.items() if a == BAD]
  good = [v for v, a in rows.items() if a == GOOD]
  other = [f"{v} ({a.removeprefix('cannot run there: ')})" for v, a in rows.items() if a not in (BAD, GOOD)]
  parts = ([f"reproduces on {join(bad)}"] if bad else []) + ([f"not on {join(good)}"] if good else []) + \
          ([f"cannot run on {join(other)}"] if other else [])
  return "; ".join(parts) or "no release at hand"
