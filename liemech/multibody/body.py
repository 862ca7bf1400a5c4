"""A rigid body of a mechanism: its mass, centre of mass and inertia in its own (link) frame."""

from dataclasses import dataclass, field

import numpy as np

from liemech.input_checks import as_float_array, checked_real, checked_vector, expect_finite, expect_shape
from liemech.types import Matrix, Vector

INERTIA_TOL = 1e-12
"""A body's inertia about its centre of mass must have eigenvalues above INERTIA_TOL × its largest."""


@dataclass(frozen=True, eq=False)
class Body:
    """A rigid body named ``name``: ``mass`` m > 0, ``com`` c the centre of mass in the body's frame
    and ``inertia`` J the 3 × 3 inertia about the centre of mass in axes of that frame (symmetric
    positive definite). Its kinetic energy is ½ ωᵀJω + ½ m|ẋ|², with ω the angular velocity in the
    body frame and x the centre of mass in space.

    The body frame is the frame its joints are attached to (a URDF link's frame): a joint's
    ``origin`` and ``axis`` are given in it.
    """

    name: str
    mass: float
    inertia: Matrix
    com: Vector = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a body's name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "mass", checked_real(self.mass, f"body {self.name!r}: mass", 0.0))
        object.__setattr__(self, "com", checked_vector(self.com, 3, f"body {self.name!r}: com"))
        J = as_float_array(self.inertia, f"body {self.name!r}: inertia")
        expect_shape(J, (3, 3), f"body {self.name!r}: inertia")
        expect_finite(J, f"body {self.name!r}: inertia")
        eigenvalues = np.linalg.eigvalsh(0.5 * (J + J.T))
        if not np.allclose(J, J.T, rtol=1e-10, atol=1e-14 * np.max(np.abs(J), initial=1.0)) or not (
                eigenvalues[0] > INERTIA_TOL * max(eigenvalues[-1], 0.0)):
            raise ValueError(f"body {self.name!r}: inertia must be symmetric positive definite, got eigenvalues "
                             f"{np.array2string(eigenvalues, precision=4)}")
        object.__setattr__(self, "inertia", 0.5 * (J + J.T))
