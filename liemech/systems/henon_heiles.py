"""Hénon–Heiles on R²: ℓ = ½|q̇|² − U(q), U = ½(x² + y²) + x²y − y³/3 (a nonlinear test problem)."""

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.euclidean import Rn
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector
from liemech.systems.built_once import built_once


@dataclass(frozen=True)
class HenonHeiles:
    """Unit masses; the default orbit has energy < 1/6 and stays bounded."""

    q0: Vector = field(default_factory=lambda: np.array([0.1, -0.2]))
    p0: Vector = field(default_factory=lambda: np.array([0.3, 0.1]))

    @staticmethod
    def potential(q: Vector) -> jax.Array:
        """U(q), traceable by JAX."""
        x, y = jnp.asarray(q[0]), jnp.asarray(q[1])
        return 0.5 * (x * x + y * y) + x * x * y - y**3 / 3.0

    @staticmethod
    def gradient(q: Vector) -> Vector:
        """∇U = (x + 2xy, y + x² − y²)."""
        x, y = float(q[0]), float(q[1])
        return np.array([x + 2.0 * x * y, y + x * x - y * y])

    @staticmethod
    def hessian(q: Vector) -> Matrix:
        x, y = float(q[0]), float(q[1])
        return np.array([[1.0 + 2.0 * y, 2.0 * x], [2.0 * x, 1.0 - 2.0 * y]])

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(2), np.eye(2), self.potential, self.gradient, self.hessian)

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), self.q0, self.p0)

    def energy(self, q: Vector, p: Vector) -> float:
        return 0.5 * float(p @ p) + float(self.potential(q))

    def rhs(self, t: float, y: Vector) -> Vector:
        return np.concatenate([y[2:], -self.gradient(y[:2])])

    def reference(self, times: Vector) -> tuple[Matrix, Matrix]:
        """q(t), p(t) at ``times`` from DOP853 with rtol 1e-13, atol 1e-14."""
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), np.concatenate([self.q0, self.p0]),
                        method="DOP853", t_eval=times, rtol=1e-13, atol=1e-14)
        if not sol.success:
            raise RuntimeError(f"reference solution failed: {sol.message}")
        return sol.y[:2].T.copy(), sol.y[2:].T.copy()
