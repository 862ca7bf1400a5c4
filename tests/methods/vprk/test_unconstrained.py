"""VPRK on the heavy top (SO(3)) and on Rⁿ against independent truths: a DOP853 reference of
the continuous equations, fitted convergence orders, Noether's theorem, eq. (9) of the vector
spec solved by scipy, and the symplectic form."""

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

import liemech as lm
from liemech.groups.base import RetractionKind
from liemech.methods import NodeState
from liemech.methods.vprk.scheme import VPRKEquations
from liemech.systems import ChaplyginSleigh, ConstrainedHeavyTop, RollingDisc, VerticalDisc
from liemech.systems.heavy_top import HeavyTop
from liemech.systems.henon_heiles import HenonHeiles
from liemech.testing import estimate_order, step_map
from liemech.testing.finite_differences import jacobian
from tests.perturbation import Perturbation

TOP = HeavyTop()
STEPS = [10, 20, 40, 80]


def top_errors(method: lm.VPRK) -> tuple[list[float], list[float], list[float]]:
    """Final-time errors in R and μ, and the Noether drift, for N in STEPS over T = 2."""
    R_ref, mu_ref = TOP.reference(np.array([TOP.t_final]))
    errors_R, errors_mu, drifts = [], [], []
    problem = TOP.problem()
    for n in STEPS:
        sol = lm.integrate(problem, method, h=TOP.t_final / n, t_final=TOP.t_final)
        errors_R.append(float(np.max(np.abs(sol.g[-1] - R_ref[-1]))))
        errors_mu.append(float(np.max(np.abs(sol.mu[-1] - mu_ref[-1]))))
        noether = np.array([TOP.noether_momentum(R, m) for R, m in zip(sol.g, sol.mu)])
        drifts.append(float(np.max(np.abs(noether - noether[0]))))
    return errors_R, errors_mu, drifts


# Every tableau with cay; exp with one Lobatto and one Gauss tableau (the retraction's derivatives do
# not depend on the tableau).
@pytest.mark.slow
@pytest.mark.parametrize(
    "tableau, order, retraction",
    [(lm.lobatto(2), 2, "cay"), (lm.lobatto(3), 4, "cay"), (lm.lobatto(4), 6, "cay"), (lm.gauss(1), 2, "cay"),
     (lm.gauss(2), 4, "cay"), (lm.lobatto(3), 4, "exp"), (lm.gauss(2), 4, "exp")],
    ids=lambda x: getattr(x, "name", str(x)),
)
def test_heavy_top_orders_and_noether(tableau: lm.TableauPair, order: int, retraction: lm.RetractionKind) -> None:
    errors_R, errors_mu, drifts = top_errors(lm.VPRK(tableau, retraction))
    h = [TOP.t_final / n for n in STEPS]
    assert abs(estimate_order(h, errors_R).slope - order) <= 0.15
    assert abs(estimate_order(h, errors_mu).slope - order) <= 0.15
    assert max(drifts) <= 1e-13


def test_heavy_top_lobatto3_one_run() -> None:
    """A fast regression check next to the slow order study (spec 004-Lie §9.1)."""
    errors_R, errors_mu, drifts = top_errors(lm.VPRK(lm.lobatto(3)))
    assert errors_R[-1] < 1e-6 and errors_mu[-1] < 1e-6
    assert errors_R[0] / errors_R[-1] > 2.0**4 * 0.8**3
    assert max(drifts) <= 1e-13


@pytest.mark.slow
@pytest.mark.long_run
def test_heavy_top_energy_has_no_drift_over_10_000_steps(perturb: Perturbation) -> None:
    """Lobatto-2 over T = 250: 10⁴ steps of h = 0.025 and 5000 of h = 0.05.

    A symplectic method's energy error is an O(h²) oscillation (a nearby modified energy is
    conserved), not an accumulation: the maximum scales as h², the second half of the run reaches
    no higher than the first, and a fitted linear trend is small against the oscillation.
    """
    T = 250.0
    maxima = []
    for h in (0.05, 0.025):
        sol = lm.integrate(perturb.problem(TOP.problem()), lm.VPRK(lm.lobatto(2)), h=h, t_final=T)
        error = np.array([TOP.energy(R, m) for R, m in zip(sol.g, sol.mu)])
        error -= error[0]
        half = len(error) // 2
        assert np.max(np.abs(error[half:])) <= 1.2 * np.max(np.abs(error[:half]))
        trend = np.polyfit(sol.t, error, 1)[0] * T
        assert abs(trend) <= 0.5 * np.max(np.abs(error))
        maxima.append(float(np.max(np.abs(error))))
    assert len(sol.t) == 10_001
    assert abs(math.log2(maxima[0] / maxima[1]) - 2.0) <= 0.3


