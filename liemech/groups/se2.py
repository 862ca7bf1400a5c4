"""SE(2): homogeneous 3×3 matrices; se(2) ≅ R³ with ξ = (v₁, v₂, ω), the order of
Martín de Diego & Sato Martín de Almagro (2018, §7.4)."""

import math
from typing import Final

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups import series
from liemech.groups.base import Retraction, RetractionKind
from liemech.groups.matrix_cayley import MatrixCayley
from liemech.groups.matrix_checks import checked_rigid_motion, checked_rigid_motions
from liemech.groups.matrix_group import MatrixGroup
from liemech.groups.so2 import rotation_angle
from liemech.input_checks import expect_shape
from liemech.jax_support import array_method
from liemech.types import Matrix, Vector, VectorLike

CUT_LOCUS_TOL: Final = 1e-9
"""exp⁻¹ raises within this angle of the cut locus ω = ±π."""

CAYLEY_POLE_TOL: Final = 1e-12
"""cay⁻¹ raises when 1 + cos θ falls below this (rotation by π)."""


def _rotation_times(c: ArrayLike, s: ArrayLike, x: ArrayLike, y: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """(c I + s J)(x, y) with J = [[0, −1], [1, 0]]."""
    c, s, x, y = (jnp.asarray(a, dtype=float) for a in (c, s, x, y))
    return c * x - s * y, s * x + c * y


class SE2(MatrixGroup):
    """SE(2): Ad_g = [[R, −Jp], [0, 1]], ad_ξ = [[0, −ω, v₂], [ω, 0, −v₁], [0, 0, 0]]."""

    size = 3

    @property
    def dim(self) -> int:
        return 3

    @array_method
    def inverse(self, g: Matrix) -> jax.Array:
        """[[R, p], [0, 1]]⁻¹ = [[Rᵀ, −Rᵀp], [0, 1]]."""
        expect_shape(g, (3, 3), "g")
        R_T = g[:2, :2].T
        return jnp.eye(3).at[:2, :2].set(R_T).at[:2, 2].set(-(R_T @ g[:2, 2]))

    @array_method
    def hat(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        return jnp.array([[0.0, -w, v1], [w, 0.0, v2], [0.0, 0.0, 0.0]])

    @array_method
    def vee(self, X: Matrix) -> jax.Array:
        expect_shape(X, (3, 3), "X")
        return jnp.array([X[0, 2], X[1, 2], X[1, 0]])

    @array_method
    def Ad(self, g: Matrix) -> jax.Array:
        expect_shape(g, (3, 3), "g")
        return jnp.array(
            [[g[0, 0], g[0, 1], g[1, 2]], [g[1, 0], g[1, 1], -g[0, 2]], [0.0, 0.0, 1.0]]
        )

    @array_method
    def ad(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        return jnp.array([[0.0, -w, v2], [w, 0.0, -v1], [0.0, 0.0, 0.0]])

    def check_point(self, g: object, name: str = "g") -> Matrix:
        return checked_rigid_motion(g, 2, name)

    def check_points(self, points: object, name: str = "g") -> Matrix:
        return checked_rigid_motions(points, 2, name)

    def _make_retractions(self) -> dict[RetractionKind, Retraction[Matrix]]:
        return {"exp": SE2Exp(self, "exp"), "cay": SE2Cayley(self)}

    def random_point(self, rng: np.random.Generator) -> Matrix:
        theta = rng.uniform(-math.pi, math.pi)
        x, y = rng.normal(size=2)
        c, s = math.cos(theta), math.sin(theta)
        return np.array([[c, -s, x], [s, c, y], [0.0, 0.0, 1.0]])


class SE2Exp(Retraction[Matrix]):
    """exp(ξ) = [[R(ω), V v], [0, 1]], V = (sin ω/ω) I + ω α J, α = (1 − cos ω)/ω².

    dτ = [[S, T J v], [0, 1]] with S = (sin ω/ω) I − ω α J and T = α I − ω β J, β = (ω − sin ω)/ω³;
    dτ⁻¹ = [[S⁻¹, −S⁻¹ T J v], [0, 1]] with S⁻¹ = (1 − ω²γ) I + (ω/2) J, γ as on SO(3).
    """

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        s = w * w
        x, y = _rotation_times(series.sinc(s), w * series.alpha(s), v1, v2)
        c, sn = jnp.cos(w), jnp.sin(w)
        return jnp.array([[c, -sn, x], [sn, c, y], [0.0, 0.0, 1.0]])

    def tau_inv(self, g: Matrix) -> Vector:
        """ω = atan2(g₂₁, g₁₁), v = V⁻¹ p with V⁻¹ = (1 − ω²γ) I − (ω/2) J = S⁻¹ᵀ."""
        g = self._group.check_point(g)
        w = rotation_angle(g[:2, :2])
        if math.pi - abs(w) < CUT_LOCUS_TOL:
            raise ValueError(
                f"exp⁻¹ is not unique at the cut locus: the rotation angle of g is {w!r}, "
                f"within {CUT_LOCUS_TOL:.0e} of ±π"
            )
        # S⁻¹ is the rotation block of dτ⁻¹(0, 0, ω): one compiled call, where γ run eagerly
        # dispatches op by op.
        v = self.dtau_inv(np.array([0.0, 0.0, w]))[:2, :2].T @ g[:2, 2]
        return np.array([v[0], v[1], w])

    def _blocks(self, w: ArrayLike) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
        """Coefficients (S_I, S_J, T_I, T_J) of S = S_I I + S_J J and T = T_I I + T_J J."""
        w = jnp.asarray(w, dtype=float)
        s = w * w
        a = series.alpha(s)
        return series.sinc(s), -w * a, a, -w * series.beta(s)

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        s_i, s_j, t_i, t_j = self._blocks(w)
        x, y = _rotation_times(t_i, t_j, -v2, v1)  # T J v
        return jnp.array([[s_i, -s_j, x], [s_j, s_i, y], [0.0, 0.0, 1.0]])

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        _, _, t_i, t_j = self._blocks(w)
        inv_i, inv_j = 1.0 - w * w * series.gamma(w * w), 0.5 * w
        x, y = _rotation_times(t_i, t_j, -v2, v1)  # T J v
        x, y = _rotation_times(inv_i, inv_j, x, y)  # S⁻¹ T J v
        return jnp.array([[inv_i, -inv_j, -x], [inv_j, inv_i, -y], [0.0, 0.0, 1.0]])

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> Matrix:
        """dτ⁻¹ · M with M δ = (η_ω T J δv + δω (S′ η_v + η_ω T′ J v), 0), ′ = d/dω.

        T J = t_I J − t_J I gives the δv columns.
        """
        expect_shape(xi, (3,), "xi")
        expect_shape(eta, (3,), "eta")
        v1, v2, w = xi
        e1, e2, ew = eta
        s = w * w
        _, _, t_i, t_j = self._blocks(w)
        a, b = series.alpha(s), series.beta(s)
        # S = sinc I − ωα J, T = α I − ωβ J; d/dω of f(ω²) is 2ω f_s.
        ds_i, ds_j = 2.0 * w * series.sinc_s(s), -(a + 2.0 * s * series.alpha_s(s))
        dt_i, dt_j = 2.0 * w * series.alpha_s(s), -(b + 2.0 * s * series.beta_s(s))
        x1, y1 = _rotation_times(ds_i, ds_j, e1, e2)
        x2, y2 = _rotation_times(dt_i, dt_j, -v2, v1)
        M = jnp.array(
            [
                [-ew * t_j, -ew * t_i, x1 + ew * x2],
                [ew * t_i, -ew * t_j, y1 + ew * y2],
                [0.0, 0.0, 0.0],
            ]
        )
        return self.dtau_inv(xi) @ M


class SE2Cayley(MatrixCayley):
    """cay on SE(2) in closed form; ddτ from the generic matrix formula."""

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        d = 4.0 + w * w
        c, s = (4.0 - w * w) / d, 4.0 * w / d
        return jnp.array(
            [
                [c, -s, 2.0 * (2.0 * v1 - w * v2) / d],
                [s, c, 2.0 * (w * v1 + 2.0 * v2) / d],
                [0.0, 0.0, 1.0],
            ]
        )

    def tau_inv(self, g: Matrix) -> Vector:
        """cay⁻¹ = (x + y t, y − x t, 2t) with t = tan(θ/2) = sin θ/(1 + cos θ)."""
        g = self._group.check_point(g)
        one_plus_cos = 1.0 + g[0, 0]
        if one_plus_cos < CAYLEY_POLE_TOL:
            raise ValueError(
                f"cay⁻¹ is undefined at a rotation by π: 1 + cos θ = {one_plus_cos:.3e} "
                f"< {CAYLEY_POLE_TOL:.0e}"
            )
        t = g[1, 0] / one_plus_cos
        x, y = g[0, 2], g[1, 2]
        return np.array([x + y * t, y - x * t, 2.0 * t])

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        return jnp.divide(jnp.array([[4.0, 2.0 * w, -2.0 * v2], [-2.0 * w, 4.0, 2.0 * v1], [0.0, 0.0, 4.0]]), 4.0 + w * w)

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = xi
        return jnp.array(
            [
                [1.0, -0.5 * w, 0.25 * w * v1 + 0.5 * v2],
                [0.5 * w, 1.0, 0.25 * w * v2 - 0.5 * v1],
                [0.0, 0.0, 1.0 + 0.25 * w * w],
            ]
        )
