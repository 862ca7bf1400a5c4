"""A smooth convex body rolling without slipping on the plane (``RollingBody``): ellipsoids and the
rattleback, against an independent reference (tests/systems/rolling_egg.py): the Newton–Euler
equations of a rigid body whose contact force, at the closed-form lowest point of the ellipsoid,
keeps the material contact point at rest (or moving with a turntable), integrated by DOP853 at
rtol 1e-12. The inclined plane and the turntable are tested in tests/systems/test_rolling_plane.py
with this reference."""

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import liemech as lm
from liemech.groups.so3 import exp_matrix
from liemech.systems import RollingBall, RollingBody
from liemech.systems.body_on_plane import Pose
from liemech.systems.rolling_body import KANE_LEVINSON_MISALIGNMENT, first_sign_change
from liemech.testing import estimate_order
from tests.perturbation import Perturbation
from tests.systems.rolling_egg import (
    EGG,
    EGG_AXES,
    EGG_COM,
    EGG_INERTIA,
    EGG_OMEGA0,
    EGG_R0,
    Reference,
    constraint_defects,
    reference_for,
)

CALM_R0 = exp_matrix(np.array([0.1, 0.05, 0.0]))      # a calmer motion for the long run (tilt up to 53°)
CALM_OMEGA0 = np.array([0.2, -0.2, 1.0])

# Kane & Levinson's rattleback (δ ≈ +0.0143 rad) and its mirror image (−δ), from a tilt of 0.02 rad
# about the long axis, spun the way each reverses.
RATTLEBACK = RollingBody.rattleback()
MIRROR = RollingBody.rattleback(-KANE_LEVINSON_MISALIGNMENT)
RATTLE_R0 = exp_matrix(np.array([0.02, 0.0, 0.0]))
RATTLE_H = 1e-3


def constraint_force(problem: lm.Problem[Pose], g: Pose, eta: lm.Vector, lam: lm.Vector) -> lm.Vector:
    """[B(g); ∂φ/∂η(g, η)]ᵀλ, the constraint force in μ̇ = ad*_η μ + f + Bᵀλ (holonomic rows first, as
    ``sol.lam`` stores them), in the coordinates of (Ω, v): the contact torque about the centre of
    mass in the body frame, then the contact force in space (v = ẋ)."""
    assert problem.holonomic is not None and problem.nonholonomic is not None
    rows = np.concatenate([problem.holonomic.trivialised_jacobian(problem.group, g),
                           problem.nonholonomic.derivative_eta(g, eta)])
    force: lm.Vector = rows.T @ lam
    return force


@pytest.fixture(scope="module")
def egg_reference() -> Reference:
    return reference_for(EGG_AXES, EGG, EGG.problem(EGG_R0, EGG_OMEGA0), np.array([0.0, 2.0]))


def test_reference_keeps_energy_and_contact(egg_reference: Reference) -> None:
    """The reference keeps the energy ½Ωᵀ𝕀Ω + ½m|v|² + m g x_z to 1e-11 and its lowest point on
    the plane to 1e-11 (it integrates x freely), and starts from the problem's state."""
    problem = EGG.problem(EGG_R0, EGG_OMEGA0)

    def energy(R: lm.Matrix, x: lm.Vector, omega: lm.Vector) -> float:
        gamma = R[2]
        r = -EGG_AXES**2 * gamma / math.sqrt(float(EGG_AXES**2 @ gamma**2)) - EGG_COM
        v = -R @ np.cross(omega, r)
        return 0.5 * float(omega @ EGG_INERTIA @ omega) + 0.5 * float(v @ v) + float(x[2])

    E0, E1 = (energy(egg_reference.R[k], egg_reference.x[k], egg_reference.omega[k]) for k in (0, 1))
    assert abs(E1 - E0) <= 1e-11
    assert abs(E0 - EGG.energy(problem.g0, problem.mu0)) <= 1e-14
    lowest = float(egg_reference.x[1, 2] - math.sqrt(float(EGG_AXES**2 @ egg_reference.R[1][2] ** 2))
                   - egg_reference.R[1][2] @ EGG_COM)
    assert abs(lowest) <= 1e-11


