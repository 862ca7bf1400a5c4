"""Simpson VI, midpoint VI and RK4 (paper 002) on the Lagrange top, against its exact Jacobi
elliptic solution, an independent DOP853 integration, conservation laws and finite differences."""

import math

import jax
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.methods.method import NodeState
from liemech.methods.variational.midpoint import MidpointEquations
from liemech.methods.variational.simpson import SimpsonEquations
from liemech.solvers.newton import EPS
from liemech.systems.lagrange_top import LagrangeTop
from liemech.testing import estimate_order
from liemech.testing.finite_differences import jacobian
from tests.perturbation import Perturbation

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


@pytest.mark.parametrize("method", [lm.SimpsonVI(), lm.MidpointVI()], ids=["Simpson", "midpoint"])
def test_newton_jacobians_are_exact(method: lm.SimpsonVI | lm.MidpointVI) -> None:
    """Newton's Jacobian is jax.jacfwd of the step equations: it agrees with central finite
    differences of the residual to the stencil's accuracy at every h."""
    problem = TOP.problem()
    equations = (SimpsonEquations(method, problem) if isinstance(method, lm.SimpsonVI)
                 else MidpointEquations(method, problem))
    rng = np.random.default_rng(9)
    state = NodeState(problem.g0, problem.mu0, problem.eta0)
    residual = jax.jit(lambda y, h: equations.residual(y, state, h))
    exact = jax.jit(jax.jacfwd(residual))
    for h in (0.01, 0.005):
        increment = h * problem.eta0
        if isinstance(method, lm.SimpsonVI):
            x = np.concatenate([0.5 * increment, problem.mu0, increment])
        else:
            x = np.concatenate([problem.mu0, increment])
        x = x + 0.01 * rng.normal(size=x.size)
        J = np.asarray(exact(x, h))
        J_fd = jacobian(lambda y: np.asarray(residual(y, h)), x)
        assert J.shape == (x.size, x.size)
        assert np.max(np.abs(J - J_fd)) <= 1e-9 * max(1.0, float(np.max(np.abs(J))))


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
    from liemech.systems import NonholonomicParticle

    with pytest.raises(ValueError, match="RK4\\('canonical'\\) does not handle nonholonomic constraints"):
        lm.integrate(NonholonomicParticle().problem(), lm.RK4(), h=0.1, n_steps=1)
    with pytest.raises(ValueError, match="variables must be 'canonical' or 'velocity'"):
        lm.RK4("lagrangian")  # type: ignore[arg-type]


def test_lagrange_top_regression_values() -> None:
    """One period, N = 80 (spec §II.13 (A), computed independently there): Simpson ‖e_θ‖∞ = 4.060e-5,
    ‖e_H‖∞ = 5.392e-9; midpoint 5.872e-2 / 4.047e-6."""
    problem = TOP.problem()
    period = TOP.nutation_period()
    H0 = TOP.energy(problem.g0, problem.mu0)
    for method, e_theta, e_H in ((lm.SimpsonVI(), 4.060e-5, 5.392e-9), (lm.MidpointVI(), 5.872e-2, 4.047e-6)):
        sol = lm.integrate(problem, method, h=period / 80, n_steps=80)
        theta = np.array([q[1] for q in sol.g])
        assert abs(float(np.max(np.abs(theta / TOP.theta(sol.t) - 1.0))) / e_theta - 1.0) <= 2e-3
        assert abs(max(abs(TOP.energy(q, p) - H0) / H0 for q, p in zip(sol.g, sol.mu)) / e_H - 1.0) <= 2e-3


@pytest.mark.slow
@pytest.mark.long_run
def test_simpson_over_100_periods_at_20_steps_per_period(perturb: Perturbation) -> None:
    """100 nutation periods at h = t̄/20 (ψ turns 23 rad per step and grows to 4.6e4 rad): every
    step's equations are solved to the round-off of their terms (the momenta and h·forces, here
    below Newton's unit floor), however large ψ gets, and the run gives ‖e_θ‖∞ = 3.741e+0 and
    ‖e_H‖∞ = 2.515e-6 to the digits printed (the independent float64 reference). Newton takes
    the exact Jacobian at every iterate by default, as in the paper's Appendix A: at this step
    simplified Newton contracts slowly and not monotonically."""
    problem = perturb.problem(TOP.problem())
    period = TOP.nutation_period()
    h = period / 20
    H0 = TOP.energy(problem.g0, problem.mu0)
    method = lm.SimpsonVI()
    sol = lm.integrate(problem, method, h=h, n_steps=100 * 20, store_every=1)
    size = max(float(np.max(np.abs(sol.mu))),
               max(h * float(np.max(np.abs(problem.system.force(q, v)))) for q, v in zip(sol.g, sol.eta)))
    assert float(np.max(np.abs(np.array(sol.g)))) >= 4e4
    assert np.all(sol.stats.residuals[1:] <= method.newton.roundoff_factor * EPS * max(1.0, size))
    theta = np.array([q[1] for q in sol.g])
    assert abs(float(np.max(np.abs(theta / TOP.theta(sol.t) - 1.0))) - 3.741) <= 0.5e-3
    assert abs(max(abs(TOP.energy(q, p) - H0) / H0 for q, p in zip(sol.g, sol.mu)) - 2.515e-6) <= 0.5e-9


