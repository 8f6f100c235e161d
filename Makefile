# Everything a newcomer needs: `make demo` runs the main job on the embedded default, `make test` the suite.
# Both create .venv from this project's own files when it is missing.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install test demo check bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,mcp,inspect,postgres]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

demo: $(STAMP)
	$(PY) scripts/demo.py

check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(PY) scripts/bench.py

clean:
	rm -rf $(VENV) .taskforge .pytest_cache
