"""liemech's top-level programs are compiled without YNNPACK's dot fusions (``liemech.xla_options``):
the option is known to this jaxlib, and a program of small products compiled with it has none of
the fused library calls that plain ``jax.jit`` makes of them, and ``lm.jit`` takes them at the top
level and nests inside every transformation (where JAX refuses them) unchanged. Importing liemech before JAX's backend
starts makes XLA compile small loops into one kernel; importing it later warns."""

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np

import liemech as lm
from liemech.xla_options import SMALL_LOOP_FLAG, WANTED, compiler_options, jit, small_loops_compiled, top_level


def products(a: jax.Array) -> jax.Array:
    """Products of a 12 × 12 matrix's functions, which XLA hands to YNNPACK by default."""
    return (jnp.sin(a) @ jnp.cos(a)) @ jnp.tanh(a)


def test_this_jaxlib_takes_the_options_and_the_small_products_leave_ynnpack() -> None:
    """jaxlib 0.10.0 keeps these products out of YNNPACK by default, 0.10.2 hands them to it: there
    plain ``jax.jit`` fuses them into library calls and liemech's option keeps them out."""
    assert compiler_options() == WANTED
    a = jnp.asarray(np.random.default_rng(0).normal(size=(12, 12)))
    plain = jax.jit(products).lower(a).compile().as_text()
    ours = jit(products).lower(a).compile().as_text()  # type: ignore[attr-defined]
    assert plain is not None and ours is not None
    assert "ynn_fusion" not in ours
    if jax.__version_info__ >= (0, 10, 2):
        assert "ynn_fusion" in plain
    expected = (np.sin(a) @ np.cos(a)) @ np.tanh(a)
    np.testing.assert_allclose(jit(products)(a), expected, rtol=0, atol=1e-12 * np.max(np.abs(expected)))


def test_lm_jit_nests_inside_transformations_with_the_same_values() -> None:
    """``lm.jit`` at the top level compiles with the options; inside jit, grad and vmap, where
    ``jax.jit`` with options raises, it compiles without them, and every value equals plain
    ``jax.jit``'s (the same products; a dot's library or XLA's loop may round differently)."""
    a = jnp.asarray(np.random.default_rng(1).normal(size=(12, 12)))
    ours = lm.jit(products)
    seen: list[bool] = []

    def probe(x: jax.Array) -> jax.Array:
        seen.append(top_level())
        return x

    probe(a)
    jax.jit(probe)(a)
    jax.grad(lambda x: jnp.sum(probe(x)))(a)
    jax.vmap(probe)(a)
    assert seen == [True, False, False, False]
    try:
        jax.jit(lambda x: jax.jit(products, compiler_options=WANTED)(x))(a)
    except ValueError as refused:
        assert "top-level" in str(refused)
    else:
        raise AssertionError("JAX took options on a nested jit: lm.jit's second compilation is no longer needed")
    tolerance = 1e-12 * float(jnp.max(jnp.abs(products(a))))
    for transformed in (lambda f: f, jax.jit, jax.vmap):
        batch = a[None] if transformed is jax.vmap else a
        np.testing.assert_allclose(transformed(ours)(batch), transformed(jax.jit(products))(batch), rtol=0,
                                   atol=tolerance)
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(ours(x)))(a), jax.grad(lambda x: jnp.sum(products(x)))(a),
                               rtol=0, atol=tolerance)


def test_small_loops_are_one_kernel_here_and_a_late_import_warns() -> None:
    """This process imported liemech before computing with JAX; a process that computes first (and
    has no XLA_FLAGS of its own) keeps XLA's default and is told so."""
    assert small_loops_compiled()
    late = ("import warnings, jax.numpy as jnp; jnp.ones(2).block_until_ready(); import liemech\n"
            "from liemech.xla_options import small_loops_compiled\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always'); print(small_loops_compiled(), [str(w.message) for w in caught])")
    env = {key: value for key, value in os.environ.items() if key != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", late], env=env, capture_output=True, text=True, check=True).stdout
    assert out.startswith("False") and "kernel by kernel" in out


def test_a_users_xla_flags_are_left_as_they_are() -> None:
    """Importing liemech sets XLA_FLAGS only where the user has not: a user's flags stay as they are
    (and the first compilation says how to add liemech's), and LIEMECH_SET_XLA_FLAGS=0 keeps the
    variable unset."""
    probe = "import os, liemech; print(repr(os.environ.get('XLA_FLAGS')))"
    base = {key: value for key, value in os.environ.items() if key not in ("XLA_FLAGS", "LIEMECH_SET_XLA_FLAGS")}
    cases = [({}, repr(SMALL_LOOP_FLAG)),
             ({"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"}, repr("--xla_cpu_enable_fast_math=false")),
             ({"LIEMECH_SET_XLA_FLAGS": "0"}, "None")]
    for extra, expected in cases:
        out = subprocess.run([sys.executable, "-c", probe], env={**base, **extra}, capture_output=True, text=True,
                             check=True).stdout
        assert out.strip() == expected, (extra, out)
