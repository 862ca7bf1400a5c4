"""Shared test setup: single-threaded BLAS (tiny kernels; oversubscription on 2 cores is slow), and
one compilation cache for the pytest-xdist workers (and the Dask workers and subprocesses they
start), so that a step one worker compiled is read back by the other; liemech bounds the cache's
size, which makes jax lock it around every read and write."""

import os
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("LIEMECH_CACHE_DIR", str(Path.home() / ".cache" / "liemech" / "jax-tests"))
