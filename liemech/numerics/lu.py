"""LU factors and linear solves for the compiled steps, fast and safe on batches as well as alone.

Systems of up to ``SMALL_SYSTEM`` unknowns (a step's Newton system on a few bodies, a mass
matrix, a Cayley map) are factorised and solved by loops written here in XLA's operations: a step
then calls no library, and XLA compiles its loops, Newton's and the time loop around it, into one
kernel each (``liemech.xla_options``). Larger systems are LAPACK's; under ``jax.vmap`` (an
ensemble, a batch of flows) two things change for them:

* the solve: XLA's CPU backend would call LAPACK once per matrix, and for the small systems of a
  step (tens of unknowns) the calls cost several times their arithmetic (0.6 µs per member for a
  16 × 16 system against 0.11 µs for the substitutions written out as elementwise operations on
  the whole batch, which XLA fuses into one loop). Both compute x = U⁻¹ L⁻¹ P r with the same
  factors, so they differ only in round-off.
* the factorisation runs in chunks of at most ``LAPACK_CHUNK_WORK`` flops. jaxlib (0.10) splits a
  batched LAPACK call of more work than that over XLA's thread pool and blocks until the pieces
  finish; when the call itself runs on a pool thread and no other thread is free, the pieces never
  start and the process hangs (seen with 256 members of a nonholonomic ensemble on two cores).

``solve`` puts every linear solve of a step (Newton's tangent, the mass matrix, the Cayley map)
on these factors, differentiable through ``lax.custom_linear_solve``.
"""

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap
from jax.typing import ArrayLike

SMALL_SYSTEM = 32
"""The largest n whose n × n systems are factorised and solved by XLA loops instead of LAPACK."""

LAPACK_CHUNK_WORK = 100_000
"""Flops of one batched LAPACK call (n³ per n × n factorisation); half of jaxlib's threshold
(2e5) above which it splits a call over its thread pool."""


class LUFactors(NamedTuple):
    """P J = L U: ``lu`` holds L (unit lower, below the diagonal) and U; ``pivots`` LAPACK's row
    swaps, ``permutation`` the rows of P as indices."""

    lu: jax.Array
    pivots: jax.Array
    permutation: jax.Array


def lu_factor(matrix: jax.Array) -> LUFactors:
    """The LU factorisation with partial pivoting of a square ``matrix``."""
    return _factor_in_loop(matrix) if matrix.shape[-1] <= SMALL_SYSTEM else _lapack_factor(matrix)


def lu_solve(factors: LUFactors, r: jax.Array) -> jax.Array:
    """x with J x = r (a vector or a matrix of columns), from the factors of J."""
    if factors.lu.shape[-1] <= SMALL_SYSTEM:
        return _substitute_in_loop(factors, r, transposed=False)
    out: jax.Array = _lapack_solve(factors, r)
    return out


def lu_solve_transposed(factors: LUFactors, r: jax.Array) -> jax.Array:
    """x with Jᵀ x = r (a vector or a matrix of columns), from the factors of J."""
    if factors.lu.shape[-1] <= SMALL_SYSTEM:
        return _substitute_in_loop(factors, r, transposed=True)
    out: jax.Array = _lapack_solve_transposed(factors, r)
    return out


@custom_vmap
def _lapack_factor(matrix: jax.Array) -> LUFactors:
    return LUFactors(*jax.lax.linalg.lu(matrix))