def test_contact_force_of_a_body_at_rest() -> None:
    """An ellipsoid at rest on its lowest point with its centre of mass on the vertical axis above
    it: the multiplier λ(0) gives the constraint force (0, 0, 0 | 0, 0, m g) (no torque, the weight
    carried by the plane), and so does the reference's contact force, constant in time."""
    body = RollingBody.ellipsoid(EGG_AXES, 2.0, EGG_INERTIA, (0.0, 0.0, -0.12), gravity=1.5)
    problem = body.problem(np.eye(3), np.zeros(3))
    assert problem.lam0 is not None
    force = constraint_force(problem, problem.g0, problem.eta0, problem.lam0)
    assert np.max(np.abs(force - [0.0, 0.0, 0.0, 0.0, 0.0, 3.0])) <= 1e-14, force
    reference = reference_for(EGG_AXES, body, problem, np.array([0.0, 1.0]))
    assert np.max(np.abs(reference.force - [0.0, 0.0, 3.0])) <= 1e-14, reference.force


def test_library_reference_agrees(egg_reference: Reference) -> None:
    """``RollingBody.reference`` (DOP853 on the shared rolling Newton–Euler equations, the contact
    point and its rate from autodiff of the support function) agrees with the one written here,
    the contact force included."""
    library = EGG.reference(EGG.problem(EGG_R0, EGG_OMEGA0), np.array([0.0, 2.0]))
    assert np.max(np.abs(library.R[-1] - egg_reference.R[-1])) <= 1e-10
    assert np.max(np.abs(library.x[-1] - egg_reference.x[-1])) <= 1e-10
    assert np.max(np.abs(library.omega[-1] - egg_reference.omega[-1])) <= 1e-10
    assert np.max(np.abs(library.force - egg_reference.force)) <= 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_order_and_constraints_against_newton_euler(stages: int, egg_reference: Reference) -> None:
    """Lobatto-s on the tumbling egg, T = 2, h = 0.1 … 0.0125: R, x, Ω and the contact force (the
    translational block of [B; ∂φ/∂η]ᵀλ at the last node, λ = λ(g_k, η_k) with both constraints)
    converge to the Newton–Euler reference with order 2s − 2, and at every node the contact height
    Φ and the rolling condition φ hold to round-off; the public views have the documented shapes."""
    problem, steps = EGG.problem(EGG_R0, EGG_OMEGA0), [0.1, 0.05, 0.025, 0.0125]
    pose_errors, omega_errors, force_errors = [], [], []
    for h in steps:
        sol = lm.integrate(problem, lm.VPRK(lm.lobatto(stages)), h=h, t_final=2.0)
        R, omega, contact = EGG.orientation(sol), EGG.angular_velocity(sol), EGG.contact_point(sol)
        assert R.shape == (sol.t.size, 3, 3) and omega.shape == (sol.t.size, 3) and contact.shape == (sol.t.size, 3)
        pose_errors.append(max(float(np.max(np.abs(R[-1] - egg_reference.R[-1]))),
                               float(np.max(np.abs(sol.g[1][-1] - egg_reference.x[-1])))))
        omega_errors.append(float(np.max(np.abs(omega[-1] - egg_reference.omega[-1]))))
        assert sol.lam is not None
        force = constraint_force(problem, sol.point(-1), sol.eta[-1], sol.lam[-1])[3:]
        force_errors.append(float(np.max(np.abs(force - egg_reference.force[-1]))))
        height, slip = constraint_defects(problem, sol)
        assert height <= 2e-15 and slip <= 5e-15, (height, slip)
        assert float(np.max(np.abs(contact[:, 2]))) <= 2e-15
    expected = 2 * stages - 2
    for errors in (pose_errors, omega_errors, force_errors):
        order = estimate_order(steps, errors, plateau=1e-12).slope
        assert expected - 0.2 <= order <= expected + 0.3, (errors, order)


