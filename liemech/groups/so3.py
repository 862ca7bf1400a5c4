"""SO(3): rotation matrices; so(3) ≅ R³ with hat the cross-product matrix.

The module-level functions give the exponential's left-trivialised tangent J(ω) = d^L exp_ω and
its first two derivatives, written with ``jax.numpy``, as matrices and applied to vectors
(``dexp_times``, ``…_star`` for the transposes); SE(3) builds its exponential tangents from them.
"""

import math
from typing import Final

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups import series
from liemech.groups.base import Retraction, RetractionKind
from liemech.groups.matrix_checks import checked_rotation, checked_rotations
from liemech.groups.matrix_group import MatrixGroup
from liemech.input_checks import expect_shape, shaped_vectors
from liemech.jax_support import array_method
from liemech.types import Matrix, Vector, VectorLike

CUT_LOCUS_TOL: Final = 1e-9
"""exp⁻¹ raises within this angle of the cut locus θ = π, where the logarithm is not unique."""

CAYLEY_POLE_TOL: Final = 1e-12
"""cay⁻¹ raises when 1 + tr R falls below this (a rotation by π has no Cayley preimage)."""


# skew and cross are numpy: the systems' reference right-hand sides (DOP853) call them in tight
# numpy loops, where a jax.numpy call costs far more than its arithmetic. The groups use hat3 and
# jnp.cross.
def skew(v: VectorLike) -> Matrix:
    """v̂ with v̂ w = v × w."""
    x, y, z = float(v[0]), float(v[1]), float(v[2])
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def cross(a: Vector, b: Vector) -> Vector:
    """a × b without np.cross, whose overhead for two 3-vectors far exceeds their arithmetic."""
    return np.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


_LEVI_CIVITA: Final = np.array(
    [[[float((i - j) * (j - k) * (k - i) / 2) for k in range(3)] for j in range(3)] for i in range(3)]
)
"""ε_ijk, so that hat(v)[i, j] = −ε_ijk v_k."""


def hat3(v: ArrayLike) -> jax.Array:
    """v̂ with v̂ w = v × w, i.e. v̂_ij = −ε_ijk v_k (traceable; one product and sum with ε, which
    compiles and differentiates to far fewer operations than a matrix assembled entry by entry, and
    unlike a contraction (a dot) needs no transposes under a step's vmaps)."""
    return -jnp.sum(jnp.asarray(_LEVI_CIVITA) * jnp.asarray(v, dtype=float)[..., None, None, :], axis=-1)


def combine(a: jax.Array | float, b: jax.Array | float, c: jax.Array | float, v: ArrayLike) -> jax.Array:
    """a I + b v̂ + c v vᵀ."""
    v = jnp.asarray(v, dtype=float)
    return a * jnp.eye(3) + b * hat3(v) + c * jnp.outer(v, v)


