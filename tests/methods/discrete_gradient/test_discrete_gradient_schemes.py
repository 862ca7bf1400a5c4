"""The Gonzalez discrete derivative and the energy-conserving Lagrange-multiplier scheme (Leyendecker,
Betsch & Steinmann 2004) on the spherical and double spherical pendulum, against exact identities,
a DOP853 reference and the first integrals."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.methods import NodeState
from liemech.methods.discrete_gradient.penalty import PenaltyEquations, PenaltyVariant
from liemech.numerics.discrete_derivative import discrete_derivative
from liemech.solvers.compiled_newton import Status
from liemech.systems.double_spherical_pendulum import DoubleSphericalPendulum
from liemech.systems.spherical_pendulum import SphericalPendulum
from liemech.testing import estimate_order
from liemech.testing.finite_differences import jacobian


def f_jnp(x: jax.Array) -> jax.Array:
    return jnp.sin(x[0]) * jnp.exp(x[1]) + x[0] ** 4


def test_traceable_discrete_derivative_is_directional_and_consistent() -> None:
    """``discrete_derivative``, which the compiled schemes use, for a scalar f and row by row for a
    vector-valued one: (i) D̄f(x, y)·(y − x) = f(y) − f(x); (ii) D̄f(x, y) − Df((x + y)/2) =
    O(|y − x|²); and D̄f(x, x) = Df(x) (the 0/0 guard)."""

    def F(x: jax.Array) -> jax.Array:
        return jnp.stack([f_jnp(x), x[0] * x[1] ** 3])

    D_bar = jax.jit(discrete_derivative, static_argnums=0)
    rng = np.random.default_rng(10)
    x = jnp.asarray(rng.normal(size=2))
    gaps = []
    for size in (1e-1, 5e-2, 2.5e-2):
        y = x + size * jnp.array([0.6, -0.8])
        w = 0.5 * (x + y)
        D, DF = D_bar(f_jnp, x, y), D_bar(F, x, y)
        assert abs(float(D @ (y - x)) - float(f_jnp(y) - f_jnp(x))) <= 1e-15
        assert np.max(np.abs(np.asarray(DF @ (y - x) - (F(y) - F(x))))) <= 1e-15
        gaps.append(float(jnp.max(jnp.abs(DF - jax.jacfwd(F)(w)))))
    assert abs(estimate_order([1e-1, 5e-2, 2.5e-2], gaps).slope - 2.0) <= 0.1
    assert np.array_equal(D_bar(f_jnp, x, x), jax.jit(jax.jacfwd(f_jnp))(x))
    assert np.array_equal(D_bar(F, x, x), jax.jit(jax.jacfwd(F))(x))


PENDULUM = DoubleSphericalPendulum()


def test_multiplier_scheme_conserves_energy_momentum_and_constraints() -> None:
    """Spec §I.9: H to ≤ 1e-12 relative, angular momentum about gravity ≤ 1e-13, g ≤ 1e-14."""
    problem = PENDULUM.problem()
    sol = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=0.01, n_steps=300)
    E = np.array([PENDULUM.energy(q, p) for q, p in zip(sol.g, sol.mu)])
    L = np.array([PENDULUM.angular_momentum(q, p) for q, p in zip(sol.g, sol.mu)])
    assert problem.holonomic is not None
    assert float(np.max(np.abs(E - E[0]))) <= 1e-12 * abs(E[0])
    assert abs(L[0]) > 0.1 and float(np.max(np.abs(L - L[0]))) <= 1e-13
    assert max(float(np.max(np.abs(problem.holonomic.value(q)))) for q in sol.g) <= 1e-14
    assert sol.lam is not None and sol.lam.shape == (301, 2)


@pytest.mark.parametrize("h", [0.05, 0.01])
@pytest.mark.parametrize("pendulum", [SphericalPendulum(), PENDULUM], ids=["spherical", "double spherical"])
def test_multiplier_scheme_solves_coarse_steps(pendulum: SphericalPendulum | DoubleSphericalPendulum,
                                               h: float) -> None:
    """200 steps at h = 0.05 and 0.01: every step converges in at most 6 iterations (EM-G takes 4–6),
    H is conserved to 1e-12 relative and g(q) = 0 to 1e-14. With the quotient of U alone, which the
    paper prints, the spherical pendulum's first Newton matrix was singular at both h and the double
    pendulum diverged at step 11 for h = 0.05."""
    problem = pendulum.problem()
    assert problem.holonomic is not None
    sol = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=h, n_steps=200)
    assert int(np.max(sol.stats.iterations)) <= 6
    E = np.array([pendulum.energy(q, p) for q, p in zip(sol.g, sol.mu)])
    assert float(np.max(np.abs(E - E[0]))) <= 1e-12 * abs(E[0])
    assert max(float(np.max(np.abs(problem.holonomic.value(q)))) for q in sol.g) <= 1e-14


def test_newton_matrix_is_regular_at_the_predictor() -> None:
    """The cause of the failure above: at the explicit predictor (q₀ + hM⁻¹p₀, p₀, λ₀) of the spherical
    pendulum (λ₀ = −1) a quotient without ⟨λ, g(q₁) − g(q₀)⟩ is λ₀/2 = −½ and cancels the ∂/∂p₁ block
    −M⁻¹/2 − S of the first rows; the whole quotient of U − ⟨λ, g⟩ vanishes there (U linear, g
    quadratic) and leaves the block at −½ (the scheme is EM-G's there)."""
    pendulum = SphericalPendulum()
    problem = pendulum.problem()
    assert problem.lam0 is not None and abs(float(problem.lam0[0]) + 1.0) <= 1e-15
    equations = lm.DiscreteGradientMultiplier().equations(problem)
    start = NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0)
    h = 0.05
    x = np.concatenate([problem.g0 + h * problem.mu0, problem.mu0, problem.lam0])
    J = np.asarray(jax.jacfwd(lambda y: equations.residual(y, start, h))(jnp.asarray(x)))
    assert np.max(np.abs(J[:3, 3:6] + 0.5 * np.eye(3))) <= 1e-12  # S at the round-off of its quotient
    assert np.linalg.cond(J) <= 1e5  # 1.6e4: the h⁻³ growth of the printed rows, not a singularity


