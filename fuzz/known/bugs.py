"""Genuine tinygrad bugs the fuzzer has found: each with a standalone repro under fuzz/known/ and a one-line mechanism.

A finding that matches a known bug is reported as known (counted in the summary) instead of failing the run, so CI
stays green while the bug is open; fuzz/test_known_bugs.py runs each repro as a strict xfail, so CI turns red the
day tinygrad fixes it and the entry must go. A match needs the oracle's attribution: the finding must look like the
bug and be blamed on the stage the bug lives in (`capture`: it stays with the memory planner off and with JIT=2, so
neither planfuzz's nor tinygrad's planner causes it; `prune`: it goes away without prune, and the prune-split
invariant found the one-time call that depends on the inputs).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fuzz.gen.ops import MOVEMENT
from fuzz.gen.render import sharded
from oracle.device import device_kind
from oracle.findings import JIT_ERROR, STALE, VALUE_KINDS, Finding
from oracle.signature import role
from planner import tg
from planner.engines import graph

if TYPE_CHECKING:
  from fuzz.known.avoided import AvoidedBug

KNOWN_DIR = Path(__file__).parent
PRUNE_SPLIT = "invariant:prune-split"
# found and reproduced on the CPU device only: on tinygrad's emulated AMD GPU these repros do not fail (checked on
# 0.14.0), so they are checked on the CPU whatever DEV a campaign runs on
CPU_ONLY = ("CPU",)
VIEWS = tuple(k for k in MOVEMENT if k != "contiguous")  # ops whose result is a view of their operand's buffer
# the device kinds whose graph runners build on tinygrad's GraphRunner: a bug of GraphRunner itself, told by rerunning
# with its fix patched in, is that bug on any of them
GRAPH_DEVICES = ("AMD", "NV", "CUDA", "METAL", "QCOM")
# the device kinds whose HCQ2 runtime a bug of HCQ2's lowering was seen on: the CPU, and the emulated AMD GPU (HCQ2=1
# HCQ_RUNTIME_DEV=PYTHON DEV=MOCKKFD+AMD, where its repro fails too on 0.14.0; hcq2-sharded-capture-asserts' and the
# misaligned view's segfault do not fail there)
HCQ2_SEEN = ("CPU", "AMD")

# (a fuzz Program, a patch of tinygrad active while it runs or None) -> its Verdict, under the finding's target, mode
# and calls
Rerun = Callable[..., Any]


@dataclass(frozen=True)
class KnownBug:
  name: str
  mechanism: str
  repro: Path
  suspect: Callable[[Finding], bool]  # before blame: a finding worth the attribution runs that tell
  stage: str  # the attribution a finding of this bug has
  matches: Callable[[Finding], bool]  # after blame, with the stage: the findings this bug explains
  applies: Callable[[Any], bool] = lambda program: True  # the fuzz program (None: not known) and process it can happen in
  # after blame, for findings `matches` does not take: (finding, program, rerun) -> whether a rerun of a variant of the
  # program, or of the program with tinygrad patched, shows this bug's mechanism
  shows_mechanism: Callable[[Finding, Any, Rerun | None], bool] | None = None
  devices: tuple[str, ...] = ()  # the device kinds it is known on (CPU: a bug of the CPU device or its compiler); () any
  also_blamed: tuple[str, ...] = ()  # other stages its findings are blamed on where a device presents it differently
  history: str = ""  # the releases at hand that reproduce it (planfuzz releases) and where a bisect puts it (planfuzz bisect)


def _frozen_lazy_escape(f: Finding) -> bool:
  """A tensor left lazy by the capture call that shows the capture call's value on a replay (whatever the blame); the
  value may equal other calls' too (a saturated exp equals call 0's as well). The capture is call 1, or the one after
  a `jit.reset()` (the finding's `capture`)."""
  equals = f.details.get("equals_calls", [f.details.get("equals_call")])
  return f.kind == STALE and bool(f.details.get("lazy_at_capture")) and f.details.get("capture", 1) in equals


def _lazy_escape(f: Finding) -> bool:
  """Any wrong value on a tensor the capture call left lazy: frozen at its first read, the escape often mixes the
  capture call's frozen intermediates with the live inputs, so it shows values of no call at all. Not on an input
  (an assigned input's own bug is jit-input-assign-dropped)."""
  return f.kind in VALUE_KINDS and bool(f.details.get("lazy_at_capture")) and role(f.subject) != "input"


def _gone(f: Finding, again: Any) -> bool:
  """Whether the rerun `again` (a Verdict) ran and no longer shows `f`'s observable: a mechanism shown."""
  return again.rejected is None and not any(g.subject == f.subject for g in again.findings)


def _gone_when_realized_in_step(f: Finding, program: Any, rerun: Rerun | None) -> bool:
  """The mechanism of lazy-escape-frozen-on-read and jit-input-assign-dropped: the difference vanishes when the step
  realizes its grads, kept tensors and input assign itself (nothing is left lazy for a first read to freeze, and the
  capture schedules the assign)."""
  if rerun is None or program is None or getattr(program, "realize_escapes", True): return False
  return _gone(f, rerun(replace(program, realize_escapes=True)))


def _returned_variable_escape(f: Finding) -> bool:
  """A wrong value on a returned tensor the capture call left lazy over a Variable: TinyJit returns its results
  realized, so only a result that realize() cannot make a buffer is returned so."""
  return f.kind in VALUE_KINDS and role(f.subject) == "returned" and bool(f.details.get("reads_variable"))


def _settled_value(f: Finding) -> bool:
  """A wrong value on a returned or kept value, grad or parameter the capture call did not leave lazy."""
  return f.kind in VALUE_KINDS and not f.details.get("lazy_at_capture")


def _gone_without_feedback(f: Finding, program: Any, rerun: Rerun | None) -> bool:
  """The mechanism of hcq2-fed-back-output-read-stale: the difference vanishes when the step is given fresh data in
  place of its own output (the stale read mixes with live data downstream, so it need not show as stale)."""
  if rerun is None or program is None or getattr(program, "feedback", None) is None: return False
  return _gone(f, rerun(replace(program, feedback=None)))


def _stale_value(f: Finding) -> bool:
  """A returned or kept value that shows an earlier call's value, not left lazy by the capture call."""
  return f.kind == STALE and not f.details.get("lazy_at_capture")


def _gone_with_kernel_args_by_program(f: Finding, program: Any, rerun: Rerun | None) -> bool:
  """The mechanism of graph-kernel-args-shifted: the difference vanishes when the graph runners give each kernel the
  buffers its program takes (the fix, patched in for the rerun; not where tinygrad's internals are unsupported)."""
  if rerun is None or program is None or tg.MISSING: return False
  return _gone(f, rerun(program, graph.graph_kernel_args_by_program))


def _assigned_input(f: Finding) -> bool:
  """A wrong value on an explicit input (named x0, x1, ...): only a step that assigns one observes it."""
  return f.kind in VALUE_KINDS and role(f.subject) == "input"


def _hcq_multi_device_assert(f: Finding) -> bool:
  return f.kind == JIT_ERROR and "must be BUFFER Ops.PARAM" in str(f.details.get("error", ""))


def _reads_an_input_view(program: Any) -> bool:
  """A fuzz program that makes a view of an explicit input its own buffer, or copies it to another device
  (`.contiguous()`, `.to`, `.shard` of a view; None: it may)."""
  if program is None: return True
  made, inputs = {op.out: op for op in program.body}, {x.name for x in program.inputs}
  def input_view(name: str, viewed: bool) -> bool:
    if name in inputs: return viewed
    return (op := made.get(name)) is not None and op.kind in VIEWS and input_view(op.args[0], True)
  return any(op.kind in ("contiguous", "to", "shard") and input_view(op.args[0], False) for op in program.body)


def _sharded(program: Any) -> bool:
  """A fuzz program with a sharded leaf or shard op (None, a program not from the fuzzer: it may be)."""
  return program is None or sharded(program)


KNOWN_BUGS: tuple[KnownBug, ...] = (
  KnownBug("symbolic-mean-left-lazy",
           "realize() leaves a mean over the first n rows of a buffer (n a bound Variable; a sum times 1/n) lazy, so "
           "TinyJit returns it unrealized, a graph over its buffers with the capture call's n stored in it: replays "
           "with another n read values of no call", KNOWN_DIR / "symbolic_mean_left_lazy.py",
           _returned_variable_escape, "capture", _returned_variable_escape,
           history="0.14.0 only (not 0.12.0, 0.13.0); brought by b1859805b1 'remove Ops.BIND (#17511)', 2026-08-13 "
                   "(bisect v0.13.0..a9069c177a: 1,046 commits, 12 runs, 318 s)"),
  KnownBug("lazy-escape-frozen-on-read",
           "the first read of a tensor left lazy by the capture call (a .grad, a tensor kept outside the step) realizes "
           "it, or the .contiguous() in its graph, into buffers that replays never write: later reads show the capture "
           "call's value, or that frozen intermediate mixed with the live inputs", KNOWN_DIR / "lazy_escape_frozen_on_read.py",
           _lazy_escape, "capture", _frozen_lazy_escape, shows_mechanism=_gone_when_realized_in_step,
           history="0.13.0 and 0.14.0 (0.12.0 cannot run the repro: its grads need requires_grad); not bisected"),
  KnownBug("prune-freezes-state-reader",
           "prune=True walks the captured calls once, in order: a kernel that reads state before the call that writes it "
           "from the inputs is pruned and runs only at capture, though it depends on the previous call's inputs "
           "(PlannedJit's prune stage mirrors tinygrad's, so both show it)",
           KNOWN_DIR / "prune_freezes_state_reader.py", lambda f: f.kind == PRUNE_SPLIT, "prune",
           lambda f: f.kind == PRUNE_SPLIT or f.kind in VALUE_KINDS,
           history="0.12.0, 0.13.0 and 0.14.0: older than 0.12.0"),
  KnownBug("jit-input-assign-dropped",
           "an explicit input assigned inside the step and left lazy (`x.assign(v)`, nothing returned reaching it) is "
           "never scheduled by the capture: reads after the eager and capture calls realize it outside the JIT, replays "
           "never run it, so the input keeps the caller's data (tinygrad#16618, open)",
           KNOWN_DIR / "jit_input_assign_dropped.py", _assigned_input, "capture", lambda f: False,
           lambda program: program is None or getattr(program, "input_assign", None) is not None,
           # on the emulated AMD GPU, after a jit.reset(), the assign is dropped only where the recapture is graphed
           # (JIT=2 keeps it), so blame falls on the graph; its mechanism still decides (planner clean run, seed 20261206)
           shows_mechanism=_gone_when_realized_in_step, also_blamed=("graph",),
           history="0.12.0, 0.13.0 and 0.14.0: older than 0.12.0"),
  KnownBug("hcq2-sharded-capture-asserts",
           "with HCQ2=1 capturing a step that uses a sharded (multi-device) tensor raises 'AssertionError: must be "
           "BUFFER Ops.PARAM' in tinygrad's hcq lowering, which does not take a multi-device PARAM",
           KNOWN_DIR / "hcq2_sharded_capture_asserts.py", _hcq_multi_device_assert, "capture", _hcq_multi_device_assert,
           lambda program: bool(tg.environment_knobs().get("HCQ2")) and _sharded(program), devices=CPU_ONLY,
           history="0.14.0 (not 0.12.0, which has no HCQ2; 0.13.0's wheel lacks its HCQ2 module); at ac7067ac60 (#17534, "
                   "2026-08-14: 'fix deconstruct_function for python 3.11'), the first commit whose CPU HCQ2 runs its "
                   "repro at all (bisected: 125 commits from 'cpu hcq2' #17503, 9 runs), it reproduces: as old as CPU "
                   "HCQ2 here; on the emulated AMD HCQ2 before that, not tried"),
  KnownBug("hcq2-input-view-copy-asserts",
           "with HCQ2=1 capturing a step that copies a view of its input to another device (`x[2:6].to('CPU:1')`) raises "
           "'AssertionError: must be BUFFER Ops.PARAM' in tinygrad's hcq lowering, which takes a call's arguments as whole "
           "buffers or parameters, not a view of a parameter",
           KNOWN_DIR / "hcq2_input_view_copy_asserts.py", _hcq_multi_device_assert, "capture", _hcq_multi_device_assert,
           lambda program: bool(tg.environment_knobs().get("HCQ2")) and _reads_an_input_view(program), devices=HCQ2_SEEN,
           history="0.14.0 (not 0.12.0, which has no HCQ2; 0.13.0's wheel lacks its HCQ2 module); at ac7067ac60 (#17534, "
                   "2026-08-14: 'fix deconstruct_function for python 3.11'), the first commit whose CPU HCQ2 runs its "
                   "repro at all (bisected: 125 commits from 'cpu hcq2' #17503, 9 runs), it reproduces: as old as CPU "
                   "HCQ2 here; on the emulated AMD HCQ2 before that, not tried (on 0.14.0 it reproduces there too)"),
  KnownBug("hcq2-fed-back-output-read-stale",
           "with HCQ2=1 the whole capture is one 'hcq' call, for which tinygrad's get_call_outs_ins says nothing is "
           "written, so a replay never copies an input the capture writes (the JIT's own output fed back): a kernel "
           "rewriting that output runs before a read of the input on the same queue, or races it on another device's "
           "queue (a copy to CPU:1 of the fed-back input; there the attribution reruns fall either way, so the "
           "mechanism, gone without the feedback, decides)",
           KNOWN_DIR / "hcq2_fed_back_output_read_stale.py", _settled_value, "capture",
           lambda f: _stale_value(f) and f.attribution == "capture",
           lambda program: getattr(program, "feedback", None) is not None and bool(tg.environment_knobs().get("HCQ2")),
           shows_mechanism=_gone_without_feedback, devices=HCQ2_SEEN, also_blamed=("planner",),
           history="0.14.0, and 0.12.0 without HCQ2 (its plain replay copied no fed-back input either: README, Older "
                   "tinygrads); 0.13.0's wheel lacks its HCQ2 module; at ac7067ac60 (#17534, 2026-08-14: 'fix "
                   "deconstruct_function for python 3.11'), the first commit whose CPU HCQ2 runs its repro at all "
                   "(bisected: 125 commits from 'cpu hcq2' #17503, 9 runs), it reproduces: as old as CPU HCQ2 here; on "
                   "the emulated AMD HCQ2 before that, not tried (on 0.14.0 it reproduces there too)"),
  KnownBug("graph-input-view-stale",
           "with graphs (HCQGraph), a graphed call that reads a view of a step's input as a buffer (a kernel reading "
           "`x[1:5].contiguous()`, a copy `x[1:5].to(\"AMD:1\")`, a shard of it) keeps the capture call's view: given a new "
           "input tensor each call, replays read the capture call's input there (right with JIT=2, and without the "
           "view); found on the emulated AMD GPU", KNOWN_DIR / "graph_input_view_stale.py",
           lambda f: f.kind in VALUE_KINDS, "graph", lambda f: f.kind in VALUE_KINDS, _reads_an_input_view,
           devices=("AMD",),
           history="0.14.0 on the emulated AMD GPU (no wheel ships an emulator for 0.12.0, 0.13.0); at aab51fb7b6 "
                   "(#17256, 2026-07-29: '64-bit UOp.variable support, try 2'), the first commit whose own emulator runs "
                   "a graphed capture (bisected: 222 commits, 9 runs, 350 s; older ones raise AttributeError: 'HCQGraph' "
                   "object has no attribute 'last_timeline', and before 0.13.0 DEV=MOCKKFD+AMD names no device), it "
                   "reproduces: older than that, not told further"),
  KnownBug("graph-kernel-args-shifted",
           "with graphs (GraphRunner, HCQGraph), a kernel whose code dropped a read of one of its buffers (`x - (x + y)` "
           "is `-y`) is given every argument of its call instead of those its program takes (`Program.globals`): it "
           "reads the wrong buffers, from the capture call on (right with JIT=2); found on the emulated AMD GPU",
           KNOWN_DIR / "graph_kernel_args_shifted.py", lambda f: f.kind in VALUE_KINDS, "graph", lambda f: False,
           shows_mechanism=_gone_with_kernel_args_by_program, devices=GRAPH_DEVICES,
           history="0.14.0 on the emulated AMD GPU (no wheel ships an emulator for 0.12.0, 0.13.0); at aab51fb7b6 "
                   "(#17256, 2026-07-29: '64-bit UOp.variable support, try 2'), the first commit whose own emulator runs "
                   "a graphed capture (bisected: 222 commits, 9 runs, 350 s; older ones raise AttributeError: 'HCQGraph' "
                   "object has no attribute 'last_timeline', and before 0.13.0 DEV=MOCKKFD+AMD names no device), it "
                   "reproduces: older than that, not told further"),
)


def on_device(bug: KnownBug | AvoidedBug, kind: str | None = None) -> bool:
  """Whether `bug` is known on the device kind (default: the one tinygrad uses here, `oracle.device.device_kind`)."""
  return not bug.devices or (kind or device_kind()) in bug.devices


def repro_device(bug: KnownBug | AvoidedBug) -> str | None:
  """The DEV a bug's repro runs with: None (this process's own) where the bug is known on it, else its first kind."""
  return None if on_device(bug) else bug.devices[0]


def maybe_known(f: Finding, program: Any = None) -> bool:
  """Looks like a known bug, before blame: worth the attribution runs that tell."""
  return any(b.suspect(f) and b.applies(program) and on_device(b) for b in KNOWN_BUGS)


def known_bug(f: Finding, program: Any = None, rerun: Rerun | None = None) -> KnownBug | None:
  """The known bug a blamed finding is: blamed on its stage, in a program it can happen in, and either looking like it
  or, run again as a variant, showing its mechanism."""
  candidates = [b for b in KNOWN_BUGS if f.attribution in (b.stage, *b.also_blamed) and b.applies(program) and on_device(b)]
  return next((b for b in candidates if b.matches(f)), None) or \
    next((b for b in candidates if b.shows_mechanism is not None and b.suspect(f) and b.shows_mechanism(f, program, rerun)), None)
