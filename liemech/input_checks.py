"""Checks of the arguments a user passes to liemech: every failure is a ValueError (or TypeError)
naming the argument and what was expected.

Group operations on the hot path (compose, Ad, tau, dtau, …) only check shapes and that the input
is real, which costs nothing under ``jit`` (it happens once, when the operation is traced);
``check_point`` and the functions that take user data check everything. The ``checked_*`` scalar
helpers validate the numerical options of methods, solvers and problems. The checks of rotation
and rigid-motion matrices are the groups' (``liemech.groups.matrix_checks``).
"""

import math
import operator
from numbers import Complex, Real

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from liemech.types import Vector, VectorLike


def as_float_array(x: object, name: str) -> Vector:
    """Return ``x`` as a float64 array or raise ValueError naming ``name`` (complex input too:
    a cast to float would silently drop the imaginary part)."""
    try:
        complex_input = _is_complex(x)
        arr = np.asarray(x, dtype=np.float64) if not complex_input else np.zeros(0)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real array, got {type(x).__name__}") from exc
    if complex_input:
        raise ValueError(f"{name} must be real, got complex values")
    return arr


def _is_complex(x: object) -> bool:
    """Whether ``x`` (an array, a traced array, a scalar or a sequence) holds complex numbers."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    return bool(np.issubdtype(dtype, np.complexfloating))


def expect_real(x: object, name: str) -> None:
    """Raise ValueError if ``x`` holds complex numbers (an array, a traced array or a sequence)."""
    if _is_complex(x):
        raise ValueError(f"{name} must be real, got complex values")


def expect_shape(x: VectorLike, shape: tuple[int, ...], name: str) -> None:
    """Raise ValueError unless ``x.shape == shape`` and ``x`` is real."""
    if np.shape(x) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {np.shape(x)}")
    expect_real(x, name)


def shaped_vectors(size: int, **vectors: VectorLike) -> tuple[jax.Array, ...]:
    """The named vectors as float arrays, each checked to have shape (size,) (``expect_shape``)."""
    for name, v in vectors.items():
        expect_shape(v, (size,), name)
    return tuple(jnp.asarray(v, dtype=float) for v in vectors.values())


def expect_finite(x: Vector, name: str) -> None:
    """Raise ValueError if ``x`` holds NaN or ±inf."""
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite, got NaN or inf entries")


def checked_vector(x: object, n: int, name: str) -> Vector:
    """A finite float64 vector of length ``n``, or ValueError naming ``name``."""
    arr = as_float_array(x, name)
    expect_shape(arr, (n,), name)
    expect_finite(arr, name)
    return arr


def checked_stack(x: object, shape: tuple[int, ...], name: str) -> NDArray[np.float64]:
    """A finite float64 array of shape (members, *shape) with at least one member, or ValueError
    naming ``name`` (and the first non-finite member, ``name[k]``)."""
    arr = as_float_array(x, name)
    if arr.shape[1:] != shape or arr.ndim != len(shape) + 1 or len(arr) == 0:
        raise ValueError(f"{name} must stack points of shape {shape} along a first axis of members, "
                         f"got shape {arr.shape}")
    if (k := first_index(~np.all(np.isfinite(arr.reshape(len(arr), -1)), axis=1))) is not None:
        raise ValueError(f"{name}[{k}] must be finite, got NaN or inf entries")
    return arr


def first_index(mask: NDArray[np.bool_] | np.bool_) -> int | None:
    """The first index at which ``mask`` holds, or None."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


# ---- numerical options --------------------------------------------------------------------------


def _real_scalar(value: object) -> float | None:
    """``value`` as a float if it is a real number (Python, numpy, or a 0-d real array), else None:
    bools, strings, complex numbers, arrays with entries and traced values are not."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or (isinstance(value, Complex) and not isinstance(value, Real)):
        return None
    dtype = getattr(value, "dtype", None)
    if getattr(value, "ndim", 0) != 0 or (dtype is not None and not np.issubdtype(dtype, np.number)) \
            or _is_complex(value):
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except Exception:  # no __float__, or a traced value: options must be concrete numbers
        return None


def checked_real(value: object, name: str, low: float = -math.inf, high: float = math.inf, *,
                 open_low: bool = True, open_high: bool = True, requirement: str | None = None) -> float:
    """``value`` as a finite float in the interval low..high (open or closed at each end), else
    ValueError naming ``name`` and ``requirement`` (by default the interval). Python and numpy
    integers and floats (and 0-d real arrays) are accepted; bools, strings, complex numbers, NaN
    and ±inf are not."""
    x = _real_scalar(value)
    inside = x is not None and math.isfinite(x) and (x > low if open_low else x >= low) and (
        x < high if open_high else x <= high)
    if not inside:
        if requirement is None:
            if math.isinf(low) and math.isinf(high):
                requirement = "be a finite real number"
            elif math.isinf(high):
                requirement = f"be a finite number {'>' if open_low else '≥'} {low:g}"
            elif math.isinf(low):
                requirement = f"be a finite number {'<' if open_high else '≤'} {high:g}"
            else:
                requirement = f"lie in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
        raise ValueError(f"{name} must {requirement}, got {value!r}")
    assert x is not None
    return x


def checked_count(value: object, name: str, minimum: int = 1) -> int:
    """``value`` as an int ≥ ``minimum``, else ValueError naming ``name``. Python and numpy integers
    are accepted; bools and floats (even 3.0) are not."""
    try:
        n = None if isinstance(value, (bool, np.bool_)) else operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        n = None
    if n is None or n < minimum:
        wanted = "a positive integer" if minimum == 1 else f"an integer ≥ {minimum}"
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return n


def checked_flag(value: object, name: str) -> bool:
    """``value`` as a bool (Python or numpy), else ValueError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)
