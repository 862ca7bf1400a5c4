"""LU factors and linear solves for the compiled steps, fast and safe on batches as well as alone.

Newton's systems of up to ``SMALL_SYSTEM`` unknowns (a step on a few bodies), and a step's other
solves of that size (``solve``), are inverted instead (``inverse``), by a loop in XLA's own
operations: such a step calls no library, which lets XLA compile its Newton loop, and the time
loop around it, into one kernel each (``liemech.xla_options``).

Alone, factorisation and solve are LAPACK's. Under ``jax.vmap`` (an ensemble, a batch of flows)
two things change:

* the solve: XLA's CPU backend would call LAPACK once per matrix, and for the small systems of a
  step (tens of unknowns) the calls cost several times their arithmetic, so the substitutions are
  written out as elementwise operations on the whole batch, which XLA fuses into one loop. Both
  compute x = U⁻¹ L⁻¹ P r with the same factors, so they differ only in round-off.
* the factorisation runs in chunks of at most ``LAPACK_CHUNK_WORK`` flops. jaxlib (0.10) splits a
  batched LAPACK call of more work than that over XLA's thread pool and blocks until the pieces
  finish; when the call itself runs on a pool thread and no other thread is free, the pieces never
  start and the process hangs (seen with 256 members of a nonholonomic ensemble on two cores).

``solve`` puts every linear solve of a step (Newton's tangent, the mass matrix, the Cayley map)
on these factors, differentiable through ``lax.custom_linear_solve``.
"""

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap
from jax.typing import ArrayLike

SMALL_SYSTEM = 32
"""The largest n whose n × n Newton systems are inverted by ``inverse`` instead of factorised by LAPACK."""

_BATCHED: ContextVar[bool] = ContextVar("batched", default=False)


@contextlib.contextmanager
def batched() -> Iterator[None]:
    """Within (while an ensemble's step is traced), Newton factorises small systems by LAPACK too:
    its members, batched, amortise XLA's cost per kernel, and LAPACK's batched factors with the
    substitutions below cost less than a batch of eliminations."""
    token = _BATCHED.set(True)
    try:
        yield
    finally:
        _BATCHED.reset(token)


def in_batch() -> bool:
    """Whether an ensemble's batched step is being traced (``batched``)."""
    return _BATCHED.get()


def inverts(n: int) -> bool:
    """Whether Newton inverts its n × n systems (``inverse``) rather than factorising them."""
    return n <= SMALL_SYSTEM and not _BATCHED.get()

LAPACK_CHUNK_WORK = 100_000
"""Flops of one batched LAPACK call (n³ per n × n factorisation); half of jaxlib's threshold
(2e5) above which it splits a call over its thread pool."""


class LUFactors(NamedTuple):
    """P J = L U: ``lu`` holds L (unit lower, below the diagonal) and U; ``pivots`` LAPACK's row
    swaps, ``permutation`` the rows of P as indices."""

    lu: jax.Array
    pivots: jax.Array
    permutation: jax.Array


@custom_vmap
def lu_factor(matrix: jax.Array) -> LUFactors:
    """The LU factorisation with partial pivoting of a square ``matrix``."""
    return LUFactors(*jax.lax.linalg.lu(matrix))


