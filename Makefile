# The whole set-up is two commands: `make run` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export FLASK_APP := app.py

.PHONY: run test install bench mutate chromium clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[test]"
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed

HOST ?= 127.0.0.1
PORT ?= 5000

## run: venv, install, migrate, demo data when the database is empty, serve on $(HOST):$(PORT)
## (defaults 127.0.0.1:5000; `make run PORT=5057` to choose another port)
run: $(VENV)/.installed
	$(BIN)/flask db upgrade
	$(BIN)/flask demo bootstrap --url http://$(HOST):$(PORT)
	$(BIN)/flask run --host $(HOST) --port $(PORT)

## chromium: Debian's chromium + chromium-driver (and CJK / emoji fonts) for the browser tests, when missing
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "Installing Debian's chromium and chromium-driver for the browser tests ..."; \
	  SUDO=""; if [ "$$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi; \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null ) \
	    || echo "notice: could not install chromium; browser tests will be skipped (they fail under CI=true)"; \
	fi
	@# CJK and emoji fonts, so screenshots show Chinese text and emoji instead of boxes.
	@if ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then \
	  SUDO=""; if [ "$$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi; \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq fonts-noto-cjk fonts-noto-color-emoji >/dev/null ) \
	    || echo "notice: could not install the CJK / emoji fonts (screenshots only)"; \
	fi

## test: venv, install with test extras, the lint gate (ruff check), every test on SQLite, then again on PostgreSQL
test: $(VENV)/.installed-test chromium
	$(BIN)/ruff check .
	$(BIN)/pytest -p no:cacheprovider -n 2
	@if [ -z "$$REVIEWAPP_TEST_POSTGRES_URL" ]; then \
	  if [ "$$CI" = "true" ]; then echo "CI=true but REVIEWAPP_TEST_POSTGRES_URL is not set: the PostgreSQL leg is required"; exit 1; fi; \
	  echo "notice: PostgreSQL leg skipped (set REVIEWAPP_TEST_POSTGRES_URL=postgresql://user@host:5432/db to run it)"; \
	else \
	  $(BIN)/python -c "import sys, psycopg; psycopg.connect(sys.argv[1].replace('postgresql+psycopg://', 'postgresql://'), connect_timeout=5).close()" "$$REVIEWAPP_TEST_POSTGRES_URL" \
	    || { echo "PostgreSQL at $$REVIEWAPP_TEST_POSTGRES_URL cannot be reached"; exit 1; }; \
	  echo "=== PostgreSQL leg: $$REVIEWAPP_TEST_POSTGRES_URL ==="; \
	  REVIEWAPP_TEST_DB_URL="$$REVIEWAPP_TEST_POSTGRES_URL" $(BIN)/pytest -p no:cacheprovider -n 2; \
	fi

## bench: the benchmarks under benchmarks/ (not part of CI)
bench: $(VENV)/.installed-test
	@for b in benchmarks/[!_]*.py; do echo "=== $$b"; $(BIN)/python $$b || exit 1; done

## mutate: mutation testing of the pure rules (tools/mutate.py; not part of CI). One module: make mutate MODULES=gatekeeper
MODULES ?=
mutate: $(VENV)/.installed-test
	nice -n 15 $(BIN)/python tools/mutate.py $(MODULES)

clean:
	rm -rf $(VENV) instance .pytest_cache
