"""SE(3): homogeneous 4×4 matrices; se(3) ≅ R⁶ with ξ = (v, ω).

ad_ξ = [[ω̂, v̂], [0, ω̂]] is block triangular, so any power series f(−ad_ξ) is
[[f(−ω̂), Df(−ω̂)[−v̂]], [0, f(−ω̂)]]: the exponential's tangent is
dτ = [[J(ω), B], [0, J(ω)]] with J the SO(3) tangent and B = d/dε J(ω + εv)|₀.
"""

from typing import Final

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from liemech.groups import series, so3
from liemech.groups.base import Retraction, RetractionKind
from liemech.groups.matrix_cayley import MatrixCayley
from liemech.groups.matrix_checks import checked_rigid_motion, checked_rigid_motions
from liemech.groups.matrix_group import MatrixGroup
from liemech.input_checks import expect_shape, shaped_vectors
from liemech.jax_support import array_method
from liemech.types import Matrix, Vector, VectorLike

CUT_LOCUS_TOL: Final = so3.CUT_LOCUS_TOL


def _upper_blocks(top_left: ArrayLike, top_right: ArrayLike, bottom_right: ArrayLike) -> jax.Array:
    """[[top_left, top_right], [0, bottom_right]] of 3 × 3 blocks."""
    return jnp.block([[jnp.asarray(top_left), jnp.asarray(top_right)], [jnp.zeros((3, 3)), jnp.asarray(bottom_right)]])


def _block_triangular(diagonal: ArrayLike, upper: ArrayLike) -> jax.Array:
    return _upper_blocks(diagonal, upper, diagonal)


def _homogeneous(rotation: ArrayLike, translation: ArrayLike) -> jax.Array:
    """[[R, p], [0, 1]]."""
    return jnp.eye(4).at[:3, :3].set(rotation).at[:3, 3].set(translation)


class SE3(MatrixGroup):
    """SE(3): Ad_g = [[R, p̂R], [0, R]], ad_ξ = [[ω̂, v̂], [0, ω̂]] for ξ = (v, ω)."""

    size = 4

    @property
    def dim(self) -> int:
        return 6

    @array_method
    def inverse(self, g: Matrix) -> jax.Array:
        """[[R, p], [0, 1]]⁻¹ = [[Rᵀ, −Rᵀp], [0, 1]]."""
        expect_shape(g, (4, 4), "g")
        R_T = g[:3, :3].T
        return _homogeneous(R_T, -(R_T @ g[:3, 3]))

    @array_method
    def hat(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (6,), "xi")
        return jnp.zeros((4, 4)).at[:3, :3].set(so3.hat3(xi[3:])).at[:3, 3].set(xi[:3])

    @array_method
    def vee(self, X: Matrix) -> jax.Array:
        expect_shape(X, (4, 4), "X")
        return jnp.array([X[0, 3], X[1, 3], X[2, 3], X[2, 1], X[0, 2], X[1, 0]])

    @array_method
    def perturbed(self, g: Matrix, z: VectorLike) -> jax.Array:
        """g + g ẑ = [[R + R ω̂, x + R v], [0, 1]] for z = (v, ω), the rows of R ω̂ being R_i × ω:
        no 4 × 4 product and no ẑ built by scatters."""
        expect_shape(g, (4, 4), "g")
        expect_shape(z, (6,), "z")
        point, xi = jnp.asarray(g), jnp.asarray(z, dtype=float)
        R, x = point[:3, :3], point[:3, 3]
        top = jnp.concatenate([R + jnp.cross(R, xi[3:]), (x + jnp.sum(R * xi[:3], axis=-1))[:, None]], axis=1)
        return jnp.concatenate([top, point[3:]], axis=0)

    @array_method
    def Ad(self, g: Matrix) -> jax.Array:
        expect_shape(g, (4, 4), "g")
        R = g[:3, :3]
        return _block_triangular(R, so3.hat3(g[:3, 3]) @ R)

    @array_method
    def ad(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (6,), "xi")
        return _block_triangular(so3.hat3(xi[3:]), so3.hat3(xi[:3]))

    @array_method
    def Ad_star(self, g: Matrix, mu: VectorLike) -> jax.Array:
        """Ad_gᵀ μ = (Rᵀμ_v, Rᵀ(μ_ω − p×μ_v)), without the 6 × 6 matrix."""
        expect_shape(g, (4, 4), "g")
        expect_shape(mu, (6,), "mu")
        R_T, mu = g[:3, :3].T, jnp.asarray(mu, dtype=float)
        return jnp.concatenate([R_T @ mu[:3], R_T @ (mu[3:] - jnp.cross(g[:3, 3], mu[:3]))])

    def check_point(self, g: object, name: str = "g") -> Matrix:
        return checked_rigid_motion(g, 3, name)

    def check_points(self, points: object, name: str = "g") -> Matrix:
        return checked_rigid_motions(points, 3, name)

    def _make_retractions(self) -> dict[RetractionKind, Retraction[Matrix]]:
        return {"exp": SE3Exp(self, "exp"), "cay": SE3Cayley(self, "cay")}

    def random_point(self, rng: np.random.Generator) -> Matrix:
        out = np.eye(4)
        out[:3, :3] = so3.SO3().random_point(rng)
        out[:3, 3] = rng.normal(size=3)
        return out


