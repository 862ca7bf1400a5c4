"""LU factors of Newton's Jacobian and the solve with them, fast on batches as well as alone.

Alone, ``lu_solve`` is LAPACK's (two triangular solves). Under ``jax.vmap`` (an ensemble) XLA's CPU
backend would call LAPACK once per matrix, and for the small systems of a step (tens of unknowns)
the calls cost several times their arithmetic: 0.6 µs per member for a 16 × 16 system against
0.11 µs for the substitutions written out as elementwise operations on the whole batch, which XLA
fuses into one loop. Both compute x = U⁻¹ L⁻¹ P r with the same factors, so they differ only in
round-off.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap


class LUFactors(NamedTuple):
    """P J = L U: ``lu`` holds L (unit lower, below the diagonal) and U; ``pivots`` LAPACK's row
    swaps, ``permutation`` the rows of P as indices."""

    lu: jax.Array
    pivots: jax.Array
    permutation: jax.Array


def lu_factor(matrix: jax.Array) -> LUFactors:
    """The LU factorisation with partial pivoting of a square ``matrix``."""
    lu, pivots, permutation = jax.lax.linalg.lu(matrix)
    return LUFactors(lu, pivots, permutation)


@custom_vmap
def lu_solve(factors: LUFactors, r: jax.Array) -> jax.Array:
    """x with J x = r, from the factors of J."""
    out: jax.Array = jax.scipy.linalg.lu_solve((factors.lu, factors.pivots), r)
    return out


@lu_solve.def_vmap
def _lu_solve_batched(axis_size: int, in_batched: list[object], factors: LUFactors,
                      r: jax.Array) -> tuple[jax.Array, bool]:
    def batched(leaf: jax.Array, is_batched: object) -> jax.Array:
        return leaf if is_batched else jnp.broadcast_to(leaf, (axis_size, *leaf.shape))

    factors = jax.tree.map(batched, factors, in_batched[0])
    return _substitute(factors, batched(r, in_batched[1])), True


def _substitute(factors: LUFactors, r: jax.Array) -> jax.Array:
    """x = U⁻¹ L⁻¹ P r by forward and back substitution, row by row over any leading batch axes."""
    lu, n = factors.lu, factors.lu.shape[-1]
    b = jnp.take_along_axis(r, factors.permutation, axis=-1)
    y: list[jax.Array] = []
    for i in range(n):
        y_i = b[..., i]
        for j in range(i):
            y_i = y_i - lu[..., i, j] * y[j]
        y.append(y_i)
    x: dict[int, jax.Array] = {}
    for i in reversed(range(n)):
        x_i = y[i]
        for j in range(i + 1, n):
            x_i = x_i - lu[..., i, j] * x[j]
        x[i] = x_i / lu[..., i, i]
    return jnp.stack([x[i] for i in range(n)], axis=-1)
