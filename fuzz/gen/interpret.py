"""Build an oracle Subject from a program: seeded numpy data for the leaves, and the rendered step executed.

Executing `fuzz.gen.render.build_lines` (rather than a second, hand-written interpretation of the IR) means the
repro printer's script is the very code that ran here. Each call of `to_subject` makes new tensors, so
`lambda: to_subject(program)` is an `oracle.subject.SubjectFactory`.
"""
from __future__ import annotations

import linecache

import numpy as np
from tinygrad import Context, Device, Tensor, nn

from fuzz.gen.compat import Sharded, param, second_device, training
from fuzz.gen.program import Program
from fuzz.gen.render import build_lines, program_lines
from oracle.subject import Subject


def data(seed, shape, dtype):
  """Deterministic data for a leaf or a call's input: a seed (an int, or (seed, call)) gives the same array anywhere.
  Integers are small (-8..8; 0..255 unsigned), bools a coin flip each."""
  rng = np.random.default_rng(seed)
  if dtype == "bool": return rng.random(shape) < 0.5
  if dtype.startswith("uint"): return rng.integers(0, 256, shape).astype(dtype)
  if dtype.startswith("int"): return rng.integers(-8, 9, shape).astype(dtype)
  return (rng.standard_normal(shape) * 0.5).astype(dtype)


def source(program: Program) -> str: return "\n".join(program_lines(program)) + "\n"


def to_subject(program: Program) -> Subject:
  text = "\n".join(build_lines(program)) + "\n"
  filename = f"<planfuzz program {abs(hash(text)):x}>"
  linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)  # readable tracebacks from the step
  scope = {"Tensor": Tensor, "Device": Device, "nn": nn, "Context": Context, "data": data, "param": param, "training": training,
           "Sharded": Sharded, "second_device": second_device}
  exec(compile(text, filename, "exec"), scope)
  step, observe, inputs, evaluate = scope["build"]()
  return Subject(step, inputs, observe, program.prune, evaluate=evaluate, reset=program.reset, method=program.method)
