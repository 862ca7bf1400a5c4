"""Nonholonomic VPRK (Martín de Diego & Sato Martín de Almagro 2018, §5, §6.4) on R³, SE(2) and
SO(3) × R² against DOP853 references of the continuous Lagrange–d'Alembert equations, with both
closures of the multipliers: the default "consistent" one and the paper's "carried" one. Fitted
orders, two-sided: g, μ at 2s − 2 for both; λ at 2s − 2 for "consistent" (λ(g_k, η_k) of the
numerical state) and, for "carried", at s for even s and s − 1 for odd s (Cor. 5.2.1; the
particle's and the CVT's carried λ at s = 4 reach 3.7 and 4.3 on these steps)."""

import math
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.methods.method import NodeState
from liemech.methods.vprk.scheme import CARRIED_DRIFT_LIMIT, NonholonomicMultiplier, VPRKEquations
from liemech.systems.ball_on_turntable import BallOnTurntable
from liemech.systems.chaotic_nonholonomic import ChaoticNonholonomic, mean_squared_energy_error
from liemech.systems.cvt import CVT
from liemech.systems.nonholonomic_particle import NonholonomicParticle
from liemech.systems.vertical_disc import VerticalDisc
from liemech.testing import estimate_order
from tests.perturbation import Perturbation

PARTICLE = NonholonomicParticle()
DISC = VerticalDisc()
CVT_LOW = CVT()
STEPS = [10, 20, 40, 80]
MULTIPLIERS: list[NonholonomicMultiplier] = ["consistent", "carried"]
LAMBDA_ORDER: dict[NonholonomicMultiplier, dict[int, int]] = {"consistent": {2: 2, 3: 4, 4: 6},
                                                             "carried": {2: 2, 3: 2, 4: 4}}


def vprk(s: int, multiplier: NonholonomicMultiplier, retraction: lm.RetractionKind = "cay") -> lm.VPRK:
    return lm.VPRK(lm.lobatto(s), retraction, nonholonomic_multiplier=multiplier)


def test_the_consistent_closure_is_the_default_and_named_in_the_traits() -> None:
    assert lm.VPRK(lm.lobatto(3)).traits.nonholonomic_multiplier == "consistent"
    carried = vprk(3, "carried")
    assert carried.traits.nonholonomic_multiplier == "carried" and "carried" in carried.name
    assert carried.cache_key != lm.VPRK(lm.lobatto(3)).cache_key


@pytest.mark.slow
@pytest.mark.parametrize("multiplier", MULTIPLIERS)
@pytest.mark.parametrize("s", [2, 3, 4])
def test_particle_orders(s: int, multiplier: NonholonomicMultiplier) -> None:
    problem = PARTICLE.problem()
    q_ref, v_ref, lam_ref = PARTICLE.reference(np.array([PARTICLE.t_final]))
    errors_q, errors_v, errors_lam = [], [], []
    for n in STEPS:
        sol = lm.integrate(problem, vprk(s, multiplier), h=PARTICLE.t_final / n, t_final=PARTICLE.t_final)
        assert sol.lam is not None
        errors_q.append(float(np.max(np.abs(sol.g[-1] - q_ref[-1]))))
        errors_v.append(float(np.max(np.abs(sol.eta[-1] - v_ref[-1]))))
        errors_lam.append(abs(float(sol.lam[-1, 0]) - float(lam_ref[-1])))
        constraint = max(abs(float(v[2] - q[1] * v[0])) for q, v in zip(sol.points(), sol.eta))
        assert constraint <= 1e-14
        energy = np.array([PARTICLE.energy(q, v) for q, v in zip(sol.points(), sol.eta)])
        assert float(np.max(np.abs(energy - energy[0]))) <= 10.0 * (PARTICLE.t_final / n) ** (2 * s - 2)
    h = [PARTICLE.t_final / n for n in STEPS]
    assert abs(estimate_order(h, errors_q).slope - (2 * s - 2)) <= 0.15
    assert abs(estimate_order(h, errors_v).slope - (2 * s - 2)) <= 0.15
    assert abs(estimate_order(h, errors_lam).slope - LAMBDA_ORDER[multiplier][s]) <= 0.4


