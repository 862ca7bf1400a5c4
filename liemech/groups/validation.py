"""Input checks shared by the groups: every failure is a ValueError naming the argument.

Group operations on the hot path (compose, Ad, tau, dtau, …) only check shapes, which costs a
tuple comparison; ``check_point`` and the functions that take user data check everything.
"""

from typing import Final

import numpy as np

from liemech.types import Matrix, Vector, VectorLike

ORTHOGONALITY_TOL: Final = 1e-9
"""Largest accepted ‖RᵀR − I‖_max for a rotation block (points accumulate round-off)."""


def as_float_array(x: object, name: str) -> Vector:
    """Return ``x`` as a float64 array or raise ValueError naming ``name``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real array, got {type(x).__name__}") from exc
    return arr


def expect_shape(x: VectorLike, shape: tuple[int, ...], name: str) -> None:
    """Raise ValueError unless ``x.shape == shape``."""
    if np.shape(x) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {np.shape(x)}")


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


def check_rotation(R: Matrix, name: str) -> None:
    """Raise ValueError unless R is orthogonal (to ORTHOGONALITY_TOL) with det R = +1."""
    n = R.shape[0]
    defect = float(np.max(np.abs(R.T @ R - np.eye(n))))
    if defect > ORTHOGONALITY_TOL:
        raise ValueError(
            f"{name} must be a rotation: ‖RᵀR − I‖_max = {defect:.3e} exceeds {ORTHOGONALITY_TOL:.0e}"
        )
    det = float(np.linalg.det(R))
    if det < 0.0:
        raise ValueError(f"{name} must be a rotation with det = +1, got det = {det:.6g}")


def checked_rotation(x: object, n: int, name: str) -> Matrix:
    """A finite n×n rotation matrix, or ValueError naming ``name`` and the defect."""
    R = as_float_array(x, name)
    expect_shape(R, (n, n), name)
    expect_finite(R, name)
    check_rotation(R, name)
    return R


def checked_rigid_motion(x: object, n: int, name: str) -> Matrix:
    """A finite (n+1)×(n+1) homogeneous matrix [[R, p], [0, 1]] with R ∈ SO(n)."""
    g = as_float_array(x, name)
    expect_shape(g, (n + 1, n + 1), name)
    expect_finite(g, name)
    last_row_defect = float(np.max(np.abs(g[n] - np.eye(n + 1)[n])))
    if last_row_defect > 0.0:
        raise ValueError(
            f"{name} must be homogeneous with last row (0, …, 0, 1), got {g[n].tolist()}"
        )
    check_rotation(g[:n, :n], f"the rotation block of {name}")
    return g
