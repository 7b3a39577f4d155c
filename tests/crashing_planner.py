"""Planner plugins that take the process down on purpose, for the crash-isolation tests of `planfuzz run --workers`."""
import os
import time
from typing import Any


def plan(linear: Any, held: set) -> Any:
  """Aborts the process (SIGABRT), as a segfaulting native planner would."""
  os.abort()


def hang(linear: Any, held: set) -> Any:
  """Never returns."""
  while True: time.sleep(1)
