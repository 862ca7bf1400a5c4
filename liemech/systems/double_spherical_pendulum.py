"""The double spherical pendulum in Cartesian coordinates q = (q¹, q²) ∈ R⁶ (Leyendecker, Betsch &
Steinmann 2004, §4.1, eqs. (35)–(37)): H = ½pᵀM⁻¹p + g (e₂; e₂)ᵀMq with M = diag(m₁I₃, m₂I₃),
gravity along −e₂, and the rods g₁ = ½(|q¹|² − l₁²) = 0, g₂ = ½(|q² − q¹|² − l₂²) = 0. The paper
starts from rest (the angular momentum about e₂ is then zero); the default here adds a tangent
velocity so that it is not."""

import functools
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.systems.constrained_reference import index1_reference
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once

_E2 = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 0.0])


@dataclass(frozen=True)
class DoubleSphericalPendulum:
    """m₁ = m₂ = 1, l₁ = l₂ = 1, g = 9.81; q¹₀ = (1, 0, 0), q²₀ = q¹₀ + e₃ (horizontal rods)."""

    mass1: float = 1.0
    mass2: float = 1.0
    gravity: float = 9.81
    q0: Vector = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 1.0, 0.0, 1.0]))
    v0: Vector = field(default_factory=lambda: np.array([0.0, 0.0, 0.5, 0.7, 0.0, 0.5]))

    def mass_matrix(self) -> Matrix:
        return np.diag([self.mass1] * 3 + [self.mass2] * 3)

    @staticmethod
    def rods(q: Vector) -> jax.Array:
        """g(q) = (½(|q¹|² − 1), ½(|q² − q¹|² − 1)), traceable by JAX."""
        d = q[3:] - q[:3]
        return jnp.stack([0.5 * (jnp.dot(q[:3], q[:3]) - 1.0), 0.5 * (jnp.dot(d, d) - 1.0)])

    @staticmethod
    def rods_jacobian(q: Vector) -> Matrix:
        d = q[3:] - q[:3]
        return np.array([[*q[:3], 0.0, 0.0, 0.0], [*(-d), *d]])

    @staticmethod
    def rods_hessians(q: Vector) -> Tensor:
        eye, zero = np.eye(3), np.zeros((3, 3))
        return np.stack([np.block([[eye, zero], [zero, zero]]), np.block([[eye, -eye], [-eye, eye]])])

    @staticmethod
    @functools.cache
    def constraint() -> HolonomicConstraint[Vector]:
        return HolonomicConstraint(DoubleSphericalPendulum.rods, DoubleSphericalPendulum.rods_jacobian,
                                   DoubleSphericalPendulum.rods_hessians)

    def potential_gradient(self, q: Vector) -> Vector:
        """∇U = g M (e₂; e₂) (U is linear)."""
        weight: Vector = self.gravity * (self.mass_matrix() @ _E2)
        return weight

    def potential(self, q: Vector) -> jax.Array:
        """U = ∇U·q, traceable by JAX."""
        return jnp.dot(self.potential_gradient(q), q)

    @staticmethod
    def potential_hessian(q: Vector) -> Matrix:
        return np.zeros((6, 6))

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(6), self.mass_matrix(), self.potential, self.potential_gradient,
                                self.potential_hessian)

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), self.q0, self.v0, holonomic=self.constraint())

    def energy(self, q: Vector, p: Vector) -> float:
        return 0.5 * float(p @ np.linalg.solve(self.mass_matrix(), p)) + self.gravity * float(
            _E2 @ self.mass_matrix() @ q)

    @staticmethod
    def angular_momentum(q: Vector, p: Vector) -> float:
        """e₂ · Σ_i qⁱ × pⁱ, conserved by the rotations about the gravity axis."""
        return float(q[2] * p[0] - q[0] * p[2] + q[5] * p[3] - q[3] * p[5])

    def reference(self, times: Vector) -> Matrix:
        """(q, v) at ``times`` from DOP853 on the index-1 equations (rtol 1e-13, atol 1e-14), one row per
        time: q̇ = v, M v̇ = −∇U + Bᵀλ with B M⁻¹(−∇U + Bᵀλ) + (vᵀ∇²g_k v)_k = 0."""
        q, v, _ = index1_reference(self.system(), self.constraint(), self.q0, self.v0, times)
        return np.hstack([q, v])
