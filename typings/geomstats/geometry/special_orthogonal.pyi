"""geomstats.geometry.special_orthogonal, matrix point type only.

At runtime ``SpecialOrthogonal`` is a class whose ``__new__`` returns an instance of a private
``MatrixLieGroup`` subclass (never a ``SpecialOrthogonal``), so it is declared as the factory it
is; ``isinstance(x, SpecialOrthogonal)`` is always False at runtime and rightly rejected here.
"""

from typing import Literal

from geomstats.geometry.lie_group import MatrixLieGroup

def SpecialOrthogonal(
    n: int, point_type: Literal["matrix"] = "matrix", epsilon: float = 0.0, equip: bool = True
) -> MatrixLieGroup: ...
