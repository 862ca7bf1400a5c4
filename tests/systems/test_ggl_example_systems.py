"""The example systems of paper 000 (spec seed000 §C, §D): the 3D pendulum, the gyroscopic top in
director coordinates and the four-particle system. Every check compares with an independent truth:
the spec's reference numbers, finite differences, np.cross, closed forms, or a DOP853 solution of
the same body on SO(3)."""

import math
from typing import Protocol

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from liemech.groups.so3 import exp_matrix, skew
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.invariant_potential import QuadraticInvariantPotential
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.numerics.discrete_derivative import ROUNDOFF, discrete_derivative
from liemech.systems import DirectorTop, FourParticles, GyroscopicTop, SphericalPendulum
from liemech.systems.director_top import orthonormality_hessians
from liemech.testing.finite_differences import jacobian
from liemech.types import Matrix, Vector

PENDULUM = SphericalPendulum()
TOP = GyroscopicTop()
FOUR = FourParticles()
METIS_V4 = np.array([0.0, 3.0 / 1.7, 2.0 / 1.7])


class Model(Protocol):
    """What the three example classes share."""

    def mass_matrix(self) -> Matrix: ...
    def system(self) -> MechanicalSystem[Vector]: ...
    def problem(self) -> Problem[Vector]: ...
    def energy(self, q: Vector, p: Vector) -> float: ...
    def angular_momentum(self, q: Vector, p: Vector) -> Vector: ...


MODELS: dict[str, Model] = {"pendulum": PENDULUM, "top": TOP, "4P": FOUR, "4P-metis": FourParticles(v4=METIS_V4)}

Example = tuple[MechanicalSystem[Vector], HolonomicConstraint[Vector], Problem[Vector], Vector]


def _examples() -> dict[str, Example]:
    """name -> (system, constraint, problem, the base point q₀ around which random points are drawn)."""
    out: dict[str, Example] = {}
    for name, model in MODELS.items():
        problem = model.problem()
        assert problem.holonomic is not None
        out[name] = (model.system(), problem.holonomic, problem, problem.g0)
    return out


EXAMPLES = _examples()
NAMES = sorted(EXAMPLES)


def _block_rotation(omega: Vector, blocks: int = 4) -> Matrix:
    """diag(R, …, R) with R = exp(ω̂)."""
    out: Matrix = np.asarray(np.kron(np.eye(blocks), exp_matrix(omega)), dtype=np.float64)
    return out


# --- reference numbers -------------------------------------------------------------------------


def test_gyroscopic_top_matches_the_spec_numbers() -> None:
    """Spec §D.2: cone data, ω_s = 135.6 exactly, ω₀, q⁰, v⁰, H₀ and L₀."""
    assert abs(TOP.mass - 0.706858347057704) <= 1e-15
    assert abs(TOP.ell - 0.075) <= 1e-16
    assert np.max(np.abs(TOP.principal_inertia() - 5.30143760293278e-4)) <= 1e-18
    assert np.max(np.abs(TOP.euler_tensor() - 2.65071880146639e-4)) <= 1e-18
    assert abs(TOP.tip_inertia()[0] - 4.506221962e-3) <= 1e-12
    assert abs(TOP.tip_inertia()[2] - 5.30143760293278e-4) <= 1e-18
    assert abs(TOP.spin_rate() - 135.6) <= 1e-12
    assert abs(TOP.steady_height() - 0.0375) <= 1e-16
    assert np.max(np.abs(TOP.omega0() - np.array([0.0, -117.43304475, 77.8]))) <= 1e-8
    q0 = np.array([0.0, -0.0649519053, 0.0375, 1.0, 0.0, 0.0, 0.0, 0.5, 0.8660254038, 0.0, -0.8660254038, 0.5])
    v0 = np.array([0.6495190528, 0.0, 0.0, 0.0, 77.8, 117.4330447532, -140.6, 0.0, 0.0, 8.6602540378, 0.0, 0.0])
    assert np.max(np.abs(TOP.q0 - q0)) <= 1e-10
    assert np.max(np.abs(TOP.v0 - v0)) <= 1e-9
    problem = TOP.problem()
    assert abs(TOP.energy(problem.g0, problem.mu0) - 5.66905519063295) <= 1e-13
    L0 = TOP.angular_momentum(problem.g0, problem.mu0)
    assert np.max(np.abs(L0 - np.array([0.0, -0.0450394723, 0.0710657711]))) <= 1e-10
    # the Euler tensor inverts to the inertia: J_i = E_j + E_k
    E = TOP.euler_tensor()
    assert np.max(np.abs(np.array([E[1] + E[2], E[0] + E[2], E[0] + E[1]]) - TOP.principal_inertia())) <= 1e-18


