"""A thin disc rolling without slipping on the horizontal plane, on SO(3) × R³.

The configuration is (R, x): the disc's attitude (body axis e₃ normal to the disc) and its centre;
the body velocity is (Ω, v), Ω the body angular velocity and v = ẋ. With n = Re₃ and the unit
vector u = −(e_z − n_z n)/√(1 − n_z²) from the centre to the lowest point of the rim,

    ℓ = ½ Ωᵀ diag(I₁, I₁, I₃) Ω + ½ m |v|² − m g x_z,
    Φ(R, x) = x_z − r √(1 − n_z²)                       (holonomic: the rim touches the plane),
    φ(R, x, Ω, v) = [v + (RΩ) × r u]_{x, y}             (nonholonomic: the contact point does not slip).

The vertical component of the contact velocity is dΦ/dt (the lowest point of the rim is where
the height is least), so only the two tangential components are nonholonomic constraints.

Steady motions (O'Reilly 1996, "The dynamics of rolling disks and sliding disks"; Neĭmark &
Fufaev 1972, "Dynamics of nonholonomic systems"): the disc keeps a lean β (angle between its plane and the vertical),
precesses about the vertical at rate ψ̇ and spins relative to the precessing frame at rate σ, with

    ψ̇ cos β [(I₃ + m r²) σ + (I₃ + m r² − I₁) ψ̇ sin β] + m g r sin β = 0,

the contact point runs on a circle of radius |r σ / ψ̇|, and the centre on one of radius
|r σ / ψ̇ + r sin β|. ``steady`` gives the exact motion for a lean and a precession rate.
"""

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.so3 import cross, exp_matrix
from liemech.input_checks import checked_real
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.systems.body_on_plane import Pose, RollsOnThePlane, energy
from liemech.systems.built_once import built_once
from liemech.systems.rolling_reference import RollingTrajectory, rolling_reference
from liemech.types import Matrix, Vector

E3 = np.array([0.0, 0.0, 1.0])


def lowest_rim_direction(normal: Vector | jax.Array) -> jax.Array:
    """u = −(e_z − n_z n)/√(1 − n_z²): the unit vector in the disc's plane pointing down most."""
    down = jnp.array([0.0, 0.0, 1.0]) - normal[2] * normal
    return -down / jnp.sqrt(1.0 - normal[2] ** 2)


@dataclass(frozen=True)
class SteadyRolling:
    """The exact steady motion of a ``RollingDisc`` with lean β and precession rate ψ̇ (module
    docstring): R(t) = R_z(ψ̇t) R₀ R_{e₃}(σt), the centre on a horizontal circle about the vertical
    axis through (r σ/ψ̇, 0, 0), starting with the contact point at the origin."""

    disc: "RollingDisc"
    lean: float
    precession: float

    @property
    def spin(self) -> float:
        """σ from the steady-motion relation."""
        d, b, p = self.disc, self.lean, self.precession
        diametral, _, axial_centre = d.principal_moments
        axial = axial_centre + d.mass * d.radius ** 2
        return -(d.mass * d.gravity * d.radius * math.sin(b)
                 + (axial - diametral) * p ** 2 * math.sin(b) * math.cos(b)) / (axial * p * math.cos(b))

    @property
    def path_radius(self) -> float:
        """r σ / ψ̇: the signed radius of the contact point's circle (its centre at (r σ/ψ̇, 0, 0))."""
        return self.disc.radius * self.spin / self.precession

    def pose(self, t: float) -> Pose:
        """(R(t), x(t))."""
        b, r = self.lean, self.disc.radius
        R0 = np.array([[-math.sin(b), 0.0, math.cos(b)], [0.0, -1.0, 0.0], [math.cos(b), 0.0, math.sin(b)]])
        yaw = exp_matrix(self.precession * t * E3)
        centre0 = np.array([-r * math.sin(b) - self.path_radius, 0.0, 0.0])  # relative to the axis
        axis = np.array([self.path_radius, 0.0, r * math.cos(b)])
        return yaw @ R0 @ exp_matrix(self.spin * t * E3), axis + yaw @ centre0

    def velocity(self, t: float) -> Vector:
        """(Ω(t), v(t)): Ω = Rᵀ ψ̇ e_z + σ e₃ and v = ψ̇ e_z × (x − axis)."""
        R, x = self.pose(t)
        omega = self.precession * R.T @ E3 + self.spin * E3
        v = self.precession * cross(E3, x - np.array([self.path_radius, 0.0, 0.0]))
        return np.concatenate([omega, v])

    def problem(self) -> Problem[Pose]:
        return self.disc.problem(*self.pose(0.0), self.velocity(0.0))


