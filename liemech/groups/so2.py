"""SO(2): planar rotations as 2×2 matrices; so(2) ≅ R, ξ = (ω,)."""

import math
from typing import Final

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.base import Retraction, RetractionKind
from liemech.groups.matrix_checks import checked_rotation, checked_rotations
from liemech.groups.matrix_group import MatrixGroup
from liemech.input_checks import expect_shape
from liemech.jax_support import array_method
from liemech.types import Matrix, Vector, VectorLike

CUT_LOCUS_TOL: Final = 1e-9
"""exp⁻¹ raises within this angle of the cut locus θ = π, where the logarithm is not unique."""

CAYLEY_POLE_TOL: Final = 1e-12
"""cay⁻¹ raises when 1 + cos θ falls below this (a rotation by π has no Cayley preimage)."""


def rotation_angle(R: Matrix) -> float:
    """θ ∈ (−π, π] with R = R(θ)."""
    return math.atan2(R[1, 0], R[0, 0])


class SO2(MatrixGroup):
    """SO(2), an abelian group: Ad = 1 and ad = 0."""

    size = 2

    @property
    def dim(self) -> int:
        return 1

    @array_method
    def inverse(self, g: Matrix) -> Matrix:
        expect_shape(g, (2, 2), "g")
        return g.T

    @array_method
    def hat(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        w = xi[0]
        return jnp.array([[0.0, -w], [w, 0.0]])

    @array_method
    def vee(self, X: Matrix) -> jax.Array:
        expect_shape(X, (2, 2), "X")
        return jnp.array([X[1, 0]])

    @array_method
    def Ad(self, g: Matrix) -> jax.Array:
        expect_shape(g, (2, 2), "g")
        return jnp.ones((1, 1))

    @array_method
    def ad(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        return jnp.zeros((1, 1))

    def check_point(self, g: object, name: str = "g") -> Matrix:
        return checked_rotation(g, 2, name)

    def check_points(self, points: object, name: str = "g") -> Matrix:
        return checked_rotations(points, 2, name)

    def random_point(self, rng: np.random.Generator) -> Matrix:
        return self.retraction("exp").tau(np.array([rng.uniform(-math.pi, math.pi)]))

    def _make_retractions(self) -> dict[RetractionKind, Retraction[Matrix]]:
        return {"exp": SO2Exp(self, "exp"), "cay": SO2Cayley(self, "cay")}


class SO2Exp(Retraction[Matrix]):
    """exp(ω) = R(ω); so(2) is abelian, so dτ = dτ⁻¹ = 1 and ddτ = 0."""

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        """R(ω) = [[cos ω, −sin ω], [sin ω, cos ω]]."""
        expect_shape(xi, (1,), "xi")
        c, s = jnp.cos(xi[0]), jnp.sin(xi[0])
        return jnp.array([[c, -s], [s, c]])

    def tau_inv(self, g: Matrix) -> Vector:
        R = self._group.check_point(g)
        theta = rotation_angle(R)
        if math.pi - abs(theta) < CUT_LOCUS_TOL:
            raise ValueError(
                f"exp⁻¹ is not unique at the cut locus: g is a rotation by {theta!r}, "
                f"within {CUT_LOCUS_TOL:.0e} of ±π"
            )
        return np.array([theta])

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        return jnp.ones((1, 1))

    @array_method
    def dtau_inv(self, xi: VectorLike) -> Matrix:
        return self.dtau(xi)

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        expect_shape(eta, (1,), "eta")
        return jnp.zeros((1, 1))


class SO2Cayley(Retraction[Matrix]):
    """cay(ω) = R(2 arctan(ω/2)): dτ = 4/(4+ω²), dτ⁻¹ = 1 + ω²/4, ddτ(ω, η) = −2ωη/(4+ω²)."""

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        w = xi[0]
        d = 4.0 + w * w
        c, s = (4.0 - w * w) / d, 4.0 * w / d
        return jnp.array([[c, -s], [s, c]])

    def tau_inv(self, g: Matrix) -> Vector:
        R = self._group.check_point(g)
        one_plus_cos = 1.0 + R[0, 0]
        if one_plus_cos < CAYLEY_POLE_TOL:
            raise ValueError(
                f"cay⁻¹ is undefined at a rotation by π: 1 + cos θ = {one_plus_cos:.3e} "
                f"< {CAYLEY_POLE_TOL:.0e}"
            )
        return np.array([2.0 * R[1, 0] / one_plus_cos])

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        w = xi[0]
        return jnp.array([[4.0 / (4.0 + w * w)]])

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        w = xi[0]
        return jnp.array([[1.0 + 0.25 * w * w]])

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        expect_shape(xi, (1,), "xi")
        expect_shape(eta, (1,), "eta")
        w = xi[0]
        return jnp.array([[-2.0 * w * eta[0] / (4.0 + w * w)]])
