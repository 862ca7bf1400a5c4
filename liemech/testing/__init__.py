"""Public checks: conformance of groups and retractions, and convergence-order estimation."""

from liemech.testing.conformance import (
    DEFAULT_RADII,
    check_group,
    check_retraction,
    flatten_point,
    point_distance,
)
from liemech.testing.order import OrderEstimate, estimate_order
from liemech.testing.report import Check, ConformanceError, ConformanceReport

__all__ = [
    "DEFAULT_RADII",
    "Check",
    "ConformanceError",
    "ConformanceReport",
    "OrderEstimate",
    "check_group",
    "check_retraction",
    "estimate_order",
    "flatten_point",
    "point_distance",
]
