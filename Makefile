# Two entry points for a fresh clone (see README.md):
#   make serve   build the site and serve it at http://127.0.0.1:8000
#   make test    run every test: page blocks, unit tests, strict build, both editions, browser, linters
# The full run uses one torch thread: Chromium keeps the other core busy, and torch's threads would wait on
# each other (a 2 s test file took 27 s); the second run uses every core.
VENV := .venv
BIN := $(VENV)/bin
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve build test record committed

serve: $(VENV)/.installed
	$(BIN)/mkdocs serve -a 127.0.0.1:8000

build: $(VENV)/.installed
	$(BIN)/mkdocs build --strict

test: $(VENV)/.installed node_modules/.installed
	bash .ci/system-packages chromium-headless-shell
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest
	@echo "Page blocks again on another CPU code path (no AVX) and every core: outputs must not depend on the machine"
	ATEN_CPU_CAPABILITY=default $(BIN)/python -m pytest docs -q -p no:cacheprovider

# make test, with the verification records written where they are committed (verification/records/); a record
# names the commit it ran, so the tree must hold no uncommitted change to a tracked file (but records)
record: export QKV_RECORD_DIR := verification/records
record: committed test

committed:
	@git diff --quiet HEAD -- . ':!verification/records' || { echo "make record: commit or stash your changes first: a record names the commit it ran" >&2; exit 1; }

$(VENV)/.installed: requirements.txt pyproject.toml .ci/system-packages
	bash .ci/system-packages fonts-noto-cjk
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $@