@pytest.mark.slow
@pytest.mark.long_run
def test_long_run_energy_without_drift(perturb: Perturbation) -> None:
    """Lobatto-2, h = 0.05, T = 200 (4000 steps) on the egg: the energy error stays bounded (below
    1e-3 of the energy) with no drift: its largest value over the last quarter of the run is no more
    than 1.5 times that over the first; both constraints hold at every node to round-off."""
    problem = perturb.problem(EGG.problem(CALM_R0, CALM_OMEGA0))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=0.05, t_final=200.0)
    energy = np.array([EGG.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
    error = np.abs(energy - energy[0])
    quarter = error.size // 4
    assert error.max() <= 1e-3 * abs(energy[0])
    assert error[-quarter:].max() <= 1.5 * error[:quarter].max(), (error[:quarter].max(), error[-quarter:].max())
    height, slip = constraint_defects(problem, sol)
    assert height <= 2e-15 and slip <= 5e-15, (height, slip)


@pytest.mark.slow
@pytest.mark.long_run
def test_rattleback_long_run_energy_without_drift(perturb: Perturbation) -> None:
    """Kane & Levinson's rattleback spun clockwise, Lobatto-2 at h = 2e-3 s over T = 100 s (5·10⁴
    steps; it rocks at ~100 rad/s, so hω ≈ 0.2; at h = 4e-3 Newton fails at the first reversal): its
    spin reverses again and again (measured: 5 sign changes of ω_z), the energy error at the stored
    nodes (every 100th step) stays bounded (measured 2.8e-4 J of E = 0.119 J, the same as over
    T = 200) with no drift (largest over the last quarter 0.90 times that over the first), and both
    constraints hold at every stored node to round-off (measured 5e-18 m and 7e-17 m/s)."""
    problem = perturb.problem(RATTLEBACK.problem(RATTLE_R0, np.array([0.0, 0.0, -5.0])))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=2e-3, t_final=100.0, store_every=100)
    energy = np.array([RATTLEBACK.energy(g, mu) for g, mu in zip(sol.points(), sol.mu)])
    error = np.abs(energy - energy[0])
    quarter = error.size // 4
    assert error.max() <= 5e-3 * energy[0], error.max()
    assert error[-quarter:].max() <= 1.5 * error[:quarter].max(), (error[:quarter].max(), error[-quarter:].max())
    spin = RATTLEBACK.vertical_spin(sol)
    assert int(np.count_nonzero(np.diff(np.sign(spin)))) >= 4
    height, slip = constraint_defects(problem, sol)
    assert height <= 1e-16 and slip <= 1e-15, (height, slip)


@pytest.mark.slow
@pytest.mark.parametrize("mirrored", [False, True])
def test_rattleback_spin_reversal(mirrored: bool) -> None:
    """Kane & Levinson's rattleback from a 0.02 rad tilt about its long axis with spin 5 rad/s
    about the vertical: with δ > 0 a clockwise spin (ω_z < 0) reverses, and the mirror image
    (−δ) reverses an anticlockwise one. Lobatto-2 at h = 1e-3 s finds the first reversal within
    1 % of the Newton–Euler reference (at 3.76 s), and the spin has the opposite sign after it;
    the contact and rolling constraints hold to round-off at every node."""
    body, spin0 = (MIRROR, 5.0) if mirrored else (RATTLEBACK, -5.0)
    problem = body.problem(RATTLE_R0, np.array([0.0, 0.0, spin0]))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(2)), h=RATTLE_H, t_final=4.2)
    spin = body.vertical_spin(sol)
    reversal = first_sign_change(sol.t, spin)
    reference = reference_for(np.array([0.20, 0.03, 0.02]), body, problem, np.array([0.0, 4.2]))
    assert reference.reversal is not None and reversal is not None
    assert 3.5 <= reference.reversal <= 4.0
    assert abs(reversal - reference.reversal) <= 0.01 * reference.reversal, (reversal, reference.reversal)
    after = sol.t > reversal + 0.15
    assert np.sign(spin[0]) == np.sign(spin0) and np.all(np.sign(spin[after][:100]) == -np.sign(spin0))
    assert np.sign(reference.omega[-1] @ reference.R[-1][2]) == -np.sign(spin0)
    height, slip = constraint_defects(problem, sol)            # metres and m/s: the body is 4 cm tall
    assert height <= 1e-16 and slip <= 1e-15, (height, slip)


