"""ℓ(g, η) = ½ ηᵀ 𝕀(g) η − V(g): the mechanical systems of every example in the papers."""

from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from liemech.finite_differences import jacobian
from liemech.groups.base import LieGroup, Retraction
from liemech.mechanics.lagrangian import Lagrangian
from liemech.types import Matrix, Tensor, Vector

P = TypeVar("P")


def _symmetric_positive_definite(M: object, dim: int, name: str) -> Matrix:
    arr = np.asarray(M, dtype=np.float64)
    if arr.shape != (dim, dim):
        raise ValueError(f"{name} must have shape ({dim}, {dim}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    asymmetry = float(np.max(np.abs(arr - arr.T)))
    if asymmetry > 1e-12 * max(1.0, float(np.max(np.abs(arr)))):
        raise ValueError(f"{name} must be symmetric: max |𝕀 − 𝕀ᵀ| = {asymmetry:.3e}")
    smallest = float(np.linalg.eigvalsh(arr)[0])
    if smallest <= 0.0:
        raise ValueError(f"{name} must be positive definite: smallest eigenvalue {smallest:.3e}")
    return arr


class MechanicalSystem(Lagrangian[P], Generic[P]):
    """ℓ(g, η) = ½ ηᵀ 𝕀 η − V(g) with 𝕀 symmetric positive definite.

    ``inertia`` is a constant matrix or a callable g ↦ 𝕀(g) (paper 002's M(q)). Derivatives the
    user does not give are taken by central finite differences along g τ(εζ):
    ``potential_gradient`` g ↦ ∇V(g) with ⟨∇V, ζ⟩ = d/dε V(g τ(εζ)); ``potential_hessian``
    g ↦ (d/dε ∇V(g τ(εζ))) as a (dim, dim) matrix; ``inertia_gradient`` g ↦ (dim, dim, dim) with
    [k] = d/dε 𝕀(g τ(ε e_k)); ``inertia_hessian`` g ↦ (dim, dim, dim, dim) with [k, l] =
    d/dε (∂_k 𝕀)(g τ(ε e_l)). Then f = ½ ηᵀ (∂_k 𝕀) η − ∇V and ∂f_k/∂g_l = ½ ηᵀ(∂_l∂_k 𝕀)η − ∂_l∇V_k.
    """

    def __init__(
        self,
        group: LieGroup[P],
        inertia: Matrix | Callable[[P], Matrix],
        potential: Callable[[P], float],
        potential_gradient: Callable[[P], Vector] | None = None,
        potential_hessian: Callable[[P], Matrix] | None = None,
        inertia_gradient: Callable[[P], Tensor] | None = None,
        inertia_hessian: Callable[[P], Tensor] | None = None,
    ) -> None:
        if not isinstance(group, LieGroup):
            raise TypeError(f"group must be a LieGroup, got {type(group).__name__}")
        if not callable(potential):
            raise TypeError("potential must be a callable g -> float")
        self._group = group
        self._chart: Retraction[P] = group.retraction("exp")
        d = group.dim
        self._constant_inertia: Matrix | None = None
        if callable(inertia):
            self._inertia_fn: Callable[[P], Matrix] = inertia
        else:
            M = _symmetric_positive_definite(inertia, d, "inertia")
            self._constant_inertia = M
            self._inertia_inv = np.linalg.inv(M)
            self._inertia_fn = lambda g: M
        self._potential = potential
        self._potential_gradient = potential_gradient
        self._potential_hessian = potential_hessian
        self._inertia_gradient = inertia_gradient
        self._inertia_hessian = inertia_hessian

    @property
    def group(self) -> LieGroup[P]:
        return self._group

    @property
    def constant_inertia(self) -> Matrix | None:
        """𝕀 when it does not depend on g, else None."""
        return self._constant_inertia

    def _along(self, g: P, fn: Callable[[P], Vector]) -> Matrix:
        """ζ ↦ d/dε fn(g τ(εζ))|₀ by central differences."""
        G, chart = self._group, self._chart
        return jacobian(lambda z: np.atleast_1d(fn(G.compose(g, chart.tau(z)))), np.zeros(G.dim))

    def inertia(self, g: P) -> Matrix:
        """𝕀(g)."""
        return self._inertia_fn(g)

    def potential(self, g: P) -> float:
        """V(g)."""
        return float(self._potential(g))

    def potential_gradient(self, g: P) -> Vector:
        """∇V(g), trivialised: ⟨∇V, ζ⟩ = d/dε V(g τ(εζ))|₀."""
        if self._potential_gradient is not None:
            return np.asarray(self._potential_gradient(g), dtype=np.float64)
        gradient: Vector = self._along(g, lambda x: np.array([self.potential(x)]))[0]
        return gradient

    def potential_hessian(self, g: P) -> Matrix:
        """ζ ↦ d/dε ∇V(g τ(εζ))|₀ (not symmetric in general on a non-abelian group)."""
        if self._potential_hessian is not None:
            return np.asarray(self._potential_hessian(g), dtype=np.float64)
        return self._along(g, self.potential_gradient)

    def inertia_gradient(self, g: P) -> Tensor:
        """[k] = d/dε 𝕀(g τ(ε e_k))|₀, shape (dim, dim, dim); zero for constant inertia."""
        d = self._group.dim
        if self._constant_inertia is not None:
            return np.zeros((d, d, d))
        if self._inertia_gradient is not None:
            return np.asarray(self._inertia_gradient(g), dtype=np.float64)
        return np.moveaxis(self._along(g, lambda x: self.inertia(x).ravel()).reshape(d, d, d), 2, 0)

    def inertia_hessian(self, g: P) -> Tensor:
        """[k, l] = d/dε (∂_k 𝕀)(g τ(ε e_l))|₀, shape (dim, dim, dim, dim); zero for constant inertia."""
        d = self._group.dim
        if self._constant_inertia is not None:
            return np.zeros((d, d, d, d))
        if self._inertia_hessian is not None:
            return np.asarray(self._inertia_hessian(g), dtype=np.float64)
        flat = self._along(g, lambda x: self.inertia_gradient(x).ravel())  # (d·d·d, d): [kij, l]
        return np.moveaxis(flat.reshape(d, d, d, d), 3, 1)

    def value(self, g: P, eta: Vector) -> float:
        return 0.5 * float(eta @ self.inertia(g) @ eta) - self.potential(g)

    def momentum(self, g: P, eta: Vector) -> Vector:
        return self.inertia(g) @ eta

    def velocity(self, g: P, mu: Vector) -> Vector:
        if self._constant_inertia is not None:
            return self._inertia_inv @ mu
        return np.asarray(np.linalg.solve(self.inertia(g), mu), dtype=np.float64)

    def force(self, g: P, eta: Vector) -> Vector:
        f = -self.potential_gradient(g)
        if self._constant_inertia is None:
            f = f + 0.5 * np.einsum("i,kij,j->k", eta, self.inertia_gradient(g), eta)
        return f

    def momentum_d_eta(self, g: P, eta: Vector) -> Matrix:
        return self.inertia(g)

    def momentum_d_g(self, g: P, eta: Vector) -> Matrix:
        d = self._group.dim
        if self._constant_inertia is not None:
            return np.zeros((d, d))
        return np.asarray(np.einsum("kij,j->ik", self.inertia_gradient(g), eta), dtype=np.float64)

    def force_d_eta(self, g: P, eta: Vector) -> Matrix:
        d = self._group.dim
        if self._constant_inertia is not None:
            return np.zeros((d, d))
        return np.asarray(np.einsum("kij,j->ki", self.inertia_gradient(g), eta), dtype=np.float64)

    def force_d_g(self, g: P, eta: Vector) -> Matrix:
        if self._constant_inertia is not None:
            return -self.potential_hessian(g)
        curvature = np.einsum("i,klij,j->kl", eta, self.inertia_hessian(g), eta)
        return np.asarray(0.5 * curvature - self.potential_hessian(g), dtype=np.float64)
