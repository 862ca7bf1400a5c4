"""Rⁿ as an additive group: points and algebra vectors are the same (n,) vectors."""

from typing import SupportsIndex

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind, unknown_kind
from liemech.groups.validation import checked_count, checked_stack, checked_vector, expect_shape
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
