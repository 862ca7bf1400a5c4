"""A ball rolling without slipping on a turntable spinning at rate Ω (Martín de Diego & Sato Martín
de Almagro 2018, §7.5) on SO(3) × R², algebra (ω₁, ω₂, ω₃, v_x, v_y):
ℓ = ½|v|² + ½r²(aω₁² + bω₂² + cω₃²), no potential, and two nonholonomic constraints in one of two
readings:

- ``"physical"`` (default): rolling with the spatial angular velocity ωˢ = Rω,
  φ = (v_x + Ωy − r(Rω)₂, v_y − Ωx + r(Rω)₁);
- ``"literal"``: the paper's formula with body components, φ = (v_x + Ωy − rω₂, v_y − Ωx + rω₁),
  a valid but non-physical system unless a = b = c (then both give the same (x, y, v) motion).

For a = b = c there are four first integrals: ω̃₃, rω̃₁ − Ωx/(1+a), rω̃₂ − Ωy/(1+a) and the moving
energy ½|v|² + ½ar²|ω̃|² + rΩ(xω̃₁ + yω̃₂) − Ω²(x² + y²), with ω̃ = Rω (physical) or ω (literal).
Defaults (ours; the paper gives none): r = Ω = 1, a = b = c = 0.4, R₀ = exp(0.4, 0.1, −0.3), (x, y)₀ = (1, 0),
ω₀ = (0.3, −0.2, 0.5) (body), v₀ from the constraints, T = 1.
"""

from dataclasses import dataclass, field
from typing import Literal, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from liemech.groups.euclidean import Rn
from liemech.groups.product import ProductGroup
from liemech.groups.so3 import SO3, cross, exp_matrix, skew
from liemech.mechanics.nonholonomic import NonholonomicConstraint
from liemech.mechanics.problem import Problem
from liemech.mechanics.system import MechanicalSystem
from liemech.types import Matrix, Vector
from liemech.systems.built_once import built_once

_Rotation = TypeVar("_Rotation", Matrix, jax.Array)