@pytest.mark.slow
def test_ball_agrees_with_rolling_ball() -> None:
    """An ellipsoid with a = b = c and its centre of mass at the centre is the Chaplygin ball:
    from RollingBall's initial state, the same method and step give the same nodes to round-off."""
    ball = RollingBall()
    problem = ball.problem()
    body = RollingBody.ellipsoid((1.0, 1.0, 1.0), ball.mass, ball.body_inertia, (0.0, 0.0, 0.0), gravity=ball.gravity)
    same = body.problem(problem.g0[0], problem.eta0[:3])
    assert np.max(np.abs(same.g0[1] - problem.g0[1])) <= 1e-15
    assert np.max(np.abs(same.eta0 - problem.eta0)) <= 1e-15
    method = lm.VPRK(lm.lobatto(2))
    expected = lm.integrate(problem, method, h=0.05, n_steps=200)
    sol = lm.integrate(same, method, h=0.05, n_steps=200)
    assert float(np.max(np.abs(sol.g[0] - expected.g[0]))) <= 1e-12
    assert float(np.max(np.abs(sol.g[1] - expected.g[1]))) <= 1e-12
    assert float(np.max(np.abs(sol.mu - expected.mu))) <= 1e-12


def test_rattleback_parameters() -> None:
    """The default inertia is Kane & Levinson's [[A, D, 0], [D, B, 0], [0, 0, C]] (per unit mass,
    A = 2, B = 16, C = 17, D = −0.2 cm²) in SI, and −δ flips the sign of D."""
    expected = np.array([[2e-4, -2e-5, 0.0], [-2e-5, 16e-4, 0.0], [0.0, 0.0, 17e-4]])
    assert np.allclose(RATTLEBACK.body_inertia, expected, rtol=0.0, atol=1e-15)
    assert np.allclose(MIRROR.body_inertia, expected * np.array([[1, -1, 1], [-1, 1, 1], [1, 1, 1]]), rtol=0.0,
                       atol=1e-15)
    assert np.array_equal(RATTLEBACK.com, [0.0, 0.0, -0.01]) and RATTLEBACK.mass == 1.0
    assert abs(KANE_LEVINSON_MISALIGNMENT - 0.5 * math.atan(0.4 / 14.0)) <= 1e-15   # tan 2δ = 2D/(A − B)


def test_problem_starts_on_the_constraints() -> None:
    """The problem puts the lowest point at the origin and the velocity on the rolling condition
    (all three components of the contact point's velocity vanish)."""
    problem = EGG.problem(EGG_R0, EGG_OMEGA0)
    R0, x0 = problem.g0
    gamma = R0[2]
    lowest = -EGG_AXES**2 * gamma / math.sqrt(float(EGG_AXES**2 @ gamma**2))
    assert np.max(np.abs(x0 + R0 @ (lowest - EGG_COM))) <= 1e-15
    velocity = problem.eta0[3:] + np.cross(R0 @ problem.eta0[:3], R0 @ (lowest - EGG_COM))
    assert np.max(np.abs(velocity)) <= 1e-15


RefusedBody = Callable[[], object]


