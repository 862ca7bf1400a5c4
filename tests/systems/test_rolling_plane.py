"""A ``RollingBody`` on an inclined plane and on a turntable (``Plane(normal, spin)``), against three
independent truths:

- a ball (support h(u) = r|u|, centre of mass at the centre, inertia k m r² 1) on a still plane
  inclined at α: its centre accelerates down the slope at a = g sin α/(1 + k), whatever its spin,
  so x(t) = x₀ + v₀t + ½at² in closed form;
- the same ball on a horizontal turntable is ``BallOnTurntable`` (Martín de Diego & Sato Martín de
  Almagro 2018, §7.5, reading "physical"; unit mass, no gravity, on SO(3) × R²): the holonomic
  contact only carries the weight, so R, Ω and the centre's (x, y) agree node by node;
- the tumbling egg of tests/systems/rolling_egg.py (offset centre of mass, turned inertia) on an
  inclined turntable, against that file's Newton–Euler reference (DOP853, the contact force
  keeping the material contact point moving with the table, v_c = Ω_t n × p_c).

Each new body costs a compilation of its step (tens of seconds on a loaded machine), so the slow
tests share as few bodies as they can: one inclined turntable tests the normal and the table's
velocity at once.
"""

import math
import pickle
from collections.abc import Callable

import numpy as np
import pytest

import liemech as lm
from liemech.groups.so3 import exp_matrix
from liemech.systems import BallOnTurntable, Plane, RollingBody
from liemech.testing import estimate_order
from tests.systems.rolling_egg import (
    EGG,
    EGG_AXES,
    EGG_OMEGA0,
    EGG_R0,
    constraint_defects,
    reference_for,
)

SLOPE = 0.3                      # α (rad)
RADIUS, K, MASS, GRAVITY = 0.5, 0.4, 2.0, 9.81
BALL_R0 = exp_matrix(np.array([0.3, -0.2, 0.1]))
BALL_OMEGA0 = np.array([0.5, 1.0, -0.7])         # rolls across the slope and spins about its normal


def egg_on(plane: Plane) -> RollingBody:
    """The egg of tests/systems/rolling_egg.py on ``plane``."""
    return RollingBody.ellipsoid(EGG_AXES, EGG.mass, EGG.body_inertia, EGG.com, gravity=EGG.gravity, plane=plane)


# an inclined turntable, shared by the quick tests (one body: its constraints compile once)
TILTED_TABLE = Plane((0.2, -0.1, 1.0), spin=0.8)
TILTED_EGG = egg_on(TILTED_TABLE)
ON_TILTED_TABLE = np.cross(TILTED_TABLE.unit_normal, np.array([0.3, 0.4, 0.5]))      # a point of that plane


def ball(plane: Plane) -> RollingBody:
    """The ball of radius r = ``RADIUS`` (h(u) = r|u|) and mass m with the inertia k m r² 1 about its
    centre, its centre of mass, under gravity g = ``GRAVITY``, on ``plane``."""
    return RollingBody.ellipsoid((RADIUS,) * 3, MASS, K * MASS * RADIUS**2 * np.eye(3), (0.0, 0.0, 0.0),
                                 gravity=GRAVITY, plane=plane)


@pytest.mark.parametrize("normal", [(0.0, 0.0, 1.0), (0.3, -0.2, 0.9), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                                    (0.2, 0.1, -0.9), (0.0, 0.0, -1.0), (0.0, -1e-300, -1.0)])
def test_plane_basis(normal: tuple[float, float, float]) -> None:
    """The normal is normalised; t₁, t₂ are orthonormal with t₁ × t₂ = n (also for n_z < 0 and
    n = −e_z); W p = Ω_t n × p; the plane pickles and compares by value."""
    plane = Plane(normal, spin=0.7)
    n = plane.unit_normal
    assert abs(float(np.linalg.norm(n)) - 1.0) <= 1e-15
    assert np.allclose(n, np.array(normal) / np.linalg.norm(normal), rtol=0.0, atol=1e-15)
    T = plane.tangents
    assert np.allclose(T @ T.T, np.eye(2), rtol=0.0, atol=1e-15)
    assert np.allclose(np.cross(T[0], T[1]), n, rtol=0.0, atol=1e-15)
    p = np.array([0.3, -1.2, 2.0])
    assert np.allclose(plane.velocity_gradient @ p, 0.7 * np.cross(n, p), rtol=0.0, atol=1e-15)
    assert pickle.loads(pickle.dumps(plane)) == plane


