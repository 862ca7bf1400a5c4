"""Rolling bodies on SO(3) × R³ with a holonomic contact and nonholonomic rolling at once: the thin
disc (its exact steady circular motions and tumbling motions against the Newton–Euler equations by
DOP853) and the Chaplygin ball (energy and the angular momentum about the contact point)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.linalg import null_space

import liemech as lm
from liemech.systems import RollingBall, RollingDisc
from liemech.systems.body_on_plane import Pose
from liemech.systems.rolling_disc import lowest_rim_direction
from liemech.testing import estimate_order
from tests.perturbation import Perturbation

DISC = RollingDisc()
STEADY = DISC.steady(lean=0.25, precession=1.5)
BALL = RollingBall()


def constraint_defect(problem: lm.Problem[Pose], sol: lm.Solution[Pose]) -> float:
    """max over the nodes of |Φ(g_k)| and |φ(g_k, η_k)|."""
    assert problem.holonomic is not None and problem.nonholonomic is not None
    return max(max(float(np.max(np.abs(problem.holonomic.value(g)))),
                   float(np.max(np.abs(problem.nonholonomic.value(g, eta)))))
               for g, eta in zip(sol.points(), sol.eta))


def pose_error(g: Pose, R: lm.Matrix, x: lm.Vector) -> float:
    return max(float(np.max(np.abs(g[0] - R))), float(np.max(np.abs(g[1] - x))))


def tumbling() -> lm.Problem[Pose]:
    """The steady motion's initial data pushed by 0.3 along each admissible velocity direction (the
    null space of [B_Φ; ∂φ/∂η]): the disc then wobbles, its lean between −0.62 and 0.34 rad."""
    steady = STEADY.problem()
    assert steady.holonomic is not None and steady.nonholonomic is not None
    rows = np.vstack([steady.holonomic.trivialised_jacobian(steady.group, steady.g0),
                      steady.nonholonomic.derivative_eta(steady.g0, steady.eta0)])
    admissible = null_space(rows)
    return DISC.problem(*steady.g0, steady.eta0 + 0.3 * admissible @ np.ones(admissible.shape[1]))


def test_steady_motion_against_newton_euler() -> None:
    """The exact steady motion (lean 0.25, precession 1.5, spin −0.4227 from the steady-motion
    relation) solves the Newton–Euler equations: DOP853 from its initial data follows it to 1e-11
    over 5 s, and the library's multiplier λ(0) = (λ_Φ, λ_φ) is the contact force (F_z, F_x, F_y)."""
    problem = STEADY.problem()
    times = np.linspace(0.0, 5.0, 6)
    reference = DISC.reference(problem, times)
    for k, t in enumerate(times):
        assert pose_error((reference.R[k], reference.x[k]), *STEADY.pose(t)) <= 1e-11
        exact = STEADY.velocity(t)
        assert np.max(np.abs(np.concatenate([reference.omega[k], reference.v[k]]) - exact)) <= 1e-11
    assert problem.lam0 is not None
    force = reference.force[0]
    assert np.max(np.abs(problem.lam0 - np.array([force[2], force[0], force[1]]))) <= 1e-13
    assert abs(STEADY.spin + 0.42274024738861) <= 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_steady_motion_order_and_constraints(stages: int) -> None:
    """Lobatto-s on the steady motion, T = 2, h = 0.2 … 0.025: g and μ converge with order 2s − 2,
    and at every node the contact and rolling constraints hold to 1e-13."""
    problem, T, steps = STEADY.problem(), 2.0, [0.2, 0.1, 0.05, 0.025]
    R_T, x_T = STEADY.pose(T)
    mu_T = DISC.inertia @ STEADY.velocity(T)
    pose_errors, momentum_errors = [], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(stages)), h=h, t_final=T)
        pose_errors.append(pose_error(sol.point(-1), R_T, x_T))
        momentum_errors.append(float(np.max(np.abs(sol.mu[-1] - mu_T))))
        assert constraint_defect(problem, sol) <= 1e-13
    expected = 2 * stages - 2
    for errors in (pose_errors, momentum_errors):
        order = estimate_order(steps, errors, plateau=1e-12).slope
        assert expected - 0.2 <= order <= expected + 0.3, (errors, order)


@pytest.mark.slow
def test_tumbling_disc_against_newton_euler() -> None:
    """A wobbling disc: Lobatto-2 converges to DOP853 on the Newton–Euler equations with order 2,
    and its multipliers to the contact force."""
    problem, steps = tumbling(), [0.2, 0.1, 0.05, 0.025]
    reference = DISC.reference(problem, np.array([0.0, 2.0]))
    errors, force_errors = [], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=2.0)
        errors.append(pose_error(sol.point(-1), reference.R[-1], reference.x[-1]))
        assert sol.lam is not None
        force = reference.force[-1]
        force_errors.append(float(np.max(np.abs(sol.lam[-1] - np.array([force[2], force[0], force[1]])))))
    for e in (errors, force_errors):
        order = estimate_order(steps, e).slope
        assert 1.8 <= order <= 2.3, (e, order)


