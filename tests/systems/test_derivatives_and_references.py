"""The problem catalogue: analytic derivatives against finite differences along g τ(εζ), and the
reference solutions against their first integrals and closed forms."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.systems import HeavyTop, HenonHeiles, Pendulum
from liemech.testing.finite_differences import jacobian

TOP = HeavyTop()
HH = HenonHeiles()
E3 = np.array([0.0, 0.0, 1.0])


@pytest.mark.parametrize("kind", lm.RETRACTION_KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_heavy_top_gradient_and_hessian_match_finite_differences(kind: lm.RetractionKind, seed: int) -> None:
    """⟨∇V(R), ζ⟩ = d/dε V(R τ(εζ)) and (∇²V(R))ζ = d/dε ∇V(R τ(εζ)) at ε = 0, for either τ."""
    G = lm.SO3()
    tau = G.retraction(kind)
    R = G.random_point(np.random.default_rng(seed))
    system = TOP.system()
    gradient = jacobian(lambda z: np.array([system.potential(G.compose(R, tau.tau(z)))]), np.zeros(3))[0]
    hessian = jacobian(lambda z: system.potential_gradient(G.compose(R, tau.tau(z))), np.zeros(3))
    assert np.max(np.abs(gradient - system.potential_gradient(R))) <= 1e-11
    assert np.max(np.abs(hessian - system.potential_hessian(R))) <= 1e-11
    # the closed forms stated in the docstrings: ∇V = mg χ × Γ, ∇²V = mg χ̂ Γ̂ with Γ = Rᵀe₃
    gamma = R.T @ E3
    assert np.max(np.abs(system.potential_gradient(R) - TOP.mg * np.cross(TOP.chi, gamma))) <= 1e-15
    assert np.max(np.abs(system.potential_hessian(R) - TOP.mg * G.hat(TOP.chi) @ G.hat(gamma))) <= 1e-15


def test_heavy_top_problem_matches_the_spec() -> None:
    """R₀ = exp((0.3, −0.5, 0.2)^), η₀ = ω₀, μ₀ = 𝕀ω₀ (spec 004-Lie §9.1)."""
    problem = TOP.problem()
    R0 = lm.SO3().retraction("exp").tau(np.array([0.3, -0.5, 0.2]))
    assert np.max(np.abs(problem.g0 - R0)) <= 1e-15
    assert np.array_equal(problem.eta0, np.array([0.8, -0.4, 1.1]))
    assert np.max(np.abs(problem.mu0 - np.array([1.0, 2.0, 3.5]) * problem.eta0)) <= 1e-15
    assert TOP.mg == 1.5 and TOP.t_final == 2.0
    assert TOP.energy(problem.g0, problem.mu0) == pytest.approx(TOP.system().energy(problem.g0, problem.eta0), abs=1e-15)


def test_heavy_top_rhs_is_the_library_equation_of_motion() -> None:
    """rhs = (R η̂, ad*_η μ + f) with the library's ad and f = −∇V, at a random state."""
    G, system = lm.SO3(), TOP.system()
    rng = np.random.default_rng(3)
    R, mu = G.random_point(rng), rng.standard_normal(3)
    eta = system.velocity(R, mu)
    dy = TOP.rhs(0.0, np.concatenate([R.ravel(), mu]))
    assert np.max(np.abs(dy[:9] - (R @ G.hat(eta)).ravel())) <= 1e-15
    assert np.max(np.abs(dy[9:] - (G.ad(eta).T @ mu + system.force(R, eta)))) <= 1e-14


def test_heavy_top_reference_conserves_energy_and_noether_momentum() -> None:
    """Over T = 2 (41 nodes): H and ⟨μ, Rᵀe₃⟩ are constant and R stays a rotation, to ~1e-13.

    H alone would not catch a sign error in μ × η (η·(μ × η) = 0 either way); ⟨μ, Γ⟩ would."""
    times = np.linspace(0.0, TOP.t_final, 41)
    Rs, mus = TOP.reference(times)
    E = np.array([TOP.energy(R, m) for R, m in zip(Rs, mus)])
    J = np.array([TOP.noether_momentum(R, m) for R, m in zip(Rs, mus)])
    assert np.max(np.abs(E - E[0])) <= 1e-12
    assert np.max(np.abs(J - J[0])) <= 1e-12
    assert max(float(np.max(np.abs(R.T @ R - np.eye(3)))) for R in Rs) <= 1e-12
    assert np.max(np.abs(mus[0] - TOP.problem().mu0)) == 0.0


