"""Files a campaign leaves behind, written so that a kill at any moment leaves the old file or the new one, never half."""
from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
  """Write `text` to a sibling temp file, then rename it over `path` (a rename within a directory is atomic)."""
  path.parent.mkdir(parents=True, exist_ok=True)
  tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
  tmp.write_text(text)
  os.replace(tmp, path)
