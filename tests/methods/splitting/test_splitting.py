"""Splitting and composition methods (``lm.Splitting``): the coefficients' order conditions on a
linear problem, the measured orders of every composition on the heavy top (SO(3)), on a rigid body
on SE(3), on a planar body on SE(2) and on Hénon–Heiles (Rⁿ) against independent DOP853 references
written here, the exact free flows (SE(3), SE(2), SO(2)), products and powers of groups against
their bodies run one by one, symplecticity, bounded energy over long runs, momentum maps to
round-off, and the refusals, each by name."""

import functools
from collections.abc import Callable
from typing import cast

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from scipy.integrate import solve_ivp

import liemech as lm
from liemech.methods.splitting.coefficients import SEQUENCES
from liemech.systems import CartesianPendulum, NonholonomicParticle
from liemech.systems.heavy_top import HeavyTop
from liemech.systems.henon_heiles import HenonHeiles
from liemech.testing import (
    estimate_order,
    one_step_jacobian,
    random_variations,
    step_map,
    symplecticity_defect,
)
from liemech.types import Matrix, Vector
from tests.perturbation import Perturbation

TOLERANCE = 0.3  # fitted slope within ± this of the nominal order
ASYMMETRIC_TOP = HeavyTop()  # 𝕀 = diag(1, 2, 3.5): the free flow is split (Dullweber et al. 1997)
AXISYMMETRIC_TOP = HeavyTop(inertia=np.diag([1.0, 1.0, 3.5]), chi=np.array([0.0, 0.0, 0.6]))  # a Lagrange top: exact free flow
HENON_HEILES = HenonHeiles()
EXACT_FREE_FLOW_ONLY = ("blanes_moan_s6", "blanes_moan_srkn6")


def max_error(a: object, b: object) -> float:
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in
               zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


# ---- the coefficients ----------------------------------------------------------------------------


@pytest.mark.parametrize("composition", lm.SPLITTING_COMPOSITIONS)
def test_coefficients_have_their_order_on_a_linear_problem(composition: lm.SplittingComposition) -> None:
    """Ψ_h = Π exp(b h B) exp(a h A) against exp(h(A + B)) for random 6×6 A, B (nothing commutes):
    the local error is O(h^{p+1}); the sequence is consistent and palindromic."""
    sequence = SEQUENCES[composition]
    kicks, frees = sequence.kicks, sequence.frees
    assert kicks.sum() == pytest.approx(1.0, abs=1e-14) and frees.sum() == pytest.approx(1.0, abs=1e-14)
    assert np.allclose(kicks, kicks[::-1], rtol=0.0, atol=1e-15)
    assert np.allclose(frees, frees[::-1], rtol=0.0, atol=1e-15)
    rng = np.random.default_rng(7)
    A, B = rng.normal(size=(6, 6)), rng.normal(size=(6, 6))
    steps = {"yoshida8": [0.07, 0.05, 0.035], "kahan_li8": [0.14, 0.1, 0.07]}.get(composition, [0.1, 0.05, 0.025])
    errors = []
    for h in steps:
        M = scipy.linalg.expm(kicks[0] * h * B)
        for a, b in zip(frees, kicks[1:], strict=True):
            M = scipy.linalg.expm(b * h * B) @ scipy.linalg.expm(a * h * A) @ M
        errors.append(float(np.max(np.abs(M - scipy.linalg.expm(h * (A + B))))))
    slope = estimate_order(steps, errors).slope
    assert abs(slope - (sequence.order + 1)) <= TOLERANCE, (composition, slope, errors)


def test_traits_and_names() -> None:
    for composition in lm.SPLITTING_COMPOSITIONS:
        method = lm.Splitting(composition)
        assert method.name == f"Splitting({composition!r})"
        assert method.traits == lm.Traits(order=SEQUENCES[composition].order, symplectic=True,
                                          conserves_energy=False, conserves_momentum_maps=True)
    assert lm.Splitting().composition == "strang"
    assert [lm.Splitting(c).traits.order for c in lm.SPLITTING_COMPOSITIONS] == [2, 4, 4, 4, 4, 4, 6, 6, 8, 8]


# ---- measured orders -----------------------------------------------------------------------------


def euler_poisson(top: HeavyTop, T: float) -> Vector:
    """(μ(T), Γ(T)) of μ̇ = μ × ω + mg Γ × χ, Γ̇ = Γ × ω, ω = 𝕀⁻¹μ (Γ = Rᵀe₃), DOP853 at rtol 1e-13."""
    inverse = np.linalg.inv(top.inertia)

    def rhs(t: float, y: Vector) -> Vector:
        mu, gamma = y[:3], y[3:]
        omega = inverse @ mu
        return np.concatenate([np.cross(mu, omega) + top.mg * np.cross(gamma, top.chi), np.cross(gamma, omega)])

    problem = top.problem()
    y0 = np.concatenate([problem.mu0, problem.g0[2]])
    solution = solve_ivp(rhs, (0.0, T), y0, method="DOP853", rtol=1e-13, atol=1e-15)
    assert solution.success
    return np.asarray(solution.y[:, -1], dtype=np.float64)


@pytest.fixture(scope="module")
def top_references() -> dict[str, Vector]:
    return {"asymmetric": euler_poisson(ASYMMETRIC_TOP, 2.0), "axisymmetric": euler_poisson(AXISYMMETRIC_TOP, 2.0)}


TOP_STEPS: dict[int, list[int]] = {2: [20, 40, 80, 160], 4: [20, 40, 80, 160], 6: [10, 14, 20, 28, 40], 8: [10, 14, 20, 28]}
TOP_STEPS_BY_NAME: dict[str, list[int]] = {"kahan_li6": [8, 10, 14, 20, 28], "kahan_li8": [6, 8, 10, 14],
                                           "blanes_moan_srkn6": [14, 20, 28, 40, 80]}


