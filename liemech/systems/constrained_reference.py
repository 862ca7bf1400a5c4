"""Reference solutions of L = ½vᵀMv − V(q) with holonomic constraints g(q) = 0 on Rⁿ by DOP853 on
the index-1 form of the continuous equations (Kinon, Betsch & Schneider 2023, eq. (28),
with liemech's plus sign):

    q̇ = v,   M v̇ = −∇V(q) + G(q)ᵀλ,   λ = −(G M⁻¹ Gᵀ)⁻¹ [G M⁻¹(−∇V) + (vᵀ D²g_k v)_k],

which keeps G v = 0 and g = 0 for consistent data (d²g/dt² = 0)."""

import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.euclidean import Rn
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector


def index1_reference(system: MechanicalSystem[Vector], constraint: HolonomicConstraint[Vector], q0: Vector,
                     v0: Vector, times: Vector) -> tuple[Matrix, Matrix, Matrix]:
    """q(t), v(t), λ(t) at ``times`` (one row per time) from DOP853 with rtol 1e-13, atol 1e-14."""
    group = system.group
    if not isinstance(group, Rn) or system.constant_inertia is None:
        raise TypeError("index1_reference needs a MechanicalSystem on Rn with constant inertia")
    n = group.dim
    M_inv = np.linalg.inv(system.constant_inertia)

    def multiplier(q: Vector, v: Vector) -> Vector:
        G, hessians = constraint.trivialised_jacobian(group, q), constraint.trivialised_hessians(group, q)
        force = -system.potential_gradient(q)
        curvature = np.einsum("a,kab,b->k", v, hessians, v)
        lam: Vector = -np.linalg.solve(G @ M_inv @ G.T, G @ M_inv @ force + curvature)
        return lam

    def rhs(t: float, y: Vector) -> Vector:
        q, v = y[:n], y[n:]
        G = constraint.trivialised_jacobian(group, q)
        return np.concatenate([v, M_inv @ (-system.potential_gradient(q) + G.T @ multiplier(q, v))])

    solution = solve_ivp(rhs, (0.0, float(np.max(times))), np.concatenate([q0, v0]), method="DOP853", t_eval=times,
                         rtol=1e-13, atol=1e-14)
    if not solution.success:
        raise RuntimeError(f"reference solution failed: {solution.message}")
    q, v = solution.y[:n].T.copy(), solution.y[n:].T.copy()
    return q, v, np.array([multiplier(a, b) for a, b in zip(q, v)])
