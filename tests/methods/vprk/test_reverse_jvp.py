"""A function with its JVP formed by reverse mode: values and derivatives against closed forms and
against JAX's own derivatives of the unwrapped function."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from liemech.methods.vprk.reverse_jvp import reverse_mode_jvp


def f(pair: tuple[jax.Array, jax.Array], t: jax.Array) -> jax.Array:
    """(sin(vᵀAv), t |v|²) of a pytree argument (A, v) and a scalar t."""
    A, v = pair
    return jnp.stack([jnp.sin(v @ A @ v), t * (v @ v)])


rng = np.random.default_rng(3)
A, v, t = jnp.asarray(rng.standard_normal((2, 2))), jnp.asarray(rng.standard_normal(2)), jnp.asarray(0.7)
wrapped = reverse_mode_jvp(f)


def test_first_derivatives_are_the_closed_forms() -> None:
    (dA, dv), dt = jax.jacfwd(wrapped, argnums=(0, 1))((A, v), t)
    quadratic = float(v @ A @ v)
    np.testing.assert_allclose(wrapped((A, v), t), [np.sin(quadratic), 0.7 * float(v @ v)], rtol=1e-15)
    np.testing.assert_allclose(dA, np.stack([np.cos(quadratic) * np.outer(v, v), np.zeros((2, 2))]), atol=1e-15)
    np.testing.assert_allclose(dv, np.stack([np.cos(quadratic) * (A + A.T) @ v, 2 * 0.7 * v]), atol=1e-15)
    np.testing.assert_allclose(dt, [0.0, float(v @ v)], atol=1e-15)
    reverse = jax.jacrev(wrapped, argnums=(0, 1))((A, v), t)
    for forward_leaf, reverse_leaf in zip(jax.tree.leaves(((dA, dv), dt)), jax.tree.leaves(reverse)):
        np.testing.assert_allclose(reverse_leaf, forward_leaf, atol=1e-15)


def test_second_derivatives_and_many_tangents_match_the_unwrapped_function() -> None:
    hessian = jax.hessian(lambda v: wrapped((A, v), t)[1])(v)
    np.testing.assert_allclose(hessian, 2 * 0.7 * np.eye(2), atol=1e-15)
    mixed = jax.jacfwd(jax.jacrev(lambda v, t: wrapped((A, v), t)[1], argnums=0), argnums=1)(v, t)
    np.testing.assert_allclose(mixed, 2 * v, atol=1e-15)

    def curve(function: Callable[..., jax.Array], x: jax.Array) -> jax.Array:
        """The function along a map of 10 unknowns, as in Newton's Jacobian of step equations."""
        return function((A + jnp.outer(x[:2], x[2:4]), v * x[4:6]), t + x[6:] @ x[6:])

    x = jnp.asarray(rng.standard_normal(10))
    expected = jax.jacfwd(lambda x: curve(f, x))(x)
    np.testing.assert_allclose(jax.jacfwd(lambda x: curve(wrapped, x))(x), expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.jacfwd(lambda x: curve(wrapped, x))))(jnp.stack([x, 2 * x])),
                               jnp.stack([expected, jax.jacfwd(lambda x: curve(f, x))(2 * x)]), rtol=1e-14, atol=1e-15)
