"""SO(3): rotation matrices; so(3) ≅ R³ with hat the cross-product matrix (spec 004-Lie §1.7(c)).

The module-level functions give the exponential's left-trivialised tangent J(ω) = d^L exp_ω and
its first two derivatives; SE(3) builds its exponential tangents from them.
"""

import math
from typing import Final

import numpy as np

from liemech.groups import series
from liemech.groups.base import Retraction, RetractionKind
from liemech.groups.matrix_group import MatrixGroup
from liemech.groups.validation import checked_rotation, expect_shape
from liemech.types import Matrix, Tensor, Vector

CUT_LOCUS_TOL: Final = 1e-9
"""exp⁻¹ raises within this angle of the cut locus θ = π, where the logarithm is not unique."""

CAYLEY_POLE_TOL: Final = 1e-12
"""cay⁻¹ raises when 1 + tr R falls below this (a rotation by π has no Cayley preimage)."""


def skew(v: Vector) -> Matrix:
    """v̂ with v̂ w = v × w."""
    x, y, z = float(v[0]), float(v[1]), float(v[2])
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def _combine(a: float, b: float, c: float, v: Vector) -> Matrix:
    """a I + b v̂ + c v vᵀ, built entry by entry (no temporaries)."""
    x, y, z = float(v[0]), float(v[1]), float(v[2])
    return np.array(
        [
            [a + c * x * x, c * x * y - b * z, c * x * z + b * y],
            [c * x * y + b * z, a + c * y * y, c * y * z - b * x],
            [c * x * z - b * y, c * y * z + b * x, a + c * z * z],
        ]
    )


def cross(a: Vector, b: Vector) -> Vector:
    """a × b without np.cross (which costs ~17 µs for two 3-vectors)."""
    return np.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


def exp_matrix(w: Vector) -> Matrix:
    """exp(ω̂) = I + (sin θ/θ) ω̂ + α ω̂², α = (1 − cos θ)/θ², written as cos θ I + … ."""
    s = float(w @ w)
    a = series.alpha(s)
    return _combine(1.0 - a * s, series.sinc(s), a, w)


def dexp(w: Vector) -> Matrix:
    """J(ω) = d^L exp_ω = I − α ω̂ + β ω̂² (the tangent with d/dε exp(ω+εv) = exp(ω) (J v)^)."""
    s = float(w @ w)
    b = series.beta(s)
    return _combine(1.0 - b * s, -series.alpha(s), b, w)


def dexp_inv(w: Vector) -> Matrix:
    """J(ω)⁻¹ = I + ½ ω̂ + γ ω̂², γ = 1/θ² − cot(θ/2)/(2θ)."""
    s = float(w @ w)
    g = series.gamma(s)
    return _combine(1.0 - g * s, 0.5, g, w)


def dexp_directional(w: Vector, u: Vector) -> Matrix:
    """d/dε J(ω + εu)|₀ = −2α_s(ω·u) ω̂ − α û + 2β_s(ω·u) ω̂² + β(ûω̂ + ω̂û)."""
    s = float(w @ w)
    wu = float(w @ u)
    W, U = skew(w), skew(u)
    return (
        -2.0 * series.alpha_s(s) * wu * W
        - series.alpha(s) * U
        + 2.0 * series.beta_s(s) * wu * (W @ W)
        + series.beta(s) * (U @ W + W @ U)
    )


def dexp_derivative(w: Vector, eta: Vector) -> Matrix:
    """K(ω, η) with K δ = d/dε [J(ω + εδ) η]|₀.

    J = I − α ω̂ + β ω̂² with α, β functions of s = θ², so
    K = −2α_s (ω̂η) ωᵀ + α η̂ + 2β_s (ω̂²η) ωᵀ − β ((ω̂η)^ + ω̂ η̂).
    """
    s = float(w @ w)
    a, b = series.alpha(s), series.beta(s)
    a_s, b_s = series.alpha_s(s), series.beta_s(s)
    W = skew(w)
    w_eta = W @ eta
    return (
        np.outer(2.0 * b_s * (W @ w_eta) - 2.0 * a_s * w_eta, w)
        + a * skew(eta)
        - b * (skew(w_eta) + W @ skew(eta))
    )