def test_gyroscopic_top_spin_rate_is_goldsteins_steady_precession_condition() -> None:
    """For other data: m g ℓ = ω_p (J₃ ω₃ − I′₁ ω_p cos α) with ω₃ = ω_s + ω_p cos α the spin about d₃."""
    top = GyroscopicTop(density=7800.0, height=0.2, alpha0=0.4, precession_rate=-3.0)
    J1, _, J3 = top.tip_inertia()
    wp, c = top.precession_rate, math.cos(top.alpha0)
    omega3 = float(top.omega0() @ top.rotation0()[:, 2])
    assert abs(omega3 - (top.spin_rate() + wp * c)) <= 1e-12 * abs(omega3)
    torque = top.mass * top.gravity * top.ell
    assert abs(wp * (J3 * omega3 - J1 * wp * c) - torque) <= 1e-12 * torque


def test_four_particles_matches_the_spec_numbers() -> None:
    """Spec §D.3: H₀ = 2/1.7, L = (0, 0, 2), J = (2, −2, 0), ∇V(q₀) = 0; the metis variant by hand."""
    problem = FOUR.problem()
    q0, p0 = problem.g0, problem.mu0
    assert np.array_equal(q0, np.array([0.0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0]))
    assert abs(FOUR.energy(q0, p0) - 2.0 / 1.7) <= 1e-15
    assert np.max(np.abs(FOUR.linear_momentum(p0) - np.array([0.0, 0.0, 2.0]))) <= 1e-15
    assert np.max(np.abs(FOUR.angular_momentum(q0, p0) - np.array([2.0, -2.0, 0.0]))) <= 1e-15
    assert np.max(np.abs(FOUR.system().potential_gradient(q0))) == 0.0
    assert FOUR.system().potential(q0) == 0.0
    metis = FourParticles(v4=METIS_V4).problem()
    assert np.max(np.abs(metis.mu0 - np.r_[np.zeros(9), 0.0, 3.0, 2.0])) <= 1e-15  # p₄ = 1.7 v₄
    assert abs(FOUR.energy(metis.g0, metis.mu0) - 13.0 / 3.4) <= 1e-14
    assert np.max(np.abs(FOUR.angular_momentum(metis.g0, metis.mu0) - np.array([2.0, -2.0, 3.0]))) <= 1e-15


def test_spherical_pendulum_matches_the_spec_numbers() -> None:
    """Spec §D.1: H₀ = ½, J₃ = 1; q × p = e₃."""
    problem = PENDULUM.problem()
    assert abs(PENDULUM.energy(problem.g0, problem.mu0) - 0.5) <= 1e-15
    assert PENDULUM.vertical_angular_momentum(problem.g0, problem.mu0) == 1.0
    assert np.array_equal(PENDULUM.angular_momentum(problem.g0, problem.mu0), np.array([0.0, 0.0, 1.0]))


