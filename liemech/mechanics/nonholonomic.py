"""Nonholonomic constraints φ(g, η) = 0 on G × 𝔤, with their derivatives."""

from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from liemech.finite_differences import jacobian as fd_jacobian
from liemech.groups.base import LieGroup
from liemech.types import Matrix, Vector

P = TypeVar("P")


class NonholonomicConstraint(Generic[P]):
    """φ: G × 𝔤 → Rᵐ (left-trivialised, φ(g, η) = Φ(g, gη)); may be nonlinear in η.

    ``d_eta(g, η)`` = ∂φ/∂η (m × dim), the direction of the constraint force (μ̇ = ad*_η μ + f +
    (∂φ/∂η)ᵀλ, spec 004-Lie §2.2); ``d_g(g, η)`` = trivialised ∂φ/∂g, ζ ↦ d/dε φ(g τ(εζ), η).
    Either may be omitted (central finite differences).
    """

    def __init__(
        self,
        phi: Callable[[P, Vector], Vector],
        d_eta: Callable[[P, Vector], Matrix] | None = None,
        d_g: Callable[[P, Vector], Matrix] | None = None,
    ) -> None:
        if not callable(phi):
            raise TypeError("phi must be a callable (g, eta) -> (m,) array")
        self._phi, self._d_eta, self._d_g = phi, d_eta, d_g

    def value(self, g: P, eta: Vector) -> Vector:
        """φ(g, η)."""
        return np.atleast_1d(np.asarray(self._phi(g, eta), dtype=np.float64))

    def derivative_eta(self, g: P, eta: Vector) -> Matrix:
        """∂φ/∂η (g, η), shape (m, dim)."""
        if self._d_eta is not None:
            return np.atleast_2d(np.asarray(self._d_eta(g, eta), dtype=np.float64))
        return fd_jacobian(lambda v: self.value(g, v), eta)

    def derivative_g(self, group: LieGroup[P], g: P, eta: Vector) -> Matrix:
        """Trivialised ∂φ/∂g (g, η), shape (m, dim)."""
        if self._d_g is not None:
            return np.atleast_2d(np.asarray(self._d_g(g, eta), dtype=np.float64))
        chart = group.retraction("exp")
        return fd_jacobian(lambda z: self.value(group.compose(g, chart.tau(z)), eta), np.zeros(group.dim))
