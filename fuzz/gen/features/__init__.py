"""Every feature of the generator, in one registry that the generator, the op table and the census read.

Adding a feature is adding one module (its draw, its ops, the bugs its rules avoid, its census entry: see
`fuzz.gen.features.feature`) that declares its FEATURE (or FEATURES, where it holds several), then one line here: its
name in MODULES. Compound draws are drawn in that order, simplest first: Hypothesis shrinks a sampled draw towards
the front. Importing the registry puts every feature's ops into `fuzz.gen.ops.OPS`, so the op table is whole wherever
a program is drawn (`fuzz.gen.strategies`) or rendered (`fuzz.gen.render`), the two that import it.
"""
from __future__ import annotations

from importlib import import_module
from types import ModuleType

from fuzz.gen.features.feature import Feature
from fuzz.gen.ops import OPS, register

MODULES = (
  "second_device",
  "realize",
  "chain",
  "conv",
  "symbolic",
  "state_read",
  "dtypes",
  "sizes",
  "deep",
  "shard",
  "kv_cache",
  "step",
  "loop",
)


def declared(module: ModuleType) -> tuple[Feature, ...]: return getattr(module, "FEATURES", None) or (module.FEATURE,)


FEATURES: tuple[Feature, ...] = tuple(f for name in MODULES for f in declared(import_module(f"{__name__}.{name}")))
COMPOUND: tuple[Feature, ...] = tuple(f for f in FEATURES if f.draw is not None)
for _feature in FEATURES: register(_feature.ops)

__all__ = ["COMPOUND", "FEATURES", "OPS", "Feature"]
