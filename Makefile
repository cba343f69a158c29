# make run : set up .venv and reproduce the paper case library (every expectation, claim, erratum)
# make test: set up .venv and run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/fairalloc reproduce

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_static.py --json benchmarks/results_full.json
	$(BIN)/python benchmarks/bench_verifier.py --json benchmarks/results_verifier.json
	$(BIN)/python benchmarks/bench_sweep.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
