"""Shared test setup: single-threaded BLAS (tiny kernels; oversubscription on 2 cores is slow), and
one compilation cache for the pytest-xdist workers (and the Dask workers and subprocesses they
start), so that a step one worker compiled is read back by the other; liemech bounds the cache's
size, which makes jax lock it around every read and write. Compiled code is released after each
test module. The ``perturb`` fixture, ``--perturb N`` and the guard that holds every run over
``LONG_SPAN`` (through ``integrate`` or ``integrate_ensemble``) to the ``long_run`` marker are those of
tests/perturbation.py."""

import gc
import importlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LIEMECH_CACHE_DIR", str(Path.home() / ".cache" / "liemech" / "jax-tests"))

from tests.perturbation import LONG_SPAN, Perturbation  # noqa: E402  (it loads numpy: after the settings above)


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_code() -> Iterator[None]:
    """XLA keeps every compiled kernel in its own memory maps until the executable is dropped. A
    worker that runs many test modules reached Linux's limit of maps per process
    (vm.max_map_count, 65530 by default) and crashed inside the compiler (a segfault or abort);
    dropping jax's caches after each module releases them (the disk cache still serves)."""
    yield
    import jax  # here, not above: numpy must load after OPENBLAS_NUM_THREADS is set

    clear_caches: Callable[[], None] = jax.clear_caches  # untyped in jax
    clear_caches()
    gc.collect()


@pytest.fixture
def perturb(request: pytest.FixtureRequest) -> Perturbation:
    """The initial data of a ``long_run`` test pass through this: unchanged in a plain run, moved by a
    relative 1e-12 under ``--perturb N`` (see tests/perturbation.py)."""
    return Perturbation(getattr(request, "param", 0))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    count: int = metafunc.config.getoption("perturb")
    if count > 0 and "perturb" in metafunc.fixturenames:
        seeds = range(1, count + 1)
        metafunc.parametrize("perturb", seeds, indirect=True, ids=[f"perturbed{seed}" for seed in seeds])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A ``long_run`` test takes ``perturb``, and only such a test does: a long run whose initial data
    the check cannot move would escape it."""
    for item in items:
        marked = item.get_closest_marker("long_run") is not None
        if marked != ("perturb" in getattr(item, "fixturenames", ())):
            raise pytest.UsageError(f"{item.nodeid}: a test marked long_run takes the perturb fixture, and a "
                                    "test that takes it is marked long_run")


@pytest.fixture(autouse=True)
def _long_runs_are_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run over more than ``LONG_SPAN`` from a test not marked ``long_run`` fails that test, so that
    every new long run is held to the ``--perturb`` check."""
    if request.node.get_closest_marker("long_run") is not None:
        return
    for name in ("liemech.run.integrate", "liemech.run.ensemble"):
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "_number_of_steps", _within_span(module._number_of_steps))


def _within_span(count_steps: Callable[[float, object, object], int]) -> Callable[[float, object, object], int]:
    def counted(h: float, t_final: object, n_steps: object) -> int:
        n = count_steps(h, t_final, n_steps)
        if n * h > LONG_SPAN:
            pytest.fail(f"a run over {n * h:g} (n_steps·h) is a long run: mark the test long_run and pass its "
                        "initial data through the perturb fixture (tests/perturbation.py)")
        return n
    return counted
