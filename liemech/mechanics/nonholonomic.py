"""Nonholonomic constraints φ(g, η) = 0 on G × 𝔤, with their derivatives."""

from typing import Generic, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup
from liemech.jax_support import array_method
from liemech.mechanics.callbacks import check_derivative, checked_call, require_callable
from liemech.mechanics.trivialised import derivative_in_eta, trivialised_jacobian
from liemech.owned_compilation import OwnsCompiledCode, owned_jit
from liemech.types import Matrix, OnState, StateFunction, Vector

P = TypeVar("P")


class NonholonomicConstraint(OwnsCompiledCode, Generic[P]):
    """φ: G × 𝔤 → Rᵐ (left-trivialised, φ(g, η) = Φ(g, gη)), written with ``jax.numpy``; may be
    nonlinear in η.

    ∂φ/∂η (m × dim) is the direction of the constraint force (μ̇ = ad*_η μ + f + (∂φ/∂η)ᵀλ,
    Martín de Diego & Sato Martín de Almagro 2018, §6.2); the trivialised ∂φ/∂g is
    ζ ↦ d/dε φ(g τ(εζ), η). Both come from automatic differentiation; ``d_eta`` and ``d_g`` may be
    given, and are then checked against autodiff at the initial point of a Problem.
    """

    def __init__(
        self,
        phi: StateFunction[P],
        d_eta: StateFunction[P] | None = None,
        d_g: StateFunction[P] | None = None,
    ) -> None:
        require_callable(phi, "phi", "(g, eta) -> (m,) array")
        require_callable(d_eta, "d_eta", "(g, eta) -> (m, dim) array", optional=True)
        require_callable(d_g, "d_g", "(g, eta) -> (m, dim) array", optional=True)
        # Typed by the user with numpy or JAX arrays; liemech calls them with either.
        self._phi = cast(OnState[P], phi)
        self._d_eta, self._d_g = cast(OnState[P] | None, d_eta), cast(OnState[P] | None, d_g)

    def phi(self, g: P, eta: ArrayLike) -> jax.Array:
        """φ(g, η) as a 1-D array (traceable)."""
        # Traced, η is a JAX array standing in for the numpy vector the callback is typed with.
        value = self._phi(g, jnp.asarray(eta, dtype=float))  # type: ignore[arg-type]
        return jnp.atleast_1d(jnp.asarray(value, dtype=float))

    @array_method
    def value(self, g: P, eta: ArrayLike) -> jax.Array:
        """φ(g, η)."""
        return self.phi(g, eta)

    @array_method
    def _returned(self, g: P, eta: ArrayLike) -> jax.Array:
        """φ(g, η) as the callback returns it (a scalar stays a scalar, complex stays complex)."""
        return jnp.asarray(self._phi(g, jnp.asarray(eta, dtype=float)))  # type: ignore[arg-type]

    @array_method
    def _autodiff_d_eta(self, g: P, eta: ArrayLike) -> jax.Array:
        return derivative_in_eta(self.phi, g, eta)

    def derivative_eta(self, g: P, eta: Vector) -> Matrix:
        """∂φ/∂η (g, η), shape (m, dim)."""
        if self._d_eta is not None:
            return np.atleast_2d(np.asarray(self._d_eta(g, eta), dtype=np.float64))
        return self._autodiff_d_eta(g, eta)

    def derivative_g(self, group: LieGroup[P], g: P, eta: Vector) -> Matrix:
        """Trivialised ∂φ/∂g (g, η), shape (m, dim)."""
        if self._d_g is not None:
            return np.atleast_2d(np.asarray(self._d_g(g, eta), dtype=np.float64))
        return np.asarray(_autodiff_d_g(self, group, g, eta))

    def check_at(self, group: LieGroup[P], g: P, eta: Vector) -> None:
        """Check φ, ∂φ/∂η and the given derivatives at (g, η) (errors name the callback)."""
        m, d = checked_call("nonholonomic phi", self._returned, g, None, eta).size, group.dim
        if self._d_eta is None:
            checked_call("∂φ/∂η of nonholonomic phi", self.derivative_eta, g, (m, d), eta, traced=False)
        else:
            check_derivative("nonholonomic d_eta", self._d_eta, self._autodiff_d_eta, g, (m, d), eta)
        if self._d_g is not None:
            check_derivative("nonholonomic d_g", self._d_g, lambda x, v: np.asarray(_autodiff_d_g(self, group, x, v)),
                             g, (m, d), eta)


def _autodiff_d_g(constraint: NonholonomicConstraint[P], group: LieGroup[P], g: P, eta: ArrayLike) -> jax.Array:
    """Trivialised ∂φ/∂g by autodiff, compiled once per constraint and group and kept on the constraint."""
    def d_g(x: P, v: ArrayLike) -> jax.Array:
        return trivialised_jacobian(group, lambda y: constraint.phi(y, v), x)

    return owned_jit(constraint, ("d_g", group), d_g)(g, eta)
