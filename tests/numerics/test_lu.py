"""Newton's LU solve, alone (LAPACK) and under vmap (substitutions over the batch), the
differentiable ``solve``, and the inverse of small systems (Gauss–Jordan in XLA's operations),
against numpy within the forward-error bounds of elimination with partial pivoting."""

import re

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from liemech.numerics.lu import (
    LAPACK_CHUNK_WORK, SMALL_SYSTEM, approximate_inverse, batched, inverse, inverse_unpivoted, lu_factor, lu_solve,
    lu_solve_transposed, solve)

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


def test_transposed_solve_alone_and_batched() -> None:
    matrices, right = batch_of_systems(40)
    transposed = np.swapaxes(matrices, -1, -2)
    alone = np.stack([lu_solve_transposed(lu_factor(jnp.asarray(A)), jnp.asarray(r))
                      for A, r in zip(matrices[:4], right[:4])])
    batched = np.asarray(jax.jit(jax.vmap(lambda A, r: lu_solve_transposed(lu_factor(A), r)))(matrices, right))
    shared = np.asarray(jax.vmap(lu_solve_transposed, in_axes=(None, 0))(lu_factor(jnp.asarray(matrices[0])), right))
    assert_solves(transposed[:4], right[:4], alone)
    assert_solves(transposed, right, batched)
    assert_solves(np.broadcast_to(transposed[0], transposed.shape), right, shared)


def test_batched_factorisation_stays_below_the_split_of_jaxlib() -> None:
    """Every batched LAPACK call does at most LAPACK_CHUNK_WORK flops (a larger one jaxlib spreads
    over XLA's thread pool, which can hang), and the chunks give the same solutions."""
    matrices, right = batch_of_systems(100)  # 100 · 16³ flops: four chunks of 24
    factor_and_solve = jax.jit(jax.vmap(lambda A, r: lu_solve(lu_factor(A), r)))
    text = factor_and_solve.lower(matrices, right).as_text()
    batches = [int(size) for size in re.findall(r"lapack_dgetrf_ffi\(%\w+\) .*?tensor<(\d+)x16x16xf64>", text)]
    assert sorted(batches) == [4, 24, 24, 24, 24]
    assert max(batches) * 16**3 <= LAPACK_CHUNK_WORK
    assert_solves(matrices, right, np.asarray(factor_and_solve(matrices, right)))


def test_solve_and_its_derivatives_against_closed_forms() -> None:
    """x = A⁻¹b for vector and matrix b, alone and batched; dx = A⁻¹(db − dA x) forward and reverse."""
    matrices, right = batch_of_systems(6, n=5)
    columns = np.random.default_rng(5).standard_normal((6, 5, 3))
    assert_solves(matrices, right, np.asarray(jax.vmap(solve)(matrices, right)))
    for k in range(3):
        assert_solves(matrices, columns[..., k], np.asarray(jax.vmap(solve)(matrices, columns))[..., k])
    A, b = jnp.asarray(matrices[1]), jnp.asarray(right[1])
    assert_solves(matrices[1:2], right[1:2], np.asarray(solve(A, b))[None])
    x = np.linalg.solve(matrices[1], right[1])
    dA, db = np.random.default_rng(6).standard_normal((5, 5)), np.random.default_rng(7).standard_normal(5)
    expected = np.linalg.solve(matrices[1], db - dA @ x)
    _, tangent = jax.jvp(solve, (A, b), (jnp.asarray(dA), jnp.asarray(db)))
    np.testing.assert_allclose(tangent, expected, rtol=1e-10, atol=1e-12)
    weights = np.arange(1.0, 6.0)
    grad_A, grad_b = jax.grad(lambda A, b: jnp.asarray(weights) @ solve(A, b), argnums=(0, 1))(A, b)
    adjoint = np.linalg.solve(matrices[1].T, weights)  # ∂(wᵀx)/∂b = A⁻ᵀw, ∂/∂A = −A⁻ᵀw xᵀ
    np.testing.assert_allclose(grad_b, adjoint, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad_A, -np.outer(adjoint, x), rtol=1e-10, atol=1e-12)
    batched_grad = jax.vmap(jax.grad(lambda A, b: jnp.asarray(weights) @ solve(A, b), argnums=1))(matrices, right)
    np.testing.assert_allclose(batched_grad[1], adjoint, rtol=1e-10, atol=1e-12)
    with batched():  # an ensemble's batch: LAPACK's factors, the same values
        np.testing.assert_allclose(jax.grad(lambda A, b: jnp.asarray(weights) @ solve(A, b), argnums=1)(A, b),
                                   adjoint, rtol=1e-10, atol=1e-12)
    # a small system and its derivatives call no library (its inverse); a large one LAPACK's factors
    small = jax.jit(jax.grad(lambda A, b: jnp.asarray(weights) @ solve(A, b), argnums=(0, 1))).lower(A, b)
    assert "custom_call" not in str(small.compile().as_text())
    large, _ = batch_of_systems(1, SMALL_SYSTEM + 1)
    program = jax.jit(solve).lower(large[0], np.ones(SMALL_SYSTEM + 1)).compile().as_text()
    assert "custom_call" in str(program)


