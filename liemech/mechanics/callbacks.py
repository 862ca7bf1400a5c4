"""Checks of user callbacks at the initial point: traceable by JAX, right shape (a scalar where an
array is expected is an error, never broadcast), real and finite values, and given derivatives
equal to autodiff. Every message names the callback.

``check_traced`` traces a callback once, as the compiled steps will, and reads its jaxpr for what
JAX would otherwise let through silently: an index out of range (clamped or dropped), arithmetic
below float64, and a constant NaN or inf selected by the state (its gradient is 0, so a run would
cross into the region unnoticed). Tracing and reading cost far less than a run under
``jax.experimental.checkify``; the price is that only indices known before the run (computed from
the callback's constants) are checked, not indices computed from the state.
"""

import contextlib
import weakref
from collections.abc import Callable, Hashable, Iterator
from typing import Final, TypeVar

import jax
import numpy as np

from liemech.input_checks import as_float_array, expect_real
from liemech.jax_support import require_float64
from liemech.mechanics.jaxpr_reader import read_jaxpr
from liemech.types import Matrix, Vector

P = TypeVar("P")

DERIVATIVE_TOL: Final = 1e-8
"""A given derivative may differ from autodiff by at most this, relative to max(1, its size)."""

_TRACING_ERRORS: Final = (
    jax.errors.TracerArrayConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
)


def untraceable(name: str, exc: Exception) -> TypeError:
    """The error for a callback JAX cannot trace, saying what to change."""
    return TypeError(
        f"{name} cannot be traced by JAX ({type(exc).__name__}): liemech differentiates and compiles it, "
        "so write it with jax.numpy (import jax.numpy as jnp): np.cross → jnp.cross, np.array([...]) → "
        "jnp.array([...]) or jnp.stack, math.sin → jnp.sin, float(x) → x, `if x > 0` → jnp.where(x > 0, ...)"
    )


def require_callable(fn: object, name: str, signature: str, optional: bool = False) -> None:
    """TypeError unless ``fn`` is callable (or None when ``optional``), naming ``name``."""
    if not (callable(fn) or (optional and fn is None)):
        raise TypeError(f"{name} must be a callable {signature}{' or None' if optional else ''}, "
                        f"got {type(fn).__name__}")


@contextlib.contextmanager
def _named(name: str) -> Iterator[None]:
    """Re-raise an exception of the callback ``name`` as a TypeError (JAX cannot trace it, or a
    TypeError in it) or ValueError naming it."""
    try:
        yield
    except _TRACING_ERRORS as exc:
        raise untraceable(name, exc) from exc
    except TypeError as exc:
        raise TypeError(f"{name} raised TypeError at the initial point: {exc}") from exc
    except Exception as exc:
        raise ValueError(f"{name} raised {type(exc).__name__} at the initial point: {exc}") from exc


def checked_call(
    name: str, fn: Callable[..., object], g: object, shape: tuple[int, ...] | None, *args: object,
    traced: bool = True,
) -> Vector:
    """fn(g, *args) as a float64 array of the given shape (None: any nonempty 1-D shape) with real,
    finite entries, or an error naming ``name``; an exception raised by the callback itself is
    re-raised as a TypeError (JAX cannot trace it, or a TypeError in it) or ValueError naming it.
    ``traced``: first ``check_traced`` (False for what liemech derives from checked callbacks, and
    for given derivatives, which only eager methods call)."""
    if traced:
        check_traced(name, fn, g, *args)
    with _named(name):
        raw = fn(g, *args)
    expect_real(raw, f"{name} at the initial point")
    value = as_float_array(raw, f"{name} at the initial point")
    expected = f"shape {shape}" if shape is not None else "a nonempty 1-D array"
    if value.shape != shape if shape is not None else (value.ndim != 1 or value.size == 0):
        raise ValueError(f"{name} must return {expected} at the initial point, got shape {value.shape}")
    if not np.all(np.isfinite(value)):
        raise ValueError(f"{name} returned non-finite values at the initial point: {value}")
    return value


def check_derivative(
    name: str, given: Callable[..., object], autodiff: Callable[..., object], g: object, shape: tuple[int, ...],
    *args: object,
) -> None:
    """Raise ValueError unless the user's derivative ``given`` equals ``autodiff`` at (g, *args)."""
    value = checked_call(name, given, g, shape, *args, traced=False)
    reference = checked_call(f"the autodiff reference for {name}", autodiff, g, shape, *args, traced=False)
    defect = float(np.max(np.abs(value - reference))) if value.size else 0.0
    if not defect <= DERIVATIVE_TOL * max(1.0, float(np.max(np.abs(reference), initial=0.0))):
        raise ValueError(
            f"{name} disagrees with automatic differentiation at the initial point: max defect {defect:.3e} "
            f"(given {np.array2string(value.ravel()[:6], precision=6)}…, autodiff "
            f"{np.array2string(reference.ravel()[:6], precision=6)}…); fix it or leave it out"
        )


def require_symmetric_positive_definite(M: object, dim: int, name: str) -> Matrix:
    """M as a finite symmetric positive definite (dim, dim) float64 matrix, or ValueError."""
    arr = as_float_array(M, name)
    if arr.shape != (dim, dim):
        raise ValueError(f"{name} must have shape ({dim}, {dim}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    asymmetry = float(np.max(np.abs(arr - arr.T)))
    if asymmetry > 1e-12 * max(1.0, float(np.max(np.abs(arr)))):
        raise ValueError(f"{name} must be symmetric: max |𝕀 − 𝕀ᵀ| = {asymmetry:.3e}")
    smallest = float(np.linalg.eigvalsh(arr)[0])
    if smallest <= 0.0:
        raise ValueError(f"{name} must be positive definite: smallest eigenvalue {smallest:.3e}")
    return arr


def check_traced(name: str, fn: Callable[..., object], *args: object, differentiated: bool = True) -> None:
    """Trace fn(*args) once and refuse, naming ``name`` and saying what to change: code JAX cannot
    trace; an index out of range that is known before the run (JAX clamps reads and drops writes,
    so the run would integrate another model); a value below float64; and, when liemech
    ``differentiated`` the callback (not an observable), a constant NaN or inf chosen by the state.
    Refuses too when x64 was switched off after importing liemech. A callback that passed is not
    traced again for arguments of the same shapes (problems built in a loop, a ``Flow`` called on
    new initial data)."""
    require_float64()
    signature = (name, getattr(fn, "__func__", None), differentiated, jax.tree.structure(args),
                 tuple((np.shape(leaf), np.result_type(leaf)) for leaf in jax.tree.leaves(args)))
    passed = _passed(getattr(fn, "__self__", fn))
    if signature in passed:
        return
    with _named(name):
        closed = jax.make_jaxpr(fn)(*args)
    read_jaxpr(name, closed, differentiated)
    passed.add(signature)


_PASSED: Final[dict[int, tuple["weakref.ref[object]", set[Hashable]]]] = {}
"""The checks each live callback (a function, or the object of a bound method) passed, by identity:
an equal but distinct object may differ in what it computes."""


def _passed(owner: object) -> set[Hashable]:
    """The checks ``owner`` passed (a fresh set, not kept, if it cannot be referenced weakly)."""
    key = id(owner)
    if key in _PASSED and _PASSED[key][0]() is owner:
        return _PASSED[key][1]
    try:
        ref = weakref.ref(owner, lambda _, key=key: _PASSED.pop(key, None))  # type: ignore[misc]
    except TypeError:
        return set()
    _PASSED[key] = (ref, set())
    return _PASSED[key][1]
