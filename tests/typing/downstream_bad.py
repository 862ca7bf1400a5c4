"""Deliberately ill-typed use of the public API: mypy --strict must reject it (see test_mypy.py)."""

import liemech as lm


def wrong(R: lm.Matrix) -> lm.ProductPoint:
    return lm.SO3().compose(R, R)  # SO3 points are matrices, not product tuples