HH = HenonHeiles()


def vector_vprk_step(A: lm.Matrix, b: lm.Vector, h: float, q: lm.Vector, p: lm.Vector) -> tuple[lm.Vector, lm.Vector]:
    """Eq. (9) of the vector spec for L = ½|v|² − U(q), solved by scipy's hybr on the V's."""
    s, n = len(b), len(q)
    A_hat = b[None, :] * (1.0 - A.T / b[:, None])  # â_ij = b_j (1 − a_ji / b_i)

    def stages(V: lm.Matrix) -> tuple[lm.Matrix, lm.Matrix]:
        Q = q + h * (A @ V)
        W = np.array([-HH.gradient(Qi) for Qi in Q])
        return Q, W

    def residual(x: lm.Vector) -> lm.Vector:
        V = x.reshape(s, n)
        _, W = stages(V)
        return (V - p - h * (A_hat @ W)).ravel()

    root = scipy.optimize.root(residual, np.tile(p, s), method="hybr", options={"xtol": 1e-15})
    V = root.x.reshape(s, n)
    _, W = stages(V)
    return q + h * (b @ V), p + h * (b @ W)


@pytest.mark.parametrize("tableau", [lm.lobatto(2), lm.lobatto(3), lm.lobatto(4), lm.gauss(2)], ids=lambda t: t.name)
def test_group_code_on_rn_is_the_vector_vprk(tableau: lm.TableauPair) -> None:
    h, n = 0.1, 10
    sol = lm.integrate(HH.problem(), lm.VPRK(tableau), h=h, n_steps=n)
    q, p = HH.problem().g0, HH.problem().mu0
    for k in range(n):
        q, p = vector_vprk_step(tableau.A, tableau.b, h, q, p)
        assert np.max(np.abs(sol.g[k + 1] - q)) <= 1e-13
        assert np.max(np.abs(sol.mu[k + 1] - p)) <= 1e-13


@pytest.mark.slow
@pytest.mark.parametrize(
    "tableau, order",
    [(lm.lobatto(2), 2), (lm.lobatto(3), 4), (lm.lobatto(4), 6), (lm.gauss(1), 2), (lm.gauss(2), 4), (lm.gauss(3), 6)],
    ids=lambda x: getattr(x, "name", str(x)),
)
def test_henon_heiles_orders(tableau: lm.TableauPair, order: int) -> None:
    T = 4.0
    q_ref, p_ref = HH.reference(np.array([T]))
    steps = [8, 16, 32, 64]
    errors = []
    for n in steps:
        sol = lm.integrate(HH.problem(), lm.VPRK(tableau), h=T / n, t_final=T)
        errors.append(max(float(np.max(np.abs(sol.g[-1] - q_ref[-1]))), float(np.max(np.abs(sol.mu[-1] - p_ref[-1])))))
    fit = estimate_order([T / n for n in steps], errors)
    assert abs(fit.slope - order) <= 0.2, fit


def test_one_step_map_is_symplectic() -> None:
    """Dψᵀ J Dψ = J for ψ: (q, p) ↦ (q₁, p₁) of Lobatto-3 on Hénon–Heiles (finite differences)."""
    problem = HH.problem()
    method = lm.VPRK(lm.lobatto(3))
    n = 2
    psi = step_map(problem, method, 0.2)
    z0 = np.concatenate([problem.g0, problem.mu0])
    D = jacobian(psi, z0)
    J = np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])
    assert np.max(np.abs(D.T @ J @ D - J)) <= 1e-10
    assert np.max(np.abs(D - np.eye(2 * n))) > 1e-2  # the map is far from the identity


def test_newton_statistics_and_failure() -> None:
    sol = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=1.0)
    assert 1.0 <= sol.stats.mean_iterations <= 12.0
    assert np.all(sol.stats.residuals[1:] <= 1e-13)
    with pytest.raises(lm.ConvergenceError, match=r"step 0 \(t = 0\)") as info:
        lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3), newton=lm.NewtonOptions(max_iterations=2)),
                     h=0.5, t_final=1.0)
    assert info.value.step == 0 and info.value.residual > 0.0


