# make run          : set up .venv and reproduce the paper case library (every expectation, claim, erratum)
# make test         : set up .venv, then ruff (lint, format), mypy and the whole test suite (CI runs exactly this)
# make test-latest  : the suite in a fresh .venv-latest with the newest release of every dependency
# make constraints  : rewrite constraints.txt from a fresh venv with the newest releases
#
# .venv installs the exact versions of constraints.txt (every package, the build backend too), so a
# fresh machine tests what CI tested; test-latest then constraints is how to move to newer versions.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIN    := -c constraints.txt --build-constraint constraints.txt

.PHONY: run test test-latest constraints bench chromium clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade -c constraints.txt pip
	$(BIN)/python -m pip install --quiet $(PIN) -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/fairalloc reproduce

# lint, format and types first: they take seconds and name the line; then the whole suite
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -n 2 -q

# A fresh venv, no constraints: the newest releases of pip, the build backend and every dependency.
define fresh_latest_venv
	rm -rf $(1)
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip setuptools
	$(1)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[dev]'
endef

test-latest:
	$(call fresh_latest_venv,.venv-latest)
	.venv-latest/bin/python -m pip list --format freeze --exclude-editable
	.venv-latest/bin/ruff check .
	.venv-latest/bin/python -m mypy
	.venv-latest/bin/python -m pytest -n 2 -q

constraints:
	$(call fresh_latest_venv,.venv-constraints)
	{ echo "# Exact versions for 'make test' (pip freeze --all of a fresh venv after pip install -e '.[dev]')."; \
	  echo "# Written by 'make constraints' with $$(.venv-constraints/bin/python -V) on $$(uname -sm); do not edit."; \
	  .venv-constraints/bin/python -m pip freeze --all --exclude-editable; } > constraints.txt.part
	mv constraints.txt.part constraints.txt
	rm -rf .venv-constraints

bench: $(STAMP) chromium
	$(BIN)/python benchmarks/bench_static.py --json benchmarks/results_full.json
	$(BIN)/python benchmarks/bench_verifier.py --json benchmarks/results_verifier.json
	$(BIN)/python benchmarks/bench_sweep.py --json benchmarks/results_sweep.json
	$(BIN)/python benchmarks/bench_explorer.py --json benchmarks/results_explorer.json
	$(BIN)/python benchmarks/bench_explorer_http.py --json benchmarks/results_explorer_http.json
	$(BIN)/python benchmarks/bench_dynamic.py --json benchmarks/results_dynamic.json
	$(BIN)/python benchmarks/bench_simulator.py --full --json benchmarks/results_simulator.json
	$(BIN)/python benchmarks/bench_replay.py --kueue-jobs 1000 10000 --json benchmarks/results_replay.json
	$(BIN)/python benchmarks/bench_import_records.py --json benchmarks/results_import_records.json
	$(BIN)/python benchmarks/bench_startup.py --json benchmarks/results_startup.json
	$(BIN)/python benchmarks/bench_memory.py --json benchmarks/results_memory.json
	$(BIN)/python benchmarks/bench_queues.py --json benchmarks/results_queues.json
	$(BIN)/python benchmarks/bench_table2.py --json benchmarks/results_table2.json
	$(BIN)/python benchmarks/bench_scheduling.py --json benchmarks/results_scheduling.json
	$(BIN)/python benchmarks/bench_hdrf.py --json benchmarks/results_hdrf.json
	$(BIN)/python benchmarks/bench_alpha.py --json benchmarks/results_alpha.json
	$(BIN)/python benchmarks/table.py

# bench_explorer.py drives Debian's chromium: as root, install it when missing (as the browser test does)
chromium:
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || { apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; }
	@command -v chromium >/dev/null || { echo "make bench: chromium is missing (as root: apt-get install chromium)" >&2; exit 2; }

clean:
	rm -rf $(VENV) .venv-latest .venv-constraints build *.egg-info .pytest_cache .hypothesis