def dexp_second_derivative(w: Vector, u: Vector, eta: Vector) -> Matrix:
    """L(ω, u, η) with L δ = d/dε [K(ω + εδ, η) u]|₀ = d²/dε dσ J(ω + εδ + σu) η.

    Differentiating K u = −2α_s(ω·u) ω̂η − α ûη + 2β_s(ω·u) ω̂²η + β(ûω̂ + ω̂û)η along δ.
    """
    s = float(w @ w)
    a_s, b_s = series.alpha_s(s), series.beta_s(s)
    a_ss, b_ss = series.alpha_ss(s), series.beta_ss(s)
    b = series.beta(s)
    wu = float(w @ u)
    W, U, E = skew(w), skew(u), skew(eta)
    w_eta = W @ eta  # ω̂η
    ww_eta = W @ w_eta  # ω̂²η
    u_eta = U @ eta  # ûη
    sym_u_eta = U @ w_eta + W @ u_eta  # (ûω̂ + ω̂û)η
    return (
        np.outer(
            -4.0 * a_ss * wu * w_eta - 2.0 * a_s * u_eta + 4.0 * b_ss * wu * ww_eta + 2.0 * b_s * sym_u_eta,
            w,
        )
        + np.outer(2.0 * b_s * ww_eta - 2.0 * a_s * w_eta, u)
        + 2.0 * a_s * wu * E
        - 2.0 * b_s * wu * (skew(w_eta) + W @ E)
        - b * (U @ E + skew(u_eta))
    )


_LEVI_CIVITA: Final = np.array(
    [[[float((i - j) * (j - k) * (k - i) / 2) for k in range(3)] for j in range(3)] for i in range(3)]
)
"""ε_ijk, so that hat(v)[i, j] = −ε_ijk v_k."""


