"""SE(2): homogeneous 3×3 matrices; se(2) ≅ R³ with ξ = (v₁, v₂, ω) (spec 004-Lie §1.7(d))."""

import math
from typing import Final

import numpy as np

from liemech.groups import series
from liemech.groups.base import Retraction, RetractionKind
from liemech.groups.matrix_cayley import MatrixCayley
from liemech.groups.matrix_group import MatrixGroup
from liemech.groups.so2 import rotation_angle
from liemech.groups.validation import checked_rigid_motion, expect_shape
from liemech.types import Matrix, Vector

CUT_LOCUS_TOL: Final = 1e-9
"""exp⁻¹ raises within this angle of the cut locus ω = ±π."""

CAYLEY_POLE_TOL: Final = 1e-12
"""cay⁻¹ raises when 1 + cos θ falls below this (rotation by π)."""


def _rotation_times(c: float, s: float, x: float, y: float) -> tuple[float, float]:
    """(c I + s J)(x, y) with J = [[0, −1], [1, 0]]."""
    return c * x - s * y, s * x + c * y


class SE2(MatrixGroup):
    """SE(2): Ad_g = [[R, −Jp], [0, 1]], ad_ξ = [[0, −ω, v₂], [ω, 0, −v₁], [0, 0, 0]]."""

    size = 3

    @property
    def dim(self) -> int:
        return 3

    def inverse(self, g: Matrix) -> Matrix:
        """[[R, p], [0, 1]]⁻¹ = [[Rᵀ, −Rᵀp], [0, 1]]."""
        expect_shape(g, (3, 3), "g")
        out = np.eye(3)
        out[:2, :2] = g[:2, :2].T
        out[:2, 2] = -(g[:2, :2].T @ g[:2, 2])
        return out

    def hat(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        return np.array([[0.0, -w, v1], [w, 0.0, v2], [0.0, 0.0, 0.0]])

    def vee(self, X: Matrix) -> Vector:
        expect_shape(X, (3, 3), "X")
        return np.array([X[0, 2], X[1, 2], X[1, 0]])

    def Ad(self, g: Matrix) -> Matrix:
        expect_shape(g, (3, 3), "g")
        return np.array(
            [[g[0, 0], g[0, 1], g[1, 2]], [g[1, 0], g[1, 1], -g[0, 2]], [0.0, 0.0, 1.0]]
        )

    def ad(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        return np.array([[0.0, -w, v2], [w, 0.0, -v1], [0.0, 0.0, 0.0]])

    def check_point(self, g: object, name: str = "g") -> Matrix:
        return checked_rigid_motion(g, 2, name)

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

    def tau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        s = w * w
        x, y = _rotation_times(series.sinc(s), w * series.alpha(s), v1, v2)
        c, sn = math.cos(w), math.sin(w)
        return np.array([[c, -sn, x], [sn, c, y], [0.0, 0.0, 1.0]])

    def tau_inv(self, g: Matrix) -> Vector:
        """ω = atan2(g₂₁, g₁₁), v = V⁻¹ p with V⁻¹ = (1 − ω²γ) I − (ω/2) J."""
        g = self._group.check_point(g)
        w = rotation_angle(g[:2, :2])
        if math.pi - abs(w) < CUT_LOCUS_TOL:
            raise ValueError(
                f"exp⁻¹ is not unique at the cut locus: the rotation angle of g is {w!r}, "
                f"within {CUT_LOCUS_TOL:.0e} of ±π"
            )
        v1, v2 = _rotation_times(1.0 - w * w * series.gamma(w * w), -0.5 * w, g[0, 2], g[1, 2])
        return np.array([v1, v2, w])

    def _blocks(self, w: float) -> tuple[float, float, float, float]:
        """Coefficients (S_I, S_J, T_I, T_J) of S = S_I I + S_J J and T = T_I I + T_J J."""
        s = w * w
        a = series.alpha(s)
        return series.sinc(s), -w * a, a, -w * series.beta(s)

    def dtau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        s_i, s_j, t_i, t_j = self._blocks(w)
        x, y = _rotation_times(t_i, t_j, -v2, v1)  # T J v
        return np.array([[s_i, -s_j, x], [s_j, s_i, y], [0.0, 0.0, 1.0]])

    def dtau_inv(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        _, _, t_i, t_j = self._blocks(w)
        inv_i, inv_j = 1.0 - w * w * series.gamma(w * w), 0.5 * w
        x, y = _rotation_times(t_i, t_j, -v2, v1)  # T J v
        x, y = _rotation_times(inv_i, inv_j, x, y)  # S⁻¹ T J v
        return np.array([[inv_i, -inv_j, -x], [inv_j, inv_i, -y], [0.0, 0.0, 1.0]])

    def ddtau(self, xi: Vector, eta: Vector) -> Matrix:
        """dτ⁻¹ · M with M δ = (η_ω T J δv + δω (S′ η_v + η_ω T′ J v), 0), ′ = d/dω.

        T J = t_I J − t_J I gives the δv columns.
        """
        expect_shape(eta, (3,), "eta")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        e1, e2, ew = float(eta[0]), float(eta[1]), float(eta[2])
        s = w * w
        _, _, t_i, t_j = self._blocks(w)
        a, b = series.alpha(s), series.beta(s)
        # S = sinc I − ωα J, T = α I − ωβ J; d/dω of f(ω²) is 2ω f_s.
        ds_i, ds_j = 2.0 * w * series.sinc_s(s), -(a + 2.0 * s * series.alpha_s(s))
        dt_i, dt_j = 2.0 * w * series.alpha_s(s), -(b + 2.0 * s * series.beta_s(s))
        x1, y1 = _rotation_times(ds_i, ds_j, e1, e2)
        x2, y2 = _rotation_times(dt_i, dt_j, -v2, v1)
        M = np.array(
            [
                [-ew * t_j, -ew * t_i, x1 + ew * x2],
                [ew * t_i, -ew * t_j, y1 + ew * y2],
                [0.0, 0.0, 0.0],
            ]
        )
        D: Matrix = self.dtau_inv(xi) @ M
        return D


class SE2Cayley(MatrixCayley):
    """cay on SE(2) in closed form (spec 004-Lie §1.7(d)); ddτ from the generic matrix formula."""

    def tau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        d = 4.0 + w * w
        c, s = (4.0 - w * w) / d, 4.0 * w / d
        return np.array(
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

    def dtau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        c = 1.0 / (4.0 + w * w)
        return c * np.array([[4.0, 2.0 * w, -2.0 * v2], [-2.0 * w, 4.0, 2.0 * v1], [0.0, 0.0, 4.0]])

    def dtau_inv(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        v1, v2, w = float(xi[0]), float(xi[1]), float(xi[2])
        return np.array(
            [
                [1.0, -0.5 * w, 0.25 * w * v1 + 0.5 * v2],
                [0.5 * w, 1.0, 0.25 * w * v2 - 0.5 * v1],
                [0.0, 0.0, 1.0 + 0.25 * w * w],
            ]
        )
