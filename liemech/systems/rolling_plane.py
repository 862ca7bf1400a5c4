"""The plane a ``RollingBody`` rolls on: a plane through the origin with unit normal n, at rest or
spinning at a constant rate Ω_t about the axis n through the origin (a turntable).

The plane's points p have n·p = 0; its material points move with the stationary velocity field

    w(p) = Ω_t n × p,

so a body rolling on it without slipping has the velocity of the table at its contact point p_c:
v + ω × ρ = Ω_t n × p_c (ω the spatial angular velocity, ρ = p_c − x). The field does not depend on
time, and neither do the constraints. Gravity stays −g e_z in space whatever the normal: with
n = (sin α, 0, cos α) (``Plane.inclined(α)``) the plane descends towards +x at the angle α.
"""

import math
from dataclasses import dataclass

import numpy as np

from liemech.groups.so3 import skew
from liemech.input_checks import as_float_array, checked_real
from liemech.types import Matrix, Vector


def _unit_normal(value: object) -> tuple[float, float, float]:
    """``value`` divided by its length, or ValueError naming ``normal`` (not a finite, nonzero
    3-vector)."""
    normal = as_float_array(value, "normal")
    if normal.shape != (3,) or not np.all(np.isfinite(normal)):
        raise ValueError(f"normal must be a finite 3-vector, got {np.asarray(value).tolist()}")
    length = float(np.linalg.norm(normal))
    if not length > 0.0:
        raise ValueError(f"normal must be a nonzero 3-vector, got {normal.tolist()}")
    x, y, z = (float(v) / length for v in normal)
    return x, y, z


@dataclass(frozen=True)
class Plane:
    """The plane n·p = 0 through the origin, with normal ``normal`` (any finite nonzero 3-vector:
    it is divided by its length, so (1, 0, 1) is the plane inclined at 45°; the body lies on the
    side n points to), spinning at ``spin`` = Ω_t rad/s about the axis n through the origin (0: at
    rest; positive: anticlockwise seen from the side of n). The default is the still horizontal
    plane z = 0."""

    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    spin: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "normal", _unit_normal(self.normal))
        object.__setattr__(self, "spin", checked_real(self.spin, "spin"))

    @classmethod
    def inclined(cls, angle: float, *, spin: float = 0.0) -> "Plane":
        """The plane with normal n = (sin α, 0, cos α), α = ``angle`` ∈ (−π/2, π/2): tilted by α
        about the y axis, descending towards +x (for α > 0), its downhill unit vector
        (cos α, 0, −sin α)."""
        alpha = checked_real(angle, "angle", -0.5 * math.pi, 0.5 * math.pi)
        return cls((math.sin(alpha), 0.0, math.cos(alpha)), spin)

    @property
    def unit_normal(self) -> Vector:
        """n as an array."""
        return np.array(self.normal)

    @property
    def tangents(self) -> Matrix:
        """The 2 × 3 matrix whose rows t₁, t₂ are a fixed orthonormal basis of the plane, with
        t₁ × t₂ = n: the images of e_x and e_y under the rotation about e_z × n that takes e_z to
        ±n (for n_z ≥ 0 and < 0), so that the plane z = 0 has (e_x, e_y) and the inclined plane
        (sin α, 0, cos α) has its downhill direction (cos α, 0, −sin α) and e_y."""
        n = self.unit_normal
        sign = 1.0 if n[2] >= 0.0 else -1.0
        m = sign * n                                  # m_z ≥ 0: the rotation e_z → m is regular
        scale = 1.0 / (1.0 + m[2])
        t1 = np.array([1.0 - m[0] ** 2 * scale, -m[0] * m[1] * scale, -m[0]])
        t2 = np.array([-m[0] * m[1] * scale, 1.0 - m[1] ** 2 * scale, -m[1]])
        return np.stack([t1, sign * t2])

    @property
    def velocity_gradient(self) -> Matrix:
        """W = Ω_t n̂, the table's velocity field w(p) = W p = Ω_t n × p as a matrix."""
        matrix: Matrix = self.spin * skew(self.unit_normal)
        return matrix

    def holds(self, point: Vector, scale: float = 1.0) -> bool:
        """Whether ``point`` lies on the plane, |n·p| ≤ 1e-12 · max(scale, |p|)."""
        return abs(float(self.unit_normal @ point)) <= 1e-12 * max(scale, float(np.linalg.norm(point)))


HORIZONTAL = Plane()
"""The still horizontal plane z = 0: the default of ``RollingBody``."""
