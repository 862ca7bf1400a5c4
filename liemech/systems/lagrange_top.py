"""The Lagrange (heavy symmetric) top in ZXZ Euler angles q = (φ, θ, ψ) on R³ (Rojas-Quintero,
Dubois & Jourdan 2025, §4.1–§4.2): ℓ = ½ q̇ᵀM(q)q̇ − I m cos θ with

    M(q) = [[I sin²θ + I₃ cos²θ, 0, I₃ cos θ], [0, I, 0], [I₃ cos θ, 0, I₃]],  m = m_top g ℓ / I,

and its exact nutation: with u = cos θ, u̇² = f(u) cubic with roots u₁ < u₂ < u₃,
u(t) = u₁ + (u₂ − u₁) sn²(λt + F, k), λ = √(m(u₃ − u₁)/2), k² = (u₂ − u₁)/(u₃ − u₁), period 2K(k)/λ.
φ and ψ are cyclic: p_φ and p_ψ are conserved.
"""

import math
from dataclasses import dataclass
from typing import TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import ellipj, ellipk, ellipkinc

from liemech.groups.euclidean import Rn
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Tensor, Vector
from liemech.systems.built_once import built_once

_Scalar = TypeVar("_Scalar", float, jax.Array)


def _roots(coefficients: list[float], known: float | None) -> tuple[float, float, float]:
    """Sorted real roots of a₃u³ + a₂u² + a₁u + a₀. A turning point (θ̇₀ = 0) is a known root u₀:
    deflating by (u − u₀) keeps it exact, where the phase of sn² at u₀ is ill-conditioned."""
    if known is None:
        r = np.sort(np.roots(coefficients).real)
        return float(r[0]), float(r[1]), float(r[2])
    a3, a2, a1, _ = coefficients
    b1, b0 = a2 + known * a3, a1 + known * (a2 + known * a3)
    disc = math.sqrt(b1 * b1 - 4 * a3 * b0)
    q = -0.5 * (b1 + math.copysign(disc, b1))
    r1, r2 = q / a3, b0 / q
    low, mid, high = sorted((known, r1, r2))
    return low, mid, high