class SE3Exp(Retraction[Matrix]):
    """exp(ξ) = [[exp(ω̂), J(−ω) v], [0, 1]]; dτ = [[J, B], [0, J]], dτ⁻¹ = [[J⁻¹, −J⁻¹BJ⁻¹], [0, J⁻¹]]."""

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (6,), "xi")
        w = jnp.asarray(xi[3:], dtype=float)
        # J(−ω) v = J(ω)ᵀ v applied as a vector: no 3 × 3 matrix built from ω̂
        return _homogeneous(so3.exp_matrix(w), so3.dexp_times(w, jnp.asarray(xi[:3], dtype=float),
                                                              series.exp_coefficients(w @ w), transposed=True))

    def tau_inv(self, g: Matrix) -> Vector:
        g = self._group.check_point(g)
        w = so3.log_rotation(g[:3, :3])
        J_inv = so3.SO3().retraction("exp").dtau_inv(-w)  # compiled: so3.dexp_inv run eagerly dispatches op by op
        return np.concatenate([J_inv @ g[:3, 3], w])

    def _upper(self, xi: VectorLike) -> jax.Array:
        """B = d/dε J(ω + εv)|₀ for ξ = (v, ω)."""
        return so3.dexp_directional(xi[3:], xi[:3])

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (6,), "xi")
        return _block_triangular(so3.dexp(xi[3:]), self._upper(xi))

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        expect_shape(xi, (6,), "xi")
        J_inv = so3.dexp_inv(xi[3:])
        return _block_triangular(J_inv, -J_inv @ self._upper(xi) @ J_inv)

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> Matrix:
        """dτ⁻¹ · M, where dτ η = (J η_v + B η_ω, J η_ω) differentiated along δ = (δv, δω) gives
        M = [[K(ω, η_ω), K(ω, η_v) + L(ω, v, η_ω)], [0, K(ω, η_ω)]] (K, L from so3)."""
        expect_shape(xi, (6,), "xi")
        expect_shape(eta, (6,), "eta")
        w, v = xi[3:], xi[:3]
        upper = so3.dexp_derivative(w, eta[:3]) + so3.dexp_second_derivative(w, v, eta[3:])
        M = _block_triangular(so3.dexp_derivative(w, eta[3:]), upper)
        return self.dtau_inv(xi) @ M

    @array_method
    def dtau_times(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        """dτ η = (J η_v + B η_ω, J η_ω), without the 6 × 6 matrix."""
        xi, eta = shaped_vectors(6, xi=xi, eta=eta)
        v, w = xi[:3], xi[3:]
        k = series.exp_coefficients(w @ w)
        return jnp.concatenate([so3.dexp_times(w, eta[:3], k) + so3.dexp_directional_times(w, v, eta[3:], k),
                                so3.dexp_times(w, eta[3:], k)])

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """dτᵀ μ = (Jᵀ μ_v, Bᵀ μ_v + Jᵀ μ_ω)."""
        xi, mu = shaped_vectors(6, xi=xi, mu=mu)
        v, w = xi[:3], xi[3:]
        k = series.exp_coefficients(w @ w)
        return jnp.concatenate([so3.dexp_times(w, mu[:3], k, transposed=True),
                                so3.dexp_directional_times(w, v, mu[:3], k, transposed=True)
                                + so3.dexp_times(w, mu[3:], k, transposed=True)])

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> jax.Array:
        """(dτ⁻¹M)ᵀ μ = Mᵀ(a, b) with (a, b) = dτ⁻ᵀμ: a = J⁻ᵀμ_v, b = J⁻ᵀ(μ_ω − Bᵀa) (M of ``ddtau``,
        ``_m_transposed``)."""
        xi, eta, mu = shaped_vectors(6, xi=xi, eta=eta, mu=mu)
        v, w = xi[:3], xi[3:]
        k = series.exp_coefficients(w @ w)
        a = so3.dexp_inv_star(w, mu[:3], k)
        b = so3.dexp_inv_star(w, mu[3:] - so3.dexp_directional_times(w, v, a, k, transposed=True), k)
        return _m_transposed(xi, eta, a, b, k)

    @array_method
    def dtau_derivative_star(self, xi: VectorLike, eta: VectorLike, m: VectorLike) -> jax.Array:
        """ddτ(ξ, η)ᵀdτ(ξ)ᵀm = Mᵀm (``_m_transposed``), without dτᵀ and its inverse, which the default
        (``ddtau_star`` at μ = dτᵀm) would apply and undo."""
        xi, eta, m = shaped_vectors(6, xi=xi, eta=eta, m=m)
        return _m_transposed(xi, eta, m[:3], m[3:], series.exp_coefficients(xi[3:] @ xi[3:]))


def _m_transposed(xi: jax.Array, eta: jax.Array, a: jax.Array, b: jax.Array, k: series.ExpCoefficients) -> jax.Array:
    """Mᵀ(a, b) = (K(ω, η_ω)ᵀa, K(ω, η_v)ᵀa + L(ω, v, η_ω)ᵀa + K(ω, η_ω)ᵀb) for M = d/dε dτ(ξ + εδ)η
    of ``SE3Exp.ddtau`` (K, L from so3), ξ = (v, ω)."""
    v, w, eta_v, eta_w = xi[:3], xi[3:], eta[:3], eta[3:]
    return jnp.concatenate([
        so3.dexp_derivative_star(w, eta_w, a, k),
        so3.dexp_derivative_star(w, eta_v, a, k) + so3.dexp_second_derivative_star(w, v, eta_w, a, k)
        + so3.dexp_derivative_star(w, eta_w, b, k)])


class SE3Cayley(Retraction[Matrix]):
    """cay(ξ) = (I − ξ̂/2)⁻¹(I + ξ̂/2) = [[cay(ω), A⁻¹v], [0, 1]] for ξ = (v, ω), A = I − ω̂/2, in
    closed form: with D = dτ of SO(3)'s cay, c = 2/(4 + θ²), and B = I + ω̂/2,
    A⁻¹ = 2cI + cω̂ + (c/2)ωωᵀ, B⁻¹ = A⁻ᵀ = D + (c/2)ωωᵀ,
    dτ η = (B⁻¹η_v + ½ (Dη_ω)×v, Dη_ω), dτ⁻¹η = (B(η_v − ½ η_ω×v), D⁻¹η_ω),
    ddτ(ξ, η)δ = (½ η_ω×(A⁻¹δ_v) − ½ δ_ω×(B⁻¹η_v), ddτ_SO(3)(ω, η_ω)δ_ω),
    the generic formulas of ``MatrixCayley`` with the blocks of (I ± ξ̂/2)⁻¹ written out (no linear
    solves in a step)."""

    def __init__(self, group: "SE3", kind: RetractionKind) -> None:
        super().__init__(group, kind)
        self._rotation = so3.SO3().retraction("cay")
        self._generic = MatrixCayley(group)

    @staticmethod
    def _a_inverse(w: jax.Array, transposed: bool = False) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The coefficients (of I, ω̂, ωωᵀ) of A⁻¹, or of A⁻ᵀ = B⁻¹."""
        c = 2.0 / (4.0 + w @ w)
        return 2.0 * c, -c if transposed else c, 0.5 * c

    @array_method
    def tau(self, xi: VectorLike) -> jax.Array:
        (xi,) = shaped_vectors(6, xi=xi)
        return _homogeneous(self._rotation.tau(xi[3:]), so3.combine_times(*self._a_inverse(xi[3:]), xi[3:], xi[:3]))

    def tau_inv(self, g: Matrix) -> Vector:
        return self._generic.tau_inv(g)

    @array_method
    def dtau(self, xi: VectorLike) -> jax.Array:
        """[[B⁻¹, −½ v̂ D], [0, D]]."""
        (xi,) = shaped_vectors(6, xi=xi)
        v, w = xi[:3], xi[3:]
        D = jnp.asarray(self._rotation.dtau(w))
        return _upper_blocks(so3.combine(*self._a_inverse(w, transposed=True), w), -0.5 * so3.hat3(v) @ D, D)

    @array_method
    def dtau_inv(self, xi: VectorLike) -> jax.Array:
        """[[B, ½ B v̂], [0, D⁻¹]]."""
        (xi,) = shaped_vectors(6, xi=xi)
        v, w = xi[:3], xi[3:]
        B = so3.combine(1.0, 0.5, 0.0, w)
        return _upper_blocks(B, 0.5 * B @ so3.hat3(v), self._rotation.dtau_inv(w))

    @array_method
    def ddtau(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        """[[½ η̂_ω A⁻¹, ½ (B⁻¹η_v)^], [0, ddτ_SO(3)(ω, η_ω)]]."""
        xi, eta = shaped_vectors(6, xi=xi, eta=eta)
        w = xi[3:]
        B_inv_eta_v = so3.combine_times(*self._a_inverse(w, transposed=True), w, eta[:3])
        return _upper_blocks(0.5 * so3.hat3(eta[3:]) @ so3.combine(*self._a_inverse(w), w), 0.5 * so3.hat3(B_inv_eta_v),
                             self._rotation.ddtau(w, eta[3:]))

    @array_method
    def dtau_times(self, xi: VectorLike, eta: VectorLike) -> jax.Array:
        xi, eta = shaped_vectors(6, xi=xi, eta=eta)
        v, w = xi[:3], xi[3:]
        rotation = self._rotation.dtau_times(w, eta[3:])
        return jnp.concatenate([so3.combine_times(*self._a_inverse(w, transposed=True), w, eta[:3])
                                + 0.5 * jnp.cross(rotation, v), rotation])

    @array_method
    def dtau_star(self, xi: VectorLike, mu: VectorLike) -> jax.Array:
        """dτᵀμ = (A⁻¹μ_v, Dᵀ(μ_ω + ½ v×μ_v))."""
        xi, mu = shaped_vectors(6, xi=xi, mu=mu)
        v, w = xi[:3], xi[3:]
        return jnp.concatenate([so3.combine_times(*self._a_inverse(w), w, mu[:3]),
                                self._rotation.dtau_star(w, mu[3:] + 0.5 * jnp.cross(v, mu[:3]))])

    @array_method
    def ddtau_star(self, xi: VectorLike, eta: VectorLike, mu: VectorLike) -> jax.Array:
        """ddτᵀμ = (½ B⁻¹(μ_v×η_ω), ½ μ_v×(B⁻¹η_v) + ddτ_SO(3)(ω, η_ω)ᵀμ_ω)."""
        xi, eta, mu = shaped_vectors(6, xi=xi, eta=eta, mu=mu)
        w, b_inverse = xi[3:], self._a_inverse(xi[3:], transposed=True)
        return jnp.concatenate([
            0.5 * so3.combine_times(*b_inverse, w, jnp.cross(mu[:3], eta[3:])),
            0.5 * jnp.cross(mu[:3], so3.combine_times(*b_inverse, w, eta[:3]))
            + self._rotation.ddtau_star(w, eta[3:], mu[3:])])
