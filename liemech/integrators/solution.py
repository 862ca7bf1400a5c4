"""What ``integrate`` returns: nodal configurations, velocities, momenta and solver statistics."""

from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from liemech.types import Matrix, Vector

P = TypeVar("P")


@dataclass(frozen=True)
class SolverStats:
    """Newton statistics per stored step (``iterations[k]``, ``residuals[k]`` for the step ending
    at ``t[k]``; entry 0 is 0) and the wall time of the whole run in seconds."""

    iterations: Vector
    residuals: Vector
    wall_time: float

    @property
    def mean_iterations(self) -> float:
        """Mean Newton iterations per step (over the stored steps after the first node)."""
        return float(np.mean(self.iterations[1:])) if self.iterations.size > 1 else 0.0


@dataclass(frozen=True)
class Solution(Generic[P]):
    """A discrete trajectory at the stored nodes t[k] = k·h·store_every.

    ``g[k]`` and ``mu[k]`` are the scheme's nodal configuration and body momentum; ``eta[k]`` is the
    velocity of the nodal momentum (∂ℓ/∂η (g_k, η_k) = μ_k); ``lam`` holds multipliers or None;
    ``extras`` holds named arrays a scheme has but that do not live at the nodes (documented by the
    method).
    """

    t: Vector
    g: list[P]
    eta: Matrix
    mu: Matrix
    lam: Matrix | None
    stats: SolverStats
    extras: dict[str, Matrix] = field(default_factory=dict)
