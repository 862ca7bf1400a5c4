"""Checks of rotation matrices and homogeneous rigid motions given by a user, for the matrix groups:
every failure is a ValueError naming the argument and its defect."""

from collections.abc import Callable
from typing import Final

import numpy as np
from numpy.typing import NDArray

from liemech.input_checks import as_float_array, checked_stack, expect_finite, expect_shape, first_index
from liemech.types import Matrix

ORTHOGONALITY_TOL: Final = 1e-9
"""Largest accepted ‖RᵀR − I‖_max for a rotation block (points accumulate round-off)."""


def check_rotation(R: Matrix, name: str) -> None:
    """Raise ValueError unless R is orthogonal (to ORTHOGONALITY_TOL) with det R = +1."""
    _check_rotations(R[None], lambda _: name)


def _check_rotations(R: NDArray[np.float64], names: Callable[[int], str]) -> None:
    """``check_rotation`` for each R[k] of a stack, the first failure named ``names(k)``."""
    defect = np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(R.shape[-1])), axis=(-2, -1))
    if (k := first_index(defect > ORTHOGONALITY_TOL)) is not None:
        raise ValueError(
            f"{names(k)} must be a rotation: ‖RᵀR − I‖_max = {defect[k]:.3e} exceeds {ORTHOGONALITY_TOL:.0e}"
        )
    det = np.linalg.det(R)
    if (k := first_index(det < 0.0)) is not None:
        raise ValueError(f"{names(k)} must be a rotation with det = +1, got det = {det[k]:.6g}")


def checked_rotation(x: object, n: int, name: str) -> Matrix:
    """A finite n×n rotation matrix, or ValueError naming ``name`` and the defect."""
    R = as_float_array(x, name)
    expect_shape(R, (n, n), name)
    expect_finite(R, name)
    check_rotation(R, name)
    return R


def checked_rotations(x: object, n: int, name: str) -> NDArray[np.float64]:
    """A stack of finite n×n rotation matrices (``checked_rotation`` of each; errors name ``name[k]``)."""
    R = checked_stack(x, (n, n), name)
    _check_rotations(R, lambda k: f"{name}[{k}]")
    return R


def checked_rigid_motion(x: object, n: int, name: str) -> Matrix:
    """A finite (n+1)×(n+1) homogeneous matrix [[R, p], [0, 1]] with R ∈ SO(n)."""
    g = as_float_array(x, name)
    expect_shape(g, (n + 1, n + 1), name)
    expect_finite(g, name)
    _check_rigid_motions(g[None], lambda _: name)
    return g


def checked_rigid_motions(x: object, n: int, name: str) -> NDArray[np.float64]:
    """A stack of ``checked_rigid_motion``s (errors name ``name[k]``)."""
    g = checked_stack(x, (n + 1, n + 1), name)
    _check_rigid_motions(g, lambda k: f"{name}[{k}]")
    return g


def _check_rigid_motions(g: NDArray[np.float64], names: Callable[[int], str]) -> None:
    """Each g[k] of a stack homogeneous with last row (0, …, 0, 1) and a rotation block."""
    n = g.shape[-1] - 1
    if (k := first_index(np.any(g[:, n] != np.eye(n + 1)[n], axis=-1))) is not None:
        raise ValueError(f"{names(k)} must be homogeneous with last row (0, …, 0, 1), got {g[k, n].tolist()}")
    _check_rotations(g[:, :n, :n], lambda k: f"the rotation block of {names(k)}")