# Every s and closure with cay; exp (whose derivatives are the retraction's, not the closure's) with
# the default closure at s = 2 and 4, and at s = 3 on the Chaplygin sleigh: the grid covers each
# factor without compiling all twelve combinations.
@pytest.mark.slow
@pytest.mark.parametrize(("s", "retraction", "multiplier"),
                         [(s, "cay", m) for s in (2, 3, 4) for m in MULTIPLIERS] + [(2, "exp", "consistent"),
                                                                                  (4, "exp", "consistent")])
def test_vertical_disc_orders(s: int, retraction: lm.RetractionKind, multiplier: NonholonomicMultiplier) -> None:
    problem = DISC.problem()
    g_ref, xi_ref, lam_ref = DISC.reference(np.array([DISC.t_final]))
    errors_g, errors_xi, errors_lam, deviations = [], [], [], []
    for n in STEPS:
        sol = lm.integrate(problem, vprk(s, multiplier, retraction), h=DISC.t_final / n, t_final=DISC.t_final)
        assert sol.lam is not None
        if multiplier == "carried":  # the carried λ's distance from λ(g, η): the error of λ, to O(h^{2s−2})
            deviations.append(float(np.max(sol.extras["multiplier_deviation"])))
        errors_g.append(float(np.linalg.norm(sol.g[-1] - g_ref[-1]) / np.linalg.norm(g_ref[-1])))
        errors_xi.append(float(np.max(np.abs(sol.eta[-1] - xi_ref[-1]))))
        errors_lam.append(abs(float(sol.lam[-1, 0]) - float(lam_ref[-1])))
        assert float(np.max(np.abs(sol.eta[:, 1]))) <= 1e-14  # v₂ = 0 at every node
    h = [DISC.t_final / n for n in STEPS]
    assert abs(estimate_order(h, errors_g).slope - (2 * s - 2)) <= 0.15
    assert abs(estimate_order(h, errors_xi).slope - (2 * s - 2)) <= 0.15
    assert abs(estimate_order(h, errors_lam).slope - LAMBDA_ORDER[multiplier][s]) <= 0.15
    if multiplier == "carried":
        assert max(deviations) <= 0.1 * CARRIED_DRIFT_LIMIT
        assert abs(estimate_order(h, deviations).slope - LAMBDA_ORDER[multiplier][s]) <= 0.3


@pytest.mark.parametrize("multiplier", MULTIPLIERS)
def test_vertical_disc_regression_values(multiplier: NonholonomicMultiplier) -> None:
    """Relative g errors at h = 0.1 with cay: 3.0e-3, 1.2e-6, 5.3e-10 for s = 2, 3, 4, the paper's
    scheme's values (the consistent closure's are 2.98e-3, 1.25e-6, 5.28e-10)."""
    g_ref, _, _ = DISC.reference(np.array([DISC.t_final]))
    for s, expected in ((2, 3.0e-3), (3, 1.2e-6), (4, 5.3e-10)):
        sol = lm.integrate(DISC.problem(), vprk(s, multiplier), h=0.1, t_final=DISC.t_final)
        error = float(np.linalg.norm(sol.g[-1] - g_ref[-1]) / np.linalg.norm(g_ref[-1]))
        assert abs(error / expected - 1.0) <= 0.05


def test_consistent_initial_multipliers() -> None:
    """λ₀ from the continuous equations: the disc's m ω v₁ − x sin θ + y cos θ = 1.14215 and the
    particle's (v_x v_y − x y)/(1 + y²)."""
    lam_disc = DISC.problem().lam0
    assert lam_disc is not None
    x, y, theta = (float(c) for c in DISC.pose0)
    v1, omega = float(DISC.velocity0[0]), float(DISC.velocity0[2])
    assert abs(float(lam_disc[0]) - DISC.multiplier(x, y, theta, v1, omega)) <= 1e-14
    assert abs(float(lam_disc[0]) - 1.14215) <= 1e-5
    problem = PARTICLE.problem()
    assert problem.lam0 is not None
    assert abs(float(problem.lam0[0]) - PARTICLE.multiplier(problem.g0, problem.eta0)) <= 1e-15


@pytest.mark.long_run
@pytest.mark.parametrize("multiplier", MULTIPLIERS)
def test_disc_energy_stays_bounded(multiplier: NonholonomicMultiplier, perturb: Perturbation) -> None:
    """The constraint is linear and homogeneous, so the energy is a first integral; Lobatto-3 keeps
    its error at O(h⁴) without growth over 2000 steps with either closure (both are time-symmetric)."""
    sol = lm.integrate(perturb.problem(DISC.problem()), vprk(3, multiplier), h=0.05, n_steps=2000)
    E = np.array([DISC.energy(g, xi) for g, xi in zip(sol.points(), sol.eta)])
    error = np.abs(E - E[0])
    assert error.max() <= 1e-5
    assert error[1000:].max() <= 1.2 * error[:1001].max()


