"""Newton's LU solve, alone and under vmap, for small systems (loops in XLA) and larger ones
(LAPACK, substitutions over a batch), and the differentiable ``solve``, against numpy's solve within
the forward-error bound of LU with partial pivoting."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.typing import NDArray

from liemech.numerics.lu import LAPACK_CHUNK_WORK, SMALL_SYSTEM, lu_factor, lu_solve, lu_solve_transposed, solve

EPS = float(np.finfo(np.float64).eps)
SIZES = pytest.mark.parametrize("n", [16, SMALL_SYSTEM + 8], ids=["loops", "lapack"])


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


@SIZES
def test_alone_and_batched_solve_the_systems(n: int) -> None:
    matrices, right = batch_of_systems(40, n)
    alone = np.stack([lu_solve(lu_factor(jnp.asarray(A)), jnp.asarray(r)) for A, r in zip(matrices[:4], right[:4])])
    batched = np.asarray(jax.jit(jax.vmap(lambda A, r: lu_solve(lu_factor(A), r)))(matrices, right))
    assert_solves(matrices[:4], right[:4], alone)
    assert_solves(matrices, right, batched)


@SIZES
def test_one_matrix_many_right_hand_sides_and_nested_batches(n: int) -> None:
    matrices, right = batch_of_systems(12, n)
    factors = lu_factor(jnp.asarray(matrices[0]))
    shared = np.asarray(jax.vmap(lu_solve, in_axes=(None, 0))(factors, jnp.asarray(right)))
    assert_solves(np.broadcast_to(matrices[0], matrices.shape), right, shared)
    nested = jax.vmap(jax.vmap(lambda A, r: lu_solve(lu_factor(A), r)))(
        matrices.reshape(3, 4, n, n), right.reshape(3, 4, n))
    assert_solves(matrices, right, np.asarray(nested).reshape(12, n))
    columns = np.asarray(lu_solve(factors, jnp.asarray(right.T)))
    assert_solves(np.broadcast_to(matrices[0], matrices.shape), right, columns.T)


@SIZES
def test_transposed_solve_alone_and_batched(n: int) -> None:
    matrices, right = batch_of_systems(40, n)
    transposed = np.swapaxes(matrices, -1, -2)
    alone = np.stack([lu_solve_transposed(lu_factor(jnp.asarray(A)), jnp.asarray(r))
                      for A, r in zip(matrices[:4], right[:4])])
    batched = np.asarray(jax.jit(jax.vmap(lambda A, r: lu_solve_transposed(lu_factor(A), r)))(matrices, right))
    shared = np.asarray(jax.vmap(lu_solve_transposed, in_axes=(None, 0))(lu_factor(jnp.asarray(matrices[0])), jnp.asarray(right)))
    assert_solves(transposed[:4], right[:4], alone)
    assert_solves(transposed, right, batched)
    assert_solves(np.broadcast_to(transposed[0], transposed.shape), right, shared)
    columns = np.asarray(lu_solve_transposed(lu_factor(jnp.asarray(matrices[0])), jnp.asarray(right.T)))
    assert_solves(np.broadcast_to(transposed[0], transposed.shape), right, columns.T)


def test_batched_factorisation_stays_below_the_split_of_jaxlib() -> None:
    """Every batched LAPACK call does at most LAPACK_CHUNK_WORK flops (a larger one jaxlib spreads
    over XLA's thread pool, which can hang), and the chunks give the same solutions."""
    n = SMALL_SYSTEM + 4
    chunk = LAPACK_CHUNK_WORK // n**3  # 2
    matrices, right = batch_of_systems(4 * chunk + 1, n)
    factor_and_solve = jax.jit(jax.vmap(lambda A, r: lu_solve(lu_factor(A), r)))
    text = factor_and_solve.lower(matrices, right).as_text()
    batches = [int(size) for size in re.findall(rf"lapack_dgetrf_ffi\(%\w+\) .*?tensor<(\d+)x{n}x{n}xf64>", text)]
    assert sorted(batches) == [1] + [chunk] * 4
    assert max(batches) * n**3 <= LAPACK_CHUNK_WORK
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


def test_small_systems_call_no_library_and_larger_ones_lapack() -> None:
    """A step's loops compile into one kernel only where they call no library (``xla_options``)."""
    for n, library in ((SMALL_SYSTEM, False), (SMALL_SYSTEM + 1, True)):
        matrices, right = batch_of_systems(2, n)
        program = jax.jit(lambda A, r: (lu_solve(lu_factor(A), r), lu_solve_transposed(lu_factor(A), r)))
        alone = program.lower(matrices[0], right[0]).compile().as_text()
        batched = jax.jit(jax.vmap(program)).lower(matrices, right).compile().as_text()
        assert ("custom_call" in str(alone)) == library and ("custom_call" in str(batched)) == library
