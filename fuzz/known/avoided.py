"""tinygrad bugs that make a valid program fail loudly, in eager as in the JIT: the generator avoids them.

Such a program is a rejection, not a finding, so the generator keeps a rule that avoids it. Each bug has a
standalone repro beside it, a strict xfail in fuzz/test_known_bugs.py, and the history of the releases that have it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzz.known.bugs import CPU_ONLY, KNOWN_DIR


@dataclass(frozen=True)
class AvoidedBug:
  """A tinygrad bug that makes a valid program fail loudly, in eager as in the JIT: such a program is a rejection, not
  a finding, so the generator keeps a rule that avoids it. The rule is stated once, in the feature module that keeps
  it, which names the bug in its `avoids` (`fuzz.gen.features.feature.Feature`; the step's own rules in
  `fuzz.gen.strategies.AVOIDS`); until one is written, such programs stay rejections. The repro's strict xfail turns
  CI red the day tinygrad fixes it, and the rule can go."""
  name: str
  mechanism: str
  repro: Path
  devices: tuple[str, ...] = ()  # the device kinds it is known on; () any
  history: str = ""  # the releases at hand that reproduce it (planfuzz releases) and where a bisect puts it (planfuzz bisect)


AVOIDED_BUGS: tuple[AvoidedBug, ...] = (
  AvoidedBug("shard-split-grad-unbound-variable",
             "the backward of `t.shard(devices, axis=k)` gathers the parts with a kernel indexed by the device number, a "
             "Variable nothing binds: realizing t.grad raises \"unbound Variable '_device_num'\"",
             KNOWN_DIR / "shard_split_grad_unbound_variable.py",
           history="0.14.0 (0.13.0 raises another assert first, 0.12.0 cannot run the repro)"),
  AvoidedBug("multi-grad-from-other-device",
             "a multi-device tensor's grad that arrives through a copy from another device is copied into its shards by a "
             "kernel tinygrad's verifier rejects (\"UOp verification failed ... Ops.RANGE\")",
             KNOWN_DIR / "multi_grad_from_other_device.py",
           history="0.14.0 (not 0.13.0; 0.12.0 cannot run the repro); brought in the ~220 commits from bf5989ea48 "
                   "(2026-07-23, does not reproduce) to d4d537c8ae (#17432, 2026-08-08, reproduces), where every commit "
                   "tried raises 'END src[0] should be KERNEL, not Ops.STORE' (from #17172 on): no closer (bisected)"),
  AvoidedBug("multi-grad-expanded",
             "a multi-device tensor's grad that is a broadcast buffer (the other factor of a product) is copied into its "
             "shards without being made contiguous (\"UOp verification failed ... Ops.EXPAND\")",
             KNOWN_DIR / "multi_grad_expanded.py", devices=CPU_ONLY,
           history="0.14.0 (0.13.0 raises another assert first, 0.12.0 cannot run the repro)"),
  AvoidedBug("shard-of-copied-kernel",
             "sharding a lazy copy of a kernel made on another device (`x.to(SECOND).relu().to(DEFAULT).shard(...)`) and "
             "computing on it fails UOp verification (\"Ops.RANGE\") in the forward pass",
             KNOWN_DIR / "shard_of_copied_kernel.py",
           history="0.14.0 (not 0.12.0, 0.13.0)"),
  AvoidedBug("replicated-unshard-beside-source-reader",
             "a buffer's replicated shard brought back (`(x.shard(devices) * 2).to(DEFAULT)`), realized in one "
             "`Tensor.realize` with another kernel that reads `x`, fails UOp verification (\"Ops.RANGE\"); TinyJit "
             "realizes a step's returned tensors together",
             KNOWN_DIR / "replicated_unshard_beside_source_reader.py", devices=CPU_ONLY,
           history="0.14.0 (not 0.12.0, 0.13.0)"),
  AvoidedBug("replicated-shard-of-lazy-expand",
             "a replicated sharding of a lazy op over an expanded buffer, computed on "
             "(`(x.expand(...) * 2.0).shard(devices, axis=None) * 1.0`), fails UOp verification (\"Ops.EXPAND\")",
             KNOWN_DIR / "replicated_shard_of_lazy_expand.py", devices=CPU_ONLY,
           history="0.12.0, 0.13.0 and 0.14.0: older than 0.12.0"),
  AvoidedBug("symbolic-slice-of-padded",
             "the first n rows (n a bound Variable) of a lazily padded tensor of 3+ dims fail to schedule: "
             "`x.pad(((3, 1), (0, 0), (0, 0)))[:n].sum(0)` raises \"val is only for CONST, got Ops.PARAM\" (2-d, or "
             "made contiguous after the pad, it works)",
             KNOWN_DIR / "symbolic_slice_of_padded.py",
           history="0.14.0 (not 0.12.0; 0.13.0 raises a TypeError first)"),
  AvoidedBug("hcq2-misaligned-view-kernel-segfault",
             "with HCQ2=1 on the CPU, a kernel given a buffer view whose byte offset is not a multiple of 16 "
             "(`a[1:5].contiguous() * 2`) kills the process with SIGSEGV, eagerly as in the JIT",
             KNOWN_DIR / "hcq2_misaligned_view_kernel_segfault.py", devices=CPU_ONLY,
           history="0.13.0 and 0.14.0 (not 0.12.0; 0.13.0 crashes with HCQ2=1 meaning nothing there)"),
  AvoidedBug("half-neg-unit-grad-vector-cast",
             "on the CPU, the grad of a subtracted (or negated) float16 tensor of 4+ elements under a loss of scale 1 is "
             "the constant -1, which the clang renderer writes as a float4 -> __fp16 vector conversion clang rejects: "
             "realizing the grad raises CalledProcessError",
             KNOWN_DIR / "half_neg_unit_grad_vector_cast.py", devices=CPU_ONLY,
           history="0.14.0 (not 0.13.0; 0.12.0 cannot run the repro); brought by ce500c1946 'broadcast doesn't cast "
                   "CONST [pr] (#17308)', 2026-07-30 (bisect v0.13.0..a9069c177a: 12 runs, 294 s)"),
)
