"""The reference of a process running HCQ2, computed in a process of its own that runs without it.

The reference (oracle/runs.py `reference`: the step eager, JIT and memory planner off) is most of an example's cost,
and under HCQ2 tinygrad lowers every eager schedule into an 'hcq' call anew (`hcq_lower`, a few hundred ms each, the
inputs' buffers in its cache key): the reference took half of an HCQ2 worker's time. Eager results do not depend on
the replay engine (the same kernels run on the same device), so an HCQ2 worker asks a long-lived helper process
without HCQ2 for them: the JIT under test still runs with HCQ2, and an eager difference of HCQ2's own still shows in
attribution's in-process eager rerun (blamed on `eager`: a difference in how HCQ2 runs kernels; both processes
compile them alike, see below). Should the helper fail, the worker computes the reference itself. With each reference
the helper hands over the kernels it compiled for it (planner/kernel_cache.py): in a plain worker the reference's
compiles serve the target run of the same program, and without them an HCQ2 worker compiled every kernel again.
"""
from __future__ import annotations

import functools
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO

from planner import kernel_cache
from planner.engines import hcq2

ROOT = Path(__file__).resolve().parents[2]


def send(out: BinaryIO, obj: Any) -> None:
  data = pickle.dumps(obj)
  out.write(struct.pack("<Q", len(data)) + data)
  out.flush()


def receive(inp: BinaryIO) -> Any:
  head = inp.read(8)
  if len(head) < 8: raise EOFError("the reference helper closed its pipe")
  return pickle.loads(inp.read(struct.unpack("<Q", head)[0]))


class ReferenceServer:
  """A helper process without HCQ2 that computes references on request, for as long as this process lives."""

  def __init__(self) -> None:
    self.proc = subprocess.Popen([sys.executable, "-m", "fuzz.campaign.reference_server"], cwd=ROOT, env=hcq2.without(os.environ),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)

  def reference(self, program: Any, mode: str, calls: int) -> Any | None:
    """The reference trace of `program`, or None when the helper cannot give it (it died, or the answer is no trace)."""
    try:
      send(self.proc.stdin, (program, mode, calls))
      trace, kernels = receive(self.proc.stdout)
    except (OSError, EOFError, pickle.PickleError):
      self.proc.kill()
      return None
    try: kernel_cache.adopt(pickle.loads(kernels))
    except Exception: pass  # kernels that do not load cost only their compiles here, never the reference
    return trace


_SERVER: list[ReferenceServer] = []


def reference_without_hcq2(program: Any, mode: str, calls: int) -> Any | None:
  """The reference from the helper process, in a process running HCQ2 (None elsewhere, or when the helper failed:
  the caller computes it)."""
  if not hcq2.active(): return None
  if not _SERVER or _SERVER[0].proc.poll() is not None: _SERVER[:] = [ReferenceServer()]
  return _SERVER[0].reference(program, mode, calls)


def serve() -> None:
  """The helper's loop: a (program, mode, calls) in, its reference trace (its error made plain where it does not pickle)
  and the kernels compiled since the last answer (pickled apart: kernels that do not pickle are not handed over, and
  leave the trace as it is) out, until the pipe closes."""
  from dataclasses import replace

  from fuzz.gen.interpret import to_subject
  from oracle.runs import reference
  inp, out = sys.stdin.buffer, sys.stdout.buffer
  sys.stdout = sys.stderr  # anything printed goes to stderr, never into the pipe
  sent: set = set()
  while True:
    try: program, mode, calls = receive(inp)
    except EOFError: return
    trace = replace(reference(functools.partial(to_subject, program), calls, mode), jit=None)
    compiled = kernel_cache.compiled_since(sent)
    try: kernels = pickle.dumps(compiled)
    except Exception: kernels = pickle.dumps({})
    sent.update(compiled)
    try: send(out, (trace, kernels))  # pickled whole before anything is written: a failure leaves the pipe clean
    except Exception: send(out, (replace(trace, calls=[c if c.error is None else replace(c, error=RuntimeError(repr(c.error)))
                                                       for c in trace.calls]), kernels))


if __name__ == "__main__":
  serve()
