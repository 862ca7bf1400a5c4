"""Holonomic constraints Φ(g) = 0 on a configuration space, with trivialised derivatives."""

from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from liemech.finite_differences import jacobian as fd_jacobian
from liemech.groups.base import LieGroup
from liemech.types import Matrix, Tensor, Vector

P = TypeVar("P")


class HolonomicConstraint(Generic[P]):
    """Φ: G → Rᵐ with the trivialised Jacobian B(g) = L*_g DΦ (m × dim),
    B(g)ζ = d/dε Φ(g τ(εζ))|₀, and the trivialised Hessians [k] = ζ ↦ d/dε ∇Φ_k(g τ(εζ))|₀
    (shape (m, dim, dim)). Derivatives not given are taken by central finite differences.

    The constraint force enters with a plus sign: μ̇ = ad*_η μ + f + Bᵀλ (DESIGN.md).
    """

    def __init__(
        self,
        phi: Callable[[P], Vector],
        jacobian: Callable[[P], Matrix] | None = None,
        hessians: Callable[[P], Tensor] | None = None,
    ) -> None:
        if not callable(phi):
            raise TypeError("phi must be a callable g -> (m,) array")
        self._phi = phi
        self._jacobian = jacobian
        self._hessians = hessians

    def value(self, g: P) -> Vector:
        """Φ(g)."""
        return np.atleast_1d(np.asarray(self._phi(g), dtype=np.float64))

    def trivialised_jacobian(self, group: LieGroup[P], g: P) -> Matrix:
        """B(g) = L*_g DΦ(g), shape (m, dim)."""
        if self._jacobian is not None:
            return np.atleast_2d(np.asarray(self._jacobian(g), dtype=np.float64))
        chart = group.retraction("exp")
        return fd_jacobian(lambda z: self.value(group.compose(g, chart.tau(z))), np.zeros(group.dim))

    def trivialised_hessians(self, group: LieGroup[P], g: P) -> Tensor:
        """[k][a, b] = d/dε B(g τ(ε e_b))[k, a]|₀, shape (m, dim, dim)."""
        if self._hessians is not None:
            return np.asarray(self._hessians(g), dtype=np.float64)
        chart = group.retraction("exp")
        m, d = self.value(g).shape[0], group.dim
        flat = fd_jacobian(
            lambda z: self.trivialised_jacobian(group, group.compose(g, chart.tau(z))).ravel(), np.zeros(d)
        )
        return flat.reshape(m, d, d)
