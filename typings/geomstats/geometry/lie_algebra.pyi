"""geomstats.geometry.lie_algebra: the members of MatrixLieAlgebra that liemech uses."""

import abc

import numpy as np
from numpy.typing import NDArray

class MatrixLieAlgebra(abc.ABC):
    def belongs(self, point: NDArray[np.float64], atol: float = ...) -> np.bool_ | NDArray[np.bool_]: ...
    @abc.abstractmethod
    def basis_representation(self, matrix_representation: NDArray[np.float64]) -> NDArray[np.float64]: ...
    def matrix_representation(self, basis_representation: NDArray[np.float64]) -> NDArray[np.float64]: ...
