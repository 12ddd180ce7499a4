# The README's commands. `make test` runs the whole suite; `make run` serves the dashboard.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python

# The first interpreter found that is Python >= 3.12 (pyenv's too, without a hard-coded path).
PYTHON ?= $(shell for c in python3.14 python3.13 python3.12 python3 \
	$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do \
	  p=$$(command -v $$c 2>/dev/null) || continue; \
	  $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$p; break; }; \
	done)

.PHONY: venv test lint typecheck clean run bench bench-tiny screenshots

HOST ?= 127.0.0.1
PORT ?= 8000

$(VENV)/.installed: pyproject.toml
	@if [ -z "$(PYTHON)" ]; then \
	  echo "wfapp needs Python 3.12 or newer and none was found on PATH or under pyenv."; \
	  echo "Install one (for example: apt-get install python3.12, or pyenv install 3.12) and retry,"; \
	  echo "or point to it: make PYTHON=/path/to/python3.12 ..."; exit 1; fi
	@if [ ! -x $(PY) ]; then echo "Creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

venv: $(VENV)/.installed

test: venv
	$(PY) -m pytest -q

# Serve the dashboard and run workflows in one process: http://$(HOST):$(PORT)/
run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_admin
	$(PY) manage.py seed_demo
	exec $(PY) manage.py serve --host $(HOST) --port $(PORT)

# The benchmarks (../shared/design/BENCHMARKS.md): our engine, google-adk and LangGraph side by side;
# with DATABASE_URL on PostgreSQL also the Django store there and bench/concurrency.py, and the
# scaled mode's worker processes beside DBOS Transact (bench/scaled.py).
bench: venv
	$(PY) bench/run.py --rounds 2
	@if [ -n "$$DATABASE_URL" ]; then \
	  $(PY) -m bench.scaled --out bench/scaled.json && \
	  $(PY) -m bench.merge bench/results.json --scaled bench/scaled.json && \
	  $(PY) -m bench.report bench/results.json && rm bench/scaled.json; \
	else echo "bench: the scaled mode is measured only with DATABASE_URL=postgres://..."; fi

bench-tiny: venv
	$(PY) bench/run.py --tiny
	@if [ -n "$$DATABASE_URL" ]; then \
	  $(PY) -m bench.scaled --tiny --out "$$(mktemp -d)/scaled-tiny.json"; \
	else echo "bench-tiny: the scaled mode is checked only with DATABASE_URL=postgres://..."; fi

screenshots: venv  # the README's pictures, from the current pages (needs Chromium)
	WFAPP_SCREENSHOTS=docs/images $(PY) -m pytest -q tests/web/test_readme_images.py

lint: venv
	$(VENV)/bin/ruff check engine wfapp tests bench
	$(VENV)/bin/ruff format --check engine wfapp tests bench

typecheck: venv
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache
