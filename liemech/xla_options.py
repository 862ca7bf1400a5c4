"""The XLA options liemech compiles its steps with, and ``jit``, which applies them.

XLA's CPU backend hands dot products to the YNNPACK library by default. A step's products are
small (3 × 3 rotations, blocks of a few bodies, Jacobians of tens of unknowns), and calling the
library for each costs more than the loops XLA writes for them itself: with YNNPACK's fusions
turned off, a VPRK step on the heavy top takes a third less time (Lobatto-2 cay 21 → 14 µs), an
ensemble of 64 tops and an 8-link chain about a tenth less, the 16-top and 32-link chains on the
block tree 3–7 % less. The option is an experimental one of XLA's: where a jaxlib does not know it,
liemech compiles without it.
"""

import functools
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

import jax

F = TypeVar("F", bound=Callable[..., Any])

WANTED: Final[dict[str, str | bool | int | float]] = {"xla_cpu_experimental_ynn_fusion_type": ""}
"""The options asked for (an empty list of fusion types: none goes to YNNPACK)."""


@functools.cache
def compiler_options() -> dict[str, str | bool | int | float]:
    """``WANTED`` if this jaxlib compiles with it, else no options."""
    try:
        jax.jit(lambda x: x + 1.0, compiler_options=WANTED).lower(1.0).compile()
    except (jax.errors.JaxRuntimeError, ValueError):  # "No such compile option"
        return {}
    return dict(WANTED)


def jit(function: F) -> F:
    """``jax.jit(function)`` compiled with ``compiler_options()``; for top-level programs only (the
    run of ``integrate``, an ensemble's batch, a stepper's step): JAX refuses options on a jit nested
    in another, as ``flow``'s is wherever a user transforms it."""
    return cast(F, jax.jit(function, compiler_options=compiler_options()))
