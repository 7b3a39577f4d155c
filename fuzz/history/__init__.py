"""Which tinygrad brought a bug: a repro run at commits of a tinygrad checkout (`planfuzz bisect`) and at the releases
planfuzz has at hand (every new bug's release line in a report)."""
