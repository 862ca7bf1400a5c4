"""Public checks: conformance of groups and retractions (and, later, convergence orders)."""

from liemech.testing.conformance import (
    DEFAULT_RADII,
    check_group,
    check_retraction,
    flatten_point,
    point_distance,
)
from liemech.testing.report import Check, ConformanceError, ConformanceReport

__all__ = [
    "DEFAULT_RADII",
    "Check",
    "ConformanceError",
    "ConformanceReport",
    "check_group",
    "check_retraction",
    "flatten_point",
    "point_distance",
]
