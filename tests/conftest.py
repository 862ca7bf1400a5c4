"""Shared test setup: single-threaded BLAS (tiny kernels; oversubscription on 2 cores is slow), and
one compilation cache for the pytest-xdist workers (and the Dask workers and subprocesses they
start), so that a step one worker compiled is read back by the other; liemech bounds the cache's
size, which makes jax lock it around every read and write. Compiled code is released after each
test module."""

import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LIEMECH_CACHE_DIR", str(Path.home() / ".cache" / "liemech" / "jax-tests"))


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