@_lapack_factor.def_vmap
def _lu_factor_batched(axis_size: int, in_batched: list[bool], matrix: jax.Array) -> tuple[LUFactors, LUFactors]:
    # The rule runs only for a batched argument, and ``matrix`` is the only one.
    n = matrix.shape[-1]
    chunk = max(1, LAPACK_CHUNK_WORK // n**3)
    # Separate calls, not a loop: XLA may run them side by side, none blocks on the others.
    pieces = [jax.lax.linalg.lu(matrix[start:start + chunk]) for start in range(0, axis_size, chunk)]
    factors = LUFactors(*(jnp.concatenate(leaves) for leaves in zip(*pieces)))
    return factors, LUFactors._make([True] * 3)


@custom_vmap
def _lapack_solve(factors: LUFactors, r: jax.Array) -> jax.Array:
    out: jax.Array = jax.scipy.linalg.lu_solve((factors.lu, factors.pivots), r)
    return out


@custom_vmap
def _lapack_solve_transposed(factors: LUFactors, r: jax.Array) -> jax.Array:
    out: jax.Array = jax.scipy.linalg.lu_solve((factors.lu, factors.pivots), r, trans=1)
    return out


BatchRule = Callable[[int, list[object], LUFactors, jax.Array], tuple[jax.Array, bool]]
Entry = Callable[[int, int], jax.Array]


def _batched_solve(transposed: bool) -> BatchRule:
    """The batching rule of the (transposed) solve: substitutions over the whole batch."""

    def rule(axis_size: int, in_batched: list[object], factors: LUFactors, r: jax.Array) -> tuple[jax.Array, bool]:
        def batched(leaf: jax.Array, is_batched: object) -> jax.Array:
            return leaf if is_batched else jnp.broadcast_to(leaf, (axis_size, *leaf.shape))

        r = batched(r, in_batched[1])
        if not any(jax.tree.leaves(in_batched[0])):
            # One matrix, many right-hand sides (a derivative along many tangents): one solve with the
            # members as columns, which an enclosing vmap batches by this rule again.
            columns = jnp.moveaxis(r, 0, -1).reshape(r.shape[1], -1)
            solved = (_lapack_solve_transposed if transposed else _lapack_solve)(factors, columns)
            return jnp.moveaxis(solved.reshape(*r.shape[1:], axis_size), -1, 0), True
        factors = jax.tree.map(batched, factors, in_batched[0])
        if r.ndim == factors.lu.ndim:  # columns: each is a right-hand side of its member's matrix
            factors = jax.tree.map(lambda leaf: jnp.expand_dims(leaf, 1), factors)
            return jnp.moveaxis(_substitute(factors, jnp.moveaxis(r, -1, 1), transposed), 1, -1), True
        return _substitute(factors, r, transposed), True

    return rule


_lapack_solve.def_vmap(_batched_solve(transposed=False))
_lapack_solve_transposed.def_vmap(_batched_solve(transposed=True))


def solve(matrix: ArrayLike, rhs: ArrayLike) -> jax.Array:
    """x with A x = b (b a vector or a matrix of columns): ``jnp.linalg.solve`` with the factors and
    solves above, differentiable in A and b in forward and reverse mode (``lax.custom_linear_solve``:
    dx = A⁻¹(db − dA x))."""
    matrix, rhs = jnp.asarray(matrix), jnp.asarray(rhs)
    factors = lu_factor(jax.lax.stop_gradient(matrix))
    out: jax.Array = jax.lax.custom_linear_solve(
        lambda x: matrix @ x, rhs, solve=lambda _, r: lu_solve(factors, r),
        transpose_solve=lambda _, r: lu_solve_transposed(factors, r))
    return out


def _substitute(factors: LUFactors, r: jax.Array, transposed: bool) -> jax.Array:
    """x = U⁻¹ L⁻¹ P r (or x = Pᵀ L⁻ᵀ U⁻ᵀ r), row by row over any leading batch axes."""
    lu, n = factors.lu, factors.lu.shape[-1]
    if transposed:
        y = _forward(lambda i, j: lu[..., j, i], [r[..., i] for i in range(n)], lambda i: lu[..., i, i])
        z = _backward(lambda i, j: lu[..., j, i], y, None)
        inverse = jnp.argsort(factors.permutation, axis=-1)
        return jnp.take_along_axis(jnp.stack(z, axis=-1), inverse, axis=-1)
    b = jnp.take_along_axis(r, factors.permutation, axis=-1)
    y = _forward(lambda i, j: lu[..., i, j], [b[..., i] for i in range(n)], None)
    return jnp.stack(_backward(lambda i, j: lu[..., i, j], y, lambda i: lu[..., i, i]), axis=-1)


def _forward(entry: Entry, b: list[jax.Array], diagonal: Callable[[int], jax.Array] | None) -> list[jax.Array]:
    """y with T y = b for T lower triangular (entries ``entry(i, j)``, j < i; unit diagonal if None)."""
    y: list[jax.Array] = []
    for i, y_i in enumerate(b):
        for j in range(i):
            y_i = y_i - entry(i, j) * y[j]
        y.append(y_i if diagonal is None else y_i / diagonal(i))
    return y


def _backward(entry: Entry, y: list[jax.Array], diagonal: Callable[[int], jax.Array] | None) -> list[jax.Array]:
    """x with T x = y for T upper triangular (entries ``entry(i, j)``, j > i; unit diagonal if None)."""
    n = len(y)
    x: dict[int, jax.Array] = {}
    for i in reversed(range(n)):
        x_i = y[i]
        for j in range(i + 1, n):
            x_i = x_i - entry(i, j) * x[j]
        x[i] = x_i if diagonal is None else x_i / diagonal(i)
    return [x[i] for i in range(n)]


def _factor_in_loop(matrix: jax.Array) -> LUFactors:
    """LAPACK's getrf (P J = L U, partial pivoting) as a loop over the columns: at column k the
    largest entry on or below the diagonal is swapped onto it, and the multipliers below it
    eliminate the column. Rows are swapped by selections, never scattered, so the loop stays one
    of the operations XLA compiles into a single kernel, under ``vmap`` too (``xla_options``)."""
    n = matrix.shape[-1]
    index = jnp.arange(n)

    def eliminate(k: jax.Array, factors: LUFactors) -> LUFactors:
        m, pivots, permutation = factors
        column = jax.lax.dynamic_index_in_dim(m, k, axis=1, keepdims=False)
        p = jnp.argmax(jnp.where(index >= k, jnp.abs(column), -1.0)).astype(pivots.dtype)
        at_k, at_p = index == k, index == p
        row_k, row_p = (jax.lax.dynamic_index_in_dim(m, i, keepdims=False) for i in (k, p))
        m = jnp.where(at_k[:, None], row_p, jnp.where(at_p[:, None], row_k, m))
        permutation = jnp.where(at_k, permutation[p], jnp.where(at_p, permutation[k], permutation))
        below = index > k
        multipliers = jnp.where(below, jnp.where(at_p, column[k], column) / column[p], 0.0)
        m = m - multipliers[:, None] * jnp.where(below, row_p, 0.0)[None, :]
        m = jnp.where(below[:, None] & at_k[None, :], multipliers[:, None], m)
        return LUFactors(m, jnp.where(at_k, p, pivots), permutation)

    start = LUFactors(matrix, jnp.zeros(n, jnp.int32), index.astype(jnp.int32))
    factors: LUFactors = jax.lax.fori_loop(0, n, eliminate, start)
    return factors


def _substitute_in_loop(factors: LUFactors, r: jax.Array, transposed: bool) -> jax.Array:
    """x = U⁻¹ L⁻¹ P r, or x = Pᵀ L⁻ᵀ U⁻ᵀ r, by substitution loops over the rows (r a vector or
    a matrix of columns); like ``_factor_in_loop``, without scatters."""
    lu, n = factors.lu, factors.lu.shape[-1]
    index = jnp.arange(n)
    by_row = index.reshape(n, *[1] * (r.ndim - 1))
    triangle = lu.T if transposed else lu

    def substitute(b: jax.Array, lower: bool, unit: bool) -> jax.Array:
        def row(step: jax.Array, x: jax.Array) -> jax.Array:
            i = step if lower else n - 1 - step
            entries = jax.lax.dynamic_index_in_dim(triangle, i, keepdims=False)
            known = (index < i) if lower else (index > i)
            value = jax.lax.dynamic_index_in_dim(b, i, keepdims=False) - jnp.sum(
                jnp.where(known, entries, 0.0).reshape(by_row.shape) * x, axis=0)
            updated: jax.Array = jax.lax.dynamic_update_index_in_dim(x, value if unit else value / entries[i], i, 0)
            return updated

        x: jax.Array = jax.lax.fori_loop(0, n, row, jnp.zeros_like(b))
        return x

    # P has rows e_{permutation[i]}: P r = r[permutation], Pᵀ w sums the rows of w into place.
    chosen = factors.permutation[:, None] == index[None, :]
    if transposed:
        w = substitute(substitute(r, lower=True, unit=False), lower=False, unit=True)
        return jnp.sum(jnp.where(chosen.reshape(n, n, *by_row.shape[1:]), w[:, None], 0.0), axis=0)
    b = jnp.sum(jnp.where(chosen.reshape(n, n, *by_row.shape[1:]), r[None, :], 0.0), axis=1)
    return substitute(substitute(b, lower=True, unit=True), lower=False, unit=False)