def dot3(a: jax.Array, b: jax.Array) -> jax.Array:
    """a·b over the last axis as the sum of its three products, and ``cross3`` a × b from its
    components: in SO(3)'s vector forms of a VPRK step (``combine_times``, ``dexp_derivative_star``,
    ``twice_crossed``), batched over stages and Newton's directions, they compile to faster code
    than ``jnp.sum``'s reduction and ``jnp.cross``."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def cross3(a: jax.Array, b: jax.Array) -> jax.Array:
    """a × b from its components (``dot3``)."""
    return jnp.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                      a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def combine_times(a: jax.Array | float, b: jax.Array | float, c: jax.Array | float, w: ArrayLike,
                   v: ArrayLike) -> jax.Array:
    """(a I + b ŵ + c w wᵀ) v = a v + b w × v + c (w·v) w, without the matrix. VPRK applies dτ, dτᵀ
    and ddτᵀ to vectors only; for cay, as cross products they compile to fewer XLA kernels than the
    3 × 3 matrices and their products. exp applies J and J⁻ᵀ as ``twice_crossed``, with its six
    coefficients from one stacked sum (``series.exp_coefficients``)."""
    w, v = jnp.asarray(w, dtype=float), jnp.asarray(v, dtype=float)
    out = a * v + b * cross3(w, v)
    return out if isinstance(c, float) and c == 0.0 else out + (c * dot3(w, v))[..., None] * w


def dexp(w: ArrayLike) -> jax.Array:
    """J(ω) = d^L exp_ω = I − α ω̂ + β ω̂² (the tangent with d/dε exp(ω+εv) = exp(ω) (J v)^)."""
    w = jnp.asarray(w, dtype=float)
    s = w @ w
    k = series.exp_coefficients(s)
    return combine(1.0 - k.beta * s, -k.alpha, k.beta, w)


def dexp_inv(w: ArrayLike) -> jax.Array:
    """J(ω)⁻¹ = I + ½ ω̂ + γ ω̂², γ = 1/θ² − cot(θ/2)/(2θ)."""
    w = jnp.asarray(w, dtype=float)
    s = w @ w
    g = series.exp_coefficients(s).gamma
    return combine(1.0 - g * s, 0.5, g, w)


def dexp_directional(w: ArrayLike, u: ArrayLike) -> jax.Array:
    """d/dε J(ω + εu)|₀ = −2α_s(ω·u) ω̂ − α û + 2β_s(ω·u) ω̂² + β(ûω̂ + ω̂û)."""
    w, u = jnp.asarray(w, dtype=float), jnp.asarray(u, dtype=float)
    s = w @ w
    k = series.exp_coefficients(s)
    wu = w @ u
    W, U = hat3(w), hat3(u)
    return (
        -2.0 * k.alpha_s * wu * W
        - k.alpha * U
        + 2.0 * k.beta_s * wu * (W @ W)
        + k.beta * (U @ W + W @ U)
    )


def dexp_derivative(w: ArrayLike, eta: ArrayLike) -> jax.Array:
    """K(ω, η) with K δ = d/dε [J(ω + εδ) η]|₀.

    J = I − α ω̂ + β ω̂² with α, β functions of s = θ², so
    K = −2α_s (ω̂η) ωᵀ + α η̂ + 2β_s (ω̂²η) ωᵀ − β ((ω̂η)^ + ω̂ η̂).
    """
    w, eta = jnp.asarray(w, dtype=float), jnp.asarray(eta, dtype=float)
    s = w @ w
    k = series.exp_coefficients(s)
    a, b, a_s, b_s = k.alpha, k.beta, k.alpha_s, k.beta_s
    W = hat3(w)
    w_eta = W @ eta
    return (
        jnp.outer(2.0 * b_s * (W @ w_eta) - 2.0 * a_s * w_eta, w)
        + a * hat3(eta)
        - b * (hat3(w_eta) + W @ hat3(eta))
    )


def dexp_second_derivative(w: ArrayLike, u: ArrayLike, eta: ArrayLike) -> jax.Array:
    """L(ω, u, η) with L δ = d/dε [K(ω + εδ, η) u]|₀ = d²/dε dσ J(ω + εδ + σu) η.

    Differentiating K u = −2α_s(ω·u) ω̂η − α ûη + 2β_s(ω·u) ω̂²η + β(ûω̂ + ω̂û)η along δ.
    """
    w, u, eta = jnp.asarray(w, dtype=float), jnp.asarray(u, dtype=float), jnp.asarray(eta, dtype=float)
    s = w @ w
    k = series.exp_coefficients(s)
    a_s, b_s, b = k.alpha_s, k.beta_s, k.beta
    a_ss, b_ss = series.alpha_ss(s), series.beta_ss(s)
    wu = w @ u
    W, U, E = hat3(w), hat3(u), hat3(eta)
    w_eta = W @ eta  # ω̂η
    ww_eta = W @ w_eta  # ω̂²η
    u_eta = U @ eta  # ûη
    sym_u_eta = U @ w_eta + W @ u_eta  # (ûω̂ + ω̂û)η
    return (
        jnp.outer(
            -4.0 * a_ss * wu * w_eta - 2.0 * a_s * u_eta + 4.0 * b_ss * wu * ww_eta + 2.0 * b_s * sym_u_eta,
            w,
        )
        + jnp.outer(2.0 * b_s * ww_eta - 2.0 * a_s * w_eta, u)
        + 2.0 * a_s * wu * E
        - 2.0 * b_s * wu * (hat3(w_eta) + W @ E)
        - b * (U @ E + hat3(u_eta))
    )


def dexp_times(w: jax.Array, x: jax.Array, k: series.ExpCoefficients, transposed: bool = False) -> jax.Array:
    """J(ω) x = x − α ω×x + β ω×(ω×x), or J(ω)ᵀ x (α's sign flips) (``twice_crossed``)."""
    return twice_crossed(k.alpha if transposed else -k.alpha, k.beta, w, x)


def dexp_inv_star(w: jax.Array, x: jax.Array, k: series.ExpCoefficients) -> jax.Array:
    """J(ω)⁻ᵀ x = x − ½ ω×x + γ ω×(ω×x) (``twice_crossed``)."""
    return twice_crossed(-0.5, k.gamma, w, x)


def twice_crossed(b: jax.Array | float, c: jax.Array, w: jax.Array, x: jax.Array) -> jax.Array:
    """(I + b ŵ + c ŵ²) x = x + b y + c w×y with y = w×x: ŵ² x as a second cross product rather than
    (w·x) w − |w|² x, which compiles to slower code in VPRK's step."""
    y = cross3(w, x)
    return x + b * y + c * cross3(w, y)


def dexp_directional_times(w: jax.Array, u: jax.Array, x: jax.Array, k: series.ExpCoefficients,
                           transposed: bool = False) -> jax.Array:
    """B x for B = ``dexp_directional(ω, u)`` = −2α_s(ω·u) ω̂ − α û + 2β_s(ω·u) ω̂² + β(ûω̂ + ω̂û), or
    Bᵀx (the two skew terms change sign; the others are symmetric)."""
    sign = -1.0 if transposed else 1.0
    wu = w @ u
    return (sign * (-2.0 * k.alpha_s * wu * jnp.cross(w, x) - k.alpha * jnp.cross(u, x))
            + 2.0 * k.beta_s * wu * jnp.cross(w, jnp.cross(w, x))
            + k.beta * (jnp.cross(u, jnp.cross(w, x)) + jnp.cross(w, jnp.cross(u, x))))


def dexp_derivative_star(w: jax.Array, eta: jax.Array, x: jax.Array, k: series.ExpCoefficients) -> jax.Array:
    """K(ω, η)ᵀ x for K of ``dexp_derivative``: with ŷᵀx = x×y,
    Kᵀx = 2(β_s ω×(ω×η) − α_s ω×η)·x ω + α x×η − β (x×(ω×η) + (x×ω)×η)."""
    w_eta = cross3(w, eta)
    radial = 2.0 * dot3(k.beta_s * cross3(w, w_eta) - k.alpha_s * w_eta, x)
    return radial[..., None] * w + k.alpha * cross3(x, eta) - k.beta * (cross3(x, w_eta) + cross3(cross3(x, w), eta))


def dexp_second_derivative_star(w: jax.Array, u: jax.Array, eta: jax.Array, x: jax.Array,
                                k: series.ExpCoefficients) -> jax.Array:
    """L(ω, u, η)ᵀ x for L of ``dexp_second_derivative``, transposed term by term (ŷᵀx = x×y)."""
    s = w @ w
    a_ss, b_ss = series.alpha_ss(s), series.beta_ss(s)
    wu = w @ u
    w_eta, u_eta = jnp.cross(w, eta), jnp.cross(u, eta)
    ww_eta = jnp.cross(w, w_eta)
    sym_u_eta = jnp.cross(u, w_eta) + jnp.cross(w, u_eta)
    along_w = -4.0 * a_ss * wu * w_eta - 2.0 * k.alpha_s * u_eta + 4.0 * b_ss * wu * ww_eta + 2.0 * k.beta_s * sym_u_eta
    along_u = 2.0 * k.beta_s * ww_eta - 2.0 * k.alpha_s * w_eta
    return ((along_w @ x) * w + (along_u @ x) * u + 2.0 * k.alpha_s * wu * jnp.cross(x, eta)
            - 2.0 * k.beta_s * wu * (jnp.cross(x, w_eta) + jnp.cross(jnp.cross(x, w), eta))
            - k.beta * (jnp.cross(jnp.cross(x, u), eta) + jnp.cross(x, u_eta)))


class SO3(MatrixGroup):
    """SO(3): Ad_R = R, ad_ξ = ξ̂, ad*_ξ μ = μ × ξ."""

    size = 3

    @property
    def dim(self) -> int:
        return 3

    @array_method
    def inverse(self, g: Matrix) -> Matrix:
        expect_shape(g, (3, 3), "g")
        return g.T

    @array_method
    def hat(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        return hat3(xi)

    @array_method
    def vee(self, X: Matrix) -> jax.Array:
        expect_shape(X, (3, 3), "X")
        return jnp.array([X[2, 1], X[0, 2], X[1, 0]])

    @array_method
    def perturbed(self, g: Matrix, z: VectorLike) -> jax.Array:
        """g + g ẑ, whose rows are g_i + g_i × z: 18 products, in the value and in each derivative,
        where the product g (I + ẑ) takes 27 and ẑ (a contraction with the Levi-Civita symbol) 27 more."""
        expect_shape(g, (3, 3), "g")
        expect_shape(z, (3,), "z")
        return jnp.asarray(g) + jnp.cross(g, z)

    @array_method
    def Ad(self, g: Matrix) -> jax.Array:
        expect_shape(g, (3, 3), "g")
        return jnp.asarray(g, dtype=float)

    @array_method
    def ad(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        return hat3(xi)

    @array_method
    def ad_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        expect_shape(mu, (3,), "mu")
        return jnp.cross(mu, xi)

    def check_point(self, g: object, name: str = "g") -> Matrix:
        return checked_rotation(g, 3, name)

    def check_points(self, points: object, name: str = "g") -> Matrix:
        return checked_rotations(points, 3, name)

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
        # numpy's sinc(x) = sin(πx)/(πx) (exact at 0): series.sinc, called eagerly, would dispatch
        # JAX operations for one scalar.
        return w / np.sinc(theta / math.pi)
    outer = 0.5 * (R + R.T) - cos_theta * np.eye(3)
    i = int(np.argmax(np.diag(outer)))
    axis = outer[:, i] / math.sqrt(outer[i, i] * (1.0 - cos_theta))
    if float(axis @ w) < 0.0:
        axis = -axis
    return theta * axis


class SO3Exp(Retraction[Matrix]):
    """exp on SO(3) with dτ = J = I − αω̂ + βω̂², dτ⁻¹ = I + ½ω̂ + γω̂².

    ``dtau_derivative_star`` keeps the default Kᵀ J⁻ᵀ (Jᵀm), although Kᵀm directly
    (``dexp_derivative_star``) is the same vector with less algebra: in a VPRK step the direct form
    is faster where a stage runs alone (Lobatto-2) but slower in a batch of stages (Lobatto-4, 5)."""

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        """exp(ξ̂) = I + (sin θ/θ) ξ̂ + α ξ̂², α = (1 − cos θ)/θ², written as cos θ I + … ."""
        expect_shape(xi, (3,), "xi")
        s = xi @ xi
        k = series.exp_coefficients(s)
        return combine(1.0 - k.alpha * s, k.sinc, k.alpha, xi)

    def tau_inv(self, g: Matrix) -> Vector:
        return log_rotation(self._group.check_point(g))

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        return dexp(xi)

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        return dexp_inv(xi)

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        """J⁻¹ K(ξ, η): the terms α′/θ, β′/θ of K (α′ = dα/dθ) are 2α_s, 2β_s here, summed as series
        below θ = 2."""
        expect_shape(xi, (3,), "xi")
        expect_shape(eta, (3,), "eta")
        return dexp_inv(xi) @ dexp_derivative(xi, eta)

    @array_method
    def dtau_times(self, xi: VectorLike, v: VectorLike) -> jax.Array:
        """J(ξ) v = (1 − βθ²) v − α ξ×v + β (ξ·v) ξ."""
        xi, v = shaped_vectors(3, xi=xi, v=v)
        return dexp_times(xi, v, series.exp_coefficients(xi @ xi))

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """J(ξ)ᵀ μ = (1 − βθ²) μ + α ξ×μ + β (ξ·μ) ξ."""
        xi, mu = shaped_vectors(3, xi=xi, mu=mu)
        return dexp_times(xi, mu, series.exp_coefficients(xi @ xi), transposed=True)

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> jax.Array:
        """(J⁻¹K)ᵀ μ = K(ξ, η)ᵀ J⁻ᵀμ (``dexp_derivative_star``)."""
        xi, eta, mu = shaped_vectors(3, xi=xi, eta=eta, mu=mu)
        k = series.exp_coefficients(xi @ xi)
        return dexp_derivative_star(xi, eta, dexp_inv_star(xi, mu, k), k)


class SO3Cayley(Retraction[Matrix]):
    """cay(ξ) = I + 4/(4+θ²)(ξ̂ + ½ξ̂²); dτ = 2/(4+θ²)(2I − ξ̂); dτ⁻¹ = I + ½ξ̂ + ¼ξξᵀ."""

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        s = jnp.dot(xi, xi)
        c = 4.0 / (4.0 + s)
        return combine(1.0 - 0.5 * c * s, c, 0.5 * c, xi)

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

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        c = 2.0 / (4.0 + jnp.dot(xi, xi))
        return combine(2.0 * c, -c, 0.0, xi)

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (3,), "xi")
        return combine(1.0, 0.5, 0.25, xi)

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        """ddτ(ξ, η) = −2/(4+θ²) [η ξᵀ − dτ⁻¹(ξ) η̂]."""
        expect_shape(xi, (3,), "xi")
        expect_shape(eta, (3,), "eta")
        c = -2.0 / (4.0 + jnp.dot(xi, xi))
        return c * (jnp.outer(eta, jnp.asarray(xi, dtype=float)) - self.dtau_inv(xi) @ hat3(eta))

    @array_method
    def dtau_times(self, xi: VectorLike, v: VectorLike) -> jax.Array:
        """dτ(ξ) v = 2/(4+θ²) (2v − ξ×v)."""
        expect_shape(xi, (3,), "xi")
        expect_shape(v, (3,), "v")
        c = 2.0 / (4.0 + jnp.dot(xi, xi))
        return combine_times(2.0 * c, -c, 0.0, xi, v)

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """dτ(ξ)ᵀ μ = 2/(4+θ²) (2μ + ξ×μ)."""
        expect_shape(xi, (3,), "xi")
        expect_shape(mu, (3,), "mu")
        c = 2.0 / (4.0 + jnp.dot(xi, xi))
        return combine_times(2.0 * c, c, 0.0, xi, mu)

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> jax.Array:
        """ddτ(ξ, η)ᵀ μ = −2/(4+θ²) [ξ (η·μ) + η × dτ⁻¹(ξ)ᵀμ], dτ⁻¹(ξ)ᵀμ = μ − ½ξ×μ + ¼(ξ·μ)ξ."""
        xi, eta, mu = shaped_vectors(3, xi=xi, eta=eta, mu=mu)
        c = -2.0 / (4.0 + xi @ xi)
        return c * ((eta @ mu) * xi + jnp.cross(eta, combine_times(1.0, -0.5, 0.25, xi, mu)))

    @array_method
    def dtau_derivative_star(self, xi: VectorLike, eta: VectorLike, m: VectorLike) -> jax.Array:
        """ddτ(ξ, η)ᵀ dτ(ξ)ᵀ m = −2/(4+θ²) [ξ ((dτ(ξ) η)·m) + η × m] (``ddtau_star`` at μ = dτᵀm,
        where η·μ = (dτ η)·m and dτ⁻ᵀμ = m)."""
        xi, eta, m = shaped_vectors(3, xi=xi, eta=eta, m=m)
        c = -2.0 / (4.0 + xi @ xi)
        return c * ((jnp.asarray(self.dtau_times(xi, eta)) @ m) * xi + jnp.cross(eta, m))

    @array_method
    def ddtau_tensor(self, xi: VectorLike) -> jax.Array:
        """[:, :, l] = ddτ(ξ, e_l) = −2/(4+θ²) [e_l ξᵀ + dτ⁻¹(ξ) ε_{··l}], one contraction."""
        expect_shape(xi, (3,), "xi")
        c = -2.0 / (4.0 + jnp.dot(xi, xi))
        outer = jnp.einsum("al,b->abl", jnp.eye(3), xi)
        return c * (outer + jnp.einsum("ai,ibl->abl", self.dtau_inv(xi), _LEVI_CIVITA))


_EXP: Final = SO3().retraction("exp")


def exp_matrix(w: VectorLike) -> Matrix:
    """exp(ω̂) for numpy callers (initial conditions of the systems); SO3Exp.tau, traceable too."""
    return _EXP.tau(w)