def test_papers_protocol_stops_at_1e_9() -> None:
    sol = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3), newton=lm.NewtonOptions.papers()), h=0.1, t_final=1.0)
    assert np.all(sol.stats.residuals[1:] <= 1e-9)
    default = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=1.0)
    assert sol.stats.mean_iterations < default.stats.mean_iterations


def test_integrate_rejects_bad_steps() -> None:
    method = lm.VPRK(lm.lobatto(2))
    with pytest.raises(ValueError, match="not a whole number of steps; .* n_steps="):
        lm.integrate(TOP.problem(), method, h=0.3, t_final=1.0)
    with pytest.raises(ValueError, match="h must be a positive finite step"):
        lm.integrate(TOP.problem(), method, h=-0.1, t_final=1.0)
    with pytest.raises(ValueError, match="give exactly one of t_final and n_steps"):
        lm.integrate(TOP.problem(), method, h=0.1)
    sol = lm.integrate(TOP.problem(), method, h=0.1, n_steps=10, store_every=4)
    assert np.allclose(sol.t, [0.0, 0.4, 0.8, 1.0]) and len(sol.g) == 4
    assert math.isclose(sol.t[-1], 1.0)


def test_simplified_and_full_newton_reach_the_same_solution() -> None:
    every = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3), newton=lm.NewtonOptions(jacobian="every")),
                         h=0.1, t_final=1.0)
    first = lm.integrate(TOP.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=1.0)
    assert np.max(np.abs(every.mu - first.mu)) <= 1e-14
    assert np.max(np.abs(every.g[-1] - first.g[-1])) <= 1e-14
    with pytest.raises(ValueError, match="jacobian must be 'first', 'every', 'refreshed' or 'carried'"):
        lm.NewtonOptions(jacobian="never")  # type: ignore[arg-type]


def test_newton_jacobian_is_exact_on_so3() -> None:
    """Newton's Jacobian is jax.jacfwd of the step equations: it agrees with finite differences of
    the residual to the stencil's accuracy at every h (the third derivative of τ included)."""
    problem = TOP.problem()
    rng = np.random.default_rng(8)
    x = np.tile(problem.eta0, 3) + 0.1 * rng.normal(size=9)
    state = NodeState(problem.g0, problem.mu0, problem.eta0)
    equations = VPRKEquations(lm.VPRK(lm.lobatto(3)), problem)
    for h in (0.1, 0.05, 0.025):
        J = np.asarray(jax.jacfwd(lambda y: equations.residual(y, state, h))(x))
        J_fd = jacobian(lambda y: np.asarray(equations.residual(y, state, h)), x)
        assert J.shape == (9, 9) and np.max(np.abs(J - J_fd)) <= 1e-9


@pytest.mark.slow
@pytest.mark.long_run
def test_long_run_on_a_body_outside_the_papers(perturb: Perturbation) -> None:
    """A rigid body of inertia diag(1.3, 0.7, 2.1) in V = (e₃ᵀRχ)² + 0.8 e₃ᵀRχ, χ = (0.3, 0.5, −0.4),
    given by V alone, over T = 100 with Lobatto-3: rotations about e₃ are a symmetry, so ⟨μ, Rᵀe₃⟩
    stays at round-off; the energy error is an O(h⁴) oscillation without drift (its fitted linear
    trend over the run is small against its size; fitted slope 4 between h = 0.05 and 0.025)."""
    chi, inertia = np.array([0.3, 0.5, -0.4]), np.diag([1.3, 0.7, 2.1])

    def potential(R: lm.Matrix) -> jax.Array:
        height = jnp.dot(R[2], chi)
        return height**2 + 0.8 * height

    system = lm.MechanicalSystem(lm.SO3(), inertia, potential)
    problem = lm.Problem(system, lm.SO3().retraction("exp").tau(perturb([0.4, -0.2, 0.1])), perturb([0.9, -1.1, 0.6]))

    def energy(R: lm.Matrix, mu: lm.Vector) -> float:
        return 0.5 * float(mu @ np.linalg.solve(inertia, mu)) + float(potential(R))

    maxima = []
    for h in (0.05, 0.025):
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=h, t_final=100.0, store_every=4)
        noether = np.array([float(m @ R[2]) for R, m in zip(sol.g, sol.mu)])
        assert np.max(np.abs(noether - noether[0])) <= 1e-12
        error = np.array([energy(R, m) for R, m in zip(sol.g, sol.mu)]) - energy(problem.g0, problem.mu0)
        trend = np.polyfit(sol.t, error, 1)[0] * 100.0
        assert abs(trend) <= 0.5 * np.max(np.abs(error))
        maxima.append(float(np.max(np.abs(error))))
    assert abs(estimate_order([0.05, 0.025], maxima).slope - 4.0) <= 0.3


