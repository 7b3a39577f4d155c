# planfuzz: `make test` and `make fuzz` set everything up on a fresh machine.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.planfuzz-installed
SEED ?= 0
export CACHEDB ?= $(CURDIR)/.cache/tinygrad.db

.PHONY: setup test fuzz lint clean reproduce-16571 venv-0.13 gpu-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

setup: $(STAMP)
	@scripts/ensure_clang.sh
	@mkdir -p .cache

test: setup
	PLANFUZZ_PROFILE=ci $(BIN)/pytest tests/ fuzz/ -q -p no:cacheprovider --hypothesis-seed=0 --examples 40 --durations=15

fuzz: setup
	$(BIN)/pytest fuzz/ -q -p no:cacheprovider --hypothesis-seed=$(SEED)

# tinygrad 0.13.0 (with bug #16571) in a venv of its own, planfuzz installed without its pinned dependencies
VENV13 ?= .venv-0.13
$(VENV13)/.planfuzz-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV13)
	$(VENV13)/bin/pip install -q tinygrad==0.13.0 numpy hypothesis pytest networkx
	$(VENV13)/bin/pip install -q --no-deps -e .
	touch $@

venv-0.13: $(VENV13)/.planfuzz-installed

reproduce-16571: setup venv-0.13
	$(BIN)/python scripts/reproduce_16571.py --old $(VENV13)/bin/python --new $(BIN)/python

gpu-check: setup
	DEV=$${DEV:-CUDA} scripts/gpu_check.sh

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) $(VENV13) .cache fuzz-failures
