# One place for the set-up, lint and test commands; README and .ci/run call these targets.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# Where a machine without the CPU wheel on disk gets it (the PR workflow sets the CPU index).
TORCH_PIP_ARGS ?=

.PHONY: setup lint test check bench

setup:
	$(PYTHON) -m venv $(VENV)
	# The CPU build of torch that lies on this machine's disk, before anything can pull a CUDA build.
	$(PIP) install --quiet torch==2.13.0 $(TORCH_PIP_ARGS)
	$(PIP) install --quiet -e '.[all,dev,local]'
	# Headless Chromium renders the HTML report in the release tests (CI runs as root on a fresh machine).
	command -v chromium >/dev/null || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }

lint:
	$(VENV)/bin/ruff check tools tests benchmarks
	$(VENV)/bin/ruff format --check tools tests benchmarks
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest

check:
	$(VENV)/bin/propeval check