def test_rk4_stops_at_a_non_finite_state() -> None:
    """An explicit step too large for the dynamics (q̈ = −4q³ from q = 3 at h = 1) overflows at the
    third step: the run stops there with a ConvergenceError, not with NaN."""
    system = lm.MechanicalSystem(lm.Rn(1), np.eye(1), lambda q: q[0] ** 4)
    problem = lm.Problem(system, np.array([3.0]), np.array([0.0]))
    with pytest.raises(lm.ConvergenceError, match="non-finite") as caught:
        lm.integrate(problem, lm.RK4(), h=1.0, n_steps=20)
    assert caught.value.step == 2 and caught.value.time == 2.0


@pytest.mark.slow
@pytest.mark.long_run
def test_long_runs_keep_simpson_order_and_break_midpoint(perturb: Perturbation) -> None:
    """Over 100 nutation periods, going from N = 40 to 80 steps per period, Simpson's θ-order stays
    4 (4.25 in spec §II.13 (A)) while the midpoint VI's collapses to 0 (its phase is lost at both
    step sizes); both keep their energy orders."""
    problem = perturb.problem(TOP.problem())
    period = TOP.nutation_period()
    H0 = TOP.energy(problem.g0, problem.mu0)
    orders = {}
    for method in (lm.SimpsonVI(), lm.MidpointVI()):
        e_theta, e_H = [], []
        for n in (40, 80):
            sol = lm.integrate(problem, method, h=period / n, n_steps=100 * n, store_every=2)
            theta = np.array([q[1] for q in sol.g])
            e_theta.append(float(np.max(np.abs(theta / TOP.theta(sol.t) - 1.0))))
            e_H.append(max(abs(TOP.energy(q, p) - H0) / H0 for q, p in zip(sol.g, sol.mu)))
        orders[method.name] = (math.log2(e_theta[0] / e_theta[1]), math.log2(e_H[0] / e_H[1]))
    assert abs(orders["SimpsonVI()"][0] - 4.0) <= 0.4 and abs(orders["SimpsonVI()"][1] - 4.0) <= 0.3
    assert abs(orders["MidpointVI()"][0]) <= 0.5 and abs(orders["MidpointVI()"][1] - 2.0) <= 0.2


def test_double_pendulum() -> None:
    """Table 1 with ℓ = g/ω₀²: Simpson at h = 0.1 stays within 1e-2 rad of DOP853 over 10 s
    (3.7e-3 in spec §II.9); its energy error at h = 0.1 is 4.412e-4 (§II.13 (B))."""
    from liemech.systems import DoublePendulum

    pendulum = DoublePendulum()
    problem = pendulum.problem()
    H0 = pendulum.energy(problem.g0, problem.mu0)
    assert abs(H0 - (-4.666257134621)) <= 1e-11
    sol = lm.integrate(problem, lm.SimpsonVI(), h=0.1, t_final=10.0)
    q_ref, _ = pendulum.reference(sol.t)
    assert float(np.max(np.abs(np.array(sol.g) - q_ref))) <= 1e-2
    e_H = max(abs(pendulum.energy(q, p) - H0) / abs(H0) for q, p in zip(sol.g, sol.mu))
    assert abs(e_H / 4.412e-4 - 1.0) <= 2e-3


@pytest.mark.slow
def test_double_pendulum_energy_orders() -> None:
    from liemech.systems import DoublePendulum

    pendulum = DoublePendulum()
    problem = pendulum.problem()
    H0 = pendulum.energy(problem.g0, problem.mu0)
    steps = [0.05, 0.025, 0.0125]
    for method, order in ((lm.SimpsonVI(), 4.0), (lm.MidpointVI(), 1.9)):
        errors = []
        for h in steps:
            sol = lm.integrate(problem, method, h=h, t_final=10.0)
            errors.append(max(abs(pendulum.energy(q, p) - H0) / abs(H0) for q, p in zip(sol.g, sol.mu)))
        assert abs(estimate_order(steps, errors).slope - order) <= 0.2


def test_simpson_on_the_complete_top_against_rk4_on_the_reduced_top() -> None:
    """Table 6: Simpson (complete, Euler angles) vs classical RK4 (reduced (18aq)), same h, 1 s:
    ‖ε_θ‖∞ = 5.029e-3 at h = 0.1 and order ≈ 4 (spec §II.13 (C)); both approach the exact θ."""
    from liemech.systems import ReducedLagrangeTop

    reduced = ReducedLagrangeTop()

    def rk4_theta(h: float) -> lm.Vector:
        y, out = reduced.initial_state(), [reduced.initial_state()[1]]
        for _ in range(round(1.0 / h)):
            k1 = reduced.rhs(0.0, y)
            k2 = reduced.rhs(0.0, y + 0.5 * h * k1)
            k3 = reduced.rhs(0.0, y + 0.5 * h * k2)
            k4 = reduced.rhs(0.0, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            out.append(y[1])
        return np.array(out)

    steps, gaps = [0.1, 0.05, 0.025, 0.0125], []
    for h in steps:
        sol = lm.integrate(reduced.top.problem(), lm.SimpsonVI(), h=h, t_final=1.0)
        gaps.append(float(np.max(np.abs(np.array([q[1] for q in sol.g]) - rk4_theta(h)))))
    assert abs(gaps[0] / 5.029e-3 - 1.0) <= 2e-3
    assert abs(estimate_order(steps, gaps).slope - 4.0) <= 0.2
    exact = reduced.top.theta(np.array([1.0]))[0]
    assert abs(float(reduced.reference(np.array([0.0, 1.0]))[-1, 1]) - exact) <= 1e-11
