"""Holonomic constraints Φ(g) = 0 on a configuration space, with trivialised derivatives."""

from typing import Generic, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.base import LieGroup
from liemech.jax_support import array_method
from liemech.mechanics.callbacks import check_derivative, checked_call, require_callable
from liemech.mechanics.trivialised import trivialised_jacobian
from liemech.owned_compilation import OwnsCompiledCode, owned_jit
from liemech.types import Matrix, OnPoint, PointFunction, Tensor

P = TypeVar("P")


class HolonomicConstraint(OwnsCompiledCode, Generic[P]):
    """Φ: G → Rᵐ, written with ``jax.numpy``, with the trivialised Jacobian B(g) = L*_g DΦ
    (m × dim), B(g)ζ = d/dε Φ(g τ(εζ))|₀, and the trivialised Hessians [k] = ζ ↦ d/dε ∇Φ_k(g τ(εζ))|₀
    (shape (m, dim, dim)), both by automatic differentiation. ``jacobian`` and ``hessians`` may be
    given; they are then checked against autodiff at the initial point of a Problem and returned
    by the eager methods.

    The constraint force enters with a plus sign: μ̇ = ad*_η μ + f + Bᵀλ.
    """

    def __init__(
        self,
        phi: PointFunction[P],
        jacobian: PointFunction[P] | None = None,
        hessians: PointFunction[P] | None = None,
    ) -> None:
        require_callable(phi, "phi", "g -> (m,) array")
        require_callable(jacobian, "jacobian", "g -> (m, dim) array", optional=True)
        require_callable(hessians, "hessians", "g -> (m, dim, dim) array", optional=True)
        # Typed by the user with numpy or JAX arrays; liemech calls them with either.
        self._phi = cast(OnPoint[P], phi)
        self._jacobian = cast(OnPoint[P] | None, jacobian)
        self._hessians = cast(OnPoint[P] | None, hessians)

    def phi(self, g: P) -> jax.Array:
        """Φ(g) as a 1-D array (traceable)."""
        return jnp.atleast_1d(jnp.asarray(self._phi(g), dtype=float))

    @array_method
    def value(self, g: P) -> jax.Array:
        """Φ(g)."""
        return self.phi(g)

    @array_method
    def _returned(self, g: P) -> jax.Array:
        """Φ(g) as the callback returns it (a scalar stays a scalar, complex stays complex)."""
        return jnp.asarray(self._phi(g))

    def trivialised_jacobian(self, group: LieGroup[P], g: P) -> Matrix:
        """B(g) = L*_g DΦ(g), shape (m, dim)."""
        if self._jacobian is not None:
            return np.atleast_2d(np.asarray(self._jacobian(g), dtype=np.float64))
        return np.asarray(_autodiff_jacobian(self, group, g))

    def trivialised_hessians(self, group: LieGroup[P], g: P) -> Tensor:
        """H with H[k, a, b] = d/dε B(g τ(ε e_b))[k, a]|₀, shape (m, dim, dim)."""
        if self._hessians is not None:
            return np.asarray(self._hessians(g), dtype=np.float64)
        return np.asarray(_autodiff_hessians(self, group, g))

    def check_at(self, group: LieGroup[P], g: P) -> None:
        """Check Φ, its Jacobian and the given derivatives at g (errors name the callback)."""
        m, d = checked_call("holonomic phi", self._returned, g, None).size, group.dim
        if self._jacobian is None:
            checked_call("the Jacobian of holonomic phi", lambda x: self.trivialised_jacobian(group, x), g, (m, d),
                         traced=False)
        else:
            check_derivative("holonomic jacobian", self._jacobian, lambda x: np.asarray(_autodiff_jacobian(self, group, x)),
                             g, (m, d))
        if self._hessians is not None:
            check_derivative("holonomic hessians", self._hessians, lambda x: np.asarray(_autodiff_hessians(self, group, x)),
                             g, (m, d, d))


def _autodiff_jacobian(constraint: HolonomicConstraint[P], group: LieGroup[P], g: P) -> jax.Array:
    """B(g) by autodiff, compiled once per constraint and group and kept on the constraint."""
    def jacobian(x: P) -> jax.Array:
        return trivialised_jacobian(group, constraint.phi, x)

    return owned_jit(constraint, ("jacobian", group), jacobian)(g)


def _autodiff_hessians(constraint: HolonomicConstraint[P], group: LieGroup[P], g: P) -> jax.Array:
    """The trivialised Hessians by autodiff, compiled once per constraint and group and kept on it."""
    def hessians(x: P) -> jax.Array:
        return trivialised_jacobian(group, lambda y: trivialised_jacobian(group, constraint.phi, y), x)

    return owned_jit(constraint, ("hessians", group), hessians)(g)
