"""Symbolic results: reductions over the first `n` rows of a value, `n` a Variable bound anew on every call (the
step's last positional argument), and KV-cache writes at row n-1 of a state tensor.

Four forms, simplest first: `cache[:n].sum(0)` (or mean) realized inside the step; the same left lazy, so it may be
returned or kept outside the step; through a Variable-shaped buffer of its own (`(cache[:n] * 2).contiguous()`, which
tinygrad sizes at the Variable's maximum); and a KV-cache update `s[n-1:n].assign(row)` of a new (8, k) state, read
back as `s[:n].sum(0)`. The cache is `a` when it has 8 rows, else a new (8, 4) or (8, 32) input (a Variable-shaped
buffer of 32 columns outgrows the arena's 256-byte block from n=3 on).

Rules kept (shared/TINYGRAD_JIT_FACTS.md): no symbolic *view* is returned (documented to freeze at capture): every
form reduces to a fixed shape; not drawn when pruned (prune freezes a bound Variable); a lazy escape over `n` shows the
capture call's `n` on replays (the bound value is a constant in its graph), which the oracle models
(`oracle.compare.undefined`); the KV row is detached and the cache read stays out of the loss (backward cannot pass a
slice assign). Rule that avoids a tinygrad bug (`avoids`: fuzz.known.avoided.AVOIDED_BUGS, a strict xfail): a value with a
lazy pad in its graph is not the cache (a new input is): the first n rows of a padded 3-d one fail to schedule, and
the program does not carry shapes to tell the 2-d ones, which work, apart (symbolic-slice-of-padded).
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from fuzz.gen.builder import F32, RESHAPES, Builder, Value
from fuzz.gen.features.feature import Feature
from fuzz.gen.ops import OpSpec

FORMS = ("symbolic", "symbolic_lazy", "symbolic_buffer", "kv")
CACHES = ((8, 4), (8, 32))


def draw_symbolic(b: Builder, a: Value) -> Value:
  form = b.draw(st.sampled_from(FORMS))
  if form == "kv": return draw_kv(b, a)
  fits = len(a.shape) >= 2 and a.shape[0] == 8 and (form != "symbolic" or b.can_realize(a)) and "pad" not in b.lazy_kinds(a)
  cache = a if fits and b.draw(st.booleans()) else b.leaf("x", b.draw(st.sampled_from(CACHES)), pool=False)
  out = b.emit(form, (cache.name, b.draw(st.sampled_from(("sum", "mean"))), "n"), cache.shape[1:], cache.dtype, [cache],
               pooled=cache.shape[1:] in RESHAPES.get(math.prod(cache.shape[1:]), []))
  if form == "symbolic_lazy" and b.draw(st.booleans()): b.keep.append(out.name)  # an escape whose graph holds n
  return out


def draw_kv(b: Builder, a: Value) -> Value:
  """Write `a` (flattened) into row n-1 of a new state, then read the first n rows back."""
  cache = b.leaf("s", (8, math.prod(a.shape)), F32, pool=False)
  b.emit("kv_write", (cache.name, a.name, "n"), (1, math.prod(a.shape)), F32, [cache, a], pooled=False)  # the state is observed
  read = b.emit("kv_read", (cache.name, "n"), cache.shape[1:], F32, [cache], pooled=False)
  if b.draw(st.booleans()): b.keep.append(read.name)
  return a


def _reads(fmt: str, cuts: bool = False) -> OpSpec: return OpSpec(1, lambda v, c: fmt.format(*v, *c), cuts, variable=True)


OPS = {
  # a reduction over the first n rows, n a bound Variable (a step argument): realized, left lazy (it may escape), or
  # through a Variable-shaped buffer of its own (sized at the Variable's maximum)
  "symbolic": _reads("{0}[:{2}].{1}(0).contiguous().realize()", cuts=True),
  "symbolic_lazy": _reads("{0}[:{2}].{1}(0)"),
  "symbolic_buffer": _reads("({0}[:{2}] * 2).contiguous().{1}(0)"),
  # a KV-cache write: row `{1}` into row n-1 of the state `{0}`, realized (backward never passes an assign); a write
  # of state, so never in an eval step
  "kv_write": OpSpec(2, lambda v, c: f"{v[0]}[{c[0]} - 1:{c[0]}].assign({v[1]}.detach().float().reshape(1, -1)).realize()", cuts=True,
                     in_eval=False, variable=True),
  "kv_read": _reads("{0}[:{1}].sum(0)"),
}
# no `planned`: tinygrad gives a Variable-shaped BUFFER its maximum size, so a plan cannot tell it from any other
FEATURE = Feature("symbolic", lambda p: any(op.kind in OPS for op in p.body), draw=draw_symbolic, applies=lambda b, a: not b.pruned,
                  ops=OPS, avoids=("symbolic-slice-of-padded",))