@pytest.mark.slow
def test_multiplier_scheme_is_second_order() -> None:
    problem = PENDULUM.problem()
    reference = PENDULUM.reference(np.array([0.0, 1.0]))[-1]
    steps = [50, 100, 200, 400]
    errors = []
    for n in steps:
        sol = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=1.0 / n, n_steps=n)
        errors.append(float(np.max(np.abs(sol.g[-1] - reference[:6]))))
    assert abs(estimate_order([1.0 / n for n in steps], errors).slope - 2.0) <= 0.1


def test_multiplier_scheme_rejects_what_it_cannot_do() -> None:
    from liemech.systems import HenonHeiles

    with pytest.raises(ValueError, match="needs a holonomic constraint"):
        lm.integrate(HenonHeiles().problem(), lm.DiscreteGradientMultiplier(), h=0.1, n_steps=1)


def test_penalty_conserves_its_energy_and_tends_to_the_multiplier_solution() -> None:
    """H + μ|g|² is conserved to round-off; as μ grows the positions approach the Lagrange-multiplier
    solution like 1/μ and −μ(g(q₀) + g(q₁)) approaches its λ (Prop. 3.2)."""
    problem = PENDULUM.problem()
    assert problem.holonomic is not None
    constraint = problem.holonomic
    reference = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=1e-3, n_steps=300)
    assert reference.lam is not None
    mus, gaps, lam_gaps = [1e3, 1e5, 1e7], [], []
    for mu in mus:
        sol = lm.integrate(problem, lm.DiscreteGradientPenalty(mu), h=1e-3, n_steps=300)
        H = np.array([PENDULUM.energy(q, p) + mu * float(np.sum(constraint.value(q) ** 2)) for q, p in zip(sol.g, sol.mu)])
        assert float(np.max(np.abs(H - H[0]))) <= 1e-12 * abs(H[0])
        L = np.array([PENDULUM.angular_momentum(q, p) for q, p in zip(sol.g, sol.mu)])
        assert float(np.max(np.abs(L - L[0]))) <= 1e-13
        assert sol.lam is None
        gaps.append(float(np.max(np.abs(np.array(sol.g) - np.array(reference.g)))))
        lam_gaps.append(float(np.max(np.abs(sol.extras["penalty_multiplier"][-1] - reference.lam[-1]))))
    assert abs(estimate_order([1.0 / mu for mu in mus], gaps).slope - 1.0) <= 0.05  # gap ∝ 1/μ
    assert lam_gaps[0] > lam_gaps[1] > lam_gaps[2] and lam_gaps[2] <= 0.1 * float(np.max(np.abs(reference.lam[-1])))