@pytest.mark.parametrize("composition", lm.SPLITTING_COMPOSITIONS)
def test_order_on_the_heavy_top(composition: lm.SplittingComposition, top_references: dict[str, Vector]) -> None:
    """Errors in (μ, Γ = Rᵀe₃) at T = 2 against Euler–Poisson; the splittings of Blanes & Moan run on
    the axisymmetric top (they need the exact free flow), the compositions on the asymmetric one."""
    exact = composition in EXACT_FREE_FLOW_ONLY
    top = AXISYMMETRIC_TOP if exact else ASYMMETRIC_TOP
    reference = top_references["axisymmetric" if exact else "asymmetric"]
    method = lm.Splitting(composition)
    counts = TOP_STEPS_BY_NAME.get(composition, TOP_STEPS[method.traits.order])
    errors = []
    for n in counts:
        sol = lm.integrate(top.problem(), method, h=2.0 / n, n_steps=n)
        errors.append(max(max_error(sol.mu[-1], reference[:3]), max_error(sol.g[-1][2], reference[3:])))
    fit = estimate_order([2.0 / n for n in counts], errors, plateau=1e-12, min_points=len(counts))
    assert abs(fit.slope - method.traits.order) <= TOLERANCE, (composition, fit, errors)


HH_STEPS: dict[int, list[int]] = {2: [40, 56, 80, 160], 4: [40, 56, 80, 160], 6: [28, 40, 56, 80], 8: [56, 80, 112, 160]}


@pytest.fixture(scope="module")
def henon_heiles_reference() -> tuple[Vector, Vector]:
    q, p = HENON_HEILES.reference(np.array([10.0]))
    return q[-1], p[-1]


@pytest.mark.parametrize("composition", lm.SPLITTING_COMPOSITIONS)
def test_order_on_henon_heiles(composition: lm.SplittingComposition,
                               henon_heiles_reference: tuple[Vector, Vector]) -> None:
    method = lm.Splitting(composition)
    counts = [14, 20, 28, 40] if composition == "kahan_li8" else HH_STEPS[method.traits.order]
    errors = []
    for n in counts:
        sol = lm.integrate(HENON_HEILES.problem(), method, h=10.0 / n, n_steps=n)
        errors.append(max(max_error(sol.g[-1], henon_heiles_reference[0]), max_error(sol.mu[-1], henon_heiles_reference[1])))
    fit = estimate_order([10.0 / n for n in counts], errors, plateau=1e-12, min_points=len(counts))
    assert abs(fit.slope - method.traits.order) <= TOLERANCE, (composition, fit, errors)


def test_strang_is_stormer_verlet_on_rn() -> None:
    """On Rⁿ "strang" is p ← p − h/2 ∇V(q), q ← q + h M⁻¹p, p ← p − h/2 ∇V(q), step by step."""
    h, n = 0.1, 30
    sol = lm.integrate(HENON_HEILES.problem(), lm.Splitting(), h=h, n_steps=n)
    q, p = HENON_HEILES.q0.copy(), HENON_HEILES.p0.copy()
    for _ in range(n):
        p = p - 0.5 * h * HENON_HEILES.gradient(q)
        q = q + h * p
        p = p - 0.5 * h * HENON_HEILES.gradient(q)
    assert max_error(sol.g[-1], q) <= 1e-14 and max_error(sol.mu[-1], p) <= 1e-14
    assert np.all(sol.stats.iterations == 0) and np.all(sol.stats.residuals == 0.0)
    assert max_error(sol.eta, sol.mu) == 0.0  # η = 𝕀⁻¹μ with 𝕀 = I


# ---- SE(3), products and powers ----------------------------------------------------------------

SPRING_POINT = np.array([0.3, -0.2, 0.5])  # a body point c tied to the origin by a spring
SE3_INERTIA = np.diag([1.5, 1.5, 1.5, 1.0, 2.0, 3.5])  # diag(m I₃, J), ξ = (v, ω)


def spring_potential(g: jax.Array) -> jax.Array:
    """V = ½k|x + Rc|² + m g_z x₃ with k = 2, m g_z = 1.2: rotation and translation coupled."""
    R, x = g[:3, :3], g[:3, 3]
    y = x + R @ jnp.asarray(SPRING_POINT)
    return 0.5 * 2.0 * (y @ y) + 1.2 * x[2]


def spring_rhs(t: float, y: Vector) -> Vector:
    """R (row-major), x, p_v, p_ω: Ṙ = Rω̂, ẋ = Rv, ṗ_v = p_v × ω − ∇_vV, ṗ_ω = p_v × v + p_ω × ω − ∇_ωV,
    with ∇V = (Rᵀ(k y + m g_z e₃), k c × Rᵀy), y = x + Rc."""
    R, x, p_v, p_w = y[:9].reshape(3, 3), y[9:12], y[12:15], y[15:]
    v, w = p_v / 1.5, p_w / np.array([1.0, 2.0, 3.5])
    spring = x + R @ SPRING_POINT
    grad_v = R.T @ (2.0 * spring + np.array([0.0, 0.0, 1.2]))
    grad_w = 2.0 * np.cross(SPRING_POINT, R.T @ spring)
    w_hat = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    return np.concatenate([(R @ w_hat).ravel(), R @ v, np.cross(p_v, w) - grad_v,
                           np.cross(p_v, v) + np.cross(p_w, w) - grad_w])


@pytest.fixture(scope="module")
def rigid_body_on_se3() -> lm.Problem[Matrix]:
    g0 = np.eye(4)
    g0[:3, :3] = ASYMMETRIC_TOP.problem().g0
    g0[:3, 3] = [0.5, 0.1, -0.3]
    return lm.Problem(lm.MechanicalSystem(lm.SE3(), SE3_INERTIA, spring_potential), g0,
                      np.array([0.2, -0.1, 0.4, 0.8, -0.4, 1.1]))


