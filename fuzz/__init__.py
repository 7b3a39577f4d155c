"""planfuzz's fuzzer: Hypothesis programs with backward passes and lazy references, run next to the oracle."""
