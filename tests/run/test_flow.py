"""The discrete flow as a JAX function: the same final state as ``integrate``, sensitivities to
initial data and parameters by implicit differentiation (forward and reverse mode) against
central differences, batches by ``vmap``, and failures reported."""

from collections.abc import Callable
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.methods.method import NodeState
from liemech.methods.vprk.scheme import VPRKEquations
from liemech.systems import (
    ConstrainedHeavyTop,
    DoublePendulum,
    DoubleSphericalPendulum,
    HeavyTop,
    SphericalPendulum,
    VerticalDisc,
)

P = TypeVar("P")

TOP = HeavyTop()
LOBATTO3 = lm.VPRK(lm.lobatto(3))
H, N = 0.01, 20


@pytest.fixture(scope="module")
def top_flow() -> lm.Flow[lm.Matrix]:
    return lm.flow(TOP.problem(), LOBATTO3, h=H, n_steps=N)


def central_jacobian(f: Callable[[lm.VectorLike], jax.Array], x: lm.Vector, step: float = 1e-6) -> lm.Matrix:
    """∂f/∂x by central differences, column by column."""
    columns = [(np.asarray(f(x + step * e)) - np.asarray(f(x - step * e))) / (2 * step) for e in np.eye(x.size)]
    return np.stack(columns, axis=-1)


def test_the_flow_ends_where_integrate_ends(top_flow: lm.Flow[lm.Matrix]) -> None:
    final = top_flow()
    sol = lm.integrate(TOP.problem(), LOBATTO3, h=H, n_steps=N)
    assert bool(final.converged)
    assert np.max(np.abs(final.g - sol.g[-1])) <= 1e-15 and np.max(np.abs(final.mu - sol.mu[-1])) <= 1e-15
    assert np.max(np.abs(final.eta - sol.eta[-1])) <= 1e-15


def test_sensitivity_to_initial_velocity_in_both_modes_matches_central_differences(
        top_flow: lm.Flow[lm.Matrix]) -> None:
    eta0 = TOP.problem().eta0

    def final_state(eta: lm.VectorLike) -> jax.Array:
        end = top_flow(eta0=eta)
        return jnp.concatenate([end.g.ravel(), end.mu])

    forward = np.asarray(jax.jacfwd(final_state)(eta0))
    reverse = np.asarray(jax.jacrev(final_state)(eta0))
    numeric = central_jacobian(final_state, eta0)
    scale = np.max(np.abs(forward))
    assert np.max(np.abs(forward - numeric)) <= 1e-6 * scale
    assert np.max(np.abs(reverse - forward)) <= 1e-13 * scale


def test_sensitivity_to_a_parameter_of_the_potential(top_flow: lm.Flow[lm.Matrix]) -> None:
    """∂μ(T)/∂(mg) through a system built inside the differentiated function."""

    def final_momentum(mg: jax.Array) -> jax.Array:
        top = HeavyTop(mg=mg)  # type: ignore[arg-type]  # a traced parameter
        return top_flow(system=lm.MechanicalSystem(lm.SO3(), top.inertia, top.potential)).mu

    forward = np.asarray(jax.jacfwd(final_momentum)(TOP.mg))
    reverse = np.asarray(jax.jacrev(final_momentum)(TOP.mg))
    compiled = jax.jit(final_momentum)  # mg an argument, not a constant: one compilation for both
    numeric = (np.asarray(compiled(TOP.mg + 1e-6)) - np.asarray(compiled(TOP.mg - 1e-6))) / 2e-6
    assert np.max(np.abs(forward - numeric)) <= 1e-6 * np.max(np.abs(forward))
    assert np.max(np.abs(reverse - forward)) <= 1e-13 * np.max(np.abs(forward))


def stage_multiplier_roundoff(problem: lm.Problem[P], sol: lm.Solution[P]) -> float:
    """How far round-off may move the λ of sol's last step, the last stage multiplier Λˢ of the
    unknowns x (holonomic VPRK). Newton stops at ‖r‖∞ ≤ 16 eps max(1, ‖μ_k‖∞) (NewtonOptions),
    which moves the root by J⁻¹ r: Λˢ by at most ‖(J⁻¹)_Λˢ‖∞ times that, J = ∂r/∂x at the root."""
    equations = VPRKEquations(LOBATTO3, problem)
    k = len(sol.t) - 2
    state = NodeState(jax.tree.map(lambda leaf: leaf[k], sol.g), sol.mu[k], sol.eta[k],
                         None if sol.lam is None else sol.lam[k], sol.t[k])
    carry, _ = jax.jit(equations.step)(equations.start(state), jnp.asarray(H))
    root = carry.history.solutions[0]
    jacobian = np.asarray(jax.jit(jax.jacfwd(lambda x: equations.residual(x, state, H)))(root))
    last_multiplier_rows = np.linalg.inv(jacobian)[-problem.n_constraints:]
    stopping = 16 * np.finfo(float).eps * max(1.0, np.max(np.abs(sol.mu[k])))
    return float(np.max(np.sum(np.abs(last_multiplier_rows), axis=1)) * stopping)


@pytest.mark.parametrize("problem", [TOP.problem(), ConstrainedHeavyTop().problem(), VerticalDisc().problem()],
                         ids=["unconstrained", "holonomic", "nonholonomic"])
