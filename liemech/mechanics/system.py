"""ℓ(g, η) = ½ ηᵀ 𝕀(g) η − V(g): the mechanical systems of every example in the papers."""

import functools
from collections.abc import Callable
from typing import Generic, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups.base import LieGroup
from liemech.jax_support import array_method
from liemech.mechanics.callbacks import (
    check_derivative,
    checked_call,
    require_callable,
    require_symmetric_positive_definite,
)
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.trivialised import trivialised_gradient, trivialised_jacobian
from liemech.numerics.lu import solve
from liemech.types import Matrix, OnPoint, PointFunction, Tensor, Vector

P = TypeVar("P")


def _constant(value: Matrix, g: object) -> Matrix:
    """The constant inertia, whatever g: a module-level function so that systems pickle."""
    return value


class MechanicalSystem(Lagrangian[P], Generic[P]):
    """ℓ(g, η) = ½ ηᵀ 𝕀 η − V(g) with 𝕀 symmetric positive definite.

    ``potential`` g ↦ V(g) and a callable ``inertia`` g ↦ 𝕀(g) (the mass matrix M(q) of
    Rojas-Quintero, Dubois & Jourdan 2025) are written with ``jax.numpy``; every derivative comes
    from automatic differentiation along g τ(εζ), exact to round-off. ``inertia`` may also be a
    constant matrix; a diagonal one is applied elementwise, which compiled steps run faster.

    Derivatives may still be given; each is compared with autodiff at the initial point of every
    ``Problem`` built on the system (a mismatch raises ValueError naming it), and the eager
    methods below return it: ``potential_gradient`` g ↦ ∇V(g) with ⟨∇V, ζ⟩ = d/dε V(g τ(εζ));
    ``potential_hessian`` g ↦ (d/dε ∇V(g τ(εζ))) as a (dim, dim) matrix; ``inertia_gradient``
    g ↦ (dim, dim, dim) with [k] = d/dε 𝕀(g τ(ε e_k)); ``inertia_hessian`` g ↦ (dim, dim, dim, dim)
    with [k, l] = d/dε (∂_k 𝕀)(g τ(ε e_l)). The compiled integrators always differentiate V and 𝕀
    themselves. Then f = ½ ηᵀ (∂_k 𝕀) η − ∇V.

    A system (and a ``Problem`` on it) pickles when its callbacks do: module-level functions and
    bound methods of picklable objects. The standard library cannot pickle lambdas or local
    functions; ``cloudpickle`` (which Dask uses) can.
    """

    def __init__(
        self,
        group: LieGroup[P],
        inertia: Matrix | PointFunction[P],
        potential: PointFunction[P],
        potential_gradient: PointFunction[P] | None = None,
        potential_hessian: PointFunction[P] | None = None,
        inertia_gradient: PointFunction[P] | None = None,
        inertia_hessian: PointFunction[P] | None = None,
    ) -> None:
        if not isinstance(group, LieGroup):
            raise TypeError(f"group must be a LieGroup, got {type(group).__name__}")
        require_callable(potential, "potential", "g -> float")
        for name, fn, signature in (("potential_gradient", potential_gradient, "g -> (dim,)"),
                                    ("potential_hessian", potential_hessian, "g -> (dim, dim)"),
                                    ("inertia_gradient", inertia_gradient, "g -> (dim, dim, dim)"),
                                    ("inertia_hessian", inertia_hessian, "g -> (dim, dim, dim, dim)")):
            require_callable(fn, name, signature, optional=True)
        self._group = group
        self._constant_inertia: Matrix | None = None
        # A constant diagonal 𝕀 (point masses, a rigid body in principal axes) acts elementwise: XLA
        # runs every matrix product as a kernel of its own, where elementwise products fuse with
        # the arithmetic around them.
        self._inertia_diagonal: Vector | None = None
        self._inertia_fn: OnPoint[P]
        if callable(inertia):
            self._inertia_fn = cast(OnPoint[P], inertia)
        else:
            M = require_symmetric_positive_definite(inertia, group.dim, "inertia")
            self._constant_inertia = M
            self._inertia_inv = np.linalg.inv(M)
            self._inertia_fn = functools.partial(_constant, M)
            if np.array_equal(M, np.diag(np.diag(M))):
                self._inertia_diagonal = np.diag(M).copy()
        # Typed by the user with numpy or JAX arrays; liemech calls them with either.
        self._potential = cast(OnPoint[P], potential)
        self._given = cast(dict[str, OnPoint[P] | None], {
            "potential_gradient": potential_gradient,
            "potential_hessian": potential_hessian,
            "inertia_gradient": inertia_gradient,
            "inertia_hessian": inertia_hessian,
        })

    @property
    def group(self) -> LieGroup[P]:
        return self._group

    @property
    def constant_inertia(self) -> Matrix | None:
        """𝕀 when it does not depend on g, else None."""
        return self._constant_inertia

    def lagrangian(self, g: P, eta: ArrayLike) -> jax.Array:
        eta = jnp.asarray(eta, dtype=float)
        return 0.5 * eta @ self._inertia_product(g, eta) - jnp.asarray(self._potential(g), dtype=float).reshape(())

    @array_method
    def momentum(self, g: P, eta: ArrayLike) -> jax.Array:
        """μ = 𝕀(g) η."""
        return self._inertia_product(g, jnp.asarray(eta, dtype=float))

    def _inertia_product(self, g: P, eta: jax.Array) -> jax.Array:
        if self._inertia_diagonal is not None:
            return jnp.asarray(self._inertia_diagonal) * eta
        return jnp.asarray(self._inertia_fn(g), dtype=float) @ eta

    @array_method
    def force(self, g: P, eta: ArrayLike) -> jax.Array:
        """f = ½ ηᵀ (∂_k 𝕀) η − ∇V, only −∇V for constant inertia."""
        if self._constant_inertia is None:
            return jnp.asarray(super().force(g, eta))
        return -trivialised_gradient(self._group, self._potential, g)

    @array_method
    def velocity(self, g: P, mu: ArrayLike) -> jax.Array:
        """η = 𝕀(g)⁻¹ μ."""
        return self._inertia_solve(g, mu)

    @array_method
    def mass_solve(self, g: P, eta: ArrayLike, rhs: ArrayLike) -> jax.Array:
        """𝕀(g)⁻¹ rhs (the mass matrix does not depend on η)."""
        return self._inertia_solve(g, rhs)

    def _inertia_solve(self, g: P, rhs: ArrayLike) -> jax.Array:
        # A constant 𝕀 is inverted once: the compiled steps solve with it at every Newton iteration,
        # and a product costs less than a factorisation.
        rhs = jnp.asarray(rhs, dtype=float)
        if self._inertia_diagonal is not None:
            return rhs / jnp.asarray(self._inertia_diagonal).reshape(-1, *(1,) * (rhs.ndim - 1))
        if self._constant_inertia is not None:
            return jnp.asarray(self._inertia_inv) @ rhs
        return solve(jnp.asarray(self._inertia_fn(g), dtype=float), rhs)

    @array_method
    def inertia(self, g: P) -> jax.Array:
        """𝕀(g)."""
        return jnp.asarray(self._inertia_fn(g), dtype=float)

    @array_method
    def potential_value(self, g: P) -> jax.Array:
        """V(g) as a 0-d array (traceable: the compiled schemes differentiate it)."""
        return jnp.asarray(self._potential(g), dtype=float)

    @array_method
    def _returned_potential(self, g: P) -> jax.Array:
        """V(g) as the callback returns it (complex stays complex, for the check at g0)."""
        return jnp.asarray(self._potential(g))

    @array_method
    def _returned_inertia(self, g: P) -> jax.Array:
        """𝕀(g) as the callback returns it (complex stays complex, for the check at g0)."""
        return jnp.asarray(self._inertia_fn(g))

    def potential(self, g: P) -> float:
        """V(g)."""
        return float(self.potential_value(g))

    # ---- derivatives: given, else autodiff ----------------------------------------------------

    @array_method
    def _autodiff_potential_gradient(self, g: P) -> jax.Array:
        return trivialised_gradient(self._group, self._potential, g)

    @array_method
    def _autodiff_potential_hessian(self, g: P) -> jax.Array:
        return trivialised_jacobian(self._group, self._autodiff_potential_gradient, g)

    @array_method
    def _autodiff_inertia_gradient(self, g: P) -> jax.Array:
        return jnp.moveaxis(trivialised_jacobian(self._group, self._inertia_fn, g), 2, 0)

    @array_method
    def _autodiff_inertia_hessian(self, g: P) -> jax.Array:
        return jnp.moveaxis(trivialised_jacobian(self._group, self._autodiff_inertia_gradient, g), 3, 1)

    def _derivative(self, name: str, autodiff: Callable[[P], Vector], g: P) -> Vector:
        given = self._given[name]
        return autodiff(g) if given is None else np.asarray(given(g), dtype=np.float64)

    def potential_gradient(self, g: P) -> Vector:
        """∇V(g), trivialised: ⟨∇V, ζ⟩ = d/dε V(g τ(εζ))|₀."""
        return self._derivative("potential_gradient", self._autodiff_potential_gradient, g)

    def potential_hessian(self, g: P) -> Matrix:
        """ζ ↦ d/dε ∇V(g τ(εζ))|₀ (not symmetric in general on a non-abelian group)."""
        return self._derivative("potential_hessian", self._autodiff_potential_hessian, g)

    def inertia_gradient(self, g: P) -> Tensor:
        """[k] = d/dε 𝕀(g τ(ε e_k))|₀, shape (dim, dim, dim); zero for constant inertia."""
        return self._derivative("inertia_gradient", self._autodiff_inertia_gradient, g)

    def inertia_hessian(self, g: P) -> Tensor:
        """[k, l] = d/dε (∂_k 𝕀)(g τ(ε e_l))|₀, shape (dim, dim, dim, dim); zero for constant inertia."""
        return self._derivative("inertia_hessian", self._autodiff_inertia_hessian, g)

    # ---- checks at the initial point ----------------------------------------------------------

    def check_at(self, g: P, eta: Vector) -> None:
        """Check the callbacks at g: V a finite real scalar, 𝕀(g) symmetric positive definite, the
        force finite, and every given derivative equal to autodiff (ValueError naming the callback
        otherwise); a callback JAX cannot trace raises TypeError saying what to change."""
        d = self._group.dim
        checked_call("potential", self._returned_potential, g, ())
        super().check_at(g, eta)
        autodiff = {
            "potential_gradient": (self._autodiff_potential_gradient, (d,)),
            "potential_hessian": (self._autodiff_potential_hessian, (d, d)),
            "inertia_gradient": (self._autodiff_inertia_gradient, (d, d, d)),
            "inertia_hessian": (self._autodiff_inertia_hessian, (d, d, d, d)),
        }
        for name, given in self._given.items():
            if given is not None:
                reference, shape = autodiff[name]
                check_derivative(name, given, reference, g, shape)

    def check_mass_matrix(self, g: P, eta: Vector) -> None:
        """A callable 𝕀: 𝕀(g) symmetric positive definite (a constant one was checked when given)."""
        if self._constant_inertia is None:
            d = self._group.dim
            M = checked_call("inertia", self._returned_inertia, g, (d, d))
            require_symmetric_positive_definite(M, d, "inertia(g0)")
