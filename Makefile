# The two entry points of the README. Each creates .venv and installs what it needs.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
OUT ?= demo-out

.PHONY: demo test install lint typecheck

$(BIN)/cxreval: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q --upgrade pip
	$(BIN)/pip install --disable-pip-version-check -q -e '.[test]'
	touch $(BIN)/cxreval

install: $(BIN)/cxreval

demo: install
	$(BIN)/cxreval demo --out $(OUT) --overwrite

test: install
	$(BIN)/cxreval data fetch
	$(BIN)/python -m pytest -q tests src/cxreval

lint: install
	$(BIN)/ruff check src tests bench

# Not part of test/CI: reports typing errors without failing the build's tests.
typecheck: install
	$(BIN)/mypy src/cxreval
