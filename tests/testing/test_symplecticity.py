"""liemech.testing.symplecticity against independent truths: maps that are symplectic by
construction, closed-form defects of non-symplectic maps, analytic Jacobians, and the papers'
claim (spec 000 §B.8) that constrained variational schemes are symplectic on constrained
variations while energy-conserving discrete-gradient schemes are not."""

from collections.abc import Callable
from typing import cast

import numpy as np
import pytest

import liemech as lm
from liemech.systems import CartesianPendulum
from liemech.systems.heavy_top import HeavyTop
from liemech.testing import (
    constrained_variations,
    one_step_jacobian,
    random_variations,
    step_map,
    symplecticity_defect,
    tangent_variations,
)
from liemech.types import Matrix, Vector

# ---- linear maps -------------------------------------------------------------------------------


def _symplectic_matrix(d: int, rng: np.random.Generator) -> Matrix:
    """diag(B, B⁻ᵀ) · [[I, 0], [S, I]] · [[I, T], [0, I]] with S, T symmetric: each factor preserves
    ω(ξ, η) = ξ_p·η_q − ξ_q·η_p exactly, so the product does up to round-off."""
    I, Z = np.eye(d), np.zeros((d, d))
    S = rng.normal(scale=0.5, size=(d, d))
    T = rng.normal(scale=0.5, size=(d, d))
    B = I + 0.3 * rng.normal(size=(d, d))
    scaling = np.block([[B, Z], [Z, np.linalg.inv(B).T]])
    lower = np.block([[I, Z], [S + S.T, I]])
    upper = np.block([[I, T + T.T], [Z, I]])
    return np.asarray(scaling @ lower @ upper, dtype=np.float64)


def test_linear_symplectic_matrix_has_a_roundoff_defect() -> None:
    rng = np.random.default_rng(1)
    A = _symplectic_matrix(3, rng)
    X = random_variations(6, 8, rng)
    assert symplecticity_defect(A, X) < 1e-14
    # the finite-difference Jacobian of z ↦ Az is A to round-off, and so is its defect
    z = rng.normal(size=6)
    J = one_step_jacobian(lambda x: A @ x, z)
    assert np.max(np.abs(J - A)) <= 1e-13 * np.max(np.abs(A))
    assert symplecticity_defect(J, X) < 1e-12


@pytest.mark.parametrize(("a", "b"), [(1.1, 1.1), (2.0, 0.25), (0.9, -1.0)])
def test_scaled_map_has_the_closed_form_defect(a: float, b: float) -> None:
    """A = diag(a I, b I) gives ω(Aξ, Aη) = ab ω(ξ, η): relative defect |ab − 1| for any variations."""
    rng = np.random.default_rng(2)
    A = np.diag(np.concatenate([np.full(3, a), np.full(3, b)]))
    for X in (random_variations(6, 5, rng), constrained_variations(rng.normal(size=(2, 3)), 7, rng)):
        assert symplecticity_defect(A, X) == pytest.approx(abs(a * b - 1.0), rel=1e-13)


# ---- Störmer–Verlet on Hénon–Heiles, written here ------------------------------------------------


def _henon_heiles_gradient(q: Vector) -> Vector:
    """V = ½(x² + y²) + x²y − y³/3."""
    x, y = q
    return np.array([x + 2.0 * x * y, y + x * x - y * y])


def _henon_heiles_hessian(q: Vector) -> Matrix:
    x, y = q
    return np.array([[1.0 + 2.0 * y, 2.0 * x], [2.0 * x, 1.0 - 2.0 * y]])


def _verlet(h: float) -> Callable[[Vector], Vector]:
    def psi(z: Vector) -> Vector:
        q, p = z[:2], z[2:]
        p_half = p - 0.5 * h * _henon_heiles_gradient(q)
        q1 = q + h * p_half
        return np.concatenate([q1, p_half - 0.5 * h * _henon_heiles_gradient(q1)])

    return psi


def _verlet_jacobian(h: float, z: Vector) -> Matrix:
    """The product of the three shears' Jacobians (kick, drift, kick)."""
    I, Z = np.eye(2), np.zeros((2, 2))
    q, p = z[:2], z[2:]
    q1 = q + h * (p - 0.5 * h * _henon_heiles_gradient(q))
    kick0 = np.block([[I, Z], [-0.5 * h * _henon_heiles_hessian(q), I]])
    drift = np.block([[I, h * I], [Z, I]])
    kick1 = np.block([[I, Z], [-0.5 * h * _henon_heiles_hessian(q1), I]])
    return np.asarray(kick1 @ drift @ kick0, dtype=np.float64)


def test_stormer_verlet_is_symplectic_on_random_variations() -> None:
    rng = np.random.default_rng(3)
    z = np.array([0.12, -0.2, 0.3, 0.25])
    for h in (0.3, 0.1):
        J = one_step_jacobian(_verlet(h), z)
        exact = _verlet_jacobian(h, z)
        assert np.max(np.abs(J - exact)) <= 1e-12 * np.max(np.abs(exact))
        assert symplecticity_defect(J, random_variations(4, 10, rng)) < 1e-12


