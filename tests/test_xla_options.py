"""liemech's top-level programs are compiled without YNNPACK's dot fusions (``liemech.xla_options``):
the option is known to this jaxlib, and a program of small products compiled with it has none of
the fused library calls that plain ``jax.jit`` makes of them."""

import jax
import jax.numpy as jnp
import numpy as np

from liemech.xla_options import WANTED, compiler_options, jit


def products(a: jax.Array) -> jax.Array:
    """Products of a 12 × 12 matrix's functions, which XLA hands to YNNPACK by default."""
    return (jnp.sin(a) @ jnp.cos(a)) @ jnp.tanh(a)


def test_this_jaxlib_takes_the_options_and_the_small_products_leave_ynnpack() -> None:
    assert compiler_options() == WANTED
    a = jnp.asarray(np.random.default_rng(0).normal(size=(12, 12)))
    plain = jax.jit(products).lower(a).compile().as_text()
    ours = jit(products).lower(a).compile().as_text()  # type: ignore[attr-defined]
    assert plain is not None and ours is not None
    assert "ynn_fusion" in plain and "ynn_fusion" not in ours
    expected = (np.sin(a) @ np.cos(a)) @ np.tanh(a)
    np.testing.assert_allclose(jit(products)(a), expected, rtol=0, atol=1e-12 * np.max(np.abs(expected)))