def test_vmap_over_initial_velocities_gives_the_separate_runs(problem: lm.Problem[P]) -> None:
    """Scaled η₀ stay on linear velocity constraints; the batch must equal the runs one by one, to
    round-off. The holonomic λ is a stage multiplier, which the step equations fix only to their
    conditioning (λ enters them scaled by h): two runs that differ in the last bit of a starting
    guess differ there by ~1e-12, within the bound of ``stage_multiplier_roundoff`` (~3e-9 here).
    The nonholonomic λ = λ(g, η) is a function of the node and agrees as the node does."""
    final = lm.flow(problem, LOBATTO3, h=H, n_steps=10)
    etas = np.outer([0.9, 1.0, 1.1], problem.eta0)
    batch = jax.vmap(lambda eta: final(eta0=eta))(etas)
    assert bool(jnp.all(batch.converged))
    for eta, mu, lam in zip(etas, batch.mu, batch.lam):
        member = lm.Problem(problem.system, problem.g0, eta, holonomic=problem.holonomic,
                            nonholonomic=problem.nonholonomic)
        alone = lm.integrate(member, LOBATTO3, h=H, n_steps=10)
        assert np.max(np.abs(mu - alone.mu[-1])) <= 1e-13 * max(1.0, np.max(np.abs(mu)))
        if alone.lam is not None:
            roundoff = (2 * stage_multiplier_roundoff(member, alone) if problem.holonomic is not None
                        else 1e-12 * max(1.0, np.max(np.abs(lam))))
            assert np.max(np.abs(lam - alone.lam[-1])) <= roundoff


def test_a_failed_step_raises_when_concrete_and_is_flagged_under_jit() -> None:
    """V = √(R₃₃ − 0.9) turns NaN once the top tilts past R₃₃ = 0.9."""
    system = lm.MechanicalSystem(lm.SO3(), TOP.inertia, lambda R: jnp.sqrt(R[2, 2] - 0.9))
    problem = lm.Problem(system, np.eye(3), np.array([1.5, 0.0, 0.3]))
    final = lm.flow(problem, LOBATTO3, h=0.01, n_steps=300)
    with pytest.raises(lm.ConvergenceError, match="non-finite residual") as caught:
        final()
    flagged = jax.jit(lambda eta: final(eta0=eta))(problem.eta0)
    assert not bool(flagged.converged) and int(flagged.failure[0]) == caught.value.step
    assert np.all(np.isfinite(flagged.mu)) and np.all(np.isfinite(flagged.g))


def test_bad_arguments_are_refused_by_name(top_flow: lm.Flow[lm.Matrix]) -> None:
    with pytest.raises(ValueError, match="eta0 must have shape"):
        top_flow(eta0=np.zeros(2))
    with pytest.raises(ValueError, match="n_steps"):
        lm.flow(TOP.problem(), LOBATTO3, h=H, n_steps=0)
    with pytest.raises(ValueError, match="h must be"):
        lm.flow(TOP.problem(), LOBATTO3, h=-1.0, n_steps=3)
    with pytest.raises(ValueError, match="system must be a Lagrangian on"):
        top_flow(system=lm.MechanicalSystem(lm.Rn(3), np.eye(3), lambda q: q[0]))


FAMILIES: dict[str, tuple[Callable[[], lm.Method], Callable[[], lm.Problem[lm.Vector]]]] = {
    "VI-A": (lm.GGLThetaA, lambda: SphericalPendulum().problem()),
    "VI-B": (lm.GGLThetaB, lambda: SphericalPendulum().problem()),
    "VI-S": (lm.GGLVariationalEuler, lambda: SphericalPendulum().problem()),
    "EM": (lm.GGLEnergyMomentum, lambda: SphericalPendulum().problem()),
    "EM-G": (lm.GonzalezEnergyMomentum, lambda: SphericalPendulum().problem()),
    "DG-multiplier": (lm.DiscreteGradientMultiplier, lambda: DoubleSphericalPendulum().problem()),
    "DG-penalty": (lambda: lm.DiscreteGradientPenalty(mu=1e4), lambda: DoubleSphericalPendulum().problem()),
    "DG-AL": (lambda: lm.DiscreteGradientAugmentedLagrange(mu=1e7, variant="modified"), lambda: DoubleSphericalPendulum().problem()),
    "Simpson": (lm.SimpsonVI, lambda: DoublePendulum().problem()),
    "midpoint": (lm.MidpointVI, lambda: DoublePendulum().problem()),
    "RK4": (lm.RK4, lambda: DoublePendulum().problem()),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_every_compiled_family_runs_a_batch_under_vmap(family: str) -> None:
    make_method, make_problem = FAMILIES[family]
    method, problem = make_method(), make_problem()
    final = lm.flow(problem, method, h=H, n_steps=10)
    etas = np.outer([0.9, 1.1], problem.eta0)
    batch = jax.vmap(lambda eta: final(eta0=eta))(etas)
    assert bool(jnp.all(batch.converged))
    for eta, q, p in zip(etas, batch.g, batch.mu):
        alone = lm.integrate(lm.Problem(problem.system, problem.g0, eta, holonomic=problem.holonomic), method, h=H,
                             n_steps=10)
        assert np.max(np.abs(q - alone.g[-1])) <= 1e-13 * max(1.0, np.max(np.abs(q)))
        assert np.max(np.abs(p - alone.mu[-1])) <= 1e-13 * max(1.0, np.max(np.abs(p)))
