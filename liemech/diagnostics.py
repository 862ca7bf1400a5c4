"""First integrals and their drift along a discrete solution."""

from typing import TypeVar

import numpy as np

from liemech.groups.base import LieGroup
from liemech.integrators.solution import Solution
from liemech.mechanics.lagrangian import Lagrangian
from liemech.types import Vector

P = TypeVar("P")


def energy(system: Lagrangian[P], solution: Solution[P]) -> Vector:
    """E_k = ⟨μ_k, η_k⟩ − ℓ(g_k, η_k) at every stored node."""
    return np.array([system.energy(g, eta) for g, eta in zip(solution.g, solution.eta)])


def spatial_momentum(group: LieGroup[P], g: P, mu: Vector) -> Vector:
    """Ad*_{g⁻¹} μ = Ad(g⁻¹)ᵀ μ: the momentum map of left translations, conserved when ℓ is
    left-invariant (Noether)."""
    return group.Ad(group.inverse(g)).T @ mu


def momentum_along(group: LieGroup[P], solution: Solution[P], direction: Vector) -> Vector:
    """⟨Ad*_{g_k⁻¹} μ_k, ζ⟩ at every node: the Noether momentum of the symmetry exp(tζ)·g."""
    return np.array([float(spatial_momentum(group, g, mu) @ direction) for g, mu in zip(solution.g, solution.mu)])


def drift(values: Vector) -> float:
    """max_k |v_k − v_0|."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.max(np.abs(values - values[0]), initial=0.0))