def test_bad_nonholonomic_data_is_rejected() -> None:
    system = PARTICLE.system()
    with pytest.raises(ValueError, match=r"inconsistent initial data: \|φ\(g0, eta0\)\| = 1\.000e\+00"):
        lm.Problem(system, PARTICLE.q0, np.array([0.0, 0.0, 1.0]), nonholonomic=PARTICLE.constraint())
    no_velocity: lm.NonholonomicConstraint[lm.Vector] = lm.NonholonomicConstraint(lambda q, v: jnp.array([q[0]]))
    with pytest.raises(ValueError, match="rank 0 < m = 1.*not admissible"):
        lm.Problem(system, PARTICLE.q0, PARTICLE.initial_velocity(), nonholonomic=no_velocity)
    with pytest.raises(ValueError, match=r"gauss\(2\) violates H1"):
        lm.integrate(PARTICLE.problem(), lm.VPRK(lm.gauss(2)), h=0.1, n_steps=1)
    with pytest.raises(ValueError, match="nonholonomic_multiplier must be one of .*'carried'.*got 'projected'"):
        lm.VPRK(lm.lobatto(3), nonholonomic_multiplier="projected")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rank 1 < m = 2.*repeats dΦ/dt = 0"):
        lm.Problem(system, np.zeros(3), np.zeros(3), nonholonomic=PARTICLE.constraint(),
                   holonomic=lm.HolonomicConstraint(lambda q: jnp.array([q[2]])))


def test_finite_difference_fallbacks_give_the_same_trajectory() -> None:
    analytic = lm.integrate(PARTICLE.problem(), lm.VPRK(lm.lobatto(3)), h=0.1, t_final=1.0)
    fd_constraint: lm.NonholonomicConstraint[lm.Vector] = lm.NonholonomicConstraint(
        lambda q, v: jnp.array([v[2] - q[1] * v[0]]))
    problem = lm.Problem(PARTICLE.system(), PARTICLE.q0, PARTICLE.initial_velocity(), nonholonomic=fd_constraint)
    fallback = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=0.1, t_final=1.0)
    assert analytic.lam is not None and fallback.lam is not None
    assert np.max(np.abs(analytic.mu - fallback.mu)) <= 1e-12
    assert np.max(np.abs(analytic.lam - fallback.lam)) <= 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("multiplier", MULTIPLIERS)
@pytest.mark.parametrize(("s", "reading"), [(2, "physical"), (3, "physical"), (4, "physical"), (3, "literal")])
def test_ball_on_turntable(s: int, reading: Literal["physical", "literal"], multiplier: NonholonomicMultiplier) -> None:
    """SO(3) × R² with cay × id: g, η orders 2s − 2, λ as LAMBDA_ORDER, the three linear first
    integrals of the homogeneous ball (a = b = c) to round-off (s = 4 uses coarser steps, since it
    reaches round-off after two halvings). The consistent λ of the physical ball with Lobatto-4 is
    at round-off already at h = 1/4 (9e-14), so there it is checked against 1e-12."""
    ball = BallOnTurntable(reading=reading)
    problem = ball.problem()
    g_ref, eta_ref, lam_ref = ball.reference(np.array([ball.t_final]))
    steps = STEPS if s < 4 else [4, 8, 16, 32]
    errors_g, errors_eta, errors_lam, drift = [], [], [], 0.0
    for n in steps:
        sol = lm.integrate(problem, vprk(s, multiplier), h=ball.t_final / n, t_final=ball.t_final)
        assert sol.lam is not None
        errors_g.append(max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(sol.point(-1), g_ref[-1])))
        errors_eta.append(float(np.max(np.abs(sol.eta[-1] - eta_ref[-1]))))
        errors_lam.append(float(np.max(np.abs(sol.lam[-1] - lam_ref[-1]))))
        integrals = np.array([ball.first_integrals(g, e) for g, e in zip(sol.points(), sol.eta)])
        drift = max(drift, float(np.max(np.abs(integrals[:, :3] - integrals[0, :3]))))
    h = [ball.t_final / n for n in steps]
    tolerance = 0.3 if (reading, s) == ("literal", 3) else 0.15  # μ still pre-asymptotic there (spec §9.4)
    assert abs(estimate_order(h, errors_g).slope - (2 * s - 2)) <= tolerance
    assert abs(estimate_order(h, errors_eta).slope - (2 * s - 2)) <= tolerance
    if (multiplier, s, reading) == ("consistent", 4, "physical"):
        assert max(errors_lam) <= 1e-12
    else:
        assert abs(estimate_order(h, errors_lam).slope - LAMBDA_ORDER[multiplier][s]) <= max(tolerance, 0.2)
    assert drift <= 1e-14


