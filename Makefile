# One place for the set-up, main-job, lint and test commands; README, .ci/run and the workflow call
# these targets. `make run` and `make test` each install what is missing first, and only that: the
# install is stamped, so a second run spends seconds on set-up.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# Where a machine without the CPU wheel on disk gets it (the PR workflow sets the CPU index).
TORCH_PIP_ARGS ?=

# llama.cpp (the `local` extra: llama-cpp-python's server) is compiled here, for a portable x86-64
# baseline (x86-64-v3: SSE4.2, AVX, AVX2, BMI2, FMA, F16C), never for "native": a native build takes
# every instruction the build machine advertises, and a VM may advertise Intel AMX (amx_tile) without
# letting a process use it, so the server dies with SIGILL on its first completion. AVX-512 and AMX
# are off. No examples, tests, tools, server binary or multimodal library: the Python server needs
# libllama and libggml only. For a faster build tuned to your own machine:
#   make llama-rebuild LLAMA_CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAVA_BUILD=OFF"
LLAMA_CPP_VERSION ?= 0.3.36
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF \
	-DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
	-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF
# pip's wheel cache is keyed by the sdist, not by CMAKE_ARGS, so it would hand back a wheel built with
# other flags (say, an earlier native build). The wheel is built with pip's cache off and kept in our
# own folder, keyed by the version and the flags.
WHEEL_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/propeval/wheels
LLAMA_KEY := $(shell printf '%s|%s' '$(LLAMA_CPP_VERSION)' '$(strip $(LLAMA_CMAKE_ARGS))' | sha256sum | cut -c1-16)
LLAMA_WHEEL_DIR := $(WHEEL_CACHE)/llama-cpp-python-$(LLAMA_CPP_VERSION)-$(LLAMA_KEY)
# The install is stamped with a hash of what it was made from, not a file date: a fresh clone's files
# are all new, and a checkout changes dates without changing what to install.
SETUP_KEY := $(shell cat pyproject.toml Makefile | sha256sum | cut -c1-12)
STAMP := $(VENV)/.propeval-installed-$(SETUP_KEY)

.PHONY: setup llama-rebuild run lint test test-fast check bench

setup: $(STAMP)

$(STAMP):
	@echo "setup: installing into $(VENV) (first time on a machine: about 10 min on 2 cores, mostly compiling llama.cpp)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# The CPU build of torch that lies on this machine's disk, before anything can pull a CUDA build.
	$(PIP) install --quiet --disable-pip-version-check torch==2.13.0 $(TORCH_PIP_ARGS)
	$(MAKE) --no-print-directory $(LLAMA_WHEEL_DIR)/.done
	$(PIP) install --quiet --disable-pip-version-check --force-reinstall --no-deps $(LLAMA_WHEEL_DIR)/*.whl
	$(PIP) install --quiet --disable-pip-version-check -e '.[all,dev,local]'
	# Headless Chromium renders the HTML report in the release tests (CI runs as root on a fresh machine).
	command -v chromium >/dev/null || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }
	rm -f $(VENV)/.propeval-installed-*
	touch $(STAMP)

$(LLAMA_WHEEL_DIR)/.done:
	@echo "setup: compiling llama-cpp-python $(LLAMA_CPP_VERSION) for a portable CPU baseline (about 7 min on 2 cores, once a machine)"
	rm -rf $(LLAMA_WHEEL_DIR).tmp && mkdir -p $(LLAMA_WHEEL_DIR).tmp
	CMAKE_ARGS="$(strip $(LLAMA_CMAKE_ARGS))" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
		$(PIP) wheel --quiet --disable-pip-version-check --no-deps --no-cache-dir --no-binary llama-cpp-python \
		-w $(LLAMA_WHEEL_DIR).tmp 'llama-cpp-python==$(LLAMA_CPP_VERSION)'
	printf '%s\n' '$(strip $(LLAMA_CMAKE_ARGS))' > $(LLAMA_WHEEL_DIR).tmp/CMAKE_ARGS
	touch $(LLAMA_WHEEL_DIR).tmp/.done
	rm -rf $(LLAMA_WHEEL_DIR) && mv $(LLAMA_WHEEL_DIR).tmp $(LLAMA_WHEEL_DIR)

# Build llama.cpp again with LLAMA_CMAKE_ARGS (for instance a native build, for speed) and install it.
llama-rebuild:
	rm -rf $(LLAMA_WHEEL_DIR)
	rm -f $(STAMP)
	$(MAKE) --no-print-directory setup

# The main job: every check and gate over the whole corpus, difficulty and stats, then the report.
run: $(STAMP)
	$(VENV)/bin/propeval run

# mypy keeps its cache in .mypy_cache: a second run checks only what changed.
lint: $(STAMP)
	$(VENV)/bin/ruff check tools tests benchmarks
	$(VENV)/bin/ruff format --check tools tests benchmarks
	$(VENV)/bin/mypy

# The whole suite, the integration test included, on two workers (pytest-xdist): many tests wait
# on subprocesses, servers and git, so two workers pay even on 2 cores. worksteal lets the worker
# that finishes first take tests the other has queued.
test: lint
	$(PY) -m pytest -n 2 --dist worksteal

# The inner loop: every test under about 1 s (no real model, browser, local server or fresh clone),
# on two workers too (each spends about 6 s collecting, so one worker alone is slower).
test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow" -n 2 -q

check: $(STAMP)
	$(VENV)/bin/propeval check
