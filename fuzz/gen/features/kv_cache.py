"""A KV cache written the way a decoder writes one: `cache[:, n:n + 2].assign(new)` into a persistent buffer, at a
window that moves every call, read back in the same step and, through the buffer, in the next call.

The cache is a new (2, 10, d) state tensor (batch, positions, features), so it persists across calls and is observed
after each; its start `n` is the step's bound Variable (`fuzz.gen.program.Bound`, 1 to 8 and different on every call:
a step argument, as a decoder's `start_pos`), so the window's offset is symbolic and the capture's kernel writes wherever
the call's `n` says. The window's content is `a` when it has 2 * 2 * d elements (d in DIMS), else a new (2, 2, d)
input. The read-back goes through a Variable-shaped buffer, `(cache[:, :n + 2] * 2).contiguous().sum(1)`, (2, n + 2, d)
sized at the Variable's maximum as tinygrad sizes one: it sees this call's window and every earlier call's; it is
mostly realized inside the step (then drawn on further), else left lazy for the step to return or keep.

Rules kept (shared/TINYGRAD_JIT_FACTS.md): the window is written from a detached value and the read-back is realized
before anything draws on it, so backward() never passes the slice assign ("failed to compute gradient for AFTER"); the
read reduces over the symbolic axis, so no symbolic view is returned (views of symbolic outputs freeze at capture);
not drawn when pruned (prune freezes a bound Variable); the write is state, so no eval step runs it (`in_eval`).
The planner mutant `window-write-unheld` (planner/mutants.py) is wrong on these programs only (tests/test_kv_cache_mutant.py).
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from fuzz.gen.builder import F32, Builder, Value
from fuzz.gen.features.feature import Feature, Row
from fuzz.gen.ops import OpSpec
from fuzz.gen.program import Bound

BATCH, WINDOW = 2, 2  # two positions a call: a window wider than one position, written at a Variable offset
POSITIONS = Bound().max + WINDOW  # every window [n, n + WINDOW) with n up to the Variable's maximum fits
DIMS = (2, 4, 8, 16)
VARIABLE = Bound().name
# the read-back's Variable-shaped buffer, sized at the Variable's maximum: 80 * d bytes (the 10 positions give a factor
# of 5), a size no other feature's planned buffers take (palette shapes are powers of two; none in the plans of 300
# seeded programs drawn without this feature)
READ_BYTES = frozenset(BATCH * POSITIONS * d * 4 for d in DIMS)


def draw_kv_cache(b: Builder, a: Value) -> Value:
  """Write the window, read the cache back; the realized read-back is the value drawn on further, else `a`."""
  fits = [d for d in DIMS if BATCH * WINDOW * d == math.prod(a.shape)]
  d = fits[0] if fits else b.draw(st.sampled_from(DIMS))
  new = a if fits else b.leaf("x", (BATCH, WINDOW, d), F32, pool=False)
  cache = b.leaf("s", (BATCH, POSITIONS, d), F32, pool=False)
  b.emit("kv_cache_write", (cache.name, new.name, VARIABLE, WINDOW, (BATCH, WINDOW, d)), (BATCH, WINDOW, d), F32, [cache, new],
         pooled=False)  # the state is observed
  read = b.emit("kv_cache_read", (cache.name, VARIABLE, WINDOW), (BATCH, d), F32, [cache], pooled=False)
  if b.draw(st.integers(0, 2)) == 2: return a  # left lazy: returned or kept, or dead code beside the observed cache
  return b.emit("realize", (read.name,), read.shape, F32, [read], pooled=True)


def _read_planned(rows: tuple[Row, ...]) -> bool: return any(r.nbytes in READ_BYTES for r in rows)


OPS = {
  # the window write, realized (backward never passes an assign); a write of state, so never in an eval step
  "kv_cache_write": OpSpec(2, lambda v, c: f"{v[0]}[:, {c[0]}:{c[0]} + {c[1]}].assign({v[1]}.detach().float().reshape({c[2]})).realize()",
                           cuts=True, in_eval=False, variable=True),
  # every position written so far, this call's window included, through a Variable-shaped buffer
  "kv_cache_read": OpSpec(1, lambda v, c: f"({v[0]}[:, :{c[0]} + {c[1]}] * 2).contiguous().sum(1)", variable=True),
}
FEATURE = Feature("kv cache", None, _read_planned, "planned the cache's Variable-shaped read-back", draw_kv_cache,
                  applies=lambda b, a: not b.pruned, ops=OPS)