@pytest.mark.slow
@pytest.mark.long_run
@pytest.mark.parametrize("multiplier", MULTIPLIERS)
def test_ball_moving_energy_is_bounded_over_3000_steps(multiplier: NonholonomicMultiplier, perturb: Perturbation) -> None:
    """Lobatto-3, cay, h = 0.1 to t = 300: linear integrals at round-off. With the carried multiplier
    the moving energy is bounded and stationary (its second half no larger than its first; error
    2.8e-9); the consistent closure keeps it at round-off (4.5e-14), where the comparison of the
    halves would compare round-off."""
    ball = BallOnTurntable()
    sol = lm.integrate(perturb.problem(ball.problem()), vprk(3, multiplier), h=0.1, n_steps=3000)
    integrals = np.array([ball.first_integrals(g, e) for g, e in zip(sol.points(), sol.eta)])
    deviation = np.abs(integrals - integrals[0])
    assert float(np.max(deviation[:, :3])) <= 1e-12
    moving = deviation[:, 3]
    assert float(np.max(moving)) <= 1e-7
    if multiplier == "carried":
        assert float(np.max(moving[1500:])) <= 1.2 * float(np.max(moving[:1501]))
    else:
        assert float(np.max(moving)) <= 1e-12


@pytest.mark.slow
@pytest.mark.long_run
@pytest.mark.parametrize("multiplier", MULTIPLIERS)
@pytest.mark.parametrize(
    "level, total_band, passenger_band",
    [("low", (1.787, 1.806), (0.988, 1.001)), ("high", (3.974, 4.014), None)],
)
def test_cvt_energy_bands(level: Literal["low", "high"], total_band: tuple[float, float],
                          passenger_band: tuple[float, float] | None, multiplier: NonholonomicMultiplier,
                          perturb: Perturbation) -> None:
    """ε = ½, Lobatto-2, T = 200: with h = 0.1 the total and passenger energies stay in the bands
    of the paper's figures; with h = π/10 the total energy leaves them, for the paper's scheme
    erratically (it wanders over ≥ 0.4; the consistent closure's over 0.17 and 0.37)."""
    cvt = CVT(level=level)
    problem = perturb.problem(cvt.problem())
    for h, n_steps in ((0.1, 2000), (math.pi / 10, 636)):
        # At h = π/10 the carried λ is off λ(q, v) by up to 5 times its size: the guard would stop the
        # run, which the paper's figure shows in full.
        method = lm.VPRK(lm.lobatto(2), nonholonomic_multiplier=multiplier, carried_drift_limit=None)
        sol = lm.integrate(problem, method, h=h, n_steps=n_steps)
        total = np.array([cvt.passenger_energy(q, v) + cvt.driver_energy(q, v) for q, v in zip(sol.points(), sol.eta)])
        passenger = np.array([cvt.passenger_energy(q, v) for q, v in zip(sol.points(), sol.eta)])
        slip = max(abs(float(v[2] + math.sin(q[1]) * v[0])) for q, v in zip(sol.points(), sol.eta))
        # sin y's round-off grows with the angle y, which the high level winds up to a few hundred rad
        terms = max(1.0, float(np.max(np.abs(sol.g[:, 1])))) * max(1.0, float(np.max(np.abs(sol.eta))))
        assert slip <= 16 * np.finfo(np.float64).eps * terms
        if h == 0.1:
            assert total_band[0] - 5e-4 <= total.min() and total.max() <= total_band[1] + 5e-4
            if passenger_band is not None:  # the spec gives the passenger band of the low level only
                assert passenger_band[0] - 5e-4 <= passenger.min() and passenger.max() <= passenger_band[1] + 5e-4
        else:
            assert total.min() < total_band[0] - 5e-4 or total.max() > total_band[1] + 5e-4
            if multiplier == "carried":
                assert total.max() - total.min() >= 0.4  # "rather erratic behaviour"