@pytest.mark.slow
@pytest.mark.long_run
def test_tumbling_disc_long_run(perturb: Perturbation) -> None:
    """10⁴ steps of Lobatto-2 (h = 0.05, T = 500) on the wobbling disc: the energy error stays at
    the level it reaches in the first tenth of the run (no drift), the constraints hold at every
    node to 1e-13, and the disc never falls flat."""
    problem = perturb.problem(tumbling())
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=0.05, n_steps=10_000)
    energy = np.array([DISC.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
    error = np.abs(energy - energy[0])
    assert error.max() <= 1.2 * error[:1000].max() and error.max() <= 1e-3
    assert constraint_defect(problem, sol) <= 1e-13
    assert float(np.max(np.abs(sol.g[0][:, 2, 2]))) <= math.sin(1.0)


@pytest.mark.slow
def test_ball_first_integrals_and_reference() -> None:
    """The Chaplygin ball (𝕀 = diag(0.3, 0.4, 0.5)) over T = 10: Lobatto-2 converges to DOP853 on
    the Newton–Euler equations with order 2, and so does its energy; the angular momentum about the
    contact point (conserved by the continuous motion, and by the reference to 1e-11) is kept to
    round-off at every node."""
    problem, steps = BALL.problem(), [0.1, 0.05, 0.025]
    reference = BALL.reference(np.array([0.0, BALL.t_final]))
    start = problem.g0, problem.mu0
    E0, K0 = BALL.energy(*start), BALL.contact_momentum(*start)
    R_T, x_T, omega_T = reference.R[-1], reference.x[-1], reference.omega[-1]
    mu_T = np.concatenate([BALL.body_inertia @ omega_T, BALL.mass * reference.v[-1]])
    assert abs(BALL.energy((R_T, x_T), mu_T) - E0) <= 1e-11
    assert np.max(np.abs(BALL.contact_momentum((R_T, x_T), mu_T) - K0)) <= 1e-11
    errors, energy_errors = [], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=BALL.t_final)
        errors.append(pose_error(sol.point(-1), R_T, x_T))
        energy_errors.append(max(abs(BALL.energy(g, mu) - E0) for g, mu in zip(sol.points(), sol.mu)))
        assert max(float(np.max(np.abs(BALL.contact_momentum(g, mu) - K0)))
                   for g, mu in zip(sol.points(), sol.mu)) <= 5e-14
        assert constraint_defect(problem, sol) <= 1e-13
    for e in (errors, energy_errors):
        order = estimate_order(steps, e).slope
        assert 1.8 <= order <= 2.3, (e, order)


def test_redundant_rolling_row_is_refused() -> None:
    """All three components of the contact velocity repeat dΦ/dt = 0 in the vertical one: the
    stacked rows lose rank and the problem is refused, with the remedy."""
    steady = STEADY.problem()

    def contact_velocity(g: Pose, eta: lm.Vector) -> jax.Array:
        velocity = jnp.asarray(eta)
        return velocity[3:] + jnp.cross(g[0] @ velocity[:3], DISC.radius * lowest_rim_direction(g[0][:, 2]))

    with pytest.raises(ValueError, match="repeats dΦ/dt = 0"):
        lm.Problem(DISC.system(), steady.g0, steady.eta0, holonomic=steady.holonomic,
                   nonholonomic=lm.NonholonomicConstraint(contact_velocity))


def test_carried_closure_refuses_both_kinds() -> None:
    with pytest.raises(ValueError, match="nonholonomic_multiplier='carried'.*alone"):
        lm.integrate(STEADY.problem(), lm.VPRK(lm.lobatto(2), nonholonomic_multiplier="carried"), h=0.1, n_steps=1)


def test_disc_inertia_follows_mass_and_radius_unless_given() -> None:
    """RollingDisc(radius=0.45, mass=0.7) is a thin uniform disc: its moments about the symmetry
    axis and about a diameter equal ∫ (x² + y²) dm and ∫ y² dm over the disc of density m/(πr²),
    computed here in polar coordinates by Gauss–Legendre in ρ and the trapezoidal rule in θ (both
    exact for these integrands). An explicit moment is kept, and the other still follows m and r."""
    r, m = 0.45, 0.7
    nodes, weights = np.polynomial.legendre.leggauss(8)
    rho, theta = 0.5 * r * (nodes + 1.0), 2.0 * np.pi * np.arange(16) / 16
    area = np.outer(0.5 * r * weights * rho, np.full(16, 2.0 * np.pi / 16))       # dA = ρ dρ dθ
    density = m / (np.pi * r**2)
    axial = density * float(np.sum(area * rho[:, None] ** 2))
    diametral = density * float(np.sum(area * (rho[:, None] * np.sin(theta)[None, :]) ** 2))
    disc = RollingDisc(radius=r, mass=m)
    assert np.allclose(disc.inertia, np.diag([diametral, diametral, axial, m, m, m]), rtol=1e-13, atol=0.0)
    given = RollingDisc(radius=r, mass=m, axial_inertia=0.1)
    assert np.allclose(given.inertia.diagonal(), [diametral, diametral, 0.1, m, m, m], rtol=1e-13, atol=0.0)
    assert RollingDisc(diametral_inertia=0.3, axial_inertia=0.6).principal_moments == (0.3, 0.3, 0.6)
    with pytest.raises(ValueError, match="axial_inertia must be a positive finite number, or None"):
        RollingDisc(axial_inertia=-1.0)