class SO3(MatrixGroup):
    """SO(3): Ad_R = R, ad_ξ = ξ̂, ad*_ξ μ = μ × ξ."""

    size = 3

    @property
    def dim(self) -> int:
        return 3

    def inverse(self, g: Matrix) -> Matrix:
        expect_shape(g, (3, 3), "g")
        return g.T.copy()

    def hat(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        return skew(xi)

    def vee(self, X: Matrix) -> Vector:
        expect_shape(X, (3, 3), "X")
        return np.array([X[2, 1], X[0, 2], X[1, 0]])

    def Ad(self, g: Matrix) -> Matrix:
        expect_shape(g, (3, 3), "g")
        return np.array(g, dtype=np.float64)

    def ad(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        return skew(xi)

    def ad_star(self, xi: Vector, mu: Vector) -> Vector:
        expect_shape(xi, (3,), "xi")
        expect_shape(mu, (3,), "mu")
        return cross(mu, xi)

    def check_point(self, g: object, name: str = "g") -> Matrix:
        return checked_rotation(g, 3, name)

    def random_point(self, rng: np.random.Generator) -> Matrix:
        """Uniform (Haar) rotation from a normalised Gaussian quaternion (w, x, y, z)."""

        w, x, y, z = (float(c) for c in rng.normal(size=4))
        n = math.sqrt(w * w + x * x + y * y + z * z)
        w, x, y, z = w / n, x / n, y / n, z / n
        return np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )

    def _make_retractions(self) -> dict[RetractionKind, Retraction[Matrix]]:
        return {"exp": SO3Exp(self, "exp"), "cay": SO3Cayley(self, "cay")}


def log_rotation(R: Matrix) -> Vector:
    """ω with exp(ω̂) = R and θ = |ω| < π; raises ValueError within CUT_LOCUS_TOL of θ = π.

    θ = atan2(‖w‖, (tr R − 1)/2) with w = (R − Rᵀ)^∨/2 = sin θ · axis is accurate at every angle;
    near π the axis comes from the symmetric part (R + Rᵀ)/2 − cos θ I = (1 − cos θ) k kᵀ.
    """
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    sin_theta = float(np.linalg.norm(w))
    cos_theta = 0.5 * (float(np.trace(R)) - 1.0)
    theta = math.atan2(sin_theta, cos_theta)
    if math.pi - theta < CUT_LOCUS_TOL:
        raise ValueError(
            f"exp⁻¹ is not unique at the cut locus: g is a rotation by θ = {theta!r}, "
            f"within {CUT_LOCUS_TOL:.0e} of π"
        )
    if cos_theta > 0.0:
        return w / series.sinc(theta * theta)
    outer = 0.5 * (R + R.T) - cos_theta * np.eye(3)
    i = int(np.argmax(np.diag(outer)))
    axis = outer[:, i] / math.sqrt(outer[i, i] * (1.0 - cos_theta))
    if float(axis @ w) < 0.0:
        axis = -axis
    return theta * axis


class SO3Exp(Retraction[Matrix]):
    """exp on SO(3) with dτ = J = I − αω̂ + βω̂², dτ⁻¹ = I + ½ω̂ + γω̂² (spec 004-Lie §1.7(c))."""

    def tau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        return exp_matrix(xi)

    def tau_inv(self, g: Matrix) -> Vector:
        return log_rotation(self._group.check_point(g))

    def dtau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        return dexp(xi)

    def dtau_inv(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        return dexp_inv(xi)

    def ddtau(self, xi: Vector, eta: Vector) -> Matrix:
        """J⁻¹ K(ξ, η): the spec's α′/θ, β′/θ terms are 2α_s, 2β_s here, summed as series below θ = 2."""
        expect_shape(xi, (3,), "xi")
        expect_shape(eta, (3,), "eta")
        return dexp_inv(xi) @ dexp_derivative(xi, eta)


class SO3Cayley(Retraction[Matrix]):
    """cay(ξ) = I + 4/(4+θ²)(ξ̂ + ½ξ̂²); dτ = 2/(4+θ²)(2I − ξ̂); dτ⁻¹ = I + ½ξ̂ + ¼ξξᵀ."""

    def tau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        s = float(xi @ xi)
        c = 4.0 / (4.0 + s)
        return _combine(1.0 - 0.5 * c * s, c, 0.5 * c, xi)

    def tau_inv(self, g: Matrix) -> Vector:
        """cay⁻¹(R) = 2/(1 + tr R) (R − Rᵀ)^∨."""
        R = self._group.check_point(g)
        one_plus_trace = 1.0 + float(np.trace(R))
        if one_plus_trace < CAYLEY_POLE_TOL:
            raise ValueError(
                f"cay⁻¹ is undefined at a rotation by π: 1 + tr g = {one_plus_trace:.3e} "
                f"< {CAYLEY_POLE_TOL:.0e}"
            )
        return (2.0 / one_plus_trace) * np.array(
            [R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]
        )

    def dtau(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        c = 2.0 / (4.0 + float(xi @ xi))
        return _combine(2.0 * c, -c, 0.0, xi)

    def dtau_inv(self, xi: Vector) -> Matrix:
        expect_shape(xi, (3,), "xi")
        return _combine(1.0, 0.5, 0.25, xi)

    def ddtau(self, xi: Vector, eta: Vector) -> Matrix:
        """ddτ(ξ, η) = −2/(4+θ²) [η ξᵀ − dτ⁻¹(ξ) η̂] (spec 004-Lie §1.7(c))."""
        expect_shape(eta, (3,), "eta")
        c = -2.0 / (4.0 + float(xi @ xi))
        return c * (np.outer(eta, xi) - self.dtau_inv(xi) @ skew(eta))

    def ddtau_tensor(self, xi: Vector) -> Tensor:
        """[:, :, l] = ddτ(ξ, e_l) = −2/(4+θ²) [e_l ξᵀ + dτ⁻¹(ξ) ε_{··l}], one contraction."""
        expect_shape(xi, (3,), "xi")
        c = -2.0 / (4.0 + float(xi @ xi))
        outer = np.eye(3)[:, None, :] * xi[None, :, None]
        tensor: Tensor = c * (outer + np.einsum("ai,ibl->abl", self.dtau_inv(xi), _LEVI_CIVITA))
        return tensor
