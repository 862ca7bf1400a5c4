"""The real root of a cubic by Cardano's formula: the exact answer of the Newton solves in
tests/solvers/test_compiled_newton.py and tests/solvers/test_carried_jacobian.py."""

import math


def cardano_root(a: float) -> float:
    """The real root of x³ + a x − 1 (a > 0)."""
    d = math.sqrt(0.25 + a ** 3 / 27)
    return math.cbrt(0.5 + d) + math.cbrt(0.5 - d)
