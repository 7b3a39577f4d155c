# planfuzz: `make test` and `make fuzz` set everything up on a fresh machine.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.planfuzz-installed
SEED ?= 0
export CACHEDB ?= $(CURDIR)/.cache/tinygrad.db

.PHONY: setup test fuzz lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

setup: $(STAMP)
	@scripts/ensure_clang.sh
	@mkdir -p .cache

test: setup
	$(BIN)/pytest tests/ -q -p no:cacheprovider

fuzz: setup
	$(BIN)/pytest fuzz/ -q -p no:cacheprovider --hypothesis-seed=$(SEED)

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .cache fuzz-failures
