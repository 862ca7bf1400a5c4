"""Points and algebra elements of SO(3), SE(2), SE(3) to and from geomstats (matrix point type).

Needs the extra ``liemech[geomstats]``. geomstats is imported with its numpy backend
(``GEOMSTATS_BACKEND=numpy`` unless already set; any other backend is refused).

Both libraries use the same matrices: a point is a rotation matrix or a homogeneous matrix
[[R, p], [0, 1]], and an algebra element of geomstats is the matrix ξ̂ = ``group.hat(ξ)``. So

    point_to_geomstats(G, g) = g,        algebra_to_geomstats(G, ξ) = G.hat(ξ),
    G.retraction("exp").tau(ξ) = space.exp(algebra_to_geomstats(G, ξ))   (to round-off),

and conversions check their input instead of transforming it. geomstats' *coordinate* vectors
(``space.lie_algebra.basis_representation``) are ordered differently: so(3) (ω₁, ω₂, ω₃) like
liemech, se(2) (ω, v₁, v₂) where liemech has (v₁, v₂, ω), se(3) (ω, v) where liemech has (v, ω).
Always convert through the matrix form.

geomstats' ``exp`` and ``log`` are scipy's ``expm`` and ``logm``: ``expm`` leaves the last row of
an SE(n) point off (0, …, 0, 1) by up to ~1e-15, which ``point_from_geomstats`` snaps back, and
``logm`` returns a complex matrix near a rotation by π, which ``algebra_from_geomstats`` rejects.
Importing geomstats calls ``logging.basicConfig`` and sets the root logger to INFO; this module
restores the root logger's level and handlers afterwards.
"""

import logging
import os
import warnings
from typing import Final, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from liemech.groups.matrix_checks import ORTHOGONALITY_TOL
from liemech.groups.se2 import SE2
from liemech.groups.se3 import SE3
from liemech.groups.so3 import SO3
from liemech.input_checks import expect_finite, expect_shape
from liemech.types import Matrix, Vector

_INSTALL_HINT: Final = "install it with: pip install 'liemech[geomstats]'"

os.environ.setdefault("GEOMSTATS_BACKEND", "numpy")
if os.environ["GEOMSTATS_BACKEND"] != "numpy":
    raise ImportError(
        "liemech.interop.geomstats needs geomstats' numpy backend, but GEOMSTATS_BACKEND="
        f"{os.environ['GEOMSTATS_BACKEND']!r}; unset it or set it to 'numpy' before importing"
    )


def _restore_root_logger(level: int, handlers: list[logging.Handler]) -> None:
    """Undo geomstats' import-time ``logging.basicConfig`` and root level INFO."""
    root = logging.getLogger()
    root.setLevel(level)
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)


_root = logging.getLogger()
_root_state = (_root.level, list(_root.handlers))
try:
    with warnings.catch_warnings():
        # geomstats' backend importer lacks exec_module; harmless, but fatal under -W error.
        warnings.filterwarnings("ignore", "BackendImporter", ImportWarning)
        from geomstats.geometry.lie_group import MatrixLieGroup
        from geomstats.geometry.special_euclidean import SpecialEuclidean
        from geomstats.geometry.special_orthogonal import SpecialOrthogonal
except ModuleNotFoundError as exc:
    if exc.name is not None and exc.name.partition(".")[0] == "geomstats":
        raise ImportError(f"liemech.interop.geomstats needs geomstats; {_INSTALL_HINT}") from exc
    raise ImportError(f"geomstats failed to import ({exc}); {_INSTALL_HINT}") from exc
except (ImportError, AttributeError) as exc:
    raise ImportError(
        f"geomstats is installed but failed to import ({type(exc).__name__}: {exc}); geomstats 2.8 "
        f"needs numpy < 2.4 (it uses numpy.trapz), which the extra pins; {_INSTALL_HINT}"
    ) from exc
finally:
    _restore_root_logger(*_root_state)
    del _root, _root_state

__all__ = [
    "ALGEBRA_TOL",
    "SupportedGroup",
    "algebra_from_geomstats",
    "algebra_to_geomstats",
    "point_from_geomstats",
    "point_to_geomstats",
    "to_geomstats_space",
]

SupportedGroup: TypeAlias = SO3 | SE2 | SE3
"""The liemech groups with a geomstats counterpart in the matrix point type."""

ALGEBRA_TOL: Final = 1e-9
"""Relative tolerance, scaled by max(1, ‖X‖_max), for the parts of a geomstats algebra matrix that
must vanish (the symmetric part of its rotation block, its last row, its imaginary part)."""


def _checked_group(group: object) -> SupportedGroup:
    if isinstance(group, (SO3, SE2, SE3)):
        return group
    raise TypeError(
        f"group must be liemech's SO3(), SE2() or SE3() to have a geomstats counterpart, got {group!r}"
    )


