"""Deliberately ill-typed use of the public API: mypy --strict must reject it (see test_downstream.py)."""

import liemech as lm


def wrong(R: lm.Matrix) -> lm.ProductPoint:
    return lm.SO3().compose(R, R)  # SO3 points are matrices, not product tuples


R, x, y = lm.ProductGroup(lm.SO3(), lm.Rn(3)).identity()  # a point of SO(3) × R³ has two parts