def test_inverse_alone_and_batched_and_without_library_calls() -> None:
    """‖X − A⁻¹‖∞ ≤ 4n κ∞(A) eps ‖A⁻¹‖∞ per matrix (the first needs a row swap at once); a
    singular matrix gives non-finite entries; the compiled program calls no library, alone or
    batched (so that a loop around it can be one kernel, ``liemech.xla_options``)."""
    matrices, _ = batch_of_systems(20, SMALL_SYSTEM)
    alone = np.asarray(jax.jit(inverse)(matrices[0]))
    batched = np.asarray(jax.jit(jax.vmap(inverse))(matrices))
    for A, X in zip(matrices, batched):
        exact = np.linalg.inv(A)
        bound = 4 * SMALL_SYSTEM * np.linalg.cond(A, np.inf) * EPS * np.max(np.sum(np.abs(exact), axis=1))
        assert np.max(np.abs(X - exact)) <= bound
    np.testing.assert_array_equal(alone, batched[0])
    singular = matrices[1].copy()
    singular[:, 4] = 0.0
    assert not np.all(np.isfinite(np.asarray(inverse(jnp.asarray(singular)))))
    for program in (jax.jit(inverse).lower(matrices[0]), jax.jit(jax.vmap(inverse)).lower(matrices)):
        assert "custom_call" not in str(program.compile().as_text())


def smallest_pivot_ratio(A: NDArray[np.float64]) -> float:
    """min over k of |a_kk| / max_{i≥k} |a_ik| in Gaussian elimination without row swaps (numpy)."""
    a, smallest = A.copy(), 1.0
    for k in range(a.shape[0]):
        smallest = min(smallest, abs(a[k, k]) / np.max(np.abs(a[k:, k])))
        a[k + 1:] -= np.outer(a[k + 1:, k] / a[k, k], a[k])
    return smallest


def test_inverse_without_pivoting_and_its_smallest_pivot_ratio() -> None:
    """Column diagonally dominant matrices (which elimination keeps so: partial pivoting would swap
    no row, ratio 1) and general ones (ratio < 1): X within 4n κ∞(A) eps ‖A⁻¹‖∞ · (1/ratio) of
    numpy's inverse, the ratio that of an elimination written out in numpy; a vanishing first pivot
    gives no positive ratio (0, or NaN once the eliminated entries are) and non-finite entries,
    whatever the matrix's rank."""
    rng = np.random.default_rng(23)
    n = 12
    general = rng.standard_normal((4, n, n))
    dominant = general + np.diag(np.sum(np.abs(general), axis=1).max(axis=0) + 1.0)
    for A in (*dominant, *general):
        X, ratio = (np.asarray(leaf) for leaf in jax.jit(inverse_unpivoted)(jnp.asarray(A)))
        exact = np.linalg.inv(A)
        assert abs(ratio - smallest_pivot_ratio(A)) <= 1e-12
        bound = 4 * n * np.linalg.cond(A, np.inf) * EPS * np.max(np.sum(np.abs(exact), axis=1)) / ratio
        assert np.max(np.abs(X - exact)) <= bound
    assert all(float(inverse_unpivoted(jnp.asarray(A))[1]) == 1.0 for A in dominant)
    swapped = general[0].copy()
    swapped[0, 0] = 0.0
    singular_inverse, singular_ratio = inverse_unpivoted(jnp.asarray(swapped))
    assert not float(singular_ratio) > 0.0 and not np.all(np.isfinite(np.asarray(singular_inverse)))


def test_approximate_inverse_pivots_only_where_a_pivot_is_small() -> None:
    """Newton's inverse for unknowns laid out with their multipliers last: without pivoting where
    every pivot ratio passes (a column diagonally dominant matrix, ratio 1), with partial pivoting
    where one does not (a KKT matrix with its multipliers first: its first pivot is zero), each
    exactly the inverse that path computes alone; the latter within the bound of
    ``test_inverse_alone_and_batched_and_without_library_calls``."""
    rng = np.random.default_rng(29)
    n = 9
    A = rng.standard_normal((n, n))
    dominant = A + np.diag(np.sum(np.abs(A), axis=0) + 1.0)
    G = rng.standard_normal((3, n - 3))
    kkt = np.block([[np.zeros((3, 3)), G], [G.T, 4.0 * np.eye(n - 3)]])
    approximate = jax.jit(approximate_inverse)
    np.testing.assert_array_equal(np.asarray(approximate(dominant)), np.asarray(inverse_unpivoted(jnp.asarray(dominant))[0]))
    np.testing.assert_array_equal(np.asarray(approximate(kkt)), np.asarray(jax.jit(inverse)(kkt)))
    exact = np.linalg.inv(kkt)
    bound = 4 * n * np.linalg.cond(kkt, np.inf) * EPS * np.max(np.sum(np.abs(exact), axis=1))
    assert np.max(np.abs(np.asarray(approximate(kkt)) - exact)) <= bound
