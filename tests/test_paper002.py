"""Simpson VI, midpoint VI and RK4 (paper 002) on the Lagrange top, against its exact Jacobi
elliptic solution, an independent DOP853 integration, conservation laws and finite differences."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.finite_differences import jacobian
from liemech.integrators.midpoint_vi import MidpointStepper
from liemech.integrators.simpson import SimpsonStepper
from liemech.systems.lagrange_top import LagrangeTop
from liemech.testing import estimate_order

TOP = LagrangeTop()


def test_exact_solution_reference_values() -> None:
    """Spec §II.10–II.11 (computed at 40 digits; the paper's 1.84671 s is a discrepancy)."""
    assert abs(TOP.nutation_period() / 1.847238981508926 - 1.0) <= 1e-12
    assert abs(math.degrees(float(TOP.theta(np.array([0.3]))[0])) - 32.1235062597) <= 1e-9
    reduced = LagrangeTop.table6()
    assert abs(float(reduced.theta(np.array([1.0]))[0]) - 0.859755488601930) <= 1e-13
    assert abs(reduced.nutation_period() - 0.777626549919943) <= 1e-13


def test_exact_solution_matches_the_euler_lagrange_equations() -> None:
    """θ(t) of the elliptic solution against DOP853 on M(q)q̈ = −Ṁq̇ + ½q̇ᵀ∇Mq̇ − ∇V."""
    def rhs(t: float, y: lm.Vector) -> lm.Vector:
        q, v = y[:3], y[3:]
        dM = TOP.mass_matrix_gradient(q)
        drive = 0.5 * np.einsum("kij,i,j->k", dM, v, v) - TOP.potential_gradient(q) - np.einsum("kij,j,k->i", dM, v, v)
        return np.concatenate([v, np.linalg.solve(TOP.mass_matrix(q), drive)])

    period = TOP.nutation_period()
    times = np.linspace(0.0, period, 9)
    sol = solve_ivp(rhs, (0.0, period), np.concatenate([TOP.q0, TOP.qdot0]), method="DOP853", t_eval=times,
                    rtol=1e-12, atol=1e-13)
    assert np.max(np.abs(sol.y[1] - TOP.theta(times))) <= 1e-8


@pytest.mark.parametrize("stepper_class", [SimpsonStepper, MidpointStepper], ids=["Simpson", "midpoint"])
def test_newton_jacobians_are_exact(stepper_class: type[SimpsonStepper] | type[MidpointStepper]) -> None:
    problem = TOP.problem()
    stepper = stepper_class(problem.system, 0.01, lm.NewtonOptions())
    rng = np.random.default_rng(9)
    q, p = problem.g0, problem.mu0
    size = 3 * 3 if stepper_class is SimpsonStepper else 2 * 3
    x = np.concatenate([q, p, q][: size // 3]) + 0.01 * rng.normal(size=size)
    _, J = stepper._residual(q, p, x, True)
    J_fd = jacobian(lambda y: stepper._residual(q, p, y, False)[0], x, step=1e-5)
    assert J is not None
    assert np.max(np.abs(J - J_fd)) <= 1e-6 * max(1.0, float(np.max(np.abs(J))))


@pytest.mark.slow
@pytest.mark.parametrize(
    "method, order",
    [(lm.SimpsonVI(), 4), (lm.MidpointVI(), 2), (lm.RK4(), 4), (lm.RK4("velocity"), 4), (lm.VPRK(lm.lobatto(3)), 4)],
    ids=lambda x: getattr(x, "name", str(x)),
)
def test_orders_on_the_lagrange_top(method: lm.Method, order: int) -> None:
    """‖e_θ‖∞ and ‖e_H‖∞ over one nutation period, h = t̄/N (spec §II.8)."""
    problem = TOP.problem()
    period = TOP.nutation_period()
    H0 = TOP.energy(problem.g0, problem.mu0)
    steps = [100, 200, 400, 800]
    errors_theta, errors_energy = [], []
    for n in steps:
        sol = lm.integrate(problem, method, h=period / n, n_steps=n)
        theta = np.array([q[1] for q in sol.g])
        exact = TOP.theta(sol.t)
        errors_theta.append(float(np.max(np.abs((theta - exact) / exact))))
        errors_energy.append(max(abs(TOP.energy(q, p) - H0) / H0 for q, p in zip(sol.g, sol.mu)))
    h = [period / n for n in steps]
    assert abs(estimate_order(h, errors_theta).slope - order) <= 0.2
    assert abs(estimate_order(h, errors_energy).slope - order) <= 0.25


@pytest.mark.slow
def test_ten_periods_momenta_and_energy() -> None:
    """The VIs keep p_φ, p_ψ exactly and the energy error bounded over 10 nutation periods;
    RK4 in (q, p) lets the energy error grow, RK4 in (q, q̇) lets p_φ and p_ψ drift."""
    problem = TOP.problem()
    period, n = TOP.nutation_period(), 100
    H0 = TOP.energy(problem.g0, problem.mu0)
    growth, drift = {}, {}
    for method in (lm.SimpsonVI(), lm.MidpointVI(), lm.RK4(), lm.RK4("velocity")):
        sol = lm.integrate(problem, method, h=period / n, n_steps=10 * n)
        energy_error = np.array([abs(TOP.energy(q, p) - H0) / H0 for q, p in zip(sol.g, sol.mu)])
        growth[method.name] = float(energy_error[-n:].max() / energy_error[: n + 1].max())
        drift[method.name] = max(float(np.max(np.abs(sol.mu[:, i] / problem.mu0[i] - 1.0))) for i in (0, 2))
    for vi in ("SimpsonVI()", "MidpointVI()"):
        assert drift[vi] <= 1e-12
        assert growth[vi] <= 1.1
    assert growth["RK4('canonical')"] >= 3.0
    assert drift["RK4('velocity')"] >= 1e-9


def test_configuration_space_and_constraints_are_checked() -> None:
    with pytest.raises(TypeError, match="SimpsonVI\\(\\) works on Rn"):
        from liemech.systems import HeavyTop

        lm.integrate(HeavyTop().problem(), lm.SimpsonVI(), h=0.1, n_steps=1)
    from liemech.systems.cartesian_pendulum import CartesianPendulum

    with pytest.raises(ValueError, match="does not handle holonomic constraints"):
        lm.integrate(CartesianPendulum().problem(), lm.MidpointVI(), h=0.1, n_steps=1)
    with pytest.raises(ValueError, match="variables must be 'canonical' or 'velocity'"):
        lm.RK4("lagrangian")  # type: ignore[arg-type]
