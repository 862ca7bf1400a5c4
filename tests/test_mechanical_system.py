"""MechanicalSystem: finite-difference fallbacks and configuration-dependent inertia against
analytic derivatives and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm
from liemech.finite_differences import jacobian
from liemech.systems import HeavyTop

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