@lu_factor.def_vmap
def _lu_factor_batched(axis_size: int, in_batched: list[bool], matrix: jax.Array) -> tuple[LUFactors, LUFactors]:
    # The rule runs only for a batched argument, and ``matrix`` is the only one.
    n = matrix.shape[-1]
    chunk = max(1, LAPACK_CHUNK_WORK // n**3)
    # Separate calls, not a loop: XLA may run them side by side, none blocks on the others.
    pieces = [jax.lax.linalg.lu(matrix[start:start + chunk]) for start in range(0, axis_size, chunk)]
    factors = LUFactors(*(jnp.concatenate(leaves) for leaves in zip(*pieces)))
    return factors, LUFactors._make([True] * 3)


@custom_vmap
def lu_solve(factors: LUFactors, r: jax.Array) -> jax.Array:
    """x with J x = r (a vector or a matrix of columns), from the factors of J."""
    out: jax.Array = jax.scipy.linalg.lu_solve((factors.lu, factors.pivots), r)
    return out


@custom_vmap
def lu_solve_transposed(factors: LUFactors, r: jax.Array) -> jax.Array:
    """x with Jᵀ x = r (a vector or a matrix of columns), from the factors of J."""
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
            solved = (lu_solve_transposed if transposed else lu_solve)(factors, columns)
            return jnp.moveaxis(solved.reshape(*r.shape[1:], axis_size), -1, 0), True
        factors = jax.tree.map(batched, factors, in_batched[0])
        if r.ndim == factors.lu.ndim:  # columns: each is a right-hand side of its member's matrix
            factors = jax.tree.map(lambda leaf: jnp.expand_dims(leaf, 1), factors)
            return jnp.moveaxis(_substitute(factors, jnp.moveaxis(r, -1, 1), transposed), 1, -1), True
        return _substitute(factors, r, transposed), True

    return rule


lu_solve.def_vmap(_batched_solve(transposed=False))
lu_solve_transposed.def_vmap(_batched_solve(transposed=True))


def solve(matrix: ArrayLike, rhs: ArrayLike) -> jax.Array:
    """x with A x = b (b a vector or a matrix of columns): ``jnp.linalg.solve`` with the factors and
    solves above, or for a system that Newton would invert (``inverts``: up to ``SMALL_SYSTEM``
    unknowns, outside an ensemble's batch) with A⁻¹ (``inverse``), so that a program around it
    calls no library and XLA compiles it into one kernel. Differentiable in A and b in forward and
    reverse mode (``lax.custom_linear_solve``: dx = A⁻¹(db − dA x))."""
    matrix, rhs = jnp.asarray(matrix), jnp.asarray(rhs)
    constant = jax.lax.stop_gradient(matrix)
    if inverts(constant.shape[-1]):
        inverted = inverse(constant)
        solve_with: Callable[[jax.Array], jax.Array] = lambda r: inverted @ r
        transposed: Callable[[jax.Array], jax.Array] = lambda r: inverted.T @ r
    else:
        factors = lu_factor(constant)
        solve_with, transposed = (lambda r: lu_solve(factors, r)), (lambda r: lu_solve_transposed(factors, r))
    out: jax.Array = jax.lax.custom_linear_solve(
        lambda x: matrix @ x, rhs, solve=lambda _, r: solve_with(r), transpose_solve=lambda _, r: transposed(r))
    return out


def inverse(matrix: jax.Array) -> jax.Array:
    """A⁻¹ by Gauss–Jordan elimination with partial pivoting, [A | I] → [I | A⁻¹]: at column k the
    row with the largest entry on or below the diagonal is swapped onto it, divided by its pivot and
    subtracted from every other row. A loop over the columns in XLA's operations, rows swapped by
    selections rather than scattered: XLA compiles it, and a loop around it that calls no library,
    into one kernel, alone and under ``vmap``. A zero pivot (a singular A) gives non-finite entries.
    Its error is that of LU's solves, O(κ(A) eps) relative."""
    n = matrix.shape[-1]
    rows = jnp.arange(n)

    def eliminate(k: jax.Array, augmented: jax.Array) -> jax.Array:
        column = jax.lax.dynamic_index_in_dim(augmented, k, axis=1, keepdims=False)
        p = jnp.argmax(jnp.where(rows >= k, jnp.abs(column), -1.0))
        row_k, row_p = (jax.lax.dynamic_index_in_dim(augmented, i, keepdims=False) for i in (k, p))
        pivot_row = row_p / column[p]
        swapped = jnp.where((rows == p)[:, None], row_k, augmented)
        multipliers = jnp.where(rows == p, column[k], column)
        eliminated = swapped - multipliers[:, None] * pivot_row[None, :]
        return jnp.where((rows == k)[:, None], pivot_row, eliminated)

    augmented = jnp.concatenate([matrix, jnp.eye(n, dtype=matrix.dtype)], axis=1)
    out: jax.Array = jax.lax.fori_loop(0, n, eliminate, augmented)[:, n:]
    return out


def inverse_unpivoted(matrix: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A⁻¹ by Gauss–Jordan elimination in place, pivoting on the diagonal in order, and the
    smallest ratio |a_kk| / max_{i≥k} |a_ik| met (1 where partial pivoting would have kept every
    pivot; 0 or NaN where a pivot vanished). Pivot k scales row k by 1/a_kk, stores 1/a_kk in its
    place, and subtracts a_ik times the row from every other row i, whose column k becomes
    −a_ik/a_kk: half ``inverse``'s entries, and no pivot search or row swap, which take a good part
    of its time. Its multipliers are bounded by 1/ratio, and its error grows with them; a caller
    that needs an accurate inverse keeps ``inverse``, or checks the ratio."""
    n = matrix.shape[-1]
    rows = jnp.arange(n)

    def eliminate(k: jax.Array, state: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        a, smallest = state
        column = jax.lax.dynamic_index_in_dim(a, k, axis=1, keepdims=False)
        row_k = jax.lax.dynamic_index_in_dim(a, k, keepdims=False)
        pivot = column[k]
        smallest = jnp.minimum(smallest, jnp.abs(pivot) / jnp.max(jnp.where(rows >= k, jnp.abs(column), 0.0)))
        is_k = rows == k
        pivot_row = jnp.where(is_k, 1.0, row_k) / pivot
        eliminated = jnp.where(is_k[None, :], 0.0, a) - jnp.where(is_k, 0.0, column)[:, None] * pivot_row[None, :]
        return jnp.where(is_k[:, None], pivot_row[None, :], eliminated), smallest

    inverted, smallest = jax.lax.fori_loop(0, n, eliminate, (matrix, jnp.ones((), matrix.dtype)))
    return inverted, smallest


PIVOT_RATIO = 1e-6
"""An elimination without pivoting is kept where every pivot was at least this fraction of the
largest entry on or below it in its column, every multiplier of the elimination at most
1/``PIVOT_RATIO`` (``approximate_inverse``, ``block_tree.tree_factor``)."""


def pivots_pass(ratios: jax.Array, inverses: jax.Array) -> jax.Array:
    """Whether inverses without pivoting are kept: every pivot ratio at least ``PIVOT_RATIO`` and
    every entry finite."""
    return jnp.all(ratios >= PIVOT_RATIO) & jnp.all(jnp.isfinite(inverses))


def approximate_inverse(matrix: jax.Array) -> jax.Array:
    """A⁻¹ for a simplified Newton iteration, which needs its Jacobian only approximately (the
    solution's residual is evaluated exactly; a less accurate inverse only contracts more slowly):
    ``inverse_unpivoted`` where every pivot passed ``PIVOT_RATIO``, else ``inverse``. For a caller
    whose unknowns have their multipliers last, so that the leading blocks are regular."""
    unpivoted, ratio = inverse_unpivoted(matrix)
    inverted: jax.Array = jax.lax.cond(pivots_pass(ratio, unpivoted), lambda: unpivoted, lambda: inverse(matrix))
    return inverted


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
