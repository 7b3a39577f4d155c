"""Every feature of the generator, in one registry that the generator, the op table and the census read.

Adding a feature is adding one module (its draw, its ops, the bugs its rules avoid, its census entry: see
`fuzz.gen.features.feature`), then registering it here: the module imported, its FEATURE listed. Compound draws are
listed simplest first: Hypothesis shrinks a sampled draw towards the front. Importing the registry puts every
feature's ops into `fuzz.gen.ops.OPS`, so the op table is whole wherever a program is drawn (`fuzz.gen.strategies`)
or rendered (`fuzz.gen.render`), the two that import it.
"""
from __future__ import annotations

from fuzz.gen.features import chain, conv, deep, dtypes, kv_cache, loop, realize, second_device, shard, sizes, state_read, step, symbolic
from fuzz.gen.features.feature import Feature
from fuzz.gen.ops import OPS, register

COMPOUND: tuple[Feature, ...] = (*(m.FEATURE for m in (second_device, realize, chain, conv, symbolic, state_read, dtypes)),
                                  sizes.TINY_FEATURE, sizes.BIG_FEATURE, deep.FEATURE, shard.FEATURE, kv_cache.FEATURE)
FEATURES: tuple[Feature, ...] = COMPOUND + step.FEATURES + (loop.FEATURE, loop.RESET_FEATURE, loop.METHOD_FEATURE,
                                                             loop.INPUT_ASSIGN_FEATURE)
for _feature in FEATURES: register(_feature.ops)

__all__ = ["COMPOUND", "FEATURES", "OPS", "Feature"]
