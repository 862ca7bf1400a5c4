"""The planar double pendulum in absolute angles q = (q¹, q²) from the downward vertical
(Rojas-Quintero, Dubois & Jourdan 2025, §3, Table 1): ℓ = ½ q̇ᵀM(q)q̇ − V(q) with

    M = [[(m₁+m₂)ℓ₁², m₂ℓ₁ℓ₂ cos(q¹−q²)], [m₂ℓ₁ℓ₂ cos(q¹−q²), m₂ℓ₂²]],
    V = −(m₁+m₂) g ℓ₁ cos q¹ − m₂ g ℓ₂ cos q².

The paper prints ℓ = g/ω₀ (not a length); the default is ℓ = g/ω₀², whose small-oscillation
frequency is ω₀.
"""

import math
from dataclasses import dataclass
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.euclidean import Rn
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once

_Scalar = TypeVar("_Scalar", float, jax.Array)


@dataclass(frozen=True)
class DoublePendulum:
    """Defaults: Table 1, m₁ = m₂ = 1 kg, ω₀ = 2π s⁻¹, ℓ₁ = ℓ₂ = g/ω₀², q(0) = (π/4, π/3), p(0) = 0."""

    mass1: float = 1.0
    mass2: float = 1.0
    gravity: float = 9.81
    length: float = 9.81 / (2 * math.pi) ** 2
    q0: tuple[float, float] = (math.pi / 4, math.pi / 3)
    p0: tuple[float, float] = (0.0, 0.0)

    def _mass_matrix_rows(self, cos_difference: _Scalar) -> list[list[_Scalar | float]]:
        """The rows of M given cos(q¹ − q²), a float or a JAX array."""
        l, m1, m2 = self.length, self.mass1, self.mass2
        c = m2 * l * l * cos_difference
        return [[(m1 + m2) * l * l, c], [c, m2 * l * l]]

    def mass_matrix(self, q: Vector) -> Matrix:
        """M(q) in numpy (the energy and the DOP853 reference)."""
        return np.array(self._mass_matrix_rows(math.cos(q[0] - q[1])))

    def jax_mass_matrix(self, q: Vector) -> jax.Array:
        """M(q) traceable by JAX: the inertia of ``system()``."""
        return jnp.array(self._mass_matrix_rows(jnp.cos(q[0] - q[1])))

    def mass_matrix_gradient(self, q: Vector) -> Tensor:
        """∂₁M = [[0, −s], [−s, 0]], s = m₂ℓ₁ℓ₂ sin(q¹−q²); ∂₂M = −∂₁M."""
        s = self.mass2 * self.length**2 * math.sin(q[0] - q[1])
        d1 = np.array([[0.0, -s], [-s, 0.0]])
        return np.stack([d1, -d1])

    def mass_matrix_hessian(self, q: Vector) -> Tensor:
        """∂₁∂₁M = ∂₂∂₂M = −∂₁∂₂M = [[0, −c], [−c, 0]], c = m₂ℓ₁ℓ₂ cos(q¹−q²)."""
        c = self.mass2 * self.length**2 * math.cos(q[0] - q[1])
        d11 = np.array([[0.0, -c], [-c, 0.0]])
        return np.stack([np.stack([d11, -d11]), np.stack([-d11, d11])])

    def potential(self, q: Vector) -> jax.Array:
        """V(q), traceable by JAX."""
        g, l = self.gravity, self.length
        return -(self.mass1 + self.mass2) * g * l * jnp.cos(q[0]) - self.mass2 * g * l * jnp.cos(q[1])

    def potential_gradient(self, q: Vector) -> Vector:
        g, l = self.gravity, self.length
        return np.array([(self.mass1 + self.mass2) * g * l * math.sin(q[0]), self.mass2 * g * l * math.sin(q[1])])

    def potential_hessian(self, q: Vector) -> Matrix:
        g, l = self.gravity, self.length
        return np.diag([(self.mass1 + self.mass2) * g * l * math.cos(q[0]), self.mass2 * g * l * math.cos(q[1])])

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(2), self.jax_mass_matrix, self.potential, self.potential_gradient,
                                self.potential_hessian, self.mass_matrix_gradient, self.mass_matrix_hessian)

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), np.array(self.q0), mu0=np.array(self.p0))

    def energy(self, q: Vector, p: Vector) -> float:
        """H = ½ pᵀM⁻¹p + V."""
        return 0.5 * float(p @ np.linalg.solve(self.mass_matrix(q), p)) + float(self.potential(q))

    def rhs(self, t: float, y: Vector) -> Vector:
        """Hamilton's equations on y = (q, p): q̇ = M⁻¹p, ṗ = ½ q̇ᵀ∂_k M q̇ − ∇V."""
        q, p = y[:2], y[2:]
        v = np.linalg.solve(self.mass_matrix(q), p)
        return np.concatenate([v, 0.5 * np.einsum("kij,i,j->k", self.mass_matrix_gradient(q), v, v)
                               - self.potential_gradient(q)])

    def reference(self, times: Vector) -> tuple[Matrix, Matrix]:
        """q(t), p(t) at ``times`` from DOP853 (rtol 1e-13, atol 1e-14)."""
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), np.concatenate([self.q0, self.p0]),
                        method="DOP853", t_eval=times, rtol=1e-13, atol=1e-14)
        return sol.y[:2].T.copy(), sol.y[2:].T.copy()
