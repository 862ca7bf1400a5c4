"""The planar pendulum in angle form on R¹: ℓ(q, q̇) = ½ q̇² − ω²(1 − cos q), ω² = g/L.

Unit inertia, so p = q̇ and H = ½ p² + ω²(1 − cos q). The defaults (g/L = 1, q₀ = 1, p₀ = 0,
T = 2) are the angle form of ``CartesianPendulum`` (L = ½|v|² − y, θ₀ = 1).
"""

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import ellipk

from liemech.groups.euclidean import Rn
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector
from liemech.systems.built_once import built_once


@dataclass(frozen=True)
class Pendulum:
    """Gravity g, length L, initial angle q₀ (from the downward vertical), momentum p₀ and end time."""

    gravity: float = 1.0
    length: float = 1.0
    q0: float = 1.0
    p0: float = 0.0
    t_final: float = 2.0

    def __post_init__(self) -> None:
        for name in ("gravity", "length"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be positive and finite, got {value!r}")

    @property
    def omega_squared(self) -> float:
        """ω² = g/L, the squared small-amplitude angular frequency."""
        return self.gravity / self.length

    def potential(self, q: Vector) -> jax.Array:
        """V(q) = ω²(1 − cos q), evaluated as 2ω² sin²(q/2) (no cancellation at small q); traceable by JAX."""
        s = jnp.sin(0.5 * q[0])
        return 2.0 * self.omega_squared * s * s

    def potential_gradient(self, q: Vector) -> Vector:
        """∇V(q) = ω² sin q."""
        return np.array([self.omega_squared * math.sin(float(q[0]))])

    def potential_hessian(self, q: Vector) -> Matrix:
        """∇²V(q) = ω² cos q (1×1)."""
        return np.array([[self.omega_squared * math.cos(float(q[0]))]])

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        """ℓ = ½ q̇² − V(q) on R¹ with analytic gradient and Hessian."""
        return MechanicalSystem(Rn(1), np.eye(1), self.potential, self.potential_gradient, self.potential_hessian)

    def problem(self) -> Problem[Vector]:
        """(q₀, p₀) as an initial-value problem (η₀ = p₀ for unit inertia)."""
        return Problem(self.system(), np.array([self.q0]), mu0=np.array([self.p0]))

    def energy(self, q: Vector, p: Vector) -> float:
        """H = ½ p² + ω²(1 − cos q)."""
        return 0.5 * float(p[0]) ** 2 + float(self.potential(q))

    def period(self) -> float:
        """Exact period of a libration, 4 K(k²)/ω with k = sin(a/2) = √(H / 2ω²) (a the amplitude).

        Raises ValueError for a rotation or the separatrix (H ≥ 2ω²), which has no libration period.
        """
        m = self.energy(np.array([self.q0]), np.array([self.p0])) / (2.0 * self.omega_squared)
        if m >= 1.0:
            raise ValueError(f"the motion is not a libration: H / 2ω² = {m:.6g} ≥ 1")
        return 4.0 * float(ellipk(m)) / math.sqrt(self.omega_squared)

    def rhs(self, t: float, y: Vector) -> Vector:
        """Hamilton's equations on y = (q, p): q̇ = p, ṗ = −ω² sin q."""
        return np.array([y[1], -self.omega_squared * math.sin(float(y[0]))])

    def reference(self, times: Vector) -> tuple[Matrix, Matrix]:
        """q(t), p(t) at ``times`` (each of shape (len(times), 1)) from DOP853 with rtol 1e-13, atol 1e-14."""
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), np.array([self.q0, self.p0]),
                        method="DOP853", t_eval=times, rtol=1e-13, atol=1e-14)
        if not sol.success:
            raise RuntimeError(f"reference solution failed: {sol.message}")
        return sol.y[:1].T.copy(), sol.y[1:].T.copy()
