"""What ``integrate`` returns: nodal configurations, velocities, momenta and solver statistics."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

import jax
import numpy as np

from liemech.types import Matrix, Vector

P = TypeVar("P")


@dataclass(frozen=True)
class SolverStats:
    """Newton statistics of every step, stored or not (``iterations[k]``, ``residuals[k]`` for the
    step ending at t = k·h; entry 0 is 0), and the wall time of the whole run in seconds."""

    iterations: Vector
    residuals: Vector
    wall_time: float

    @property
    def mean_iterations(self) -> float:
        """Mean Newton iterations per step."""
        return float(np.mean(self.iterations[1:])) if self.iterations.size > 1 else 0.0


def stack(points: Sequence[P]) -> P:
    """Points as one point of stacked numpy arrays (leading axis over the points; a product
    point's factors are stacked one by one)."""
    return cast(P, jax.tree.map(lambda *leaves: np.stack([np.asarray(x, dtype=np.float64) for x in leaves]),
                                *points))


def unstack(stacked: P) -> list[P]:
    """The points of ``stack``'s result, in order."""
    count = len(jax.tree.leaves(stacked)[0])
    return [cast(P, jax.tree.map(lambda leaf: leaf[k], stacked)) for k in range(count)]


@dataclass(frozen=True)
class Solution(Generic[P]):
    """A discrete trajectory at the stored nodes t[k] = k·h·store_every.

    ``g`` holds the scheme's nodal configurations stacked along a leading axis: an array of shape
    (K, 3, 3) on SO(3), (K, n) on Rⁿ, and on a product a tuple of such arrays, one per factor
    (``point(k)`` and ``points()`` give single points on any space). ``mu[k]`` is the body momentum;
    ``eta[k]`` the velocity of the nodal momentum (∂ℓ/∂η (g_k, η_k) = μ_k); ``lam`` holds multipliers
    or None; ``extras`` holds named arrays a scheme has but that do not live at the nodes
    (documented by the method). Everything is numpy, ready to plot or save.
    """

    t: Vector
    g: P
    eta: Matrix
    mu: Matrix
    lam: Matrix | None
    stats: SolverStats
    extras: dict[str, Matrix] = field(default_factory=dict)

    def point(self, k: int) -> P:
        """g_k, the k-th stored configuration (negative k counts from the end)."""
        return cast(P, jax.tree.map(lambda leaf: leaf[k], self.g))

    def points(self) -> list[P]:
        """Every stored configuration, in order."""
        return unstack(self.g)
