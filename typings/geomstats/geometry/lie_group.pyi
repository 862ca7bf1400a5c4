"""geomstats.geometry.lie_group: the members of MatrixLieGroup that liemech uses.

``exp`` and ``log`` are scipy's ``expm`` and ``logm``. For SE(n) near a rotation by π, ``log``
returns a complex128 matrix, hence the union in its return type; SO(n) overrides ``log`` with an
instance method that raises ValueError at (nearly) antipodal rotations.
"""

import abc

import numpy as np
from numpy.typing import NDArray

from geomstats.geometry.lie_algebra import MatrixLieAlgebra

class MatrixLieGroup(abc.ABC):
    dim: int
    representation_dim: int
    lie_algebra: MatrixLieAlgebra
    @property
    def identity(self) -> NDArray[np.float64]: ...
    @staticmethod
    def compose(point_a: NDArray[np.float64], point_b: NDArray[np.float64]) -> NDArray[np.float64]: ...
    @classmethod
    def inverse(cls, point: NDArray[np.float64]) -> NDArray[np.float64]: ...
    @classmethod
    def exp(
        cls, tangent_vec: NDArray[np.float64], base_point: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]: ...
    @classmethod
    def log(
        cls, point: NDArray[np.float64], base_point: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64] | NDArray[np.complex128]: ...
    @abc.abstractmethod
    def belongs(self, point: NDArray[np.float64], atol: float = ...) -> np.bool_ | NDArray[np.bool_]: ...
