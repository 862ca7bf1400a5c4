"""Compiled code kept on the object it was compiled for, so that it is freed with that object.

``jax.jit(f, static_argnums=0)`` at module level keeps every static argument it has seen, and so
everything compiled for it, for the life of the process: a loop over a thousand systems (a
parameter study, a notebook, a server) kept a thousand sets of executables, 11 MiB and 150 memory
maps each. Code compiled for one system, constraint or body is therefore stored in that object's
``__dict__``: when the last reference to the object goes, the garbage collector frees the object
and its executables together (the reference cycle object → executable → object is collectable).

Objects compared by value (groups: ``SO3() == SO3()``) keep sharing one module-level cache, which
holds one entry per distinct value.
"""

from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar, cast

import jax

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

OWNED: Final = "_compiled"
"""The attribute (a dict) that holds an object's compiled code."""


def owned_cache(owner: object) -> dict[Hashable, Any]:
    """The compiled code stored on ``owner``, keyed by what it computes (created empty)."""
    cache: dict[Hashable, Any] = vars(owner).setdefault(OWNED, {})
    return cache


def kept(owner: object, key: Hashable, build: Callable[[], T]) -> T:
    """``build()``, called once per ``owner`` and ``key`` and kept on ``owner`` (``owned_cache``)."""
    cache = owned_cache(owner)
    if key not in cache:
        cache[key] = build()
    value: T = cache[key]
    return value


def owned_jit(owner: object, key: Hashable, function: F) -> F:
    """``jax.jit(function)``, compiled once and kept on ``owner`` under ``key``."""
    return kept(owner, key, lambda: cast(F, jax.jit(function)))


def compared_by_identity(owner: object) -> bool:
    """Whether ``owner`` hashes by identity, so that a shared cache keyed by it would only ever be hit
    by the same object (and would keep it alive)."""
    return type(owner).__hash__ is object.__hash__


class OwnsCompiledCode:
    """A class whose instances keep compiled code (``owned_cache``): it is left out when they are
    pickled or copied (executables do not pickle; the copy compiles again on first use)."""

    def __getstate__(self) -> dict[str, object]:
        state = dict(vars(self))
        state.pop(OWNED, None)
        return state
