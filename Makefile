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

.PHONY: venv test lint typecheck docs clean run bench bench-tiny screenshots

HOST ?= 127.0.0.1
PORT ?= 8000

$(VENV)/.installed: pyproject.toml
	@if [ -z "$(PYTHON)" ]; then \
	  echo "wfapp needs Python 3.12 or newer and none was found on PATH or under pyenv."; \
	  echo "Install one (for example: apt-get install python3.12, or pyenv install 3.12) and retry,"; \
	  echo "or point to it: make PYTHON=/path/to/python3.12 ..."; exit 1; fi
	@if [ ! -x $(PY) ]; then echo "Creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	@touch $@

venv: $(VENV)/.installed

# The suite in parallel (pytest-xdist): TEST_WORKERS processes, each test module on one of them, so
# that a module's server and browser serve all its tests. Most tests wait on servers, browsers and
# subprocesses, so more workers than cores pay. One test: $(PY) -m pytest tests/path.py::test_name
TEST_WORKERS ?= 4
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadfile

test: venv
	$(PY) -m pytest -q $(PYTEST_PARALLEL)

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
	$(VENV)/bin/lint-imports

typecheck: venv
	$(VENV)/bin/mypy

# The documentation site (mkdocs.yml, docs/) into site/; --strict: a broken link or reference fails.
# Offline: no page may load a script, style or font from another site.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict
	@if grep -rlE '<(script|link|img)[^>]+(src|href)="(https?:)?//|fonts\.(googleapis|gstatic)\.com' site --include='*.html'; then \
	  echo "docs: the pages above load something from another site; the site must work offline"; exit 1; fi

clean:
	rm -rf $(VENV) .pytest_cache site
