# The two commands of the README, `make docs` (the site) and `make roundoff` (the long runs from perturbed
# initial data). Each creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export OPENBLAS_NUM_THREADS := 1

.PHONY: demo test docs roundoff

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed-base: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed-base

demo: $(VENV)/.installed-base
	$(PY) examples/demo.py

test: $(VENV)/.installed-dev
	$(PY) -m mypy --strict liemech examples tests
	$(PY) -m pytest -q -n 2 --dist loadfile

docs: $(VENV)/.installed-dev
	$(PY) -m mkdocs build --strict -d site

roundoff: $(VENV)/.installed-dev
	$(PY) -m pytest -q -n 2 --dist loadfile -m long_run --perturb 5
