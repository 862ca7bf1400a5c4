"""The compiled Newton solve's Jacobian policies on equations with known roots: simplified Newton
(one Jacobian, at the starting guess) contracts only linearly, and stalls where that Jacobian is far
from the one at the root; ``jacobian="refreshed"`` evaluates it again when an update contracts the
residual by less than half, alone and under ``jax.vmap`` (nested loops, not a select that would
evaluate it at every iteration). The residual's Python runs once per solve, and the root is
differentiable through what the residual closes over."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import liemech as lm
from liemech.numerics.block_tree import tree_structure
from liemech.solvers.compiled_newton import NewtonOutcome, Status, jacobian_by_groups, solve
from tests.solvers.cardano import cardano_root

# The real root of x³ + x − 1 by Cardano's formula.
ROOT = math.cbrt(0.5 + math.sqrt(0.25 + 1 / 27)) + math.cbrt(0.5 - math.sqrt(0.25 + 1 / 27))


def cubic(x: jax.Array) -> jax.Array:
    return x ** 3 + x - 1.0


def newton(jacobian: str, x0: jax.Array) -> NewtonOutcome:
    options = lm.NewtonOptions(jacobian=jacobian)  # type: ignore[arg-type]
    outcome: NewtonOutcome = jax.jit(lambda x: solve(cubic, x, options, jnp.asarray(1.0)))(x0)
    return outcome


def test_a_frozen_jacobian_far_from_the_root_stalls_and_a_refreshed_one_converges() -> None:
    """From x₀ = 3 a Jacobian frozen at x₀ (J = 28) contracts by |1 − J(x*)/28| ≈ 0.91 per update and
    cannot reach round-off in 50 iterations; refreshed when the contraction is poor it converges to
    Cardano's root to round-off (measured: 25 iterations, against 9 with a Jacobian at every
    iterate; each refresh costs the update that revealed the stall)."""
    start = jnp.array([3.0])
    first, refreshed, every = (newton(kind, start) for kind in ("first", "refreshed", "every"))
    assert int(first.status) == Status.NO_CONVERGENCE
    assert int(refreshed.status) == int(every.status) == Status.CONVERGED
    assert abs(float(refreshed.x[0]) - ROOT) <= 4e-16 and abs(float(every.x[0]) - ROOT) <= 4e-16


def test_near_the_root_a_refreshed_jacobian_is_simplified_newton() -> None:
    """Started close to the root, every update contracts by far more than half, so the first
    Jacobian is never replaced: the iterates are those of simplified Newton, bit for bit."""
    start = jnp.array([ROOT + 1e-3])
    first, refreshed = newton("first", start), newton("refreshed", start)
    assert int(first.status) == int(refreshed.status) == Status.CONVERGED
    assert int(first.iterations) == int(refreshed.iterations)
    assert float(first.x[0]) == float(refreshed.x[0])


@pytest.mark.parametrize("kind", ["first", "refreshed"])
def test_under_vmap_each_member_is_solved_as_alone(kind: str) -> None:
    """A batch of starting guesses, some near and some far: each member's root, iterations and
    status are those of the same solve run alone."""
    starts = np.array([[ROOT + 1e-3], [1.5], [3.0], [-0.5]])
    options = lm.NewtonOptions(jacobian=kind)  # type: ignore[arg-type]
    batched = jax.jit(jax.vmap(lambda x: solve(cubic, x, options, jnp.asarray(1.0))))(jnp.asarray(starts))
    for k, start in enumerate(starts):
        alone = newton(kind, jnp.asarray(start))
        assert int(batched.status[k]) == int(alone.status)
        assert int(batched.iterations[k]) == int(alone.iterations)
        assert float(batched.x[k, 0]) == pytest.approx(float(alone.x[0]), abs=1e-15)


def test_the_residual_is_traced_once_and_its_root_stays_differentiable() -> None:
    """``solve`` runs the residual's Python once (JAX's custom_root alone would run it three times,
    Newton's Jacobian a fourth) and replays its jaxpr; the root's derivative with respect to a
    parameter the residual closes over, in forward and reverse mode, equals central differences
    of Cardano's formula for the root of x³ + a x − 1."""
    calls: list[None] = []

    def root(a: jax.Array) -> jax.Array:
        def residual(x: jax.Array) -> jax.Array:
            calls.append(None)
            return x ** 3 + a * x - 1.0

        return solve(residual, jnp.ones(1), lm.NewtonOptions(), jnp.asarray(1.0)).x[0]

    a, step = 1.3, 1e-5
    value, tangent = jax.jit(lambda a: jax.jvp(root, (a,), (jnp.ones(()),)))(jnp.asarray(a))
    assert len(calls) == 1
    gradient = jax.jit(jax.grad(root))(jnp.asarray(a))
    differences = (cardano_root(a + step) - cardano_root(a - step)) / (2 * step)
    assert abs(float(value) - cardano_root(a)) <= 1e-15
    assert abs(float(tangent) - differences) <= 1e-9 and abs(float(gradient) - differences) <= 1e-9