@dataclass(frozen=True)
class BallOnTurntable:
    radius: float = 1.0
    spin: float = 1.0
    inertia_abc: Vector = field(default_factory=lambda: np.array([0.4, 0.4, 0.4]))
    reading: Literal["physical", "literal"] = "physical"
    rotation0: Vector = field(default_factory=lambda: np.array([0.4, 0.1, -0.3]))
    position0: Vector = field(default_factory=lambda: np.array([1.0, 0.0]))
    omega0: Vector = field(default_factory=lambda: np.array([0.3, -0.2, 0.5]))
    t_final: float = 1.0

    @property
    def group(self) -> ProductGroup[tuple[Matrix, Vector]]:
        return ProductGroup(SO3(), Rn(2))

    def inertia(self) -> Matrix:
        return np.diag([*(self.radius**2 * self.inertia_abc), 1.0, 1.0])

    def _rolling_axes(self, R: _Rotation) -> _Rotation | Matrix:
        """Rows e₁ᵀ, e₂ᵀ of the map ω ↦ ω̃: R's first two rows (physical) or the identity's (literal);
        R a numpy array or a JAX-traced one."""
        return R[:2] if self.reading == "physical" else np.eye(3)[:2]

    def slip(self, g: tuple[Matrix, Vector], eta: Vector) -> jax.Array:
        """φ(g, η) = (v_x + Ωy − rω̃₂, v_y − Ωx + rω̃₁), traceable by JAX."""
        r, spin = self.radius, self.spin
        R, p = jnp.asarray(g[0]), jnp.asarray(g[1])
        w = self._rolling_axes(R) @ eta[:3]
        return jnp.stack([eta[3] + spin * p[1] - r * w[1], eta[4] - spin * p[0] + r * w[0]])

    def slip_d_eta(self, g: tuple[Matrix, Vector], eta: Vector) -> Matrix:
        """∂φ/∂η."""
        r = self.radius
        E = self._rolling_axes(np.asarray(g[0]))
        return np.array([[*(-r * E[1]), 1.0, 0.0], [*(r * E[0]), 0.0, 1.0]])

    def slip_d_g(self, g: tuple[Matrix, Vector], eta: Vector) -> Matrix:
        """Trivialised ∂φ/∂g, ζ = (ζ_R, ζ_p): d/dε R τ(εζ_R) ω = −R ω̂ ζ_R (physical only); d/dε p = ζ_p."""
        r, spin = self.radius, self.spin
        out = np.array([[0.0, 0.0, 0.0, 0.0, spin], [0.0, 0.0, 0.0, -spin, 0.0]])
        if self.reading == "physical":
            turn = -np.asarray(g[0]) @ skew(eta[:3])
            out[0, :3] = -r * turn[1]
            out[1, :3] = r * turn[0]
        return out

    @built_once
    def constraint(self) -> NonholonomicConstraint[tuple[Matrix, Vector]]:
        return NonholonomicConstraint(self.slip, self.slip_d_eta, self.slip_d_g)

    @staticmethod
    def potential(g: tuple[Matrix, Vector]) -> float:
        """No potential: V = 0."""
        return 0.0

    @staticmethod
    def potential_gradient(g: tuple[Matrix, Vector]) -> Vector:
        return np.zeros(5)

    @staticmethod
    def potential_hessian(g: tuple[Matrix, Vector]) -> Matrix:
        return np.zeros((5, 5))

    @built_once
    def system(self) -> MechanicalSystem[tuple[Matrix, Vector]]:
        return MechanicalSystem(self.group, self.inertia(), self.potential, self.potential_gradient,
                                self.potential_hessian)

    def initial_state(self) -> tuple[Matrix, Vector, Vector, Vector]:
        """R₀, p₀, ω₀ and v₀ = (−Ωy + rω̃₂, Ωx − rω̃₁) on the constraints."""
        R0 = exp_matrix(self.rotation0)
        w = self._rolling_axes(R0) @ self.omega0
        p0 = self.position0
        v0 = np.array([-self.spin * p0[1] + self.radius * w[1], self.spin * p0[0] - self.radius * w[0]])
        return R0, p0, self.omega0, v0

    def problem(self) -> Problem[tuple[Matrix, Vector]]:
        R0, p0, w0, v0 = self.initial_state()
        return Problem(self.system(), (R0, p0), np.concatenate([w0, v0]), nonholonomic=self.constraint())

    def first_integrals(self, g: tuple[Matrix, Vector], eta: Vector) -> Vector:
        """(ω̃₃, rω̃₁ − Ωx/(1+a), rω̃₂ − Ωy/(1+a), moving energy), first integrals when a = b = c."""
        R, p = np.asarray(g[0]), np.asarray(g[1])
        w = (R if self.reading == "physical" else np.eye(3)) @ eta[:3]
        a, r, spin = float(self.inertia_abc[0]), self.radius, self.spin
        v = eta[3:]
        moving = (0.5 * float(v @ v) + 0.5 * a * r * r * float(w @ w) + r * spin * (p[0] * w[0] + p[1] * w[1])
                  - spin**2 * float(p @ p))
        return np.array([w[2], r * w[0] - spin * p[0] / (1 + a), r * w[1] - spin * p[1] / (1 + a), moving])

    def _forces(self, R: Matrix, w: Vector, v: Vector) -> tuple[Vector, Matrix, Vector]:
        """(f₀, C, λ) with f₀ = ((𝕀_ω ω) × ω, 0, 0), C = ∂φ/∂η and
        λ = −(C𝕀⁻¹Cᵀ)⁻¹[C𝕀⁻¹f₀ + (Ωv_y, −Ωv_x)] (d/dt(Rω) = Rω̇ adds nothing)."""
        E = self._rolling_axes(R)
        C = np.array([[*(-self.radius * E[1]), 1.0, 0.0], [*(self.radius * E[0]), 0.0, 1.0]])
        f0 = np.concatenate([cross(self.radius**2 * self.inertia_abc * w, w), np.zeros(2)])
        inv = 1.0 / np.diag(self.inertia())
        lam = -np.linalg.solve((C * inv) @ C.T, (C * inv) @ f0 + self.spin * np.array([v[1], -v[0]]))
        return f0, C, np.asarray(lam, dtype=np.float64)

    def rhs(self, t: float, y: Vector) -> Vector:
        """y = (R row-major, p, ω, v): Ṙ = Rω̂, ṗ = v, 𝕀 (ω̇, v̇) = f₀ + Cᵀλ."""
        R, w, v = y[:9].reshape(3, 3), y[11:14], y[14:16]
        f0, C, lam = self._forces(R, w, v)
        rate = (f0 + C.T @ lam) / np.diag(self.inertia())
        return np.concatenate([(R @ skew(w)).ravel(), v, rate])

    def reference(self, times: Vector) -> tuple[list[tuple[Matrix, Vector]], Matrix, Matrix]:
        """g(t), η(t) = (ω, v) and λ(t) from DOP853 (rtol 1e-13, atol 1e-14)."""
        R0, p0, w0, v0 = self.initial_state()
        sol = solve_ivp(self.rhs, (0.0, float(np.max(times))), np.concatenate([R0.ravel(), p0, w0, v0]),
                        method="DOP853", t_eval=times, rtol=1e-13, atol=1e-14)
        gs: list[tuple[Matrix, Vector]] = [(y[:9].reshape(3, 3), y[9:11].copy()) for y in sol.y.T]
        lams = np.array([self._forces(y[:9].reshape(3, 3), y[11:14], y[14:16])[2] for y in sol.y.T])
        return gs, sol.y[11:16].T.copy(), lams