def test_free_rigid_body_reference_conserves_spatial_angular_momentum() -> None:
    """With mg = 0 the left action is a full symmetry: R μ is constant (all three components)."""
    free = HeavyTop(mg=0.0)
    Rs, mus = free.reference(np.linspace(0.0, 5.0, 11))
    spatial = np.array([R @ m for R, m in zip(Rs, mus)])
    assert np.max(np.abs(spatial - spatial[0])) <= 1e-12


def test_henon_heiles_derivatives_match_finite_differences() -> None:
    system = HH.system()
    for q in (np.array([0.1, -0.2]), np.array([-0.4, 0.35]), np.zeros(2)):
        gradient = jacobian(lambda x: np.array([system.potential(x)]), q)[0]
        hessian = jacobian(system.potential_gradient, q)
        assert np.max(np.abs(gradient - system.potential_gradient(q))) <= 1e-12
        assert np.max(np.abs(hessian - system.potential_hessian(q))) <= 1e-12


def test_henon_heiles_orbit_is_bounded_and_reference_conserves_energy() -> None:
    """H₀ < 1/6 (the escape energy); over T = 50 the DOP853 reference keeps H to ~1e-13."""
    problem = HH.problem()
    H0 = HH.energy(problem.g0, problem.mu0)
    assert H0 < 1.0 / 6.0
    assert H0 == pytest.approx(HH.system().energy(problem.g0, problem.eta0), abs=1e-16)
    qs, ps = HH.reference(np.linspace(0.0, 50.0, 101))
    E = np.array([HH.energy(q, p) for q, p in zip(qs, ps)])
    assert np.max(np.abs(E - H0)) <= 1e-12
    assert np.max(np.abs(qs)) < 1.0


def test_pendulum_derivatives_match_finite_differences() -> None:
    pendulum = Pendulum(gravity=9.81, length=2.0)
    system = pendulum.system()
    for angle in (0.0, 0.7, -2.5, 3.0):
        q = np.array([angle])
        gradient = jacobian(lambda x: np.array([system.potential(x)]), q)[0]
        hessian = jacobian(system.potential_gradient, q)
        assert np.max(np.abs(gradient - system.potential_gradient(q))) <= 1e-11
        assert np.max(np.abs(hessian - system.potential_hessian(q))) <= 1e-11
    assert pendulum.potential(np.array([1e-9])) == pytest.approx(0.5 * 9.81 / 2.0 * 1e-18, rel=1e-12)


def test_pendulum_reference_returns_after_the_closed_form_period() -> None:
    """4K(sin²(a/2))/ω from the DOP853 reference: q(T/2) = −a, (q, p)(T) = (a, 0), H constant."""
    pendulum = Pendulum()
    T = pendulum.period()
    qs, ps = pendulum.reference(np.array([0.0, 0.5 * T, T]))
    assert abs(qs[1, 0] + pendulum.q0) <= 1e-11 and abs(ps[1, 0]) <= 1e-11
    assert abs(qs[2, 0] - pendulum.q0) <= 1e-11 and abs(ps[2, 0]) <= 1e-11
    E = np.array([pendulum.energy(q, p) for q, p in zip(qs, ps)])
    assert np.max(np.abs(E - E[0])) <= 1e-13
    with pytest.raises(ValueError, match="not a libration"):
        Pendulum(p0=2.5).period()


class MomentumTurnsPositive:
    """A solve_ivp event: p crosses zero upwards."""

    direction = 1.0

    def __call__(self, t: float, y: lm.Vector) -> float:
        return float(y[1])


def test_pendulum_small_amplitude_period() -> None:
    """The period measured on the rhs (times of p = 0 crossings) is 2π√(L/g) (1 + a²/16 + O(a⁴))."""
    g, L = 9.81, 2.0
    T0 = 2.0 * math.pi * math.sqrt(L / g)
    for a in (0.2, 0.1, 0.05):
        pendulum = Pendulum(gravity=g, length=L, q0=a)
        sol = solve_ivp(pendulum.rhs, (0.0, 1.5 * T0), np.array([a, 0.0]), method="DOP853",
                        rtol=1e-13, atol=1e-14, events=MomentumTurnsPositive())
        assert sol.t_events is not None
        measured = float(sol.t_events[0][0]) * 2.0  # p turns positive at q = −a, half a period in
        relative = measured / T0 - 1.0
        assert abs(relative - a * a / 16.0) <= a**4 / 200.0  # next term: 11a⁴/3072 ≈ a⁴/279
        assert measured == pytest.approx(pendulum.period(), rel=1e-10)


def test_pendulum_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="gravity must be positive"):
        Pendulum(gravity=-1.0)
    with pytest.raises(ValueError, match="length must be positive"):
        Pendulum(length=math.nan)