@pytest.mark.parametrize(("build", "message"), [
    (lambda: RollingBody.ellipsoid((1.0, 0.0, 0.5), 1.0, np.eye(3), (0, 0, 0)), "semi_axes must be positive"),
    (lambda: RollingBody.ellipsoid((1.0, -1.0, 0.5), 1.0, np.eye(3), (0, 0, 0)), "semi_axes must be positive"),
    (lambda: RollingBody.ellipsoid((1.0, 1.0, 0.5), 1.0, np.diag([1.0, -1.0, 1.0]), (0, 0, 0)),
     "inertia must be positive definite"),
    (lambda: RollingBody.ellipsoid((1.0, 1.0, 0.5), 1.0, np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0, 0, 1]]),
                                   (0, 0, 0)), "inertia must be symmetric"),
    (lambda: RollingBody.ellipsoid((1.0, 1.0, 0.5), 1.0, np.diag([0.1, 0.2, 0.5]), (0, 0, 0)),
     "inertia violates the triangle inequality"),
    (lambda: RollingBody.ellipsoid((1.0, 1.0, 0.5), 1.0, np.eye(3), (0.0, 0.0, -0.6)), "com must lie inside"),
    (lambda: RollingBody.ellipsoid((1.0, 1.0, 0.5), 0.0, np.eye(3), (0, 0, 0)), "mass must be"),
    (lambda: EGG.problem(np.diag([1.0, 1.0, -1.0]), EGG_OMEGA0), "R0"),
    (lambda: EGG.problem(1.01 * np.eye(3), EGG_OMEGA0), "R0"),
    (lambda: EGG.problem(np.eye(3), np.zeros(2)), "omega0"),
    (lambda: RollingBody.rattleback(2.0), "misalignment"),
])
def test_bad_bodies_are_refused_by_name(build: RefusedBody, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def cube_support(u: Any) -> Any:
    """h of the cube [−½, ½]³: every contact is a vertex (or an edge or a face)."""
    import jax.numpy as jnp

    return 0.5 * jnp.sum(jnp.abs(u))


def cylinder_support(u: Any) -> Any:
    """h of the cylinder of radius 0.4 and half-height 0.3 about e₃: tilted, it stands on its rim
    (an edge); upright, on its end face (a kink of h)."""
    import jax.numpy as jnp

    return 0.4 * jnp.sqrt(u[0] ** 2 + u[1] ** 2) + 0.3 * jnp.abs(u[2])


CUBE = RollingBody(cube_support, 1.0, 0.1 * np.eye(3), np.zeros(3))
CYLINDER = RollingBody(cylinder_support, 1.0, 0.1 * np.eye(3), np.zeros(3))


@pytest.mark.parametrize(("body", "R0", "radii"), [
    (CUBE, EGG_R0, r"\[-?0\.0, -?0\.0\]"),                                         # a vertex: both radii 0
    (CYLINDER, exp_matrix(np.array([0.5, 0.0, 0.0])), r"\[-?0\.0, 0\.834332\]"),   # the rim: 0 and r/sin 0.5
    (CYLINDER, np.eye(3), r"\[nan, nan\]"),                                        # the end face
], ids=["vertex", "edge", "face"])
def test_contact_that_is_not_strictly_convex_is_refused(body: RollingBody, R0: lm.Matrix, radii: str) -> None:
    """``problem`` refuses, naming ``support`` and giving the principal radii of curvature there, a
    body whose initial contact is a vertex, an edge or a flat face: the surface must be strictly
    convex and smooth where it touches the plane (the eigenvalues of ∇²h(d) on d^⊥ positive)."""
    with pytest.raises(ValueError, match=r"support must describe a smooth, strictly convex surface at the initial "
                                         rf"contact: the principal radii of curvature .* are {radii}"):
        body.problem(R0, EGG_OMEGA0)


def test_general_support_function_is_checked() -> None:
    """A body given by its support function alone (here an ellipsoid's, written out) gets its
    contact point by autodiff; a centre of mass outside it, or a support map that is not the
    support function's gradient, is refused."""
    import jax.numpy as jnp

    def support(u: Any) -> Any:
        return jnp.sqrt(jnp.sum((EGG_AXES * u) ** 2))

    body = RollingBody(support, 1.0, EGG_INERTIA, EGG_COM, gravity=1.0)
    down = -EGG_R0[2]
    assert np.allclose(np.asarray(body.surface_point(down)), np.asarray(EGG.surface_point(down)), rtol=0.0, atol=1e-15)
    with pytest.raises(ValueError, match="com must lie inside the body"):
        RollingBody(support, 1.0, EGG_INERTIA, np.array([0.0, 0.0, 0.55]))
    with pytest.raises(ValueError, match="support_map must be the gradient of support"):
        RollingBody(support, 1.0, EGG_INERTIA, EGG_COM, support_map=lambda u: u)
