"""The adapter is the only door to tinygrad internals: an unsupported tinygrad fails with one clear error when the
planner loads, while the adapter itself (whose portable part the dynamic oracle uses) always imports."""
from typing import TYPE_CHECKING

import pytest

from planner import tg

if TYPE_CHECKING:
  from fuzz.gen.program import Program


def test_missing_internals_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setitem(tg._NEEDED, "tinygrad.engine.jit", ("JitError", "no_such_lowering"))
  monkeypatch.setitem(tg._NEEDED, "tinygrad.no_such_module", ("Thing",))
  found, missing = tg._load()
  msg = str(tg.unsupported(missing))
  assert tg.installed_version() in msg and "0.14.0" in msg
  assert "tinygrad.engine.jit.no_such_lowering" in msg and "tinygrad.no_such_module.Thing" in msg
  assert "JitError" not in msg.split("lacks:")[1]


def test_other_version_with_all_internals_warns(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setattr(tg, "installed_version", lambda: "9.9.9")
  with pytest.warns(UserWarning, match="9.9.9"):
    found, missing = tg._load()
  assert found["memory_plan_rewrite"] is tg.tinygrad_memory_plan and missing == []


def test_require_raises_on_missing_internals(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setattr(tg, "MISSING", ["tinygrad.engine.jit.jit_lower"])
  with pytest.raises(tg.UnsupportedTinygrad, match="lacks: tinygrad.engine.jit.jit_lower"): tg.require()
  tg.is_lazy(tg.Tensor([1.0]))  # the portable part still works


def test_installed_version_is_supported() -> None:
  assert tg.installed_version() in tg.SUPPORTED_VERSIONS


def test_knobs_switch_process_knobs_for_one_run() -> None:
  """GRAPH_ONE_KERNEL is read with tinygrad's cached getenv: `knobs` sets it and clears the cache both ways."""
  from tinygrad.helpers import JIT, getenv
  assert getenv("GRAPH_ONE_KERNEL") == 0
  with tg.knobs({"GRAPH_ONE_KERNEL": 1, "JIT": 2}):
    assert getenv("GRAPH_ONE_KERNEL") == 1 and JIT.value == 2
  assert getenv("GRAPH_ONE_KERNEL") == 0 and JIT.value != 2


def test_environment_knobs_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setenv("HCQ2", "1")
  assert tg.environment_knobs() == {"HCQ2": 1}
  monkeypatch.setenv("HCQ2", "0")
  assert tg.environment_knobs() == {}


def test_tensors_the_cycle_collector_freed_are_forgotten_after_each_example() -> None:
  """tinygrad's registry of live tensors keeps an entry for each tensor Python's cycle collector freed, and every realize
  walks the registry: the fuzz driver drops those entries after each example, so a long campaign does not slow down."""
  import gc

  from fuzz.campaign.example import run_example
  from fuzz.gen.program import Backward, Leaf, Op, Program
  from oracle.targets import Target
  dead = lambda: sum(ref() is None for ref in list(tg._tg["all_tensors"]))
  for _ in range(50):
    scope = {"t": tg.Tensor.empty(2)}
    scope["scope"] = scope  # a cycle, as a hand-written program's module-level step and its globals make
  del scope
  gc.collect()
  assert dead() >= 50  # tinygrad's behaviour, which the driver works around
  program = Program(params=(Leaf("p0", (4,), seed=1),), inputs=(), state=(), body=(Op("relu", ("p0",), "v0"),),
                    backward=(Backward("v0"),), returns="v0")
  gc.disable()  # no collection between the driver's clean-up and the count
  try:
    assert not run_example(program, Target(), 3, "fresh").findings
    assert dead() == 0
  finally: gc.enable()


def adam_step() -> "Program":
  """relu(p0 * x0) with an Adam step on p0: a generated program with grads, optimizer state and an explicit input."""
  from fuzz.gen.program import Backward, Leaf, Op, Program, Update
  return Program(params=(Leaf("p0", (4,), seed=1),), inputs=(Leaf("x0", (4,), seed=2),), state=(),
                 body=(Op("mul", ("p0", "x0"), "v0"), Op("relu", ("v0",), "v1")), backward=(Backward("v1"),),
                 returns="v1", update=Update("adam", ("p0",)))


def test_a_generated_programs_tensors_die_with_its_example() -> None:
  """A generated program runs inside `build()` (fuzz.gen.render.build_lines), so its tensors are freed the moment its
  example ends, not whenever Python's cycle collector gets to them: until then every realize walks them (at module
  level they were a cycle with the scope's functions, about 13 an example: static checks ran 11-19% faster without them)."""
  import gc

  from fuzz.campaign.example import run_example
  from oracle.targets import Target
  alive = lambda: sum(ref() is not None for ref in list(tg._tg["all_tensors"]))
  program = adam_step()
  gc.collect()
  gc.disable()  # only reference counting frees anything from here on
  try:
    before = alive()
    assert not run_example(program, Target(), 3, "fresh").findings
    assert alive() == before
  finally: gc.enable()


def test_uop_metadata_does_not_pile_up_across_examples(monkeypatch: pytest.MonkeyPatch) -> None:
  """backward() appends its metadata to hash-consed UOps that outlive a program, so each example lengthens tuples every
  later backward() copies (a quarter of a long differential worker's time): the driver empties the table after each."""
  from fuzz.campaign.example import run_example
  from oracle.targets import Target
  all_metadata = tg.uop_metadata()
  program = adam_step()
  longest = lambda: max((len(v) for v in all_metadata.values()), default=0)
  with monkeypatch.context() as m:  # tinygrad's behaviour, which the driver works around
    m.setattr(tg, "forget_uop_metadata", lambda: None)
    lengths = []
    for _ in range(3):
      assert not run_example(program, Target("tinyjit"), 3, "fresh").findings
      lengths.append(longest())
    assert lengths[0] < lengths[1] < lengths[2], lengths
  assert not run_example(program, Target("tinyjit"), 3, "fresh").findings
  assert len(all_metadata) == 0


def test_a_worker_takes_its_parents_dtype_probes(monkeypatch: pytest.MonkeyPatch) -> None:
  """`planfuzz run` probes the dtypes once, in the parent, and hands the answers to its workers (a probe is a kernel,
  about a second each under HCQ2): a child takes them as told, bfloat16 included where the parent said so, probing
  nothing; a dtype it was not told about it still probes."""
  monkeypatch.setenv(tg.PROBED_DTYPES, "bfloat16=1,float16=0")
  tg.usable_dtypes.cache_clear()
  try: assert tg.usable_dtypes(("bfloat16", "float16", "int32")) == ("bfloat16", "int32")
  finally: tg.usable_dtypes.cache_clear()
