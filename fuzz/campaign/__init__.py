"""The campaign engine: runs generated programs through a target next to the oracle, in worker processes, and
reports distinct, shrunk, confirmed bugs."""
