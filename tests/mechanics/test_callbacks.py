"""User callbacks under the compiled core: checked at the initial point, given derivatives compared
with autodiff, untraceable code and non-finite values reported by name."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.mechanics.callbacks import check_traced
from liemech.systems import HeavyTop
from tests.perturbation import Perturbation

TOP = HeavyTop()


def _potential(R: lm.Matrix) -> jax.Array:
    return TOP.mg * jnp.dot(R[2], TOP.chi)


def _gradient(R: lm.Matrix) -> lm.Vector:
    """∇V = mg χ × Γ with Γ = Rᵀe₃ (hand-derived)."""
    return TOP.mg * np.cross(TOP.chi, R[2])


def test_autodiff_gradient_equals_the_hand_derived_one() -> None:
    system = lm.MechanicalSystem(lm.SO3(), TOP.inertia, _potential)
    R = lm.SO3().random_point(np.random.default_rng(3))
    assert np.max(np.abs(system.potential_gradient(R) - _gradient(R))) <= 1e-15
    lm.Problem(lm.MechanicalSystem(lm.SO3(), TOP.inertia, _potential, potential_gradient=_gradient), R,
               TOP.omega0)  # a correct gradient passes the check


def test_a_wrong_user_gradient_is_rejected_by_name() -> None:
    flipped = lm.MechanicalSystem(lm.SO3(), TOP.inertia, _potential, potential_gradient=lambda R: -_gradient(R))
    with pytest.raises(ValueError, match="potential_gradient disagrees with automatic differentiation"):
        lm.Problem(flipped, lm.SO3().random_point(np.random.default_rng(4)), TOP.omega0)


def test_a_wrong_constraint_jacobian_is_rejected_by_name() -> None:
    def wrong_jacobian(q: lm.Vector) -> lm.Matrix:
        return 2.0 * q[None, :]

    circle: lm.HolonomicConstraint[lm.Vector] = lm.HolonomicConstraint(
        lambda q: jnp.array([0.5 * (q @ q - 1.0)]), jacobian=wrong_jacobian)
    system = lm.MechanicalSystem(lm.Rn(2), np.eye(2), lambda q: q[1])
    with pytest.raises(ValueError, match="holonomic jacobian disagrees"):
        lm.Problem(system, np.array([1.0, 0.0]), np.zeros(2), holonomic=circle)


@pytest.mark.parametrize("potential, hint", [
    (lambda R: TOP.mg * float(R[2] @ TOP.chi), "float"),
    (lambda R: TOP.mg * np.cross(TOP.chi, R[2])[0], "jnp.cross"),
    (lambda R: TOP.mg * R[2, 2] if R[2, 2] > 0 else 0.0, "jnp.where"),
], ids=["float", "np.cross", "if"])
def test_an_untraceable_potential_gets_an_error_that_says_what_to_change(potential: object, hint: str) -> None:
    system = lm.MechanicalSystem(lm.SO3(), TOP.inertia, potential)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=f"potential cannot be traced by JAX.*{hint}"):
        lm.Problem(system, np.eye(3), TOP.omega0)


def test_callback_outputs_are_checked_at_the_initial_point() -> None:
    vector_potential = lm.MechanicalSystem(lm.SO3(), TOP.inertia, lambda R: R[2])
    with pytest.raises(ValueError, match=r"potential must return shape \(\)"):
        lm.Problem(vector_potential, np.eye(3), TOP.omega0)
    nan_potential = lm.MechanicalSystem(lm.SO3(), TOP.inertia, lambda R: jnp.log(R[2, 2] - 1.0))
    with pytest.raises(ValueError, match="potential returned non-finite values"):
        lm.Problem(nan_potential, np.eye(3), TOP.omega0)
    indefinite = lm.MechanicalSystem(lm.Rn(2), lambda q: jnp.diag(jnp.array([1.0, -1.0 + q[0]])), lambda q: q[1])
    with pytest.raises(ValueError, match="inertia.*positive definite"):
        lm.Problem(indefinite, np.zeros(2), np.zeros(2))


def test_a_potential_that_turns_nan_mid_run_is_reported_as_such() -> None:
    """V = mg √(R₃₃ − 0.9) is NaN once the top tilts past R₃₃ = 0.9: the run stops at that step
    with a hint at the model, not at the step size, and returns no NaN."""
    system = lm.MechanicalSystem(lm.SO3(), TOP.inertia, lambda R: jnp.sqrt(R[2, 2] - 0.9))
    problem = lm.Problem(system, np.eye(3), np.array([1.5, 0.0, 0.3]))
    with pytest.raises(lm.ConvergenceError, match="non-finite residual.*potential, force or constraint") as caught:
        lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=0.01, n_steps=300)
    assert 0 < caught.value.step < 300
    assert caught.value.time == pytest.approx(caught.value.step * 0.01)


@pytest.mark.slow
@pytest.mark.long_run
def test_top_from_v_alone_keeps_its_noether_momentum_over_10_000_steps(perturb: Perturbation) -> None:
    """The README's top, given V only: ⟨μ, Rᵀe₃⟩ is conserved to round-off (a random walk of
    ~1e-16 per step) over 10⁴ steps of Lobatto-3."""
    system = lm.MechanicalSystem(lm.SO3(), TOP.inertia, _potential)
    problem = lm.Problem(system, lm.SO3().retraction("exp").tau(perturb(TOP.rotation0)), perturb(TOP.omega0))
    sol = lm.integrate(problem, lm.VPRK(lm.lobatto(3)), h=0.01, n_steps=10_000, store_every=10)
    noether = np.array([TOP.noether_momentum(R, m) for R, m in zip(sol.g, sol.mu)])
    assert len(sol.t) == 1001 and np.max(np.abs(noether - noether[0])) <= 1e-12


@pytest.mark.parametrize("potential", [
    lambda q: q[-1] + q[jnp.array([0, 1, -2])].sum() + jnp.take(q, 3, mode="clip"),
    lambda q: jax.scipy.linalg.expm(jnp.array([[0.0, q[0]], [-q[0], 0.0]]))[0, 1],
    lambda q: jnp.hypot(q[0], q[1]) + jnp.nanmax(q) + jnp.linalg.pinv(jnp.eye(2) + jnp.outer(q, q))[0, 0],
    lambda q: jnp.where(q[1] > 0.0, q[1], -1.0),
], ids=["in-range indices", "expm", "hypot, nanmax, pinv", "finite where"])
def test_what_jax_lets_through_is_refused_only_where_the_callback_wrote_it(
        potential: Callable[[lm.Vector], jax.Array]) -> None:
    """The jaxpr check refuses out-of-range constant indices and NaN or inf constants chosen by the
    state in the callback's own code; JAX's functions select such constants for inputs outside their
    domain (expm, hypot, nanmax, pinv), and ``mode='clip'`` asks for clamping: all accepted."""
    check_traced("potential", potential, np.array([1.0, 0.5]))


def test_the_suggested_remedy_is_nan_with_its_gradient_beyond_the_boundary() -> None:
    """The remedy the refusal of jnp.where(q[0] < 2, 0.0, jnp.nan) suggests: V + 0·√(2 − q₀) is
    NaN beyond q₀ = 2 with its gradient, which the steps evaluate (a step there stops the run, as
    test_a_potential_that_turns_nan_mid_run_is_reported_as_such shows), and 0 before it."""
    def potential(q: jax.Array) -> jax.Array:
        return q[1] + 0.0 * jnp.sqrt(2.0 - q[0])

    check_traced("potential", potential, np.array([1.0, 0.5]))
    before, beyond = jax.jit(jax.vmap(jax.grad(potential)))(jnp.array([[1.0, 0.5], [2.5, 0.5]]))  # one compilation
    assert np.array_equal(before, [0.0, 1.0]) and np.isnan(beyond[0])
