"""Rⁿ as an additive group: points and algebra vectors are the same (n,) vectors."""

from typing import SupportsIndex

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind, unknown_kind
from liemech.input_checks import checked_count, checked_stack, checked_vector, expect_shape
from liemech.jax_support import array_method
from liemech.types import Matrix, Vector, VectorLike


class Rn(LieGroup[Vector]):
    """(Rⁿ, +): compose = addition, Ad = I, ad = 0; both retractions are the identity map."""

    def __init__(self, n: SupportsIndex) -> None:
        self._n = checked_count(n, "n")

    @property
    def dim(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"Rn({self._n})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rn) and other._n == self._n

    def __hash__(self) -> int:
        return hash(("Rn", self._n))

    @array_method
    def identity(self) -> jax.Array:
        return jnp.zeros(self._n)

    @array_method
    def compose(self, g: Vector, h: Vector) -> Vector:
        expect_shape(g, (self._n,), "g")
        expect_shape(h, (self._n,), "h")
        return g + h

    @array_method
    def inverse(self, g: Vector) -> Vector:
        expect_shape(g, (self._n,), "g")
        return -g

    @array_method
    def hat(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (self._n,), "xi")
        return jnp.asarray(xi, dtype=float)

    @array_method
    def vee(self, X: Vector) -> jax.Array:
        expect_shape(X, (self._n,), "X")
        return jnp.asarray(X, dtype=float)

    @array_method
    def Ad(self, g: Vector) -> jax.Array:
        expect_shape(g, (self._n,), "g")
        return jnp.eye(self._n)

    @array_method
    def ad(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (self._n,), "xi")
        return jnp.zeros((self._n, self._n))

    @array_method
    def Ad_star(self, g: Vector, mu: VectorLike) -> jax.Array:
        """μ (Ad = I), without the product with the dense identity, which XLA does not remove."""
        expect_shape(g, (self._n,), "g")
        expect_shape(mu, (self._n,), "mu")
        return jnp.asarray(mu, dtype=float)

    def check_point(self, g: object, name: str = "g") -> Vector:
        return checked_vector(g, self._n, name)

    def check_points(self, points: object, name: str = "g") -> Vector:
        return checked_stack(points, (self._n,), name)

    def random_point(self, rng: np.random.Generator) -> Vector:
        return rng.normal(size=self._n)

    def retraction(self, kind: RetractionKind = "cay") -> "TranslationRetraction":
        if kind not in RETRACTION_KINDS:
            raise unknown_kind(kind)
        return TranslationRetraction(self, kind)


class TranslationRetraction(Retraction[Vector]):
    """τ(ξ) = ξ on Rⁿ (exp and cay coincide): dτ = dτ⁻¹ = I, ddτ = 0."""

    @array_method
    def tau(self, xi: VectorLike) -> Vector:
        return self._group.hat(xi)

    def tau_inv(self, g: Vector) -> Vector:
        return self._group.vee(g)

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (self._group.dim,), "xi")
        return jnp.eye(self._group.dim)

    @array_method
    def dtau_inv(self, xi: VectorLike) -> Matrix:
        return self.dtau(xi)

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        expect_shape(xi, (self._group.dim,), "xi")
        expect_shape(eta, (self._group.dim,), "eta")
        return jnp.zeros((self._group.dim, self._group.dim))

    # dτ = I and ddτ = 0 applied without the dense matrices: XLA does not remove products with
    # identity or zero matrices, and a translation factor of a product group (the centres of mass
    # of ``liemech.multibody``) would cost (dim)² per stage and per Newton tangent.

    @array_method
    def dtau_times(self, xi: VectorLike, v: VectorLike) -> jax.Array:
        """v."""
        expect_shape(xi, (self._group.dim,), "xi")
        expect_shape(v, (self._group.dim,), "v")
        return jnp.asarray(v, dtype=float)

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """μ."""
        expect_shape(xi, (self._group.dim,), "xi")
        expect_shape(mu, (self._group.dim,), "mu")
        return jnp.asarray(mu, dtype=float)

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> jax.Array:
        """0."""
        expect_shape(xi, (self._group.dim,), "xi")
        expect_shape(eta, (self._group.dim,), "eta")
        expect_shape(mu, (self._group.dim,), "mu")
        return jnp.zeros(self._group.dim)