@dataclass(frozen=True)
class RollingDisc(RollsOnThePlane):
    """A disc of radius r and mass m under gravity g (module docstring). Its moments of inertia
    about the centre are I₁ = ``diametral_inertia`` about a diameter and I₃ = ``axial_inertia``
    about the symmetry axis; each one left None is that of a thin uniform disc, I₁ = m r²/4 and
    I₃ = m r²/2."""

    radius: float = 1.0
    mass: float = 1.0
    gravity: float = 1.0
    diametral_inertia: float | None = None
    axial_inertia: float | None = None

    def __post_init__(self) -> None:
        checked_real(self.radius, "radius", 0.0)
        checked_real(self.mass, "mass", 0.0)
        checked_real(self.gravity, "gravity")
        for name in ("diametral_inertia", "axial_inertia"):
            if getattr(self, name) is not None:
                checked_real(getattr(self, name), name, 0.0,
                             requirement="be a positive finite number, or None for a thin uniform disc")

    @property
    def principal_moments(self) -> tuple[float, float, float]:
        """(I₁, I₁, I₃): the given moments, or those of a thin uniform disc, m r²/4 and m r²/2."""
        uniform = self.mass * self.radius ** 2
        diametral = 0.25 * uniform if self.diametral_inertia is None else self.diametral_inertia
        axial = 0.5 * uniform if self.axial_inertia is None else self.axial_inertia
        return diametral, diametral, axial

    @property
    def inertia(self) -> Matrix:
        """Blocks diag(I₁, I₁, I₃) for Ω and m I for v."""
        return np.diag([*self.principal_moments, *[self.mass] * 3])

    def contact_height(self, g: Pose) -> jax.Array:
        """Φ = x_z − r √(1 − n_z²)."""
        return jnp.atleast_1d(g[1][2] - self.radius * jnp.sqrt(1.0 - g[0][2, 2] ** 2))

    def slip(self, g: Pose, eta: Vector) -> jax.Array:
        """φ = [v + (RΩ) × r u]_{x, y}, the tangential velocity of the contact point."""
        R = g[0]
        contact = self.radius * lowest_rim_direction(R[:, 2])
        velocity = jnp.asarray(eta)
        return (velocity[3:] + jnp.cross(R @ velocity[:3], contact))[:2]

    @built_once
    def constraints(self) -> tuple[HolonomicConstraint[Pose], NonholonomicConstraint[Pose]]:
        return HolonomicConstraint(self.contact_height), NonholonomicConstraint(self.slip)

    def problem(self, R0: Matrix, x0: Vector, eta0: Vector) -> Problem[Pose]:
        holonomic, nonholonomic = self.constraints()
        return Problem(self.system(), (R0, x0), eta0, holonomic=holonomic, nonholonomic=nonholonomic)

    def steady(self, lean: float, precession: float) -> SteadyRolling:
        """The steady motion with lean β (rad, 0 < |β| < π/2) and precession rate ψ̇ ≠ 0."""
        if not (0.0 < abs(lean) < 0.5 * math.pi and precession != 0.0):
            raise ValueError(f"need 0 < |lean| < π/2 and precession ≠ 0, got lean={lean!r}, precession={precession!r}")
        return SteadyRolling(self, lean, precession)

    def energy(self, g: Pose, mu: Vector) -> float:
        """H = ½ μᵀ𝕀⁻¹μ + m g x_z."""
        return energy(self.inertia, self.mass, self.gravity, g, mu)

    def contact(self, R: Matrix, omega: Vector) -> tuple[Vector, Vector]:
        """ρ = r u(n) and ρ̇ = r u̇ along ṅ = ω × n (for ``rolling_reference``)."""
        n = R[:, 2]
        n_rate = cross(omega, n)
        w = E3 - n[2] * n
        w_rate = -n_rate[2] * n - n[2] * n_rate
        size = float(np.linalg.norm(w))
        u_rate = -w_rate / size + w * float(w @ w_rate) / size ** 3
        return -self.radius * w / size, self.radius * u_rate

    def reference(self, problem: Problem[Pose], times: Vector) -> RollingTrajectory:
        """The motion from the problem's initial data by DOP853 on the Newton–Euler equations."""
        (R0, x0), eta0 = problem.g0, problem.eta0
        return rolling_reference(self.mass, self.inertia[:3, :3], self.gravity, self.contact, R0, x0, eta0[:3],
                                 eta0[3:], times)

