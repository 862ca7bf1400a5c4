"""Reference solutions of a rigid body rolling without slipping on a plane, by DOP853 on the
Newton–Euler equations (independent of liemech's variational machinery):

    Ṙ = R Ω̂,   ẋ = v,   m v̇ = F − m g e_z,   𝕀 Ω̇ = 𝕀Ω × Ω + Rᵀ(ρ × F),

with ρ(R) the vector from the centre of mass to the contact point p_c = x + ρ and the contact
force F fixed by the derivative of the rolling condition: the material contact point moves with
the plane, v + ω × ρ = W p_c (ω = RΩ, all three components; W = Ω_t n̂ for a plane spinning at
Ω_t about its normal n through the origin, W = 0 for a plane at rest). Differentiated,
v̇ + (RΩ̇) × ρ + ω × ρ̇ = W(v + ρ̇): nine linear equations for (Ω̇, v̇, F) at every instant."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.so3 import cross, skew
from liemech.types import Matrix, Vector

E3 = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class RollingTrajectory:
    """R(t), x(t) (centre of mass), Ω(t) (body angular velocity), v(t) (centre velocity) and the
    contact force F(t), one row per time."""

    R: list[Matrix]
    x: Matrix
    omega: Matrix
    v: Matrix
    force: Matrix


Contact = Callable[[Matrix, Vector], tuple[Vector, Vector]]
"""(R, ω) ↦ (ρ, ρ̇): the contact point relative to the centre of mass and its rate of change along
the motion (the geometric contact point, not a material point)."""


def rolling_reference(mass: float, inertia: Matrix, gravity: float, contact: Contact, R0: Matrix, x0: Vector,
                      omega0: Vector, v0: Vector, times: Vector, *,
                      table_rate: Matrix | None = None) -> RollingTrajectory:
    """The rolling motion at ``times`` from DOP853 with rtol 1e-13, atol 1e-14; ``table_rate`` is
    W, the plane's velocity field w(p) = W p (None: a plane at rest)."""
    W = np.zeros((3, 3)) if table_rate is None else np.asarray(table_rate, dtype=np.float64)

    def accelerations(R: Matrix, omega: Vector, v: Vector) -> tuple[Vector, Vector, Vector]:
        rho, rho_rate = contact(R, R @ omega)
        system = np.zeros((9, 9))
        system[:3, :3] = inertia
        system[:3, 6:] = -R.T @ skew(rho)
        system[3:6, 3:6] = mass * np.eye(3)
        system[3:6, 6:] = -np.eye(3)
        system[6:, :3] = -skew(rho) @ R
        system[6:, 3:6] = np.eye(3)
        rhs = np.concatenate([cross(inertia @ omega, omega), -mass * gravity * E3, -cross(R @ omega, rho_rate) + W @ (v + rho_rate)])
        solution = np.linalg.solve(system, rhs)
        return solution[:3], solution[3:6], solution[6:]

    def rhs(t: float, y: Vector) -> Vector:
        R, omega, v = y[:9].reshape(3, 3), y[12:15], y[15:]
        omega_rate, v_rate, _ = accelerations(R, omega, v)
        return np.concatenate([(R @ skew(omega)).ravel(), v, omega_rate, v_rate])

    y0 = np.concatenate([R0.ravel(), x0, omega0, v0])
    solution = solve_ivp(rhs, (0.0, float(np.max(times))), y0, method="DOP853", t_eval=times, rtol=1e-13,
                         atol=1e-14)
    if not solution.success:
        raise RuntimeError(f"reference solution failed: {solution.message}")
    states = solution.y.T
    Rs = [row[:9].reshape(3, 3) for row in states]
    forces = np.array([accelerations(R, row[12:15], row[15:])[2] for R, row in zip(Rs, states)])
    return RollingTrajectory(Rs, states[:, 9:12].copy(), states[:, 12:15].copy(), states[:, 15:].copy(), forces)
