# perfplatform: `make demo` and `make test` are the two commands a fresh clone needs (README).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: demo test install install-dev lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The demo always runs on the embedded default: SQLite under var/ and tasks in-process.
demo: install
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 $(BIN)/python manage.py migrate --noinput -v0
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 $(BIN)/python manage.py seed_demo
	@echo "perfplatform demo: http://$(HOST):$(PORT)/  (sign in as demo / demo)"
	env -u DATABASE_URL -u REDIS_URL DEBUG=1 PERF_WEBHOOK_ALLOW_PRIVATE=1 $(BIN)/python manage.py runserver $(HOST):$(PORT) --noreload

test: install-dev
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports pyproject.toml

bench: install-dev
	$(BIN)/python bench/bench_ingest.py

clean:
	rm -rf var/perfplatform.sqlite3* var/static var/celerybeat-schedule
