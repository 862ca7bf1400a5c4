"""Shared test setup: single-threaded BLAS (tiny kernels; oversubscription on 2 cores is slow), and
under pytest-xdist one compilation cache per worker: two processes writing the same cache entry at
once can leave a file that crashes the process that reads it back."""

import os
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER is not None and "LIEMECH_CACHE_DIR" not in os.environ:
    os.environ["LIEMECH_CACHE_DIR"] = str(Path.home() / ".cache" / "liemech" / f"jax-tests-{_WORKER}")