def _sizes(group: SupportedGroup) -> tuple[int, int]:
    """(matrix size, rotation block size): SO(3) (3, 3), SE(2) (3, 2), SE(3) (4, 3)."""
    if isinstance(group, SO3):
        return 3, 3
    if isinstance(group, SE2):
        return 3, 2
    return 4, 3


def _real_matrix(x: ArrayLike, n: int, name: str) -> Matrix:
    """x as a finite float64 n×n array (a copy); a complex x must have a negligible imaginary part."""
    imag = 0.0
    try:
        arr = np.asarray(x)
        if np.iscomplexobj(arr):
            imag = float(np.max(np.abs(arr.imag), initial=0.0))
            arr = arr.real
        out = np.array(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real array, got {type(x).__name__}") from exc
    expect_shape(out, (n, n), name)
    expect_finite(out, name)
    if not imag <= ALGEBRA_TOL * max(1.0, float(np.max(np.abs(out)))):
        raise ValueError(
            f"{name} must be real, got a complex matrix with ‖Im {name}‖_max = {imag:.3e} "
            "(geomstats' log returns one near a rotation by π, where the logarithm is not unique)"
        )
    return out


def to_geomstats_space(group: SupportedGroup) -> MatrixLieGroup:
    """A new geomstats group for ``group``, matrix point type: SpecialOrthogonal(3),
    SpecialEuclidean(2) or SpecialEuclidean(3) (with geomstats' default metric).

    Raises TypeError for any other liemech group.
    """
    G = _checked_group(group)
    if isinstance(G, SO3):
        return SpecialOrthogonal(3, point_type="matrix")
    if isinstance(G, SE2):
        return SpecialEuclidean(2, point_type="matrix")
    return SpecialEuclidean(3, point_type="matrix")


def point_to_geomstats(group: SupportedGroup, g: ArrayLike) -> Matrix:
    """g ∈ G as a geomstats matrix point: the same matrix, checked with ``group.check_point`` and copied."""
    G = _checked_group(group)
    return np.array(G.check_point(g, "g"), dtype=np.float64)


def point_from_geomstats(group: SupportedGroup, m: ArrayLike) -> Matrix:
    """A geomstats matrix point m as a point of ``group`` (the same matrix, copied).

    A last row within ORTHOGONALITY_TOL of (0, …, 0, 1) is set to it exactly (scipy's ``expm``,
    behind geomstats' ``exp``, leaves up to ~1e-15 there); everything else must pass
    ``group.check_point(m, "m")``, whose ValueError names ``m``.
    """
    G = _checked_group(group)
    n, k = _sizes(G)
    arr = _real_matrix(m, n, "m")
    if k < n:
        e_last = np.zeros(n)
        e_last[-1] = 1.0
        if float(np.max(np.abs(arr[-1] - e_last))) <= ORTHOGONALITY_TOL:
            arr[-1] = e_last
    return G.check_point(arr, "m")


def algebra_to_geomstats(group: SupportedGroup, xi: ArrayLike) -> Matrix:
    """ξ ∈ 𝔤 ≅ Rᵈ (liemech's ordering) as geomstats' algebra matrix ξ̂ = ``group.hat(ξ)``."""
    G = _checked_group(group)
    return G.hat(G.check_algebra(xi, "xi"))


def algebra_from_geomstats(group: SupportedGroup, X: ArrayLike) -> Vector:
    """A geomstats algebra matrix X as liemech's vector ξ with ξ̂ = X.

    The rotation block's symmetric part, the last row (SE(n)) and an imaginary part (geomstats'
    ``log`` near a rotation by π) must vanish to ALGEBRA_TOL·max(1, ‖X‖_max), else ValueError naming
    ``X``; ξ is read from the skew part ½(B − Bᵀ), so an exactly skew X converts exactly.
    """
    G = _checked_group(group)
    n, k = _sizes(G)
    arr = _real_matrix(X, n, "X")
    tol = ALGEBRA_TOL * max(1.0, float(np.max(np.abs(arr))))
    block = arr[:k, :k]
    symmetric = 0.5 * float(np.max(np.abs(block + block.T)))
    if symmetric > tol:
        raise ValueError(
            f"X must be in the Lie algebra: its {k}×{k} rotation block is not skew-symmetric, "
            f"‖(B + Bᵀ)/2‖_max = {symmetric:.3e} exceeds {tol:.3e}"
        )
    if k < n:
        last_row = float(np.max(np.abs(arr[-1])))
        if last_row > tol:
            raise ValueError(
                f"X must be in the Lie algebra: its last row must vanish, got {arr[-1].tolist()}"
            )
    skew = np.zeros((n, n))
    skew[:k, :k] = 0.5 * (block - block.T)
    skew[:k, k:] = arr[:k, k:]
    return G.vee(skew)