@pytest.mark.slow
@pytest.mark.long_run
@pytest.mark.parametrize("multiplier", MULTIPLIERS)
def test_chaotic_ensemble_energy_error_scaling(multiplier: NonholonomicMultiplier, perturb: Perturbation) -> None:
    """Mean squared energy error over the ensemble E = 3.06 (m = 3, J = 8, T = 60), averaged over the
    run: ∝ h⁴ for Lobatto-2 and ∝ h⁸ for Lobatto-3 (the paper's h¹⁰ is not what the method does);
    measured 3.60 and 8.07 (carried), 3.54 and 8.05 (consistent)."""

    class Perturbed(ChaoticNonholonomic):
        def problem(self, j: int, J: int) -> lm.Problem[lm.Vector]:
            return perturb.problem(super().problem(j, J))

    system = Perturbed()
    unperturbed = ChaoticNonholonomic()
    assert all(abs(system.energy(p.g0, p.eta0) - 3.06) <= 1e-14 for p in (unperturbed.problem(j, 8) for j in range(9)))
    for s, exponent in ((2, 4.0), (3, 8.0)):
        means = [float(np.mean(mean_squared_energy_error(system, vprk(s, multiplier), h, round(60 / h), 8)))
                 for h in (0.2, 0.1)]
        assert abs(math.log2(means[0] / means[1]) - exponent) <= 0.6


def cvt_reference(problem: lm.Problem[lm.Vector], t_final: float) -> tuple[lm.Vector, lm.Vector, float]:
    """q, v and λ = (z + x sin y − cos y v_x v_y)/(1 + sin²y) at t_final from DOP853 (rtol 1e-13) on
    q̇ = v, v̇ = −∇V + (sin y, 0, 1)ᵀλ, the CVT with the multiplier eliminated."""

    def multiplier(q: lm.Vector, v: lm.Vector) -> float:
        return float((q[2] + q[0] * math.sin(q[1]) - math.cos(q[1]) * v[0] * v[1]) / (1.0 + math.sin(q[1]) ** 2))

    def rhs(t: float, y: lm.Vector) -> lm.Vector:
        q, v = y[:3], y[3:]
        return np.concatenate([v, -CVT_LOW.potential_gradient(q) + multiplier(q, v) * np.array([math.sin(q[1]), 0.0, 1.0])])

    end = solve_ivp(rhs, (0.0, t_final), np.concatenate([problem.g0, problem.eta0]), method="DOP853",
                    rtol=1e-13, atol=1e-14).y[:, -1]
    return end[:3], end[3:], multiplier(end[:3], end[3:])


@pytest.mark.slow
@pytest.mark.parametrize("multiplier", MULTIPLIERS)
@pytest.mark.parametrize("s", [2, 3, 4])
def test_cvt_orders(s: int, multiplier: NonholonomicMultiplier) -> None:
    """The CVT (ε = ½) from both energy levels to T = 1, on one system object: q, v at 2s − 2 and λ as
    LAMBDA_ORDER (two-sided; the carried λ at s = 4 measures 4.1 and 4.3)."""
    for level in ("low", "high"):
        start = CVT(level=level).problem()
        problem = lm.Problem(CVT_LOW.system(), start.g0, start.eta0, nonholonomic=CVT_LOW.constraint())
        q_ref, v_ref, lam_ref = cvt_reference(problem, 1.0)
        errors_q, errors_v, errors_lam = [], [], []
        for n in STEPS:
            sol = lm.integrate(problem, vprk(s, multiplier), h=1.0 / n, n_steps=n)
            assert sol.lam is not None
            errors_q.append(float(np.max(np.abs(sol.g[-1] - q_ref))))
            errors_v.append(float(np.max(np.abs(sol.eta[-1] - v_ref))))
            errors_lam.append(abs(float(sol.lam[-1, 0]) - lam_ref))
        h = [1.0 / n for n in STEPS]
        assert abs(estimate_order(h, errors_q).slope - (2 * s - 2)) <= 0.15
        assert abs(estimate_order(h, errors_v).slope - (2 * s - 2)) <= 0.15
        assert abs(estimate_order(h, errors_lam).slope - LAMBDA_ORDER[multiplier][s]) <= 0.4


