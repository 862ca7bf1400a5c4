"""Long runs (T ≥ 50) of the Rⁿ families on systems outside the papers' examples: what each scheme
must conserve stays conserved, and what it only keeps bounded does not drift.

A particle on the unit sphere with V = z + z³/2 (symmetric about the z axis, so L_z is a momentum
map) for the constrained schemes; a particle with position-dependent mass 1 + x² in an
anharmonic, coupled potential for the schemes of configuration-dependent mass."""

import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from tests.perturbation import Perturbation

pytestmark = [pytest.mark.slow, pytest.mark.long_run]


def sphere_problem(perturb: Perturbation) -> lm.Problem[lm.Vector]:
    system = lm.MechanicalSystem(lm.Rn(3), np.eye(3), lambda q: q[2] + 0.5 * q[2] ** 3)
    sphere: lm.HolonomicConstraint[lm.Vector] = lm.HolonomicConstraint(lambda q: jnp.array([0.5 * (q @ q - 1.0)]))
    return perturb.problem(lm.Problem(system, np.array([0.6, 0.0, 0.8]), np.array([0.0, 1.2, 0.0]), holonomic=sphere))


def sphere_run(method: lm.Method, perturb: Perturbation) -> tuple[lm.Vector, lm.Vector, float, float]:
    """Energy H = ½|p|² + V and L_z = x p_y − y p_x at the nodes of a run to T = 60 at h = 0.02, and
    the largest |g(q)| and |q·p| (position and velocity constraints)."""
    sol = lm.integrate(sphere_problem(perturb), method, h=0.02, t_final=60.0)
    q, p = sol.g, sol.mu
    energy = 0.5 * np.sum(p**2, axis=1) + q[:, 2] + 0.5 * q[:, 2] ** 3
    momentum = q[:, 0] * p[:, 1] - q[:, 1] * p[:, 0]
    return (energy, momentum, float(np.max(np.abs(0.5 * (np.sum(q**2, axis=1) - 1.0)))),
            float(np.max(np.abs(np.sum(q * p, axis=1)))))


def drift(values: lm.Vector) -> float:
    return float(np.max(np.abs(values - values[0])))


def halves(values: lm.Vector) -> tuple[float, float]:
    """The largest deviation from the start over the first and over the second half of the run."""
    half = len(values) // 2
    return drift(values[:half]), float(np.max(np.abs(values[half:] - values[0])))


@pytest.mark.parametrize("method", [lm.GGLEnergyMomentum(), lm.DiscreteGradientMultiplier()], ids=repr)
def test_energy_conserving_schemes_keep_energy_and_constraint_over_3000_steps(method: lm.Method,
                                                                              perturb: Perturbation) -> None:
    energy, _, position, velocity = sphere_run(method, perturb)
    assert drift(energy) <= 1e-12  # round-off random walk (measured ≤ 8e-14)
    assert position <= 1e-14
    if isinstance(method, lm.GGLEnergyMomentum):
        assert velocity <= 1e-14  # EM enforces the secondary constraint too


@pytest.mark.parametrize("method", [lm.GGLThetaA(), lm.GGLVariationalEuler()], ids=repr)
def test_variational_schemes_keep_the_momentum_map_and_a_bounded_energy_error(method: lm.Method,
                                                                               perturb: Perturbation) -> None:
    energy, momentum, _, _ = sphere_run(method, perturb)
    first, second = halves(energy)
    assert drift(momentum) <= 1e-13  # discrete Noether theorem
    assert second <= 1.1 * first  # bounded oscillation, no drift (symplectic)
    assert 0.0 < first <= 0.05


@pytest.mark.parametrize("method", [lm.SimpsonVI(), lm.MidpointVI()], ids=repr)
def test_variational_schemes_with_position_dependent_mass_do_not_drift_in_energy(method: lm.Method,
                                                                                 perturb: Perturbation) -> None:
    system = lm.MechanicalSystem(lm.Rn(2), lambda q: jnp.diag(jnp.array([1.0 + q[0] ** 2, 1.0])),
                                 lambda q: 0.25 * q[0] ** 4 + 0.5 * q[1] ** 2 + 0.3 * q[0] * q[1])
    sol = lm.integrate(lm.Problem(system, perturb([1.0, 0.0]), perturb([0.0, 1.0])), method, h=0.05, t_final=100.0)
    energy = np.array([system.energy(q, v) for q, v in zip(sol.g, sol.eta)])
    first, second = halves(energy)
    assert second <= 1.1 * first
    assert first <= (1e-7 if isinstance(method, lm.SimpsonVI) else 1e-3)  # O(h⁴) and O(h²): 4.3e-8, 2.9e-4
    assert np.max(sol.stats.residuals) <= 1e-13  # every step solved to round-off
