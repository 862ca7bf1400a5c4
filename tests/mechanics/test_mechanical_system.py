"""MechanicalSystem: finite-difference fallbacks and configuration-dependent inertia against
analytic derivatives and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm
from liemech.systems import HeavyTop
from liemech.testing.finite_differences import jacobian

TOP = HeavyTop()


def test_mechanical_system_fallbacks_match_analytic_derivatives() -> None:
    analytic = TOP.system()
    fallback = lm.MechanicalSystem(lm.SO3(), TOP.inertia, TOP.potential)
    R = lm.SO3().random_point(np.random.default_rng(6))
    eta = np.array([0.3, -0.2, 0.5])
    assert np.max(np.abs(fallback.force(R, eta) - analytic.force(R, eta))) <= 1e-10
    assert np.max(np.abs(fallback.force_d_g(R, eta) - analytic.force_d_g(R, eta))) <= 1e-8


def test_configuration_dependent_inertia_derivatives() -> None:
    """𝕀(q) = diag(2 + sin q₁, 1 + q₁²) on R²: force ½ηᵀ∂𝕀η and its derivatives by differences."""
    def inertia(q: lm.Vector) -> jax.Array:
        return jnp.diag(jnp.stack([2.0 + jnp.sin(q[0]), 1.0 + q[0] ** 2]))

    system = lm.MechanicalSystem(lm.Rn(2), inertia, lambda q: jnp.dot(q, q))
    q, eta = np.array([0.4, -0.3]), np.array([1.2, -0.7])
    assert np.max(np.abs(jacobian(lambda x: np.array([system.value(x, eta)]), q)[0] - system.force(q, eta))) <= 1e-9
    assert np.max(np.abs(jacobian(lambda v: system.momentum(q, v), eta) - system.momentum_d_eta(q, eta))) <= 1e-10
    assert np.max(np.abs(jacobian(lambda x: system.momentum(x, eta), q) - system.momentum_d_g(q, eta))) <= 1e-9
    assert np.max(np.abs(jacobian(lambda v: system.force(q, v), eta) - system.force_d_eta(q, eta))) <= 1e-9
    assert np.max(np.abs(jacobian(lambda x: system.force(x, eta), q) - system.force_d_g(q, eta))) <= 1e-8
    assert np.max(np.abs(system.velocity(q, system.momentum(q, eta)) - eta)) <= 1e-15


class CoshLagrangian(lm.Lagrangian[lm.Vector]):
    """ℓ = Σ_i (1 + q_i²) cosh η_i − q₀ on R²: a mass matrix diag((1 + q_i²) cosh η_i) that
    depends on both q and η (not a MechanicalSystem)."""

    @property
    def group(self) -> lm.LieGroup[lm.Vector]:
        return lm.Rn(2)

    def lagrangian(self, g: lm.Vector, eta: jax.typing.ArrayLike) -> jax.Array:
        out: jax.Array = jnp.sum((1.0 + jnp.asarray(g) ** 2) * jnp.cosh(jnp.asarray(eta))) - g[0]
        return out

    def velocity(self, g: lm.Vector, mu: lm.VectorLike) -> lm.Vector:
        return np.arcsinh(np.asarray(mu) / (1.0 + np.asarray(g) ** 2))


def test_mass_solve_inverts_the_mass_matrix() -> None:
    """M⁻¹ rhs for constant inertia (inverted once), configuration-dependent inertia and a general
    Lagrangian, against the mass matrix by finite differences of the momentum."""
    def inertia(q: lm.Vector) -> jax.Array:
        return jnp.array([[2.0 + jnp.sin(q[0]), 0.3], [0.3, 1.0 + q[0] ** 2]])

    rng = np.random.default_rng(11)
    R = lm.SO3().random_point(rng)
    cases: list[tuple[lm.Lagrangian[lm.Vector], lm.Vector, lm.Vector]] = [
        (lm.MechanicalSystem(lm.Rn(2), inertia, lambda q: jnp.dot(q, q)), np.array([0.4, -0.3]), np.array([1.2, -0.7])),
        (CoshLagrangian(), np.array([0.5, -1.1]), np.array([0.3, 0.8])),
    ]
    top = TOP.system()
    rhs3 = rng.standard_normal((3, 4))
    mass3 = jacobian(lambda v: top.momentum(R, v), np.array([0.3, -0.2, 0.5]))
    assert np.max(np.abs(mass3 @ top.mass_solve(R, np.zeros(3), rhs3) - rhs3)) <= 1e-9
    for system, q, eta in cases:
        mass = jacobian(lambda v: system.momentum(q, v), eta)
        rhs = rng.standard_normal((2, 3))
        assert np.max(np.abs(mass @ system.mass_solve(q, eta, rhs) - rhs)) <= 1e-9
        assert np.max(np.abs(mass @ system.mass_solve(q, eta, rhs[:, 0]) - rhs[:, 0])) <= 1e-9


def test_constant_inertia_diagonal_and_full_against_closed_forms() -> None:
    """μ = 𝕀η, η = 𝕀⁻¹μ, 𝕀⁻¹ rhs (vector and columns) and ℓ = ½ηᵀ𝕀η − V for a constant diagonal
    𝕀 (applied elementwise) and a full one, eagerly and traced, against numpy."""
    rng = np.random.default_rng(3)
    q, eta, rhs = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((3, 4))
    full = np.array([[2.0, 0.3, 0.0], [0.3, 1.5, -0.2], [0.0, -0.2, 0.7]])
    for inertia in (np.diag([2.0, 1.5, 0.7]), full):
        system = lm.MechanicalSystem(lm.Rn(3), inertia, lambda x: jnp.dot(x, x))
        mu = inertia @ eta
        assert np.max(np.abs(system.momentum(q, eta) - mu)) <= 1e-15
        assert np.max(np.abs(system.velocity(q, mu) - eta)) <= 1e-14
        assert np.max(np.abs(system.mass_solve(q, eta, rhs) - np.linalg.solve(inertia, rhs))) <= 1e-14
        assert abs(system.lagrangian(q, eta) - (0.5 * eta @ mu - q @ q)) <= 1e-14
        traced = jax.jit(jax.vmap(lambda v: system.velocity(q, system.momentum(q, v))))(rhs.T)
        assert np.max(np.abs(traced - rhs.T)) <= 1e-14