@pytest.mark.parametrize("multiplier", MULTIPLIERS)
def test_the_step_is_time_symmetric(multiplier: NonholonomicMultiplier) -> None:
    """On R³ (the particle), stepping back with −h from where a step with h ends returns to its
    start to round-off: for the consistent closure on (q, p), whatever λ the node carries (it only
    seeds Newton); for the carried one on (q, p, λ). (On a Lie group the chart centred at g_k breaks
    the symmetry of both at O(h^{2s}): 1.4e-6 for Lobatto-3 on the disc at h = 0.2.)"""
    problem = PARTICLE.problem()
    assert problem.lam0 is not None
    equations = VPRKEquations(vprk(3, multiplier), problem)
    step = jax.jit(equations.step)

    def there_and_back(lam: lm.Vector) -> tuple[NodeState[lm.Vector], NodeState[lm.Vector]]:
        _, ahead = step(equations.start(NodeState(problem.g0, problem.mu0, problem.eta0, lam)), jnp.asarray(0.2))
        _, back = step(equations.start(NodeState(ahead.g, ahead.mu, ahead.eta, ahead.lam)), jnp.asarray(-0.2))
        return (NodeState(np.asarray(ahead.g), np.asarray(ahead.mu), np.asarray(ahead.eta), np.asarray(ahead.lam)),
                NodeState(np.asarray(back.g), np.asarray(back.mu), np.asarray(back.eta), np.asarray(back.lam)))

    ahead, back = there_and_back(problem.lam0)
    assert float(np.max(np.abs(back.g - problem.g0))) <= 1e-15
    assert float(np.max(np.abs(back.mu - problem.mu0))) <= 1e-15
    assert back.lam is not None and float(np.max(np.abs(back.lam - problem.lam0))) <= 1e-15
    if multiplier == "consistent":
        moved, _ = there_and_back(problem.lam0 + 0.3)
        assert float(np.max(np.abs(moved.mu - ahead.mu))) <= 1e-15


def _heisenberg_potential(q: lm.Vector) -> jax.Array:
    return jnp.asarray(0.5 * (q[0] ** 2 + 2.0 * q[1] ** 2 + 3.0 * q[2] ** 2 + q[3] ** 2) + 0.2 * q[0] ** 2 * q[2] ** 2)


def _heisenberg_constraint(q: lm.Vector, v: lm.Vector) -> jax.Array:
    """v₄ = q₁v₂ − q₂v₁: a Heisenberg-type constraint, not integrable."""
    return jnp.array([v[3] - (q[0] * v[1] - q[1] * v[0])])


@pytest.mark.slow
@pytest.mark.long_run
@pytest.mark.parametrize("s, order", [(2, 2), (3, 4)])
def test_long_run_on_rn_outside_the_papers(s: int, order: int, perturb: Perturbation) -> None:
    """R⁴, V = ½(q₁² + 2q₂² + 3q₃² + q₄²) + 0.2 q₁²q₃² (coupled, anharmonic), φ = v₄ − (q₁v₂ − q₂v₁),
    over T = 60 (VPRK's vector-space path): φ = 0 at every node to round-off, and the energy
    (conserved by the continuous flow) has an error without drift whose size falls as h^(2s−2)
    between h = 0.05 and 0.025."""
    system = lm.MechanicalSystem(lm.Rn(4), np.eye(4), _heisenberg_potential)
    q0 = perturb([0.8, -0.3, 0.5, 0.1])
    v0 = perturb([0.2, 0.7, -0.4, 0.0])
    v0[3] = q0[0] * v0[1] - q0[1] * v0[0]
    problem = lm.Problem(system, q0, v0, nonholonomic=lm.NonholonomicConstraint(_heisenberg_constraint))
    energy0 = 0.5 * float(v0 @ v0) + float(_heisenberg_potential(q0))
    maxima = []
    for h in (0.05, 0.025):
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(s)), h=h, t_final=60.0)
        defects = [abs(float(_heisenberg_constraint(q, v)[0])) for q, v in zip(sol.g, sol.eta)]
        assert max(defects) <= 1e-13
        error = np.array([0.5 * float(v @ v) + float(_heisenberg_potential(q)) for q, v in zip(sol.g, sol.eta)]) - energy0
        trend = np.polyfit(sol.t, error, 1)[0] * 60.0
        assert abs(trend) <= 0.5 * np.max(np.abs(error))
        maxima.append(float(np.max(np.abs(error))))
    assert abs(estimate_order([0.05, 0.025], maxima).slope - order) <= 0.3
