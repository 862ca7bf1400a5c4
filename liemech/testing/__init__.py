"""Public checks: conformance of groups and retractions, convergence-order estimation, the
symplecticity of one-step maps, and work–precision tables."""

from liemech.testing.conformance import (
    DEFAULT_RADII,
    check_group,
    check_retraction,
    flatten_point,
    point_distance,
)
from liemech.testing.order import OrderEstimate, estimate_order
from liemech.testing.report import Check, ConformanceError, ConformanceReport
from liemech.testing.symplecticity import (
    DEFAULT_JACOBIAN_STEP,
    constrained_variations,
    one_step_jacobian,
    random_variations,
    step_map,
    symplectic_form,
    symplecticity_defect,
    tangent_variations,
)
from liemech.testing.work_precision_table import WorkPrecision, WorkPrecisionRow, work_precision

__all__ = [
    "DEFAULT_JACOBIAN_STEP",
    "DEFAULT_RADII",
    "Check",
    "ConformanceError",
    "ConformanceReport",
    "OrderEstimate",
    "check_group",
    "check_retraction",
    "constrained_variations",
    "estimate_order",
    "flatten_point",
    "one_step_jacobian",
    "point_distance",
    "random_variations",
    "step_map",
    "symplectic_form",
    "symplecticity_defect",
    "tangent_variations",
    "WorkPrecision",
    "WorkPrecisionRow",
    "work_precision",
]