def test_default_and_inclined_planes() -> None:
    """The default plane is z = 0 at rest with the basis (e_x, e_y) exactly; ``Plane.inclined(α)``
    has n = (sin α, 0, cos α) and the downhill direction (cos α, 0, −sin α) as t₁, to the two ulps
    that normalising n may round (one ulp of cos α is 1.1e-16; machines differ in that last bit)."""
    assert Plane() == Plane((0, 0, 2), 0) and np.array_equal(Plane().tangents, np.eye(3)[:2])
    tilted = Plane.inclined(SLOPE)
    two_ulps = 2 * np.spacing(math.cos(SLOPE))
    assert np.allclose(tilted.unit_normal, [math.sin(SLOPE), 0.0, math.cos(SLOPE)], rtol=0.0, atol=two_ulps)
    assert np.allclose(tilted.tangents, [[math.cos(SLOPE), 0.0, -math.sin(SLOPE)], [0.0, 1.0, 0.0]], rtol=0.0,
                       atol=two_ulps)


@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda: Plane((0.0, 0.0, 0.0)), ValueError, "normal must be a nonzero 3-vector"),
    (lambda: Plane((0.0, math.nan, 1.0)), ValueError, "normal must be a finite 3-vector"),
    (lambda: Plane((0.0, 1.0)), ValueError, "normal must be a finite 3-vector"),  # type: ignore[arg-type]
    (lambda: Plane(spin=math.inf), ValueError, "spin must be a finite real number"),
    (lambda: Plane(spin="fast"), ValueError, "spin must be"),  # type: ignore[arg-type]
    (lambda: Plane.inclined(2.0), ValueError, "angle must"),
    (lambda: RollingBody(EGG.support, 1.0, np.eye(3), np.zeros(3), plane="tilted"),  # type: ignore[arg-type]
     TypeError,
     "plane must be a Plane"),
    (lambda: TILTED_EGG.problem(EGG_R0, EGG_OMEGA0, at=(0.0, 0.0, 1.0)), ValueError,
     "at must be a point of the plane"),
])
def test_bad_planes_are_refused_by_name(build: Callable[[], object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        build()


def test_problem_starts_on_the_moving_plane() -> None:
    """On an inclined turntable, ``problem(R0, Ω0, at=p)`` puts the lowest point at p and gives the
    material contact point the table's velocity Ω_t n × p (all three components)."""
    n, p = TILTED_TABLE.unit_normal, ON_TILTED_TABLE
    problem = TILTED_EGG.problem(EGG_R0, EGG_OMEGA0, at=p)
    R0, x0 = problem.g0
    lowest = EGG_AXES**2 * (-R0.T @ n) / math.sqrt(float(EGG_AXES**2 @ (R0.T @ n) ** 2))
    assert np.max(np.abs(x0 + R0 @ (lowest - EGG.com) - p)) <= 1e-15
    velocity = problem.eta0[3:] + np.cross(R0 @ problem.eta0[:3], R0 @ (lowest - EGG.com))
    assert np.max(np.abs(velocity - 0.8 * np.cross(n, p))) <= 1e-15


def test_inconsistent_initial_states_are_refused() -> None:
    """A user can build a problem from the body's constraints by hand; ``lm.Problem`` refuses a
    state off the plane, or one that slips on the turntable (rolling as on a still plane)."""
    holonomic, nonholonomic = TILTED_EGG.constraints()
    problem = TILTED_EGG.problem(EGG_R0, EGG_OMEGA0, at=ON_TILTED_TABLE)
    (R0, x0), eta0 = problem.g0, problem.eta0
    with pytest.raises(ValueError, match=r"inconsistent initial data: \|Φ\(g0\)\| = 1.000e-01"):
        lm.Problem(TILTED_EGG.system(), (R0, x0 + 0.1 * TILTED_TABLE.unit_normal), eta0, holonomic=holonomic,
                   nonholonomic=nonholonomic)
    at_rest = eta0 - np.concatenate([np.zeros(3), TILTED_TABLE.velocity_gradient @ ON_TILTED_TABLE])
    with pytest.raises(ValueError, match=r"inconsistent initial data: \|φ\(g0, eta0\)\|"):
        lm.Problem(TILTED_EGG.system(), (R0, x0), at_rest, holonomic=holonomic, nonholonomic=nonholonomic)


def test_library_reference_agrees_on_an_inclined_turntable() -> None:
    """``RollingBody.reference`` (the library's rolling Newton–Euler equations with the table's
    velocity field, autodiff contact geometry) agrees with the one written in
    tests/systems/rolling_egg.py on an inclined, spinning plane, T = 1, the contact force included."""
    problem = TILTED_EGG.problem(EGG_R0, EGG_OMEGA0, at=ON_TILTED_TABLE)
    times = np.array([0.0, 1.0])
    library, ours = TILTED_EGG.reference(problem, times), reference_for(EGG_AXES, TILTED_EGG, problem, times)
    assert np.max(np.abs(library.R[-1] - ours.R[-1])) <= 1e-10
    assert np.max(np.abs(library.x[-1] - ours.x[-1])) <= 1e-10
    assert np.max(np.abs(library.omega[-1] - ours.omega[-1])) <= 1e-10
    assert np.max(np.abs(library.force - ours.force)) <= 1e-10


@pytest.mark.slow
def test_ball_accelerates_down_the_slope_in_closed_form() -> None:
    """The ball on the plane inclined at α = 0.3, rolling across it and spinning: Lobatto-2 at
    h = 0.1 and 0.05 over T = 1 puts the centre at x₀ + v₀t + ½at², a = g sin α/(1 + k) down the
    slope, at every node to round-off (measured 2.2e-16 at both steps, 6.7e-16 at h = 0.025;
    Lobatto-3 gives 3e-16 and 7e-16 at h = 0.1 and 0.05), and keeps both constraints (|Φ| ≤ 2.2e-16,
    |φ| ≤ 9.2e-16) and the energy (5.3e-16 relative) to round-off: the still plane does no work."""
    plane = Plane.inclined(SLOPE)
    body = ball(plane)
    problem = body.problem(BALL_R0, BALL_OMEGA0)
    x0, v0 = problem.g0[1], problem.eta0[3:]
    acceleration = GRAVITY * math.sin(SLOPE) / (1.0 + K) * plane.tangents[0]
    for h in (0.1, 0.05):
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=1.0)
        exact = x0 + np.outer(sol.t, v0) + 0.5 * np.outer(sol.t**2, acceleration)
        assert float(np.max(np.abs(sol.g[1] - exact))) <= 2e-15
        height, slip = constraint_defects(problem, sol)
        assert height <= 1e-15 and slip <= 5e-15, (height, slip)
        energy = np.array([body.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
        assert float(np.max(np.abs(energy - energy[0]))) <= 1e-13 * abs(energy[0])
    assert float(np.linalg.norm(sol.g[1][-1] - x0 - v0)) >= 0.5            # it did roll down


@pytest.mark.slow
def test_ball_on_turntable_is_ball_on_turntable() -> None:
    """The ball (r = 1, m = 1, k = 0.4, g = 1) on the horizontal plane spinning at Ω_t = 1, from
    ``BallOnTurntable``'s initial data ((x, y) = (1, 0): ``at=(1, 0, 0)``): the same method
    (Lobatto-2) and step (h = 0.1, 100 steps) give the same R, Ω and centre (x, y) at every node
    to round-off (measured 1.5e-14 in R, 5.8e-15 in (x, y), 4.9e-15 in Ω), and the centre stays at
    height r to Newton's stopping rule (16 eps: a few ulps of r = 1, which the order of the LU's
    round-off moves). The energy ½μᵀ𝕀⁻¹μ + m g x_z is not conserved on the spinning table: it varies by 3.8
    (E₀ = 1.47) along the run, as the table's contact force works on the ball."""
    turntable = BallOnTurntable()
    expected_problem = turntable.problem()
    body = RollingBody.ellipsoid((turntable.radius,) * 3, 1.0, np.diag(turntable.radius**2 * turntable.inertia_abc),
                                 (0.0, 0.0, 0.0), gravity=1.0, plane=Plane(spin=turntable.spin))
    R0 = expected_problem.g0[0]
    problem = body.problem(R0, expected_problem.eta0[:3], at=(*expected_problem.g0[1], 0.0))
    assert np.max(np.abs(problem.eta0[:5] - expected_problem.eta0)) <= 1e-15
    method = lm.VPRK(lm.lobatto(2))
    expected = lm.integrate(expected_problem, method, h=0.1, n_steps=100)
    sol = lm.integrate(problem, method, h=0.1, n_steps=100)
    assert float(np.max(np.abs(sol.g[0] - expected.g[0]))) <= 1e-13
    assert float(np.max(np.abs(sol.g[1][:, :2] - expected.g[1]))) <= 1e-13
    assert float(np.max(np.abs(sol.eta[:, :3] - expected.eta[:, :3]))) <= 1e-13
    assert float(np.max(np.abs(sol.eta[:, 3:5] - expected.eta[:, 3:]))) <= 1e-13
    assert float(np.max(np.abs(sol.g[1][:, 2] - turntable.radius))) <= 16 * np.finfo(float).eps * turntable.radius
    energy = np.array([body.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
    assert float(np.ptp(energy)) >= 1.0


@pytest.mark.slow
def test_egg_converges_to_newton_euler_on_an_inclined_turntable() -> None:
    """The egg (offset centre of mass, turned inertia) on a turntable inclined by 0.22 rad and
    spinning at Ω_t = 0.8 (one compiled step tests the normal and the table's velocity at once),
    its lowest point starting off the axis: Lobatto-2 at h = 0.1, 0.05, 0.025 over T = 1 converges
    to the Newton–Euler reference in R, x and Ω with fitted order 2 ± 0.3 (measured 2.03 and 2.00:
    errors 6.5e-3 … 3.9e-4 and 2.4e-2 … 1.5e-3), and both constraints hold to round-off at every
    node (measured |Φ| ≤ 2e-16, |φ| ≤ 3e-16)."""
    problem = TILTED_EGG.problem(EGG_R0, EGG_OMEGA0, at=ON_TILTED_TABLE)
    reference = reference_for(EGG_AXES, TILTED_EGG, problem, np.array([0.0, 1.0]))
    steps, pose_errors, omega_errors = [0.1, 0.05, 0.025], [], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=h, t_final=1.0)
        pose_errors.append(max(float(np.max(np.abs(sol.g[0][-1] - reference.R[-1]))),
                               float(np.max(np.abs(sol.g[1][-1] - reference.x[-1])))))
        omega_errors.append(float(np.max(np.abs(sol.eta[-1, :3] - reference.omega[-1]))))
        height, slip = constraint_defects(problem, sol)
        assert height <= 1e-15 and slip <= 5e-15, (height, slip)
    for errors in (pose_errors, omega_errors):
        order = estimate_order(steps, errors).slope
        assert 1.7 <= order <= 2.3, (errors, order)

