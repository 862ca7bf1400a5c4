"""The nonholonomic particle in a harmonic potential on R³ (Martín de Diego & Sato Martín
de Almagro 2018, §7.1):
ℓ = ½|v|² − ½(x² + y²) with φ = v_z − y v_x, so ∂φ/∂v = (−y, 0, 1) and the multiplier is
λ = (v_x v_y − x y)/(1 + y²). The paper gives no initial data; the defaults are ours."""

import functools
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.euclidean import Rn
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector


@dataclass(frozen=True)
class NonholonomicParticle:
    """Initial q₀ and (v_x, v_y); v_z = y v_x makes the data consistent."""

    q0: Vector = field(default_factory=lambda: np.array([1.0, 0.5, 0.0]))
    v_xy0: Vector = field(default_factory=lambda: np.array([0.3, -0.4]))
    t_final: float = 2.0

    @staticmethod
    def phi(q: Vector, v: Vector) -> jax.Array:
        """φ(q, v) = v_z − y v_x, traceable by JAX."""
        return jnp.array([v[2] - q[1] * v[0]])

    @staticmethod
    def phi_d_eta(q: Vector, v: Vector) -> Matrix:
        """∂φ/∂v = (−y, 0, 1)."""
        return np.array([[-q[1], 0.0, 1.0]])

    @staticmethod
    def phi_d_g(q: Vector, v: Vector) -> Matrix:
        """∂φ/∂q = (0, −v_x, 0)."""
        return np.array([[0.0, -v[0], 0.0]])

    @staticmethod
    @functools.cache
    def constraint() -> NonholonomicConstraint[Vector]:
        return NonholonomicConstraint(NonholonomicParticle.phi, d_eta=NonholonomicParticle.phi_d_eta,
                                      d_g=NonholonomicParticle.phi_d_g)

    @staticmethod
    def potential(q: Vector) -> jax.Array:
        """V = ½(x² + y²), traceable by JAX."""
        return jnp.asarray(0.5 * (q[0] ** 2 + q[1] ** 2))

    @staticmethod
    def potential_gradient(q: Vector) -> Vector:
        return np.array([q[0], q[1], 0.0])

    @staticmethod
    def potential_hessian(q: Vector) -> Matrix:
        return np.diag([1.0, 1.0, 0.0])

    @staticmethod
    @functools.cache
    def system() -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(3), np.eye(3), NonholonomicParticle.potential,
                                NonholonomicParticle.potential_gradient, NonholonomicParticle.potential_hessian)

    def initial_velocity(self) -> Vector:
        return np.array([self.v_xy0[0], self.v_xy0[1], self.q0[1] * self.v_xy0[0]])

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), self.q0, self.initial_velocity(), nonholonomic=self.constraint())

    @staticmethod
    def energy(q: Vector, v: Vector) -> float:
        """E = ½|v|² + ½(x² + y²), a first integral (the constraint is linear and homogeneous in v)."""
        return 0.5 * float(v @ v + q[0] ** 2 + q[1] ** 2)

    @staticmethod
    def multiplier(q: Vector, v: Vector) -> float:
        """λ = (v_x v_y − x y)/(1 + y²), from d/dt φ = 0 along the equations of motion."""
        return float((v[0] * v[1] - q[0] * q[1]) / (1.0 + q[1] ** 2))

    def rhs(self, t: float, y: Vector) -> Vector:
        """q̇ = v, v̇_x = −x − yλ, v̇_y = −y, v̇_z = λ."""
        q, v = y[:3], y[3:]
        lam = self.multiplier(q, v)
        return np.concatenate([v, [-q[0] - q[1] * lam, -q[1], lam]])

    def reference(self, times: Vector) -> tuple[Matrix, Matrix, Vector]:
        """q(t), v(t) and λ(t) from DOP853 (rtol 1e-13, atol 1e-14)."""
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), np.concatenate([self.q0, self.initial_velocity()]),
                        method="DOP853", t_eval=times, rtol=1e-13, atol=1e-14)
        q, v = sol.y[:3].T.copy(), sol.y[3:].T.copy()
        return q, v, np.array([self.multiplier(a, b) for a, b in zip(q, v)])