@pytest.mark.parametrize("composition", ["strang", "kahan_li6"])
def test_order_on_se3(composition: lm.SplittingComposition, rigid_body_on_se3: lm.Problem[Matrix]) -> None:
    problem, T = rigid_body_on_se3, 2.0
    y0 = np.concatenate([problem.g0[:3, :3].ravel(), problem.g0[:3, 3], problem.mu0])
    ref = solve_ivp(spring_rhs, (0.0, T), y0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
    method = lm.Splitting(composition)
    counts = [20, 40, 80] if composition == "strang" else [10, 14, 20, 28]
    errors = []
    for n in counts:
        sol = lm.integrate(problem, method, h=T / n, n_steps=n)
        g, mu = sol.g[-1], sol.mu[-1]
        errors.append(max(max_error(g[:3, :3].ravel(), ref[:9]), max_error(g[:3, 3], ref[9:12]), max_error(mu, ref[12:])))
    fit = estimate_order([T / n for n in counts], errors, plateau=1e-12, min_points=len(counts))
    assert abs(fit.slope - method.traits.order) <= TOLERANCE, (composition, fit, errors)


def product_of_power_and_rn() -> lm.Problem[tuple[Matrix, Vector]]:
    """ProductGroup(PowerGroup(SO3(), 2), Rn(2)): an asymmetric top, an axisymmetric one and
    Hénon–Heiles, uncoupled (block-diagonal 𝕀, V a sum)."""
    tops = (ASYMMETRIC_TOP, AXISYMMETRIC_TOP)
    group = lm.ProductGroup(lm.PowerGroup(lm.SO3(), 2), lm.Rn(2))

    def potential(g: tuple[Matrix, Vector]) -> jax.Array:
        R, q = g
        return tops[0].potential(R[0]) + tops[1].potential(R[1]) + HENON_HEILES.potential(q)

    inertia = scipy.linalg.block_diag(tops[0].inertia, tops[1].inertia, np.eye(2))
    g0 = (np.stack([top.problem().g0 for top in tops]), HENON_HEILES.q0)
    mu0 = np.concatenate([tops[0].problem().mu0, tops[1].problem().mu0, HENON_HEILES.p0])
    return lm.Problem(lm.MechanicalSystem(group, inertia, potential), g0, mu0=mu0)


@pytest.mark.parametrize("composition", ["mclachlan4"])
def test_products_and_powers_run_body_by_body(composition: lm.SplittingComposition) -> None:
    """A power group's bodies (one asymmetric, split; one axisymmetric, exact, vectorised together)
    and a product's factors move as each alone, to round-off."""
    method, h, n = lm.Splitting(composition), 0.05, 60
    together = lm.integrate(product_of_power_and_rn(), method, h=h, n_steps=n)
    rotations, positions = together.g
    alone = [lm.integrate(problem, method, h=h, n_steps=n) for problem in
             (ASYMMETRIC_TOP.problem(), AXISYMMETRIC_TOP.problem(), HENON_HEILES.problem())]
    assert max_error(rotations[:, 0], alone[0].g) <= 1e-13 and max_error(rotations[:, 1], alone[1].g) <= 1e-13
    assert max_error(positions, alone[2].g) <= 1e-13
    assert max_error(together.mu, np.concatenate([sol.mu for sol in alone], axis=1)) <= 1e-13


def test_a_rotated_body_frame_gives_the_same_motion() -> None:
    """The asymmetric top described in body axes turned by Q (𝕀' = Q𝕀Qᵀ non-diagonal, χ' = Qχ,
    R' = RQᵀ, μ' = Qμ) moves as before: the split free flow works in the principal axes of 𝕀', so
    R'(t) = R(t)Qᵀ and μ'(t) = Qμ(t) to round-off."""
    Q = np.asarray(scipy.linalg.expm(np.array([[0.0, -0.4, 0.3], [0.4, 0.0, -0.7], [-0.3, 0.7, 0.0]])))
    turned = HeavyTop(inertia=Q @ ASYMMETRIC_TOP.inertia @ Q.T, chi=Q @ ASYMMETRIC_TOP.chi)
    original = ASYMMETRIC_TOP.problem()
    problem = lm.Problem(turned.system(), original.g0 @ Q.T, mu0=Q @ original.mu0)
    method, h, n = lm.Splitting("yoshida4"), 0.05, 100
    before, after = lm.integrate(original, method, h=h, n_steps=n), lm.integrate(problem, method, h=h, n_steps=n)
    assert max_error(after.g, before.g @ Q.T) <= 1e-13
    assert max_error(after.mu, before.mu @ Q.T) <= 1e-13
    assert max_error(after.eta, after.mu @ np.linalg.inv(turned.inertia).T) <= 1e-13


def free_body_rhs(mass: float, inertia: Matrix) -> Callable[[float, Vector], Vector]:
    """The free rigid body on SE(3): Ṙ = Rω̂, ẋ = Rv, ṗ_v = p_v × ω, ṗ_ω = p_v × v + p_ω × ω."""
    inverse = np.linalg.inv(inertia)

    def rhs(t: float, y: Vector) -> Vector:
        R, p_v, p_w = y[:9].reshape(3, 3), y[12:15], y[15:]
        v, w = p_v / mass, inverse @ p_w
        w_hat = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        return np.concatenate([(R @ w_hat).ravel(), R @ v, np.cross(p_v, w), np.cross(p_v, v) + np.cross(p_w, w)])

    return rhs


def test_free_flow_is_exact_for_axisymmetric_and_spherical_bodies() -> None:
    """With V = 0, one Strang step of any size is the exact free flow of an axisymmetric and of a
    spherical body on SE(3) (a power group of the two, 𝕀 with a non-diagonal J in the first)."""
    Q = ASYMMETRIC_TOP.problem().g0  # a rotation taking the principal axes off the body axes
    bodies = [(2.0, Q @ np.diag([1.0, 1.0, 2.5]) @ Q.T), (0.5, 1.5 * np.eye(3))]
    inertia = scipy.linalg.block_diag(*(scipy.linalg.block_diag(m * np.eye(3), J) for m, J in bodies))
    g0 = np.stack([np.eye(4), np.eye(4)])
    g0[0, :3, :3], g0[1, :3, 3] = Q.T, [0.3, -0.2, 0.1]
    mu0 = np.array([0.4, -0.3, 0.2, 0.9, -0.5, 1.3, -0.2, 0.1, 0.5, 0.3, 0.7, -0.6])
    problem = lm.Problem(lm.MechanicalSystem(lm.PowerGroup(lm.SE3(), 2), inertia, _zero_potential), g0, mu0=mu0)
    T = 3.0
    sol = lm.integrate(problem, lm.Splitting("strang"), h=T, n_steps=1)
    for k, (mass, J) in enumerate(bodies):
        y0 = np.concatenate([g0[k, :3, :3].ravel(), g0[k, :3, 3], mu0[6 * k:6 * k + 6]])
        ref = solve_ivp(free_body_rhs(mass, J), (0.0, T), y0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
        g = sol.g[-1, k]
        assert max(max_error(g[:3, :3].ravel(), ref[:9]), max_error(g[:3, 3], ref[9:12]),
                   max_error(sol.mu[-1, 6 * k:6 * k + 6], ref[12:])) <= 1e-11, k


# ---- planar bodies: SO(2) and SE(2) ---------------------------------------------------------------

PLANAR_MASS, PLANAR_MOMENT = 2.0, 0.7
PLANAR_INERTIA = np.diag([PLANAR_MASS, PLANAR_MASS, PLANAR_MOMENT])  # se(2): ξ = (v₁, v₂, ω)
SPRING, ANCHOR, ATTACHED, TWIST = 3.0, np.array([0.4, -0.2]), np.array([0.5, 0.1]), 0.8


def plane_rotation(theta: jax.Array) -> jax.Array:
    c, s = jnp.cos(theta), jnp.sin(theta)
    return jnp.array([[c, -s], [s, c]])


def planar_spring_potential(g: Matrix) -> jax.Array:
    """V = ½k|x + R a − p|² + c(1 − cos θ): a spring from the body point a to the anchor p, and a
    torsion spring (the body turns and translates together, nonlinearly)."""
    x, R = jnp.asarray(g[:2, 2]), jnp.asarray(g[:2, :2])
    d = x + R @ jnp.asarray(ATTACHED) - jnp.asarray(ANCHOR)
    return 0.5 * SPRING * d @ d + TWIST * (1.0 - R[0, 0])


def planar_spring_rhs(t: float, y: Vector) -> Vector:
    """Newton–Euler in the plane, y = (θ, x, v, ω) with v the spatial velocity of the centre:
    m v̇ = −∂V/∂x = −k d, J ω̇ = −∂V/∂θ = −k ⟨d, R′(θ)a⟩ − c sin θ with d = x + R(θ)a − p."""
    theta, x, v, omega = y[0], y[1:3], y[3:5], y[5]
    c, s = np.cos(theta), np.sin(theta)
    Ra = np.array([c * ATTACHED[0] - s * ATTACHED[1], s * ATTACHED[0] + c * ATTACHED[1]])
    dRa = np.array([-Ra[1], Ra[0]])  # R′(θ)a = J₂ R a
    d = x + Ra - ANCHOR
    torque = -SPRING * d @ dRa - TWIST * np.sin(theta)
    return np.concatenate([[omega], v, -SPRING * d / PLANAR_MASS, [torque / PLANAR_MOMENT]])


@functools.cache
def planar_body() -> lm.Problem[Matrix]:
    """One problem (one system) for every test here: its compiled steps are kept with the system."""
    g0 = np.eye(3)
    g0[:2, :2], g0[:2, 2] = np.asarray(plane_rotation(jnp.asarray(0.3))), [0.2, 0.5]
    return lm.Problem(lm.MechanicalSystem(lm.SE2(), PLANAR_INERTIA, planar_spring_potential), g0,
                      mu0=np.array([0.6, -0.4, 0.9]))


def planar_state(g: Matrix, mu: Vector) -> Vector:
    """(θ, x, v, ω) of a node: v = R p_v/m (spatial), ω = p_ω/J."""
    return np.concatenate([[np.arctan2(g[1, 0], g[0, 0])], g[:2, 2], g[:2, :2] @ mu[:2] / PLANAR_MASS,
                           [mu[2] / PLANAR_MOMENT]])


@pytest.mark.parametrize("composition", ["strang", "mclachlan4"])
def test_order_on_se2(composition: lm.SplittingComposition) -> None:
    """A planar body on springs on SE(2), errors in (θ, x, v, ω) at T = 2 against Newton–Euler by
    DOP853 at rtol 1e-13."""
    problem, T = planar_body(), 2.0
    y0 = planar_state(problem.g0, problem.mu0)
    ref = solve_ivp(planar_spring_rhs, (0.0, T), y0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
    method = lm.Splitting(composition)
    counts = [20, 40, 80, 160]
    errors = []
    for n in counts:
        sol = lm.integrate(problem, method, h=T / n, n_steps=n)
        errors.append(max_error(planar_state(sol.g[-1], sol.mu[-1]), ref))
    fit = estimate_order([T / n for n in counts], errors, plateau=1e-12, min_points=len(counts))
    assert abs(fit.slope - method.traits.order) <= TOLERANCE, (composition, fit, errors)


def planar_free_rhs(group: lm.LieGroup[Matrix], inertia: Matrix) -> Callable[[float, Vector], Vector]:
    """The Euler–Poincaré and reconstruction equations μ̇ = ad_ηᵀ μ, ġ = g η̂, η = 𝕀⁻¹μ, from the
    group's own ad and hat (linear in η: taken on the basis once; y = (g flattened, μ))."""
    size, inverse = group.identity().shape[0], np.linalg.inv(inertia)
    basis = np.eye(group.dim)
    hats = np.stack([np.asarray(group.hat(e)) for e in basis])
    ads = np.stack([np.asarray(group.ad(e)) for e in basis])

    def rhs(t: float, y: Vector) -> Vector:
        g, mu = y[:size * size].reshape(size, size), y[size * size:]
        eta = inverse @ mu
        return np.concatenate([(g @ np.tensordot(eta, hats, 1)).ravel(), np.tensordot(eta, ads, 1).T @ mu])

    return rhs


def test_planar_free_flow_is_exact() -> None:
    """With V = 0, one Strang step of any size is the exact free flow on SE(2) (𝕀 = diag(m, m, J):
    the centre on a straight line, ω constant) and on SO(2), for two bodies of a power group each,
    against the Euler–Poincaré equations written with the group's ad."""
    T = 3.0
    cases: list[tuple[lm.LieGroup[Matrix], list[Matrix], Vector]] = [
        (lm.SE2(), [np.diag([2.0, 2.0, 0.7]), np.diag([0.5, 0.5, 1.9])], np.array([0.6, -0.4, 0.9, -0.3, 0.8, -1.2])),
        (lm.SO2(), [np.array([[0.7]]), np.array([[1.9]])], np.array([0.9, -1.2])),
    ]
    for body, inertias, mu0 in cases:
        rng = np.random.default_rng(5)
        g0 = np.stack([body.random_point(rng) for _ in inertias])
        problem = lm.Problem(lm.MechanicalSystem(lm.PowerGroup(body, 2), scipy.linalg.block_diag(*inertias),
                                                 _zero_potential), g0, mu0=mu0)
        sol = lm.integrate(problem, lm.Splitting("strang"), h=T, n_steps=1)
        d = body.dim
        for k, inertia in enumerate(inertias):
            y0 = np.concatenate([g0[k].ravel(), mu0[d * k:d * k + d]])
            ref = solve_ivp(planar_free_rhs(body, inertia), (0.0, T), y0, method="DOP853", rtol=1e-13,
                            atol=1e-15).y[:, -1]
            assert max_error(np.concatenate([sol.g[-1, k].ravel(), sol.mu[-1, d * k:d * k + d]]), ref) <= 1e-11


@pytest.mark.long_run
def test_energy_bounded_on_se2_and_so2(perturb: Perturbation) -> None:
    """2·10⁴ steps (T = 2000) of the planar body on springs (SE(2)) and of a pendulum on SO(2) with
    Strang: the energy error stays at its O(h²) size, without drift; a pendulum's angle matches
    Störmer–Verlet on the angle."""
    problem = perturb.problem(planar_body())
    sol = lm.integrate(problem, lm.Splitting("strang"), h=0.1, n_steps=20_000, store_every=10)
    inverse = np.linalg.inv(PLANAR_INERTIA)
    potential = np.asarray(jax.vmap(planar_spring_potential)(sol.g))
    energy = 0.5 * np.einsum("ki,ij,kj->k", sol.mu, inverse, sol.mu) + potential
    error = np.abs(energy - energy[0])
    tenth = error.size // 10
    assert error.max() <= 5e-2 * abs(energy[0]) and error[-tenth:].max() <= 1.5 * error[:tenth].max(), error.max()

    def pendulum(g: Matrix) -> jax.Array:
        return -jnp.cos(jnp.arctan2(g[1, 0], g[0, 0])) * 2.0  # V = −2 cos θ

    moment, h, n = 0.5, 0.1, 5000
    theta0, omega0 = (float(x) for x in perturb([1.2, 0.4]))
    g0 = np.asarray(plane_rotation(jnp.asarray(theta0)))
    sol = lm.integrate(lm.Problem(lm.MechanicalSystem(lm.SO2(), np.array([[moment]]), pendulum), g0,
                                  mu0=np.array([moment * omega0])), lm.Splitting("strang"), h=h, n_steps=n)
    theta, p = theta0, moment * omega0  # Störmer–Verlet on (θ, p): kick, drift, kick
    for _ in range(n):
        p -= 0.5 * h * 2.0 * np.sin(theta)
        theta += h * p / moment
        p -= 0.5 * h * 2.0 * np.sin(theta)
    assert abs(np.arctan2(sol.g[-1, 1, 0], sol.g[-1, 0, 0]) - np.angle(np.exp(1j * theta))) <= 1e-9
    assert abs(sol.mu[-1, 0] - p) <= 1e-9
    energy = 0.5 * sol.mu[:, 0] ** 2 / moment - 2.0 * sol.g[:, 0, 0]
    assert np.ptp(energy) <= 2e-2 and np.ptp(energy[-500:]) <= 1.5 * np.ptp(energy[:500])


# ---- structure -----------------------------------------------------------------------------------


@pytest.mark.parametrize("composition", ["strang", "blanes_moan_srkn6", "kahan_li8"])
def test_symplectic_on_henon_heiles(composition: lm.SplittingComposition) -> None:
    rng = np.random.default_rng(3)
    psi = step_map(HENON_HEILES.problem(), lm.Splitting(composition), 0.2)
    J = one_step_jacobian(psi, np.array([0.1, -0.2, 0.3, 0.1]))
    assert symplecticity_defect(J, random_variations(4, 6, rng)) <= 1e-12


def _left_trivialised_form(mu: Vector) -> Matrix:
    """W with ω(v₁, v₂) = v₁ᵀ W v₂ for the canonical form on T*SO(3) ≅ SO(3) × R³ at momentum μ, in
    left-trivialised variations v = (ζ, ν) (R exp(εζ̂), μ + εν): ω = −dθ of θ(ζ, ν) = ⟨μ, ζ⟩ gives
    ω(v₁, v₂) = ⟨ν₂, ζ₁⟩ − ⟨ν₁, ζ₂⟩ + ⟨μ, ζ₁ × ζ₂⟩ (the bracket of left-invariant fields; with the
    opposite sign of that term the symplectic maps below show defects of 0.5)."""
    return np.block([[-np.asarray(lm.SO3().hat(mu)), np.eye(3)], [-np.eye(3), np.zeros((3, 3))]])


def _symplecticity_defect_on_so3(step: Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]],
                                 R0: Matrix, mu0: Vector) -> float:
    """max |DΨᵀ W(μ₁) DΨ − W(μ₀)| / max |W(μ₀)| for the map Ψ(R, μ) = (R₁, μ₁), DΨ in left-trivialised
    variations by forward mode (ζ₁ the skew part of R₁(0)ᵀR₁(z), exact to first order)."""
    exp = lm.SO3().retraction("exp")
    R1, mu1 = step(jnp.asarray(R0), jnp.asarray(mu0))

    def coordinates(z: jax.Array) -> jax.Array:
        R, mu = step(jnp.asarray(R0) @ jnp.asarray(exp.tau(z[:3])), jnp.asarray(mu0) + z[3:])
        D = R1.T @ R
        return jnp.concatenate([0.5 * jnp.stack([D[2, 1] - D[1, 2], D[0, 2] - D[2, 0], D[1, 0] - D[0, 1]]), mu])

    J = np.asarray(jax.jacfwd(coordinates)(jnp.zeros(6)))
    before = _left_trivialised_form(mu0)
    return float(np.max(np.abs(J.T @ _left_trivialised_form(np.asarray(mu1)) @ J - before)) / np.max(np.abs(before)))


@pytest.mark.parametrize("method", [lm.Splitting("strang"), lm.Splitting("kahan_li8"), lm.VPRK(lm.lobatto(3))],
                         ids=["strang", "kahan_li8", "Lobatto-3"])
def test_symplectic_on_the_asymmetric_top(method: lm.Method) -> None:
    """One step of the split free flow and kicks on T*SO(3) keeps the canonical form, to round-off,
    as VPRK's does (another family, symplectic by its construction); the map that turns R at
    ω = 𝕀⁻¹μ but keeps μ (no Euler equations; not a Hamiltonian flow) does not, by a defect of its
    size (the check can fail)."""
    problem = ASYMMETRIC_TOP.problem()
    h, inverse = 0.3, np.linalg.inv(ASYMMETRIC_TOP.inertia)
    final = lm.flow(problem, method, h=h, n_steps=1)

    def split(R: jax.Array, mu: jax.Array) -> tuple[jax.Array, jax.Array]:
        end = final(cast(Matrix, R), jnp.asarray(inverse) @ mu)  # traced: Flow takes JAX arrays too
        return jnp.asarray(end.g), end.mu

    def frozen_momentum(R: jax.Array, mu: jax.Array) -> tuple[jax.Array, jax.Array]:
        return R @ jnp.asarray(lm.SO3().retraction("exp").tau(h * jnp.asarray(inverse) @ mu)), mu

    assert _symplecticity_defect_on_so3(split, problem.g0, problem.mu0) <= 1e-13
    assert _symplecticity_defect_on_so3(frozen_momentum, problem.g0, problem.mu0) >= 1e-2


def test_a_step_first_built_inside_a_trace_runs_outside_it() -> None:
    """The step is kept with the system; built first inside a trace (as a flow or an ensemble
    builds it), it holds no traced value: a later run outside the trace takes the same path as on a
    system that never saw one (it raised UnexpectedTracerError when the coefficients were traced)."""
    method = lm.Splitting("kahan_li8")
    traced, fresh = HeavyTop(mg=1.25).problem(), HeavyTop(mg=1.25).problem()
    jax.jit(lambda x: (method.compiled_step(traced), x)[1])(0.0)
    after = lm.integrate(traced, method, h=0.1, n_steps=10)
    assert np.array_equal(after.mu, lm.integrate(fresh, method, h=0.1, n_steps=10).mu)


def test_differentiable_through_flow() -> None:
    """lm.flow runs the same step in one traceable scan: ∂q(T)/∂p₀ by forward mode agrees with
    central differences of the final state."""
    problem = HENON_HEILES.problem()
    final = lm.flow(problem, lm.Splitting("mclachlan4"), h=0.1, n_steps=50)
    def end(p0: jax.Array) -> jax.Array:
        return jnp.asarray(final(HENON_HEILES.q0, p0).g)

    p0 = jnp.asarray(HENON_HEILES.p0)
    jacobian = np.asarray(jax.jacfwd(end)(p0))
    delta = 1e-6
    columns = [(np.asarray(end(p0 + delta * e)) - np.asarray(end(p0 - delta * e))) / (2 * delta) for e in np.eye(2)]
    assert np.max(np.abs(jacobian - np.stack(columns, axis=1))) <= 1e-7


def test_differentiable_at_rest() -> None:
    """The asymmetric body's split free flow at rest: its spherical part turns R about μ = 0, where its
    rotation angle |μ|t/I₀ has no derivative. ∂R(T)/∂η₀ of a free body (V = 0) at η₀ = 0 is
    T·(R₀ ê_k)ᵀ for each η₀ = e_k (R(T) = R₀ exp(T η̂₀) to first order: the free flow of a body at rest
    does not turn it), against forward mode through the flow."""
    problem = lm.Problem(lm.MechanicalSystem(lm.SO3(), ASYMMETRIC_TOP.inertia, _zero_potential),
                         ASYMMETRIC_TOP.problem().g0, np.zeros(3))
    T = 0.6
    final = lm.flow(problem, lm.Splitting("yoshida4"), h=0.2, n_steps=3)
    jacobian = np.asarray(jax.jacfwd(lambda eta0: final(eta0=eta0).g)(jnp.zeros(3)))
    R0 = problem.g0
    expected = np.stack([T * R0 @ np.asarray(lm.SO3().hat(e)) for e in np.eye(3)], axis=-1)
    assert np.all(np.isfinite(jacobian)) and np.max(np.abs(jacobian - expected)) <= 1e-14


@pytest.mark.long_run
def test_momentum_maps_to_round_off(perturb: Perturbation) -> None:
    """The heavy top's ⟨μ, Rᵀe₃⟩ (left symmetry) with the split free flow, and the axisymmetric top's
    body μ₃ as well (right symmetry, χ on the axis) with the exact one, over 2000 steps: a random walk
    of round-off (|μ| ≈ 2; up to 17 kicks and 85 rotations per step)."""
    compositions: tuple[lm.SplittingComposition, ...] = ("strang", "kahan_li8")
    for composition in compositions:
        sol = lm.integrate(perturb.problem(ASYMMETRIC_TOP.problem()), lm.Splitting(composition), h=0.05, n_steps=2000)
        vertical = np.einsum("ki,ki->k", sol.mu, sol.g[:, 2])
        assert np.ptp(vertical) <= 5e-13, composition
    exact: tuple[lm.SplittingComposition, ...] = ("strang", "blanes_moan_s6")
    for composition in exact:
        sol = lm.integrate(perturb.problem(AXISYMMETRIC_TOP.problem()), lm.Splitting(composition), h=0.05,
                           n_steps=2000)
        assert np.ptp(np.einsum("ki,ki->k", sol.mu, sol.g[:, 2])) <= 5e-13, composition
        assert np.ptp(sol.mu[:, 2]) <= 5e-13, composition


def top_energy(sol: lm.Solution[Matrix]) -> Vector:
    inverse = np.linalg.inv(ASYMMETRIC_TOP.inertia)
    kinetic = 0.5 * np.einsum("ki,ij,kj->k", sol.mu, inverse, sol.mu)
    return np.asarray(kinetic + ASYMMETRIC_TOP.mg * sol.g[:, 2] @ ASYMMETRIC_TOP.chi, dtype=np.float64)


@pytest.mark.long_run
def test_energy_bounded_on_the_heavy_top(perturb: Perturbation) -> None:
    """5·10⁴ steps (T = 2500) of Strang and of McLachlan's order-4 composition: the energy error stays
    at its O(hᵖ) size, without drift: the second half of the run is no worse than the first (a drift
    would double it). Halves, not tenths: the chaotic top takes longer than a tenth of the run to
    reach the whole range of its error (McLachlan's: 4e-8 in the first tenth, 6–9e-8 in each later
    one, and the same 8–10e-8 in every tenth of a run 8 times longer)."""
    runs: tuple[tuple[lm.SplittingComposition, float], ...] = (("strang", 2e-3), ("mclachlan4", 1e-6))
    for composition, bound in runs:
        sol = lm.integrate(perturb.problem(ASYMMETRIC_TOP.problem()), lm.Splitting(composition), h=0.05, n_steps=50_000,
                           store_every=50)
        error = np.abs(top_energy(sol) - top_energy(sol)[0])
        half = error.size // 2
        assert error.max() <= bound, composition
        assert error[half:].max() <= 1.5 * error[:half].max(), composition


def _three_bodies() -> tuple[lm.Problem[Matrix], list[Matrix], Callable[[jax.Array], jax.Array]]:
    """Three asymmetric rigid bodies on PowerGroup(SO3(), 3) tied by V = Σ k(3 − tr RᵢᵀRⱼ), which
    turning them all together leaves alone: the total spatial angular momentum Σ Rᵢμᵢ is conserved."""
    inertias = [np.diag([1.0, 2.0, 3.5]), np.diag([0.6, 1.1, 1.4]), np.diag([2.0, 2.5, 4.0])]

    def potential(R: jax.Array) -> jax.Array:
        return sum((1.5 * (3.0 - jnp.trace(R[i].T @ R[j])) for i, j in ((0, 1), (1, 2), (0, 2))), jnp.zeros(()))

    rng = np.random.default_rng(5)
    R0 = np.stack([np.asarray(scipy.linalg.expm(np.asarray(lm.SO3().hat(rng.normal(scale=0.6, size=3)))))
                   for _ in range(3)])
    system = lm.MechanicalSystem(lm.PowerGroup(lm.SO3(), 3), scipy.linalg.block_diag(*inertias), potential)
    return lm.Problem(system, R0, mu0=rng.normal(size=9)), inertias, potential


@pytest.mark.long_run
def test_three_tied_bodies_over_a_long_run(perturb: Perturbation) -> None:
    """Three asymmetric bodies tied by springs between their orientations (a system of no paper),
    McLachlan's order-4 composition, h = 0.05, T = 1000 (2·10⁴ steps, every split free flow
    vectorised over the bodies): the energy error stays at its O(h⁴) size (measured 3.1e-5 of
    E = 10.7) without drift (second half 2.8e-5 against 3.1e-5 in the first), and the total angular
    momentum Σ Rᵢμᵢ, which every kick and every rotation keeps, to round-off (measured 8.6e-12)."""
    problem, inertias, potential = _three_bodies()
    problem = perturb.problem(problem)
    sol = lm.integrate(problem, lm.Splitting("mclachlan4"), h=0.05, t_final=1000.0)
    mus = sol.mu.reshape(-1, 3, 3)
    kinetic = sum(0.5 * np.einsum("ki,ij,kj->k", mus[:, b], np.linalg.inv(J), mus[:, b]) for b, J in enumerate(inertias))
    energy = kinetic + np.asarray(jax.jit(jax.vmap(potential))(sol.g))
    error = np.abs(energy - energy[0])
    half = error.size // 2
    assert error.max() <= 1e-4 and error[half:].max() <= 1.5 * error[:half].max()
    momentum = np.einsum("kbij,kbj->ki", sol.g, mus)
    assert np.max(np.abs(momentum - momentum[0])) <= 1e-10


@pytest.mark.slow
@pytest.mark.long_run
def test_energy_bounded_over_a_million_steps(perturb: Perturbation) -> None:
    """Störmer–Verlet on Hénon–Heiles, 10⁶ steps of h = 0.05 (T = 5·10⁴), every 100th node stored:
    the energy error stays at its O(h²) size, without drift."""
    sol = lm.integrate(perturb.problem(HENON_HEILES.problem()), lm.Splitting("strang"), h=0.05, n_steps=1_000_000,
                       store_every=100)
    x, y = sol.g[:, 0], sol.g[:, 1]
    energy = 0.5 * np.sum(sol.mu**2, axis=1) + 0.5 * (x * x + y * y) + x * x * y - y**3 / 3.0
    error = np.abs(energy - energy[0])
    tenth = error.size // 10
    assert sol.t.size == 10_001 and error.max() <= 1e-4, error.max()
    assert error[-tenth:].max() <= 1.5 * error[:tenth].max()


# ---- refusals ------------------------------------------------------------------------------------


class _NotMechanical(lm.Lagrangian[Vector]):
    """ℓ = ½|η|² − ½|g|², written as a general Lagrangian."""

    @property
    def group(self) -> lm.LieGroup[Vector]:
        return lm.Rn(2)

    def lagrangian(self, g: Vector, eta: object) -> jax.Array:
        e = jnp.asarray(eta)
        return 0.5 * e @ e - 0.5 * jnp.asarray(g) @ jnp.asarray(g)

    def velocity(self, g: Vector, mu: lm.VectorLike) -> Vector:
        return jnp.asarray(mu, dtype=float)  # type: ignore[return-value]  # traced: velocity must be jax.numpy


def _zero_potential(g: object) -> jax.Array:
    return sum((0.0 * jnp.sum(jnp.asarray(leaf)) for leaf in jax.tree.leaves(g)), start=jnp.zeros(()))


def _on(group: lm.LieGroup[Matrix], inertia: Matrix | None = None) -> lm.Problem[Matrix]:
    M = np.eye(group.dim) if inertia is None else inertia
    return lm.Problem(lm.MechanicalSystem(group, M, _zero_potential), group.identity(),
                      np.zeros(group.dim))


def _coupled_se3() -> Matrix:
    M = np.eye(6)
    M[0, 4] = M[4, 0] = 0.3
    return M


REFUSALS: list[tuple[str, Callable[[], lm.Problem[Matrix]], str, type[Exception], str]] = [
    ("holonomic", lambda: CartesianPendulum().problem(), "strang", ValueError, "does not handle holonomic"),
    ("nonholonomic", lambda: NonholonomicParticle().problem(), "strang", ValueError, "does not handle nonholonomic"),
    ("force", lambda: lm.Problem(HENON_HEILES.system(), HENON_HEILES.q0, HENON_HEILES.p0,
                                 force=lambda q, v, t: -0.1 * v), "strang", ValueError, "does not take an external force"),
    ("callable inertia", lambda: lm.Problem(lm.MechanicalSystem(lm.Rn(2), lambda q: jnp.eye(2) * (2.0 + q[0] ** 2),
                                                                lambda q: q @ q), np.zeros(2), np.ones(2)),
     "strang", TypeError, "constant inertia matrix, got a configuration-dependent inertia"),
    ("not a MechanicalSystem", lambda: lm.Problem(_NotMechanical(), np.zeros(2), np.ones(2)), "strang", TypeError,
     "needs a MechanicalSystem with a constant inertia matrix, got a _NotMechanical"),
    ("power of a product", lambda: _on(lm.PowerGroup(lm.ProductGroup(lm.SO2(), lm.Rn(1)), 2)),  # type: ignore[arg-type]
     "strang", TypeError, r"no exact split of the free flow on PowerGroup\(ProductGroup\(SO2\(\), Rn\(1\)\), 2\)"),
    ("SE(2), coupled inertia", lambda: _on(lm.SE2(), np.eye(3) + 0.2 * (np.eye(3, k=2) + np.eye(3, k=-2))), "strang",
     ValueError, r"on SE\(2\) the free flow splits exactly only for an inertia diag\(m, m, J\) with ξ = \(v₁, v₂, ω\)"),
    ("SE(2), anisotropic mass", lambda: _on(lm.SE2(), np.diag([1.0, 2.0, 1.0])), "strang", ValueError,
     r"diag\(m, m, J\)"),
    ("SE(3), coupled inertia", lambda: _on(lm.SE3(), _coupled_se3()), "strang", ValueError,
     r"on SE\(3\) the free flow splits exactly only for an inertia diag\(m·I₃, J\)"),
    ("SE(3), anisotropic mass", lambda: _on(lm.SE3(), np.diag([1.0, 2.0, 1.0, 1.0, 1.0, 1.0])), "strang",
     ValueError, r"diag\(m·I₃, J\)"),
    ("product, coupled inertia", lambda: _on(lm.ProductGroup(lm.SO3(), lm.Rn(3)),  # type: ignore[arg-type]
                                            np.eye(6) + 0.1 * (np.eye(6, k=3) + np.eye(6, k=-3))),
     "strang", ValueError, "the inertia couples the factors of the product"),
    ("asymmetric body, Blanes–Moan", lambda: ASYMMETRIC_TOP.problem(), "blanes_moan_s6", ValueError,
     r"Splitting\('blanes_moan_s6'\) is a splitting method that needs the exact free flow"),
]


@pytest.mark.parametrize(("label", "problem", "composition", "error", "message"), REFUSALS,
                         ids=[refusal[0] for refusal in REFUSALS])
def test_refusals_name_the_method_and_the_reason(label: str, problem: Callable[[], lm.Problem[Matrix]],
                                                 composition: lm.SplittingComposition, error: type[Exception],
                                                 message: str) -> None:
    method = lm.Splitting(composition)
    with pytest.raises(error, match=message) as caught:
        method.check(problem())
    assert f"Splitting({composition!r})" in str(caught.value)
    with pytest.raises(error, match=message):
        lm.integrate(problem(), method, h=0.1, n_steps=1)


def test_unknown_composition_is_refused() -> None:
    with pytest.raises(ValueError, match=r"composition must be one of \('strang', 'yoshida4'.*got 'verlet'"):
        lm.Splitting("verlet")  # type: ignore[arg-type]
