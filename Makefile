# The two commands of the README, `make docs` (the site), `make roundoff` (the long runs from perturbed
# initial data) and `make jax-oldest` (what liemech reads of JAX, on the oldest JAX it allows). Each
# creates its virtual environment when it is missing.
PYTHON ?= python3
VENV := .venv
JAX_OLDEST := 0.10.0
OLDEST := .venv-jax-oldest
PY := $(VENV)/bin/python
export OPENBLAS_NUM_THREADS := 1

.PHONY: demo test docs roundoff jax-oldest

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

# The callbacks' jaxpr reader, the trace-state test and XLA's options on the oldest JAX that
# pyproject.toml allows (make test runs them on the newest).
jax-oldest:
	test -x $(OLDEST)/bin/python || $(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install -q -e . pytest sybil 'jax==$(JAX_OLDEST)' 'jaxlib==$(JAX_OLDEST)'
	$(OLDEST)/bin/python -m pytest -q -p no:cacheprovider -m "not slow" tests/mechanics/test_callbacks.py tests/test_xla_options.py
