# Skillyard: `make run` starts the registry on embedded defaults; `make test` runs every test.
# Both create .venv/ and are safe to run again.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
EXTRAS := server,semantic,sandbox,dev,agent
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-16)

.PHONY: run test venv provision services sandbox-image compose-test lint typecheck bench clean help

help:
	@echo "make run            start the registry (catalog, API, worker) with demo skills"
	@echo "make test           provision what is missing and run every check and test"
	@echo "make lint           ruff format --check and ruff check"
	@echo "make typecheck      mypy on client/skillctl and the server apps"
	@echo "make venv           create or update .venv/ with every extra"
	@echo "make provision      install what the services need (PostgreSQL, Redis, Docker, Chromium)"
	@echo "make services       start PostgreSQL, Redis and dockerd on loopback"
	@echo "make sandbox-image  build the local sandbox image (nothing is pulled)"
	@echo "make compose-test   build and run docker-compose.yaml, publish and install through it, tear down"
	@echo "make bench          run the speed and quality benchmarks in bench/"
	@echo "make clean          remove .venv/ and .data/"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

venv: $(STAMP)

provision:
	bash scripts/provision.sh

services: provision
	bash scripts/services.sh start

sandbox-image: services
	bash scripts/sandbox-image.sh

test: venv sandbox-image
	bash scripts/test.sh

# The README's docker-compose commands, run for real (images built here, nothing pulled);
# scripts/test.sh runs it too, as its last stage.
compose-test: venv services
	bash scripts/compose-test.sh

run: venv
	bash scripts/run.sh

lint: venv
	$(VENV)/bin/ruff format --check client skillyard registry catalog worker tests bench
	$(VENV)/bin/ruff check client skillyard registry catalog worker tests bench

# Each script prints its ratio against a baseline run side by side (bench/README.md).
bench: venv
	$(PY) bench/validate.py
	$(PY) bench/scan.py
	$(PY) bench/route_real.py --split test
	$(PY) bench/api.py --seconds 4
	$(PY) bench/catalog.py
	$(PY) bench/install.py --runs 1

# Two runs, one per tree; PYTHONPATH makes Django's settings (for django-stubs) this checkout's.
typecheck: venv
	PYTHONPATH=client:. $(VENV)/bin/mypy client/skillctl
	DJANGO_SETTINGS_MODULE=skillyard.settings PYTHONPATH=client:. $(VENV)/bin/mypy registry catalog worker skillyard

clean:
	rm -rf $(VENV) .data
