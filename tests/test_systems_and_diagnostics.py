"""The problem catalogue, diagnostics and order estimation against independent truths."""

import math

import numpy as np
import pytest

import liemech as lm
from liemech.diagnostics import drift, energy, momentum_along, spatial_momentum
from liemech.finite_differences import jacobian
from liemech.systems import HeavyTop, HenonHeiles
from liemech.testing import estimate_order

TOP = HeavyTop()


def test_heavy_top_derivatives_match_finite_differences() -> None:
    G, chart = lm.SO3(), lm.SO3().retraction("exp")
    R = G.random_point(np.random.default_rng(5))
    gradient = jacobian(lambda z: np.array([TOP.potential(R @ chart.tau(z))]), np.zeros(3))[0]
    hessian = jacobian(lambda z: TOP.potential_gradient(R @ chart.tau(z)), np.zeros(3))
    assert np.max(np.abs(gradient - TOP.potential_gradient(R))) <= 1e-10
    assert np.max(np.abs(hessian - TOP.potential_hessian(R))) <= 1e-10


def test_mechanical_system_fallbacks_match_analytic_derivatives() -> None:
    analytic = TOP.system()
    fallback = lm.MechanicalSystem(lm.SO3(), np.diag(TOP.inertia), TOP.potential)
    R = lm.SO3().random_point(np.random.default_rng(6))
    eta = np.array([0.3, -0.2, 0.5])
    assert np.max(np.abs(fallback.force(R, eta) - analytic.force(R, eta))) <= 1e-10
    assert np.max(np.abs(fallback.force_d_g(R, eta) - analytic.force_d_g(R, eta))) <= 1e-8


def test_configuration_dependent_inertia_derivatives() -> None:
    """𝕀(q) = diag(2 + sin q₁, 1 + q₁²) on R²: force ½ηᵀ∂𝕀η and its derivatives by differences."""
    def inertia(q: lm.Vector) -> lm.Matrix:
        return np.diag([2.0 + math.sin(q[0]), 1.0 + q[0] ** 2])

    system = lm.MechanicalSystem(lm.Rn(2), inertia, lambda q: float(q @ q))
    q, eta = np.array([0.4, -0.3]), np.array([1.2, -0.7])
    assert np.max(np.abs(jacobian(lambda x: np.array([system.value(x, eta)]), q)[0] - system.force(q, eta))) <= 1e-9
    assert np.max(np.abs(jacobian(lambda v: system.momentum(q, v), eta) - system.momentum_d_eta(q, eta))) <= 1e-10
    assert np.max(np.abs(jacobian(lambda x: system.momentum(x, eta), q) - system.momentum_d_g(q, eta))) <= 1e-9
    assert np.max(np.abs(jacobian(lambda v: system.force(q, v), eta) - system.force_d_eta(q, eta))) <= 1e-9
    assert np.max(np.abs(system.velocity(q, system.momentum(q, eta)) - eta)) <= 1e-15


def test_references_conserve_their_first_integrals() -> None:
    times = np.linspace(0.0, TOP.t_final, 5)
    Rs, mus = TOP.reference(times)
    E = [TOP.energy(R, m) for R, m in zip(Rs, mus)]
    J = [TOP.noether_momentum(R, m) for R, m in zip(Rs, mus)]
    assert drift(np.array(E)) <= 1e-12 and drift(np.array(J)) <= 1e-12
    hh = HenonHeiles()
    assert hh.energy(hh.q0, hh.p0) < 1.0 / 6.0
    qs, ps = hh.reference(np.linspace(0.0, 10.0, 5))
    assert drift(np.array([hh.energy(q, p) for q, p in zip(qs, ps)])) <= 1e-12


def test_diagnostics_on_a_solution() -> None:
    system = TOP.system()
    sol = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=1.0)
    e3 = np.array([0.0, 0.0, 1.0])
    along = momentum_along(lm.SO3(), sol, e3)
    direct = np.array([TOP.noether_momentum(R, m) for R, m in zip(sol.g, sol.mu)])
    assert np.max(np.abs(along - direct)) <= 1e-15
    E = energy(system, sol)
    assert np.max(np.abs(E - [TOP.energy(R, m) for R, m in zip(sol.g, sol.mu)])) <= 1e-14
    assert np.max(np.abs(spatial_momentum(lm.SO3(), sol.g[3], sol.mu[3]) - sol.g[3] @ sol.mu[3])) <= 1e-15


def test_estimate_order_ignores_the_plateau() -> None:
    h = np.array([0.1, 0.05, 0.025, 0.0125, 0.00625, 0.003125])
    errors = 3.0 * h**4 * (1.0 + 0.01 * np.array([1, -1, 1, -1, 1, -1]))
    errors[-2:] = [2e-14, 3e-14]  # round-off
    fit = estimate_order(h, errors)
    assert abs(fit.slope - 4.0) <= 0.05 and len(fit.discarded) == 2


def test_estimate_order_on_explicit_methods() -> None:
    """Euler and classical RK4 on y′ = −y², y(0) = 1, exact 1/(1 + t), at t = 1: orders 1 and 4."""
    def solve(n: int, rk4: bool) -> float:
        def f(y: float) -> float:
            return -y * y

        h, y = 1.0 / n, 1.0
        for _ in range(n):
            if rk4:
                k1 = f(y); k2 = f(y + h / 2 * k1); k3 = f(y + h / 2 * k2); k4 = f(y + h * k3)  # noqa: E702
                y += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            else:
                y += h * f(y)
        return abs(y - 0.5)

    steps = [10, 20, 40, 80]
    h = [1.0 / n for n in steps]
    assert abs(estimate_order(h, [solve(n, False) for n in steps]).slope - 1.0) <= 0.1
    assert abs(estimate_order(h, [solve(n, True) for n in steps]).slope - 4.0) <= 0.1


def test_estimate_order_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="equal length"):
        estimate_order([0.1, 0.05], [1e-3])
    with pytest.raises(ValueError, match="positive"):
        estimate_order([0.1, -0.05], [1e-3, 1e-4])
    with pytest.raises(ValueError, match="only 1 points above the round-off plateau"):
        estimate_order([0.1, 0.05, 0.025], [1e-3, 1e-15, 1e-15])
