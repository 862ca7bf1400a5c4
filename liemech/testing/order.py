"""Convergence order from errors at several step sizes: a least-squares slope of log e vs log h,
ignoring the round-off plateau."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from liemech.types import Vector


@dataclass(frozen=True)
class OrderEstimate:
    """The fitted slope (the order) and the points it used and discarded."""

    slope: float
    steps_used: tuple[float, ...]
    errors_used: tuple[float, ...]
    discarded: tuple[float, ...]

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
    previous = np.inf
    for k in range(h.size):
        if e[k] <= plateau or e[k] >= previous:
            break
        keep[k] = True
        previous = e[k]
    if int(keep.sum()) < min_points:
        raise ValueError(
            f"only {int(keep.sum())} points above the round-off plateau ({plateau:.0e}); need {min_points}"
        )
    slope = float(np.polyfit(np.log(h[keep]), np.log(e[keep]), 1)[0])
    return OrderEstimate(slope, tuple(h[keep].tolist()), tuple(e[keep].tolist()), tuple(h[~keep].tolist()))
