"""``NewtonOptions(jacobian="carried")``: VPRK starts each step's Newton solve from the factors the
last step ended with. The steps solve the same equations to round-off, so a run equals the run
that factorises the Jacobian at every step, to round-off amplified over the run; Newton takes
more iterations, which is how the carried factors show (a fresh Jacobian per step gives the
fewest). On the heavy top (the dense Jacobian), on a chain of tops (the block tree) and in an
ensemble (the factors batched with the members)."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.numerics import lu
from liemech.solvers.compiled_newton import NOISE, Status, solve, unset_factors
from liemech.solvers.newton import EPS
from tests.chain_of_tops import sparse_chain_of_tops
from tests.solvers.cardano import cardano_root

CARRIED, FIRST = lm.NewtonOptions(jacobian="carried"), lm.NewtonOptions()


def test_a_solve_from_unset_factors_converges_and_its_factors_serve_the_next_one() -> None:
    """x³ + a x − 1 = 0 for a = 1, from NaN factors, then a = 1.05 from the factors that solve
    ended with: both roots are Cardano's, to round-off."""

    def cubic(a: float) -> Callable[[jax.Array], jax.Array]:
        return lambda x: x ** 3 + a * x - 1.0

    x0 = jnp.ones(1)
    first = solve(cubic(1.0), x0, CARRIED, jnp.asarray(1.0), carried=unset_factors(x0))
    second = solve(cubic(1.05), x0, CARRIED, jnp.asarray(1.0), carried=first.factors)
    for outcome, a in ((first, 1.0), (second, 1.05)):
        assert int(outcome.status) == Status.CONVERGED
        assert abs(float(outcome.x[0]) - cardano_root(a)) <= 1e-15
    assert all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree.leaves(first.factors))


def test_carried_factors_that_stop_contracting_are_replaced_not_trusted() -> None:
    """r(x) = x + x³/10 − b with the root x* chosen, from 1e-10 off it (below √eps, above round-off)
    with carried factors of J(x*)/2.5, whose update overshoots 2.5-fold: the residual grows by half
    at every update from them. The solve replaces them and ends at round-off; it used to accept the
    grown residual, 1.5e-10, as a plateau (any rise below √eps counted as one)."""
    root = jnp.array([0.3, -0.5, 0.8])

    def residual(x: jax.Array) -> jax.Array:
        return x + 0.1 * x**3 - (root + 0.1 * root**3)

    overshooting = lu.inverse(jax.jacfwd(residual)(root) / 2.5)
    x0 = root + 1e-10 * jnp.array([1.0, -1.0, 1.0])
    outcome = solve(residual, x0, CARRIED, jnp.asarray(1.0), carried=overshooting)
    assert int(outcome.status) == Status.CONVERGED
    assert float(jnp.max(jnp.abs(residual(outcome.x)))) <= NOISE * CARRIED.roundoff_factor * EPS
    np.testing.assert_allclose(outcome.x, root, rtol=0, atol=1e-15)


def test_runs_with_carried_factors_trace_their_shapes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The unset factors' shapes are traced at the first run only (dense and on the block tree):
    tracing them cost 2.5 ms at every run, more than 200 steps of a small system."""
    runs = [(heavy_top(), lm.VPRK(lm.lobatto(2), newton=CARRIED)),
            (sparse_chain_of_tops(), lm.VPRK(lm.lobatto(2), newton=CARRIED))]
    for problem, method in runs:
        lm.integrate(problem, method, h=0.01, n_steps=2)
    traced = []
    monkeypatch.setattr(jax, "eval_shape", lambda *args, **kwargs: traced.append(args))
    for problem, method in runs:
        lm.integrate(problem, method, h=0.01, n_steps=2)
    assert traced == []


def heavy_top() -> lm.Problem[lm.Matrix]:
    system = lm.MechanicalSystem(lm.SO3(), np.diag([1.0, 2.0, 3.5]), lambda R: 2.0 * R[2] @ jnp.array([0.1, -0.2, 1.0]))
    return lm.Problem(system, np.asarray(lm.SO3().retraction("exp").tau(np.array([0.3, -0.2, 0.1]))),
                      np.array([0.5, 1.0, 4.0]))


@pytest.mark.parametrize(("problem", "retraction"), [(heavy_top, "exp"), (heavy_top, "cay"), (sparse_chain_of_tops, "cay")],
                         ids=["heavy top, exp", "heavy top, cay", "6 tops on the block tree, cay"])
def test_carried_factors_take_the_same_steps_with_more_iterations(problem: Callable[[], lm.Problem[Any]],
                                                                  retraction: lm.RetractionKind) -> None:
    """The first step starts from unset factors (NaN), so it refreshes them before any update."""
    runs = {newton.jacobian: lm.integrate(problem(), lm.VPRK(lm.lobatto(3), retraction, newton=newton), h=0.01, n_steps=100)
            for newton in (FIRST, CARRIED)}
    first, carried = runs["first"], runs["carried"]
    np.testing.assert_allclose(carried.mu, first.mu, rtol=0, atol=1e-12 * np.max(np.abs(first.mu)))
    np.testing.assert_allclose(carried.g, first.g, rtol=0, atol=1e-12)
    assert np.mean(carried.stats.iterations) >= np.mean(first.stats.iterations) + 1.0


def test_an_ensemble_carries_each_members_factors() -> None:
    """Three initial spins of the heavy top: each member equals its own run with carried factors."""
    problem = heavy_top()
    eta0s = np.array([[0.5, 1.0, 4.0], [0.2, -1.0, 3.0], [1.0, 0.5, -2.0]])
    method = lm.VPRK(lm.lobatto(2), "cay", newton=CARRIED)
    ensemble = lm.integrate_ensemble(problem, method, h=0.01, n_steps=60, initial=(None, eta0s))
    assert ensemble.mu is not None
    for member, eta0 in zip(ensemble.mu, eta0s):
        alone = lm.integrate(lm.Problem(problem.system, problem.g0, eta0), method, h=0.01, n_steps=60)
        np.testing.assert_allclose(member, alone.mu, rtol=0, atol=1e-12 * np.max(np.abs(alone.mu)))


def test_sensitivities_through_carried_factors_are_those_of_fresh_ones() -> None:
    """∂μ(T)/∂η₀ over 50 steps by forward and by reverse mode through ``flow``: the carried factors
    are not differentiated (the root's derivative comes from the implicit function theorem), so
    both equal those of the run with a fresh Jacobian per step, to round-off."""
    problem = heavy_top()
    eta0 = jnp.asarray(problem.eta0)
    derivatives = {}
    for newton in (FIRST, CARRIED):
        final = lm.flow(problem, lm.VPRK(lm.lobatto(2), newton=newton), h=0.01, n_steps=50)
        forward = jax.jacfwd(lambda eta: final(eta0=eta).mu)(eta0)
        np.testing.assert_allclose(jax.jacrev(lambda eta: final(eta0=eta).mu)(eta0), forward, rtol=0, atol=1e-13)
        derivatives[newton.jacobian] = forward
    np.testing.assert_allclose(derivatives["carried"], derivatives["first"], rtol=0, atol=1e-13)
