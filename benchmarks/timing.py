"""What the benchmark scripts share: compile time and µs per step of a run, and fitted exponents."""

import statistics
import time
from typing import Any

import numpy as np

import liemech as lm


def step_times(problem: lm.Problem[Any], method: lm.Method, h: float, steps: int, calls: int) -> tuple[float, float]:
    """(seconds of the first one-step run, which compiles; median µs per step over ``calls`` runs)."""
    started = time.perf_counter()
    lm.integrate(problem, method, h=h, n_steps=1)
    compiled = time.perf_counter() - started
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        lm.integrate(problem, method, h=h, n_steps=steps)
        times.append((time.perf_counter() - started) / steps * 1e6)
    return compiled, statistics.median(times)


def exponent(sizes: list[int], values: list[float]) -> float:
    """The fitted slope of log(value) against log(N)."""
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])
