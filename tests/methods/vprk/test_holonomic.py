"""Holonomic VPRK (Lobatto SPRK; s = 2 is RATTLE) on R² and on SO(3) × R³ against independent
truths: DOP853 references of the reduced equations, fitted orders, the constraints themselves,
and finite-difference Jacobians."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.methods.method import NodeState
from liemech.methods.vprk.scheme import VPRKEquations
from liemech.systems.cartesian_pendulum import CartesianPendulum
from liemech.systems.heavy_top_constrained import ConstrainedHeavyTop
from liemech.testing import estimate_order
from liemech.testing.finite_differences import jacobian
from tests.perturbation import Perturbation

PENDULUM = CartesianPendulum()
TOP = ConstrainedHeavyTop()
STEPS = [10, 20, 40, 80]


def constraint_defects(problem: lm.Problem[lm.Point], sol: lm.Solution[lm.Point]) -> tuple[float, float]:
    """max_k |Φ(g_k)| and max_k |B(g_k) η_k| (η_k = ∂h/∂μ: the tangency condition)."""
    c = problem.holonomic
    assert c is not None
    phi = max(float(np.max(np.abs(c.value(g)))) for g in sol.points())
    tangency = max(float(np.max(np.abs(c.trivialised_jacobian(problem.group, g) @ e))) for g, e in zip(sol.points(), sol.eta))
    return phi, tangency


@pytest.mark.slow
@pytest.mark.parametrize("s", [2, 3, 4])
def test_cartesian_pendulum_orders_and_constraints(s: int) -> None:
    problem = PENDULUM.problem()
    q_ref, p_ref, lam_ref = PENDULUM.reference(np.array([PENDULUM.t_final]))
    errors_q, errors_p, errors_lam = [], [], []
    for n in STEPS:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s)), h=PENDULUM.t_final / n, t_final=PENDULUM.t_final)
        errors_q.append(float(np.max(np.abs(sol.g[-1] - q_ref[-1]))))
        errors_p.append(float(np.max(np.abs(sol.mu[-1] - p_ref[-1]))))
        assert sol.lam is not None
        errors_lam.append(abs(float(sol.lam[-1, 0]) - float(lam_ref[-1])))
        phi, tangency = constraint_defects(problem, sol)  # type: ignore[arg-type]
        assert phi <= 1e-14 and tangency <= 1e-14
    h = [PENDULUM.t_final / n for n in STEPS]
    assert abs(estimate_order(h, errors_q).slope - (2 * s - 2)) <= 0.15
    assert abs(estimate_order(h, errors_p).slope - (2 * s - 2)) <= 0.15
    assert estimate_order(h, errors_lam).slope >= s - 1 - 0.15  # Λˢ at the node


@pytest.mark.slow
@pytest.mark.parametrize(("s", "retraction"), [(2, "cay"), (3, "cay"), (4, "cay"), (3, "exp")])
def test_heavy_top_on_so3_x_r3(s: int, retraction: lm.RetractionKind) -> None:
    """Orders 2s − 2 in R and ω against the reduced top's DOP853 reference; Φ and tangency exact."""
    problem = TOP.problem()
    reduced = TOP.reduced()
    R_ref, mu_ref = reduced.reference(np.array([TOP.t_final]))
    omega_ref = np.linalg.solve(reduced.inertia, mu_ref[-1])
    errors_R, errors_omega = [], []
    for n in STEPS:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s), retraction), h=TOP.t_final / n, t_final=TOP.t_final)
        errors_R.append(float(np.max(np.abs(np.asarray(sol.point(-1)[0]) - R_ref[-1]))))
        errors_omega.append(float(np.max(np.abs(sol.eta[-1][:3] - omega_ref))))
        phi, tangency = constraint_defects(problem, sol)  # type: ignore[arg-type]
        assert phi <= 1e-14 and tangency <= 1e-14
    h = [TOP.t_final / n for n in STEPS]
    assert abs(estimate_order(h, errors_R).slope - (2 * s - 2)) <= 0.2
    assert abs(estimate_order(h, errors_omega).slope - (2 * s - 2)) <= 0.2


def test_constrained_top_follows_the_unconstrained_model() -> None:
    """Lobatto-3 on SO(3) × R³ and on SO(3) (pivot inertia) give the same R to the discretisation error."""
    h, T = 0.05, 2.0
    constrained = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=h, t_final=T)
    reduced = lm.integrate(TOP.reduced().problem(), lm.VPRK(lm.lobatto(3)), h=h, t_final=T)
    R_ref, _ = TOP.reduced().reference(np.array([T]))
    gap = max(float(np.max(np.abs(np.asarray(a[0]) - b))) for a, b in zip(constrained.points(), reduced.g))
    error = float(np.max(np.abs(reduced.g[-1] - R_ref[-1])))
    assert gap <= 1e-6 and error <= 1e-6
    assert constrained.lam is not None and constrained.lam.shape == (len(constrained.t), 3)


