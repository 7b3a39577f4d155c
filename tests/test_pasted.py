"""Every helper a repro script pastes runs alone: with only the names the script imports at its top, it does what the
campaign's own copy does.

A pasted helper that looks up a name the script lacks fails at best, and at worst has its error swallowed and answers
something else: `second_device` once read `Device`, which scripts imported only inside `build()`, so every copy in a
repro went to the CPU while the campaign's went to `CPU:1` (issue 32). Checked two ways: statically, no function in a
written script reads a global the script does not bind (for every kind of program that makes the printer paste a
helper), and by running each helper in a namespace holding only the script's imports.
"""
from __future__ import annotations

import builtins
import dis
import types

import numpy as np
import pytest
from tinygrad import Device

from fuzz.gen import compat
from fuzz.gen.printer import PASTED, compare_script, imports_line, pasted
from fuzz.gen.program import Program
from oracle.runs import FRESH, SAME_BUFFER
from oracle.targets import Target


def programs() -> dict[str, tuple[Program, Target, str]]:
  """Programs that make the printer paste each helper, in either repro form."""
  from tests.test_campaigns import THROUGH_SECOND
  from tests.test_repro_verdicts import SHARDED_INPUT
  from tests.test_steps import TRAIN_EVAL
  tinyjit = Target("tinyjit")
  return {"copy": (THROUGH_SECOND, tinyjit, FRESH), "sharded-short": (SHARDED_INPUT, tinyjit, SAME_BUFFER),
          "sharded-full": (SHARDED_INPUT, Target(), SAME_BUFFER), "optimizer-method": (TRAIN_EVAL, tinyjit, SAME_BUFFER)}


def read_globals(code: types.CodeType) -> set[str]:
  """Every global name a code object (and the functions, classes and lambdas inside it) reads."""
  names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
  return names.union(*(read_globals(c) for c in code.co_consts if isinstance(c, types.CodeType)))


def bound_at_top(text: str) -> set[str]:
  """The names a script binds at its top level: imports, functions, classes, assignments."""
  code = compile(text, "<script>", "exec")
  return {i.argval for i in dis.get_instructions(code) if i.opname in ("STORE_NAME", "IMPORT_NAME")}


@pytest.mark.parametrize("name", sorted(programs()))
def test_no_function_in_a_script_reads_a_name_the_script_lacks(name: str) -> None:
  program, target, mode = programs()[name]
  text = compare_script(program, target, mode, 5, [], "")
  code = compile(text, "<script>", "exec")
  lacking = read_globals(code) - bound_at_top(text) - set(dir(builtins))
  assert not lacking, f"{name}: the script reads {sorted(lacking)} and never binds them\n{text}"


@pytest.mark.parametrize("helper", PASTED, ids=lambda h: h.__name__)
def test_each_pasted_helper_runs_alone_with_the_scripts_imports(helper) -> None:
  """Run alone in a namespace holding `numpy as np` and what a script imports from tinygrad (for a program that pastes
  them all: one that names devices), each helper answers as the campaign's copy does."""
  program, _, _ = programs()["copy"]
  scope: dict = {}
  exec("import numpy as np\n" + imports_line(program), scope)
  exec(compile(pasted(helper), "<pasted>", "exec"), scope)
  alone = scope[helper.__name__]
  assert not read_globals(compile(pasted(helper), "<pasted>", "exec")) - set(scope) - set(dir(builtins))
  if helper is compat.second_device:
    assert alone(Device.DEFAULT) == compat.second_device(Device.DEFAULT) != "CPU"  # a second CPU here: CPU:1
  elif helper is compat.Sharded:
    devices = (Device.DEFAULT, compat.second_device(Device.DEFAULT))
    made = alone(np.ones((4, 2), np.float32), devices, 0).to_tensor()
    assert made.device == devices and made.numpy().sum() == 8
  elif helper is compat.param: assert alone(np.ones(3, np.float32)).numpy().tolist() == [1, 1, 1]
  elif helper is compat.training:
    with alone(): pass
  else: assert np.array_equal(alone(1, (2,), "float32"), helper(1, (2,), "float32"))  # data
