"""Compare a target's trace with the reference's: per-dtype tolerances, mismatch classes, documented behaviour.

Tolerances (rtol, atol), documented: float64 1e-9/1e-12, float32 1e-5/1e-6, float16 and bfloat16 1e-2/1e-3;
integers and bools exact. The JIT runs the very kernels eager runs, so a correct run agrees to the last bits;
the float slack only covers a different reduction grouping under a different fusion.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from oracle.device import EMULATOR, emulator_failure
from oracle.findings import ALL_ZEROS, JIT_ERROR, NON_FINITE, STALE, WRONG_VALUES, Finding
from oracle.runs import FRESH, CallRecord, Trace
from oracle.signature import role

TOLERANCES = {8: (1e-9, 1e-12), 4: (1e-5, 1e-6), 2: (1e-2, 1e-3)}
COMPARED_WITH = "compared_with"  # a value finding's details: [reference call, rtol, atol] the judge compared it with
MAX_SHOWN = 3


@dataclass
class Verdict:
  """The judge's answer for one target run: findings, or why the program was rejected, and what was compared."""
  findings: list[Finding] = field(default_factory=list)
  rejected: str | None = None
  advisories: list[Finding] = field(default_factory=list)  # contract deviations computing the same values: never fail a run
  compared: int = 0
  skipped: Counter = field(default_factory=Counter)
  run_seconds: float = 0.0  # spent running the programs (reference and target), for the fuzzer's overhead figure

  @property
  def ok(self) -> bool: return not self.findings

  def take(self, found: list[Finding]) -> None:
    """Add `found` in order, advisories apart from the findings (an advisory is about a plan: the planner's by definition)."""
    self.findings += [f for f in found if not f.advisory]
    self.advisories += [f.blamed("planner") for f in found if f.advisory]

  def strict(self) -> Verdict:
    """This verdict with its advisories counted as findings (`--strict`)."""
    return replace(self, findings=self.findings + self.advisories, advisories=[])


def tolerance(dtype: np.dtype) -> tuple[float, float]:
  return TOLERANCES.get(dtype.itemsize, (1e-2, 1e-3)) if dtype.kind == "f" else (0.0, 0.0)


def close(got: np.ndarray, want: np.ndarray) -> np.ndarray:
  rtol, atol = tolerance(want.dtype)
  if want.dtype.kind != "f": return got == want
  return np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)


def classify(got: np.ndarray, want: np.ndarray, earlier: list[tuple[int, np.ndarray]]) -> tuple[str, list[int]]:
  """all-zeros beats non-finite beats stale (equal to an earlier call's value: every call it equals, since two calls
  can give one value) beats plain wrong values."""
  if got.size and not got.any() and want.any(): return ALL_ZEROS, []
  if got.dtype.kind == "f" and (~np.isfinite(got) & np.isfinite(want)).any(): return NON_FINITE, []
  same = [k for k, e in earlier if e.shape == got.shape and close(got, e).all()]
  return (STALE, same) if same else (WRONG_VALUES, [])


def mismatch_details(got: np.ndarray, want: np.ndarray) -> dict:
  bad = ~close(got, want)
  g, w = got.astype(np.float64), want.astype(np.float64)
  with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
    abs_err = np.nan_to_num(np.abs(g - w), nan=np.inf)  # a NaN where a number was expected is infinitely wrong
    rel_err = abs_err / np.maximum(np.abs(w), np.finfo(np.float64).tiny)
  idx = [tuple(int(i) for i in ix) for ix in np.argwhere(bad)[:MAX_SHOWN]]
  worst = (float(abs_err[bad].max()), float(rel_err[bad].max())) if bad.any() else (0.0, 0.0)
  return {"max_abs_err": worst[0], "max_rel_err": worst[1], "differing": int(bad.sum()), "of": int(bad.size),
          "examples": [(ix, float(got[ix]), float(want[ix])) for ix in idx]}


