# The two entry points of the README. Each creates .venv and installs what it needs.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
OUT ?= demo-out
# More options of `cxreval demo`, e.g. DEMO_ARGS="--n-resamples 100" for a quicker bootstrap.
DEMO_ARGS ?=

.PHONY: demo test install lint typecheck

# The demo needs the package alone; tests and lint need the test extra too.
$(BIN)/cxreval: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q --upgrade pip
	$(BIN)/pip install --disable-pip-version-check -q -e .
	touch $(BIN)/cxreval

$(VENV)/.test-extra: $(BIN)/cxreval
	$(BIN)/pip install --disable-pip-version-check -q -e '.[test]'
	touch $(VENV)/.test-extra

install: $(VENV)/.test-extra

demo: $(BIN)/cxreval
	$(BIN)/cxreval demo --out $(OUT) --overwrite $(DEMO_ARGS)

test: install
	$(BIN)/cxreval data fetch
	$(BIN)/python -m pytest -q tests src/cxreval

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

# The type check CI runs after the tests (configuration: [tool.mypy] in pyproject.toml).
typecheck: install
	$(BIN)/mypy
