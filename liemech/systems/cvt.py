"""The pendulum-driven continuously variable transmission on R³ (Martín de Diego & Sato Martín de
Almagro 2018, §7.2, after Modin & Verdier): ℓ = ½|v|² − ½(x² + z² − 2 cos y + ε sin 2y),
φ = v_z + sin(y) v_x. A passenger (x, z) driven by a pendulum (y) through the constraint; the
multiplier is λ = (z + x sin y − cos y v_x v_y)/(1 + sin²y)."""

import math
import functools
from dataclasses import dataclass
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np

from liemech.groups.euclidean import Rn
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector
from liemech.systems.built_once import built_once


@dataclass(frozen=True)
class CVT:
    """ε = ½ (the paper's figures); ``level`` "low" (E_T = 9/5, the driver oscillates) or "high"
    (E_T = 4, it rotates), both from q₀ = (1, 0, 1)."""

    epsilon: float = 0.5
    level: Literal["low", "high"] = "low"

    def potential(self, q: Vector) -> jax.Array:
        """V(q) = ½(x² + z² − 2 cos y + ε sin 2y), traceable by JAX."""
        x, y, z = jnp.asarray(q[0]), jnp.asarray(q[1]), jnp.asarray(q[2])
        return 0.5 * (x * x + z * z - 2.0 * jnp.cos(y) + self.epsilon * jnp.sin(2.0 * y))

    def potential_gradient(self, q: Vector) -> Vector:
        y = float(q[1])
        return np.array([q[0], math.sin(y) + self.epsilon * math.cos(2.0 * y), q[2]])

    def potential_hessian(self, q: Vector) -> Matrix:
        y = float(q[1])
        return np.diag([1.0, math.cos(y) - 2.0 * self.epsilon * math.sin(2.0 * y), 1.0])

    @staticmethod
    def transmission(q: Vector, v: Vector) -> jax.Array:
        """φ(q, v) = v_z + sin(y) v_x, traceable by JAX."""
        return jnp.array([v[2] + jnp.sin(q[1]) * v[0]])

    @staticmethod
    def transmission_d_eta(q: Vector, v: Vector) -> Matrix:
        """∂φ/∂v = (sin y, 0, 1)."""
        return np.array([[math.sin(q[1]), 0.0, 1.0]])

    @staticmethod
    def transmission_d_g(q: Vector, v: Vector) -> Matrix:
        """∂φ/∂q = (0, cos(y) v_x, 0)."""
        return np.array([[0.0, math.cos(q[1]) * v[0], 0.0]])

    @staticmethod
    @functools.cache
    def constraint() -> NonholonomicConstraint[Vector]:
        return NonholonomicConstraint(CVT.transmission, d_eta=CVT.transmission_d_eta, d_g=CVT.transmission_d_g)

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(3), np.eye(3), self.potential, self.potential_gradient, self.potential_hessian)

    def problem(self) -> Problem[Vector]:
        speed = 3.0 * math.sqrt(10.0) / 5.0 if self.level == "low" else math.sqrt(8.0)
        return Problem(self.system(), np.array([1.0, 0.0, 1.0]), np.array([0.0, speed, 0.0]),
                       nonholonomic=self.constraint())

    @staticmethod
    def passenger_energy(q: Vector, v: Vector) -> float:
        """E_p = ½(v_x² + v_z²) + ½(x² + z²)."""
        return 0.5 * float(v[0] ** 2 + v[2] ** 2 + q[0] ** 2 + q[2] ** 2)

    def driver_energy(self, q: Vector, v: Vector) -> float:
        """E_d = ½v_y² − cos y + (ε/2) sin 2y."""
        return 0.5 * float(v[1] ** 2) - math.cos(q[1]) + 0.5 * self.epsilon * math.sin(2.0 * q[1])
