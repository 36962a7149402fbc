# tenferro-web: every entry point. `make demo` runs the main job, `make test` runs every test.
# Each target installs what it needs (Debian packages, a venv, npm packages, the Pyodide dist)
# and is quick when that is already done.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
STAMPS := $(BUILD)/.stamps
WHEEL_DIR := $(BUILD)/wheel
PYODIDE_DIST := $(BUILD)/pyodide
SITE := $(BUILD)/site
LITE := $(BUILD)/lite
BENCH_SITE := $(BUILD)/bench-site
WHEEL := $(WHEEL_DIR)/tenferro_web-0.1.0-py3-none-any.whl
PACKAGE_FILES := pyproject.toml README.md $(shell find src js wgsl -type f -not -path '*/__pycache__/*' 2>/dev/null)
# Browser tests run pytest-pyodide's selenium runner on Debian's Chromium + chromedriver.
BROWSER_ARGS := --dist-dir=$(PYODIDE_DIST) --runner selenium --rt chrome
export SE_OFFLINE := true

# Chrome's WebGPU (Dawn) in Node.js runs on this Vulkan driver: Chromium's SwiftShader here.
DAWN_ICD ?= /usr/lib/chromium/vk_swiftshader_icd.json
DAWN_NODE := VK_ICD_FILENAMES=$(DAWN_ICD) node --import ./tools/dawn_host.mjs
# The browser tests that also run in Node.js + Dawn (the Chromium-only ones stay in Chromium).
DAWN_TESTS := tests/browser/test_dot_general.py tests/browser/test_einsum.py \
              tests/browser/test_fuzz.py tests/browser/test_memory.py
# The browser tests that also run in headless Firefox on its own WebGPU (Marionette drives it,
# tools/firefox.py), and the Firefox-only ones (the demo and the JupyterLite notebook end to end).
# Left out: those two's Chromium tests, and the refused-allocation test: lavapipe in Firefox
# grants every allocation within its limits on this machine, so nothing is refused.
FIREFOX_TESTS := tests/browser/test_copies.py tests/browser/test_dot_general.py \
                 tests/browser/test_einsum.py tests/browser/test_engines.py \
                 tests/browser/test_fuzz.py tests/browser/test_memory.py \
                 tests/browser/test_transfers.py tests/browser/test_runtime.py \
                 tests/browser/test_worker.py tests/browser/test_environment.py \
                 tests/browser/test_firefox.py
FIREFOX_DESELECT := --deselect \
    "tests/browser/test_memory.py::test_a_refused_allocation_is_a_typed_error_and_the_runtime_stays_usable[firefox]"

.PHONY: help demo test lint test-host test-browser test-firefox test-dawn bench lite dist wheel \
        clean fuzz h200-bundle

help:
	@echo "make demo          run the demo page in headless Chromium on its WebGPU adapter"
	@echo "make test          every test: lint, test-host, test-browser, test-firefox, test-dawn"
	@echo "make lint          ruff, mypy --strict over src/, the import layering"
	@echo "make test-host     the plain-CPython lane (planners, validation, native lane on lavapipe)"
	@echo "make test-browser  Pyodide in headless Chromium on WebGPU (demo and JupyterLite included)"
	@echo "make test-firefox  Pyodide in headless Firefox on its own WebGPU (demo included)"
	@echo "make test-dawn     Pyodide in Node.js on Chrome's WebGPU (Dawn, npm webgpu)"
	@echo "make fuzz          the seeded kernel fuzz, both kernel families (N, SEED, CASE, LANE)"
	@echo "make bench         browser benchmark: ours vs numpy, TF.js, jax-js, onnxruntime-web;"
	@echo "                   progress as it runs, one table, JSON in build/bench/ (QUICK, SAVE)"
	@echo "make lite          build the JupyterLite site with the example notebook (SERVE)"
	@echo "make h200-bundle   what bench/h200.py needs on a GPU machine with no registry (build/h200)"
	@echo "make wheel         build this package's wheel into build/wheel/"
	@echo "make dist          the local Pyodide dist with the wheel (build/pyodide)"
	@echo "make clean         remove build/, .venv/, node_modules/ and .cache/"
	@echo
	@echo "variables:"
	@echo "  SERVE=1       demo, lite: serve the site for a real browser instead (PORT=8000 / 8001)"
	@echo "  BROWSER=firefox  demo, bench: run the page in headless Firefox instead of Chromium"
	@echo "  QUICK=1       bench: the small sizes only (about a minute)"
	@echo "  SAVE=1        bench: also record the results in bench/results/ and redraw the chart"
	@echo "  N=1000        fuzz: how many cases"
	@echo "  SEED=20261203 fuzz: the seed"
	@echo "  CASE=123      fuzz: only that case of SEED (a failure's reproducer names it)"
	@echo "  LANE=dawn     fuzz: run in Pyodide on Node.js + Dawn instead of plain CPython"
	@echo "  KERNELS=gpu   fuzz: one kernel family only, cpu or gpu (default: both)"

