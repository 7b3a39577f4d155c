"""The generator: programs (a training step in a small IR), their features and strategies, and how they render and run."""
