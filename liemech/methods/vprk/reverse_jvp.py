"""A function of few outputs whose forward derivative is formed by reverse mode.

Newton's Jacobian is ``jax.jacfwd`` of the step equations: one tangent per unknown. A term of
those equations with few outputs and an expensive derivative (the multiplier λ(g, μ) of the
continuous equations, m numbers built from second derivatives of the Lagrangian and the
constraints) would be differentiated along every one of those tangents. Its Jacobian by reverse
mode costs m vector–Jacobian products instead, computed once from the primal point and then
applied to each tangent as a matrix product.
"""

from collections.abc import Callable

import jax
import jax.numpy as jnp


def reverse_mode_jvp(function: Callable[..., jax.Array]) -> Callable[..., jax.Array]:
    """``function`` (positional array or pytree arguments, a vector of m values) with the JVP
    ṫ ↦ Σ_a ∂f/∂x_a · ẋ_a, where the rows of ∂f/∂x_a are m reverse-mode passes. Values and
    derivatives of every order are those of ``function``; only the cost moves."""
    wrapped = jax.custom_jvp(function)

    @wrapped.defjvp
    def _jvp(primals: tuple[object, ...], tangents: tuple[object, ...]) -> tuple[jax.Array, jax.Array]:
        value, pullback = jax.vjp(function, *primals)
        rows = jax.vmap(pullback)(jnp.eye(value.shape[0], dtype=value.dtype))
        terms = [jnp.tensordot(row, tangent, axes=tangent.ndim)
                 for row, tangent in zip(jax.tree.leaves(rows), jax.tree.leaves(tangents), strict=True)]
        return value, sum(terms, jnp.zeros_like(value))

    return wrapped
