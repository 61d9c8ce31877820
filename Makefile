# The two commands a new user needs: `make repro` and `make test`. They install this
# checkout as the distribution flightdeck-evals (import and command: flightdeck).
# `make repro` installs the runtime set only; `make test` and `make check` add the dev extra
# (test oracles, browser driver, the pinned ruff and mypy) on top, each behind its own stamp.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
export DVC_NO_ANALYTICS := 1
export DVC_SITE_CACHE_DIR := $(CURDIR)/.dvc-site-cache
# test-fast runs on JOBS cores (pytest-xdist; `make test-fast JOBS=0` runs it in this
# process); the full `make test` (CI's) on TEST_JOBS, one process unless asked for more.
JOBS ?= 2
TEST_JOBS ?= 0
# Bytecode is kept between runs: with PYTHONDONTWRITEBYTECODE set, every run (and every CLI
# subprocess a test starts) would compile the checkout's modules and rewrite the tests anew.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

.PHONY: install install-dev repro test test-fast check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# the distribution is flightdeck-evals (#21): an editable install made under the old name
	# left src/flightdeck.egg-info, which importlib.metadata would still list as `flightdeck`
	rm -rf src/flightdeck.egg-info
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,llm]'
	touch $(DEV_STAMP)

install: $(STAMP)

install-dev: $(DEV_STAMP)

repro: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/flightdeck knowledge show

test: $(DEV_STAMP)
	sh scripts/install-sandbox.sh
	sh scripts/install-browser.sh
	$(PYTEST) -n $(TEST_JOBS)

# What a maintainer runs between edits: no browser, no LLM arm, no pipeline, no long property
# test (the markers in tests/conftest.py); `make test` runs them all, and CI runs `make test`.
test-fast: $(DEV_STAMP)
	$(PYTEST) -n $(JOBS) -m "not browser and not llm and not slow" -q

check: $(DEV_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .dvc-site-cache