def test_jacobian_is_exact_on_a_vector_space() -> None:
    """Newton's Jacobian of the constrained step equations (autodiff) equals finite differences."""
    problem = PENDULUM.problem()
    equations = VPRKEquations(lm.VPRK(lm.lobatto(3)), problem)
    rng = np.random.default_rng(7)
    x = np.concatenate([np.tile(problem.eta0, 3) + 0.1 * rng.normal(size=6), rng.normal(size=3)])
    state = NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0)
    J = np.asarray(jax.jacfwd(lambda y: equations.residual(y, state, 0.1))(x))
    J_fd = jacobian(lambda y: np.asarray(equations.residual(y, state, 0.1)), x)
    assert J.shape == (9, 9)
    assert np.max(np.abs(J - J_fd)) <= 1e-9


def test_consistent_initial_multiplier() -> None:
    """Pendulum at rest at angle θ₀: λ(0) = y₀ − |q̇₀|² = −cos θ₀."""
    lam0 = PENDULUM.problem().lam0
    assert lam0 is not None and abs(float(lam0[0]) + math.cos(PENDULUM.theta0)) <= 1e-15


@pytest.mark.slow
@pytest.mark.long_run
@pytest.mark.parametrize("example", ["pendulum", "top"])
def test_energy_has_no_drift_over_10_000_steps(example: str, perturb: Perturbation) -> None:
    """Lobatto-2 (RATTLE) over T = 250 with h and h/2, the finer run 10⁴ steps: the energy error is
    an O(h²) oscillation (its maximum scales as h²) with no linear trend, and the constraints hold
    to round-off throughout. The regular pendulum's error also stays at the same level in both
    halves of the run; the top is chaotic and visits regions of different error amplitude."""
    problem: lm.Problem[lm.Point] = perturb.problem((PENDULUM if example == "pendulum" else TOP).problem())  # type: ignore[arg-type]
    T, maxima = 250.0, []
    for h in (0.05, 0.025):
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=T)
        E = np.array([problem.system.energy(g, e) for g, e in zip(sol.points(), sol.eta)])
        error = E - E[0]
        maxima.append(float(np.max(np.abs(error))))
        assert abs(np.polyfit(sol.t, error, 1)[0] * T) <= 0.5 * maxima[-1]
        if example == "pendulum":
            half = len(error) // 2
            assert np.max(np.abs(error[half:])) <= 1.2 * np.max(np.abs(error[:half]))
        phi, tangency = constraint_defects(problem, sol)
        assert phi <= 1e-13 and tangency <= 1e-13
    assert len(sol.t) == 10_001
    assert abs(math.log2(maxima[0] / maxima[1]) - 2.0) <= 0.3


def test_inconsistent_data_rank_deficiency_and_gauss_are_rejected() -> None:
    system, constraint = PENDULUM.system(), PENDULUM.constraint()
    with pytest.raises(ValueError, match=r"inconsistent initial data: \|Φ\(g0\)\| = 1\.050e-01.*project_to_constraints"):
        lm.Problem(system, np.array([0.0, -1.1]), np.zeros(2), holonomic=constraint)
    with pytest.raises(ValueError, match=r"\|B\(g0\) eta0\| = 1\.000e\+00"):
        lm.Problem(system, np.array([0.0, -1.0]), np.array([0.0, 1.0]), holonomic=constraint)
    doubled: lm.HolonomicConstraint[lm.Vector] = lm.HolonomicConstraint(
        lambda q: jnp.stack([0.5 * (jnp.dot(q, q) - 1.0), jnp.dot(q, q) - 1.0]))
    with pytest.raises(ValueError, match="rank 1 < m = 2.*remove redundant constraints"):
        lm.Problem(system, np.array([0.0, -1.0]), np.zeros(2), holonomic=doubled)
    with pytest.raises(ValueError, match=r"gauss\(2\) violates H1 .*H3"):
        lm.integrate(PENDULUM.problem(), lm.VPRK(lm.gauss(2)), h=0.1, n_steps=1)


def test_projection_repairs_nearly_consistent_data() -> None:
    system, constraint = PENDULUM.system(), PENDULUM.constraint()
    q, v = lm.project_to_constraints(system, constraint, np.array([0.6, -0.9]), np.array([0.3, 0.4]))
    assert abs(0.5 * (q @ q - 1.0)) <= 1e-15 and abs(q @ v) <= 1e-15
    problem = lm.Problem(system, q, v, holonomic=constraint)
    assert problem.n_constraints == 1
    fd_constraint: lm.HolonomicConstraint[lm.Vector] = lm.HolonomicConstraint(  # finite differences
        lambda x: jnp.array([0.5 * (jnp.dot(x, x) - 1.0)]))
    q2, v2 = lm.project_to_constraints(system, fd_constraint, np.array([0.6, -0.9]), np.array([0.3, 0.4]))
    assert np.max(np.abs(q2 - q)) <= 1e-12 and np.max(np.abs(v2 - v)) <= 1e-9