@pytest.mark.slow
@pytest.mark.long_run
@pytest.mark.parametrize("retraction", ["cay", "exp"])
def test_long_run_of_a_body_on_se3_outside_the_papers(retraction: lm.RetractionKind, perturb: Perturbation) -> None:
    """A body on SE(3) (mass 2, moments 0.5, 0.7, 1.1) under gravity, a spring (k = 20) pulling its
    centre to the origin and V_R = (e₃ᵀRχ)², over T = 100 with Lobatto-2 at h = 0.02 (both SE(3)
    retractions in closed form, their tangents applied to vectors): rotations about the vertical
    axis are a symmetry, so the spatial angular momentum about it stays at round-off (measured
    5e-13 with cay, 5e-12 with exp, |μ| up to 11.7), and the energy error oscillates without drift
    (measured at most 0.037 J (cay) and 0.033 J (exp) of E = 28.4 J; fitted linear trends over the
    run −5e-4 and −2e-4 J)."""
    chi = np.array([0.3, -0.5, 0.8])

    def potential(g: lm.Matrix) -> jax.Array:
        p = g[:3, 3]
        value: jax.Array = 2.0 * 9.81 * p[2] + 0.5 * 20.0 * (p @ p) + jnp.dot(g[2, :3], chi) ** 2
        return value

    system = lm.MechanicalSystem(lm.SE3(), np.diag([2.0, 2.0, 2.0, 0.5, 0.7, 1.1]), potential)
    g0 = np.asarray(lm.SE3().retraction("exp").tau(perturb([1.0, 0.0, 0.5, 0.4, -0.3, 0.2])))
    problem = lm.Problem(system, g0, perturb([0.0, 1.2, 0.3, 0.8, -0.6, 1.5]))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2), retraction), h=0.02, t_final=100.0, store_every=5)
    spatial = np.array([(lm.SE3().Ad(lm.SE3().inverse(g)).T @ mu)[5] for g, mu in zip(sol.g, sol.mu)])
    assert np.max(np.abs(spatial - spatial[0])) <= 1e-12 * max(1.0, float(np.max(np.abs(sol.mu))))
    energy = np.array([float(system.energy(g, eta)) for g, eta in zip(sol.g, sol.eta)])
    error = energy - energy[0]
    assert np.max(np.abs(error)) <= 1e-2 * abs(energy[0])
    assert abs(np.polyfit(sol.t, error, 1)[0] * 100.0) <= 0.5 * np.max(np.abs(error))


@pytest.mark.parametrize("problem", [ConstrainedHeavyTop().problem(), VerticalDisc().problem(),
                                     RollingDisc().steady(0.25, 1.5).problem()],
                         ids=["holonomic", "nonholonomic", "both"])
def test_the_batched_step_has_the_same_equations(problem: lm.Problem[object]) -> None:
    """Ensembles run the step with its stages unrolled (``VPRK.batched_step``): the same residual
    at any point, on a product group with a holonomic constraint, on SE(2) with a nonholonomic one,
    and with both."""
    method = lm.VPRK(lm.lobatto(3))
    stacked, unrolled = VPRKEquations(method, problem), VPRKEquations(method, problem, unrolled=True)
    state = NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0)
    x = np.asarray(stacked.start(state).guess)
    x = x + 0.1 * np.random.default_rng(4).normal(size=x.size)
    expected = np.asarray(stacked.residual(x, state, 0.05))
    assert np.max(np.abs(np.asarray(unrolled.residual(x, state, 0.05)) - expected)) <= 1e-14 * np.max(np.abs(expected))


