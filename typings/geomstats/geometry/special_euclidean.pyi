"""geomstats.geometry.special_euclidean, matrix point type only.

At runtime ``SpecialEuclidean`` is a class whose ``__new__`` returns an instance of a private
``MatrixLieGroup`` subclass (never a ``SpecialEuclidean``), so it is declared as the factory it is.
"""

from typing import Literal

from geomstats.geometry.lie_group import MatrixLieGroup

def SpecialEuclidean(
    n: int, point_type: Literal["matrix"] = "matrix", epsilon: float = 0.0, equip: bool = True
) -> MatrixLieGroup: ...
