# The two commands a new user needs: `make repro` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DVC_NO_ANALYTICS := 1
export DVC_SITE_CACHE_DIR := $(CURDIR)/.dvc-site-cache

.PHONY: install repro test check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,llm]'
	touch $(STAMP)

install: $(STAMP)

repro: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dvc repro
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/flightdeck knowledge show

test: $(STAMP)
	sh scripts/install-sandbox.sh
	sh scripts/install-browser.sh
	$(BIN)/python -m pytest

check: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .dvc-site-cache