# ---- explicit Euler on the pendulum ------------------------------------------------------------


def _euler(h: float) -> Callable[[Vector], Vector]:
    """H = ½p² − cos q: (q, p) ↦ (q + hp, p − h sin q), Jacobian determinant 1 + h² cos q."""
    return lambda z: np.array([z[0] + h * z[1], z[1] - h * np.sin(z[0])])


def test_explicit_euler_defect_is_the_jacobian_determinant_minus_one() -> None:
    """For d = 1, ω(Aξ, Aη) = det A · ω(ξ, η), so the defect of one step is h²|cos q| exactly:
    second order in h per step (it quarters when h halves)."""
    rng = np.random.default_rng(4)
    z = np.array([0.7, 0.4])
    X = random_variations(2, 4, rng)
    defects = []
    for h in (0.1, 0.05, 0.025):
        defect = symplecticity_defect(one_step_jacobian(_euler(h), z), X)
        assert defect == pytest.approx(h * h * abs(np.cos(z[0])), rel=1e-9)
        defects.append(defect)
    assert defects[0] / defects[1] == pytest.approx(4.0, rel=1e-9)


def test_explicit_euler_defect_over_a_fixed_time_is_first_order() -> None:
    """Over t = 1 (N = 1/h steps) the defect is |Πₙ(1 + h² cos qₙ) − 1| ≈ h ∫cos q dt: it halves
    when h halves."""
    rng = np.random.default_rng(5)
    z0 = np.array([0.7, 0.4])
    X = random_variations(2, 4, rng)
    defects = []
    for n_steps in (20, 40, 80):
        h = 1.0 / n_steps
        step = _euler(h)

        def flow(z: Vector, step: Callable[[Vector], Vector] = step, n_steps: int = n_steps) -> Vector:
            for _ in range(n_steps):
                z = step(z)
            return z

        determinant, z = 1.0, z0.copy()
        for _ in range(n_steps):
            determinant *= 1.0 + h * h * np.cos(z[0])
            z = step(z)
        defect = symplecticity_defect(one_step_jacobian(flow, z0), X)
        assert defect == pytest.approx(abs(determinant - 1.0), rel=1e-9)
        defects.append(defect)
    assert defects[0] / defects[1] == pytest.approx(2.0, rel=0.05)
    assert defects[1] / defects[2] == pytest.approx(2.0, rel=0.05)


# ---- one_step_jacobian against analytic Jacobians ------------------------------------------------


def _smooth_map(z: Vector) -> Vector:
    a, b, c, e = z
    return np.array([np.sin(a) * b, np.exp(0.5 * c) + a * a, np.cos(b * c) - e, e**3 / 3.0 + np.tanh(a)])


def _smooth_map_jacobian(z: Vector) -> Matrix:
    a, b, c, e = z
    return np.array([
        [np.cos(a) * b, np.sin(a), 0.0, 0.0],
        [2.0 * a, 0.0, 0.5 * np.exp(0.5 * c), 0.0],
        [0.0, -np.sin(b * c) * c, -np.sin(b * c) * b, -1.0],
        [1.0 - np.tanh(a) ** 2, 0.0, 0.0, e * e],
    ])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_step_jacobian_matches_the_analytic_jacobian(seed: int) -> None:
    z = np.random.default_rng(seed).uniform(-1.5, 1.5, size=4)
    exact = _smooth_map_jacobian(z)
    error = np.max(np.abs(one_step_jacobian(_smooth_map, z) - exact))
    assert error <= 1e-12 * np.max(np.abs(exact))


def test_one_step_jacobian_is_eighth_order() -> None:
    """Truncation δ⁸ f⁽⁹⁾/630: halving δ divides the error of d/dx eˣ by 2⁸ = 256."""
    z = np.array([0.3])
    errors = [abs(float(one_step_jacobian(np.exp, z, step)[0, 0]) - np.exp(0.3)) for step in (0.4, 0.2)]
    assert errors[0] == pytest.approx(0.4**8 / 630.0 * np.exp(0.3), rel=0.05)
    assert errors[0] / errors[1] == pytest.approx(256.0, rel=0.05)


# ---- liemech methods on the Cartesian pendulum -------------------------------------------------


def _pendulum_state(method: lm.Method, h: float) -> tuple[Callable[[Vector], Vector], Vector]:
    """The one-step map and the state after three steps from the problem's initial data."""
    problem = CartesianPendulum().problem()
    psi = step_map(problem, method, h)
    z = np.concatenate([problem.g0, problem.mu0])
    for _ in range(3):
        z = psi(z)
    return psi, z