def compare_value(path: str, call: int, when: str, got: np.ndarray, want: np.ndarray, earlier: list[tuple[int, np.ndarray]],
                  lazy: bool = False) -> Finding | None:
  """A finding when `got` differs from `want` at `call` (its phase `when`); its details say whether the observable was
  a lazy escape, and for a stale value which earlier call's value it shows."""
  if got.shape != want.shape:
    return Finding(WRONG_VALUES, path, call, when, {"shape": got.shape, "expected_shape": want.shape, "lazy": lazy})
  if close(got, want).all(): return None
  kind, equals = classify(got, want, earlier)
  extra = {"lazy": lazy} | ({"equals_call": equals[0], "equals_calls": equals} if equals else {})
  return Finding(kind, path, call, when, mismatch_details(got, want) | extra)


def error_text(e: BaseException) -> str: return f"{type(e).__name__}: {e}"


# TinyJit's refusals by design, as (exception type name, a fragment of its message or "" for any): JitError covers
# duplicate, const and virtual inputs, an args mismatch, .item()/.tolist() during capture, nothing captured and a
# non-Tensor return; a nested JIT is a RuntimeError, from TinyJit and from planfuzz's PlannedJit alike.
REFUSALS = (("JitError", ""), ("RuntimeError", "inside another TinyJit is not supported"),
            ("RuntimeError", "inside another JIT is not supported"))
SYMBOLIC_VIEW = "symbolic view at another bound value"
VARIABLE_ESCAPE = "lazy escape over a Variable at another bound value"
FED_BACK = "after a fed-back value already skipped or wrong"


def rejection(e: BaseException, where: str = "eager") -> str:
  """Why a program is rejected for an error it raised: an error inside the GPU emulator is the emulator's limit (never
  the JIT's bug, whichever run met it), any other one in the eager reference makes the program invalid."""
  return f"{EMULATOR if emulator_failure(e) else where}: {error_text(e)}"


def is_rejection(e: BaseException) -> bool:
  """A JIT error TinyJit documents: the program is invalid under a JIT, not a finding."""
  return any(type(e).__name__ == name and fragment in str(e) for name, fragment in REFUSALS)


def frozen_at_capture(capture: CallRecord, mode: str) -> frozenset[str]:
  """Observables a capture call leaves frozen for its replays: a pending assign made then, and (with fresh inputs) a
  returned view of an input. With inputs refilled in place, a pending assign on an input is not frozen: the caller
  writes the input before every call, and a replay must assign it as eager does (tinygrad#16618 is that it does not)."""
  if mode == FRESH: return capture.pending_assigns | capture.input_views
  return capture.pending_assigns - capture.input_views


def frozen_at(got: Trace, call: int, mode: str) -> frozenset[str]:
  """The observables `call` shows as the capture that governs it left them: at a replay, `frozen_at_capture`; none at
  the eager and capture calls."""
  return frozen_at_capture(got.capture_record(call), mode) if got.schedule.replay(call) > 0 else frozenset()


