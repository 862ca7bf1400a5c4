"""First integrals and their drift along a discrete solution, and its constraint residuals."""

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from liemech.groups.base import LieGroup
from liemech.mechanics.lagrangian import Lagrangian
from liemech.mechanics.problem import Problem
from liemech.run.solution import Solution, unstack
from liemech.types import Matrix, Vector

P = TypeVar("P")


def energy(system: Lagrangian[P], solution: Solution[P]) -> Vector:
    """E_k = ⟨μ_k, η_k⟩ − ℓ(g_k, η_k) at every stored node."""
    return np.array([system.energy(g, eta) for g, eta in zip(solution.points(), solution.eta)])


def spatial_momentum(group: LieGroup[P], g: P, mu: Vector) -> Vector:
    """Ad*_{g⁻¹} μ = Ad(g⁻¹)ᵀ μ: the momentum map of left translations, conserved when ℓ is
    left-invariant (Noether)."""
    return group.Ad(group.inverse(g)).T @ mu


def momentum_along(group: LieGroup[P], solution: Solution[P], direction: Vector) -> Vector:
    """⟨Ad*_{g_k⁻¹} μ_k, ζ⟩ at every node: the Noether momentum of the symmetry exp(tζ)·g."""
    return np.array([float(spatial_momentum(group, g, mu) @ direction) for g, mu in zip(solution.points(), solution.mu)])


def drift(values: Vector) -> float:
    """max_k |v_k − v_0|."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.max(np.abs(values - values[0]), initial=0.0))


def velocity_constraint(problem: Problem[P], points: list[P] | P, velocities: Sequence[Vector] | Matrix) -> Matrix:
    """Row k: B(g_k)η_k, the velocity-level holonomic constraint at (g_k, η_k); ``points`` is a list
    of points or stacked points such as ``sol.g``."""
    c = problem.holonomic
    if c is None:
        raise ValueError("velocity_constraint needs a problem with a holonomic constraint")
    listed = points if isinstance(points, list) else unstack(points)
    return np.array([c.trivialised_jacobian(problem.group, g) @ eta for g, eta in zip(listed, velocities)])


def holonomic_residuals(problem: Problem[P], solution: Solution[P]) -> tuple[Matrix, Matrix, Matrix]:
    """Rows k, at every stored node: Φ(g_k); B(g_k)η_k with η_k = ``solution.eta[k]`` (the scheme's
    nodal velocity); and B(g_k)v_k with v_k the velocity of the nodal momentum, ∂ℓ/∂η (g_k, v_k) = μ_k
    (𝕀⁻¹μ_k for constant inertia: the secondary constraint G M⁻¹p of the GGL schemes)."""
    c = problem.holonomic
    if c is None:
        raise ValueError("holonomic_residuals needs a problem with a holonomic constraint")
    points = solution.points()
    momentum_velocities = [problem.system.velocity(g, mu) for g, mu in zip(points, solution.mu)]
    return (np.array([c.value(g) for g in points]), velocity_constraint(problem, points, solution.eta),
            velocity_constraint(problem, points, momentum_velocities))