def _pendulum_variations(z: Vector, count: int, rng: np.random.Generator) -> tuple[Matrix, Matrix, Matrix]:
    """Random, constrained (G dq = 0) and tangent (T M) variations for g = ½(|q|² − 1), gᵛ = q·p."""
    q, p = z[:2], z[2:]
    G = q[None, :]
    return (random_variations(4, count, rng), constrained_variations(G, count, rng),
            tangent_variations(G, p[None, :], q[None, :], count, rng))


def test_step_map_is_one_step_of_the_method() -> None:
    problem = CartesianPendulum().problem()
    method = lm.VPRK(lm.lobatto(2))
    sol = lm.integrate(problem, method, h=0.1, n_steps=1)
    z1 = step_map(problem, method, 0.1)(np.concatenate([problem.g0, problem.mu0]))
    assert np.max(np.abs(z1 - np.concatenate([sol.g[-1], sol.mu[-1]]))) <= 1e-14


@pytest.mark.parametrize("h", [0.2, 0.05])
def test_rattle_is_symplectic_on_constrained_variations(h: float) -> None:
    psi, z = _pendulum_state(lm.VPRK(lm.lobatto(2)), h)
    J = one_step_jacobian(psi, z)
    unconstrained, constrained, tangent = _pendulum_variations(z, 6, np.random.default_rng(6))
    assert symplecticity_defect(J, tangent) < 1e-11
    assert symplecticity_defect(J, constrained) < 1e-11
    # off the constraints RATTLE projects, so it is not symplectic on all of R⁴
    assert symplecticity_defect(J, unconstrained) > 1e-2


def test_discrete_gradient_multiplier_is_not_symplectic() -> None:
    """Off the constraint manifold its map varies on a scale ~|Δz|² (the discrete-gradient quotient),
    so the Jacobian needs δ ≈ 1e-5; the defect is the same at δ = 3e-6."""
    psi, z = _pendulum_state(lm.DiscreteGradientMultiplier(), 0.1)
    tangent = _pendulum_variations(z, 6, np.random.default_rng(7))[2]
    defects = [symplecticity_defect(one_step_jacobian(psi, z, step), tangent) for step in (1e-5, 3e-6)]
    assert defects[0] > 1e-8
    assert defects[1] == pytest.approx(defects[0], rel=1e-3)


# ---- bad input -----------------------------------------------------------------------------------


def test_bad_input_names_the_argument() -> None:
    rng = np.random.default_rng(8)
    A, X = np.eye(4), random_variations(4, 3, rng)
    with pytest.raises(ValueError, match="jacobian"):
        symplecticity_defect(np.eye(3), np.ones((3, 3)))
    with pytest.raises(ValueError, match="jacobian"):
        symplecticity_defect(np.ones((4, 2)), X)
    with pytest.raises(ValueError, match="jacobian"):
        symplecticity_defect(np.full((4, 4), np.nan), X)
    with pytest.raises(ValueError, match="variations"):
        symplecticity_defect(A, np.ones((6, 3)))
    with pytest.raises(ValueError, match="variations"):
        symplecticity_defect(A, X[:, :1])
    with pytest.raises(ValueError, match="variations"):
        symplecticity_defect(A, np.vstack([X[:2], np.zeros((2, 3))]))  # dp = 0: ω ≡ 0
    with pytest.raises(ValueError, match="count"):
        constrained_variations(np.ones((1, 2)), 0, rng)
    with pytest.raises(ValueError, match="G"):
        constrained_variations(np.ones(2), 3, rng)
    with pytest.raises(ValueError, match="Gv_q"):
        tangent_variations(np.ones((1, 2)), np.ones((1, 3)), np.ones((1, 3)), 3, rng)
    with pytest.raises(ValueError, match="Gv_p"):
        tangent_variations(np.ones((1, 2)), np.ones((1, 2)), np.ones((2, 2)), 3, rng)
    with pytest.raises(ValueError, match="dimension"):
        random_variations(3, 2, rng)
    with pytest.raises(ValueError, match="step"):
        one_step_jacobian(np.sin, np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="z"):
        one_step_jacobian(np.sin, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="step_map"):
        one_step_jacobian(lambda x: x[:1], np.zeros(2))
    problem = CartesianPendulum().problem()
    with pytest.raises(ValueError, match="h"):
        step_map(problem, lm.VPRK(lm.lobatto(2)), -0.1)
    with pytest.raises(ValueError, match="z"):
        step_map(problem, lm.VPRK(lm.lobatto(2)), 0.1)(np.zeros(3))


def test_wrong_types_raise_type_error() -> None:
    with pytest.raises(TypeError, match="Rn"):
        step_map(HeavyTop().problem(), lm.VPRK(lm.lobatto(2)), 0.1)
    problem = CartesianPendulum().problem()
    with pytest.raises(TypeError, match="method"):
        step_map(problem, cast(lm.Method, "RATTLE"), 0.1)  # deliberately ill-typed
    with pytest.raises(TypeError, match="rng"):
        random_variations(4, 2, cast(np.random.Generator, 0))  # deliberately ill-typed
