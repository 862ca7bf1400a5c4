"""liemech: structure-preserving mechanics on Lie groups."""

from liemech.groups import (
    RETRACTION_KINDS,
    SE2,
    SE3,
    SO2,
    SO3,
    LieGroup,
    MatrixCayley,
    Point,
    ProductGroup,
    ProductPoint,
    Retraction,
    RetractionKind,
    Rn,
)
from liemech.types import Matrix, Vector

__all__ = [
    "RETRACTION_KINDS",
    "LieGroup",
    "Matrix",
    "MatrixCayley",
    "Point",
    "ProductGroup",
    "ProductPoint",
    "Retraction",
    "RetractionKind",
    "Rn",
    "SE2",
    "SE3",
    "SO2",
    "SO3",
    "Vector",
]
