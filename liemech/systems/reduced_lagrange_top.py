"""The reduced Lagrange top (Rojas-Quintero, Dubois & Jourdan 2025, §4.3, eqs. (18ad), (18af)): with
p_φ, p_ψ conserved, the state (φ, θ, ξ) obeys

    φ̇ = (p_φ − p_ψ cos θ) / (I sin²θ),   θ̇ = ξ,   ξ̇ = (A + φ̇² cos θ − (p_ψ/I) φ̇) sin θ,

A = m_top g ℓ / I. With Table 6 (``LagrangeTop.table6()``) this is (18aq).
"""

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from liemech.systems.lagrange_top import LagrangeTop
from liemech.types import Matrix, Vector


@dataclass(frozen=True)
class ReducedLagrangeTop:
    """The reduction of a complete ``LagrangeTop`` (default: Table 6, a motion with cusps)."""

    top: LagrangeTop = field(default_factory=LagrangeTop.table6)

    def initial_state(self) -> Vector:
        """(φ₀, θ₀, θ̇₀)."""
        return np.array([self.top.q0[0], self.top.q0[1], self.top.qdot0[1]])

    def rhs(self, t: float, y: Vector) -> Vector:
        I = self.top.inertia
        p_phi, p_psi = self.top.cyclic_momenta()
        theta, xi = float(y[1]), float(y[2])
        c, s = math.cos(theta), math.sin(theta)
        phi_dot = (p_phi - p_psi * c) / (I * s * s)
        return np.array([phi_dot, xi, (self.top.m + phi_dot**2 * c - p_psi / I * phi_dot) * s])

    def reference(self, times: Vector) -> Matrix:
        """(φ, θ, ξ) at ``times`` from DOP853 (rtol 1e-13, atol 1e-14), one row per time."""
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), self.initial_state(), method="DOP853",
                        t_eval=times, rtol=1e-13, atol=1e-14)
        return sol.y.T.copy()