@pytest.mark.parametrize("method", [lm.DiscreteGradientMultiplier(), lm.DiscreteGradientPenalty(100.0)], ids=repr)
def test_newton_jacobian_is_exact(method: lm.DiscreteGradientMultiplier | lm.DiscreteGradientPenalty) -> None:
    """Newton's matrix, jax.jacfwd of the public step equations, against central differences of
    the same equations away from the solution (the quotients S ≠ 0)."""
    problem = PENDULUM.problem()
    equations = method.equations(problem)
    start = NodeState(problem.g0, problem.mu0, problem.eta0, problem.lam0)
    rng = np.random.default_rng(11)
    x = np.concatenate([problem.g0 + 0.01 * rng.normal(size=6), problem.mu0 + 0.1 * rng.normal(size=6),
                        rng.normal(size=2) if isinstance(method, lm.DiscreteGradientMultiplier) else []])
    residual = jax.jit(lambda y: equations.residual(y, start, 0.01))
    J = np.asarray(jax.jit(jax.jacfwd(residual))(x))
    J_fd = jacobian(lambda y: np.asarray(residual(y)), x, step=1e-5)
    assert np.max(np.abs(J - J_fd)) <= 1e-6 * float(np.max(np.abs(J)))
    with pytest.raises(ValueError, match="mu must be a positive finite penalty parameter"):
        lm.DiscreteGradientPenalty(-1.0)


def test_augmented_lagrange_converges_to_the_multiplier_step() -> None:
    """Prop. 3.5: the Uzawa iterates reach |g| ≤ tol and the Lagrange-multiplier solution; the
    modified derivative D̂ (31) needs fewer iterations than the paper's form (40)."""
    problem = PENDULUM.problem()
    assert problem.holonomic is not None
    constraint = problem.holonomic
    reference = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=1e-3, n_steps=100)
    assert reference.lam is not None
    iterations = {}
    for variant in ("paper", "modified"):
        method = lm.DiscreteGradientAugmentedLagrange(1e7, 1e-10, variant)
        sol = lm.integrate(problem, method, h=1e-3, n_steps=100)
        assert max(float(np.max(np.abs(constraint.value(q)))) for q in sol.g) <= 1e-10
        assert float(np.max(np.abs(np.array(sol.g) - np.array(reference.g)))) <= 1e-9
        L = np.array([PENDULUM.angular_momentum(q, p) for q, p in zip(sol.g, sol.mu)])
        assert float(np.max(np.abs(L - L[0]))) <= 1e-13
        assert sol.lam is not None
        # λ is determined only to ≈ 2μ·|g| ≤ 2μ·tol at the stopping tolerance (spec §I.9)
        assert float(np.max(np.abs(sol.lam[-1] - reference.lam[-1]))) <= 4.0 * 1e7 * 1e-10
        iterations[variant] = float(np.mean(sol.extras["al_iterations"]))
    assert iterations["modified"] < 0.5 * iterations["paper"]


def test_augmented_lagrange_reports_an_exhausted_uzawa_iteration() -> None:
    """|g| still above tol after max_iterations: the step fails as data and integrate raises, with
    |g|∞ as the residual."""
    method = lm.DiscreteGradientAugmentedLagrange(1e7, 1e-10, "paper", max_iterations=3)
    with pytest.raises(lm.ConvergenceError, match="after 3 Uzawa iterations") as failure:
        lm.integrate(PENDULUM.problem(), method, h=1e-3, n_steps=5)
    assert failure.value.step == 0 and 1e-10 < failure.value.residual < 1e-4


@pytest.mark.parametrize("variant", ["midpoint", "endpoint"])
def test_augmented_subproblem_conserves_the_augmented_hamiltonian(variant: PenaltyVariant) -> None:
    """For a fixed λ, one step conserves H + ⟨λ, g⟩ + μ|g|² (both discrete derivatives are exact)."""
    problem = PENDULUM.problem()
    assert problem.holonomic is not None
    constraint, mu, h = problem.holonomic, 1e4, 1e-2
    equations = PenaltyEquations(problem, mu, lm.NewtonOptions(jacobian="every"), variant, "subproblem")
    lam = np.array([3.0, -2.0])

    def augmented(q: lm.Vector, p: lm.Vector) -> float:
        g = constraint.value(q)
        return PENDULUM.energy(q, p) + float(lam @ g) + mu * float(g @ g)

    sub = equations.subproblem(NodeState(problem.g0, problem.mu0, problem.eta0), lam)
    step = jnp.asarray(h)
    outcome = jax.jit(lambda: equations.solve(sub, equations.hamiltonian.predictor(sub.q0, sub.p0, step), step))()
    assert int(outcome.status) == Status.CONVERGED
    x = np.asarray(outcome.x)
    assert abs(augmented(x[:6], x[6:]) - augmented(problem.g0, problem.mu0)) <= 1e-12 * abs(augmented(problem.g0, problem.mu0))


