"""The JAX settings liemech relies on, and typed wrappers around the transformations it uses.

Importing liemech switches on float64 (the schemes iterate to round-off in double precision) and,
unless the user has chosen a directory, caches compiled steps on disk so that a second process
reuses them (``LIEMECH_CACHE_DIR``, default ``~/.cache/liemech/jax``; ``LIEMECH_CACHE_DIR=""``
turns the cache off).

``array_method`` compiles a method once per shape and object, and keeps the numpy signature its
eager callers see. ``traced_once`` traces a function that a step calls several times once.
"""

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar, overload

import jax
import numpy as np
from jax.extend.core import jaxpr_as_fun
from numpy.typing import NDArray

from liemech.owned_compilation import compared_by_identity, owned_jit

_set: Callable[[str, object], None] = jax.config.update  # jax.config is untyped

_set("jax_enable_x64", True)

CACHE_MAX_BYTES = 4 * 2**30
"""Bound of the on-disk compilation cache (least recently used entries are evicted)."""


def _enable_compilation_cache() -> None:
    if getattr(jax.config, "jax_compilation_cache_dir", None):  # the user's choice wins
        return
    directory = os.environ.get("LIEMECH_CACHE_DIR", str(Path.home() / ".cache" / "liemech" / "jax"))
    if not directory:
        return
    _set("jax_compilation_cache_dir", directory)
    # Most steps compile in less than jax's default threshold (1 s), which would leave them uncached.
    _set("jax_persistent_cache_min_compile_time_secs", 0.1)
    # A size bound makes jax lock the directory around every read and write, so that processes
    # sharing it (Dask workers, pytest-xdist) never read an entry another one is still writing.
    _set("jax_compilation_cache_max_size", CACHE_MAX_BYTES)


_enable_compilation_cache()

S = TypeVar("S")
Params = ParamSpec("Params")
R = TypeVar("R")


def _any_tracer(tree: object) -> bool:
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(tree))


def _to_numpy(out: object) -> object:
    """Concrete arrays (and tuples of them) as numpy arrays; tracers unchanged."""
    if isinstance(out, tuple):
        return tuple(_to_numpy(part) for part in out)
    if isinstance(out, jax.core.Tracer):
        return out
    # A copy: np.asarray would give a read-only view of jax's buffer, and numpy callers write
    # into the arrays they get (e.g. a perturbed copy of group.identity()).
    return np.array(out)


@overload
def array_method(
    method: Callable[Concatenate[S, Params], jax.Array],
) -> Callable[Concatenate[S, Params], NDArray[np.float64]]: ...


@overload
def array_method(method: Callable[Concatenate[S, Params], R]) -> Callable[Concatenate[S, Params], R]: ...


def array_method(method: Callable[Concatenate[S, Params], object]) -> Callable[Concatenate[S, Params], object]:
    """Compile ``method`` once per argument shape and ``self``: on ``self`` (``owned_jit``) when it
    compares by identity, so that the code is freed with it; in one cache shared by equal values
    otherwise (groups: ``self`` static, hashable).

    Called on concrete arrays it returns numpy arrays (a tuple of them for a product point), as
    the signature says; called inside a JAX transformation (the compiled integrators, autodiff of
    a user's potential) it returns tracers that stand in for those arrays. That is the one place
    where the declared numpy types and the traced values part: a method written with jax.numpy
    returns ``jax.Array`` and is declared to its callers as returning a float64 numpy array (first
    overload); a method that only combines other array methods keeps its own types (second).
    """
    shared = jax.jit(method, static_argnums=0)

    @functools.wraps(method)
    def call(self: S, /, *args: Params.args, **kwargs: Params.kwargs) -> object:
        # Inside a transformation the enclosing function is compiled as a whole; a nested jit
        # there would only add a call boundary to every group operation and slow compilation.
        if _any_tracer(args) or _any_tracer(kwargs):
            return method(self, *args, **kwargs)
        if compared_by_identity(self):
            return _to_numpy(owned_jit(self, method, functools.partial(method, self))(*args, **kwargs))
        return _to_numpy(shared(self, *args, **kwargs))

    return call


def require_float64() -> None:
    """RuntimeError unless JAX computes in float64, as importing liemech set it up."""
    if not jax.config.jax_enable_x64:  # type: ignore[attr-defined]
        raise RuntimeError(
            "jax_enable_x64 is off: liemech computes in float64 (its schemes iterate to round-off in double "
            "precision; in float32 results are off by ~1e-7 and Newton stalls), and importing it switched x64 "
            "on; keep it on: remove jax.config.update('jax_enable_x64', False), or call "
            "jax.config.update('jax_enable_x64', True) before building problems and integrating")


def traced_once(function: Callable[..., R], *args: jax.Array) -> Callable[..., R]:
    """``function`` traced once at the shapes of ``args`` and replayed from its jaxpr at every call
    (in any transformation: what it closes over stays differentiable). A step needs its equations
    four or five times (Newton's residual and Jacobian, custom_root's own jaxpr and linearisation,
    the step's end), and a replay skips the Python of the model and the groups, which takes most of
    a trace's time."""
    closed, shape = jax.make_jaxpr(function, return_shape=True)(*args)
    replay, tree = jaxpr_as_fun(closed), jax.tree.structure(shape)

    def replayed(*values: jax.Array) -> R:
        result: R = jax.tree.unflatten(tree, replay(*values))
        return result

    return replayed
