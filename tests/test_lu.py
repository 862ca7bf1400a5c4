"""Newton's LU solve, alone (LAPACK) and under vmap (substitutions over the batch), against numpy's
solve within the forward-error bound of LU with partial pivoting."""

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from liemech.solvers.lu import lu_factor, lu_solve

EPS = float(np.finfo(np.float64).eps)


def batch_of_systems(count: int, n: int = 16) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Random systems, the first with a zero in the corner (it needs a row swap)."""
    rng = np.random.default_rng(17)
    matrices = rng.standard_normal((count, n, n))
    matrices[0, 0, 0] = 0.0
    return matrices, rng.standard_normal((count, n))


def assert_solves(matrices: NDArray[np.float64], right: NDArray[np.float64], solutions: NDArray[np.float64]) -> None:
    """‖x − x*‖∞ ≤ 4n κ∞(A) eps ‖x*‖∞ per system, x* = numpy's solution."""
    n = matrices.shape[-1]
    exact = np.linalg.solve(matrices, right[..., None])[..., 0]
    for A, x, x_star in zip(matrices, solutions, exact):
        bound = 4 * n * np.linalg.cond(A, np.inf) * EPS * np.max(np.abs(x_star))
        assert np.max(np.abs(x - x_star)) <= bound


def test_alone_and_batched_solve_the_systems() -> None:
    matrices, right = batch_of_systems(40)
    alone = np.stack([lu_solve(lu_factor(jnp.asarray(A)), jnp.asarray(r)) for A, r in zip(matrices[:4], right[:4])])
    batched = np.asarray(jax.jit(jax.vmap(lambda A, r: lu_solve(lu_factor(A), r)))(matrices, right))
    assert_solves(matrices[:4], right[:4], alone)
    assert_solves(matrices, right, batched)


def test_one_matrix_many_right_hand_sides_and_nested_batches() -> None:
    matrices, right = batch_of_systems(12)
    factors = lu_factor(jnp.asarray(matrices[0]))
    shared = np.asarray(jax.vmap(lu_solve, in_axes=(None, 0))(factors, right))
    assert_solves(np.broadcast_to(matrices[0], matrices.shape), right, shared)
    nested = jax.vmap(jax.vmap(lambda A, r: lu_solve(lu_factor(A), r)))(
        matrices.reshape(3, 4, 16, 16), right.reshape(3, 4, 16))
    assert_solves(matrices, right, np.asarray(nested).reshape(12, 16))
