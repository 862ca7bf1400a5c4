"""Downstream-style use of the public API with precise types; mypy --strict must accept it."""

import numpy as np

import liemech as lm
from liemech.testing import ConformanceReport, check_retraction


def spin(R: lm.Matrix, omega: lm.Vector, h: float) -> lm.Matrix:
    G = lm.SO3()
    tau: lm.Retraction[lm.Matrix] = G.retraction("cay")
    return G.compose(R, tau.tau(h * omega))


def product_step(g: lm.ProductPoint, xi: lm.Vector) -> lm.ProductPoint:
    G = lm.ProductGroup(lm.SE2(), lm.Rn(1))
    return G.compose(g, G.retraction("exp").tau(xi))


def certify(group: lm.LieGroup[lm.Matrix]) -> ConformanceReport:
    return check_retraction(group.retraction("exp"), np.random.default_rng(0), radii=(1e-3,))


tangent: lm.Matrix = lm.SE3().retraction("cay").ddtau(np.zeros(6), np.ones(6))