def judge(ref: Trace, got: Trace, mode: str) -> Verdict:
  """Every difference between the target and the reference that the JIT does not document.

  Lazy escapes are compared only in the same-buffer mode (with fresh inputs the JIT leaves their value undefined).
  Two kinds of observable show the capture call's value on every replay, as documented: a returned pure view of an
  input (with fresh inputs), and a lazy pending assign made at capture (realized by its first read, then data). The
  capture is the one that governs the call: after `jit.reset()` the JIT captures again (`oracle.schedule`).

  A returned value the previous call left skipped or wrong, passed back as this call's argument, makes the JIT's
  inputs differ from the reference's: from that call on nothing is compared (the cause is judged where it shows)."""
  if ref.error is not None: return Verdict(rejected=rejection(ref.error))
  if got.error is not None and emulator_failure(got.error): return Verdict(rejected=rejection(got.error))
  if got.error is not None and is_rejection(got.error): return Verdict(rejected=f"jit: {error_text(got.error)}")
  verdict = Verdict()
  history: dict[str, list[tuple[int, np.ndarray]]] = {}
  off: set[str] = set()  # the previous call's observables skipped or found wrong
  for want, have in zip(ref.calls, [c for c in got.calls if c.error is None], strict=False):
    if have.fed_back & off:
      verdict.skipped[FED_BACK] += sum(len(c.values) for c in ref.calls[have.index:])
      break
    capture = got.capture_record(have.index)  # what is lazy then escapes: kept from the captured call
    frozen = frozen_at(got, have.index, mode)
    off = set()
    for path, value in want.values.items():
      f = judge_value(ref, got, have, path, value, mode, frozen, capture, history, verdict)
      if f is not None or undefined(ref, got, have, path, mode, capture) is not None: off.add(path)
      if f is not None:
        verdict.findings.append(replace(f, details=f.details | {"lazy_at_capture": path in capture.lazy} |
                                        ({"reads_variable": True} if path in capture.variable_escapes else {}) |
                                        ({"capture": capture.index} if capture.index != 1 else {})))
  if got.error is not None:
    call = len(got.calls) - 1
    verdict.findings.append(Finding(JIT_ERROR, "step", call, got.schedule.phase(call), {"error": error_text(got.error)}))
  return verdict


def undefined(ref: Trace, got: Trace, have: CallRecord, path: str, mode: str, capture: CallRecord) -> str | None:
  """Why the JIT leaves this observable undefined at this call (documented), or None when it must equal the reference.

  With fresh inputs a lazy escape is undefined from the capture call on, whether it is still lazy now or was realized
  by an earlier read (then it holds some earlier call's value); call 0 runs eagerly and is defined. A returned view
  whose view depends on a Variable has the capture call's bound value baked in: a replay with another value reads
  the wrong rows (a symbolic pad view, a reshape or getitem of a symbolic-shaped output); with the same value it is
  exact, so it is compared then. Likewise a lazy escape made at capture whose graph reads a Variable: the bound value
  is a constant in that graph and replays never run the step again, so it keeps the capture call's value (like any
  Python value frozen at capture); with the same value it is compared. The call after a reset runs eagerly: defined.
  A *returned* lazy escape over a Variable is always compared: TinyJit returns its results realized, and returns one
  lazy only where realize() cannot make it a buffer (the known tinygrad bug symbolic-mean-left-lazy)."""
  n = got.schedule.replay(have.index)
  returned_escape = role(path) == "returned" and path in capture.variable_escapes  # only a tinygrad bug returns one
  if mode == FRESH and n >= 0 and (path in have.lazy or path in capture.lazy) and not returned_escape:
    return "lazy escape with fresh inputs"
  if n > 0 and have.bound != ref.calls[capture.index].bound:
    if path in have.symbolic_views: return SYMBOLIC_VIEW
    if path in capture.variable_escapes and not returned_escape: return VARIABLE_ESCAPE
  return None


def judge_value(ref: Trace, got: Trace, have: CallRecord, path: str, value: np.ndarray, mode: str, frozen: frozenset[str],
                capture: CallRecord, history: dict[str, list[tuple[int, np.ndarray]]], verdict: Verdict) -> Finding | None:
  """One observable at one call: skipped where the JIT leaves it undefined, else compared with what it must be
  (`frozen`: the observables this replay shows as its capture left them)."""
  k, when = have.index, got.schedule.phase(have.index)
  if path not in have.values: return Finding(WRONG_VALUES, path, k, when, {"missing": "not observable in the target run"})
  if (why := undefined(ref, got, have, path, mode, capture)) is not None:
    verdict.skipped[why] += 1
    return None
  source = capture.index if path in frozen else k
  expected = ref.calls[source].values[path] if path in frozen else value
  verdict.compared += 1
  finding = compare_value(path, k, when, have.values[path], expected, history.get(path, []), path in have.lazy)
  history.setdefault(path, []).append((k, have.values[path]))
  if finding is not None: finding.details[COMPARED_WITH] = [source, *tolerance(expected.dtype)]  # the decision, for a repro
  return finding
