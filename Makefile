# planfuzz: `make test` and `make fuzz` set everything up on a fresh machine.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.planfuzz-installed
SEED ?= 0
export CACHEDB ?= $(CURDIR)/.cache/tinygrad.db

.PHONY: setup test fuzz fuzz-gpu lint clean reproduce-16571 old-tinygrad gpu-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

setup: $(STAMP)
	@scripts/ensure_clang.sh
	@mkdir -p .cache

# the emulated-GPU tests (tests/test_emulated.py, tests/test_graph_mutants.py) need libllvm19 and tinygrad's mock files:
# without them they are skipped, and -rs prints why
# the project's tests run on the CPU whatever DEV says (a GPU runner's, say): the emulated-GPU checks in them start
# their own processes with DEV=MOCKKFD+AMD, and `make fuzz-gpu` / `pytest fuzz/` fuzz the device DEV names
test: setup
	@scripts/ensure_mockgpu.sh >/dev/null || echo "planfuzz: the emulated-GPU tests will be skipped"
	@[ -z "$${DEV:-}" ] || echo "planfuzz: make test runs its tests on the CPU (DEV=$$DEV is for make fuzz-gpu and pytest fuzz/)"
	env -u DEV PLANFUZZ_PROFILE=ci $(BIN)/pytest tests/ fuzz/ -q -rs -p no:cacheprovider -n 2 --hypothesis-seed=0 --examples 40 --durations=15

# both replay engines: the plain one, then HCQ2 (a process's setting, so a session of its own; fewer examples, as an
# HCQ2 example costs about three plain ones)
HCQ2_EXAMPLES ?= 10
fuzz: setup
	$(BIN)/pytest fuzz/ -q -p no:cacheprovider --hypothesis-seed=$(SEED)
	HCQ2=1 $(BIN)/pytest fuzz/test_fuzz.py -q -p no:cacheprovider --hypothesis-seed=$(SEED) --examples $(HCQ2_EXAMPLES)

# the default campaign on tinygrad's emulated AMD GPU, where captures are graphed and replayed by HCQGraph (the CPU
# device has no graph): libllvm19 and tinygrad's mock files found by scripts/ensure_mockgpu.sh
# (GPU_DB: an example database and, when redis, the fleet's bug book; GPU_ARGS: more `planfuzz run` options)
GPU_TARGET ?= tinyjit
GPU_EXAMPLES ?= 120
GPU_DB ?= none
GPU_ARGS ?=
GPU_ENGINE ?= plain
fuzz-gpu: setup
	@mock="$$(scripts/ensure_mockgpu.sh)" && PYTHONPATH="$$mock$${PYTHONPATH:+:$$PYTHONPATH}" DEV=$${DEV:-MOCKKFD+AMD} $(BIN)/planfuzz run \
	  --target $(GPU_TARGET) --examples $(GPU_EXAMPLES) --seed $(SEED) --workers 2 --engine $(GPU_ENGINE) --db $(GPU_DB) \
	  --repro-dir fuzz-failures/emulated-gpu-$(GPU_ENGINE) $(GPU_ARGS)

# older tinygrads (0.12.0, 0.13.0 with bug #16571) as plain folders: on PYTHONPATH they shadow 0.14.0 for the
# tinyjit target, which needs only tinygrad's public API; tinygrad has no required dependencies
OLD_TINYGRAD := .cache/tinygrad-0.12.0 .cache/tinygrad-0.13.0
.cache/tinygrad-%/.installed: | $(STAMP)
	$(BIN)/pip install -q --no-deps --target .cache/tinygrad-$* tinygrad==$*
	touch $@

old-tinygrad: $(OLD_TINYGRAD:%=%/.installed)

reproduce-16571: setup old-tinygrad
	$(BIN)/python scripts/reproduce_16571.py --old .cache/tinygrad-0.13.0

gpu-check: setup
	DEV=$${DEV:-CUDA} scripts/gpu_check.sh

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .cache fuzz-failures
