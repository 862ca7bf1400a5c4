"""The interface an integrator needs from a trivialised Lagrangian ℓ(g, η) on G × 𝔤."""

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup
from liemech.jax_support import array_method
from liemech.mechanics.callbacks import DERIVATIVE_TOL, checked_call, require_symmetric_positive_definite
from liemech.mechanics.trivialised import derivative_in_eta, trivialised_gradient, trivialised_jacobian
from liemech.numerics.lu import solve
from liemech.owned_compilation import OwnsCompiledCode, owned_cache
from liemech.types import Vector, VectorLike

P = TypeVar("P")


class Lagrangian(OwnsCompiledCode, ABC, Generic[P]):
    """ℓ: G × 𝔤 → R, written with ``jax.numpy``; every derivative comes from autodiff.

    μ = ∂ℓ/∂η; ``f = L*_g D₁ℓ`` with ⟨f, ζ⟩ = d/dε ℓ(g τ(εζ), η)|₀; the ``*_d_g`` derivatives are
    trivialised the same way: (d_g X)ζ = d/dε X(g τ(εζ), η)|₀. Continuous equations (Martín de
    Diego & Sato Martín de Almagro 2018, §6): ``μ̇ = ad*_η μ + f``, ġ = g η.

    A subclass gives ``lagrangian`` and ``velocity`` (both traceable); the derivative methods
    return numpy arrays on concrete input and may be called inside JAX transformations.
    """

    @property
    @abstractmethod
    def group(self) -> LieGroup[P]:
        """The configuration space G."""

    @abstractmethod
    def lagrangian(self, g: P, eta: ArrayLike) -> jax.Array:
        """ℓ(g, η) as a 0-d array (traceable)."""

    @abstractmethod
    def velocity(self, g: P, mu: VectorLike) -> Vector:
        """The inverse Legendre map: η with ∂ℓ/∂η (g, η) = μ."""

    @property
    def compiled_steps(self) -> dict[Hashable, Callable[..., Any]]:
        """The compiled steps of the methods run on this system, filled by ``integrate``: every
        problem built on the same system object reuses them (new initial data do not recompile),
        and they are freed with the system (``liemech.owned_compilation``)."""
        steps: dict[Hashable, Callable[..., Any]] = owned_cache(self).setdefault("steps", {})
        return steps

    def value(self, g: P, eta: Vector) -> float:
        """ℓ(g, η) as a float."""
        return float(self._compiled_lagrangian(g, eta))

    @array_method
    def _compiled_lagrangian(self, g: P, eta: ArrayLike) -> jax.Array:
        return self.lagrangian(g, eta)

    @array_method
    def momentum(self, g: P, eta: ArrayLike) -> jax.Array:
        """μ = ∂ℓ/∂η (g, η)."""
        return jnp.asarray(jax.grad(self.lagrangian, argnums=1)(g, jnp.asarray(eta, dtype=float)))

    @array_method
    def force(self, g: P, eta: ArrayLike) -> jax.Array:
        """f = L*_g D₁ℓ (g, η)."""
        return trivialised_gradient(self.group, lambda x: self.lagrangian(x, eta), g)

    @array_method
    def momentum_d_eta(self, g: P, eta: ArrayLike) -> jax.Array:
        """∂μ/∂η = ∂²ℓ/∂η² (the mass matrix)."""
        return derivative_in_eta(self.momentum, g, eta)

    @array_method
    def mass_solve(self, g: P, eta: ArrayLike, rhs: ArrayLike) -> jax.Array:
        """M⁻¹ rhs with M = ∂²ℓ/∂η² (g, η) the mass matrix; ``rhs`` a vector or a matrix of columns."""
        return solve(jnp.asarray(self.momentum_d_eta(g, eta)), jnp.asarray(rhs, dtype=float))

    @array_method
    def momentum_d_g(self, g: P, eta: ArrayLike) -> jax.Array:
        """ζ ↦ d/dε μ(g τ(εζ), η)|₀."""
        return trivialised_jacobian(self.group, lambda x: self.momentum(x, eta), g)

    @array_method
    def force_d_eta(self, g: P, eta: ArrayLike) -> jax.Array:
        """δ ↦ d/dε f(g, η + εδ)|₀."""
        return derivative_in_eta(self.force, g, eta)

    @array_method
    def force_d_g(self, g: P, eta: ArrayLike) -> jax.Array:
        """ζ ↦ d/dε f(g τ(εζ), η)|₀."""
        return trivialised_jacobian(self.group, lambda x: self.force(x, eta), g)

    def check_at(self, g: P, eta: Vector) -> None:
        """Check the user's callbacks at the initial point (g, η): the mass matrix ∂²ℓ/∂η² symmetric
        positive definite, ℓ a real finite scalar, the force f finite (errors name the callback)."""
        self.check_mass_matrix(g, eta)
        # Traced by check_mass_matrix (a MechanicalSystem traces its potential and inertia instead).
        checked_call("lagrangian", self.lagrangian, g, (), eta, traced=False)
        checked_call("the force f = L*_g D₁ℓ (the potential's gradient)", self.force, g, (self.group.dim,), eta,
                     traced=False)

    def check_mass_matrix(self, g: P, eta: Vector) -> None:
        """ValueError unless ∂²ℓ/∂η² at (g, η) is a finite symmetric positive definite matrix."""
        d = self.group.dim
        checked_call("lagrangian", self.lagrangian, g, (), eta)  # first: the mass matrix is its derivative
        M = checked_call("the mass matrix ∂²ℓ/∂η²", self.momentum_d_eta, g, (d, d), eta, traced=False)
        require_symmetric_positive_definite(M, d, "the mass matrix ∂²ℓ/∂η² at g0")

    def check_velocity(self, g: P, mu: Vector) -> None:
        """ValueError unless ``velocity`` inverts the momentum at (g, μ): ∂ℓ/∂η (g, velocity(g, μ)) = μ."""
        eta = checked_call("velocity", self.velocity, g, (self.group.dim,), mu)
        defect = float(np.max(np.abs(np.asarray(self.momentum(g, eta)) - mu)))
        if not defect <= DERIVATIVE_TOL * max(1.0, float(np.max(np.abs(mu)))):
            raise ValueError(f"velocity does not invert the momentum ∂ℓ/∂η at the initial point: "
                             f"|∂ℓ/∂η (g0, velocity(g0, mu0)) − mu0| = {defect:.3e}")

    def energy(self, g: P, eta: Vector) -> float:
        """E = ⟨μ, η⟩ − ℓ."""
        return float(self.momentum(g, eta) @ eta) - self.value(g, eta)
