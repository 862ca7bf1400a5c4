"""A ball rolling without slipping on the horizontal plane, on SO(3) × R³: the Chaplygin ball, a
sphere of radius r whose centre of mass is its geometric centre and whose inertia 𝕀 may be any
(Chaplygin 1903; Borisov & Mamaev 2002, "Rolling of a rigid body on a plane and sphere").

Configuration (R, x), body velocity (Ω, v = ẋ), ω = RΩ:

    ℓ = ½ Ωᵀ𝕀Ω + ½ m |v|² − m g x_z,   Φ = x_z − r,   φ = [v + ω × (−r e_z)]_{x, y}.

The contact force passes through the centre's vertical, so besides the energy the angular
momentum about the contact point is conserved in space (all three components):
K = R𝕀Ω + m r² (ω − ω_z e_z).
"""

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.so3 import exp_matrix
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.systems.body_on_plane import Pose, RollsOnThePlane, energy
from liemech.systems.built_once import built_once
from liemech.systems.rolling_reference import RollingTrajectory, rolling_reference
from liemech.types import Matrix, Vector

E3 = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class RollingBall(RollsOnThePlane):
    """Defaults: m = r = g = 1, 𝕀 = diag(0.3, 0.4, 0.5), tilted attitude, ω₀ = (1.2, −0.7, 2.0)
    in space (the centre's velocity follows from rolling), T = 10."""

    radius: float = 1.0
    mass: float = 1.0
    gravity: float = 1.0
    body_inertia: Matrix = field(default_factory=lambda: np.diag([0.3, 0.4, 0.5]))
    rotation0: Vector = field(default_factory=lambda: np.array([0.4, -0.3, 0.6]))
    spatial_omega0: Vector = field(default_factory=lambda: np.array([1.2, -0.7, 2.0]))
    t_final: float = 10.0

    def height(self, g: Pose) -> jax.Array:
        """Φ = x_z − r."""
        return jnp.atleast_1d(g[1][2] - self.radius)

    def slip(self, g: Pose, eta: Vector) -> jax.Array:
        """φ = [v + ω × (−r e_z)]_{x, y}."""
        velocity = jnp.asarray(eta)
        return (velocity[3:] + jnp.cross(g[0] @ velocity[:3], jnp.array([0.0, 0.0, -self.radius])))[:2]

    @built_once
    def constraints(self) -> tuple[HolonomicConstraint[Pose], NonholonomicConstraint[Pose]]:
        return HolonomicConstraint(self.height), NonholonomicConstraint(self.slip)

    def problem(self) -> Problem[Pose]:
        R0 = exp_matrix(self.rotation0)
        v0 = self.radius * np.cross(self.spatial_omega0, E3)
        eta0 = np.concatenate([R0.T @ self.spatial_omega0, v0])
        holonomic, nonholonomic = self.constraints()
        return Problem(self.system(), (R0, np.array([0.0, 0.0, self.radius])), eta0, holonomic=holonomic,
                       nonholonomic=nonholonomic)

    def energy(self, g: Pose, mu: Vector) -> float:
        """H = ½ μᵀ𝕀⁻¹μ + m g x_z (V is constant on the constraint; kept so that λ_Φ is the normal force)."""
        return energy(self.inertia, self.mass, self.gravity, g, mu)

    def contact_momentum(self, g: Pose, mu: Vector) -> Vector:
        """K = R𝕀Ω + m r² (ω − ω_z e_z), the angular momentum about the contact point."""
        R = g[0]
        omega = R @ np.linalg.solve(self.body_inertia, mu[:3])
        momentum: Vector = R @ mu[:3] + self.mass * self.radius ** 2 * (omega - omega[2] * E3)
        return momentum

    def contact(self, R: Matrix, omega: Vector) -> tuple[Vector, Vector]:
        """ρ = −r e_z, fixed (for ``rolling_reference``)."""
        return -self.radius * E3, np.zeros(3)

    def reference(self, times: Vector) -> RollingTrajectory:
        """The motion by DOP853 on the Newton–Euler equations."""
        problem = self.problem()
        (R0, x0), eta0 = problem.g0, problem.eta0
        return rolling_reference(self.mass, self.body_inertia, self.gravity, self.contact, R0, x0, eta0[:3],
                                 eta0[3:], times)
