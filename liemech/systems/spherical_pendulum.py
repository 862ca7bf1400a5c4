"""The mathematical pendulum in 3D (Kinon, Betsch & Schneider 2023, §6.1): a point mass on a massless
rod, q ∈ R³, gravity along −e₃."""

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.mechanics import point_masses
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once


@dataclass(frozen=True)
class SphericalPendulum:
    """L = ½m v·v − m g q₃ (eqs. (92)–(94)), M = m I₃, g(q) = ½(q·q/ℓ² − 1) with G = qᵀ/ℓ² and
    D²g = I/ℓ² (eqs. (95)–(97)); rotations about e₃ give J₃ = e₃·(q × p) (eq. (98)).
    Defaults: m = ℓ = 1, g = 9.81, q₀ = e₁, v₀ = e₂ (so H₀ = ½, J₃ = 1)."""

    mass: float = 1.0
    length: float = 1.0
    gravity: float = 9.81
    q0: Vector = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    v0: Vector = field(default_factory=lambda: np.array([0.0, 1.0, 0.0]))

    def mass_matrix(self) -> Matrix:
        return self.mass * np.eye(3)

    def rod(self, q: Vector) -> jax.Array:
        """g(q) = ½(q·q/ℓ² − 1), traceable by JAX."""
        return jnp.array([0.5 * ((1.0 / self.length**2) * jnp.dot(q, q) - 1.0)])

    def rod_jacobian(self, q: Vector) -> Matrix:
        """G = qᵀ/ℓ²."""
        return (1.0 / self.length**2) * q[None, :]

    def rod_hessians(self, q: Vector) -> Tensor:
        """D²g = I/ℓ²."""
        return (1.0 / self.length**2) * np.eye(3)[None, :, :]

    @built_once
    def constraint(self) -> HolonomicConstraint[Vector]:
        """g = ½(q·q/ℓ² − 1), G = qᵀ/ℓ², D²g = I/ℓ²."""
        return HolonomicConstraint(self.rod, self.rod_jacobian, self.rod_hessians)

    def potential(self, q: Vector) -> jax.Array:
        """V = m g q₃, traceable by JAX."""
        return self.mass * self.gravity * jnp.asarray(q[2])

    def potential_gradient(self, q: Vector) -> Vector:
        return np.array([0.0, 0.0, self.mass * self.gravity])

    @staticmethod
    def potential_hessian(q: Vector) -> Matrix:
        return np.zeros((3, 3))

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(3), self.mass_matrix(), self.potential, self.potential_gradient,
                                self.potential_hessian)

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), self.q0, self.v0, holonomic=self.constraint())

    def energy(self, q: Vector, p: Vector) -> float:
        """H = ½ p·p/m + m g q₃."""
        return 0.5 * float(p @ p) / self.mass + float(self.potential(q))

    @staticmethod
    def angular_momentum(q: Vector, p: Vector) -> Vector:
        """q × p (about the suspension point)."""
        return point_masses.angular_momentum(q, p)

    @staticmethod
    def vertical_angular_momentum(q: Vector, p: Vector) -> float:
        """J₃ = e₃·(q × p), conserved (eq. (98))."""
        return float(q[0] * p[1] - q[1] * p[0])
