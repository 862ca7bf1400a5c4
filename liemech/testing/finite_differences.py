"""Central finite differences of fourth order: the conformance checks' and the test suite's
independent truth for derivatives that liemech itself takes by automatic differentiation."""

from collections.abc import Callable

import numpy as np

from liemech.types import Matrix, Vector

DEFAULT_STEP = 1e-3
"""Step of the five-point stencil: truncation ~h⁴ ≈ 1e-12, round-off ~1e-16/h ≈ 1e-13."""


def derivative_along(f: Callable[[float], Vector], step: float = DEFAULT_STEP) -> Vector:
    """f′(0) ≈ [−f(2h) + 8f(h) − 8f(−h) + f(−2h)] / (12h) for a curve f: R → Rᵐ."""
    return (-f(2.0 * step) + 8.0 * f(step) - 8.0 * f(-step) + f(-2.0 * step)) / (12.0 * step)


def jacobian(f: Callable[[Vector], Vector], x: Vector, step: float = DEFAULT_STEP) -> Matrix:
    """The matrix ∂f/∂x at x, column j = d/dε f(x + ε e_j) by the five-point stencil."""
    x = np.asarray(x, dtype=np.float64)
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = 1.0
        columns.append(np.atleast_1d(derivative_along(lambda eps: f(x + eps * e), step)))
    return np.stack(columns, axis=-1)
