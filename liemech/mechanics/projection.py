"""Projection of nearly consistent initial data onto Φ(g) = 0 and B(g)η = 0."""

from typing import SupportsIndex, TypeVar

import jax
import numpy as np

from liemech.input_checks import checked_count, checked_vector
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.lagrangian import Lagrangian
from liemech.types import Vector

P = TypeVar("P")


def project_to_constraints(
    system: Lagrangian[P],
    constraint: HolonomicConstraint[P],
    g: P,
    eta: Vector,
    max_iterations: SupportsIndex = 20,
) -> tuple[P, Vector]:
    """(g, η) moved onto the constraint manifold and its tangent space.

    g ← g τ(−B⁺Φ(g)) (Gauss–Newton with the minimum-norm step) until |Φ| stops decreasing below
    1e-15·max(1, |Φ(g₀)|); then η ← η − M⁻¹Bᵀ(BM⁻¹Bᵀ)⁻¹Bη, the M-orthogonal projection with M =
    ∂²ℓ/∂η². Raises ValueError if Φ cannot be driven to round-off or the projection is not finite.
    """
    if not isinstance(system, Lagrangian):
        raise TypeError(f"system must be a Lagrangian (e.g. MechanicalSystem), got {type(system).__name__}")
    if not isinstance(constraint, HolonomicConstraint):
        raise TypeError(f"constraint must be a HolonomicConstraint, got {type(constraint).__name__}")
    group = system.group
    chart = group.retraction("exp")
    g = group.check_point(g, "g")
    eta = checked_vector(eta, group.dim, "eta")
    max_iterations = checked_count(max_iterations, "max_iterations")
    start = float(np.max(np.abs(constraint.value(g))))
    target = 1e-15 * max(1.0, start)
    for _ in range(max_iterations):
        phi = constraint.value(g)
        if float(np.max(np.abs(phi))) <= target:
            break
        B = constraint.trivialised_jacobian(group, g)
        step = -np.asarray(np.linalg.lstsq(B, phi, rcond=None)[0], dtype=np.float64)
        g = group.compose(g, chart.tau(step))
    else:
        defect = float(np.max(np.abs(constraint.value(g))))
        if defect > 1e-12 * max(1.0, start):
            raise ValueError(f"g: could not project onto Φ = 0 (|Φ| = {defect:.3e} after {max_iterations} steps)")
    B = constraint.trivialised_jacobian(group, g)
    M = system.momentum_d_eta(g, eta)
    try:
        M_inv_Bt = np.linalg.solve(M, B.T)
        eta = eta - M_inv_Bt @ np.linalg.solve(B @ M_inv_Bt, B @ eta)
    except np.linalg.LinAlgError:
        eta = np.full_like(eta, np.nan)
    if not all(np.all(np.isfinite(x)) for x in jax.tree.leaves((g, eta))):
        raise ValueError("eta: the projection onto B(g)η = 0 is not finite (B M⁻¹ Bᵀ is singular at the projected g: "
                         "redundant constraints?)")
    return g, eta

