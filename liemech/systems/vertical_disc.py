"""The vertical disc (unicycle) bound to the origin by a unit spring, on SE(2) (Martín de Diego & Sato
Martín de Almagro 2018, §7.4): ℓ = ½[m(v₁² + v₂²) + I_z ω²] − ½(x² + y²) with the rolling constraint
φ(g, ξ) = v₂ (no sideways slip). Parameters and initial data (not given by the paper) are ours:
m = I_z = 1, (x, y, θ)₀ = (1, 0.5, 0.3), (v₁, v₂, ω)₀ = (0.8, 0, 1.2), T = 1."""

import math
import functools
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.se2 import SE2
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector
from liemech.systems.built_once import built_once

_J = np.array([[0.0, -1.0], [1.0, 0.0]])


@dataclass(frozen=True)
class VerticalDisc:
    mass: float = 1.0
    inertia: float = 1.0
    pose0: Vector = field(default_factory=lambda: np.array([1.0, 0.5, 0.3]))
    velocity0: Vector = field(default_factory=lambda: np.array([0.8, 0.0, 1.2]))
    t_final: float = 1.0

    @staticmethod
    def point(x: float, y: float, theta: float) -> Matrix:
        c, s = math.cos(theta), math.sin(theta)
        return np.array([[c, -s, x], [s, c, y], [0.0, 0.0, 1.0]])

    @staticmethod
    def sideways_slip(g: Matrix, xi: Vector) -> jax.Array:
        """φ(g, ξ) = v₂, traceable by JAX."""
        return jnp.array([xi[1]])

    @staticmethod
    def sideways_slip_d_eta(g: Matrix, xi: Vector) -> Matrix:
        return np.array([[0.0, 1.0, 0.0]])

    @staticmethod
    def sideways_slip_d_g(g: Matrix, xi: Vector) -> Matrix:
        return np.zeros((1, 3))

    @staticmethod
    @functools.cache
    def constraint() -> NonholonomicConstraint[Matrix]:
        """φ = v₂, ∂φ/∂ξ = (0, 1, 0), ∂φ/∂g = 0."""
        return NonholonomicConstraint(VerticalDisc.sideways_slip, d_eta=VerticalDisc.sideways_slip_d_eta,
                                      d_g=VerticalDisc.sideways_slip_d_g)

    @staticmethod
    def potential(g: Matrix) -> jax.Array:
        """V = ½(x² + y²), traceable by JAX."""
        return jnp.asarray(0.5 * (g[0, 2] ** 2 + g[1, 2] ** 2))

    @staticmethod
    def potential_gradient(g: Matrix) -> Vector:
        """∇V = (Rᵀp, 0): d/dε ½|p + εRv|² = ⟨Rᵀp, v⟩."""
        return np.concatenate([g[:2, :2].T @ g[:2, 2], [0.0]])

    @staticmethod
    def potential_hessian(g: Matrix) -> Matrix:
        """ζ = (v, ω) ↦ d/dε ∇V(g τ(εζ)) = (v − ω J Rᵀp, 0)."""
        out = np.zeros((3, 3))
        out[:2, :2] = np.eye(2)
        out[:2, 2] = -_J @ (g[:2, :2].T @ g[:2, 2])
        return out

    @built_once
    def system(self) -> MechanicalSystem[Matrix]:
        return MechanicalSystem(SE2(), np.diag([self.mass, self.mass, self.inertia]), self.potential,
                                self.potential_gradient, self.potential_hessian)

    def problem(self) -> Problem[Matrix]:
        return Problem(self.system(), self.point(*self.pose0), self.velocity0, nonholonomic=self.constraint())

    def energy(self, g: Matrix, xi: Vector) -> float:
        return 0.5 * (self.mass * float(xi[0] ** 2 + xi[1] ** 2) + self.inertia * float(xi[2] ** 2)) + 0.5 * float(
            g[0, 2] ** 2 + g[1, 2] ** 2)

    def multiplier(self, x: float, y: float, theta: float, v1: float, omega: float) -> float:
        """λ = m ω v₁ − x sin θ + y cos θ, from d/dt φ = 0 along the equations of motion."""
        return self.mass * omega * v1 - x * math.sin(theta) + y * math.cos(theta)

    def rhs(self, t: float, y: Vector) -> Vector:
        """(x, y, θ, v₁, ω)′ = (v₁ cos θ, v₁ sin θ, ω, −(x cos θ + y sin θ)/m, 0)."""
        x, yy, theta, v1, _ = y
        c, s = math.cos(theta), math.sin(theta)
        return np.array([v1 * c, v1 * s, y[4], -(x * c + yy * s) / self.mass, 0.0])

    def reference(self, times: Vector) -> tuple[list[Matrix], Matrix, Vector]:
        """g(t), ξ(t) = (v₁, 0, ω) and λ(t) from DOP853 (rtol 1e-13, atol 1e-14)."""
        y0 = np.array([*self.pose0, self.velocity0[0], self.velocity0[2]])
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), y0, method="DOP853", t_eval=times,
                        rtol=1e-13, atol=1e-14)
        states = sol.y.T
        gs = [self.point(*row[:3]) for row in states]
        xis = np.column_stack([states[:, 3], np.zeros(len(states)), states[:, 4]])
        lams = np.array([self.multiplier(*row) for row in states])
        return gs, xis, lams