@pytest.mark.slow
def test_director_top_against_the_heavy_top_on_so3() -> None:
    """The six-constraint director top (R = [d₁ d₂ d₃]) with the multiplier scheme: order 2 against a
    DOP853 solution of the same body on SO(3); energy, vertical angular momentum and the
    orthonormality constraints to round-off."""
    from liemech.systems.director_top import DirectorTop

    director = DirectorTop()
    problem = director.problem()
    assert problem.holonomic is not None
    R_ref, _ = director.equivalent_top().reference(np.array([1.0]))
    steps, errors = [50, 100, 200], []
    for n in steps:
        sol = lm.integrate(problem, lm.DiscreteGradientMultiplier(), h=1.0 / n, n_steps=n)
        errors.append(float(np.max(np.abs(director.rotation(sol.g[-1]) - R_ref[-1]))))
        E = np.array([director.energy(q, p) for q, p in zip(sol.g, sol.mu)])
        L = np.array([director.vertical_angular_momentum(q, p) for q, p in zip(sol.g, sol.mu)])
        assert float(np.max(np.abs(E - E[0]))) <= 1e-12 * abs(E[0])
        assert float(np.max(np.abs(L - L[0]))) <= 1e-13
        assert max(float(np.max(np.abs(problem.holonomic.value(q)))) for q in sol.g) <= 1e-14
    assert abs(estimate_order([1.0 / n for n in steps], errors).slope - 2.0) <= 0.1


def test_condition_numbers() -> None:
    """Spec §I.8 on the pendulum released from rest with collinear horizontal rods: the multiplier
    scheme's Newton matrix has cond ∝ h⁻³ with the printed rows and ∝ h⁻² with rows scaled by h;
    the penalty's grows like (μh)² while μh² ≲ 1."""
    from liemech.testing.conditioning import newton_condition_number

    pendulum = DoubleSphericalPendulum(q0=np.array([1.0, 0.0, 0.0, 2.0, 0.0, 0.0]), v0=np.zeros(6))
    problem = pendulum.problem()
    steps = [1e-2, 1e-3, 1e-4]
    printed = [newton_condition_number(problem, lm.DiscreteGradientMultiplier(), h) for h in steps]
    scaled = [newton_condition_number(problem, lm.DiscreteGradientMultiplier(), h, "scaled") for h in steps]
    def exponent(x: list[float], y: list[float]) -> float:
        return float(np.polyfit(np.log(x), np.log(y), 1)[0])

    assert abs(exponent(steps, printed) + 3.0) <= 0.05
    assert abs(exponent(steps, scaled) + 2.0) <= 0.05
    assert abs(printed[1] * 1e-9 - 5.24) <= 0.05 and abs(scaled[1] * 1e-6 - 11.7) <= 0.2  # spec §I.8 values
    mus = [1e5, 1e6, 1e7]
    penalty = [newton_condition_number(problem, lm.DiscreteGradientPenalty(mu), 1e-4) for mu in mus]
    assert abs(exponent(mus, penalty) - 2.0) <= 0.3


def test_invariant_discrete_derivative_is_exact_and_equivariant() -> None:
    """f(q) = F(|q|²) with F(s) = sin s, as a QuadraticInvariantPotential: D̄f(x, y)·(y − x) =
    f(y) − f(x), and D̄f(Rx, Ry) = R D̄f(x, y) for a rotation R (the Gonzalez form (19) is not
    equivariant in general)."""
    V = lm.QuadraticInvariantPotential([np.eye(3)], [math.sin], [math.cos])

    def D(x: lm.Vector, y: lm.Vector) -> lm.Vector:
        return np.asarray(V.discrete_gradient(x, y))

    rng = np.random.default_rng(12)
    x, y = rng.normal(size=3), rng.normal(size=3)
    assert abs(float(D(x, y) @ (y - x)) - (math.sin(float(y @ y)) - math.sin(float(x @ x)))) <= 1e-14
    R = lm.SO3().random_point(rng)
    assert np.max(np.abs(D(R @ x, R @ y) - R @ D(x, y))) <= 1e-14
    z = x / np.linalg.norm(x) * np.linalg.norm(y)  # same length: the 0/0 case
    assert np.max(np.abs(D(z, y) - math.cos(float(y @ y)) * (z + y))) <= 1e-14