def free_body_on_se3(speed: float) -> lm.Problem[lm.Matrix]:
    """A free body on SE(3): mass 2, principal moments 0.5, 0.7, 1.1 (√(I_min/m) = 0.5), moving
    along its first axis at ``speed`` while it turns at (0.3, −0.7, 0.2)."""
    body = lm.MechanicalSystem(lm.SE3(), np.diag([2.0, 2.0, 2.0, 0.5, 0.7, 1.1]), lambda g: jnp.zeros(()))
    return lm.Problem(body, np.eye(4), np.array([speed, 0.0, 0.0, 0.3, -0.7, 0.2]))


def test_the_cayley_chart_of_se3_names_its_limit() -> None:
    """h = 0.05: at |v| = 40 a step moves the body 2 = 4√(I_min/m), past the Cayley chart's limit.
    Followed from |v| = 20 by continuation, the root of cay's Lobatto-2 step equations runs off to a
    rotation by π near |v| = 36.5; at 40 Newton diverges from its starting guess, and the error
    says so and names the chart (not the model: V = 0). exp has no such limit: the same run keeps
    the spatial momentum, which the exact flow conserves, to round-off."""
    problem = free_body_on_se3(40.0)
    with pytest.raises(lm.ConvergenceError, match=r"diverged.*Cayley retraction ties translation to rotation"):
        lm.integrate(problem, lm.VPRK(lm.lobatto(2), retraction="cay"), h=0.05, n_steps=20)
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2), retraction="exp"), h=0.05, n_steps=20)
    spatial = np.array([lm.SE3().Ad(lm.SE3().inverse(g)).T @ mu for g, mu in zip(sol.g, sol.mu)])
    assert np.max(np.abs(spatial - spatial[0])) <= 1e-12 * np.max(np.abs(spatial[0]))


def test_a_diverging_newton_solve_is_not_blamed_on_the_model() -> None:
    """Newton's iterates that overflow from a finite starting residual are reported as a
    divergence with the last finite residual, not as a model returning NaN. (At |v| = 40 the
    residual grows to ~1e30 in 10 iterations and overflows in fewer than 15, of the 50 allowed; at
    |v| = 50 the iterates may wander at ~1e98 for all 50, depending on the machine's round-off.)"""
    with pytest.raises(lm.ConvergenceError, match=r"Newton's iterates diverged") as caught:
        lm.integrate(free_body_on_se3(40.0), lm.VPRK(lm.lobatto(2)), h=0.05, n_steps=20)
    assert math.isfinite(caught.value.residual) and caught.value.residual > 1.0


@pytest.mark.parametrize(("problem", "stages", "retraction"), [
    (lambda: HeavyTop().problem(), 2, "exp"), (lambda: HeavyTop().problem(), 2, "cay"),
    (lambda: ChaplyginSleigh().problem(), 2, "cay")], ids=["top-exp", "top-cay", "sleigh"])
def test_first_stage_at_rest_is_the_batched_first_stage(problem: Any, stages: int, retraction: RetractionKind) -> None:
    """Lobatto IIIA's first stage has Ξ¹ = h·0·H = 0; the Lobatto-2 step evaluates it at a constant
    zero, apart from the other stage, and takes τ(ξ) from the last stage (its Ξˢ = ξ). Ten steps from
    the same node agree with the same equations with every stage batched together and τ(ξ)
    evaluated again, to 1e-13 in μ and in g (measured: equal bit for bit), on the heavy top and on the
    Chaplygin sleigh (nonholonomic)."""
    p = problem()
    method = lm.VPRK(lm.lobatto(stages), retraction=retraction)
    peeled, batched = VPRKEquations(method, p), VPRKEquations(method, p)
    assert peeled._first_at_rest and peeled._last_is_step
    batched._first_at_rest = batched._last_is_step = False
    h = jnp.asarray(0.01)
    carries = [equations.start(NodeState(p.g0, p.mu0, p.eta0, p.lam0)) for equations in (peeled, batched)]
    steps = [jax.jit(equations.step) for equations in (peeled, batched)]
    for _ in range(10):
        carries = [step(carry, h)[0] for step, carry in zip(steps, carries)]
        a, b = carries
        assert float(jnp.max(jnp.abs(a.mu - b.mu))) < 1e-13
        assert max(float(jnp.max(jnp.abs(x - y))) for x, y in zip(jax.tree.leaves(a.g), jax.tree.leaves(b.g))) < 1e-13
