"""Every feature of the generator, in one registry that both the generator and the census read.

Adding a feature is adding one module: its strategy (a compound draw on a pool value), its census entry (`has`,
`planned`) and the documented rules it respects, then one line here. Compound draws are listed simplest first:
Hypothesis shrinks a sampled draw towards the front.
"""
from __future__ import annotations

from fuzz.gen.features import chain, conv, deep, dtypes, realize, second_device, shard, sizes, state_read, steps, symbolic
from fuzz.gen.features.feature import Feature
from fuzz.gen.features.step import STEP_FEATURES

COMPOUND: tuple[Feature, ...] = (*(m.FEATURE for m in (second_device, realize, chain, conv, symbolic, state_read, dtypes)),
                                  sizes.TINY_FEATURE, sizes.BIG_FEATURE, deep.FEATURE, shard.FEATURE)
FEATURES: tuple[Feature, ...] = COMPOUND + STEP_FEATURES + (steps.FEATURE, steps.RESET_FEATURE, steps.METHOD_FEATURE,
                                                                 steps.INPUT_ASSIGN_FEATURE)

__all__ = ["COMPOUND", "FEATURES", "Feature"]
