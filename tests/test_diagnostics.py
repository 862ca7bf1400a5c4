"""Diagnostics: energy, the spatial momentum Ad*_{g⁻¹}μ, Noether momenta along a direction, drift,
holonomic constraint residuals."""

import numpy as np
import pytest

import liemech as lm
from liemech.diagnostics import (
    drift,
    energy,
    holonomic_residuals,
    momentum_along,
    spatial_momentum,
    velocity_constraint,
)
from liemech.systems import HeavyTop, Pendulum, SphericalPendulum

TOP = HeavyTop()
E3 = np.array([0.0, 0.0, 1.0])


def reference_solution(top: HeavyTop, times: lm.Vector) -> lm.Solution[lm.Matrix]:
    """The DOP853 reference of the heavy top packed as a Solution (η = 𝕀⁻¹μ)."""
    Rs, mus = top.reference(times)
    system = top.system()
    etas = np.array([system.velocity(R, m) for R, m in zip(Rs, mus)])
    zeros = np.zeros(times.size)
    return lm.Solution(times, np.array(Rs), etas, mus, None, lm.SolverStats(zeros, zeros, 0.0))


def test_heavy_top_momentum_along_e3_is_the_noether_momentum() -> None:
    """⟨Ad*_{R⁻¹}μ, e₃⟩ = ⟨Rμ, e₃⟩ = ⟨μ, Rᵀe₃⟩, on the reference and on a VPRK solution."""
    reference = reference_solution(TOP, np.linspace(0.0, TOP.t_final, 21))
    sol = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=TOP.t_final)
    for s in (reference, sol):
        along = momentum_along(lm.SO3(), s, E3)
        direct = np.array([TOP.noether_momentum(R, m) for R, m in zip(s.g, s.mu)])
        assert along.shape == (len(s.t),)
        assert np.max(np.abs(along - direct)) <= 1e-15
    assert drift(momentum_along(lm.SO3(), reference, E3)) <= 1e-12
    assert drift(momentum_along(lm.SO3(), sol, E3)) <= 1e-13  # discrete Noether theorem


def test_heavy_top_energy_diagnostic() -> None:
    """E_k = ⟨μ_k, η_k⟩ − ℓ(g_k, η_k) = ½ μᵀ𝕀⁻¹μ + V; constant along the reference, O(h⁴) for Lobatto-3."""
    system = TOP.system()
    reference = reference_solution(TOP, np.linspace(0.0, TOP.t_final, 21))
    E = energy(system, reference)
    assert np.max(np.abs(E - [TOP.energy(R, m) for R, m in zip(reference.g, reference.mu)])) <= 1e-14
    assert drift(E) <= 1e-12
    sol = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=TOP.t_final)
    assert 1e-9 <= drift(energy(system, sol)) <= 1e-5


def test_spatial_momentum_closed_forms() -> None:
    """SO(3): Rμ. SE(3), μ = (μ_v, μ_ω): (Rμ_v, p × Rμ_v + Rμ_ω), linear and angular momentum about
    the origin. Rⁿ: μ itself."""
    rng = np.random.default_rng(7)
    R = lm.SO3().random_point(rng)
    mu = rng.standard_normal(3)
    assert np.max(np.abs(spatial_momentum(lm.SO3(), R, mu) - R @ mu)) <= 1e-15
    g = lm.SE3().random_point(rng)
    R, p, mu6 = g[:3, :3], g[:3, 3], rng.standard_normal(6)
    linear = R @ mu6[:3]
    expected = np.concatenate([linear, np.cross(p, linear) + R @ mu6[3:]])
    assert np.max(np.abs(spatial_momentum(lm.SE3(), g, mu6) - expected)) <= 1e-14
    q = rng.standard_normal(2)
    assert np.array_equal(spatial_momentum(lm.Rn(2), q, mu[:2]), mu[:2])


@pytest.mark.parametrize("group", [lm.SO3(), lm.SE2(), lm.SE3()], ids=repr)
def test_spatial_momentum_is_equivariant(group: lm.LieGroup[lm.Matrix]) -> None:
    """J(h g, μ) = Ad*_{h⁻¹} J(g, μ): the momentum map of left translations is equivariant."""
    rng = np.random.default_rng(11)
    g, h = group.random_point(rng), group.random_point(rng)
    mu = rng.standard_normal(group.dim)
    lhs = spatial_momentum(group, group.compose(h, g), mu)
    rhs = group.Ad(group.inverse(h)).T @ spatial_momentum(group, g, mu)
    assert np.max(np.abs(lhs - rhs)) <= 1e-13


def test_free_body_on_se3_conserves_all_six_momenta() -> None:
    """ℓ = ½ ηᵀ diag(m, m, m, J) η is invariant under every left translation of SE(3), so VPRK keeps
    ⟨Ad*_{g⁻¹}μ, ζ⟩ for each basis direction ζ, while the body momentum itself moves."""
    system = lm.MechanicalSystem(lm.SE3(), np.diag([2.0, 2.0, 2.0, 1.0, 2.0, 3.5]), lambda g: 0.0,
                                 lambda g: np.zeros(6), lambda g: np.zeros((6, 6)))
    problem = lm.Problem(system, lm.SE3().identity(), np.array([0.3, -0.1, 0.2, 0.8, -0.4, 1.1]))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=0.1, n_steps=20)
    for k in range(6):
        assert drift(momentum_along(lm.SE3(), sol, np.eye(6)[k])) <= 1e-13
    assert drift(sol.mu[:, 0]) > 1e-2


def test_energy_on_rn() -> None:
    """Pendulum: E = ½p² + ω²(1 − cos q) at each node of a Lobatto-3 run, within O(h⁴) of H₀."""
    pendulum = Pendulum()
    sol = lm.integrate(pendulum.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=pendulum.t_final)
    E = energy(pendulum.system(), sol)
    assert np.max(np.abs(E - [pendulum.energy(q, p) for q, p in zip(sol.g, sol.mu)])) <= 1e-15
    assert drift(E) <= 1e-5


def test_drift() -> None:
    """drift(v) = max_k |v_k − v_0|."""
    assert drift(np.array([1.0, 1.5, 0.2, 1.0])) == pytest.approx(0.8)
    assert drift(np.array([3.0])) == 0.0
    assert drift(np.array([-2.0, -2.0])) == 0.0


def test_holonomic_residuals_are_the_constraint_and_its_derivatives() -> None:
    """On the 3D pendulum g = ½(|q|² − 1), G = qᵀ: compare with q·q, q·v and q·M⁻¹p written out."""
    pendulum = SphericalPendulum(mass=2.0)
    problem = pendulum.problem()
    sol = lm.integrate(problem, lm.GGLThetaA(), h=0.05, n_steps=5)  # VI-A: all three are nonzero
    q, v, p = np.array(sol.g), sol.eta, sol.mu
    position, velocity, momentum = holonomic_residuals(problem, sol)
    assert np.allclose(position[:, 0], 0.5 * (np.sum(q * q, axis=1) - 1.0), rtol=0.0, atol=1e-16)
    assert np.allclose(velocity[:, 0], np.sum(q * v, axis=1), rtol=0.0, atol=1e-15)
    assert np.allclose(momentum[:, 0], np.sum(q * p, axis=1) / 2.0, rtol=0.0, atol=1e-15)
    assert np.min(np.abs(position[1:])) > 1e-8 and np.min(np.abs(velocity[1:] - momentum[1:])) > 1e-8
    assert np.array_equal(velocity_constraint(problem, sol.g, sol.eta), velocity)
