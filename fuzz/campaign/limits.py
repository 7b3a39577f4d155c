"""Bounds on a worker process, as libFuzzer's `-rss_limit_mb` bounds its own: a long campaign replaces a worker past
them instead of letting it grow until the OOM killer ends the campaign without a report.

A worker's memory grows for as long as it runs (tinygrad's per-process caches: every example compiles new kernels and
makes new UOps, which planfuzz cannot safely empty). The worker checks its limits between examples, never inside one
or while it shrinks a bug; one past them retires (fuzz/campaign/explore.py) and a fresh process takes the rest of its
share, the same path that replaces a crashed worker (fuzz/campaign/workers.py).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_MAX_RSS_MB = 512.0  # a 2-worker campaign stays well under a GitHub runner's 7 GB with room for compiles
DEFAULT_WORKER_EXAMPLES = 2000  # examples a process runs before a fresh one takes over (0: no cap)


def rss_mb(pid: int | str = "self") -> float:
  """Resident memory of a process now, in MB (Linux's /proc; 0.0 where there is none, so no limit ever trips there)."""
  try:
    with open(f"/proc/{pid}/statm") as f: return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
  except (OSError, ValueError, IndexError): return 0.0


@dataclass(frozen=True)
class Limits:
  max_rss_mb: float = DEFAULT_MAX_RSS_MB  # 0: no limit
  max_examples: int = DEFAULT_WORKER_EXAMPLES  # examples this process may run; 0: no limit

  def exceeded(self, examples: int) -> str | None:
    """Why a worker that ran `examples` examples should retire now, or None."""
    if self.max_examples and examples >= self.max_examples: return f"ran {examples} examples (--worker-examples {self.max_examples})"
    if self.max_rss_mb and (rss := rss_mb()) > self.max_rss_mb: return f"resident memory {rss:.0f} MB (--max-rss {self.max_rss_mb:g})"
    return None