$(STAMPS)/system: tools/setup_system.sh
	tools/setup_system.sh
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/venv: requirements/dev.txt $(STAMPS)/system
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements/dev.txt
	@touch $@

$(STAMPS)/npm: package.json package-lock.json $(STAMPS)/system
	npm ci --no-audit --no-fund --loglevel=error
	@mkdir -p $(STAMPS) && touch $@

$(WHEEL): $(PACKAGE_FILES) $(STAMPS)/venv
	rm -rf $(WHEEL_DIR)
	$(PY) -m build --wheel --no-isolation --outdir $(WHEEL_DIR) . >/dev/null
	@ls $(WHEEL) >/dev/null

$(PYODIDE_DIST)/pyodide-lock.json: $(WHEEL) $(STAMPS)/npm tools/pyodide_dist.py
	$(PY) tools/pyodide_dist.py --npm-dir node_modules/pyodide --cache .cache/wheels \
	    --out $(PYODIDE_DIST) --add-wheel $(WHEEL)

wheel: $(WHEEL)
dist: $(PYODIDE_DIST)/pyodide-lock.json

# The demo site: the page, its Python side and the local Pyodide dist next to it.
$(SITE)/index.html: $(wildcard demo/*) docs/bench-swiftshader.svg $(PYODIDE_DIST)/pyodide-lock.json \
    tools/py_compile_dist.py tools/py_compile_dist.mjs
	rm -rf $(SITE) && mkdir -p $(SITE)
	cp demo/* docs/bench-swiftshader.svg $(SITE)/
	cp -r $(PYODIDE_DIST) $(SITE)/pyodide
	node tools/py_compile_dist.mjs $(SITE)/pyodide numpy opt-einsum tenferro-web

# The JupyterLite site (staged outside $(LITE): jupyterlite-core skips config files whose path
# starts with the output path): the example notebook, the Pyodide kernel pointed at the local dist
# (whose lock lists tenferro-web), and `comm`, which the kernel needs and the dist lacks.
# jupyter lite dates what it writes 1985-10-26 (reproducible builds), so the index is touched
# last: otherwise it stays older than its prerequisites and every `make test` rebuilds the site.
$(LITE)/index.html: $(wildcard lite/* lite/*/*) $(PYODIDE_DIST)/pyodide-lock.json
	rm -rf $(BUILD)/staging-lite $(LITE) && cp -r lite $(BUILD)/staging-lite && mkdir -p .cache/wheels
	test -f .cache/wheels/comm-0.2.2-py3-none-any.whl || $(PY) -m pip download -q --no-deps \
	    --only-binary=:all: comm==0.2.2 -d .cache/wheels
	mkdir -p $(BUILD)/staging-lite/pypi && cp .cache/wheels/comm-0.2.2-py3-none-any.whl $(BUILD)/staging-lite/pypi/
	cd $(BUILD)/staging-lite && ../../$(VENV)/bin/jupyter lite build --lite-dir . --output-dir ../lite >/dev/null
	mkdir -p $(LITE)/static && cp -r $(PYODIDE_DIST) $(LITE)/static/pyodide
	touch $@

lite: $(LITE)/index.html
	$(if $(SERVE),$(PY) tools/demo.py $(LITE) --serve $(or $(PORT),8001) --page notebooks/index.html?path=tenferro_web_example.ipynb)

