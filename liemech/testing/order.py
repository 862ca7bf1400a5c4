"""Convergence order from errors at several step sizes: a least-squares slope of log e vs log h,
ignoring the round-off plateau."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from liemech.types import Vector


@dataclass(frozen=True)
class OrderEstimate:
    """The fitted line log e = slope · log h + intercept (slope = the order), the points it used, and
    the discarded steps with ``reasons[i]`` saying why ``discarded[i]`` was left out."""

    slope: float
    intercept: float
    steps_used: tuple[float, ...]
    errors_used: tuple[float, ...]
    discarded: tuple[float, ...]
    reasons: tuple[str, ...]

    def __str__(self) -> str:
        return f"order {self.slope:.3f} from h = {self.steps_used} (discarded h = {self.discarded})"


def estimate_order(
    steps: Sequence[float] | Vector,
    errors: Sequence[float] | Vector,
    plateau: float = 1e-13,
    min_points: int = 2,
) -> OrderEstimate:
    """Fit log e = p log h + C over the points above the round-off plateau.

    Going from the largest h down, a point is discarded once its error is below ``plateau``
    (absolute) or no smaller than the error at the previous, larger h: there round-off, not the
    truncation error, dominates. Raises ValueError on malformed input or when fewer than
    ``min_points`` points remain.
    """
    if min_points < 2:
        raise ValueError(f"min_points must be at least 2 (a line needs two points), got {min_points}")
    h = np.asarray(steps, dtype=np.float64)
    e = np.asarray(errors, dtype=np.float64)
    if h.ndim != 1 or h.shape != e.shape:
        raise ValueError(f"steps and errors must be 1-D of equal length, got {h.shape} and {e.shape}")
    if not (np.all(np.isfinite(h)) and np.all(h > 0.0)):
        raise ValueError("steps must be positive and finite")
    if not (np.all(np.isfinite(e)) and np.all(e >= 0.0)):
        raise ValueError("errors must be non-negative and finite")
    order = np.argsort(-h)
    h, e = h[order], e[order]
    keep = np.zeros(h.size, dtype=bool)
    reasons: list[str] = []
    previous = np.inf
    for k in range(h.size):
        if reasons:
            reasons.append("beyond the round-off plateau reached at a larger h")
        elif e[k] <= plateau:
            reasons.append(f"error {e[k]:.3e} at or below the plateau {plateau:.0e}")
        elif e[k] >= previous:
            reasons.append(f"error {e[k]:.3e} not smaller than {previous:.3e} at the next larger h")
        else:
            keep[k] = True
            previous = e[k]
    if int(keep.sum()) < min_points:
        raise ValueError(
            f"only {int(keep.sum())} points above the round-off plateau ({plateau:.0e}); need {min_points}"
        )
    slope, intercept = np.polyfit(np.log(h[keep]), np.log(e[keep]), 1)
    return OrderEstimate(float(slope), float(intercept), tuple(h[keep].tolist()), tuple(e[keep].tolist()),
                         tuple(h[~keep].tolist()), tuple(reasons))
