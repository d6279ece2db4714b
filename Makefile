# One place for the commands README.md gives. Everything installs into ./.venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test check install install-test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==26.3

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

## install-test: the server with its test tools, and the SDK (./sdk, its own distribution) beside it
install-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]' -e ./sdk

## run: install and serve on http://127.0.0.1:8000 (SQLite under ./var/, sandbox partner built in)
run: install
	$(BIN)/transfers serve

## check: lint and types
check: install-test
	$(BIN)/ruff check src sdk tests bench
	$(BIN)/mypy

## test: lint, types, then the whole suite (TRANSFERS_TEST_DATABASE_URL=postgresql://... for PostgreSQL)
test: check
	$(BIN)/pytest

bench: install-test
	bash bench/run.sh

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
