# Skillyard: `make run` starts the registry on embedded defaults; `make test` runs every test.
# Both create .venv/ and are safe to run again.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
EXTRAS := server,semantic,sandbox,dev,agent
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-16)

.PHONY: run test venv provision services sandbox-image lint bench clean help

help:
	@echo "make run    start the registry (catalog, API, worker) with demo skills"
	@echo "make test   provision what is missing and run every test"

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

run: venv
	bash scripts/run.sh

lint: venv
	$(VENV)/bin/ruff check client skillyard registry catalog worker tests bench

clean:
	rm -rf $(VENV) .data
