"""Known tinygrad bugs: the table a finding is matched against (bugs.py) and each bug's standalone repro."""
