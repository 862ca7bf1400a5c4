"""Shared test setup: single-threaded BLAS (tiny kernels; oversubscription on 2 cores is slow)."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
