"""The XLA options liemech compiles its steps with, and ``jit``, which applies them.

XLA's CPU backend hands dot products to the YNNPACK library by default. A step's products are
small (3 × 3 rotations, blocks of a few bodies, Jacobians of tens of unknowns), and calling the
library for each costs more than the loops XLA writes for them itself, so liemech turns YNNPACK's
fusions off. The option is an experimental one of XLA's: where a jaxlib does not know it, liemech
compiles without it.

XLA's CPU runtime runs a program kernel by kernel, at a fixed cost per kernel, except while loops
whose iteration touches fewer than ``xla_cpu_small_while_loop_byte_threshold`` bytes (1 KiB by
default), which it compiles into one kernel. A step's Newton loop, and the time loop around it,
are small but touch more than 1 KiB; where the user has not set ``XLA_FLAGS``, importing liemech
sets it to raise the threshold to ``SMALL_LOOP_BYTES`` (XLA reads it once, when JAX's backend
starts; ``LIEMECH_SET_XLA_FLAGS=0`` opts out). A step that calls no library (Newton inverts small
systems by a loop for this, ``liemech.numerics.lu.inverse``) then runs as one kernel. Where the
backend had started before liemech was imported, or the user's ``XLA_FLAGS`` leave the threshold
out, the first compilation warns (``small_loops_compiled``).
"""

import functools
import os
import warnings
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

import jax
import jax.numpy as jnp
from jax.extend.core import take_current_trace

F = TypeVar("F", bound=Callable[..., Any])

WANTED: Final[dict[str, str | bool | int | float]] = {"xla_cpu_experimental_ynn_fusion_type": ""}
"""The options asked for (an empty list of fusion types: none goes to YNNPACK)."""


SMALL_LOOP_BYTES: Final = 2**26
"""The byte threshold asked of XLA below which a while loop is compiled into one kernel."""

SMALL_LOOP_OPTION: Final = f"xla_cpu_small_while_loop_byte_threshold={SMALL_LOOP_BYTES}"


SMALL_LOOP_FLAG: Final = f"--xla_backend_extra_options={SMALL_LOOP_OPTION}"
"""The ``XLA_FLAGS`` entry that asks for ``SMALL_LOOP_OPTION``."""


def _ask_for_small_loops() -> None:
    """Sets ``XLA_FLAGS`` to ``SMALL_LOOP_FLAG`` where the user has not set it (a user's flags are
    left as they are) and has not opted out with ``LIEMECH_SET_XLA_FLAGS=0``."""
    if not os.environ.get("XLA_FLAGS", "").strip() and os.environ.get("LIEMECH_SET_XLA_FLAGS", "1") != "0":
        os.environ["XLA_FLAGS"] = SMALL_LOOP_FLAG


_ask_for_small_loops()


@functools.cache
def small_loops_compiled() -> bool:
    """Whether XLA compiles a loop of 32 KiB per iteration into one kernel in this process; warns
    once if not."""
    loop = jax.jit(lambda x: jax.lax.fori_loop(0, 2, lambda _, y: jnp.sin(y), x))
    compiled = "xla_cpu_small_call" in str(loop.lower(jnp.zeros(4096)).compile().as_text())
    if not compiled:
        warnings.warn(
            "XLA runs liemech's steps kernel by kernel in this process, about three times slower: JAX's "
            "backend started before liemech was imported, or XLA_FLAGS was set (liemech leaves a user's "
            f"XLA_FLAGS as they are) without {SMALL_LOOP_FLAG}. Import liemech before computing with JAX, and "
            "add that flag to XLA_FLAGS (within an xla_backend_extra_options you set already, as one more "
            "comma-separated entry).",
            stacklevel=2)
    return compiled


@functools.cache
def compiler_options() -> dict[str, str | bool | int | float]:
    """``WANTED`` if this jaxlib compiles with it, else no options; first checks (once) that XLA
    compiles small loops into one kernel (``small_loops_compiled``)."""
    small_loops_compiled()
    try:
        jax.jit(lambda x: x + 1.0, compiler_options=WANTED).lower(1.0).compile()
    except (jax.errors.JaxRuntimeError, ValueError):  # "No such compile option"
        return {}
    return dict(WANTED)


def _current_trace_type() -> type:
    with take_current_trace() as trace:
        return type(trace)


_TOP_LEVEL_TRACE: Final = _current_trace_type()
"""The kind of JAX trace that evaluates where no transformation runs, read when liemech is imported."""


def top_level() -> bool:
    """Whether no JAX transformation (jit, grad, vmap, …) is tracing here: JAX's current trace is
    the evaluating one of the top level (``jax.extend.core.take_current_trace``)."""
    return _current_trace_type() is _TOP_LEVEL_TRACE


class _Jitted:
    """A function jitted twice, with ``compiler_options()`` and without; a call (or ``lower``)
    takes the first at the top level and the second inside a transformation."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self._with_options = jax.jit(function, compiler_options=compiler_options())
        self._nested = jax.jit(function)
        functools.update_wrapper(self, function)

    def _here(self) -> Any:
        return self._with_options if top_level() else self._nested

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._here()(*args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self._here().lower(*args, **kwargs)


def jit(function: F) -> F:
    """``jax.jit(function)``, compiled with ``compiler_options()`` where it is called at the top
    level, outside every JAX transformation, and without them inside one (JAX refuses options on
    a jit nested in another, as a flow's is wherever a user transforms it): liemech's own programs
    (a run's chunks, a flow) and a user's study around them (``lm.jit``), whose compiled code
    runs markedly faster with these options than under ``jax.jit``."""
    return cast(F, _Jitted(function))
