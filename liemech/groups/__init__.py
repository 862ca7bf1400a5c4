"""Configuration spaces: Rⁿ, SO(2), SO(3), SE(2), SE(3), their products and powers, with retractions."""

from liemech.groups.base import RETRACTION_KINDS, LieGroup, Retraction, RetractionKind
from liemech.groups.euclidean import Rn
from liemech.groups.matrix_cayley import MatrixCayley
from liemech.groups.power import PowerGroup
from liemech.groups.product import Point, ProductGroup, ProductPoint
from liemech.groups.se2 import SE2
from liemech.groups.se3 import SE3
from liemech.groups.so2 import SO2
from liemech.groups.so3 import SO3

__all__ = [
    "RETRACTION_KINDS",
    "LieGroup",
    "MatrixCayley",
    "Point",
    "PowerGroup",
    "ProductGroup",
    "ProductPoint",
    "Retraction",
    "RetractionKind",
    "Rn",
    "SE2",
    "SE3",
    "SO2",
    "SO3",
]