# --- consistency and first integrals -------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_initial_data_are_consistent(name: str) -> None:
    """g(q₀) = 0 and G(q₀)v₀ = 0 (spec §C.3: v_i = ω × q_i satisfies all nine secondary constraints)."""
    system, constraint, problem, _ = EXAMPLES[name]
    G = constraint.trivialised_jacobian(system.group, problem.g0)
    scale = max(1.0, float(np.max(np.abs(problem.eta0))))
    assert float(np.max(np.abs(constraint.value(problem.g0)))) <= 1e-15
    assert float(np.max(np.abs(G @ problem.eta0))) <= 1e-15 * scale
    assert np.linalg.matrix_rank(G) == G.shape[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_energies_and_momenta_against_independent_formulas(seed: int) -> None:
    """energy = ½pᵀM⁻¹p + V of the system; angular momenta against np.cross; J₃ the third component."""
    rng = np.random.default_rng(seed)
    for model in MODELS.values():
        system = model.system()
        d = system.group.dim
        q, p = rng.normal(size=d), rng.normal(size=d)
        expected = 0.5 * float(p @ np.linalg.solve(model.mass_matrix(), p)) + system.potential(q)
        assert abs(model.energy(q, p) - expected) <= 1e-12 * max(1.0, abs(expected))
        L = np.sum(np.cross(q.reshape(-1, 3), p.reshape(-1, 3)), axis=0)
        assert np.max(np.abs(model.angular_momentum(q, p) - L)) <= 1e-14
    q, p = rng.normal(size=3), rng.normal(size=3)
    assert abs(PENDULUM.vertical_angular_momentum(q, p) - float(np.cross(q, p)[2])) <= 1e-15
    p = rng.normal(size=12)
    assert np.max(np.abs(FourParticles.linear_momentum(p) - p.reshape(4, 3).sum(axis=0))) <= 1e-15


def test_four_particle_potential_is_the_printed_formula() -> None:
    """V(q) of the invariant potential equals (116) written with explicit differences."""
    rng = np.random.default_rng(3)
    V = FOUR.invariant_potential()
    for _ in range(5):
        q = rng.normal(size=12)
        a, b = q[6:9] - q[0:3], q[9:12] - q[3:6]
        s1, s2 = float(a @ a), float(b @ b)
        expected = 25.0 * (s1 - 1.0) ** 2 + 250.0 * (s2 - 1.0) ** 2
        assert abs(V.potential(q) - expected) <= 1e-12 * expected
        assert np.max(np.abs(V.invariants(q) - np.array([s1, s2]))) <= 1e-14 * max(1.0, s1 + s2)


# --- analytic derivatives against finite differences --------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_constraint_derivatives_match_finite_differences(name: str, seed: int) -> None:
    """G = ∂g/∂q and D²g_k = ∂G_k/∂q at random points (the constraints are quadratic: the five-point
    stencil is exact up to round-off)."""
    system, constraint, problem, scale = EXAMPLES[name]
    group = system.group
    q = scale + np.random.default_rng(seed).normal(size=group.dim)
    G = constraint.trivialised_jacobian(group, q)
    H = constraint.trivialised_hessians(group, q)
    m, d = G.shape
    assert H.shape == (m, d, d)
    assert np.max(np.abs(jacobian(constraint.value, q) - G)) <= 1e-10 * max(1.0, float(np.max(np.abs(G))))
    fd = jacobian(lambda x: constraint.trivialised_jacobian(group, x).ravel(), q).reshape(m, d, d)
    assert np.max(np.abs(fd - H)) <= 1e-10 * max(1.0, float(np.max(np.abs(H))))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_potential_derivatives_match_finite_differences(name: str, seed: int) -> None:
    """∇V and ∇²V against the stencil (V is at most quartic: exact up to round-off)."""
    system, _, _, scale = EXAMPLES[name]
    q = scale + 0.3 * np.random.default_rng(seed).normal(size=system.group.dim)
    gradient, hessian = system.potential_gradient(q), system.potential_hessian(q)
    fd_gradient = jacobian(lambda x: np.array([system.potential(x)]), q)[0]
    fd_hessian = jacobian(system.potential_gradient, q)
    assert np.max(np.abs(fd_gradient - gradient)) <= 1e-10 * max(1.0, float(np.max(np.abs(gradient))))
    assert np.max(np.abs(fd_hessian - hessian)) <= 1e-10 * max(1.0, float(np.max(np.abs(hessian))))
    assert np.max(np.abs(hessian - hessian.T)) <= 1e-12 * max(1.0, float(np.max(np.abs(hessian))))


def test_top_constraint_shares_the_director_top_hessians() -> None:
    """Rows 1–6 of the top's Hessians are DirectorTop's, shifted past φ; rows 7–9 vanish; the
    tip constraint's Jacobian is [I/ℓ, 0, 0, −I] (spec §C.2)."""
    top_h = TOP.constraint().trivialised_hessians(TOP.system().group, TOP.q0)
    director_top = DirectorTop()
    director_h = director_top.constraint().trivialised_hessians(director_top.system().group, np.zeros(9))
    assert np.array_equal(top_h[:6, 3:, 3:], director_h)
    assert np.array_equal(orthonormality_hessians(), director_h)
    assert not np.any(top_h[:6, :3, :]) and not np.any(top_h[:6, :, :3]) and not np.any(top_h[6:])
    G = TOP.constraint().trivialised_jacobian(TOP.system().group, np.random.default_rng(4).normal(size=12))
    assert np.max(np.abs(G[6:] - np.hstack([np.eye(3) / 0.075, np.zeros((3, 6)), -np.eye(3)]))) <= 1e-13
    with pytest.raises(ValueError, match="offset"):
        orthonormality_hessians(9, 3)


# --- the invariant discrete gradient (126) on the four-particle springs ------------------------


def _random_pair(rng: np.random.Generator, spread: float = 0.2) -> tuple[Vector, Vector]:
    x = FOUR.q0 + spread * rng.normal(size=12)
    return x, x + spread * rng.normal(size=12)


def _generators() -> list[Matrix]:
    """The rotation generators ξ = diag(ê, ê, ê, ê) for e = e₁, e₂, e₃ (translations are checked
    separately, as D̄V·[e; e; e; e])."""
    generators: list[Matrix] = []
    for e in np.eye(3):
        xi: Matrix = np.asarray(np.kron(np.eye(4), skew(e)), dtype=np.float64)
        generators.append(xi)
    return generators


@pytest.mark.parametrize("seed", range(5))
def test_invariant_discrete_gradient_is_exact_and_equivariant(seed: int) -> None:
    """Directionality V(y) − V(x) = D̄V(x, y)·(y − x) to round-off (86), orthogonality
    D̄V·(ξ q_mid) = 0 for the three rotation generators and D̄V·[e; e; e; e] = 0 for translations (85a)."""
    V = FOUR.invariant_potential()
    x, y = _random_pair(np.random.default_rng(seed))
    dg = V.discrete_gradient(x, y)
    scale = float(np.max(np.abs(dg))) * float(np.max(np.abs(y - x)))
    assert abs(V.potential(y) - V.potential(x) - float(dg @ (y - x))) <= 1e-13 * max(scale, V.potential(y))
    mid = 0.5 * (x + y)
    for xi in _generators():
        assert abs(float(dg @ (xi @ mid))) <= 1e-13 * float(np.max(np.abs(dg)))
    for e in np.eye(3):
        assert abs(float(dg @ np.tile(e, 4))) <= 1e-13 * float(np.max(np.abs(dg)))


def test_generic_gonzalez_gradient_is_not_equivariant_but_agrees_to_second_order() -> None:
    """The generic form (spec §B.7) differs from (126) by O(|Δq|²) and breaks (85a) for rotations."""
    V = FOUR.invariant_potential()
    rng = np.random.default_rng(7)
    x, direction = FOUR.q0 + 0.2 * rng.normal(size=12), rng.normal(size=12)

    def generic(a: Vector, b: Vector) -> Vector:
        return np.asarray(discrete_derivative(V, jnp.asarray(a), jnp.asarray(b)))

    differences = [float(np.linalg.norm(generic(x, x + h * direction) - V.discrete_gradient(x, x + h * direction)))
                   for h in (0.02, 0.01, 0.005)]
    rates = [math.log2(differences[k] / differences[k + 1]) for k in range(2)]
    assert all(abs(rate - 2.0) <= 0.1 for rate in rates)
    y = x + 0.1 * direction
    breaking = max(abs(float(generic(x, y) @ (xi @ (0.5 * (x + y))))) for xi in _generators())
    assert breaking >= 1e-6 * float(np.max(np.abs(generic(x, y))))


def _check_discrete_gradient_jacobian(V: QuadraticInvariantPotential, x: Vector, y: Vector) -> None:
    """∂D̄V(x, y)/∂y by forward-mode autodiff (what Newton uses in EM) against central differences."""
    discrete_gradient = jax.jit(lambda z: V.discrete_gradient(x, z))
    autodiff = np.asarray(jax.jacfwd(discrete_gradient)(y))
    fd = jacobian(lambda z: np.asarray(discrete_gradient(z)), y, step=1e-4)
    assert np.max(np.abs(fd - autodiff)) <= 1e-7 * float(np.max(np.abs(autodiff)))


@pytest.mark.parametrize("seed", range(3))
def test_discrete_gradient_jacobian_generic_branch(seed: int) -> None:
    """∂D̄V(x, y)/∂y against finite differences where π_i(y) ≠ π_i(x)."""
    V = FOUR.invariant_potential()
    x, y = _random_pair(np.random.default_rng(seed))
    assert np.min(np.abs(V.invariants(y) - V.invariants(x))) >= 1e-3
    _check_discrete_gradient_jacobian(V, x, y)


@pytest.mark.parametrize("seed", range(3))
def test_discrete_gradient_jacobian_zero_over_zero_branch(seed: int) -> None:
    """y a rigid motion of x (every π_i(y) = π_i(x)): D̄V = Σ Ṽ_i′(π_i) ∇π_i(mid) and its Jacobian
    (½Ṽ_i″ for the quotient's derivative, by autodiff through the round-off branch) against finite
    differences."""
    rng = np.random.default_rng(seed)
    V = FOUR.invariant_potential()
    x = FOUR.q0 + 0.2 * rng.normal(size=12)
    y = _block_rotation(0.3 * rng.normal(size=3)) @ x + np.tile(rng.normal(size=3), 4)
    s_x, s_y = V.invariants(x), V.invariants(y)
    assert all(abs(b - a) <= ROUNDOFF * (abs(a) + abs(b)) for a, b in zip(s_x, s_y))  # the 0/0 branch is taken
    weights = np.array([FOUR.k13 * (V.invariants(x)[0] - 1.0), FOUR.k24 * (V.invariants(x)[1] - 1.0)])
    expected = weights @ V.invariant_gradients(0.5 * (x + y))
    assert np.max(np.abs(V.discrete_gradient(x, y) - expected)) <= 1e-12 * float(np.max(np.abs(expected)))
    _check_discrete_gradient_jacobian(V, x, y)


def test_quadratic_invariant_potential_rejects_bad_input() -> None:
    """Wrong shapes or counts raise ValueError naming the argument."""
    A = np.eye(3)

    def F(s: float) -> float:
        return s * s

    def dF(s: float) -> float:
        return 2.0 * s

    with pytest.raises(ValueError, match="forms"):
        QuadraticInvariantPotential([], [], [])
    with pytest.raises(ValueError, match="forms"):
        QuadraticInvariantPotential([np.ones((3, 2))], [F], [dF])
    with pytest.raises(ValueError, match=r"forms\[1\]"):
        QuadraticInvariantPotential([A, np.eye(2)], [F, F], [dF, dF])
    with pytest.raises(ValueError, match=r"forms\[0\]"):
        QuadraticInvariantPotential([np.triu(np.ones((3, 3)))], [F], [dF])
    with pytest.raises(ValueError, match="functions"):
        QuadraticInvariantPotential([A, A], [F], [dF, dF])
    with pytest.raises(ValueError, match="derivatives"):
        QuadraticInvariantPotential([A], [F], [dF, dF])
    with pytest.raises(ValueError, match="second_derivatives"):
        QuadraticInvariantPotential([A], [F], [dF], [dF, dF])
    with pytest.raises(ValueError, match="linear"):
        QuadraticInvariantPotential([A], [F], [dF], linear=[np.zeros(2)])
    with pytest.raises(ValueError, match="linear"):
        QuadraticInvariantPotential([A], [F], [dF], linear=[np.zeros(3), np.zeros(3)])


# --- the gyroscopic top against the same body on SO(3) ------------------------------------------


def _director_history(top: GyroscopicTop, times: Vector) -> tuple[list[Vector], list[Vector], list[float]]:
    """q(t), p(t) = M q̇(t) built from the DOP853 heavy-top reference R(t), μ(t), and its Noether ⟨μ, Rᵀe₃⟩."""
    heavy = top.equivalent_top()
    rotations, momenta = heavy.reference(times)
    qs, ps, noether = [], [], []
    for R, mu in zip(rotations, momenta):
        qs.append(top.director_configuration(R))
        ps.append(top.mass_matrix() @ top.director_velocity(R, np.linalg.solve(heavy.inertia, mu)))
        noether.append(heavy.noether_momentum(R, mu))
    return qs, ps, noether


def test_equivalent_top_has_the_same_initial_state_and_integrals() -> None:
    """R₀ = R(α₀), the director state built from (R₀, Ω₀) is (q⁰, v⁰), and the SO(3) energy and
    Noether momentum equal H₀ and L₃ of the director model. q copies R's entries (and ℓ R e₃), so
    it agrees to R₀'s round-off."""
    heavy = TOP.equivalent_top()
    problem = heavy.problem()
    assert np.max(np.abs(problem.g0 - TOP.rotation0())) <= 1e-15
    assert np.max(np.abs(TOP.director_configuration(problem.g0) - TOP.q0)) <= 1e-15
    assert np.max(np.abs(TOP.director_velocity(problem.g0, problem.eta0) - TOP.v0)) <= 1e-12
    p0 = TOP.problem().mu0
    assert abs(heavy.energy(problem.g0, problem.mu0) - TOP.energy(TOP.q0, p0)) <= 1e-13
    assert abs(heavy.noether_momentum(problem.g0, problem.mu0) - TOP.angular_momentum(TOP.q0, p0)[2]) <= 1e-15


def test_reference_solution_is_a_steady_precession_of_the_director_model() -> None:
    """Along the DOP853 reference on SO(3): g(q) = 0 (so φ = ℓd₃), G(q)M⁻¹p = 0, φ₃ = ℓ cos α₀ = 0.0375,
    H and L₃ of the director model constant, L₃ equal to the SO(3) Noether momentum."""
    times = np.linspace(0.0, 0.3, 7)
    qs, ps, noether = _director_history(TOP, times)
    constraint, group = TOP.constraint(), TOP.system().group
    H0, L0 = 5.66905519063295, TOP.angular_momentum(TOP.q0, TOP.problem().mu0)[2]
    for q, p, n in zip(qs, ps, noether):
        v = np.linalg.solve(TOP.mass_matrix(), p)
        assert float(np.max(np.abs(constraint.value(q)))) <= 1e-11
        assert float(np.max(np.abs(q[:3] - TOP.ell * q[9:]))) <= 1e-12
        assert float(np.max(np.abs(constraint.trivialised_jacobian(group, q) @ v))) <= 1e-9
        assert abs(q[2] - 0.0375) <= 1e-11
        assert abs(TOP.energy(q, p) - H0) <= 1e-10 * H0
        assert abs(TOP.angular_momentum(q, p)[2] - L0) <= 1e-12
        assert abs(TOP.angular_momentum(q, p)[2] - n) <= 1e-12


def test_a_wrong_spin_rate_does_not_precess_steadily() -> None:
    """Negative control for the steady-height check: with ω_s + 1 the height leaves 0.0375."""
    heavy = TOP.equivalent_top()
    body = heavy.omega0 + np.array([0.0, 0.0, 1.0])
    perturbed = type(heavy)(inertia=heavy.inertia, chi=heavy.chi, mg=heavy.mg, rotation0=heavy.rotation0,
                            omega0=body)
    rotations, _ = perturbed.reference(np.array([0.0, 0.1]))
    assert abs(TOP.ell * rotations[-1][2, 2] - 0.0375) >= 1e-6