def test_a_residual_of_pieces_is_solved_whole_and_a_structure_split_elsewhere_is_refused() -> None:
    """x³ + y − 1 = 0, y − x = 0 with x and y passed apart (``parts``): the root is Cardano's for
    both; a block-tree structure whose pieces split the unknowns elsewhere is refused by name."""

    def residual(x: jax.Array, y: jax.Array) -> jax.Array:
        return jnp.concatenate([x ** 3 + y - 1.0, y - x])

    outcome = jax.jit(lambda x0: solve(residual, x0, lm.NewtonOptions(), jnp.asarray(1.0), parts=(1,)))(jnp.ones(2))
    assert int(outcome.status) == Status.CONVERGED
    np.testing.assert_allclose(outcome.x, [ROOT, ROOT], rtol=0, atol=1e-15)
    structure = tree_structure(np.ones((2, 2), dtype=bool), np.zeros(2, dtype=np.int64), parts=(1,))
    assert structure is not None
    with pytest.raises(ValueError, match=r"parts \(0,\) differ from the block-tree structure's \(1,\)"):
        solve(residual, jnp.ones(2), lm.NewtonOptions(), jnp.asarray(1.0), structure, parts=(0,))


def test_a_residual_of_pieces_is_differentiated_group_by_group() -> None:
    """Newton's dense Jacobian of a residual of pieces, ``jax.jacfwd`` along one group of pieces at a
    time: for r(x, e, y) = (sin x₀ · x₁ + y₀, x₀ + y₀³, x₁ y₀) with an empty piece e, grouped
    (y), (x, e), it equals the closed form column for column, and a solve with those groups finds the
    root of the pieces' equations; groups that miss or repeat a piece are refused by name."""

    def residual(x: jax.Array, empty: jax.Array, y: jax.Array) -> jax.Array:
        return jnp.stack([jnp.sin(x[0]) * x[1] + y[0], x[0] + y[0] ** 3, x[1] * y[0]])

    x0, x1, y0 = 0.7, -1.3, 0.4
    jacobian = jacobian_by_groups(residual, ((2, 2), ((2,), (0, 1))))(jnp.asarray([x0, x1, y0]))
    expected = [[math.cos(x0) * x1, math.sin(x0), 1.0], [1.0, 0.0, 3 * y0 ** 2], [0.0, y0, x1]]
    np.testing.assert_allclose(jacobian, expected, rtol=1e-15, atol=0)

    def cubic_pieces(x: jax.Array, y: jax.Array) -> jax.Array:
        return jnp.concatenate([x ** 3 + y - 1.0, y - x])

    outcome = jax.jit(lambda z: solve(cubic_pieces, z, lm.NewtonOptions(), jnp.asarray(1.0), parts=(1,),
                                      derivative_groups=((1,), (0,))))(jnp.ones(2))
    assert int(outcome.status) == Status.CONVERGED
    np.testing.assert_allclose(outcome.x, [ROOT, ROOT], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=r"derivative_groups \(\(0,\), \(0,\)\) must hold each of the 2 pieces once"):
        solve(cubic_pieces, jnp.ones(2), lm.NewtonOptions(), jnp.asarray(1.0), parts=(1,),
              derivative_groups=((0,), (0,)))
