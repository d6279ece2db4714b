# One place for the commands README.md gives. Everything installs into ./.venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: help run test test-suite test-fast check docs docs-serve install install-docs install-test chromium bench soak catalogs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==26.3

## help: the targets, from the `## target:` comments of this Makefile
help:
	@awk '/^## [a-z-]+: / { sub(/^## /, ""); n = index($$0, ": "); printf "  %-13s %s\n", substr($$0, 1, n - 1), substr($$0, n + 2) }' $(firstword $(MAKEFILE_LIST))

## install: the server alone into ./.venv (what `make run` needs)
install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

## install-test: the server with its test tools, and the SDK (./sdk, its own distribution) beside it.
## The stamp file makes a second `make test` (and CI's two parallel runs) skip an install already done.
install-test: $(VENV)/.installed-test chromium

$(VENV)/.installed-test: $(BIN)/python pyproject.toml sdk/pyproject.toml
	$(BIN)/pip install --quiet -e '.[test]' -e ./sdk
	touch $@

## install-docs: the server and the documentation tools only (what `make docs` needs: no test tools, no browser)
install-docs: $(VENV)/.installed-docs

$(VENV)/.installed-docs: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $@

## chromium: the browser the console and portal tests drive, from Debian's packages when it is missing
## (Playwright's own download cannot be used here); needs root or sudo on a fresh machine.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

## run: install and serve on http://127.0.0.1:8000 (SQLite under ./var/, sandbox partner built in)
run: install
	$(BIN)/transfers serve

## check: format, lint, types, the import rules and the docs site (`.venv/bin/ruff format src sdk tests bench` fixes the first)
check: install-test
	$(BIN)/ruff format --check src sdk tests bench
	$(BIN)/ruff check src sdk tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(MAKE) --no-print-directory docs

## docs: the documentation site (docs/, mkdocs.yml) into ./site; --strict: a broken link or include fails
docs: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

## docs-serve: the site on http://127.0.0.1:8001, rebuilt on every change (search works there; opened
## from site/ as files, a browser blocks the search index). DOCS_ADDR=0.0.0.0:8001 to change it.
DOCS_ADDR ?= 127.0.0.1:8001
docs-serve: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict --dev-addr $(DOCS_ADDR)

## test: lint, types, then the whole suite (TRANSFERS_TEST_DATABASE_URL=postgresql://... for PostgreSQL)
test: check test-suite

## test-suite: the whole suite alone, without the checks (.ci/run runs it on PostgreSQL beside `make test` on SQLite)
test-suite: install-test
	$(BIN)/pytest $(PYTEST_ARGS)

## test-fast: the inner loop: the pure tests only, in seconds (PYTEST_ARGS=-x or -k ... passes through)
## (tests/unit not marked `process`: no database, server, browser or child process; tests/unit/conftest.py
## enforces it). Hypothesis' pytest plugin is not needed there and costs seconds to import.
test-fast: install-test
	$(BIN)/pytest tests/unit -m "not process" -q -p no:hypothesispytest $(PYTEST_ARGS)

## bench: every benchmark, one table and figures (bench/README.md; docs/operations/performance.md reads them)
bench: install-test
	bash bench/run.sh

## soak: a day of traffic under faults on PostgreSQL, then every invariant checked (10 min; SOAK_ARGS="--minutes 2 --rate 6")
## (docs/operations/reliability.md; needs a local PostgreSQL server, PGHOST/PGPORT/PGUSER, and redis-server)
soak: install-test
	$(BIN)/python -m bench.soak $(SOAK_ARGS)

## catalogs: extract the traveller's texts (babel.cfg) into src/transfers/i18n/messages.pot and merge them into each
## language's messages.po (new strings arrive empty: English until translated; docs/rules/messages.md#languages)
catalogs: install-test
	$(BIN)/pybabel extract -F babel.cfg -k N_ -k words -k in_context:1c,2 --no-location --sort-output -w 100 --project=transfers -o src/transfers/i18n/messages.pot .
	$(BIN)/pybabel update -i src/transfers/i18n/messages.pot -d src/transfers/i18n/locale -w 100 --ignore-obsolete --no-fuzzy-matching

## clean: remove the venv, the SQLite data under ./var, the built site and the tool caches
clean:
	rm -rf $(VENV) var site .pytest_cache .mypy_cache .ruff_cache
