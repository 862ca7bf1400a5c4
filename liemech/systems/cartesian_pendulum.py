"""The planar pendulum in Cartesian coordinates on R²: ℓ = ½|q̇|² − y, Φ(q) = ½(|q|² − 1)
(unit mass, length and gravity)."""

import functools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.euclidean import Rn
from liemech.mechanics.holonomic import HolonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Tensor, Vector


@dataclass(frozen=True)
class CartesianPendulum:
    """Released from rest at angle θ₀ from the downward vertical: q = (sin θ, −cos θ)."""

    theta0: float = 1.0
    t_final: float = 2.0

    @staticmethod
    def rod(q: Vector) -> jax.Array:
        """Φ(q) = ½(|q|² − 1), traceable by JAX."""
        return jnp.array([0.5 * (jnp.dot(q, q) - 1.0)])

    @staticmethod
    def rod_jacobian(q: Vector) -> Matrix:
        """B = qᵀ."""
        return q[None, :]

    @staticmethod
    def rod_hessians(q: Vector) -> Tensor:
        """The constant Hessian I."""
        return np.eye(2)[None, :, :]

    @staticmethod
    @functools.cache
    def constraint() -> HolonomicConstraint[Vector]:
        """Φ = ½(|q|² − 1), B = qᵀ, Hessian I."""
        return HolonomicConstraint(CartesianPendulum.rod, CartesianPendulum.rod_jacobian,
                                   CartesianPendulum.rod_hessians)

    @staticmethod
    def potential(q: Vector) -> jax.Array:
        """V = y, traceable by JAX."""
        return jnp.asarray(q[1])

    @staticmethod
    def potential_gradient(q: Vector) -> Vector:
        return np.array([0.0, 1.0])

    @staticmethod
    def potential_hessian(q: Vector) -> Matrix:
        return np.zeros((2, 2))

    @staticmethod
    @functools.cache
    def system() -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(2), np.eye(2), CartesianPendulum.potential, CartesianPendulum.potential_gradient,
                                CartesianPendulum.potential_hessian)

    def problem(self) -> Problem[Vector]:
        q0 = np.array([np.sin(self.theta0), -np.cos(self.theta0)])
        return Problem(self.system(), q0, np.zeros(2), holonomic=self.constraint())

    @staticmethod
    def energy(q: Vector, p: Vector) -> float:
        return 0.5 * float(p @ p) + float(q[1])

    def reference(self, times: Vector) -> tuple[Matrix, Matrix, Vector]:
        """q(t), p(t) and the multiplier λ(t) from θ̈ = −sin θ by DOP853 (rtol 1e-13, atol 1e-14).

        With μ̇ = f + Bᵀλ = (0, −1) + λq: λ = −(θ̇² + cos θ)... written as λ = −|q̇|² + y (|q| = 1).
        """
        sol = solve_ivp(lambda t, y: np.array([y[1], -np.sin(y[0])]), (0.0, float(np.max(times))),
                        np.array([self.theta0, 0.0]), method="DOP853", t_eval=times, rtol=1e-13, atol=1e-14)
        theta, omega = sol.y
        q = np.column_stack([np.sin(theta), -np.cos(theta)])
        p = np.column_stack([omega * np.cos(theta), omega * np.sin(theta)])
        lam = -(omega**2) + q[:, 1]
        return q, p, lam