# The benchmark page: tenferro-web, Pyodide's numpy and three JavaScript libraries on WebGPU
# side by side, each served from node_modules (never a CDN): TF.js (its UMD builds), jax-js (its
# ES modules; package.json for the version) and onnxruntime-web (its WebGPU build and the wasm
# module it loads).
$(BENCH_SITE)/index.html: $(wildcard bench/page/*) bench/browser_bench.py bench/workloads.py $(STAMPS)/npm \
                          $(PYODIDE_DIST)/pyodide-lock.json
	rm -rf $(BENCH_SITE) && mkdir -p $(BENCH_SITE)/tfjs $(BENCH_SITE)/jax-js $(BENCH_SITE)/ort
	cp bench/page/* bench/browser_bench.py bench/workloads.py $(BENCH_SITE)/
	cp node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js \
	   node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js $(BENCH_SITE)/tfjs/
	cp node_modules/@jax-js/jax/dist/*.js node_modules/@jax-js/jax/package.json $(BENCH_SITE)/jax-js/
	cp node_modules/onnxruntime-web/dist/{ort.webgpu.min.mjs,ort-wasm-simd-threaded.asyncify.*} \
	   $(BENCH_SITE)/ort/
	cp -r $(PYODIDE_DIST) $(BENCH_SITE)/pyodide

# Progress on stdout as it runs, one table at the end, JSON in build/bench/; SAVE=1 also records
# it in bench/results/ (committed; the chart is Chromium's), QUICK=1 runs the small sizes only,
# BROWSER=firefox runs the page in Firefox.
bench: $(BENCH_SITE)/index.html
	$(PY) bench/run_browser.py $(BENCH_SITE) $(if $(QUICK),--quick) $(if $(SAVE),--save) \
	    $(if $(BROWSER),--browser $(BROWSER))
	$(if $(and $(SAVE),$(filter-out firefox,$(or $(BROWSER),chromium))),\
	    $(PY) tools/bench_chart.py bench/results/browser-swiftshader.json docs/bench-swiftshader.svg)

# What bench/h200.py needs on the lent H200 (the device tool carries build/h200).
h200-bundle: $(PYODIDE_DIST)/pyodide-lock.json $(STAMPS)/npm
	$(PY) tools/h200_bundle.py --wheel $(WHEEL)

demo: $(SITE)/index.html
	$(PY) tools/demo.py $(SITE) $(if $(SERVE),--serve $(or $(PORT),8000)) \
	    $(if $(BROWSER),--browser $(BROWSER))

# Style (ruff), types (mypy --strict over src/) and the layering (import-linter, pyproject.toml).
lint: $(STAMPS)/venv
	$(PY) -m ruff check src tests tools bench
	$(PY) -m mypy
	PYTHONPATH=src $(VENV)/bin/lint-imports --no-cache

# The package as the host lanes import it (wgsl/ and js/ are package data of the wheel).
$(STAMPS)/installed: $(WHEEL)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --force-reinstall $(WHEEL)
	@touch $@

test-host: $(STAMPS)/installed
	$(PY) -m pytest tests/host tests/native -q

# The kernel fuzz, both kernel families: make fuzz N=5000 SEED=7, one case as a failure's
# reproducer names it (make fuzz SEED=7 CASE=123), LANE=dawn for Pyodide in Node.js + Dawn.
FUZZ_ARGS = --seed $(or $(SEED),20261203) $(if $(CASE),--case $(CASE),--count $(or $(N),1000)) \
            $(if $(KERNELS),--kernels $(KERNELS))
ifeq ($(LANE),dawn)
fuzz: $(PYODIDE_DIST)/pyodide-lock.json
	$(DAWN_NODE) tools/dawn_run.mjs $(PYODIDE_DIST) --module tests/fuzz/kernel_fuzz.py \
	    --module tools/fuzz.py fuzz:main $(FUZZ_ARGS)
else
fuzz: $(STAMPS)/installed
	PYTHONPATH=tests/fuzz $(PY) tools/fuzz.py $(FUZZ_ARGS)
endif

test-browser: $(SITE)/index.html $(LITE)/index.html
	$(PY) -m pytest tests/browser $(BROWSER_ARGS) --ignore=tests/browser/test_firefox.py

test-firefox: $(SITE)/index.html $(LITE)/index.html
	$(PY) -m pytest $(FIREFOX_TESTS) --dist-dir=$(PYODIDE_DIST) --runner selenium --rt firefox \
	    $(FIREFOX_DESELECT)

# The dot_general, einsum, fuzz and memory browser tests in Pyodide on Node.js + Dawn.
test-dawn: $(PYODIDE_DIST)/pyodide-lock.json
	VK_ICD_FILENAMES=$(DAWN_ICD) $(PY) -m pytest $(DAWN_TESTS) --dist-dir=$(PYODIDE_DIST) --rt node

test: lint test-host test-browser test-firefox test-dawn

clean:
	rm -rf $(BUILD) $(VENV) node_modules .cache