@dataclass(frozen=True)
class LagrangeTop:
    """Defaults: Table 3 of Rojas-Quintero, Dubois & Jourdan (2025) (g = 9.81), a motion with loops."""

    mass: float = 0.1
    inertia: float = 0.002329969592394382
    inertia_axial: float = 0.000125
    length: float = 0.15
    gravity: float = 9.81
    q0: tuple[float, float, float] = (0.0, math.pi / 3, 0.0)
    qdot0: tuple[float, float, float] = (9.2, 0.0, 252.0)

    @classmethod
    def table6(cls) -> "LagrangeTop":
        """Table 6: I₃ = 2I = 2, A = m_top g ℓ / I = 4π², θ₀ = π/6, ψ̇₀ = 2π (a motion with cusps)."""
        return cls(mass=1.0, inertia=1.0, inertia_axial=2.0, length=4 * math.pi**2 / 9.81, gravity=9.81,
                   q0=(0.0, math.pi / 6, 0.0), qdot0=(0.0, 0.0, 2 * math.pi))

    @property
    def m(self) -> float:
        """m = m_top g ℓ / I, so that V = I m cos θ."""
        return self.mass * self.gravity * self.length / self.inertia

    def _mass_matrix_rows(self, c: _Scalar, s: _Scalar) -> list[list[_Scalar | float]]:
        """The rows of M given c = cos θ and s = sin θ, floats or JAX arrays."""
        I, I3 = self.inertia, self.inertia_axial
        return [[I * s * s + I3 * c * c, 0.0, I3 * c], [0.0, I, 0.0], [I3 * c, 0.0, I3]]

    def mass_matrix(self, q: Vector) -> Matrix:
        """M(q) in numpy (the energy, the cyclic momenta and reference solutions)."""
        return np.array(self._mass_matrix_rows(math.cos(q[1]), math.sin(q[1])))

    def jax_mass_matrix(self, q: Vector) -> jax.Array:
        """M(q) traceable by JAX: the inertia of ``system()``."""
        return jnp.array(self._mass_matrix_rows(jnp.cos(q[1]), jnp.sin(q[1])))

    def mass_matrix_gradient(self, q: Vector) -> Tensor:
        """[k] = ∂M/∂q_k; only ∂/∂θ is non-zero."""
        I, I3 = self.inertia, self.inertia_axial
        c, s = math.cos(q[1]), math.sin(q[1])
        out = np.zeros((3, 3, 3))
        out[1] = [[2 * (I - I3) * s * c, 0.0, -I3 * s], [0.0, 0.0, 0.0], [-I3 * s, 0.0, 0.0]]
        return out

    def mass_matrix_hessian(self, q: Vector) -> Tensor:
        """[k, l] = ∂²M/∂q_k∂q_l; only ∂²/∂θ² is non-zero."""
        I, I3 = self.inertia, self.inertia_axial
        c = math.cos(q[1])
        out = np.zeros((3, 3, 3, 3))
        out[1, 1] = [[2 * (I - I3) * math.cos(2 * q[1]), 0.0, -I3 * c], [0.0, 0.0, 0.0], [-I3 * c, 0.0, 0.0]]
        return out

    def potential(self, q: Vector) -> jax.Array:
        """V(q) = I m cos θ, traceable by JAX."""
        return self.inertia * self.m * jnp.cos(q[1])

    def potential_gradient(self, q: Vector) -> Vector:
        return np.array([0.0, -self.inertia * self.m * math.sin(q[1]), 0.0])

    def potential_hessian(self, q: Vector) -> Matrix:
        out = np.zeros((3, 3))
        out[1, 1] = -self.inertia * self.m * math.cos(q[1])
        return out

    @built_once
    def system(self) -> MechanicalSystem[Vector]:
        return MechanicalSystem(Rn(3), self.jax_mass_matrix, self.potential, self.potential_gradient,
                                self.potential_hessian, self.mass_matrix_gradient, self.mass_matrix_hessian)

    def problem(self) -> Problem[Vector]:
        return Problem(self.system(), np.array(self.q0), np.array(self.qdot0))

    def energy(self, q: Vector, p: Vector) -> float:
        """H = ½ pᵀM(q)⁻¹p + V(q)."""
        return 0.5 * float(p @ np.linalg.solve(self.mass_matrix(q), p)) + float(self.potential(q))

    def cyclic_momenta(self) -> tuple[float, float]:
        """(p_φ, p_ψ) of the initial data: p = M(q₀)q̇₀."""
        p = self.mass_matrix(np.array(self.q0)) @ np.array(self.qdot0)
        return float(p[0]), float(p[2])

    def _nutation(self) -> tuple[float, float, float, float, float]:
        """(u₁, u₂ − u₁, λ, k², F) of u(t) = u₁ + (u₂ − u₁) sn²(λt + F, k)."""
        I, m = self.inertia, self.m
        p_phi, p_psi = self.cyclic_momenta()
        theta0, theta_dot0 = self.q0[1], self.qdot0[1]
        c = (0.5 * I * theta_dot0**2 + (p_phi - p_psi * math.cos(theta0)) ** 2 / (2 * I * math.sin(theta0) ** 2)
             + I * m * math.cos(theta0))
        coefficients = [2 * m, -(2 * c / I + p_psi**2 / I**2), 2 * (p_phi * p_psi / I**2 - m),
                        2 * c / I - p_phi**2 / I**2]
        u1, u2, u3 = _roots(coefficients, math.cos(theta0) if theta_dot0 == 0.0 else None)
        lam = math.sqrt(m * (u3 - u1) / 2)
        k2 = (u2 - u1) / (u3 - u1)
        fraction = min(max((math.cos(theta0) - u1) / (u2 - u1), 0.0), 1.0)  # exact 0 or 1 at a turning point
        phase = float(ellipkinc(math.asin(math.sqrt(fraction)), k2))
        if -math.sin(theta0) * theta_dot0 < 0.0:  # u decreasing: sn² on its falling branch
            phase = -phase
        return u1, u2 - u1, lam, float(k2), phase

    def nutation_period(self) -> float:
        """t̄ = 2K(k)/λ."""
        _, _, lam, k2, _ = self._nutation()
        return 2.0 * float(ellipk(k2)) / lam

    def theta(self, t: Vector) -> Vector:
        """The exact nutation angle θ(t)."""
        u1, span, lam, k2, phase = self._nutation()
        sn = ellipj(lam * np.asarray(t, dtype=np.float64) + phase, k2)[0]
        return np.arccos(np.clip(u1 + span * sn * sn, -1.0, 1.0))
